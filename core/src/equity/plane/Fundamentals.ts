/**
 * The filings-based per-asset operations: `growth` (year-over-year revenue, EPS and free cash flow) and
 * `fundamentals` (their trailing twelve months), from the company's statements, on the filings' clocks.
 */
import { Effect } from "effect"
import type { PlaneForAsset } from "../../Planes.ts"
import type { FactBook } from "../Statements.ts"
import { fundamentals, growth } from "../Valuation.ts"
import { filingsFreshness } from "./Freshness.ts"
import { type AssetTarget, perAsset } from "./Operation.ts"
import { type EquityState, figure, type Unavailable, withUnavailable } from "./State.ts"

type Compute = (book: FactBook, unavailable: Unavailable) => object

const filingsBasedBody = Effect.fnUntraced(function* (st: EquityState, t: AssetTarget, compute: Compute) {
  const { entry, cik, coverage, nowMs } = t
  const { book } = yield* st.bookOf(cik)
  const unavailable: Unavailable = {}
  const fields = compute(book, unavailable)
  const freshness = filingsFreshness(yield* st.latestFilings(cik, coverage), nowMs, "periodic")
  return withUnavailable({ asset_id: entry.asset_id, ...freshness, ...fields }, unavailable)
})

const filingsBased =
  (compute: Compute) =>
  (st: EquityState): PlaneForAsset =>
    perAsset(st, (st, t) => filingsBasedBody(st, t, compute))

export const makeGrowth = filingsBased((book, unavailable) => {
  const g = growth(book)
  return {
    revenue_growth_yoy_pct: figure(g.revenueGrowthYoyPct, "revenue_growth_yoy_pct", unavailable),
    eps_growth_yoy_pct: figure(g.epsGrowthYoyPct, "eps_growth_yoy_pct", unavailable),
    free_cash_flow_growth_yoy_pct: figure(g.freeCashFlowGrowthYoyPct, "free_cash_flow_growth_yoy_pct", unavailable),
    ttm_end: g.revenueGrowthYoyPct.value === null ? null : g.revenueGrowthYoyPct.asOf
  }
})

export const makeFundamentals = filingsBased((book, unavailable) => {
  const f = fundamentals(book)
  return {
    revenue_ttm: figure(f.revenueTtm, "revenue_ttm", unavailable),
    eps_ttm: figure(f.epsTtm, "eps_ttm", unavailable),
    free_cash_flow_ttm: figure(f.freeCashFlowTtm, "free_cash_flow_ttm", unavailable),
    ttm_end: f.revenueTtm.value === null ? null : f.revenueTtm.asOf
  }
})
