/**
 * Financial statements from XBRL facts: which us-gaap concept feeds which line item, which periods exist
 * (annual, quarter, year-to-date, classified by the length of their duration), which value is served for a
 * period (the latest periodic report that reported it; another form only where no periodic report did:
 * `citedOf`), whether an earlier filing reported something else (restated),
 * quarters derived from year-to-date figures (Q4 = FY - nine months, flagged), and trailing-twelve-month
 * figures. All arithmetic is exact (`Exact`, decimal.js); values stay the filed decimal strings.
 */
import { Exact, text } from "./Exact.ts"
import type { Fact } from "./Model.ts"

export type Statement = "income" | "balance" | "cash_flow"
export const Statements: ReadonlyArray<Statement> = ["income", "balance", "cash_flow"]
export type PeriodKind = "annual" | "quarter" | "ytd"

/** Units of line items as the API names them, and the SEC unit each is read from. */
export type LineUnit = "USD" | "USD_per_share" | "shares"
const SEC_UNIT: { readonly [U in LineUnit]: string } = { USD: "USD", USD_per_share: "USD/shares", shares: "shares" }

/**
 * One line item. A filed line takes, for each period, the first concept in `concepts` (priority order) that
 * has a value for that exact period; a derived line (`minus`) is computed from two other lines of the same
 * period.
 */
export interface LineItem {
  readonly key: string
  readonly statement: Statement
  readonly unit: LineUnit
  /** us-gaap concepts, most preferred first. Empty for derived lines. */
  readonly concepts: ReadonlyArray<string>
  /** Balance-sheet lines are instants, read at the period's end. */
  readonly instant: boolean
  /** `[a, b]`: this line is `a - b` of the same period. */
  readonly minus?: readonly [string, string]
  /**
   * Whether values of consecutive periods add up (flows in USD and per-share amounts). Share counts (weighted
   * averages) do not: no quarter is derived and no TTM computed for them.
   */
  readonly additive: boolean
}

const filed = (key: string, statement: Statement, unit: LineUnit, concepts: ReadonlyArray<string>): LineItem => ({
  key,
  statement,
  unit,
  concepts,
  instant: statement === "balance",
  additive: unit !== "shares"
})

