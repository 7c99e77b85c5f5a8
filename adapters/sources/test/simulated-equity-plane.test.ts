/**
 * The whole equity plane over the simulated companies: the simulation (SEC-format text read back by the SEC
 * parsers) is loaded into the in-memory equity store, and every equity operation is answered for every company,
 * each answer decoded strictly against its published result schema and checked against figures recomputed here
 * from the parsed records by other routes (FY + YTD - prior YTD for TTM, the planted restatement, split and
 * amendments, the last simulated bar).
 */
import { Decimal } from "decimal.js"
import { Effect, Exit, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import { makeEquityPlane } from "../../../core/src/equity/EquityPlane.ts"
import { EquityStore } from "../../../core/src/equity/EquityStore.ts"
import type { Fact } from "../../../core/src/equity/Model.ts"
import { decodeParams, isApiError } from "../../../core/src/Params.ts"
import type { HandlerOutput } from "../../../core/src/Pipeline.ts"
import { planeHandlers } from "../../../core/src/Planes.ts"
import { operation } from "../../../core/src/Registry.ts"
import * as R from "../../../core/src/Results.ts"
import { layerMemoryEquityStore } from "../../memory/src/MemoryEquityStore.ts"
import { simulatedEquity, supersedeAmendments } from "../src/index.ts"
import { loadSimulatedEquity } from "../src/simulated/equity/load.ts"

const sim = simulatedEquity(7)
/** Monday after the simulation's last day (Friday 2026-11-20), 15:00 UTC: the session is open. */
const NOW = Date.UTC(2026, 10, 23, 15)
const idOf = (cik: string) => {
  const c = sim.companies.find((x) => x.cik === cik)
  return `eq:${cik}:${c?.tickers[0]}`
}

const run = <A, E>(effect: Effect.Effect<A, E, EquityStore>) =>
  Effect.runPromise(
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      yield* loadSimulatedEquity(sim)
      return yield* effect
    }).pipe(Effect.provide(Layer.merge(layerMemoryEquityStore, TestClock.layer())))
  )

const call = (name: string, params: ReadonlyArray<readonly [string, unknown]>) =>
  Effect.gen(function* () {
    const op = operation(name)
    if (op === undefined) throw new Error(name)
    const handler = planeHandlers([yield* makeEquityPlane({ source: "simulated" })]).get(name)
    if (handler === undefined) throw new Error(`no handler for ${name}`)
    const decoded = decodeParams(op, params)
    if (isApiError(decoded)) throw new Error(decoded.message)
    const out: HandlerOutput = yield* handler({
      op,
      params: decoded,
      principal: { _tag: "Anonymous", client: "test", rateLimitPerMinute: 60 },
      rate: { limit: 60, remaining: 59, resetAtMs: NOW, allowed: true },
      nowMs: NOW
    })
    if (out._tag !== "Json") throw new Error("not json")
    const exit = Schema.decodeUnknownExit(R.single(op.result) as unknown as Schema.Codec<unknown, unknown>, {
      onExcessProperty: "error"
    })(out.body)
    if (Exit.isFailure(exit)) throw new Error(`${name} does not match its schema: ${String(exit.cause)}`)
    return (out.body as { data: any }).data
  })

/** The latest filed value of a concept for an exact period. */
const filed = (facts: ReadonlyArray<Fact>, concept: string, start: string, end: string): Decimal | undefined => {
  const matching = facts
    .filter((f) => f.concept === concept && f.start === start && f.end === end)
    .sort((a, b) => (a.filed < b.filed ? -1 : a.filed > b.filed ? 1 : a.accession < b.accession ? -1 : 1))
  const last = matching.at(-1)
  return last === undefined ? undefined : new Decimal(last.value)
}

