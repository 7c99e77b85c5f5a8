/** `profile`: the company as filed (names, tickers, exchanges, SIC sector and industry), shares and market cap. */
import { Effect } from "effect"
import type { PlaneForAsset } from "../../Planes.ts"
import { sharesOutstanding } from "../Valuation.ts"
import { filingsFreshness } from "./Freshness.ts"
import { type AssetTarget, perAsset } from "./Operation.ts"
import {
  classesBlockPriceFigures,
  type EquityState,
  lastPrice,
  marketCap,
  type Unavailable,
  withUnavailable
} from "./State.ts"

/** SIC divisions (the SEC's Standard Industrial Classification) named as sectors. */
export const sectorOfSic = (sic: string | null): string | null => {
  if (sic === null || !/^\d{3,4}$/.test(sic)) return null
  const n = Number(sic)
  if (n >= 100 && n <= 999) return "Agriculture, Forestry and Fishing"
  if (n >= 1000 && n <= 1499) return "Mining"
  if (n >= 1500 && n <= 1799) return "Construction"
  if (n >= 2000 && n <= 3999) return "Manufacturing"
  if (n >= 4000 && n <= 4999) return "Transportation, Communications and Utilities"
  if (n >= 5000 && n <= 5199) return "Wholesale Trade"
  if (n >= 5200 && n <= 5999) return "Retail Trade"
  if (n >= 6000 && n <= 6799) return "Finance, Insurance and Real Estate"
  if (n >= 7000 && n <= 8999) return "Services"
  if (n >= 9100 && n <= 9729) return "Public Administration"
  if (n >= 9900 && n <= 9999) return "Nonclassifiable"
  return null
}

const profileBody = Effect.fnUntraced(function* (st: EquityState, t: AssetTarget) {
  const { entry, cik, ticker, company, coverage, nowMs } = t
  const facts = yield* st.store.facts(cik, [
    "EntityCommonStockSharesOutstanding",
    "WeightedAverageNumberOfDilutedSharesOutstanding"
  ])
  const bars = yield* st.recentBars(cik, ticker, nowMs)
  const shares = sharesOutstanding(facts)
  const price = lastPrice(bars)
  const unavailable: Unavailable = {}
  const sector = sectorOfSic(company.sic)
  if (sector === null) unavailable.sector = { reason: "no_data", detail: "no SIC code on file" }
  if (shares === null) unavailable.shares_outstanding = { reason: "no_data", detail: "no share count filed" }
  const classes = classesBlockPriceFigures(company, ticker)
  const cap = classes === undefined ? marketCap(price, shares) : null
  if (cap === null) {
    unavailable.market_cap_usd =
      price === null
        ? { reason: "not_covered", detail: `tier \`${entry.tier}\` has no price feed` }
        : (classes ?? { reason: "no_data", detail: "no shares outstanding on file" })
  }
  // The market cap moves with the price: with one, the profile's clocks are the price's (its next update
  // is the next session close or open, not the next periodic report); without one, the filings'.
  const freshness =
    cap !== null
      ? yield* st.freshnessOf(cik, coverage, bars, nowMs)
      : filingsFreshness(yield* st.latestFilings(cik, coverage), nowMs, "periodic")
  return withUnavailable(
    {
      asset_id: entry.asset_id,
      ...freshness,
      name: company.name,
      tickers: company.tickers,
      exchanges: company.exchanges,
      sector,
      industry: company.sicDescription,
      sic: company.sic,
      fiscal_year_end: company.fiscalYearEnd,
      market_cap_usd: cap,
      shares_outstanding: shares?.shares ?? null,
      ...(shares === null ? {} : { shares_outstanding_as_of: shares.asOf, shares_outstanding_concept: shares.concept })
    },
    unavailable
  )
})

export const makeProfile = (st: EquityState): PlaneForAsset => perAsset(st, profileBody)
