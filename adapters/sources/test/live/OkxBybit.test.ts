/**
 * The OKX and Bybit connectors against local fake servers answering in the documented shapes (hand-made
 * fixtures) and, for OKX's instruments, the recorded list in `../shared/data/crypto/okx`. Checks contract sizes
 * (OKX `ctVal`), the 1000PEPE multiplier on Bybit, funding intervals, open interest in USD, taker volume and
 * liquidations (OKX publishes both over REST; Bybit publishes neither) and the venues' error envelopes.
 */
import { assert, describe, it } from "@effect/vitest"
import { BAR_MS, HOUR_MS, MarketStore } from "@market-data/core"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { makeMemoryMarketStore } from "../../../memory/src/MemoryMarketStore.ts"
import { makeCryptoFeed } from "../../src/live/CryptoFeed.ts"
import { makeBybit } from "../../src/live/venues/bybit/Rest.ts"
import { makeOkx } from "../../src/live/venues/okx/Rest.ts"
import { fakeServer, notFound, pumpClock, sharedCryptoPresent, sharedText } from "./FakeServer.ts"
import { bybitRoute } from "./fixtures/Bybit.ts"
import { NOW_MS, okxRoute } from "./fixtures/Okx.ts"

const at = (hhmm: string) => Date.parse(`2026-11-20T${hhmm}:00.000Z`)
const ALL = { fromMs: 0, toMs: NOW_MS + HOUR_MS }

