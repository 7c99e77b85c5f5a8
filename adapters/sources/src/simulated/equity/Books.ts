/**
 * What a simulated company files, and the XBRL facts its periodic reports carry, the way EDGAR's companyfacts
 * lists them: each 10-Q reports its quarter and the same quarter a year earlier, year-to-date figures from Q2 on
 * (cash flows only year-to-date, as cash-flow statements are), balances at the quarter end and the prior year
 * end; each 10-K reports three fiscal years of flows and two year-end balances. There is no Q4 10-Q: Q4 exists
 * only inside the 10-K's fiscal year and must be derived (FY minus nine months).
 *
 * Events:
 * - Restatement (a profile's `restatesYearsBack`): Q4 revenue of one fiscal year was overstated in its 10-K; the
 *   next 10-K reports that year corrected (revenue, operating income, net income, EPS differ between the two
 *   filings), after an 8-K with item 4.02 (non-reliance on previously issued financial statements).
 * - Stock split (a profile's `split`): announced by an 8-K (items 8.01, 9.01); recorded as the us-gaap fact
 *   `StockholdersEquityNoteStockSplitConversionRatio1` (unit `pure`, an instant at the split date), as Apple
 *   records its 2020 split; every filing after the split reports share counts and per-share figures of all
 *   periods split-adjusted, so earlier periods' EPS change between filings, as in real filings.
 * - Dividends: us-gaap `CommonStockDividendsPerShareDeclared` (USD/shares), per quarter (three-month periods) in
 *   10-Qs and, in 10-Ks, per fiscal year plus the fourth quarter (as equity notes disclose it; the only three-month
 *   Q4 fact), and `PaymentsOfDividends` (USD) in the cash-flow statement.
 */
import { Decimal } from "decimal.js"
import { addDays, isWeekday, onOrAfterWeekday } from "./Calendar.ts"
import type { CompanyProfile } from "./Companies.ts"
import { generateQuarters, perShare, type Quarter, quarterEnd } from "./Financials.ts"

/** A filing of the company, as the submissions feed lists it. */
export interface PlannedFiling {
  readonly accession: string
  readonly form: string
  readonly filingDate: string
  readonly reportDate: string | null
  /** New York wall-clock acceptance time written with a `Z`, exactly as the submissions feed does. */
  readonly acceptanceDateTime: string
  readonly items: string
  readonly primaryDocument: string
  readonly primaryDocDescription: string
  readonly isXbrl: boolean
  readonly size: number
  /** Periodic reports: the fiscal year and period the filing covers. */
  readonly fiscalYear: number | null
  readonly fiscalPeriod: "Q1" | "Q2" | "Q3" | "FY" | null
}

/** A companyfacts row before rendering; `val` is the JSON number text. */
export interface RawFact {
  readonly taxonomy: "us-gaap" | "dei"
  readonly concept: string
  readonly unit: string
  readonly start: string | null
  readonly end: string
  readonly val: string
  readonly accn: string
  readonly fy: number
  readonly fp: string
  readonly form: string
  readonly filed: string
  frame?: string
}

/** Hands out accession numbers `<filer id>-<yy>-<sequence>` per filer and year. */
export class AccessionCounter {
  private readonly next = new Map<string, number>()
  take(filerCik: string, date: string): string {
    const key = `${filerCik}|${date.slice(2, 4)}`
    const sequence = (this.next.get(key) ?? 0) + 1
    this.next.set(key, sequence)
    return `${filerCik.padStart(10, "0")}-${date.slice(2, 4)}-${String(sequence).padStart(6, "0")}`
  }
}

/** The previous weekday strictly before `date`. */
const previousWeekday = (date: string): string => {
  let day = addDays(date, -1)
  while (!isWeekday(day)) day = addDays(day, -1)
  return day
}

const acceptance = (date: string, time: string): string => `${date}T${time}.000Z`

