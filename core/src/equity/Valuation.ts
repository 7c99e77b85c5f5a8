/**
 * Trailing-twelve-month fundamentals, year-over-year growth and valuation multiples, exact: filed figures
 * through `Exact`, ratios and percentages rounded to `RATIO_DECIMALS` places half to even. A figure that
 * cannot be computed is null with a typed reason (never a placeholder).
 */
import { Exact, fromNumber, ratioText, text } from "./Exact.ts"
import type { Fact } from "./Model.ts"
import { dateOf, dayOf, type FactBook, lineItem, type Ttm } from "./Statements.ts"

/** Why a component is missing (DECISIONS, `unavailable`). */
export type UnavailableReason =
  | "not_covered"
  | "no_data"
  | "insufficient_history"
  | "source_stale"
  | "source_down"
  | "not_applicable"

/** A computed figure, or why there is none. */
export type Figure =
  | { readonly value: string; readonly asOf: string; readonly concepts: ReadonlyArray<string> }
  | { readonly value: null; readonly reason: UnavailableReason; readonly detail: string }

const missing = (reason: UnavailableReason, detail: string): Figure => ({ value: null, reason, detail })

const fromTtm = (t: Ttm | null, what: string): Figure =>
  t === null
    ? missing("no_data", `no filed figures give a trailing-twelve-month ${what}`)
    : { value: text(t.value), asOf: t.end, concepts: t.concepts }

/** TTM revenue. */
export const revenueTtm = (book: FactBook): Ttm | null => book.latestTtm(lineItem("revenue"))

/** TTM diluted EPS (basic where diluted is not filed): the sum of the per-share figures of the period. */
export const epsTtm = (book: FactBook): Ttm | null =>
  book.latestTtm(lineItem("eps_diluted")) ?? book.latestTtm(lineItem("eps_basic"))

/** TTM free cash flow: operating cash flow minus capital expenditure. */
export const freeCashFlowTtm = (book: FactBook): Ttm | null => book.latestTtm(lineItem("free_cash_flow"))

export interface Fundamentals {
  readonly revenueTtm: Figure
  readonly epsTtm: Figure
  readonly freeCashFlowTtm: Figure
}

export const fundamentals = (book: FactBook): Fundamentals => ({
  revenueTtm: fromTtm(revenueTtm(book), "revenue"),
  epsTtm: fromTtm(epsTtm(book), "EPS"),
  freeCashFlowTtm: fromTtm(freeCashFlowTtm(book), "free cash flow")
})

/**
 * Year-over-year growth in percent: (TTM now - TTM a year earlier) / |TTM a year earlier| x 100. Not
 * meaningful (null, `not_applicable`) from a zero or negative base.
 */
export const growthOf = (book: FactBook, now: Ttm | null, lineKey: string, what: string): Figure => {
  if (now === null) return missing("no_data", `no trailing-twelve-month ${what}`)
  const prior = book.ttmYearBefore(lineItem(lineKey), now.end)
  if (prior === null) {
    return missing("insufficient_history", `no trailing-twelve-month ${what} for the year before ${now.end}`)
  }
  if (prior.value.lte(0)) {
    return missing("not_applicable", `${what} a year earlier (${text(prior.value)}) is not positive`)
  }
  return {
    value: ratioText(now.value.minus(prior.value).div(prior.value.abs()).times(100)),
    asOf: now.end,
    concepts: [...new Set([...now.concepts, ...prior.concepts])]
  }
}

export interface Growth {
  readonly revenueGrowthYoyPct: Figure
  readonly epsGrowthYoyPct: Figure
  readonly freeCashFlowGrowthYoyPct: Figure
}

export const growth = (book: FactBook): Growth => {
  const eps = book.latestTtm(lineItem("eps_diluted"))
  return {
    revenueGrowthYoyPct: growthOf(book, revenueTtm(book), "revenue", "revenue"),
    epsGrowthYoyPct:
      eps !== null
        ? growthOf(book, eps, "eps_diluted", "EPS")
        : growthOf(book, book.latestTtm(lineItem("eps_basic")), "eps_basic", "EPS"),
    freeCashFlowGrowthYoyPct: growthOf(book, freeCashFlowTtm(book), "free_cash_flow", "free cash flow")
  }
}

/** Shares outstanding and where the count comes from. */
export interface SharesOutstanding {
  readonly shares: string
  /** `dei:EntityCommonStockSharesOutstanding` or `us-gaap:WeightedAverageNumberOfDilutedSharesOutstanding`. */
  readonly concept: string
  readonly asOf: string
  readonly accession: string
}

/**
 * Shares outstanding: the cover-page count (`dei:EntityCommonStockSharesOutstanding`) at its latest date, from
 * the latest filing reporting that date (several values in one filing for one date are share classes and are
 * added); without one, the latest diluted weighted-average share count of the income statement.
 */