/** The documented mapping from us-gaap concepts to line items, alternates in priority order. */
export const LineItems: ReadonlyArray<LineItem> = [
  filed("revenue", "income", "USD", [
    "Revenues",
    "RevenueFromContractWithCustomerExcludingAssessedTax",
    "RevenueFromContractWithCustomerIncludingAssessedTax",
    "SalesRevenueNet",
    "SalesRevenueGoodsNet",
    "SalesRevenueServicesNet"
  ]),
  filed("cost_of_revenue", "income", "USD", [
    "CostOfRevenue",
    "CostOfGoodsAndServicesSold",
    "CostOfGoodsSold",
    "CostOfGoodsAndServiceExcludingDepreciationDepletionAndAmortization"
  ]),
  filed("gross_profit", "income", "USD", ["GrossProfit"]),
  filed("research_and_development", "income", "USD", ["ResearchAndDevelopmentExpense"]),
  filed("selling_general_and_administrative", "income", "USD", ["SellingGeneralAndAdministrativeExpense"]),
  filed("operating_expenses", "income", "USD", ["OperatingExpenses"]),
  filed("operating_income", "income", "USD", ["OperatingIncomeLoss"]),
  filed("income_before_tax", "income", "USD", [
    "IncomeLossFromContinuingOperationsBeforeIncomeTaxesExtraordinaryItemsNoncontrollingInterest",
    "IncomeLossFromContinuingOperationsBeforeIncomeTaxesMinorityInterestAndIncomeLossFromEquityMethodInvestments",
    "IncomeLossFromContinuingOperationsBeforeIncomeTaxesDomestic"
  ]),
  filed("income_tax", "income", "USD", ["IncomeTaxExpenseBenefit"]),
  filed("net_income", "income", "USD", [
    "NetIncomeLoss",
    "ProfitLoss",
    "NetIncomeLossAvailableToCommonStockholdersBasic"
  ]),
  filed("eps_basic", "income", "USD_per_share", ["EarningsPerShareBasic", "EarningsPerShareBasicAndDiluted"]),
  filed("eps_diluted", "income", "USD_per_share", ["EarningsPerShareDiluted", "EarningsPerShareBasicAndDiluted"]),
  filed("dividends_declared_per_share", "income", "USD_per_share", [
    "CommonStockDividendsPerShareDeclared",
    "CommonStockDividendsPerShareCashPaid"
  ]),
  filed("weighted_shares_basic", "income", "shares", ["WeightedAverageNumberOfSharesOutstandingBasic"]),
  filed("weighted_shares_diluted", "income", "shares", ["WeightedAverageNumberOfDilutedSharesOutstanding"]),
  filed("cash_and_equivalents", "balance", "USD", [
    "CashAndCashEquivalentsAtCarryingValue",
    "CashCashEquivalentsRestrictedCashAndRestrictedCashEquivalents",
    "Cash"
  ]),
  filed("short_term_investments", "balance", "USD", [
    "MarketableSecuritiesCurrent",
    "ShortTermInvestments",
    "AvailableForSaleSecuritiesDebtSecuritiesCurrent"
  ]),
  filed("current_assets", "balance", "USD", ["AssetsCurrent"]),
  filed("total_assets", "balance", "USD", ["Assets"]),
  filed("current_liabilities", "balance", "USD", ["LiabilitiesCurrent"]),
  filed("total_liabilities", "balance", "USD", ["Liabilities"]),
  filed("short_term_debt", "balance", "USD", [
    "DebtCurrent",
    "LongTermDebtCurrent",
    "ShortTermBorrowings",
    "CommercialPaper"
  ]),
  filed("long_term_debt", "balance", "USD", ["LongTermDebtNoncurrent", "LongTermDebt"]),
  filed("stockholders_equity", "balance", "USD", [
    "StockholdersEquity",
    "StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest"
  ]),
  filed("operating_cash_flow", "cash_flow", "USD", [
    "NetCashProvidedByUsedInOperatingActivities",
    "NetCashProvidedByUsedInOperatingActivitiesContinuingOperations"
  ]),
  filed("capital_expenditure", "cash_flow", "USD", [
    "PaymentsToAcquirePropertyPlantAndEquipment",
    "PaymentsToAcquireProductiveAssets"
  ]),
  {
    key: "free_cash_flow",
    statement: "cash_flow",
    unit: "USD",
    concepts: [],
    instant: false,
    additive: true,
    minus: ["operating_cash_flow", "capital_expenditure"]
  },
  filed("depreciation_and_amortization", "cash_flow", "USD", [
    "DepreciationDepletionAndAmortization",
    "DepreciationAmortizationAndAccretionNet",
    "DepreciationAndAmortization",
    "Depreciation"
  ]),
  filed("share_based_compensation", "cash_flow", "USD", [
    "ShareBasedCompensation",
    "AllocatedShareBasedCompensationExpense"
  ]),
  filed("investing_cash_flow", "cash_flow", "USD", [
    "NetCashProvidedByUsedInInvestingActivities",
    "NetCashProvidedByUsedInInvestingActivitiesContinuingOperations"
  ]),
  filed("financing_cash_flow", "cash_flow", "USD", [
    "NetCashProvidedByUsedInFinancingActivities",
    "NetCashProvidedByUsedInFinancingActivitiesContinuingOperations"
  ]),
  filed("dividends_paid", "cash_flow", "USD", ["PaymentsOfDividends", "PaymentsOfDividendsCommonStock"]),
  filed("share_repurchases", "cash_flow", "USD", ["PaymentsForRepurchaseOfCommonStock"])
]

const lineByKey: ReadonlyMap<string, (typeof LineItems)[number]> = new Map(LineItems.map((l) => [l.key, l]))

/** The line item named `key` (throws on a name that is not in `LineItems`: a programming error). */
export const lineItem = (key: string): LineItem => {
  const l = lineByKey.get(key)
  if (l === undefined) throw new Error(`no line item ${key}`)
  return l
}

// ---------------------------------------------------------------------------------------------------------------
// Dates and period lengths
// ---------------------------------------------------------------------------------------------------------------

const DAY_MS = 86_400_000