export interface CompanyBooks {
  readonly profile: CompanyProfile
  readonly quarters: ReadonlyArray<Quarter>
  /** Every filing, unordered. */
  readonly filings: ReadonlyArray<PlannedFiling>
  readonly facts: ReadonlyArray<RawFact>
  readonly split: { readonly date: string; readonly ratio: number } | null
  /** The fiscal year whose annual figures were restated, and the accession of the restating 10-K. */
  readonly restatement: { readonly fiscalYear: number; readonly restatedBy: string } | null
  /** Last fiscal year with a 10-K filed by `asOf`. */
  readonly lastCompleteFiscalYear: number
}

const labels: Record<string, readonly [string, string]> = {
  Revenues: ["Revenues", "Amount of revenue recognized from goods sold, services rendered, and other activities."],
  RevenueFromContractWithCustomerExcludingAssessedTax: [
    "Revenue from Contract with Customer, Excluding Assessed Tax",
    "Amount, excluding tax collected from customer, of revenue from satisfaction of performance obligation."
  ],
  CostOfRevenue: ["Cost of Revenue", "Amount of cost of goods sold and services rendered."],
  GrossProfit: ["Gross Profit", "Aggregate revenue less cost of goods and services sold."],
  OperatingIncomeLoss: [
    "Operating Income (Loss)",
    "Net result for the period of deducting operating expenses from operating revenues."
  ],
  InterestExpense: ["Interest Expense", "Amount of the cost of borrowed funds accounted for as interest expense."],
  IncomeLossFromContinuingOperationsBeforeIncomeTaxesExtraordinaryItemsNoncontrollingInterest: [
    "Income (Loss) from Continuing Operations before Income Taxes, Noncontrolling Interest",
    "Amount of income (loss) from continuing operations, before deduction of income tax expense (benefit)."
  ],
  WeightedAverageNumberOfSharesOutstandingBasic: [
    "Weighted Average Number of Shares Outstanding, Basic",
    "Number of weighted average shares outstanding, as adjusted for splits."
  ],
  IncomeTaxExpenseBenefit: [
    "Income Tax Expense (Benefit)",
    "Amount of current and deferred income tax expense (benefit)."
  ],
  NetIncomeLoss: [
    "Net Income (Loss) Attributable to Parent",
    "The portion of profit or loss for the period attributable to the parent."
  ],
  EarningsPerShareBasic: ["Earnings Per Share, Basic", "Net income (loss) per outstanding share."],
  EarningsPerShareDiluted: [
    "Earnings Per Share, Diluted",
    "Net income (loss) per share, including dilutive securities."
  ],
  WeightedAverageNumberOfDilutedSharesOutstanding: [
    "Weighted Average Number of Shares Outstanding, Diluted",
    "Weighted average shares and dilutive potential shares outstanding."
  ],
  DepreciationDepletionAndAmortization: [
    "Depreciation, Depletion and Amortization",
    "Noncash expense of allocating the cost of assets over their useful lives."
  ],
  NetCashProvidedByUsedInOperatingActivities: [
    "Net Cash Provided by (Used in) Operating Activities",
    "Net cash from operating activities."
  ],
  PaymentsToAcquirePropertyPlantAndEquipment: [
    "Payments to Acquire Property, Plant, and Equipment",
    "Cash outflow for purchases of long-lived physical assets."
  ],
  PaymentsOfDividends: ["Payments of Dividends", "Cash outflow in the form of capital distributions and dividends."],
  CommonStockDividendsPerShareDeclared: [
    "Common Stock, Dividends, Per Share, Declared",
    "Aggregate dividends declared during the period for each share of common stock outstanding."
  ],
  Assets: ["Assets", "Sum of the carrying amounts as of the balance sheet date of all assets."],
  Liabilities: ["Liabilities", "Sum of the carrying amounts as of the balance sheet date of all liabilities."],
  StockholdersEquity: [
    "Stockholders' Equity Attributable to Parent",
    "Total of all stockholders' equity (deficit) items."
  ],
  CashAndCashEquivalentsAtCarryingValue: [
    "Cash and Cash Equivalents, at Carrying Value",
    "Amount of currency on hand and demand deposits."
  ],
  LongTermDebt: ["Long-Term Debt", "Amount, after unamortized discount and debt issuance costs, of long-term debt."],
  StockholdersEquityNoteStockSplitConversionRatio1: [
    "Stockholders' Equity Note, Stock Split, Conversion Ratio",
    "Ratio applied to the conversion of stock split."
  ],
  EntityCommonStockSharesOutstanding: [
    "Entity Common Stock, Shares Outstanding",
    "Number of shares outstanding as stated on the cover of the report."
  ]
}

