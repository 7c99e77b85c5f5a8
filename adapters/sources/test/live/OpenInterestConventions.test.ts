/**
 * Open interest as USD of one side on every venue (issue #29, point 10), each connector's `tickers` (and
 * Bybit's history) fed the sample answers of the venue's own documentation:
 * - Binance counts one side: `openInterest` (units of the symbol) x `markPrice`, Open Interest and Mark Price
 *   samples (`10659.509` BTC, mark `11793.63104562`).
 * - Bybit counts both sides in `openInterest` / `openInterestValue` ("Open interest size (both sides)"); the
 *   single-side fields it added on 2026-06-11 are read where present, else half the both-sides figure. Get Open
 *   Interest sample: `openInterest` 63910691 with `singleOpenInterest` 31955346.
 * - OKX counts one side in contracts: `oi` x `ctVal` x `ctMult` x mark (Get open interest sample: `oi` 5000; the
 *   sample's own `oiUsd`, 50000, is illustrative and not read).
 * - Hyperliquid counts both sides (the sum of absolute position sizes): `openInterest` x `markPx` / 2
 *   (`metaAndAssetCtxs` sample: `openInterest` 688.11, `markPx` 14.3161).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Instrument, LiveVenue } from "../../src/live/Venue.ts"
import { makeBinance } from "../../src/live/venues/binance/Rest.ts"
import { makeBybit } from "../../src/live/venues/bybit/Rest.ts"
import { HYPERLIQUID_OI_SIDES, makeHyperliquid } from "../../src/live/venues/hyperliquid/Rest.ts"
import { makeOkx } from "../../src/live/venues/okx/Rest.ts"
import { type FakeRequest, fakeServer, notFound, type Reply } from "./FakeServer.ts"
import { okxRoute } from "./fixtures/Okx.ts"

const HOUR = 3_600_000
const instrument = (venue: LiveVenue, symbol: string, tokensPerContract = 1): Instrument => ({
  assetId: "crypto:bitcoin",
  venue,
  symbol,
  tokensPerUnit: 1,
  tokensPerContract,
  fundingIntervalMs: 8 * HOUR
})

describe("open interest is USD of one side on every venue", () => {
  it.effect("Binance (one side): openInterest x markPrice, unchanged", () =>
    Effect.gen(function* () {
      const server = yield* fakeServer((r: FakeRequest): Reply => {
        if (r.path === "/fapi/v1/premiumIndex")
          return {
            json: [
              {
                symbol: "BTCUSDT",
                markPrice: "11793.63104562",
                indexPrice: "11781.80495970",
                estimatedSettlePrice: "11781.16138815",
                lastFundingRate: "0.00038246",
                interestRate: "0.00010000",
                nextFundingTime: 1597392000000,
                time: 1597370495002
              }
            ]
          }
        if (r.path === "/fapi/v1/openInterest")
          return { json: { openInterest: "10659.509", symbol: "BTCUSDT", time: 1589437530011 } }
        return notFound
      })
      const [row] = yield* makeBinance({ baseUrl: server.url, timeoutMs: 5_000 }).tickers(
        [instrument("binance", "BTCUSDT")],
        1597370495002
      )
      assert.strictEqual(row?.oiUsd, 10659.509 * 11793.63104562)
    }).pipe(Effect.scoped)
  )

  it.effect("Bybit (both sides): the single-side fields, else half of openInterestValue / openInterest", () =>
    Effect.gen(function* () {
      const ok = (result: unknown): Reply => ({ json: { retCode: 0, retMsg: "OK", result, retExtInfo: {}, time: 0 } })
      const t0 = Date.UTC(2026, 5, 9)
      const server = yield* fakeServer((r: FakeRequest): Reply => {
        switch (r.path) {
          case "/v5/market/tickers":
            return ok({
              category: "linear",
              list: [
                // Since 2026-06-11: both-sides and single-side fields side by side.
                {
                  symbol: "BTCUSDT",
                  markPrice: "114898.43",
                  indexPrice: "114890.92",
                  openInterest: "63910.691",
                  openInterestValue: "7343240000.5",
                  singleOpenInterest: "31955.3455",
                  singleOpenInterestValue: "3671620000.25",
                  fundingRate: "0.0001",
                  nextFundingTime: "1760371200000"
                },
                // The earlier shape: both sides only.
                {
                  symbol: "ETHUSDT",
                  markPrice: "4000",
                  indexPrice: "4001",
                  openInterest: "2000",
                  openInterestValue: "8000000",
                  singleOpenInterest: "",
                  fundingRate: "0.0001",
                  nextFundingTime: "1760371200000"
                }
              ]
            })
          case "/v5/market/open-interest":
            return ok({
              category: "linear",
              symbol: r.query.get("symbol"),
              list: [
                { openInterest: "63910691.00000000", singleOpenInterest: "31955346", timestamp: String(t0 + 900_000) },
                { openInterest: "63942311.00000000", timestamp: String(t0) }
              ],
              nextPageCursor: ""
            })
          case "/v5/market/kline":
            return ok({
              category: "linear",
              symbol: r.query.get("symbol"),
              list: [
                [String(t0 + 900_000), "2", "2", "2", "2", "1", "2"],
                [String(t0), "1", "1", "1", "1", "1", "1"]
              ]
            })
          default:
            return notFound
        }
      })
      const bybit = makeBybit({ baseUrl: server.url, timeoutMs: 5_000 })
      const eth = { ...instrument("bybit", "ETHUSDT"), assetId: "crypto:ethereum" }
      const rows = yield* bybit.tickers([instrument("bybit", "BTCUSDT"), eth], 0)
      assert.deepStrictEqual(
        rows.map((r) => [r.assetId, r.oiUsd]),
        [
          ["crypto:bitcoin", 3_671_620_000.25],
          ["crypto:ethereum", 8_000_000 / 2]
        ]
      )
      const history = bybit.openInterestHistory
      assert.isDefined(history)
      const page = yield* (history as NonNullable<typeof history>)(instrument("bybit", "BTCUSDT"), t0, t0 + 2 * 900_000)
      // singleOpenInterest x open where given, openInterest / 2 x open where not.
      assert.deepStrictEqual(
        page.rows.map((r) => r.oiUsd),
        [(63942311 / 2) * 1, 31955346 * 2]
      )
    }).pipe(Effect.scoped)
  )

  it.effect("OKX (one side): oi contracts x ctVal x ctMult x mark", () =>
    Effect.gen(function* () {
      const server = yield* fakeServer((r: FakeRequest): Reply => {
        if (r.path !== "/api/v5/public/open-interest") return okxRoute(r)
        return {
          json: {
            code: "0",
            msg: "",
            data: [
              {
                instType: "SWAP",
                instId: "BTC-USDT-SWAP",
                oi: "5000",
                oiCcy: "555.55",
                oiUsd: "50000",
                ts: "1597026383085"
              }
            ]
          }
        }
      })
      const [row] = yield* makeOkx({ baseUrl: server.url, timeoutMs: 5_000 }).tickers(
        [instrument("okx", "BTC-USDT-SWAP", 0.01)],
        0
      )
      // The fixture's mark price of BTC-USDT-SWAP is 91,200.5.
      assert.strictEqual(row?.oiUsd, 5000 * 0.01 * 91200.5)
    }).pipe(Effect.scoped)
  )

  it.effect("Hyperliquid (both sides): openInterest x markPx / 2", () =>
    Effect.gen(function* () {
      const server = yield* fakeServer((r: FakeRequest): Reply => {
        const body = r.body as { type: string }
        if (body.type === "metaAndAssetCtxs")
          return {
            json: [
              { universe: [{ name: "BTC", szDecimals: 5, maxLeverage: 50 }] },
              [
                {
                  dayNtlVlm: "1169046.29406",
                  funding: "0.0000125",
                  impactPxs: ["14.3047", "14.3444"],
                  markPx: "14.3161",
                  midPx: "14.314",
                  openInterest: "688.11",
                  oraclePx: "14.32",
                  premium: "0.00031774",
                  prevDayPx: "15.322"
                }
              ]
            ]
          }
        if (body.type === "predictedFundings") return { json: [] }
        return notFound
      })
      const [row] = yield* makeHyperliquid({ baseUrl: server.url, timeoutMs: 5_000 }).tickers(
        [{ ...instrument("hyperliquid", "BTC"), fundingIntervalMs: HOUR }],
        0
      )
      assert.strictEqual(HYPERLIQUID_OI_SIDES, 2)
      assert.strictEqual(row?.oiUsd, (688.11 * 14.3161) / 2)
    }).pipe(Effect.scoped)
  )
})
