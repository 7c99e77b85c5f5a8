/**
 * The Binance connector against a local fake fapi server: hand-made answers in the documented shapes and the
 * recorded SUSHIUSDT depth, through the feed into the in-memory MarketStore. Checks symbol mapping, the
 * 1000PEPE multiplier, taker flow from klines, funding intervals, open interest in USD and the source status.
 */
import { assert, describe, it } from "@effect/vitest"
import { BAR_MS, MarketStore } from "@market-data/core"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { makeMemoryMarketStore } from "../../../memory/src/MemoryMarketStore.ts"
import { makeCryptoFeed } from "../../src/live/CryptoFeed.ts"
import { klinesWeight, makeBinance } from "../../src/live/venues/binance/Rest.ts"
import { fakeServer, notFound, sharedCryptoPresent, sharedText } from "./FakeServer.ts"
import * as F from "./fixtures/Binance.ts"
import { binanceRoute } from "./fixtures/Binance.ts"

const ASSETS = ["crypto:bitcoin", "crypto:pepe", "crypto:sui"]
const HOUR = 3_600_000
const at = (hhmm: string) => Date.parse(`2026-11-20T${hhmm}:00.000Z`)

const withStore = <A, E>(f: (store: MarketStore["Service"]) => Effect.Effect<A, E, MarketStore>) => {
  const store = makeMemoryMarketStore()
  return f(store).pipe(Effect.provide(Layer.succeed(MarketStore)(store)))
}