/** Label and description of a concept, for the rendered companyfacts. */
export const conceptLabel = (concept: string): readonly [string, string] => labels[concept] ?? [concept, concept]

/** Plans a company's filings and facts up to `asOf` (inclusive). */
export const companyBooks = (input: {
  readonly seed: number
  readonly profile: CompanyProfile
  readonly firstFiscalYear: number
  readonly asOf: string
  readonly accessions: AccessionCounter
}): CompanyBooks => {
  const { profile, asOf, firstFiscalYear, accessions } = input
  const lastYear = Number(asOf.slice(0, 4)) + 1
  const quarters = generateQuarters(input.seed, profile, firstFiscalYear - 2, lastYear)
  const quarterOf = (fiscalYear: number, fiscalQuarter: number): Quarter =>
    quarters.find((q) => q.fiscalYear === fiscalYear && q.fiscalQuarter === fiscalQuarter)!

  // The periodic calendar: 10-Q 38 days after Q1..Q3, 10-K 58 days after the year end, each announced the
  // weekday before by an earnings 8-K; the proxy statement 40 days after the 10-K.
  type Periodic = { fiscalYear: number; period: "Q1" | "Q2" | "Q3" | "FY"; end: string; filed: string }
  const periodic: Array<Periodic> = []
  for (let year = firstFiscalYear; year <= lastYear; year++) {
    for (let q = 1; q <= 4; q++) {
      const end = quarterEnd(profile, year, q)
      const filed = onOrAfterWeekday(addDays(end, q === 4 ? 58 : 38))
      if (filed <= asOf)
        periodic.push({ fiscalYear: year, period: q === 4 ? "FY" : (`Q${q}` as "Q1" | "Q2" | "Q3"), end, filed })
    }
  }
  const lastCompleteFiscalYear = Math.max(...periodic.filter((p) => p.period === "FY").map((p) => p.fiscalYear))

  const split =
    profile.split === null
      ? null
      : {
          date: onOrAfterWeekday(
            addDays(quarterEnd(profile, lastCompleteFiscalYear - profile.split.yearsBack, 3), -45)
          ),
          ratio: profile.split.ratio
        }
  /** Share counts and per-share figures in a filing are split-adjusted once the split has happened. */
  const splitFactor = (filed: string): number => (split !== null && filed >= split.date ? split.ratio : 1)

  const restatedYear = profile.restatesYearsBack === null ? null : lastCompleteFiscalYear - profile.restatesYearsBack
  const restatingFiling =
    restatedYear === null ? undefined : periodic.find((p) => p.period === "FY" && p.fiscalYear === restatedYear + 1)
  const restatingFiled = restatingFiling?.filed ?? null
  const overstatement = (q: Quarter, filed: string) => {
    const original =
      restatedYear !== null &&
      q.fiscalYear === restatedYear &&
      q.fiscalQuarter === 4 &&
      (restatingFiled === null || filed < restatingFiled)
    if (!original) return { revenue: 0, netIncome: 0 }
    const revenue = Math.round((q.revenue * 0.018) / 1000) * 1000
    return { revenue, netIncome: Math.round((revenue * (1 - profile.taxRate)) / 1000) * 1000 }
  }

  const filings: Array<PlannedFiling> = []
  const facts: Array<RawFact> = []
  const file = (filing: Omit<PlannedFiling, "accession" | "size"> & { readonly size?: number }): string => {
    const accession = accessions.take(profile.cik, filing.filingDate)
    filings.push({ ...filing, accession, size: filing.size ?? 20_000 + ((filings.length * 7919) % 90_000) })
    return accession
  }
  const tickerLower = profile.ticker.toLowerCase()

  // Flow and balance figures for a span of quarters as a given filing reports them.
  const sum = (span: ReadonlyArray<Quarter>, pick: (q: Quarter) => number) =>
    span.reduce((total, q) => total + pick(q), 0)
  const average = (span: ReadonlyArray<Quarter>, pick: (q: Quarter) => number) =>
    Math.round(sum(span, pick) / span.length)
  const flows = (span: ReadonlyArray<Quarter>, filed: string) => {
    const revenue = sum(span, (q) => q.revenue + overstatement(q, filed).revenue)
    const netIncome = sum(span, (q) => q.netIncome + overstatement(q, filed).netIncome)
    const factor = splitFactor(filed)
    const basic = average(span, (q) => q.weightedBasicShares) * factor
    const diluted = average(span, (q) => q.weightedDilutedShares) * factor
    const costOfRevenue = sum(span, (q) => q.costOfRevenue)
    const income: Array<readonly [string, string, string]> = [
      [profile.revenueConcept, "USD", String(revenue)],
      ["CostOfRevenue", "USD", String(costOfRevenue)],
      ["GrossProfit", "USD", String(revenue - costOfRevenue)],
      ["OperatingIncomeLoss", "USD", String(sum(span, (q) => q.operatingIncome + overstatement(q, filed).revenue))],
      ["InterestExpense", "USD", String(sum(span, (q) => q.interestExpense))],
      [
        "IncomeLossFromContinuingOperationsBeforeIncomeTaxesExtraordinaryItemsNoncontrollingInterest",
        "USD",
        String(sum(span, (q) => q.operatingIncome - q.interestExpense + overstatement(q, filed).revenue))
      ],
      [
        "IncomeTaxExpenseBenefit",
        "USD",
        String(sum(span, (q) => q.incomeTax + overstatement(q, filed).revenue - overstatement(q, filed).netIncome))
      ],
      ["NetIncomeLoss", "USD", String(netIncome)],
      ["EarningsPerShareBasic", "USD/shares", perShare(netIncome, basic)],
      ["EarningsPerShareDiluted", "USD/shares", perShare(netIncome, diluted)],
      ["WeightedAverageNumberOfSharesOutstandingBasic", "shares", String(basic)],
      ["WeightedAverageNumberOfDilutedSharesOutstanding", "shares", String(diluted)]
    ]
    const cash: Array<readonly [string, string, string]> = [
      ["DepreciationDepletionAndAmortization", "USD", String(sum(span, (q) => q.depreciationAmortization))],
      ["NetCashProvidedByUsedInOperatingActivities", "USD", String(sum(span, (q) => q.operatingCashFlow))],
      ["PaymentsToAcquirePropertyPlantAndEquipment", "USD", String(sum(span, (q) => q.capex))]
    ]
    if (profile.dividendPerShare !== null)
      cash.push(["PaymentsOfDividends", "USD", String(sum(span, (q) => q.dividendsPaid))])
    const dividends: Array<readonly [string, string, string]> =
      profile.dividendPerShare === null
        ? []
        : [
            [
              "CommonStockDividendsPerShareDeclared",
              "USD/shares",
              span
                .reduce((total, q) => total.plus(q.dividendPerShare ?? "0"), new Decimal(0))
                .div(factor)
                .toDecimalPlaces(4, Decimal.ROUND_HALF_UP)
                .toFixed()
            ]
          ]
    return { income, cash, dividends }
  }
  const balances = (q: Quarter): Array<readonly [string, string, string]> => [
    ["Assets", "USD", String(q.assets)],
    ["Liabilities", "USD", String(q.liabilities)],
    ["StockholdersEquity", "USD", String(q.equity)],
    ["CashAndCashEquivalentsAtCarryingValue", "USD", String(q.cash)],
    ["LongTermDebt", "USD", String(q.longTermDebt)]
  ]

  for (const report of periodic) {
    const isAnnual = report.period === "FY"
    const form = isAnnual ? "10-K" : "10-Q"
    // The earnings release the weekday before, after the close.
    const releaseDay = previousWeekday(report.filed)
    file({
      form: "8-K",
      filingDate: releaseDay,
      reportDate: releaseDay,
      acceptanceDateTime: acceptance(releaseDay, "16:30:12"),
      items: "2.02,9.01",
      primaryDocument: `${tickerLower}-${releaseDay.replaceAll("-", "")}.htm`,
      primaryDocDescription: "8-K",
      isXbrl: true,
      fiscalYear: null,
      fiscalPeriod: null
    })
    if (restatingFiling === report) {
      const day = onOrAfterWeekday(addDays(report.filed, -20))
      file({
        form: "8-K",
        filingDate: day,
        reportDate: day,
        acceptanceDateTime: acceptance(day, "17:02:44"),
        items: "4.02",
        primaryDocument: `${tickerLower}-${day.replaceAll("-", "")}_402.htm`,
        primaryDocDescription: "8-K",
        isXbrl: true,
        fiscalYear: null,
        fiscalPeriod: null
      })
    }
    const accession = file({
      form,
      filingDate: report.filed,
      reportDate: report.end,
      acceptanceDateTime: acceptance(report.filed, "16:05:31"),
      items: "",
      primaryDocument: `${tickerLower}-${report.end.replaceAll("-", "")}.htm`,
      primaryDocDescription: form,
      isXbrl: true,
      fiscalYear: report.fiscalYear,
      fiscalPeriod: report.period
    })
    if (isAnnual) {
      const proxyDay = onOrAfterWeekday(addDays(report.filed, 40))
      if (proxyDay <= asOf) {
        file({
          form: "DEF 14A",
          filingDate: proxyDay,
          reportDate: onOrAfterWeekday(addDays(proxyDay, 42)),
          acceptanceDateTime: acceptance(proxyDay, "08:15:03"),
          items: "",
          primaryDocument: `${tickerLower}-def14a_${report.fiscalYear + 1}.htm`,
          primaryDocDescription: "DEF 14A",
          isXbrl: true,
          fiscalYear: null,
          fiscalPeriod: null
        })
      }
    }

    const emit = (
      taxonomy: RawFact["taxonomy"],
      row: readonly [string, string, string],
      start: string | null,
      end: string
    ) =>
      facts.push({
        taxonomy,
        concept: row[0],
        unit: row[1],
        start,
        end,
        val: row[2],
        accn: accession,
        fy: report.fiscalYear,
        fp: report.period,
        form,
        filed: report.filed
      })
    const emitSpan = (span: ReadonlyArray<Quarter>, kinds: ReadonlyArray<"income" | "cash" | "dividends">) => {
      const figures = flows(span, report.filed)
      for (const kind of kinds)
        for (const row of figures[kind]) emit("us-gaap", row, span[0]!.start, span[span.length - 1]!.end)
    }
    const year = report.fiscalYear
    const yearQuarters = (fiscalYear: number, upTo: number) =>
      [1, 2, 3, 4].filter((q) => q <= upTo).map((q) => quarterOf(fiscalYear, q))
    if (isAnnual) {
      for (const fiscalYear of [year, year - 1, year - 2]) {
        emitSpan(yearQuarters(fiscalYear, 4), ["income", "cash", "dividends"])
      }
      // The equity note discloses the fourth quarter's dividend declared per share (the only three-month Q4 fact).
      emitSpan([quarterOf(year, 4)], ["dividends"])
      for (const yearEnd of [quarterOf(year, 4), quarterOf(year - 1, 4)]) {
        for (const row of balances(yearEnd)) emit("us-gaap", row, null, yearEnd.end)
      }
    } else {
      const q = Number(report.period.slice(1))
      for (const fiscalYear of [year, year - 1]) {
        emitSpan([quarterOf(fiscalYear, q)], q === 1 ? ["income", "cash", "dividends"] : ["income", "dividends"])
        if (q > 1) emitSpan(yearQuarters(fiscalYear, q), ["income", "cash"])
      }
      for (const row of balances(quarterOf(year, q))) emit("us-gaap", row, null, quarterOf(year, q).end)
      for (const row of balances(quarterOf(year - 1, 4))) emit("us-gaap", row, null, quarterOf(year - 1, 4).end)
    }
    // The cover page: shares outstanding a few days before filing (the latest quarter's count, adjusted).
    const latest = quarterOf(year, report.period === "FY" ? 4 : Number(report.period.slice(1)))
    emit(
      "dei",
      ["EntityCommonStockSharesOutstanding", "shares", String(latest.sharesOutstanding * splitFactor(report.filed))],
      null,
      addDays(report.filed, -9)
    )
    if (split !== null && report.filed >= split.date && split.date >= quarterOf(year, 1).start) {
      emit(
        "us-gaap",
        ["StockholdersEquityNoteStockSplitConversionRatio1", "pure", String(split.ratio)],
        null,
        split.date
      )
    }
  }

  if (split !== null) {
    const day = onOrAfterWeekday(addDays(split.date, -30))
    if (day <= asOf) {
      file({
        form: "8-K",
        filingDate: day,
        reportDate: day,
        acceptanceDateTime: acceptance(day, "16:31:50"),
        items: "8.01,9.01",
        primaryDocument: `${tickerLower}-${day.replaceAll("-", "")}_split.htm`,
        primaryDocDescription: "8-K",
        isXbrl: true,
        fiscalYear: null,
        fiscalPeriod: null
      })
    }
  }

  assignFrames(facts)
  return {
    profile,
    quarters,
    filings,
    facts,
    split,
    restatement:
      restatedYear === null || restatingFiling === undefined
        ? null
        : {
            fiscalYear: restatedYear,
            restatedBy: filings.find((f) => f.form === "10-K" && f.fiscalYear === restatedYear + 1)!.accession
          },
    lastCompleteFiscalYear
  }
}