/** Days since the epoch of a `YYYY-MM-DD` date. */
export const dayOf = (date: string): number => Math.round(Date.parse(`${date}T00:00:00Z`) / DAY_MS)
/** The `YYYY-MM-DD` date of a day number. */
export const dateOf = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10)

/** Length class of a duration by its days (inclusive): 3, 6, 9 or 12 months, or undefined. */
export const monthsOf = (start: string, end: string): 3 | 6 | 9 | 12 | undefined => {
  const days = dayOf(end) - dayOf(start) + 1
  if (days >= 80 && days <= 100) return 3
  if (days >= 170 && days <= 200) return 6
  if (days >= 260 && days <= 290) return 9
  if (days >= 350 && days <= 380) return 12
  return undefined
}

const kindOfMonths = (m: 3 | 6 | 9 | 12): PeriodKind => (m === 3 ? "quarter" : m === 12 ? "annual" : "ytd")

// ---------------------------------------------------------------------------------------------------------------
// Cells: one line in one period
// ---------------------------------------------------------------------------------------------------------------

/** What one filing reported for a line and period. */
export interface Reported {
  readonly value: string
  readonly concept: string
  readonly accession: string
  readonly form: string
  readonly filed: string
}

/** A line's value in one period, with where it came from. */
export interface Cell {
  /** The served value: the cited filing's (`citedOf`; filed) or the exact result (derived). */
  readonly value: string
  /** Concepts the value was taken or derived from. */
  readonly concepts: ReadonlyArray<string>
  /** The filing whose value is served (`citedOf`); for a derived value, the one cited among its inputs'. */
  readonly accession: string
  readonly form: string
  readonly filed: string
  /** Every filing that reported this line and period, oldest first (derived cells: the inputs' reports). */
  readonly reported: ReadonlyArray<Reported>
  /** An earlier filing reported a different value than the one served (or an input of a derived value was). */
  readonly restated: boolean
  /** Computed from other figures (a quarter from year-to-date figures, or a `minus` line). */
  readonly derived: boolean
  /** The day the value could first be known: its first filing (derived: when the last input was first filed). */
  readonly knownOn: string
}

const newer = (a: { filed: string; accession: string }, b: { filed: string; accession: string }) =>
  a.filed !== b.filed ? a.filed > b.filed : a.accession > b.accession

const latestOf = <T extends { filed: string; accession: string }>(xs: ReadonlyArray<T>): T => {
  let best = xs[0] as T
  for (const x of xs) if (newer(x, best)) best = x
  return best
}

/**
 * The periodic reports, whose figures a period is cited from: annual and quarterly reports (10-K, 10-Q, their
 * transition and small-business forms 10-KT, 10-QT, 10-KSB, 10-QSB, 10-K405), the foreign issuers' annual
 * reports (20-F, 40-F), and the amendments of each (`/A`).
 */
export const isPeriodicForm = (form: string): boolean =>
  /^(10-K|10-Q|10-KT|10-QT|10-KSB|10-QSB|10-K405|20-F|40-F)(\/A)?$/.test(form.trim().toUpperCase())

/**
 * The filing a figure is cited from among those that reported it: the latest periodic report (a later one that
 * restates the period wins); only when no periodic report carries it, the latest other filing (a proxy
 * statement, 8-K, registration statement or prospectus), whose form the citation shows. A proxy statement's
 * pay-versus-performance table filed after a 10-K repeats its figures (as originally reported, even after a
 * restatement) and so never replaces it.
 */
export const citedOf = <T extends { filed: string; accession: string; form: string }>(xs: ReadonlyArray<T>): T => {
  const periodic = xs.filter((x) => isPeriodicForm(x.form))
  return latestOf(periodic.length > 0 ? periodic : xs)
}

const getOrInit = <K, V>(map: Map<K, V>, key: K, make: () => V): V => {
  const found = map.get(key)
  if (found !== undefined) return found
  const made = make()
  map.set(key, made)
  return made
}

const periodKey = (start: string | null, end: string) => `${start ?? ""}|${end}`

/** A period: a duration (start and end) or an instant (start null). */
export interface PeriodSpan {
  readonly start: string | null
  readonly end: string
}

