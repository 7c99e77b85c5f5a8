/**
 * Institutional holders of one company from 13F-HR holdings reports: each filer's latest report, the shares
 * it reports for the company, the change since the filer's prior quarter, and the share of shares outstanding.
 */
import { Exact, RATIO_DECIMALS, text } from "./Exact.ts"
import type { Holding } from "./Model.ts"
import { dayOf } from "./Statements.ts"

/** One 13F report as the holders logic needs it (its holdings are given separately). */
export interface FilerReport {
  readonly filerCik: string
  readonly filerName: string
  readonly accession: string
  readonly form: string
  readonly filedAt: string
  readonly reportPeriod: string
}

/** A holding of the company in a report. */
export interface CompanyHolding {
  readonly accession: string
  readonly holding: Holding
}

export interface HolderRow {
  readonly filerCik: string
  readonly name: string
  readonly reportPeriod: string
  /** The report's form: `13F-HR`, or `13F-HR/A` for an amendment. */
  readonly form: string
  readonly accession: string
  readonly filedAt: string
  /** Shares (type SH, no put/call) summed over the report's rows for the company, exact. */
  readonly shares: string
  /** Market value in USD summed over those rows, exact. */
  readonly valueUsd: string
  /** shares / shares outstanding x 100, rounded to 4 places; null without a share count. */
  readonly pctOfSharesOutstanding: number | null
  /** Shares now minus shares in the filer's report for the prior quarter; null when that report is missing. */
  readonly changeShares: string | null
}

const newer = (a: FilerReport, b: FilerReport): boolean =>
  a.filedAt !== b.filedAt ? a.filedAt > b.filedAt : a.accession > b.accession

/** Whether `earlier` is the quarter before `later` (quarter ends 80 to 100 days apart). */
const previousQuarter = (earlier: string, later: string): boolean => {
  const d = dayOf(later) - dayOf(earlier)
  return d >= 80 && d <= 100
}

/**
 * Holders, largest first (ties by filer CIK). `reports` are every report on file of the filers concerned
 * (holding the company or not: a filer whose latest report no longer lists it is no longer a holder);
 * `holdings` are the company's rows in those reports. For one filer and period the latest filed report
 * (an amendment, 13F-HR/A) replaces the earlier. Put and call rows and principal amounts (PRN) are not shares
 * held and are left out.
 */
export const holdersOf = (
  reports: ReadonlyArray<FilerReport>,
  holdings: ReadonlyArray<CompanyHolding>,
  sharesOutstanding: string | null
): { readonly reportPeriod: string | null; readonly rows: ReadonlyArray<HolderRow> } => {
  // The report in force per filer and period.
  const inForce = new Map<string, Map<string, FilerReport>>()
  for (const r of reports) {
    let periods = inForce.get(r.filerCik)
    if (periods === undefined) {
      periods = new Map()
      inForce.set(r.filerCik, periods)
    }
    const cur = periods.get(r.reportPeriod)
    if (cur === undefined || newer(r, cur)) periods.set(r.reportPeriod, r)
  }
  const byAccession = new Map<string, { shares: Exact; value: Exact; rows: number }>()
  for (const { accession, holding } of holdings) {
    if (holding.sharesType !== "SH" || holding.putCall !== null) continue
    const cur = byAccession.get(accession) ?? { shares: new Exact(0), value: new Exact(0), rows: 0 }
    byAccession.set(accession, {
      shares: cur.shares.plus(new Exact(holding.shares)),
      value: cur.value.plus(new Exact(holding.valueUsd)),
      rows: cur.rows + 1
    })
  }
  const outstanding = sharesOutstanding === null ? null : new Exact(sharesOutstanding)
  const rows: Array<HolderRow> = []
  for (const [filerCik, periods] of inForce) {
    const ordered = [...periods.keys()].sort().reverse()
    const latest = periods.get(ordered[0] as string) as FilerReport
    const held = byAccession.get(latest.accession)
    if (held === undefined) continue
    const priorPeriod = ordered[1]
    let change: string | null = null
    if (priorPeriod !== undefined && previousQuarter(priorPeriod, latest.reportPeriod)) {
      const prior = byAccession.get((periods.get(priorPeriod) as FilerReport).accession)
      change = text(held.shares.minus(prior?.shares ?? new Exact(0)))
    }
    rows.push({
      filerCik,
      name: latest.filerName,
      reportPeriod: latest.reportPeriod,
      form: latest.form,
      accession: latest.accession,
      filedAt: latest.filedAt,
      shares: text(held.shares),
      valueUsd: text(held.value),
      pctOfSharesOutstanding:
        outstanding === null || outstanding.lte(0)
          ? null
          : Number(held.shares.div(outstanding).times(100).toFixed(RATIO_DECIMALS, Exact.ROUND_HALF_EVEN)),
      changeShares: change
    })
  }
  rows.sort((a, b) => {
    const c = new Exact(b.shares).comparedTo(new Exact(a.shares))
    return c !== 0 ? c : a.filerCik < b.filerCik ? -1 : a.filerCik > b.filerCik ? 1 : 0
  })
  const reportPeriod = rows.reduce<string | null>(
    (max, r) => (max === null || r.reportPeriod > max ? r.reportPeriod : max),
    null
  )
  return { reportPeriod, rows }
}

/**
 * How a 13F issuer name is compared with a company name when no CUSIP ties them: upper case, punctuation
 * dropped, and common suffixes (INC, CORP, CO, LTD, PLC, COM, CL A ...) removed.
 */
export const issuerNameKey = (name: string): string =>
  name
    .toUpperCase()
    .replace(/[^A-Z0-9 ]+/g, " ")
    .replace(/\bCL(?:ASS)? [A-Z]\b/g, " ")
    .split(/\s+/)
    .filter((w) => w.length > 0)
    .filter(
      (w) =>
        ![
          "INC",
          "INCORPORATED",
          "CORP",
          "CORPORATION",
          "CO",
          "COMPANY",
          "LTD",
          "LIMITED",
          "PLC",
          "COM",
          "NEW",
          "THE",
          "HOLDINGS",
          "HLDGS"
        ].includes(w)
    )
    .join(" ")
