/** `valuation`: P/E, P/S and EV/EBITDA over the trailing twelve months, each ranked among its daily values of the year. */
import { Effect } from "effect"
import { percentileRank, sortedFinite } from "../../Percentile.ts"
import type { PlaneForAsset } from "../../Planes.ts"
import { newYorkDate } from "../MarketHours.ts"
import { multipleHistory, sharesOutstanding, valuation } from "../Valuation.ts"
import { BASELINE, baselineStart } from "./Measures.ts"
import { type AssetTarget, perAsset } from "./Operation.ts"
import {
  classesBlockPriceFigures,
  type EquityState,
  figure,
  lastPrice,
  type Unavailable,
  withUnavailable
} from "./State.ts"

const valuationBody = Effect.fnUntraced(function* (st: EquityState, t: AssetTarget) {
  const { entry, cik, ticker, company, coverage, nowMs } = t
  const { facts, book } = yield* st.bookOf(cik)
  const bars = yield* st.recentBars(cik, ticker, nowMs)
  const shares = sharesOutstanding(facts)
  // A company under several tickers: no multiple from one ticker's price (see `classesBlockPriceFigures`).
  const classes = classesBlockPriceFigures(company, ticker)
  const v =
    classes === undefined
      ? valuation(book, lastPrice(bars), shares)
      : {
          peTtm: { value: null, ...classes },
          psTtm: { value: null, ...classes },
          evEbitdaTtm: { value: null, ...classes }
        }
  const unavailable: Unavailable = {}
  // Percentiles of today's multiples among their daily values over the baseline year.
  const window = bars.slice(baselineStart(bars))
  const history = multipleHistory(
    book,
    shares,
    window.map((b) => ({ date: newYorkDate(b.tMs), close: b.c }))
  )
  const pctl = (name: string, value: string | null, series: ReadonlyArray<number>): number | null => {
    if (value === null) return null
    const baseline = sortedFinite(series)
    const p = percentileRank(Number(value), baseline)
    if (p !== undefined) return p
    unavailable[`${name}_pctl`] = {
      reason: "insufficient_history",
      detail: `${baseline.length} daily values in the ${BASELINE.window} baseline; at least 30 are needed`
    }
    return null
  }
  const pe = figure(v.peTtm, "pe_ttm", unavailable)
  const ps = figure(v.psTtm, "ps_ttm", unavailable)
  const ev = figure(v.evEbitdaTtm, "ev_ebitda_ttm", unavailable)
  return withUnavailable(
    {
      asset_id: entry.asset_id,
      ...(yield* st.freshnessOf(cik, coverage, bars, nowMs)),
      pe_ttm: pe,
      ps_ttm: ps,
      ev_ebitda_ttm: ev,
      price_usd: lastPrice(bars),
      pe_ttm_pctl: pctl("pe_ttm", pe, history.peTtm),
      ps_ttm_pctl: pctl("ps_ttm", ps, history.psTtm),
      ev_ebitda_ttm_pctl: pctl("ev_ebitda_ttm", ev, history.evEbitdaTtm),
      baseline: { ...BASELINE, n: window.length, ...st.sourceFor(cik) }
    },
    unavailable
  )
})

export const makeValuation = (st: EquityState): PlaneForAsset => perAsset(st, valuationBody)