describe("OKX v5 swaps connector", () => {
  it.effect("contracts x ctVal: bars, funding, tickers, open interest, taker volume, liquidations, books", () =>
    Effect.gen(function* () {
      const store = makeMemoryMarketStore()
      yield* TestClock.setTime(NOW_MS)
      const server = yield* fakeServer(okxRoute)
      // OKX's limiter (10 per 2 s) sleeps on the Clock: keep it moving.
      yield* pumpClock()
      const feed = yield* makeCryptoFeed(makeOkx({ baseUrl: server.url, timeoutMs: 5_000 }), {
        backfillDays: 1,
        fundingBackfillDays: 2,
        jitterMs: 0,
        assetIds: ["crypto:bitcoin", "crypto:pepe"]
      }).pipe(Effect.provide(Layer.succeed(MarketStore)(store)))
      yield* feed.once.listings
      yield* feed.once.bars
      yield* feed.once.funding
      yield* feed.once.tickers
      yield* feed.once.books
      yield* feed.once.takerFlow ?? Effect.die("OKX publishes taker volume")
      // The liquidation stream already counted more shorts at 11:59 than the poll's list holds: the poll keeps them.
      yield* store.write([
        {
          kind: "liquidations",
          assetId: "crypto:bitcoin",
          venue: "okx",
          t: [at("11:59")],
          longUsd: [0],
          shortUsd: [30_000]
        }
      ])
      yield* feed.once.liquidations ?? Effect.die("OKX publishes liquidations")
      yield* feed.once.formingBar

      // Confirmed candles from the history, then the forming one from market/candles; volume is volCcy (tokens).
      const [bars] = yield* store.read("bars", { assetId: "crypto:bitcoin", ...ALL })
      assert.deepStrictEqual([...(bars?.t ?? [])], [at("11:30"), at("11:45"), at("12:00")])
      assert.deepStrictEqual([...(bars?.volume ?? [])], [20, 15, 4])
      assert.deepStrictEqual([...(bars?.close ?? [])], [90990, 91050, 91080])
      // Funding: what settled (realizedRate).
      const [f] = yield* store.read("funding", { assetId: "crypto:bitcoin", ...ALL })
      assert.deepStrictEqual([...(f?.rate ?? [])], [0.00005, 0.00009])
      // Each settlement's interval is its gap to the one before (the first: to the one after).
      assert.deepStrictEqual([...(f?.intervalMs ?? [])], [8 * HOUR_MS, 8 * HOUR_MS])
      // Open interest: history as published (USD), then the snapshot: 2,500,000 contracts x 0.01 BTC x 91,200.5.
      const [oi] = yield* store.read("openInterest", { assetId: "crypto:bitcoin", ...ALL })
      assert.deepStrictEqual([...(oi?.t ?? [])], [at("11:45"), at("12:00")])
      assert.deepStrictEqual([...(oi?.oiUsd ?? [])], [2_270_000_000, 2_280_012_500])
      // PEPE-USDT-SWAP: 300,000 contracts x 10,000,000 PEPE x 0.0000124 USD.
      const [pepeOi] = yield* store.read("openInterest", { assetId: "crypto:pepe", ...ALL })
      assert.closeTo(pepeOi?.oiUsd[0] as number, 37_200_000, 1e-6)
      const [mi] = yield* store.read("markIndex", { assetId: "crypto:bitcoin", ...ALL })
      assert.deepStrictEqual([mi?.mark[0], mi?.index[0]], [91200.5, 91210])
      // Funding state: the interval from fundingTime to nextFundingTime; a missing nextFundingRate falls back.
      const [btcState] = yield* store.fundingStates("crypto:bitcoin", "okx")
      assert.deepStrictEqual(
        [btcState?.currentRate, btcState?.predictedRate, btcState?.nextFundingMs, btcState?.intervalMs],
        [0.00007, 0.00007, at("16:00"), 8 * HOUR_MS]
      )
      const [pepeState] = yield* store.fundingStates("crypto:pepe", "okx")
      assert.deepStrictEqual([pepeState?.predictedRate, pepeState?.intervalMs], [-0.00015, 4 * HOUR_MS])
      // Taker volume in USDT per closed 15-minute bucket.
      const [flow] = yield* store.read("takerFlow", { assetId: "crypto:bitcoin", ...ALL })
      assert.deepStrictEqual([...(flow?.buyUsd ?? [])], [800_000, 1_500_000.25])
      assert.deepStrictEqual([...(flow?.sellUsd ?? [])], [900_000, 1_200_000.5])
      // Liquidations: sz contracts x 0.01 BTC x bankruptcy price; `sell` = longs liquidated; one row per minute.
      const [liq] = yield* store.read("liquidations", { assetId: "crypto:bitcoin", ...ALL })
      assert.deepStrictEqual([...(liq?.t ?? [])], [at("11:58"), at("11:59")])
      assert.closeTo(liq?.longUsd[0] as number, 100 * 0.01 * 90000 + 50 * 0.01 * 89990, 1e-6)
      assert.strictEqual(liq?.shortUsd[0], 0)
      // 11:59: the poll's 20 x 0.01 x 91,500 = 18,300 of shorts is below the stream's 30,000: each side the larger.
      assert.strictEqual(liq?.shortUsd[1], 30_000)
      assert.strictEqual(liq?.longUsd[1], 0)
      // Book sizes in BTC: 200 contracts x 0.01.
      const [book] = yield* store.books("crypto:bitcoin", "okx")
      assert.deepStrictEqual(book?.bids[0], [91200, 2])
      assert.deepStrictEqual(book?.asks[0], [91201, 1.5])

      const status = (yield* store.status).filter((s) => s.venue === "okx")
      assert.sameMembers(
        status.map((s) => s.component),
        [
          "bars",
          "funding",
          "markIndex",
          "openInterest",
          "fundingState",
          "books",
          "bookMetrics",
          "takerFlow",
          "liquidations"
        ]
      )
      assert.isTrue(status.every((s) => !s.failing && s.source === "live"))
      assert.isAtLeast(status.find((s) => s.component === "liquidations")?.newestMs ?? 0, NOW_MS)
      assert.strictEqual(status.find((s) => s.component === "takerFlow")?.newestMs, at("11:45") + BAR_MS)
    }).pipe(Effect.scoped)
  )

  it.effect("an error envelope (code 50011, rate limit) fails the run as a rate limit", () =>
    Effect.gen(function* () {
      const server = yield* fakeServer(() => ({ json: { code: "50011", msg: "Too Many Requests", data: [] } }))
      const e = yield* Effect.flip(makeOkx({ baseUrl: server.url, timeoutMs: 5_000 }).listings)
      assert.deepStrictEqual([e.kind, e.status], ["status", 429])
      assert.include(e.message, "50011")
    }).pipe(Effect.scoped)
  )

  it.effect.skipIf(!sharedCryptoPresent)(
    `reads the recorded instruments list: linear swaps with their contract values${sharedCryptoPresent ? "" : " (SKIPPED: ../shared/data/crypto is absent)"}`,
    () =>
      Effect.gen(function* () {
        const text = sharedText("crypto/okx/api_v5_public_instruments_SWAP_2022-05-13.json")
        const server = yield* fakeServer((r) => (r.path === "/api/v5/public/instruments" ? { text } : notFound))
        const listed = yield* makeOkx({ baseUrl: server.url, timeoutMs: 5_000 }).listings
        assert.strictEqual(listed.get("BTC-USDT-SWAP")?.tokensPerContract, 0.01)
        assert.strictEqual(listed.get("ETH-USDT-SWAP")?.tokensPerContract, 0.1)
        assert.strictEqual(listed.get("SOL-USDT-SWAP")?.tokensPerContract, 1)
        // Inverse (coin-margined) swaps are not ours.
        assert.isFalse(listed.has("BTC-USD-SWAP"))
        const all = JSON.parse(text) as { data: Array<{ ctType: string; state: string }> }
        assert.strictEqual(listed.size, all.data.filter((d) => d.ctType === "linear" && d.state === "live").length)
      }).pipe(Effect.scoped)
  )
})

