/**
 * `read`: the headline of a company (price, market cap, P/E, 24 h return with its percentile), its freshness and,
 * in live mode, the day through which EDGAR filings are indexed.
 */
import { Effect } from "effect"
import type { PlaneForAsset } from "../../Planes.ts"
import { sharesOutstanding, valuation } from "../Valuation.ts"
import { BASELINE, returnsPct } from "./Measures.ts"
import { type AssetTarget, perAsset } from "./Operation.ts"
import {
  classesBlockPriceFigures,
  type EquityState,
  figure,
  lastPrice,
  marketCap,
  priceContext,
  type Unavailable,
  withUnavailable
} from "./State.ts"

const readBody = Effect.fnUntraced(function* (st: EquityState, t: AssetTarget) {
  const { entry, cik, ticker, company, coverage, nowMs } = t
  const { facts, book } = yield* st.bookOf(cik)
  const bars = yield* st.recentBars(cik, ticker, nowMs)
  const classes = classesBlockPriceFigures(company, ticker)
  const unavailable: Unavailable = {}
  const price = lastPrice(bars)
  const shares = sharesOutstanding(facts)
  let returnPct: { value: number; pctl: number } | null = null
  let n = 0
  if (price === null) {
    const why = { reason: "not_covered" as const, detail: `tier \`${entry.tier}\` has filings but no price feed` }
    unavailable.price_usd = why
    unavailable.market_cap_usd = why
    unavailable.pe_ttm = why
    unavailable.return_24h_pct = why
  } else {
    const ctx = priceContext(bars, unavailable)
    returnPct = ctx.put("return_24h_pct", returnsPct(bars))
    n = ctx.n
    if (classes !== undefined) {
      unavailable.market_cap_usd = classes
      unavailable.pe_ttm = classes
    } else if (shares === null) {
      unavailable.market_cap_usd = { reason: "no_data", detail: "no shares outstanding on file" }
    }
  }
  const pe =
    price === null || classes !== undefined ? null : figure(valuation(book, price, shares).peTtm, "pe_ttm", unavailable)
  const freshness = yield* st.freshnessOf(cik, coverage, bars, nowMs)
  // Live mode: the daily-index watermark (every company's filings processed through that day); otherwise,
  // and until the follower completed a day, the company's latest filing date on file.
  const watermark = st.options.filingsIndexedThrough === undefined ? undefined : yield* st.options.filingsIndexedThrough
  const indexedThrough = watermark ?? coverage.lastFiledAt ?? undefined
  return withUnavailable(
    {
      asset_id: entry.asset_id,
      symbol: entry.symbol,
      name: entry.name,
      class: entry.tier,
      ...freshness,
      baseline: { ...BASELINE, n, ...st.sourceFor(cik) },
      headline: {
        price_usd: price,
        market_cap_usd: classes === undefined ? marketCap(price, shares) : null,
        pe_ttm: pe,
        return_24h_pct: returnPct
      },
      ...(indexedThrough === undefined ? {} : { filings_indexed_through: indexedThrough })
    },
    unavailable
  )
})

export const makeRead = (st: EquityState): PlaneForAsset => perAsset(st, readBody)