export const sharesOutstanding = (facts: ReadonlyArray<Fact>): SharesOutstanding | null => {
  const cover = facts.filter(
    (f) => f.taxonomy === "dei" && f.concept === "EntityCommonStockSharesOutstanding" && f.unit === "shares"
  )
  if (cover.length > 0) {
    const end = cover.reduce((m, f) => (f.end > m ? f.end : m), "")
    const atEnd = cover.filter((f) => f.end === end)
    const latest = atEnd.reduce((m, f) =>
      f.filed > m.filed || (f.filed === m.filed && f.accession > m.accession) ? f : m
    )
    const sum = atEnd
      .filter((f) => f.accession === latest.accession)
      .reduce((s, f) => s.plus(new Exact(f.value)), new Exact(0))
    return {
      shares: text(sum),
      concept: "dei:EntityCommonStockSharesOutstanding",
      asOf: end,
      accession: latest.accession
    }
  }
  const weighted = facts.filter(
    (f) =>
      f.taxonomy === "us-gaap" && f.concept === "WeightedAverageNumberOfDilutedSharesOutstanding" && f.unit === "shares"
  )
  if (weighted.length === 0) return null
  const latest = weighted.reduce((m, f) =>
    f.end > m.end || (f.end === m.end && (f.filed > m.filed || (f.filed === m.filed && f.accession > m.accession)))
      ? f
      : m
  )
  return {
    shares: latest.value,
    concept: "us-gaap:WeightedAverageNumberOfDilutedSharesOutstanding",
    asOf: latest.end,
    accession: latest.accession
  }
}

export interface Valuation {
  readonly peTtm: Figure
  readonly psTtm: Figure
  readonly evEbitdaTtm: Figure
}

/**
 * Multiples at `priceUsd` (the last close, a market number taken at its shortest decimal text):
 * - `pe_ttm` = price / TTM diluted EPS;
 * - `ps_ttm` = market cap / TTM revenue, market cap = price x shares outstanding;
 * - `ev_ebitda_ttm` = (market cap + short- and long-term debt - cash and short-term investments) /
 *   (TTM operating income + TTM depreciation and amortization), balance lines at their latest filed date
 *   (a debt or investments line the company does not file counts as zero; cash must be filed).
 * Not meaningful (null, `not_applicable`) when the denominator is zero or negative.
 */
export const valuation = (book: FactBook, priceUsd: number | null, shares: SharesOutstanding | null): Valuation => {
  if (priceUsd === null || !Number.isFinite(priceUsd)) {
    const none = missing("no_data", "no price for this company")
    return { peTtm: none, psTtm: none, evEbitdaTtm: none }
  }
  const price = fromNumber(priceUsd)
  const eps = epsTtm(book)
  const peTtm: Figure =
    eps === null
      ? missing("no_data", "no trailing-twelve-month EPS")
      : eps.value.lte(0)
        ? missing("not_applicable", `trailing-twelve-month EPS is ${text(eps.value)} (not positive)`)
        : { value: ratioText(price.div(eps.value)), asOf: eps.end, concepts: eps.concepts }
  if (shares === null) {
    const none = missing("no_data", "no shares outstanding on file")
    return { peTtm, psTtm: none, evEbitdaTtm: none }
  }
  const marketCap = price.times(new Exact(shares.shares))
  const revenue = revenueTtm(book)
  const psTtm: Figure =
    revenue === null
      ? missing("no_data", "no trailing-twelve-month revenue")
      : revenue.value.lte(0)
        ? missing("not_applicable", `trailing-twelve-month revenue is ${text(revenue.value)}`)
        : { value: ratioText(marketCap.div(revenue.value)), asOf: revenue.end, concepts: revenue.concepts }
  return { peTtm, psTtm, evEbitdaTtm: evEbitda(book, marketCap) }
}

/** Debt (short and long term) minus cash and short-term investments at their latest filed dates, or null without cash. */
export const netDebt = (book: FactBook): Exact | null => {
  const cash = book.latestInstant(lineItem("cash_and_equivalents"))
  if (cash === null) return null
  const instant = (key: string) => {
    const c = book.latestInstant(lineItem(key))
    return c === null ? new Exact(0) : new Exact(c.value)
  }
  return instant("short_term_debt")
    .plus(instant("long_term_debt"))
    .minus(new Exact(cash.value))
    .minus(instant("short_term_investments"))
}

/** TTM EBITDA (operating income + depreciation and amortization) ending `end`, or null. */
const ebitdaAt = (book: FactBook, end: string): { value: Exact; operating: Ttm; da: Ttm } | null => {
  const operating = book.ttm(lineItem("operating_income"), end)
  const da = book.ttm(lineItem("depreciation_and_amortization"), end)
  return operating === null || da === null ? null : { value: operating.value.plus(da.value), operating, da }
}