describe("Bybit v5 linear connector", () => {
  it.effect("bars, funding with per-symbol intervals, tickers, open interest in USD, books; 1000PEPE per token", () =>
    Effect.gen(function* () {
      const store = makeMemoryMarketStore()
      yield* TestClock.setTime(NOW_MS)
      const server = yield* fakeServer(bybitRoute)
      const feed = yield* makeCryptoFeed(makeBybit({ baseUrl: server.url, timeoutMs: 5_000 }), {
        backfillDays: 1,
        fundingBackfillDays: 2,
        jitterMs: 0,
        assetIds: ["crypto:bitcoin", "crypto:injective", "crypto:pepe"]
      }).pipe(Effect.provide(Layer.succeed(MarketStore)(store)))
      yield* feed.once.listings
      yield* feed.once.bars
      yield* feed.once.funding
      yield* feed.once.tickers
      yield* feed.once.books
      yield* feed.once.formingBar
      assert.isUndefined(feed.once.liquidations, "Bybit publishes liquidations on its websocket only")
      assert.isUndefined(feed.once.takerFlow, "Bybit publishes no taker volume")

      // Newest-first list, stored oldest first, closed bars only.
      const [bars] = yield* store.read("bars", { assetId: "crypto:bitcoin", ...ALL })
      assert.deepStrictEqual([...(bars?.t ?? [])], [at("11:30"), at("11:45"), at("12:00")])
      assert.deepStrictEqual([...(bars?.volume ?? [])], [80, 120.5, 10])
      const [pepe] = yield* store.read("bars", { assetId: "crypto:pepe", ...ALL })
      assert.closeTo(pepe?.close[0] as number, 0.00001239, 1e-15)
      assert.strictEqual(pepe?.volume[0], 7_000_000_000)
      // INJUSDT settles every 240 minutes.
      const [inj] = yield* store.read("funding", { assetId: "crypto:injective", ...ALL })
      assert.deepStrictEqual([...(inj?.t ?? [])], [at("04:00"), at("08:00")])
      assert.deepStrictEqual([...(inj?.intervalMs ?? [])], [4 * HOUR_MS, 4 * HOUR_MS])
      // Open interest, one side: history singleOpenInterest (coins) x the bar's open (25,500 x 91,000), then
      // singleOpenInterestValue (USD); not openInterest / openInterestValue, which count both sides.
      const [oi] = yield* store.read("openInterest", { assetId: "crypto:bitcoin", ...ALL })
      assert.deepStrictEqual([...(oi?.t ?? [])], [at("11:45"), at("12:00")])
      assert.deepStrictEqual([...(oi?.oiUsd ?? [])], [25_500 * 91_000, 2_368_578.25])
      // A row without the single-side fields (the shape before 2026-06-11): openInterestValue / 2.
      const [pepeOi] = yield* store.read("openInterest", { assetId: "crypto:pepe", ...ALL })
      assert.deepStrictEqual([...(pepeOi?.oiUsd ?? [])], [111_600_000 / 2])
      const [pepeMi] = yield* store.read("markIndex", { assetId: "crypto:pepe", ...ALL })
      assert.closeTo(pepeMi?.mark[0] as number, 0.0000124, 1e-15)
      const [book] = yield* store.books("crypto:pepe", "bybit")
      assert.closeTo(book?.bids[0]?.[0] as number, 0.000012385, 1e-15)
      assert.strictEqual(book?.bids[0]?.[1], 4_000_000_000)
      const [state] = yield* store.fundingStates("crypto:injective", "bybit")
      assert.deepStrictEqual([state?.currentRate, state?.intervalMs], [0.00012, 4 * HOUR_MS])
    }).pipe(Effect.scoped)
  )

  it.effect("retCode 10006 (too many visits) is a rate limit; other retCodes are errors", () =>
    Effect.gen(function* () {
      let code = 10006
      const server = yield* fakeServer(() => ({ json: { retCode: code, retMsg: "Too many visits!", result: {} } }))
      const bybit = makeBybit({ baseUrl: server.url, timeoutMs: 5_000 })
      const limited = yield* Effect.flip(bybit.listings)
      assert.deepStrictEqual([limited.kind, limited.status], ["status", 429])
      code = 10001
      const other = yield* Effect.flip(bybit.listings)
      assert.deepStrictEqual([other.kind, other.status], ["status", undefined])
      assert.include(other.message, "retCode 10001")
    }).pipe(Effect.scoped)
  )
})
