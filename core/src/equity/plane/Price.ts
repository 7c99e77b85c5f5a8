/** `price`: the last daily close, its 24 h return and 7-day range position, and the market cap (no quotes). */
import { Effect } from "effect"
import type { PlaneForAsset } from "../../Planes.ts"
import { sharesOutstanding } from "../Valuation.ts"
import { priceFreshness } from "./Freshness.ts"
import { rangePos7dPct, returnsPct } from "./Measures.ts"
import { type AssetTarget, perAsset } from "./Operation.ts"
import {
  classesBlockPriceFigures,
  type EquityState,
  marketCap,
  priceContext,
  type Unavailable,
  withUnavailable
} from "./State.ts"

const priceBody = Effect.fnUntraced(function* (st: EquityState, t: AssetTarget) {
  const { entry, cik, ticker, company, coverage, nowMs } = t
  const bars = yield* st.recentBars(cik, ticker, nowMs)
  const unavailable: Unavailable = {}
  const last = bars[bars.length - 1]
  if (last === undefined) {
    return {
      asset_id: entry.asset_id,
      ...(yield* st.freshnessOf(cik, coverage, bars, nowMs)),
      usd: null,
      unavailable: { usd: { reason: "no_data" as const, detail: "no daily bars on file" } }
    }
  }
  const ctx = priceContext(bars, unavailable)
  const shares = sharesOutstanding(
    yield* st.store.facts(cik, [
      "EntityCommonStockSharesOutstanding",
      "WeightedAverageNumberOfDilutedSharesOutstanding"
    ])
  )
  const quotes = { reason: "not_covered" as const, detail: "equity prices are daily bars; no quotes" }
  unavailable.bid_usd = quotes
  unavailable.ask_usd = quotes
  const classes = classesBlockPriceFigures(company, ticker)
  if (classes !== undefined) unavailable.market_cap_usd = classes
  else if (shares === null) unavailable.market_cap_usd = { reason: "no_data", detail: "no shares outstanding on file" }
  return withUnavailable(
    {
      asset_id: entry.asset_id,
      ...priceFreshness(last.tMs, nowMs, st.options.dailyCloseDelayed === true),
      usd: last.c,
      return_24h_pct: ctx.put("return_24h_pct", returnsPct(bars)),
      range_pos_7d_pct: ctx.put("range_pos_7d_pct", rangePos7dPct(bars)),
      bid_usd: null,
      ask_usd: null,
      market: { market_cap_usd: classes === undefined ? marketCap(last.c, shares) : null }
    },
    unavailable
  )
})

export const makePrice = (st: EquityState): PlaneForAsset => perAsset(st, priceBody)