/**
 * The facts of one company, indexed for statements. Only us-gaap facts in the unit a line expects are
 * considered. `asKnownOn` (a date) keeps only facts filed on or before it: the statements as known that day.
 */
export class FactBook {
  /** concept -> unit -> period key -> reports. */
  private readonly byConcept = new Map<string, Map<string, Map<string, Array<Reported>>>>()
  /** concept -> unit -> durations (start, end). */
  private readonly durations = new Map<string, Map<string, Array<PeriodSpan>>>()
  /** accession -> the latest duration end among its facts (the filing's own period). */
  private readonly ownEnd = new Map<string, string>()
  /** period key -> { fy, fp } of a filing whose own period it is. */
  private readonly ownLabel = new Map<string, { fy: number; fp: string }>()
  private readonly cellCache = new Map<string, Cell | null>()

  constructor(facts: ReadonlyArray<Fact>, options: { readonly asKnownOn?: string } = {}) {
    const known =
      options.asKnownOn === undefined ? facts : facts.filter((f) => f.filed <= (options.asKnownOn as string))
    for (const f of known) {
      if (f.taxonomy !== "us-gaap") continue
      const periods = getOrInit(
        getOrInit(this.byConcept, f.concept, () => new Map()),
        f.unit,
        () => new Map()
      )
      const key = periodKey(f.start, f.end)
      if (!periods.has(key) && f.start !== null) {
        const ds = getOrInit(this.durations, f.concept, () => new Map())
        getOrInit(ds, f.unit, (): Array<PeriodSpan> => []).push({ start: f.start, end: f.end })
      }
      getOrInit(periods, key, (): Array<Reported> => []).push({
        value: f.value,
        concept: f.concept,
        accession: f.accession,
        form: f.form,
        filed: f.filed
      })
      if (f.start !== null) {
        const own = this.ownEnd.get(f.accession)
        if (own === undefined || f.end > own) this.ownEnd.set(f.accession, f.end)
      }
    }
    for (const f of known) {
      if (f.taxonomy !== "us-gaap" || f.start === null || f.fy === null || f.fp === null) continue
      if (this.ownEnd.get(f.accession) !== f.end) continue
      const key = periodKey(f.start, f.end)
      if (!this.ownLabel.has(key)) this.ownLabel.set(key, { fy: f.fy, fp: f.fp })
    }
  }

  /** The filed value of a line for an exact period (first concept in priority order that has one). */
  filedCell(line: LineItem, span: PeriodSpan): Cell | null {
    const unit = SEC_UNIT[line.unit]
    const key = periodKey(line.instant ? null : span.start, span.end)
    for (const concept of line.concepts) {
      const reports = this.byConcept.get(concept)?.get(unit)?.get(key)
      if (reports === undefined || reports.length === 0) continue
      const ordered = [...reports].sort((a, b) => (newer(a, b) ? 1 : newer(b, a) ? -1 : 0))
      const served = citedOf(ordered)
      const servedValue = new Exact(served.value)
      return {
        value: served.value,
        concepts: [concept],
        accession: served.accession,
        form: served.form,
        filed: served.filed,
        reported: ordered,
        // Restated: a filing before the cited one reported another value (a later non-periodic filing that
        // repeats an older figure restates nothing).
        restated: ordered.some((r) => r !== served && !newer(r, served) && !new Exact(r.value).eq(servedValue)),
        derived: false,
        knownOn: ordered.reduce((m, r) => (r.filed < m ? r.filed : m), served.filed)
      }
    }
    return null
  }

  /**
   * A line's value for a period: filed, or for a derived line its formula. For a quarter with no filed
   * value, `quarterCell` derives it from year-to-date figures.
   */
  cell(line: LineItem, span: PeriodSpan): Cell | null {
    const cacheKey = `${line.key}|${periodKey(span.start, span.end)}`
    const hit = this.cellCache.get(cacheKey)
    if (hit !== undefined) return hit
    let out: Cell | null
    if (line.minus !== undefined) {
      const [a, b] = line.minus
      out = combine(this.cell(lineItem(a), span), this.cell(lineItem(b), span), (x, y) => x.minus(y))
    } else {
      out = this.filedCell(line, span)
      if (
        out === null &&
        line.additive &&
        !line.instant &&
        span.start !== null &&
        monthsOf(span.start, span.end) === 3
      ) {
        out = this.derivedQuarter(line, span)
      }
    }
    this.cellCache.set(cacheKey, out)
    return out
  }

