/**
 * The equity plane end to end over the in-memory store and the hand-made universe of `PlaneFixture.ts`: every
 * equity operation through the plane seam (`planeHandlers`), each answer decoded against its published result
 * schema, with the expected figures worked out by hand.
 */
import { layerMemoryEquityStore } from "@market-data/memory"
import { Decimal } from "decimal.js"
import { Effect, Exit, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import type { ApiError } from "../../src/Errors.ts"
import { makeEquityPlane, priceFreshness } from "../../src/equity/EquityPlane.ts"
import { EquityStore } from "../../src/equity/EquityStore.ts"
import { decodeParams, isApiError } from "../../src/Params.ts"
import type { HandlerInput, HandlerOutput } from "../../src/Pipeline.ts"
import { planeHandlers } from "../../src/Planes.ts"
import { operation } from "../../src/Registry.ts"
import * as R from "../../src/Results.ts"
import { ALPHA, alphaBars, BETA, NOW, seedEquity } from "./PlaneFixture.ts"

type Body = { readonly data: any; readonly refused?: ReadonlyArray<unknown> }

const run = <A>(effect: Effect.Effect<A, ApiError | never, EquityStore>, nowMs = NOW) =>
  Effect.runPromise(
    Effect.gen(function* () {
      yield* TestClock.setTime(nowMs)
      yield* seedEquity
      return yield* effect
    }).pipe(Effect.provide(Layer.merge(layerMemoryEquityStore, TestClock.layer())))
  )

/** Calls an operation through the plane seam; the body is checked against the published result schema. */
const call = (name: string, params: ReadonlyArray<readonly [string, unknown]>, nowMs = NOW) =>
  Effect.gen(function* () {
    const op = operation(name)
    if (op === undefined) throw new Error(name)
    const plane = yield* makeEquityPlane({ source: "test" })
    const handler = planeHandlers([plane]).get(name)
    if (handler === undefined) throw new Error(`no handler for ${name}`)
    const decoded = decodeParams(op, params)
    if (isApiError(decoded)) throw new Error(decoded.message)
    const input: HandlerInput = {
      op,
      params: decoded,
      principal: { _tag: "Anonymous", client: "test", rateLimitPerMinute: 60 },
      rate: { limit: 60, remaining: 59, resetAtMs: nowMs, allowed: true },
      nowMs
    }
    const out: HandlerOutput = yield* handler(input)
    if (out._tag !== "Json") throw new Error("not json")
    const schema = Array.isArray(decoded.ids) ? R.batch(op.result) : R.single(op.result)
    const exit = Schema.decodeUnknownExit(schema as unknown as Schema.Codec<unknown, unknown>, {
      onExcessProperty: "error"
    })(out.body)
    if (Exit.isFailure(exit)) throw new Error(`${name} does not match its schema: ${String(exit.cause)}`)
    return { body: out.body as Body, credits: out.creditsCharged, nextUpdateAtMs: out.nextUpdateAtMs }
  })

const failure = (name: string, params: ReadonlyArray<readonly [string, unknown]>) =>
  Effect.flip(call(name, params) as Effect.Effect<never, ApiError, EquityStore>)

const lastClose = (alphaBars().at(-1) as { c: number }).c

describe("equity plane: directory and refusals", () => {
  it("lists Alpha at tier full (prices) and Beta at tier equity (filings only)", () =>
    run(
      Effect.gen(function* () {
        const plane = yield* makeEquityPlane()
        const dir = yield* plane.directory
        expect(dir.map((e) => [e.asset_id, e.symbol, e.name, e.tier, e.alive])).toEqual([
          [ALPHA, "ALPH", "Alpha Corp", "full", true],
          [BETA, "BETA", "Beta Inc", "equity", true]
        ])
        expect(dir[0]?.aliases).toEqual(["Alpha Computer Inc", "1001", "0000001001"])
        expect(yield* plane.lookup("eq:1001:ZZZ")).toBeUndefined()
        expect(yield* plane.lookup("eq:9999:ALPH")).toBeUndefined()
        expect((yield* plane.lookup(ALPHA))?.tier).toBe("full")
      })
    ))

  it("reuses its directory snapshot for a minute; lookups always read the store", () =>
    run(
      Effect.gen(function* () {
        const plane = yield* makeEquityPlane()
        expect((yield* plane.directory).length).toBe(2)
        const store = yield* EquityStore
        yield* store.putCompany({
          cik: "1003",
          name: "Gamma Ltd",
          tickers: ["GAMA"],
          exchanges: ["NYSE"],
          sic: null,
          sicDescription: null,
          fiscalYearEnd: null,
          formerNames: []
        })
        expect((yield* plane.lookup("eq:1003:GAMA"))?.tier).toBe("equity")
        expect((yield* plane.directory).length).toBe(2)
        yield* TestClock.adjust("61 seconds")
        expect((yield* plane.directory).map((e) => e.asset_id)).toEqual([ALPHA, BETA, "eq:1003:GAMA"])
      })
    ))

  it("refuses price-based operations on a filings-only company (not_covered) and unknown IDs", () =>
    run(
      Effect.gen(function* () {
        expect((yield* failure("price", [["id", BETA]])).code).toBe("not_covered")
        expect((yield* failure("financials", [["id", "eq:42:NOPE"]])).code).toBe("unknown_asset")
        const batch = yield* call("price", [["ids", `${ALPHA},${BETA}`]])
        expect(batch.body.refused).toEqual([{ id: BETA, reason: "not_covered" }])
        expect(batch.credits).toBe(1)
      })
    ))
})

describe("equity plane: holders on the filings-only tier", () => {
  it("serves holders of a company with no price history from the 13F reports that list it", () =>
    run(
      Effect.gen(function* () {
        const store = yield* EquityStore
        // Without a 13F listing it, the answer says so (no_data), rather than refusing the tier.
        const none = (yield* call("holders", [["id", BETA]])).body.data
        expect(none.holders).toEqual([])
        expect(none.unavailable.holders.reason).toBe("no_data")
        yield* store.putSecurities("1002", ["00200B102"])
        yield* store.putHoldingsReports([
          {
            filerCik: "5009",
            filerName: "Fund 5009",
            accession: "0005009-26-000009",
            form: "13F-HR",
            filedAt: "2026-11-12",
            reportPeriod: "2026-09-30",
            holdings: [
              {
                nameOfIssuer: "BETA INC",
                titleOfClass: "COM",
                cusip: "00200B102",
                valueUsd: "4500000",
                shares: "150000",
                sharesType: "SH",
                putCall: null,
                investmentDiscretion: "SOLE",
                votingSole: "150000",
                votingShared: "0",
                votingNone: "0"
              }
            ]
          }
        ])
        const { body, credits } = yield* call("holders", [["id", BETA]])
        expect(credits).toBe(1)
        expect(body.data.report_period).toBe("2026-09-30")
        expect(body.data.holders.map((h: any) => [h.filer_cik, h.shares, h.value_usd, h.form, h.accession])).toEqual([
          ["5009", "150000", "4500000", "13F-HR", "0005009-26-000009"]
        ])
      })
    ))
})

describe("equity plane: per-asset operations", () => {
  it("read: the equity headline with P/E as an exact decimal, filings_indexed_through, live in session", () =>
    run(
      Effect.gen(function* () {
        const { body, credits } = yield* call("read", [["id", ALPHA]])
        const d = body.data
        expect(credits).toBe(5)
        expect([d.asset_id, d.symbol, d.name, d.class, d.status]).toEqual([ALPHA, "ALPH", "Alpha Corp", "full", "live"])
        // Last bar Friday 2026-11-20 (session close 21:00 UTC); next update at Monday's close.
        expect(d.as_of).toBe("2026-11-20T21:00:00.000Z")
        expect(d.next_update_at).toBe("2026-11-23T21:00:00.000Z")
        expect(d.filings_indexed_through).toBe("2026-11-03")
        expect(d.headline.price_usd).toBe(lastClose)
        expect(d.headline.market_cap_usd).toBe(Number(new Decimal(String(lastClose)).times(100_000_000).toFixed(2)))
        // EPS TTM = 1.50 (Q4 2025 = 5.40 - 3.90) + 1.50 + 1.60 + 1.70 = 6.30
        expect(d.headline.pe_ttm).toBe(new Decimal(String(lastClose)).div("6.3").toFixed(4, Decimal.ROUND_HALF_EVEN))
        expect(d.headline.return_24h_pct.pctl).toBeGreaterThanOrEqual(0)
        expect(d.baseline).toMatchObject({ window: "1y", cadence: "1d", source: "test" })
        expect(d.baseline.n).toBeGreaterThan(240)
        expect(d.unavailable).toBeUndefined()
      })
    ))

  it("leaves out the bar of the session still running: the answer is the last close, the same all session", () =>
    run(
      Effect.gen(function* () {
        // A bar for Monday 2026-11-23 is in the store while Monday's session runs (NOW is 10:00 New York).
        const store = yield* EquityStore
        yield* store.putBars("1001", "ALPH", [
          { tMs: Date.UTC(2026, 10, 23, 14, 30), o: 500, h: 510, l: 490, c: 505, v: 1_000_000 }
        ])
        const early = (yield* call("price", [["id", ALPHA]])).body.data
        yield* TestClock.setTime(NOW + 3_600_000)
        const later = (yield* call("price", [["id", ALPHA]], NOW + 3_600_000)).body.data
        expect(early.usd).toBe(lastClose)
        expect(early.as_of).toBe("2026-11-20T21:00:00.000Z")
        expect([early.status, early.next_update_at]).toEqual(["live", "2026-11-23T21:00:00.000Z"])
        expect(later).toEqual(early)
        const bars = (yield* call("series", [
          ["id", ALPHA],
          ["range", "1w"]
        ])).body.data.bars
        expect(bars.at(-1).t).toBe("2026-11-20T14:30:00.000Z")
        // After the close the bar is Monday's.
        yield* TestClock.setTime(Date.UTC(2026, 10, 23, 21, 0))
        const closed = (yield* call("price", [["id", ALPHA]], Date.UTC(2026, 10, 23, 21, 0))).body.data
        expect([closed.usd, closed.as_of, closed.status]).toEqual([505, "2026-11-23T21:00:00.000Z", "closed"])
      })
    ))

  it("read on a filings-only company: no price, typed reasons, filings freshness", () =>
    run(
      Effect.gen(function* () {
        const d = (yield* call("read", [["id", BETA]])).body.data
        expect(d.class).toBe("equity")
        expect(d.headline).toEqual({ price_usd: null, market_cap_usd: null, pe_ttm: null, return_24h_pct: null })
        expect(d.unavailable.price_usd.reason).toBe("not_covered")
        // Latest 10-K filed 2026-02-20: 276 days old, more than a quarter plus its deadline.
        expect(d.status).toBe("delayed")
        expect(d.filings_indexed_through).toBe("2026-02-20")
      })
    ))

  it("is closed outside the session, with next_update_at at the next open", () =>
    run(
      Effect.gen(function* () {
        const saturday = Date.UTC(2026, 10, 21, 12)
        const d = (yield* call("price", [["id", ALPHA]], saturday)).body.data
        expect(d.status).toBe("closed")
        expect(d.next_update_at).toBe("2026-11-23T14:30:00.000Z")
        expect(priceFreshness(Date.UTC(2026, 10, 10, 14, 30), NOW).status).toBe("stale")
      }),
      Date.UTC(2026, 10, 21, 12)
    ))

  it("a daily source's last close is delayed while the session runs (dailyCloseDelayed), closed after it", () => {
    // Monday 2026-11-23 10:00 New York: the last closed session is Friday 2026-11-20.
    const friday = Date.UTC(2026, 10, 20, 14, 30)
    expect(priceFreshness(friday, NOW).status).toBe("live")
    expect(priceFreshness(friday, NOW, true)).toEqual({
      as_of: "2026-11-20T21:00:00.000Z",
      status: "delayed",
      next_update_at: "2026-11-23T21:00:00.000Z"
    })
    expect(priceFreshness(friday, Date.UTC(2026, 10, 21, 12), true).status).toBe("closed")
    expect(priceFreshness(Date.UTC(2026, 10, 10, 14, 30), NOW, true).status).toBe("stale")
  })

  it("price: last close, 24 h return and 7-day range position with percentiles, market cap", () =>
    run(
      Effect.gen(function* () {
        const d = (yield* call("price", [["id", ALPHA]])).body.data
        const bars = alphaBars()
        const [prev, last] = bars.slice(-2) as unknown as [{ c: number }, { c: number }]
        expect(d.usd).toBe(last.c)
        expect(d.return_24h_pct.value).toBeCloseTo((last.c / prev.c - 1) * 100, 6)
        expect(d.range_pos_7d_pct.value).toBeGreaterThanOrEqual(0)
        expect(d.range_pos_7d_pct.value).toBeLessThanOrEqual(100)
        expect(d.bid_usd).toBeNull()
        expect(d.unavailable.bid_usd.reason).toBe("not_covered")
        expect(d.market.market_cap_usd).toBeCloseTo(last.c * 100_000_000, 2)
      })
    ))

  it("technicals: Wilder RSI, ADX, ATR% on daily bars (default 1d), intraday not covered", () =>
    run(
      Effect.gen(function* () {
        const d = (yield* call("technicals", [["id", ALPHA]])).body.data
        expect(d.timeframe).toBe("1d")
        for (const k of ["rsi_14", "adx_14", "atr_14_pct"]) {
          expect(Number.isFinite(d[k].value)).toBe(true)
          expect(d[k].pctl).toBeGreaterThanOrEqual(0)
        }
        expect(d.rsi_14.value).toBeLessThanOrEqual(100)
        expect(Object.keys(d.moving_averages)).toEqual(["sma_20", "sma_50", "sma_200"])
        const closes = alphaBars().map((b) => b.c)
        const sma20 = closes.slice(-20).reduce((s, c) => s + c, 0) / 20
        expect(d.moving_averages.sma_20).toBeCloseTo(sma20, 6)
        // An intraday timeframe would be an answer of nothing but not_covered: refused, uncharged.
        const h = yield* failure("technicals", [
          ["id", ALPHA],
          ["timeframe", "4h"]
        ])
        expect([h.code, h.param]).toEqual(["not_covered", "timeframe"])
        const batch = yield* call("technicals", [
          ["ids", `${ALPHA},${BETA}`],
          ["timeframe", "4h"]
        ])
        expect(batch.body.data).toEqual([])
        expect(batch.body.refused).toEqual([
          { id: ALPHA, reason: "not_covered" },
          { id: BETA, reason: "not_covered" }
        ])
        expect(batch.credits).toBe(0)
      })
    ))

  it("profile: sector from the SIC division, shares outstanding as filed, market cap", () =>
    run(
      Effect.gen(function* () {
        const d = (yield* call("profile", [["id", ALPHA]])).body.data
        expect([d.sector, d.industry, d.shares_outstanding, d.shares_outstanding_as_of]).toEqual([
          "Manufacturing",
          "Electronic Computers",
          "100000000",
          "2026-10-20"
        ])
        const b = (yield* call("profile", [["id", BETA]])).body.data
        expect(b.sector).toBe("Finance, Insurance and Real Estate")
        expect(b.market_cap_usd).toBeNull()
        expect(b.unavailable.shares_outstanding.reason).toBe("no_data")
      })
    ))

  it("clocks: a figure that moves with the price carries the price's next_update_at, not the next filing's", () =>
    run(
      Effect.gen(function* () {
        const price = yield* call("price", [["id", ALPHA]])
        const clocksOf = (d: any) => [d.as_of, d.status, d.next_update_at]
        // In session on Monday: the price changes at Monday's close.
        expect(clocksOf(price.body.data)).toEqual(["2026-11-20T21:00:00.000Z", "live", "2026-11-23T21:00:00.000Z"])
        for (const name of ["profile", "valuation", "read"]) {
          const out = yield* call(name, [["id", ALPHA]])
          expect([name, ...clocksOf(out.body.data)]).toEqual([name, ...clocksOf(price.body.data)])
          // Cache-Control follows next_update_at (the handler's nextUpdateAtMs sets max-age).
          expect(out.nextUpdateAtMs).toBe(price.nextUpdateAtMs)
        }
        // Without a market cap (no price feed), profile keeps the filings' clocks: the next periodic report.
        const beta = (yield* call("profile", [["id", BETA]])).body.data
        expect(clocksOf(beta)).toEqual(clocksOf((yield* call("growth", [["id", BETA]])).body.data))
      })
    ))

  it("fundamentals: TTM revenue, EPS and free cash flow, exact", () =>
    run(
      Effect.gen(function* () {
        const d = (yield* call("fundamentals", [["id", ALPHA]])).body.data
        // Revenue: Q4 2025 (540 - 390 = 150) + 150 + 160 + 170 = 630 million.
        // FCF: OCF (190 - 135 = 55) + 50 + 55 + 60 = 220 minus capex 4 x 10 = 180 million.
        expect([d.revenue_ttm, d.eps_ttm, d.free_cash_flow_ttm, d.ttm_end]).toEqual([
          "630000000",
          "6.3",
          "180000000",
          "2026-09-30"
        ])
        expect(d.status).toBe("live")
        expect(d.next_update_at).toBe("2027-01-27T00:00:00.000Z")
      })
    ))

  it("growth: TTM against TTM a year earlier, percent with 4 decimals", () =>
    run(
      Effect.gen(function* () {
        const d = (yield* call("growth", [["id", ALPHA]])).body.data
        // Revenue a year earlier: Q4 2024 (restated FY 461 - 330 = 131) + 120 + 130 + 140 = 521; 109 / 521.
        // EPS: 1.30 + 1.20 + 1.30 + 1.40 = 5.20; 1.10 / 5.20. FCF: (45 + 40 + 45 + 50) - 40 = 140; 40 / 140.
        expect([d.revenue_growth_yoy_pct, d.eps_growth_yoy_pct, d.free_cash_flow_growth_yoy_pct]).toEqual([
          "20.9213",
          "21.1538",
          "28.5714"
        ])
        const b = (yield* call("growth", [["id", BETA]])).body.data
        expect(b.revenue_growth_yoy_pct).toBeNull()
        expect(b.unavailable.revenue_growth_yoy_pct.reason).toBe("insufficient_history")
      })
    ))

  it("valuation: P/E, P/S and EV/EBITDA from the last close and TTM figures", () =>
    run(
      Effect.gen(function* () {
        const d = (yield* call("valuation", [["id", ALPHA]])).body.data
        const price = new Decimal(String(lastClose))
        const cap = price.times(100_000_000)
        const r = (x: Decimal) => x.toFixed(4, Decimal.ROUND_HALF_EVEN)
        expect(d.pe_ttm).toBe(r(price.div("6.3")))
        expect(d.ps_ttm).toBe(r(cap.div(630_000_000)))
        // EBITDA: operating income (112 - 81 = 31) + 30 + 32 + 34 = 127, plus D&A 4 x 5 = 20: 147 million.
        expect(d.ev_ebitda_ttm).toBe(r(cap.plus(300_000_000).minus(200_000_000).div(147_000_000)))
        // P/E percentile: each day's close over the TTM EPS filed by then, over the last year of bars.
        // TTM EPS ending 2025-09-30 (filed 2025-10-28) 5.20; 2025-12-31 (10-K, 2026-02-10) 5.40;
        // 2026-03-31 (2026-04-28) 5.70; 2026-06-30 (2026-07-28) 6.00; 2026-09-30 (2026-10-28) 6.30.
        const schedule: ReadonlyArray<readonly [string, number]> = [
          ["2026-10-28", 6.3],
          ["2026-07-28", 6.0],
          ["2026-04-28", 5.7],
          ["2026-02-10", 5.4],
          ["2025-10-28", 5.2]
        ]
        const lastMs = (alphaBars().at(-1) as { tMs: number }).tMs
        const history = alphaBars()
          .filter((b) => b.tMs > lastMs - 365 * 86_400_000)
          .map((b) => {
            const date = new Date(b.tMs).toISOString().slice(0, 10)
            const eps = schedule.find(([from]) => date >= from)?.[1] as number
            return b.c / eps
          })
          .sort((a, b) => a - b)
        const current = Number(d.pe_ttm)
        const below = history.filter((x) => x < current).length
        const equal = history.filter((x) => x === current).length
        expect(d.pe_ttm_pctl).toBe(Math.round(((100 * (below + equal / 2)) / history.length) * 10) / 10)
        expect(d.baseline.n).toBe(history.length)
        expect(typeof d.ps_ttm_pctl).toBe("number")
        expect(typeof d.ev_ebitda_ttm_pctl).toBe("number")
      })
    ))
})

describe("equity plane: financials", () => {
  it("annual statements newest first, restated FY2024 served from the later 10-K, basis concepts", () =>
    run(
      Effect.gen(function* () {
        const { body, credits } = yield* call("financials", [
          ["id", ALPHA],
          ["statements", "income,cash_flow"],
          ["basis_concepts", "true"]
        ])
        const d = body.data
        expect(credits).toBe(3)
        expect(d.periods).toEqual([
          {
            id: "FY2025",
            form: "10-K",
            accession: "0001001-25-000004",
            filed_at: "2026-02-10",
            restated: false,
            start: "2025-01-01",
            end: "2025-12-31",
            derived: false
          },
          {
            id: "FY2024",
            form: "10-K",
            accession: "0001001-25-000004",
            filed_at: "2026-02-10",
            restated: true,
            start: "2024-01-01",
            end: "2024-12-31",
            derived: false
          }
        ])
        expect(d.values.revenue).toEqual({
          unit: "USD",
          by_period: ["540000000", "461000000"],
          basis_concepts: ["Revenues"]
        })
        expect(d.values.eps_diluted.unit).toBe("USD_per_share")
        expect(d.values.eps_diluted.by_period).toEqual(["5.40", "4.60"])
        expect(d.values.free_cash_flow.by_period).toEqual(["150000000", "110000000"])
        expect(d.values.total_assets).toBeUndefined()
      })
    ))

  it("as known on a date: the statements before the restatement (when the registry passes as_known_on)", () =>
    run(
      Effect.gen(function* () {
        const plane = yield* makeEquityPlane()
        const handler = plane.calls.get("financials")
        const op = operation("financials")
        if (handler === undefined || op === undefined) throw new Error("financials")
        const decoded = decodeParams(op, [
          ["id", ALPHA],
          ["statements", "income"]
        ])
        if (isApiError(decoded)) throw new Error(decoded.message)
        const out = yield* handler({
          op,
          params: { ...decoded, as_known_on: "2025-06-30" },
          principal: { _tag: "Anonymous", client: "test", rateLimitPerMinute: 60 },
          rate: { limit: 60, remaining: 59, resetAtMs: NOW, allowed: true },
          nowMs: NOW
        })
        const d = (out as { body: Body }).body.data
        expect(d.as_known_on).toBe("2025-06-30")
        // Before the 2025 10-K (filed 2026-02-10): FY2024 as first filed, 460 million, not restated.
        expect(d.periods.map((p: any) => [p.id, p.restated])).toEqual([["FY2024", false]])
        expect(d.values.revenue.by_period).toEqual(["460000000"])
      })
    ))

  it("quarters with Q4 derived from FY - nine months, flagged", () =>
    run(
      Effect.gen(function* () {
        const d = (yield* call("financials", [
          ["id", ALPHA],
          ["statements", "income"],
          ["period_kind", "quarter"],
          ["periods", "5"]
        ])).body.data
        expect(d.periods.map((p: any) => [p.id, p.end, p.derived])).toEqual([
          ["Q3 FY2026", "2026-09-30", false],
          ["Q2 FY2026", "2026-06-30", false],
          ["Q1 FY2026", "2026-03-31", false],
          ["Q4 FY2025", "2025-12-31", true],
          ["Q3 FY2025", "2025-09-30", false]
        ])
        expect(d.values.revenue.by_period).toEqual(["170000000", "160000000", "150000000", "150000000", "140000000"])
        expect(d.values.revenue.basis_concepts).toBeUndefined()
      })
    ))

  it("a filings-only company with no periods of a kind answers no_data", () =>
    run(
      Effect.gen(function* () {
        const d = (yield* call("financials", [
          ["id", BETA],
          ["period_kind", "ytd"]
        ])).body.data
        expect(d.periods).toEqual([])
        expect(d.unavailable.financials.reason).toBe("no_data")
      })
    ))
})

describe("equity plane: events", () => {
  it("merges filings (by acceptance time), insider trades (amendments applied), dividends and splits, newest first", () =>
    run(
      Effect.gen(function* () {
        const d = (yield* call("events", [
          ["id", ALPHA],
          ["limit", "6"]
        ])).body.data
        expect(d.events.map((e: any) => [e.type, e.date, e.accession ?? e.code ?? null])).toEqual([
          ["filings", "2026-11-03", "0000901-26-000001"],
          ["insider", "2026-11-02", "0000901-26-000001"],
          ["insider", "2026-11-02", "0000901-26-000001"],
          ["filings", "2026-10-28", "0001001-26-000003"],
          ["filings", "2026-10-28", "0001001-26-000010"],
          ["filings", "2026-10-06", "0000900-26-000002"]
        ])
        const filing = d.events[0]
        expect(filing).toMatchObject({
          form: "4",
          filed_at: "2026-11-03",
          accepted_at: "2026-11-03T21:00:00.000Z",
          url: "https://www.sec.gov/Archives/edgar/data/1001/000090126000001/doc.htm"
        })
        expect(d.insider_summary_90d).toEqual({
          open_market_buys: 1,
          open_market_sales: 1,
          net_shares: "-2500",
          unique_insiders: 2,
          from: "2026-08-26",
          through: "2026-11-23"
        })
        expect(typeof d.next_cursor).toBe("string")
        expect(d.status).toBe("live")
        expect(d.next_update_at).toBe("2026-11-23T15:01:00.000Z")
      })
    ))

  it("pages with a cursor bound to the parameters, every event exactly once", () =>
    run(
      Effect.gen(function* () {
        const all = (yield* call("events", [
          ["id", ALPHA],
          ["limit", "200"]
        ])).body.data.events
        const seen: Array<unknown> = []
        let cursor: string | null = null
        do {
          const params: Array<readonly [string, unknown]> = [
            ["id", ALPHA],
            ["limit", "7"]
          ]
          if (cursor !== null) params.push(["cursor", cursor])
          const page = (yield* call("events", params)).body.data
          seen.push(...page.events)
          cursor = page.next_cursor
        } while (cursor !== null)
        expect(seen).toEqual(all)
        const first = (yield* call("events", [
          ["id", ALPHA],
          ["limit", "7"]
        ])).body.data
        const wrong = yield* failure("events", [
          ["id", ALPHA],
          ["limit", "8"],
          ["cursor", first.next_cursor]
        ])
        expect(wrong.code).toBe("invalid_cursor")
        const otherOp = yield* failure("holders", [
          ["id", ALPHA],
          ["cursor", first.next_cursor]
        ])
        expect(otherOp.code).toBe("invalid_cursor")
      })
    ))

  it("filters by type, form and since; the 4/A replaces the original's trade", () =>
    run(
      Effect.gen(function* () {
        const d = (yield* call("events", [
          ["id", ALPHA],
          ["types", "insider"],
          ["since", "2026-09-01"]
        ])).body.data
        expect(d.events.map((e: any) => [e.date, e.code, e.shares, e.price_usd, e.accession])).toEqual([
          ["2026-11-02", "A", "200", null, "0000901-26-000001"],
          ["2026-11-02", "P", "1000", "118.25", "0000901-26-000001"],
          ["2026-09-30", "S", "3500", "120.50", "0000900-26-000002"]
        ])
        const tenK = (yield* call("events", [
          ["id", ALPHA],
          ["types", "filings"],
          ["form", "10-k"]
        ])).body.data
        expect(tenK.events.map((e: any) => e.accession)).toEqual(["0001001-25-000004", "0001001-24-000004"])
        expect(tenK.insider_summary_90d).toBeUndefined()
        const other = (yield* call("events", [
          ["id", ALPHA],
          ["types", "dividends,splits"],
          ["since", "2026-01-01"]
        ])).body.data
        // Each cited figure carries its filing's form beside its accession.
        expect(other.events.map((e: any) => [e.type, e.date, e.per_share_usd ?? e.ratio, e.form])).toEqual([
          ["dividends", "2026-09-30", "0.25", "10-Q"],
          ["dividends", "2026-06-30", "0.25", "10-Q"],
          ["dividends", "2026-03-31", "0.25", "10-Q"]
        ])
        const splits = (yield* call("events", [
          ["id", ALPHA],
          ["types", "splits"]
        ])).body.data
        expect(splits.events).toEqual([
          {
            type: "splits",
            date: "2025-06-15",
            ratio: "2",
            concept: "StockholdersEquityNoteStockSplitConversionRatio1",
            form: "10-Q",
            accession: "0001001-25-000002",
            filed_at: "2025-07-28"
          }
        ])
      })
    ))
})

describe("equity plane: holders and series", () => {
  it("holders: latest report per filer, change vs the prior quarter, % of shares outstanding, paged", () =>
    run(
      Effect.gen(function* () {
        const { body, credits } = yield* call("holders", [
          ["id", ALPHA],
          ["limit", "2"]
        ])
        const d = body.data
        expect(credits).toBe(1)
        expect(d.report_period).toBe("2026-09-30")
        expect(
          d.holders.map((h: any) => [h.filer_cik, h.shares, h.value_usd, h.pct_of_shares_outstanding, h.change_shares])
        ).toEqual([
          ["5003", "3000000", "360000000", 3, null],
          ["5001", "2500000", "300000000", 2.5, "500000"]
        ])
        const next = (yield* call("holders", [
          ["id", ALPHA],
          ["limit", "2"],
          ["cursor", d.next_cursor]
        ])).body.data
        expect(next.holders.map((h: any) => [h.filer_cik, h.change_shares])).toEqual([["5002", "-500000"]])
        expect(next.next_cursor).toBeNull()
      })
    ))

  it("series: daily bars paged backwards from the newest, weekly aggregation, summary", () =>
    run(
      Effect.gen(function* () {
        const bars = alphaBars()
        const first = (yield* call("series", [
          ["id", ALPHA],
          ["limit", "3"]
        ])).body.data
        expect(first.interval).toBe("1d")
        expect(first.bars.map((b: any) => b.c)).toEqual(bars.slice(-3).map((b) => b.c))
        expect(first.bars[2].t).toBe("2026-11-20T14:30:00.000Z")
        const second = (yield* call("series", [
          ["id", ALPHA],
          ["limit", "3"],
          ["cursor", first.next_cursor]
        ])).body.data
        expect(second.bars.map((b: any) => b.c)).toEqual(bars.slice(-6, -3).map((b) => b.c))
        const weekly = (yield* call("series", [
          ["id", ALPHA],
          ["interval", "1w"],
          ["range", "1mo"]
        ])).body.data
        // The week of Monday 2026-11-16: open of Monday, close of Friday 2026-11-20.
        const lastWeek = weekly.bars.at(-1)
        expect(lastWeek.t).toBe("2026-11-16T14:30:00.000Z")
        expect(lastWeek.c).toBe(bars.at(-1)?.c)
        expect(lastWeek.o).toBe(bars.at(-5)?.o)
        expect(lastWeek.v).toBe(bars.slice(-5).reduce((s, b) => s + b.v, 0))
        const summary = (yield* call("series", [
          ["id", ALPHA],
          ["view", "summary"],
          ["range", "1y"]
        ])).body.data.summary
        expect(summary.last_close).toBe(bars.at(-1)?.c)
        expect(summary.bar_count).toBeGreaterThan(245)
        expect(summary.max_drawdown_pct).toBeGreaterThan(0)
        // An intraday interval has nothing to serve: refused not_covered (an error: uncharged), not an empty list.
        for (const view of ["bars", "summary"]) {
          const intraday = yield* failure("series", [
            ["id", ALPHA],
            ["interval", "1h"],
            ["view", view]
          ])
          expect([intraday.code, intraday.param]).toEqual(["not_covered", "interval"])
        }
      })
    ))
})