describe("Binance USD-M connector", () => {
  it.effect("ingests bars, taker flow, funding, tickers, open interest and books into the store", () =>
    withStore((store) =>
      Effect.gen(function* () {
        yield* TestClock.setTime(F.NOW_MS)
        const server = yield* fakeServer(binanceRoute)
        const feed = yield* makeCryptoFeed(makeBinance({ baseUrl: server.url, timeoutMs: 5_000 }), {
          backfillDays: 1,
          fundingBackfillDays: 2,
          jitterMs: 0,
          assetIds: ASSETS
        })
        yield* feed.once.listings
        yield* feed.once.bars
        yield* feed.once.funding
        yield* feed.once.tickers
        yield* feed.once.books

        // Bars: BTCUSDT -> crypto:bitcoin, closed bars only (the 12:00 bar is still open at 12:07).
        const [btc] = yield* store.read("bars", { assetId: "crypto:bitcoin", fromMs: 0, toMs: F.NOW_MS + HOUR })
        assert.strictEqual(btc?.venue, "binance")
        assert.deepStrictEqual([...(btc?.t ?? [])], [at("11:00"), at("11:15"), at("11:30"), at("11:45")])
        assert.deepStrictEqual([...(btc?.close ?? [])], [91200, 91150.5, 90850, 90990.9])
        assert.deepStrictEqual([...(btc?.volume ?? [])], [1200.5, 800, 1500, 950])
        // Taker flow from the klines: buy = taker buy quote volume, sell = quote volume - taker buy quote volume.
        const [flow] = yield* store.read("takerFlow", { assetId: "crypto:bitcoin", fromMs: 0, toMs: F.NOW_MS })
        assert.deepStrictEqual([...(flow?.buyUsd ?? [])], [63_800_000, 27_350_000, 45_400_000, 54_500_000])
        assert.deepStrictEqual([...(flow?.sellUsd ?? [])], [45_600_000, 45_600_000, 91_100_000, 31_800_000])

        // 1000PEPEUSDT -> crypto:pepe, priced per token: prices / 1000, volume x 1000.
        const [pepe] = yield* store.read("bars", { assetId: "crypto:pepe", fromMs: 0, toMs: F.NOW_MS })
        assert.strictEqual(pepe?.t[0], at("11:45"))
        assert.closeTo(pepe?.open[0] as number, 0.000012345, 1e-15)
        assert.closeTo(pepe?.close[0] as number, 0.00001238, 1e-15)
        assert.strictEqual(pepe?.volume[0], 5_000_000_000)

        // Funding settlements with each symbol's interval: SUIUSDT every 4 h (fundingInfo), BTCUSDT 8 h.
        const [btcFunding] = yield* store.read("funding", { assetId: "crypto:bitcoin", fromMs: 0, toMs: F.NOW_MS })
        assert.deepStrictEqual([...(btcFunding?.t ?? [])], [at("00:00"), at("08:00")])
        assert.deepStrictEqual([...(btcFunding?.rate ?? [])], [0.0001, -0.000025])
        assert.deepStrictEqual([...(btcFunding?.intervalMs ?? [])], [8 * HOUR, 8 * HOUR])
        const [suiFunding] = yield* store.read("funding", { assetId: "crypto:sui", fromMs: 0, toMs: F.NOW_MS })
        assert.deepStrictEqual([...(suiFunding?.intervalMs ?? [])], [4 * HOUR, 4 * HOUR])

        // Tickers on the 15-minute grid (12:00): mark/index per token, open interest in USD.
        const [mi] = yield* store.read("markIndex", { assetId: "crypto:pepe", fromMs: 0, toMs: F.NOW_MS })
        assert.strictEqual(mi?.t[0], at("12:00"))
        assert.closeTo(mi?.mark[0] as number, 0.00001238, 1e-15)
        assert.closeTo(mi?.index[0] as number, 0.00001239, 1e-15)
        const [btcOi] = yield* store.read("openInterest", { assetId: "crypto:bitcoin", fromMs: 0, toMs: F.NOW_MS })
        // History (USD as published) then the snapshot: 85,000.123 BTC x 91,234.56 = 7,754,948,821.85 USD.
        assert.deepStrictEqual([...(btcOi?.t ?? [])], [at("11:30"), at("11:45"), at("12:00")])
        assert.strictEqual(btcOi?.oiUsd[0], 7_650_000_000.25)
        assert.closeTo(btcOi?.oiUsd[2] as number, 7_754_948_821.850881, 1e-3)
        const [pepeOi] = yield* store.read("openInterest", { assetId: "crypto:pepe", fromMs: 0, toMs: F.NOW_MS })
        // 2.5e9 units of 1000 PEPE x 0.01238 USD per unit.
        assert.closeTo(pepeOi?.oiUsd[0] as number, 30_950_000, 1e-6)
        const [state] = yield* store.fundingStates("crypto:sui", "binance")
        assert.deepStrictEqual(
          { rate: state?.currentRate, next: state?.nextFundingMs, interval: state?.intervalMs },
          { rate: 0.00003, next: at("16:00"), interval: 4 * HOUR }
        )

        // Books: per-token prices and sizes; the empty SUI book is kept as empty and yields no metrics row.
        const [btcBook] = yield* store.books("crypto:bitcoin", "binance")
        assert.deepStrictEqual(btcBook?.bids[0], [91230.1, 1.5])
        assert.deepStrictEqual(btcBook?.asks[2], [93000, 5])
        const [pepeBook] = yield* store.books("crypto:pepe", "binance")
        assert.closeTo(pepeBook?.bids[0]?.[0] as number, 0.00001237, 1e-15)
        assert.strictEqual(pepeBook?.bids[0]?.[1], 1_000_000_000)
        const [metrics] = yield* store.read("bookMetrics", { assetId: "crypto:bitcoin", fromMs: 0, toMs: F.NOW_MS })
        assert.strictEqual(metrics?.t[0], at("12:00"))
        assert.closeTo(metrics?.bidDepthUsd[0] as number, 91230.1 * 1.5 + 91229 * 2, 1e-6)
        assert.closeTo(metrics?.askDepthUsd[0] as number, 91230.2 * 0.8 + 91231 * 3, 1e-6)
        assert.lengthOf(yield* store.read("bookMetrics", { assetId: "crypto:sui", fromMs: 0, toMs: F.NOW_MS }), 0)

        // Source status: live, not failing, newest times as delivered.
        const status = (yield* store.status).filter((s) => s.venue === "binance")
        const of = (c: string) => status.find((s) => s.component === c)
        assert.deepStrictEqual(
          { source: of("bars")?.source, newest: of("bars")?.newestMs, failing: of("bars")?.failing },
          { source: "live", newest: at("11:45") + BAR_MS, failing: false }
        )
        assert.strictEqual(of("funding")?.newestMs, at("08:00"))
        assert.strictEqual(of("openInterest")?.newestMs, at("12:00"))
        assert.strictEqual(of("books")?.newestMs, F.NOW_MS)
        assert.isFalse(of("takerFlow")?.failing)
        // Only what the venue serves: no liquidations status (Binance publishes them on its websocket only).
        assert.isUndefined(of("liquidations"))

        // The bar still forming (12:00, open at 12:07) comes from its own job; freshness then follows the clock.
        yield* feed.once.formingBar
        const [forming] = yield* store.read("bars", {
          assetId: "crypto:bitcoin",
          fromMs: at("12:00"),
          toMs: at("12:15")
        })
        assert.deepStrictEqual([forming?.t[0], forming?.close[0], forming?.volume[0]], [at("12:00"), 91050, 300])
        assert.strictEqual(
          (yield* store.status).find((s) => s.venue === "binance" && s.component === "bars")?.newestMs,
          F.NOW_MS
        )
        const formingAsk = server.requests.filter(
          (q) => q.path === "/fapi/v1/klines" && q.query.get("endTime") === null
        )
        assert.deepStrictEqual(
          formingAsk.map((q) => [q.query.get("symbol"), Number(q.query.get("startTime"))]),
          [
            ["BTCUSDT", at("12:00")],
            ["SUIUSDT", at("12:00")],
            ["1000PEPEUSDT", at("12:00")]
          ]
        )

        // Incremental: at the next poll (12:20) the newest stored bar (it may have been forming) and what is newer.
        const before = server.requests.length
        yield* TestClock.setTime(at("12:20"))
        yield* feed.once.bars
        const asked = server.requests
          .slice(before)
          // Closed bars are asked for with an end (the forming bar without one).
          .filter((q) => q.path === "/fapi/v1/klines" && q.query.get("endTime") !== null)
        assert.deepStrictEqual(
          asked.map((q) => [q.query.get("symbol"), Number(q.query.get("startTime"))]),
          [
            ["BTCUSDT", at("12:00")],
            ["SUIUSDT", at("12:15") - 24 * HOUR],
            ["1000PEPEUSDT", at("11:45")]
          ]
        )
        const [btcNow] = yield* store.read("bars", { assetId: "crypto:bitcoin", fromMs: 0, toMs: at("13:00") })
        assert.deepStrictEqual([...(btcNow?.t ?? [])].slice(-2), [at("11:45"), at("12:00")])
        // Open-interest history is asked for only to fill a gap the snapshots left.
        const oiHist = () => server.requests.filter((q) => q.path === "/futures/data/openInterestHist")
        const histBefore = oiHist().length
        yield* feed.once.tickers
        assert.strictEqual(oiHist().length, histBefore, "12:15 follows 12:00: no gap")
        yield* TestClock.setTime(at("13:07"))
        yield* feed.once.tickers
        const filled = oiHist().slice(histBefore)
        assert.deepStrictEqual(
          filled.map((q) => [q.query.get("symbol"), Number(q.query.get("startTime"))]),
          [
            ["BTCUSDT", at("12:30")],
            ["SUIUSDT", at("12:30")],
            ["1000PEPEUSDT", at("12:30")]
          ]
        )
      }).pipe(Effect.scoped)
    )
  )

  it.effect("a venue dropping a symbol: the others are stored, the status names the missing one", () =>
    withStore((store) =>
      Effect.gen(function* () {
        yield* TestClock.setTime(F.NOW_MS)
        const server = yield* fakeServer((r) =>
          r.path === "/fapi/v1/exchangeInfo"
            ? {
                json: { ...F.exchangeInfo, symbols: F.exchangeInfo.symbols.filter((s) => s.symbol !== "1000PEPEUSDT") }
              }
            : binanceRoute(r)
        )
        const feed = yield* makeCryptoFeed(makeBinance({ baseUrl: server.url, timeoutMs: 5_000 }), {
          backfillDays: 1,
          fundingBackfillDays: 2,
          jitterMs: 0,
          assetIds: ASSETS
        })
        yield* feed.once.listings
        yield* feed.once.bars
        assert.lengthOf(yield* store.read("bars", { assetId: "crypto:pepe", fromMs: 0, toMs: F.NOW_MS }), 0)
        assert.lengthOf(yield* store.read("bars", { assetId: "crypto:bitcoin", fromMs: 0, toMs: F.NOW_MS }), 1)
        const bars = (yield* store.status).find((s) => s.venue === "binance" && s.component === "bars")
        assert.isFalse(bars?.failing)
        assert.include(bars?.detail ?? "", "1000PEPEUSDT (not listed)")
        assert.isFalse(server.requests.some((q) => q.query.get("symbol") === "1000PEPEUSDT"))
      }).pipe(Effect.scoped)
    )
  )

  it.effect("asks klines for as many bars as the window holds, so the start's day and a poll's bar weigh 1", () =>
    withStore((store) =>
      Effect.gen(function* () {
        // Binance's documented weights of GET /fapi/v1/klines by LIMIT: [1, 100) 1, [100, 500) 2, [500, 1000] 5.
        assert.deepStrictEqual([1, 96, 99, 100, 499, 500, 1000, 1500].map(klinesWeight), [1, 1, 1, 2, 2, 5, 5, 10])
        yield* TestClock.setTime(F.NOW_MS)
        const server = yield* fakeServer(binanceRoute)
        const feed = yield* makeCryptoFeed(makeBinance({ baseUrl: server.url, timeoutMs: 5_000 }), {
          backfillDays: 90,
          fundingBackfillDays: 2,
          jitterMs: 0,
          assetIds: ["crypto:bitcoin"]
        })
        yield* feed.once.listings
        // The start: the last day (96 bars, weight 1), closed bars, so final: the bars job's forward pass (which
        // comes first, so a close never waits behind history) has nothing to ask. Then the 89 days behind the day, a
        // page of 1,000 (weight 5; the venue holds only the fixture's hour, so its short answer ends the walk).
        yield* feed.once.start
        yield* feed.once.bars
        const asked = server.requests.filter((q) => q.path === "/fapi/v1/klines" && q.query.get("endTime") !== null)
        assert.deepStrictEqual(
          asked.map((q) => [q.query.get("limit"), Number(q.query.get("startTime"))]),
          [
            ["96", F.NOW_MS - (F.NOW_MS % BAR_MS) - 24 * 3_600_000],
            ["1000", F.NOW_MS - (F.NOW_MS % BAR_MS) - 90 * 24 * 3_600_000]
          ]
        )
        // A close later: the poll asks from the newest stored bar through the one that closed (two bars, weight 1),
        // and no history again.
        const before = server.requests.length
        yield* TestClock.adjust(BAR_MS)
        yield* feed.once.bars
        const polled = server.requests
          .slice(before)
          .filter((q) => q.path === "/fapi/v1/klines" && q.query.get("endTime") !== null)
        assert.deepStrictEqual(
          polled.map((q) => [q.query.get("limit"), Number(q.query.get("startTime"))]),
          [["2", F.NOW_MS - (F.NOW_MS % BAR_MS) - BAR_MS]]
        )
        const [bars] = yield* store.read("bars", { assetId: "crypto:bitcoin", fromMs: 0, toMs: F.NOW_MS })
        assert.isAbove(bars?.t.length ?? 0, 0)
      }).pipe(Effect.scoped)
    )
  )

  it.effect("a close is never queued behind history: every instrument's new bars are asked before any backfill", () =>
    withStore((store) =>
      Effect.gen(function* () {
        yield* TestClock.setTime(F.NOW_MS)
        const server = yield* fakeServer(binanceRoute)
        const feed = yield* makeCryptoFeed(makeBinance({ baseUrl: server.url, timeoutMs: 5_000 }), {
          backfillDays: 90,
          fundingBackfillDays: 2,
          jitterMs: 0,
          assetIds: ["crypto:bitcoin", "crypto:pepe"]
        })
        yield* feed.once.listings
        yield* feed.once.start
        const before = server.requests.length
        // A bar closes before the first bars job: both instruments need it, and both need their history.
        yield* TestClock.adjust(BAR_MS)
        yield* feed.once.bars
        const asked = server.requests
          .slice(before)
          .filter((q) => q.path === "/fapi/v1/klines" && q.query.get("endTime") !== null)
          .map((q) => ({ symbol: q.query.get("symbol"), history: q.query.get("limit") === "1000" }))
        assert.sameMembers(
          asked.filter((q) => !q.history).map((q) => q.symbol),
          ["BTCUSDT", "1000PEPEUSDT"]
        )
        assert.sameMembers(
          asked.filter((q) => q.history).map((q) => q.symbol),
          ["BTCUSDT", "1000PEPEUSDT"]
        )
        const firstHistory = asked.findIndex((q) => q.history)
        assert.isTrue(
          asked.slice(firstHistory).every((q) => q.history),
          `new bars first, then history: ${JSON.stringify(asked)}`
        )
        const [bars] = yield* store.read("bars", { assetId: "crypto:pepe", fromMs: 0, toMs: F.NOW_MS + BAR_MS })
        assert.isAbove(bars?.t.length ?? 0, 0)
      }).pipe(Effect.scoped)
    )
  )
})