  /**
   * A quarter nobody filed, from year-to-date figures of the same fiscal year: Q4 = FY - nine months,
   * Q3 = nine months - six months, Q2 = six months - Q1. The year-to-date periods must start on the same day
   * and the shorter one must end the day before the quarter starts.
   */
  private derivedQuarter(line: LineItem, span: PeriodSpan): Cell | null {
    const qStart = span.start as string
    const before = dateOf(dayOf(qStart) - 1)
    for (const longer of this.spansOf(line)) {
      if (longer.end !== span.end || longer.start === null) continue
      const months = monthsOf(longer.start, longer.end)
      if (months === undefined || months === 3) continue
      const shorter = { start: longer.start, end: before }
      if (monthsOf(shorter.start, shorter.end) !== months - 3) continue
      const a = this.filedCell(line, longer)
      const b = this.filedCell(line, shorter)
      if (a === null || b === null) continue
      return combine(a, b, (x, y) => x.minus(y))
    }
    return null
  }

  /** Durations reported for any of a line's concepts (for a derived line: its inputs'). */
  spansOf(line: LineItem): ReadonlyArray<PeriodSpan> {
    if (line.minus !== undefined) {
      const [a, b] = line.minus
      return dedupe([...this.spansOf(lineItem(a)), ...this.spansOf(lineItem(b))])
    }
    const unit = SEC_UNIT[line.unit]
    const out: Array<PeriodSpan> = []
    for (const c of line.concepts) out.push(...(this.durations.get(c)?.get(unit) ?? []))
    return dedupe(out)
  }

  /** Instants reported for a balance line's concepts. */
  private instantsOf(line: LineItem): ReadonlyArray<string> {
    const unit = SEC_UNIT[line.unit]
    const out = new Set<string>()
    for (const c of line.concepts) {
      for (const key of this.byConcept.get(c)?.get(unit)?.keys() ?? []) if (key.startsWith("|")) out.add(key.slice(1))
    }
    return [...out]
  }

  /**
   * The periods of a kind, newest first: durations of that length class reported for any duration line
   * (plus quarters derivable from year-to-date figures). With no duration at all (a balance-only filer), the
   * instants of balance lines serve as periods.
   */
  periods(kind: PeriodKind): ReadonlyArray<PeriodSpan> {
    const byEnd = new Map<string, { span: PeriodSpan; weight: number }>()
    const consider = (span: PeriodSpan, weight: number) => {
      const cur = byEnd.get(span.end)
      if (cur === undefined || weight > cur.weight) byEnd.set(span.end, { span, weight })
    }
    const counts = new Map<string, number>()
    for (const line of LineItems) {
      if (line.instant || line.minus !== undefined) continue
      for (const s of this.spansOf(line)) {
        const m = monthsOf(s.start as string, s.end)
        if (m === undefined || kindOfMonths(m) !== kind) continue
        const k = periodKey(s.start, s.end)
        counts.set(k, (counts.get(k) ?? 0) + 1)
      }
    }
    if (kind === "quarter") {
      // Quarters derivable from year-to-date figures (Q4 from FY and nine months, and so on).
      for (const line of LineItems) {
        if (line.instant || line.minus !== undefined) continue
        for (const s of this.spansOf(line)) {
          const m = monthsOf(s.start as string, s.end)
          if (m === undefined || m === 3) continue
          // The quarter starts the day after the shorter year-to-date period ends.
          for (const t of this.spansOf(line)) {
            if (t.start !== s.start || monthsOf(t.start as string, t.end) !== m - 3) continue
            const derived = { start: dateOf(dayOf(t.end) + 1), end: s.end }
            if (monthsOf(derived.start, derived.end) !== 3) continue
            const k = periodKey(derived.start, derived.end)
            counts.set(k, (counts.get(k) ?? 0) + 0.5)
          }
        }
      }
    }
    for (const [k, weight] of counts) {
      const [start, end] = k.split("|") as [string, string]
      consider({ start, end }, weight)
    }
    if (byEnd.size === 0) {
      // Instants only: classify by the fiscal period of the filing that reported them.
      for (const line of LineItems) {
        if (!line.instant) continue
        for (const end of this.instantsOf(line)) consider({ start: null, end }, 1)
      }
      if (kind === "ytd") return []
    }
    return [...byEnd.values()].map((v) => v.span).sort((a, b) => (a.end < b.end ? 1 : a.end > b.end ? -1 : 0))
  }

