/**
 * The simulated listed companies. Every name is invented, and every CIK is in the 999xxxx range, far above any
 * CIK EDGAR has assigned (about 2.1 million by 2026): a simulated company can never be mistaken for a filer.
 * Each profile shapes the generated filings: size, growth, margins, seasonality, capital returns, and the events
 * that exercise the plane (a restatement, a stock split, losses).
 */

export interface CompanyProfile {
  readonly cik: string
  readonly name: string
  readonly ticker: string
  readonly exchange: "Nasdaq" | "NYSE" | "NYSE American"
  readonly sic: string
  readonly sicDescription: string
  /** Fiscal year end, MMDD (a month's last day); fiscal quarters end on the last days of every third month before it. */
  readonly fiscalYearEnd: "1231" | "0930" | "0630" | "0331" | "0131"
  /** 9-character CUSIP of the common stock (check digit valid). */
  readonly cusip: string
  readonly stateOfIncorporation: string
  /** The revenue concept the company tags: filers differ, and the plane must map both. */
  readonly revenueConcept: "Revenues" | "RevenueFromContractWithCustomerExcludingAssessedTax"
  /** Annual revenue of the first generated fiscal year, US dollars. */
  readonly baseRevenueUsd: number
  /** Mean annual revenue growth (0.08 = 8 %). */
  readonly growth: number
  /** Share of annual revenue per fiscal quarter (sums to 1). */
  readonly seasonality: readonly [number, number, number, number]
  readonly grossMargin: number
  /** Operating margin; negative for a loss-making company. */
  readonly operatingMargin: number
  /** Depreciation and amortization as a share of revenue. */
  readonly dnaRatio: number
  /** Capital expenditure as a share of revenue. */
  readonly capexRatio: number
  readonly taxRate: number
  /** Basic shares outstanding at the start. */
  readonly baseShares: number
  /** Quarterly change of the share count (negative: buybacks; positive: dilution). */
  readonly sharesDriftPerQuarter: number
  /** Quarterly dividend per share in the first year, or null for no dividend; raised each fiscal year. */
  readonly dividendPerShare: string | null
  readonly dividendRaisePerYear: string
  readonly longTermDebtUsd: number
  readonly cashUsd: number
  /** Target price-earnings (or price-sales when loss-making) multiple the price path starts from. */
  readonly startMultiple: number
  /** Daily volatility of the price path. */
  readonly dailyVolatility: number
  /** Restates its annual figures of one fiscal year (counted back from the last complete one). */
  readonly restatesYearsBack: number | null
  /** Splits its stock `ratio`-for-1 in the fiscal year `yearsBack` before the last complete one. */
  readonly split: { readonly ratio: number; readonly yearsBack: number } | null
  /**
   * The generated universe's shapes (absent on the hand-made companies, which keep the defaults): fiscal years of
   * filings before `asOf`'s year (default 5), days of daily bars (default: from the first fiscal year; 0 for a
   * company without a price feed, the `equity` tier), days of Form 4 history (default 730), the first of the
   * insiders' CIKs (default 9990100 + 10 x the company's index + 1), and further share classes (each its own ticker
   * and CUSIP, the `tickers` of one company).
   */
  readonly historyYears?: number
  readonly priceDays?: number
  readonly insiderDays?: number
  readonly insiderCikBase?: number
  readonly otherClasses?: ReadonlyArray<{ readonly ticker: string; readonly cusip: string; readonly title: string }>
  readonly category?: string
}

/** CUSIP check digit (the "modulus 10 double add double" rule). */
export const cusipCheckDigit = (base8: string): string => {
  let sum = 0
  for (let i = 0; i < 8; i++) {
    const c = base8.charAt(i)
    let v = /\d/.test(c) ? Number(c) : c.charCodeAt(0) - 55
    if (i % 2 === 1) v *= 2
    sum += Math.floor(v / 10) + (v % 10)
  }
  return String((10 - (sum % 10)) % 10)
}

export const cusip = (issuer6: string): string => `${issuer6}10${cusipCheckDigit(`${issuer6}10`)}`