/**
 * The SEC's calendar frames: for each concept, unit and period the most recently filed fact carries the frame
 * (`CY2024` for a year, `CY2024Q3` for a quarter, `CY2024Q3I` for an instant at a calendar quarter end).
 */
const assignFrames = (facts: Array<RawFact>): void => {
  const latest = new Map<string, RawFact>()
  for (const fact of facts) {
    const key = [fact.taxonomy, fact.concept, fact.unit, fact.start ?? "", fact.end].join("|")
    const current = latest.get(key)
    if (
      current === undefined ||
      fact.filed > current.filed ||
      (fact.filed === current.filed && fact.accn > current.accn)
    ) {
      latest.set(key, fact)
    }
  }
  for (const fact of latest.values()) {
    const year = Number(fact.end.slice(0, 4))
    const month = Number(fact.end.slice(5, 7))
    const quarterEndDay = /-(03-31|06-30|09-30|12-31)$/.test(fact.end)
    if (fact.start === null) {
      if (quarterEndDay) fact.frame = `CY${year}Q${Math.ceil(month / 3)}I`
      continue
    }
    const days = Math.round((Date.parse(fact.end) - Date.parse(fact.start)) / 86_400_000) + 1
    if (days >= 88 && days <= 93) fact.frame = `CY${year}Q${Math.ceil(month / 3)}`
    else if (days >= 360 && days <= 371) fact.frame = `CY${year}`
  }
}