  /** A label such as `FY2025`, `Q1 FY2026`, `9M FY2025`, from the filing whose own period it is. */
  label(kind: PeriodKind, span: PeriodSpan): string {
    const own = this.ownLabel.get(periodKey(span.start, span.end))
    if (kind === "annual") return `FY${own?.fy ?? span.end.slice(0, 4)}`
    if (span.start === null) return `${span.end}`
    const months = monthsOf(span.start, span.end)
    if (kind === "ytd") return `${months}M FY${own?.fy ?? this.fiscalYearOf(span)}`
    if (own !== undefined && /^Q[1-4]$/.test(own.fp)) return `${own.fp} FY${own.fy}`
    if (own !== undefined && own.fp === "FY") return `Q4 FY${own.fy}`
    // A quarter reported only as a comparative or derived: place it in the fiscal year whose annual period
    // contains it.
    for (const a of this.periodsCached("annual")) {
      if (a.start === null || a.start > span.start || a.end < span.end) continue
      const n = Math.round((dayOf(span.end) - dayOf(a.start)) / 91.3)
      return `Q${Math.min(4, Math.max(1, n))} ${this.label("annual", a)}`
    }
    return `Q FY${this.fiscalYearOf(span)}`
  }

  private fiscalYearOf(span: PeriodSpan): string {
    for (const a of this.periodsCached("annual")) {
      if (a.start !== null && span.start !== null && a.start <= span.start && a.end >= span.end) {
        return this.label("annual", a).slice(2)
      }
    }
    return span.end.slice(0, 4)
  }

  private readonly periodCache = new Map<PeriodKind, ReadonlyArray<PeriodSpan>>()
  private periodsCached(kind: PeriodKind): ReadonlyArray<PeriodSpan> {
    return getOrInit(this.periodCache, kind, () => this.periods(kind))
  }

  // -------------------------------------------------------------------------------------------------------------
  // Trailing twelve months
  // -------------------------------------------------------------------------------------------------------------

  /**
   * The trailing-twelve-month value of a duration line for the twelve months ending `end`:
   * - `end` closes a fiscal year: the annual value;
   * - otherwise the four consecutive quarters ending at `end` (filed or derived), summed;
   * - otherwise FY + year-to-date - the prior year's same year-to-date (the year-to-date period starts the day
   *   after that FY ends; the prior one starts with the FY and ends about a year before `end`).
   */
  ttm(line: LineItem, end: string): Ttm | null {
    if (!line.additive || line.instant) return null
    if (line.minus !== undefined) {
      const [a, b] = line.minus
      const x = this.ttm(lineItem(a), end)
      const y = this.ttm(lineItem(b), end)
      if (x === null || y === null) return null
      return {
        value: x.value.minus(y.value),
        end,
        method: x.method === y.method ? x.method : "mixed",
        concepts: dedupeStrings([...x.concepts, ...y.concepts]),
        inputs: [...x.inputs, ...y.inputs],
        derived: true
      }
    }
    const spans = this.spansOf(line)
    const annual = spans.find((s) => s.end === end && monthsOf(s.start as string, s.end) === 12)
    if (annual !== undefined) {
      const c = this.cell(line, annual)
      if (c !== null) return single(c, end, "annual")
    }
    // Four quarters.
    const quarters: Array<Cell> = []
    let qEnd = end
    for (let i = 0; i < 4; i++) {
      const q = this.quarterEnding(line, qEnd)
      if (q === null) break
      quarters.push(q.cell)
      qEnd = dateOf(dayOf(q.span.start as string) - 1)
    }
    if (quarters.length === 4) {
      return {
        value: quarters.reduce((sum, c) => sum.plus(new Exact(c.value)), new Exact(0)),
        end,
        method: "four_quarters",
        concepts: dedupeStrings(quarters.flatMap((c) => c.concepts)),
        inputs: quarters,
        derived: quarters.some((c) => c.derived)
      }
    }
    // FY + YTD - prior YTD.
    for (const ytd of spans) {
      if (ytd.end !== end || ytd.start === null) continue
      const months = monthsOf(ytd.start, ytd.end)
      if (months === undefined || months === 12) continue
      const fyEnd = dateOf(dayOf(ytd.start) - 1)
      const fy = spans.find((s) => s.end === fyEnd && monthsOf(s.start as string, s.end) === 12)
      if (fy === undefined) continue
      const prior = spans.find(
        (s) =>
          s.start === fy.start &&
          monthsOf(s.start as string, s.end) === months &&
          Math.abs(dayOf(end) - dayOf(s.end) - 364) <= 10
      )
      if (prior === undefined) continue
      const [a, b, c] = [this.cell(line, fy), this.cell(line, ytd), this.cell(line, prior)]
      if (a === null || b === null || c === null) continue
      return {
        value: new Exact(a.value).plus(new Exact(b.value)).minus(new Exact(c.value)),
        end,
        method: "fy_plus_ytd",
        concepts: dedupeStrings([...a.concepts, ...b.concepts, ...c.concepts]),
        inputs: [a, b, c],
        derived: true
      }
    }
    return null
  }