describe(
  sharedCryptoPresent ? "Binance recorded depth" : "Binance recorded depth (SKIPPED: ../shared/data/crypto is absent)",
  () => {
    it.effect.skipIf(!sharedCryptoPresent)("reads the recorded SUSHIUSDT depth (limit 1000) level for level", () =>
      Effect.gen(function* () {
        const text = sharedText("crypto/binance/fapi_v1_depth_SUSHIUSDT_limit1000_2021-07-22.json")
        const server = yield* fakeServer((r) => (r.path === "/fapi/v1/depth" ? { text } : notFound))
        const book = yield* makeBinance({ baseUrl: server.url, timeoutMs: 5_000 }).book(
          {
            assetId: "crypto:sushi",
            venue: "binance",
            symbol: "SUSHIUSDT",
            tokensPerUnit: 1,
            tokensPerContract: 1,
            fundingIntervalMs: 8 * HOUR
          },
          0
        )
        assert.strictEqual(book.t, 1626992741261)
        assert.lengthOf(book.bids, 1000)
        assert.lengthOf(book.asks, 1000)
        assert.deepStrictEqual(book.bids[0], [7.611, 6])
        assert.deepStrictEqual(book.asks[0], [7.612, 297])
        assert.deepStrictEqual(book.bids[1], [7.608, 161])
      }).pipe(Effect.scoped)
    )
  }
)