const evEbitda = (book: FactBook, marketCap: Exact): Figure => {
  const operating = book.latestTtm(lineItem("operating_income"))
  if (operating === null) return missing("no_data", "no trailing-twelve-month operating income")
  const ebitda = ebitdaAt(book, operating.end)
  if (ebitda === null) {
    return missing("no_data", `no trailing-twelve-month depreciation and amortization ending ${operating.end}`)
  }
  if (ebitda.value.lte(0)) return missing("not_applicable", `trailing-twelve-month EBITDA is ${text(ebitda.value)}`)
  const debt = netDebt(book)
  if (debt === null) return missing("no_data", "no cash and equivalents on file for enterprise value")
  return {
    value: ratioText(marketCap.plus(debt).div(ebitda.value)),
    asOf: operating.end,
    concepts: [...new Set([...operating.concepts, ...ebitda.da.concepts])]
  }
}

// ---------------------------------------------------------------------------------------------------------------
// History of the multiples, for their percentiles
// ---------------------------------------------------------------------------------------------------------------

/** The day a TTM figure could first be known: when the last of its inputs was first filed. */
export const ttmKnownOn = (t: Ttm): string =>
  t.inputs.reduce((latest, c) => (c.knownOn > latest ? c.knownOn : latest), "")

/** A denominator of a multiple: its value, the period end it closes and the day it was known. */
interface Denominator {
  readonly end: string
  readonly known: string
  readonly value: number
}

const denominators = (
  book: FactBook,
  lineKey: string,
  from: string,
  value: (end: string) => { readonly value: Exact; readonly known: string } | null
): ReadonlyArray<Denominator> => {
  const out: Array<Denominator> = []
  for (const end of book.endsOf(lineItem(lineKey))) {
    if (end < from) continue
    const v = value(end)
    if (v !== null) out.push({ end, known: v.known, value: v.value.toNumber() })
  }
  return out
}

/** The denominator in force on `date`: of those known by then, the one closing the latest period. */
const inForce = (ds: ReadonlyArray<Denominator>, date: string): Denominator | undefined => {
  let best: Denominator | undefined
  for (const d of ds) if (d.known <= date && (best === undefined || d.end > best.end)) best = d
  return best
}

export interface MultipleHistory {
  /** Aligned with the closes given; NaN where the multiple was not meaningful or not computable. */
  readonly peTtm: ReadonlyArray<number>
  readonly psTtm: ReadonlyArray<number>
  readonly evEbitdaTtm: ReadonlyArray<number>
}

/**
 * The three multiples on each day of a run of daily closes (split-adjusted), as they stood that day: each
 * close over the TTM figures of the latest period whose inputs had been filed by then. The figures are today's
 * values for those periods (restated and split-adjusted by later filings, consistent with adjusted prices);
 * market cap uses today's share count and enterprise value today's net debt. Numbers (not exact): they only
 * rank today's exact multiple among its own history.
 */
export const multipleHistory = (
  book: FactBook,
  shares: SharesOutstanding | null,
  closes: ReadonlyArray<{ readonly date: string; readonly close: number }>
): MultipleHistory => {
  const epsLine = book.latestTtm(lineItem("eps_diluted")) !== null ? "eps_diluted" : "eps_basic"
  const ttmOf = (key: string) => (end: string) => {
    const t = book.ttm(lineItem(key), end)
    return t === null ? null : { value: t.value, known: ttmKnownOn(t) }
  }
  // Periods that can be in force during the run: those ending up to ~15 months before its first day.
  const first = closes[0]?.date ?? ""
  const from = first === "" ? "" : dateOf(dayOf(first) - 460)
  const eps = denominators(book, epsLine, from, ttmOf(epsLine))
  const revenue = denominators(book, "revenue", from, ttmOf("revenue"))
  const ebitda = denominators(book, "operating_income", from, (end) => {
    const e = ebitdaAt(book, end)
    if (e === null) return null
    const a = ttmKnownOn(e.operating)
    const b = ttmKnownOn(e.da)
    return { value: e.value, known: a > b ? a : b }
  })
  const shareCount = shares === null ? Number.NaN : Number(shares.shares)
  const debt = netDebt(book)
  const debtNumber = debt === null ? Number.NaN : debt.toNumber()
  const ratio = (num: number, d: Denominator | undefined) =>
    d === undefined || !(d.value > 0) || !Number.isFinite(num) ? Number.NaN : num / d.value
  return {
    peTtm: closes.map(({ date, close }) => ratio(close, inForce(eps, date))),
    psTtm: closes.map(({ date, close }) => ratio(close * shareCount, inForce(revenue, date))),
    evEbitdaTtm: closes.map(({ date, close }) => ratio(close * shareCount + debtNumber, inForce(ebitda, date)))
  }
}