  /** The quarter (filed or derived) of a line ending `end`, if any. */
  private quarterEnding(line: LineItem, end: string): { span: PeriodSpan; cell: Cell } | null {
    for (const q of this.periodsCached("quarter")) {
      if (q.end !== end) continue
      const c = this.cell(line, q)
      if (c !== null) return { span: q, cell: c }
    }
    return null
  }

  /** Ends of the line's durations (any length class), newest first. */
  endsOf(line: LineItem): ReadonlyArray<string> {
    const ends = new Set<string>()
    for (const s of this.spansOf(line)) if (monthsOf(s.start as string, s.end) !== undefined) ends.add(s.end)
    for (const q of this.periodsCached("quarter")) ends.add(q.end)
    return [...ends].sort().reverse()
  }

  /** The newest TTM of a line (at the latest period end for which one can be computed). */
  latestTtm(line: LineItem, notAfter?: string): Ttm | null {
    for (const end of this.endsOf(line)) {
      if (notAfter !== undefined && end > notAfter) continue
      const t = this.ttm(line, end)
      if (t !== null) return t
    }
    return null
  }

  /** The TTM a year before `end` (a period end 355 to 375 days earlier), for year-over-year growth. */
  ttmYearBefore(line: LineItem, end: string): Ttm | null {
    const target = dayOf(end) - 364
    const candidates = this.endsOf(line)
      .filter((e) => Math.abs(dayOf(e) - target) <= 10)
      .sort((a, b) => Math.abs(dayOf(a) - target) - Math.abs(dayOf(b) - target))
    for (const e of candidates) {
      const t = this.ttm(line, e)
      if (t !== null) return t
    }
    return null
  }

  /** The latest filed value of a balance line (an instant), with its date. */
  latestInstant(line: LineItem): Cell | null {
    const ends = [...this.instantsOf(line)].sort().reverse()
    for (const end of ends) {
      const c = this.filedCell(line, { start: null, end })
      if (c !== null) return c
    }
    return null
  }
}

/** A trailing-twelve-month figure. */
export interface Ttm {
  readonly value: Exact
  /** The last day of the twelve months. */
  readonly end: string
  readonly method: "annual" | "four_quarters" | "fy_plus_ytd" | "mixed"
  readonly concepts: ReadonlyArray<string>
  readonly inputs: ReadonlyArray<Cell>
  /** Whether any input was derived (or the figure is a sum or difference of filed values). */
  readonly derived: boolean
}

const single = (c: Cell, end: string, method: Ttm["method"]): Ttm => ({
  value: new Exact(c.value),
  end,
  method,
  concepts: c.concepts,
  inputs: [c],
  derived: c.derived
})

