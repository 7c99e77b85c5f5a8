/**
 * The Hyperliquid connector against a local fake info API replaying the recorded answers in
 * `../shared/data/crypto/hyperliquid` (meta, BTC funding history, BTC l2Book, kPEPE candles) and, for
 * `metaAndAssetCtxs` (no recording), the recorded websocket asset context of BTC in the documented
 * `[meta, ctxs]` shape. Skipped, saying so, when the recorded folder is absent.
 */
import { assert, describe, it } from "@effect/vitest"
import { HOUR_MS, MarketStore } from "@market-data/core"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { makeMemoryMarketStore } from "../../../memory/src/MemoryMarketStore.ts"
import { makeCryptoFeed } from "../../src/live/CryptoFeed.ts"
import { hyperliquidFundingIntervals, makeHyperliquid } from "../../src/live/venues/hyperliquid/Rest.ts"
import { type FakeRequest, fakeServer, notFound, type Reply, sharedCryptoPresent, sharedText } from "./FakeServer.ts"

const dir = "crypto/hyperliquid/"
const suite = sharedCryptoPresent
  ? "Hyperliquid info connector on recorded answers"
  : "Hyperliquid info connector on recorded answers (SKIPPED: ../shared/data/crypto is absent)"

describe(suite, () => {
  if (!sharedCryptoPresent) {
    it.skip("needs ../shared/data/crypto/hyperliquid", () => {})
    return
  }
  const meta = sharedText(`${dir}info_meta_2023-07-17.json`)
  const funding = JSON.parse(sharedText(`${dir}info_fundingHistory_BTC_2023-05-12_to_2023-07-17.json`)) as Array<{
    coin: string
    fundingRate: string
    premium: string
    time: number
  }>
  const book = sharedText(`${dir}info_l2Book_BTC_2025-10-30_trimmed5_nautilus.json`)
  const candles = sharedText(`${dir}info_candleSnapshot_kPEPE_1h_2023-05-21.json`)
  const ws = JSON.parse(sharedText(`${dir}ws_allDexsAssetCtxs_nautilus.json`)) as {
    data: { ctxs: Array<[string, Array<Record<string, unknown>>]> }
  }
  // The first context of the main dex belongs to universe[0], BTC.
  const btcCtx = ws.data.ctxs[0]?.[1][0] as Record<string, unknown>

  /** Like the info API: fundingHistory answers at most 500 rows of [startTime, endTime]. */
  const route = (r: FakeRequest): Reply => {
    if (r.method !== "POST" || r.path !== "/info") return notFound
    const body = r.body as { type: string; coin?: string; startTime?: number; endTime?: number }
    switch (body.type) {
      case "meta":
        return { text: meta }
      case "fundingHistory": {
        if (body.coin !== "BTC") return { json: [] }
        const end = body.endTime ?? Number.MAX_SAFE_INTEGER
        return { json: funding.filter((f) => f.time >= (body.startTime ?? 0) && f.time <= end).slice(0, 500) }
      }
      case "l2Book":
        return body.coin === "BTC" ? { text: book } : { json: null }
      case "metaAndAssetCtxs":
        return { json: [{ universe: [{ name: "BTC", szDecimals: 5, maxLeverage: 50 }] }, [btcCtx]] }
      case "predictedFundings":
        // Hand-made in the documented shape: [[coin, [[venue, {fundingRate, nextFundingTime, fundingIntervalHours}]]]].
        return {
          json: [
            [
              "BTC",
              [
                [
                  "BinPerp",
                  {
                    fundingRate: "0.0001",
                    nextFundingTime: Date.parse("2023-07-18T00:00:00Z"),
                    fundingIntervalHours: 8
                  }
                ],
                [
                  "HlPerp",
                  {
                    fundingRate: "0.0000125",
                    nextFundingTime: Date.parse("2023-07-17T22:00:00Z"),
                    fundingIntervalHours: 1
                  }
                ]
              ]
            ]
          ]
        }
      case "candleSnapshot":
        return { text: candles }
      default:
        return { status: 422, text: "Failed to deserialize the JSON body" }
    }
  }

  it.effect("funding history, tickers and the book land in the store with hourly and 8-hourly intervals", () =>
    Effect.gen(function* () {
      const store = makeMemoryMarketStore()
      const nowMs = Date.parse("2023-07-17T21:30:00Z")
      yield* TestClock.setTime(nowMs)
      const server = yield* fakeServer(route)
      const feed = yield* makeCryptoFeed(makeHyperliquid({ baseUrl: server.url, timeoutMs: 5_000 }), {
        backfillDays: 1,
        fundingBackfillDays: 70,
        jitterMs: 0,
        assetIds: ["crypto:bitcoin"]
      }).pipe(Effect.provide(Layer.succeed(MarketStore)(store)))
      yield* feed.once.listings
      yield* feed.once.funding
      yield* feed.once.tickers
      yield* feed.once.books

      const [f] = yield* store.read("funding", { assetId: "crypto:bitcoin", fromMs: 0, toMs: nowMs + 1 })
      assert.strictEqual(f?.venue, "hyperliquid")
      assert.strictEqual(f?.t.length, 1038)
      assert.strictEqual(f?.t[0], 1683849600048)
      assert.strictEqual(f?.rate[0], -0.00061334)
      assert.strictEqual(f?.t[1037], 1689627600065)
      assert.strictEqual(f?.rate[1037], 0.0000125)
      // Early 2023 settled every 8 hours, then hourly: each row's interval is its gap in whole hours.
      const expected = hyperliquidFundingIntervals(
        funding.map((x) => x.time),
        HOUR_MS
      )
      assert.deepStrictEqual([...(f?.intervalMs ?? [])], expected)
      const counts = new Map<number, number>()
      for (const ms of f?.intervalMs ?? []) counts.set(ms / HOUR_MS, (counts.get(ms / HOUR_MS) ?? 0) + 1)
      assert.deepStrictEqual(Object.fromEntries(counts), { 1: 955, 2: 1, 8: 82 })

      // metaAndAssetCtxs: mark, oracle (index), open interest in coins x mark = USD of both sides (Hyperliquid counts
      // every position's absolute size), halved to one side; hourly funding.
      const [mi] = yield* store.read("markIndex", { assetId: "crypto:bitcoin", fromMs: 0, toMs: nowMs + 1 })
      assert.deepStrictEqual([mi?.t[0], mi?.mark[0], mi?.index[0]], [Date.parse("2023-07-17T21:30:00Z"), 77562, 77605])
      const [oi] = yield* store.read("openInterest", { assetId: "crypto:bitcoin", fromMs: 0, toMs: nowMs + 1 })
      assert.closeTo(oi?.oiUsd[0] as number, (27353.17682 * 77562) / 2, 1e-3)
      const [state] = yield* store.fundingStates("crypto:bitcoin", "hyperliquid")
      assert.deepStrictEqual(
        [state?.currentRate, state?.predictedRate, state?.intervalMs, state?.nextFundingMs],
        [-0.0000015186, 0.0000125, HOUR_MS, Date.parse("2023-07-17T22:00:00Z")]
      )

      const [b] = yield* store.books("crypto:bitcoin", "hyperliquid")
      assert.strictEqual(b?.t, 1761786491067)
      assert.deepStrictEqual(b?.bids[0], [110427, 4.11882])
      assert.deepStrictEqual(b?.asks[0], [110428, 3.72573])
      assert.lengthOf(b?.bids ?? [], 5)

      // The info API is POSTed with a JSON body naming the request type.
      assert.isTrue(server.requests.every((q) => q.method === "POST" && q.path === "/info"))
      const status = (yield* store.status).filter((s) => s.venue === "hyperliquid")
      assert.strictEqual(status.find((s) => s.component === "funding")?.newestMs, 1689627600065)
      assert.strictEqual(status.find((s) => s.component === "funding")?.cadenceMs, HOUR_MS)
    }).pipe(Effect.scoped)
  )

  it.effect("kPEPE candles: 1,000 PEPE per unit, so prices / 1000 and volumes x 1000", () =>
    Effect.gen(function* () {
      const server = yield* fakeServer(route)
      const connector = makeHyperliquid({ baseUrl: server.url, timeoutMs: 5_000 })
      const from = 1684699200000
      const page = yield* connector.bars(
        {
          assetId: "crypto:pepe",
          venue: "hyperliquid",
          symbol: "kPEPE",
          tokensPerUnit: 1000,
          tokensPerContract: 1,
          fundingIntervalMs: HOUR_MS
        },
        from,
        from + 24 * HOUR_MS
      )
      // The recording holds hourly candles: between two of them the 15-minute intervals without a candle are quiet
      // bars (no trade): flat at the previous close, no volume, so the history has no hole.
      const traded = page.rows.filter((r) => r.volume > 0)
      assert.lengthOf(traded, 24)
      assert.lengthOf(page.rows, 24 + 23 * 3)
      const quiet = page.rows[1]
      const previousClose = page.rows[0]?.close as number
      assert.deepStrictEqual(quiet, {
        t: from + 15 * 60_000,
        open: previousClose,
        high: previousClose,
        low: previousClose,
        close: previousClose,
        volume: 0
      })
      const first = page.rows[0]
      assert.strictEqual(first?.t, 1684699200000)
      assert.closeTo(first?.open as number, 0.001601 / 1000, 1e-15)
      assert.closeTo(first?.high as number, 0.001616 / 1000, 1e-15)
      assert.strictEqual(first?.volume, 520665683 * 1000)
      const request = server.requests[0]?.body as { type: string; req: { coin: string; interval: string } }
      assert.deepStrictEqual([request.type, request.req.coin, request.req.interval], ["candleSnapshot", "kPEPE", "15m"])
    }).pipe(Effect.scoped)
  )

  it.effect("maps the recorded universe to canonical assets (kPEPE -> crypto:pepe)", () =>
    Effect.gen(function* () {
      const server = yield* fakeServer(route)
      const listed = yield* makeHyperliquid({ baseUrl: server.url, timeoutMs: 5_000 }).listings
      assert.strictEqual(listed.size, 28)
      assert.isTrue(listed.has("kPEPE"))
      assert.strictEqual(listed.get("BTC")?.fundingIntervalMs, HOUR_MS)
    }).pipe(Effect.scoped)
  )
})
