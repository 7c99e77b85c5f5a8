/**
 * Insider transactions from Form 4 ownership reports: amendments (4/A) superseding the report they amend,
 * and the trailing 90-day summary of open-market trading.
 */
import { Exact, text } from "./Exact.ts"
import type { InsiderTransaction, OwnershipReport } from "./Model.ts"
import { dateOf, dayOf } from "./Statements.ts"

/** Days in the insider summary window, ending today (inclusive). */
export const INSIDER_WINDOW_DAYS = 90

const ownersKey = (r: OwnershipReport): string =>
  r.owners
    .map((o) => o.cik)
    .sort()
    .join(",")

const newer = (a: OwnershipReport, b: OwnershipReport): boolean =>
  a.filedAt !== b.filedAt ? a.filedAt > b.filedAt : a.accession > b.accession

/**
 * The reports in force: a 4/A replaces the original Form 4 it amends (same issuer and reporting owners, filed
 * on the amendment's `dateOfOriginalSubmission`, or for the same period of report when the amendment does not
 * name the date), and of several amendments to one original the latest wins. An amendment whose original is
 * not on file stands on its own.
 */
export const reportsInForce = (reports: ReadonlyArray<OwnershipReport>): ReadonlyArray<OwnershipReport> => {
  const originals = reports.filter((r) => !r.form.endsWith("/A"))
  const groups = new Map<string, OwnershipReport>()
  const keep = (group: string, r: OwnershipReport) => {
    const cur = groups.get(group)
    if (cur === undefined || newer(r, cur)) groups.set(group, r)
  }
  for (const r of originals) keep(r.accession, r)
  for (const a of reports) {
    if (!a.form.endsWith("/A")) continue
    const candidates = originals.filter(
      (o) =>
        o.issuerCik === a.issuerCik &&
        ownersKey(o) === ownersKey(a) &&
        o.filedAt <= a.filedAt &&
        (a.dateOfOriginalSubmission !== null
          ? o.filedAt === a.dateOfOriginalSubmission
          : o.periodOfReport === a.periodOfReport)
    )
    // Of several candidates (two Form 4s on one day), the one for the same period of report.
    const original = candidates.find((o) => o.periodOfReport === a.periodOfReport) ?? candidates[0]
    keep(original === undefined ? a.accession : original.accession, a)
  }
  return [...groups.values()]
}

/** One insider transaction with the report it comes from. */
export interface InsiderTrade {
  readonly report: OwnershipReport
  readonly transaction: InsiderTransaction
}

/** Every transaction of the reports in force. */
export const insiderTrades = (reports: ReadonlyArray<OwnershipReport>): ReadonlyArray<InsiderTrade> =>
  reportsInForce(reports).flatMap((report) => report.transactions.map((transaction) => ({ report, transaction })))

export interface InsiderSummary {
  /** Open-market purchases (non-derivative, code P) in the window. */
  readonly openMarketBuys: number
  /** Open-market sales (non-derivative, code S) in the window. */
  readonly openMarketSales: number
  /** Shares bought minus shares sold in those transactions, exact. */
  readonly netShares: string
  /** Distinct reporting owners with at least one open-market buy or sale in the window. */
  readonly uniqueInsiders: number
  /** First and last day of the window. */
  readonly from: string
  readonly through: string
}

/**
 * Open-market trading by insiders over the `INSIDER_WINDOW_DAYS` days ending `today` (transaction dates),
 * amendments applied. Grants, exercises, tax withholding and gifts (codes other than P and S) are not trading
 * and are left out.
 */
export const insiderSummary = (reports: ReadonlyArray<OwnershipReport>, today: string): InsiderSummary => {
  const from = dateOf(dayOf(today) - (INSIDER_WINDOW_DAYS - 1))
  let buys = 0
  let sales = 0
  let net = new Exact(0)
  const insiders = new Set<string>()
  for (const { report, transaction: t } of insiderTrades(reports)) {
    if (t.table !== "non_derivative" || t.transactionDate < from || t.transactionDate > today) continue
    if (t.code !== "P" && t.code !== "S") continue
    if (t.code === "P") {
      buys++
      net = net.plus(new Exact(t.shares))
    } else {
      sales++
      net = net.minus(new Exact(t.shares))
    }
    for (const o of report.owners) insiders.add(o.cik)
  }
  return {
    openMarketBuys: buys,
    openMarketSales: sales,
    netShares: text(net),
    uniqueInsiders: insiders.size,
    from,
    through: today
  }
}