const combine = (a: Cell | null, b: Cell | null, op: (x: Exact, y: Exact) => Exact): Cell | null => {
  if (a === null || b === null) return null
  const latest = citedOf([a, b])
  return {
    value: text(op(new Exact(a.value), new Exact(b.value))),
    concepts: dedupeStrings([...a.concepts, ...b.concepts]),
    accession: latest.accession,
    form: latest.form,
    filed: latest.filed,
    reported: [...a.reported, ...b.reported].sort((x, y) => (newer(x, y) ? 1 : newer(y, x) ? -1 : 0)),
    restated: a.restated || b.restated,
    derived: true,
    knownOn: a.knownOn > b.knownOn ? a.knownOn : b.knownOn
  }
}

const dedupe = (spans: ReadonlyArray<PeriodSpan>): ReadonlyArray<PeriodSpan> => {
  const seen = new Map<string, PeriodSpan>()
  for (const s of spans) seen.set(periodKey(s.start, s.end), s)
  return [...seen.values()]
}

const dedupeStrings = (xs: ReadonlyArray<string>): ReadonlyArray<string> => [...new Set(xs)]

// ---------------------------------------------------------------------------------------------------------------
// The financials table
// ---------------------------------------------------------------------------------------------------------------

export interface FinancialsPeriod {
  readonly id: string
  readonly start: string | null
  readonly end: string
  /** The filing whose values are served (the latest among the period's values). */
  readonly form: string
  readonly accession: string
  readonly filedAt: string
  /** An earlier filing reported a different value for some line of this period. */
  readonly restated: boolean
  /** Some value of this period is derived (a quarter from year-to-date figures). */
  readonly derived: boolean
}

export interface FinancialsLine {
  readonly key: string
  readonly unit: LineUnit
  /** Aligned with `periods`; null where the line has no value for that period. */
  readonly cells: ReadonlyArray<Cell | null>
  /** Concepts the served values came from, in mapping priority order. */
  readonly basisConcepts: ReadonlyArray<string>
}

export interface FinancialsTable {
  readonly periods: ReadonlyArray<FinancialsPeriod>
  readonly lines: ReadonlyArray<FinancialsLine>
}

/**
 * The statements requested over the newest `count` periods of `kind` that have a value for any requested
 * line. Lines with no value in any of those periods are left out.
 */
export const financialsTable = (
  book: FactBook,
  options: { readonly statements: ReadonlyArray<Statement>; readonly kind: PeriodKind; readonly count: number }
): FinancialsTable => {
  const lines = LineItems.filter((l) => options.statements.includes(l.statement))
  const periods: Array<FinancialsPeriod> = []
  const columns: Array<ReadonlyArray<Cell | null>> = []
  const ids = new Set<string>()
  for (const span of book.periods(options.kind)) {
    if (periods.length >= options.count) break
    const cells = lines.map((l) => book.cell(l, span))
    const present = cells.filter((c): c is Cell => c !== null)
    if (present.length === 0) continue
    // The period's filing: the latest among its flows (income, cash flow); a later filing that only repeats
    // the balance sheet at the period's end as a comparative does not make it "the filing" of the period.
    const flows = present.filter((c) => !lines[cells.indexOf(c)]?.instant)
    const served = citedOf(flows.length > 0 ? flows : present)
    let id = book.label(options.kind, span)
    if (ids.has(id)) id = `${id}:${span.end}`
    ids.add(id)
    periods.push({
      id,
      start: span.start,
      end: span.end,
      form: served.form,
      accession: served.accession,
      filedAt: served.filed,
      restated: present.some((c) => c.restated),
      derived: cells.some((c, i) => c?.derived === true && lines[i]?.minus === undefined)
    })
    columns.push(cells)
  }
  const out: Array<FinancialsLine> = []
  lines.forEach((line, i) => {
    const cells = columns.map((col) => col[i] ?? null)
    if (cells.every((c) => c === null)) return
    const used = new Set(cells.flatMap((c) => (c === null ? [] : c.concepts)))
    const priority = line.minus === undefined ? line.concepts : line.minus.flatMap((k) => lineItem(k).concepts)
    out.push({ key: line.key, unit: line.unit, cells, basisConcepts: priority.filter((c) => used.has(c)) })
  })
  return { periods, lines: out }
}