describe("the equity plane over the simulated companies", () => {
  it("loads idempotently: a second load writes nothing new", () =>
    run(
      Effect.gen(function* () {
        const store = yield* EquityStore
        const before = yield* store.coverage()
        const again = yield* loadSimulatedEquity(sim)
        expect([again.facts, again.filings, again.ownershipReports, again.holdingsReports]).toEqual([0, 0, 0, 0])
        expect(yield* store.coverage()).toEqual(before)
        expect(before.map((c) => [c.cik, c.bars > 0, c.hasHolders])).toEqual(
          sim.companies.map((c) => [c.cik, true, true])
        )
      })
    ))

  it("answers every equity operation for every company with real values", () =>
    run(
      Effect.gen(function* () {
        for (const company of sim.companies) {
          const id = idOf(company.cik)
          const bars = sim.dailyBars.get(company.cik) ?? []
          const last = bars.at(-1)
          const read = yield* call("read", [["id", id]])
          expect(read.class).toBe("full")
          expect(read.status).toBe("live")
          expect(read.headline.price_usd).toBe(last?.c)
          expect(typeof read.headline.market_cap_usd).toBe("number")
          expect(read.headline.return_24h_pct.value).toBeCloseTo(((last?.c ?? 0) / (bars.at(-2)?.c ?? 1) - 1) * 100, 4)
          expect(read.filings_indexed_through).toMatch(/^2026-11-\d\d$/)

          const price = yield* call("price", [["id", id]])
          expect(price.usd).toBe(last?.c)
          const tech = yield* call("technicals", [["id", id]])
          for (const k of ["rsi_14", "adx_14", "atr_14_pct"]) expect(Number.isFinite(tech[k].value)).toBe(true)
          const profile = yield* call("profile", [["id", id]])
          expect(profile.sector).not.toBeNull()
          expect(profile.shares_outstanding).toMatch(/^\d+$/)

          const fundamentals = yield* call("fundamentals", [["id", id]])
          expect(fundamentals.revenue_ttm).toMatch(/^\d+$/)
          expect(fundamentals.eps_ttm).toMatch(/^-?\d+(\.\d+)?$/)
          expect(fundamentals.free_cash_flow_ttm).toMatch(/^-?\d+$/)
          const growth = yield* call("growth", [["id", id]])
          expect(growth.revenue_growth_yoy_pct).toMatch(/^-?\d+\.\d{4}$/)
          const valuation = yield* call("valuation", [["id", id]])
          expect(valuation.ps_ttm).toMatch(/^\d+\.\d{4}$/)

          for (const kind of ["annual", "quarter", "ytd"]) {
            const fin = yield* call("financials", [
              ["id", id],
              ["period_kind", kind],
              ["periods", "8"]
            ])
            expect(fin.periods.length).toBeGreaterThanOrEqual(kind === "annual" ? 5 : 8)
            expect(fin.values.revenue.by_period.every((v: string | null) => v !== null)).toBe(true)
            expect(fin.values.total_assets.unit).toBe("USD")
          }

          const events = yield* call("events", [
            ["id", id],
            ["limit", "200"]
          ])
          const types = new Set(events.events.map((e: { type: string }) => e.type))
          expect(types.has("filings") && types.has("insider")).toBe(true)
          expect(events.insider_summary_90d.unique_insiders).toBeGreaterThan(0)
          const holders = yield* call("holders", [["id", id]])
          expect(holders.report_period).toBe("2026-09-30")
          expect(holders.holders.length).toBeGreaterThan(0)
          const series = yield* call("series", [
            ["id", id],
            ["limit", "5"]
          ])
          expect(series.bars.map((b: { c: number }) => b.c)).toEqual(bars.slice(-5).map((b) => b.c))
          const summary = yield* call("series", [
            ["id", id],
            ["view", "summary"]
          ])
          expect(summary.summary.last_close).toBe(last?.c)
        }
      })
    ))

  it("TTM revenue equals FY + year to date - the prior year to date, from the parsed facts", () =>
    run(
      Effect.gen(function* () {
        for (const company of sim.companies) {
          const facts = sim.factsByCik.get(company.cik) ?? []
          const f = yield* call("fundamentals", [["id", idOf(company.cik)]])
          const end: string = f.ttm_end
          const revenueConcept = ["Revenues", "RevenueFromContractWithCustomerExcludingAssessedTax"].find((c) =>
            facts.some((x) => x.concept === c && x.end === end)
          ) as string
          // The fiscal year before `end`: the annual period ending 3, 6 or 9 months earlier.
          const annual = facts
            .filter((x) => x.concept === revenueConcept && x.start !== null && x.end < end)
            .filter((x) => (Date.parse(x.end) - Date.parse(x.start as string)) / 86_400_000 > 350)
            .sort((a, b) => (a.end < b.end ? 1 : -1))[0] as Fact
          const fyStart = new Date(Date.parse(annual.end) + 86_400_000).toISOString().slice(0, 10)
          const ytd = filed(facts, revenueConcept, fyStart, end) as Decimal
          const priorEnd = facts
            .filter((x) => x.concept === revenueConcept && x.start === annual.start && x.end < annual.end)
            .map((x) => x.end)
            .find((e) => Math.abs(Date.parse(end) - Date.parse(e) - 365 * 86_400_000) < 10 * 86_400_000) as string
          const prior = filed(facts, revenueConcept, annual.start as string, priorEnd) as Decimal
          const fy = filed(facts, revenueConcept, annual.start as string, annual.end) as Decimal
          expect(f.revenue_ttm).toBe(fy.plus(ytd).minus(prior).toFixed())
        }
      })
    ))

  it("flags the planted restatement and serves the restating filing's value", () =>
    run(
      Effect.gen(function* () {
        const planted = sim.planted.restatements[0]
        if (planted === undefined) throw new Error("the simulation plants a restatement")
        const fin = yield* call("financials", [
          ["id", idOf(planted.cik)],
          ["periods", "10"],
          ["statements", "income"]
        ])
        const restated = fin.periods.filter((p: { restated: boolean }) => p.restated)
        const year = restated.find((p: { id: string }) => p.id === `FY${planted.fiscalYear}`)
        expect(year?.accession).toBe(planted.restatedBy)
      })
    ))

  it("reports the planted split and nets the planted 4/A amendments", () =>
    run(
      Effect.gen(function* () {
        for (const split of sim.planted.splits) {
          const e = yield* call("events", [
            ["id", idOf(split.cik)],
            ["types", "splits"]
          ])
          expect(e.events.map((x: { date: string; ratio: string }) => [x.date, x.ratio])).toEqual([
            [split.date, String(split.ratio)]
          ])
        }
        for (const company of sim.companies) {
          const e = yield* call("events", [
            ["id", idOf(company.cik)],
            ["types", "insider"],
            ["limit", "200"]
          ])
          const inForce = supersedeAmendments(sim.ownershipReports.filter((r) => r.issuerCik === company.cik))
          const expected = new Set(inForce.filter((r) => r.transactions.length > 0).map((r) => r.accession))
          const got = new Set(e.events.map((x: { accession: string }) => x.accession))
          expect(got).toEqual(expected)
          const amendments = sim.planted.amendments.filter((a) => a.cik === company.cik)
          for (const a of amendments) expect(got.has(a.accession)).toBe(true)
        }
      })
    ))
})
