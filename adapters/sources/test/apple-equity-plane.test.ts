/**
 * Apple's real companyfacts and submissions (`../shared/data/sec`, read in place) through the SEC parsers, the
 * equity store and the equity plane: filed figures served as the exact filed strings, the restated period,
 * exact TTM figures worked out by hand from the raw JSON, and the filing stream in the feed's order.
 */
import { Effect, Exit, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import { makeEquityPlane } from "../../../core/src/equity/EquityPlane.ts"
import { EquityStore } from "../../../core/src/equity/EquityStore.ts"
import { decodeParams, isApiError } from "../../../core/src/Params.ts"
import type { HandlerOutput } from "../../../core/src/Pipeline.ts"
import { planeHandlers } from "../../../core/src/Planes.ts"
import { operation } from "../../../core/src/Registry.ts"
import * as R from "../../../core/src/Results.ts"
import { layerMemoryEquityStore } from "../../memory/src/MemoryEquityStore.ts"
import { parseCompanyFacts, parseSubmissions } from "../src/index.ts"
import { parsed, sharedSecPresent, sharedSecText, sharedSuite } from "./sec/Files.ts"

const APPLE = "eq:320193:AAPL"
const NOW = Date.UTC(2026, 2, 23, 15)

const load = Effect.gen(function* () {
  const store = yield* EquityStore
  const facts = parsed(parseCompanyFacts(sharedSecText("companyfacts/CIK0000320193.json")))
  const submissions = parsed(parseSubmissions(sharedSecText("submissions/CIK0000320193.json")))
  yield* store.putCompany(submissions.company)
  yield* store.putFacts(facts.cik, facts.facts)
  yield* store.putFilings(submissions.company.cik, submissions.filings)
  return submissions
})

const run = <A, E>(effect: Effect.Effect<A, E, EquityStore>) =>
  Effect.runPromise(
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      yield* load
      return yield* effect
    }).pipe(Effect.provide(Layer.merge(layerMemoryEquityStore, TestClock.layer())))
  )