export const SimulatedCompanies: ReadonlyArray<CompanyProfile> = [
  {
    cik: "9990001",
    name: "Aldermoor Robotics Inc.",
    ticker: "ALDR",
    exchange: "Nasdaq",
    sic: "3569",
    sicDescription: "General Industrial Machinery & Equipment, NEC",
    fiscalYearEnd: "1231",
    cusip: cusip("99A001"),
    stateOfIncorporation: "DE",
    revenueConcept: "RevenueFromContractWithCustomerExcludingAssessedTax",
    baseRevenueUsd: 4_200_000_000,
    growth: 0.14,
    seasonality: [0.23, 0.24, 0.25, 0.28],
    grossMargin: 0.46,
    operatingMargin: 0.17,
    dnaRatio: 0.05,
    capexRatio: 0.07,
    taxRate: 0.19,
    baseShares: 212_000_000,
    sharesDriftPerQuarter: 0.002,
    dividendPerShare: null,
    dividendRaisePerYear: "0",
    longTermDebtUsd: 1_100_000_000,
    cashUsd: 900_000_000,
    startMultiple: 28,
    dailyVolatility: 0.021,
    restatesYearsBack: null,
    split: { ratio: 3, yearsBack: 0 }
  },
  {
    cik: "9990002",
    name: "Brightwater Provisions Corp.",
    ticker: "BWPC",
    exchange: "NYSE",
    sic: "2000",
    sicDescription: "Food and Kindred Products",
    fiscalYearEnd: "0930",
    cusip: cusip("99B002"),
    stateOfIncorporation: "OH",
    revenueConcept: "Revenues",
    baseRevenueUsd: 11_800_000_000,
    growth: 0.04,
    seasonality: [0.27, 0.24, 0.24, 0.25],
    grossMargin: 0.33,
    operatingMargin: 0.12,
    dnaRatio: 0.035,
    capexRatio: 0.04,
    taxRate: 0.23,
    baseShares: 410_000_000,
    sharesDriftPerQuarter: -0.004,
    dividendPerShare: "0.41",
    dividendRaisePerYear: "0.02",
    longTermDebtUsd: 5_400_000_000,
    cashUsd: 1_300_000_000,
    startMultiple: 19,
    dailyVolatility: 0.011,
    restatesYearsBack: 1,
    split: null
  },
  {
    cik: "9990003",
    name: "Cobalt Lantern Software Inc.",
    ticker: "CLSW",
    exchange: "Nasdaq",
    sic: "7372",
    sicDescription: "Services-Prepackaged Software",
    fiscalYearEnd: "1231",
    cusip: cusip("99C003"),
    stateOfIncorporation: "DE",
    revenueConcept: "RevenueFromContractWithCustomerExcludingAssessedTax",
    baseRevenueUsd: 640_000_000,
    growth: 0.27,
    seasonality: [0.23, 0.245, 0.255, 0.27],
    grossMargin: 0.74,
    operatingMargin: -0.11,
    dnaRatio: 0.04,
    capexRatio: 0.03,
    taxRate: 0,
    baseShares: 148_000_000,
    sharesDriftPerQuarter: 0.009,
    dividendPerShare: null,
    dividendRaisePerYear: "0",
    longTermDebtUsd: 600_000_000,
    cashUsd: 1_450_000_000,
    startMultiple: 9,
    dailyVolatility: 0.032,
    restatesYearsBack: null,
    split: null
  },
  {
    cik: "9990004",
    name: "Dunmore Freight Lines Inc.",
    ticker: "DMFL",
    exchange: "NYSE",
    sic: "4213",
    sicDescription: "Trucking (No Local)",
    fiscalYearEnd: "1231",
    cusip: cusip("99D004"),
    stateOfIncorporation: "TN",
    revenueConcept: "Revenues",
    baseRevenueUsd: 6_300_000_000,
    growth: 0.05,
    seasonality: [0.24, 0.255, 0.255, 0.25],
    grossMargin: 0.21,
    operatingMargin: 0.085,
    dnaRatio: 0.08,
    capexRatio: 0.11,
    taxRate: 0.24,
    baseShares: 96_000_000,
    sharesDriftPerQuarter: -0.003,
    dividendPerShare: "0.27",
    dividendRaisePerYear: "0.03",
    longTermDebtUsd: 2_900_000_000,
    cashUsd: 350_000_000,
    startMultiple: 15,
    dailyVolatility: 0.017,
    restatesYearsBack: null,
    split: null
  },
  {
    cik: "9990005",
    name: "Emberfield Energy Holdings Corp.",
    ticker: "EMBF",
    exchange: "NYSE",
    sic: "1311",
    sicDescription: "Crude Petroleum & Natural Gas",
    fiscalYearEnd: "1231",
    cusip: cusip("99E005"),
    stateOfIncorporation: "TX",
    revenueConcept: "Revenues",
    baseRevenueUsd: 8_700_000_000,
    growth: 0.02,
    seasonality: [0.26, 0.24, 0.24, 0.26],
    grossMargin: 0.38,
    operatingMargin: 0.22,
    dnaRatio: 0.16,
    capexRatio: 0.21,
    taxRate: 0.21,
    baseShares: 305_000_000,
    sharesDriftPerQuarter: -0.006,
    dividendPerShare: "0.55",
    dividendRaisePerYear: "0.05",
    longTermDebtUsd: 4_100_000_000,
    cashUsd: 2_200_000_000,
    startMultiple: 11,
    dailyVolatility: 0.024,
    restatesYearsBack: null,
    split: null
  }
]

/** The simulated institutional managers filing 13F-HR reports on the simulated companies. */
export const SimulatedManagers: ReadonlyArray<{ readonly cik: string; readonly name: string }> = [
  { cik: "9990901", name: "Harrowgate Capital Management LLC" },
  { cik: "9990902", name: "Osprey Ridge Advisors LP" },
  { cik: "9990903", name: "Tamsin Bay Asset Management Co." }
]
