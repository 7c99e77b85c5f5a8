/**
 * The simulated companies' books: one record per fiscal quarter with the flows of that quarter and the balances
 * at its end, in whole thousands of US dollars (as filers round), share counts in whole shares. Annual and
 * year-to-date figures are sums of quarters, so a derived Q4 (FY minus nine months) is exact by construction.
 * Per-share figures are computed and rounded to cents with decimal.js, the way filers present them.
 */
import { Decimal } from "decimal.js"
import { monthEnd } from "./Calendar.ts"
import type { CompanyProfile } from "./Companies.ts"
import { type Stream, stream } from "./Seeded.ts"

/** One fiscal quarter. Share counts are in pre-split units (see `splitFactor`). */
export interface Quarter {
  readonly fiscalYear: number
  /** 1..4 */
  readonly fiscalQuarter: number
  readonly start: string
  readonly end: string
  readonly revenue: number
  readonly costOfRevenue: number
  readonly operatingIncome: number
  readonly depreciationAmortization: number
  readonly interestExpense: number
  readonly incomeTax: number
  readonly netIncome: number
  readonly operatingCashFlow: number
  readonly capex: number
  readonly dividendsPaid: number
  /** Declared per share this quarter (pre-split units), or null. */
  readonly dividendPerShare: string | null
  readonly weightedBasicShares: number
  readonly weightedDilutedShares: number
  /** Balances at the quarter's end. */
  readonly sharesOutstanding: number
  readonly cash: number
  readonly longTermDebt: number
  readonly liabilities: number
  readonly equity: number
  readonly assets: number
}

const thousands = (usd: number): number => Math.round(usd / 1000) * 1000

/** Month (1..12) and year of a fiscal quarter's end. */
export const quarterEnd = (profile: CompanyProfile, fiscalYear: number, fiscalQuarter: number): string => {
  const fyeMonth = Number(profile.fiscalYearEnd.slice(0, 2))
  return monthEnd(fiscalYear, fyeMonth - 3 * (4 - fiscalQuarter))
}

/** The day after the previous quarter's end. */
export const quarterStart = (profile: CompanyProfile, fiscalYear: number, fiscalQuarter: number): string => {
  const previous =
    fiscalQuarter === 1 ? quarterEnd(profile, fiscalYear - 1, 4) : quarterEnd(profile, fiscalYear, fiscalQuarter - 1)
  const next = new Date(`${previous}T00:00:00Z`)
  next.setUTCDate(next.getUTCDate() + 1)
  return next.toISOString().slice(0, 10)
}

/**
 * Generates the quarters of fiscal years `firstYear`..`lastYear` (all four quarters each; the caller decides
 * which were filed by when).
 */
export const generateQuarters = (
  seed: number,
  profile: CompanyProfile,
  firstYear: number,
  lastYear: number
): ReadonlyArray<Quarter> => {
  const random: Stream = stream(seed, `financials:${profile.cik}`)
  const quarters: Array<Quarter> = []
  let annualRevenue = profile.baseRevenueUsd
  let shares = profile.baseShares
  let cash = profile.cashUsd
  let debt = profile.longTermDebtUsd
  let equity = profile.baseRevenueUsd * (profile.operatingMargin < 0 ? 1.4 : 0.55)
  for (let year = firstYear; year <= lastYear; year++) {
    if (year > firstYear) annualRevenue *= 1 + profile.growth + random.normal() * 0.025
    if (year > firstYear && random.next() < 0.4) debt *= random.between(0.85, 1.2)
    const dividend =
      profile.dividendPerShare === null
        ? null
        : new Decimal(profile.dividendPerShare).plus(new Decimal(profile.dividendRaisePerYear).times(year - firstYear))
    for (let q = 1; q <= 4; q++) {
      const revenue = thousands(annualRevenue * profile.seasonality[q - 1]! * (1 + random.normal() * 0.012))
      const grossMargin = profile.grossMargin + random.normal() * 0.008
      const costOfRevenue = thousands(revenue * (1 - grossMargin))
      const operatingIncome = thousands(revenue * (profile.operatingMargin + random.normal() * 0.01))
      const depreciationAmortization = thousands(revenue * profile.dnaRatio * (1 + random.normal() * 0.03))
      const interestExpense = thousands((debt * 0.048) / 4)
      const pretax = operatingIncome - interestExpense
      const incomeTax = pretax > 0 ? thousands(pretax * profile.taxRate) : 0
      const netIncome = pretax - incomeTax
      const operatingCashFlow = thousands(netIncome + depreciationAmortization + revenue * random.normal() * 0.02)
      const capex = thousands(revenue * profile.capexRatio * (1 + random.normal() * 0.08))
      const startShares = shares
      shares = Math.round(shares * (1 + profile.sharesDriftPerQuarter + random.normal() * 0.0008))
      const weightedBasicShares = Math.round((startShares + shares) / 2)
      // Losses make dilutive securities anti-dilutive: diluted equals basic then.
      const weightedDilutedShares = netIncome > 0 ? Math.round(weightedBasicShares * 1.011) : weightedBasicShares
      const dividendsPaid = dividend === null ? 0 : thousands(dividend.times(shares).toNumber())
      const buybacks = profile.sharesDriftPerQuarter < 0 ? thousands(Math.max(0, netIncome) * 0.35) : 0
      const stockCompensation = profile.sharesDriftPerQuarter > 0 ? thousands(revenue * 0.09) : 0
      equity = thousands(equity + netIncome - dividendsPaid - buybacks + stockCompensation)
      cash = thousands(Math.max(cash * 0.2, cash + operatingCashFlow - capex - dividendsPaid - buybacks))
      const liabilities = thousands(debt + revenue * 1.3 * (1 + random.normal() * 0.02))
      quarters.push({
        fiscalYear: year,
        fiscalQuarter: q,
        start: quarterStart(profile, year, q),
        end: quarterEnd(profile, year, q),
        revenue,
        costOfRevenue,
        operatingIncome,
        depreciationAmortization,
        interestExpense,
        incomeTax,
        netIncome,
        operatingCashFlow,
        capex,
        dividendsPaid,
        dividendPerShare: dividend === null ? null : dividend.toFixed(2),
        weightedBasicShares,
        weightedDilutedShares,
        sharesOutstanding: shares,
        cash,
        longTermDebt: thousands(debt),
        liabilities,
        equity,
        assets: liabilities + equity
      })
    }
  }
  return quarters
}

/** Earnings per share rounded half-up to cents, as a decimal string (`"1.2"`, `"-0.35"`). */
export const perShare = (amount: number, shares: number): string =>
  new Decimal(amount).div(shares).toDecimalPlaces(2, Decimal.ROUND_HALF_UP).toFixed()