const call = (name: string, params: ReadonlyArray<readonly [string, unknown]>) =>
  Effect.gen(function* () {
    const op = operation(name)
    if (op === undefined) throw new Error(name)
    const handler = planeHandlers([yield* makeEquityPlane({ source: "sec" })]).get(name)
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

describe.skipIf(!sharedSecPresent)(sharedSuite("Apple through the parsers, the store and the equity plane"), () => {
  it("serves annual figures across the three statements as the filed strings of the FY2025 10-K", () =>
    run(
      Effect.gen(function* () {
        const d = yield* call("financials", [
          ["id", APPLE],
          ["periods", "3"],
          ["basis_concepts", "true"]
        ])
        expect(d.periods.map((p: any) => [p.id, p.end, p.form, p.accession, p.filed_at])).toEqual([
          ["FY2025", "2025-09-27", "10-K", "0000320193-25-000079", "2025-10-31"],
          ["FY2024", "2024-09-28", "10-K", "0000320193-25-000079", "2025-10-31"],
          ["FY2023", "2023-09-30", "10-K", "0000320193-25-000079", "2025-10-31"]
        ])
        // Read from the raw JSON: us-gaap facts of accession 0000320193-25-000079 (and its balance sheet).
        const table: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
          ["revenue", ["416161000000", "391035000000", "383285000000"]],
          ["cost_of_revenue", ["220960000000", "210352000000", "214137000000"]],
          ["gross_profit", ["195201000000", "180683000000", "169148000000"]],
          ["operating_income", ["133050000000", "123216000000", "114301000000"]],
          ["net_income", ["112010000000", "93736000000", "96995000000"]],
          ["eps_basic", ["7.49", "6.11", "6.16"]],
          ["eps_diluted", ["7.46", "6.08", "6.13"]],
          ["operating_cash_flow", ["111482000000", "118254000000", "110543000000"]],
          ["capital_expenditure", ["12715000000", "9447000000", "10959000000"]],
          ["dividends_paid", ["15421000000", "15234000000", "15025000000"]]
        ]
        for (const [line, values] of table) expect([line, d.values[line].by_period]).toEqual([line, values])
        expect(d.values.total_assets.by_period.slice(0, 2)).toEqual(["359241000000", "364980000000"])
        expect(d.values.revenue.basis_concepts).toEqual(["RevenueFromContractWithCustomerExcludingAssessedTax"])
        expect(d.values.eps_diluted.unit).toBe("USD_per_share")
      })
    ))

  it("flags the periods a later filing changed, such as FY2016 operating cash flow", () =>
    run(
      Effect.gen(function* () {
        const d = yield* call("financials", [
          ["id", APPLE],
          ["periods", "20"],
          ["statements", "cash_flow"]
        ])
        const i = d.periods.findIndex((p: any) => p.end === "2016-09-24")
        expect(d.periods[i].restated).toBe(true)
        expect(d.periods[i].accession).toBe("0000320193-18-000145")
        // 65824000000 in the 2017 10-K, 66231000000 in the 2018 10-K (served).
        expect(d.values.operating_cash_flow.by_period[i]).toBe("66231000000")
        // FY2025's figures have not been changed by a later filing.
        expect(d.periods[0].restated).toBe(false)
      })
    ))

  it("computes TTM and growth exactly from the filed figures", () =>
    run(
      Effect.gen(function* () {
        const f = yield* call("fundamentals", [["id", APPLE]])
        // Revenue: Q1 FY26 143756000000 + Q4 FY25 (416161000000 - 313695000000) + Q3 94036000000 + Q2 95359000000.
        // EPS: 2.84 + (7.46 - 5.62) + 1.57 + 1.65. FCF: (111482000000 + 53925000000 - 29935000000)
        //   - (12715000000 + 2373000000 - 2940000000).
        expect([f.revenue_ttm, f.eps_ttm, f.free_cash_flow_ttm, f.ttm_end]).toEqual([
          "435617000000",
          "7.9",
          "123324000000",
          "2025-12-27"
        ])
        const g = yield* call("growth", [["id", APPLE]])
        // Revenue a year earlier: 124300000000 + 94930000000 + 85777000000 + 90753000000 = 395760000000;
        // 39857 / 395760 = 10.0710 %.
        expect(g.revenue_growth_yoy_pct).toBe("10.0710")
        const p = yield* call("profile", [["id", APPLE]])
        expect([p.sector, p.shares_outstanding, p.shares_outstanding_as_of]).toEqual([
          "Manufacturing",
          "14681140000",
          "2026-01-16"
        ])
      })
    ))

  it("lists every filing of the feed, newest first by acceptance time, with form and accession", () =>
    run(
      Effect.gen(function* () {
        const submissions = yield* load
        const seen: Array<{ accession: string; accepted_at: string; form: string }> = []
        let cursor: string | null = null
        do {
          const params: Array<readonly [string, unknown]> = [
            ["id", APPLE],
            ["types", "filings"],
            ["limit", "200"]
          ]
          if (cursor !== null) params.push(["cursor", cursor])
          const page = yield* call("events", params)
          seen.push(...page.events)
          cursor = page.next_cursor
        } while (cursor !== null)
        expect(seen.length).toBe(submissions.filings.length)
        const byTime = [...submissions.filings].sort((a, b) =>
          a.acceptedAt !== b.acceptedAt ? (a.acceptedAt < b.acceptedAt ? 1 : -1) : a.accession < b.accession ? 1 : -1
        )
        expect(seen.map((e) => [e.accession, e.form])).toEqual(byTime.map((f) => [f.accession, f.form]))
        for (let i = 1; i < seen.length; i++) {
          expect(
            (seen[i - 1] as { accepted_at: string }).accepted_at >= (seen[i] as { accepted_at: string }).accepted_at
          ).toBe(true)
        }
      })
    ))
})
