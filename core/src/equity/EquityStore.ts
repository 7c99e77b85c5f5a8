/**
 * The equity store port: what the equity plane keeps of each company. Companies, tickers, XBRL facts,
 * filings, Form 4 ownership reports, 13F holdings reports, the CUSIPs tying 13F rows to companies, and daily
 * price bars. Filed figures stay decimal strings (PostgreSQL `numeric`); prices are market numbers.
 *
 * Every write is idempotent on its natural key: writing the same records twice changes nothing, so ingesting a
 * file again is safe. One implementation per store (memory, PGlite, PostgreSQL), all passing one contract suite.
 */
import { Context, type Effect } from "effect"
import type { CompanyHolding, FilerReport } from "./Holders.ts"
import type { Company, Fact, Filing, HoldingsReport, OwnershipReport, TickerEntry } from "./Model.ts"

const EQUITY_TICKER = /^[A-Z0-9.-]+$/
/** What Form 4 filers write in `issuerTradingSymbol` when the issuer has no listed security. */
const NOT_TICKERS: ReadonlySet<string> = new Set(["NONE", "NA", "N.A.", "-", "."])

/** One daily bar. `tMs` is the session's open (09:30 New York) in epoch milliseconds. */
export interface DailyBar {
  readonly tMs: number
  readonly o: number
  readonly h: number
  readonly l: number
  readonly c: number
  readonly v: number
}

/** The daily bars held for one ticker of a company. */
export interface TickerBars {
  readonly ticker: string
  readonly bars: number
  readonly lastBarMs: number
}

/** What the store holds for one company, in counts and latest times (directory, freshness). */
export interface CompanyCoverage {
  readonly cik: string
  readonly facts: number
  readonly filings: number
  /** Latest filing date (facts or filings), or null. */
  readonly lastFiledAt: string | null
  /** Daily bars of all the company's tickers together, and the newest of them. */
  readonly bars: number
  readonly lastBarMs: number | null
  /** Daily bars per ticker (only tickers with bars), by ticker. */
  readonly tickerBars: ReadonlyArray<TickerBars>
  /** Whether any 13F holding ties to the company (by CUSIP, or by issuer name when it has no CUSIP on file). */
  readonly hasHolders: boolean
}

/** The 13F reports concerning one company: its holdings and every report of the filers holding it. */
export interface CompanyHoldings {
  readonly reports: ReadonlyArray<FilerReport>
  readonly holdings: ReadonlyArray<CompanyHolding>
}

/**
 * An issuer the store knows, as the directory lists it: its company (the stored one, or one made from what names
 * it) and what is held for it.
 */
export interface Issuer {
  readonly company: Company
  readonly coverage: CompanyCoverage
}

/** What names an issuer that has no company row: its ticker rows, or (without any) its Form 4 reports. */
export interface IssuerNames {
  /** Ticker rows of the CIK, by ticker. */
  readonly listed: ReadonlyArray<TickerEntry>
  /** From the issuer's Form 4 reports: the newest report's issuer name and the tickers they give. */
  readonly form4: { readonly name: string; readonly tickers: ReadonlyArray<string> } | undefined
}

/**
 * The company an issuer is listed as, by the rule every store follows (DECISIONS, "Whole-market start-up": a
 * ticker is an asset as soon as the ticker list is read):
 * - a stored company (a submissions feed or companyfacts) is itself; without tickers of its own (companyfacts
 *   names none) it takes its ticker rows', then its Form 4 reports';
 * - a CIK known only from ticker rows is a company named as its first row (by ticker) names it, trading under
 *   every listed ticker, on the listed exchanges;
 * - a CIK known only as a Form 4 issuer is a company named as its newest report names it, trading under the
 *   tickers the reports give (upper-cased; what is no ticker, such as "NONE", "N/A" or an empty symbol, is left
 *   out, and an issuer with no ticker left has no ID to be reached by).
 * Nothing else is made up: SIC, fiscal year end and former names stay unknown until a submissions feed is in.
 * Undefined when nothing names the CIK.
 */
export const issuerCompany = (cik: string, stored: Company | undefined, names: IssuerNames): Company | undefined => {
  const listed = [...names.listed].sort((a, b) => (a.ticker < b.ticker ? -1 : a.ticker > b.ticker ? 1 : 0))
  const form4Tickers = [
    ...new Set(
      (names.form4?.tickers ?? [])
        .map((t) => t.trim().toUpperCase())
        .filter((t) => EQUITY_TICKER.test(t) && !NOT_TICKERS.has(t))
    )
  ].sort()
  const tickers =
    listed.length > 0
      ? { tickers: listed.map((t) => t.ticker), exchanges: listed.map((t) => t.exchange ?? "") }
      : { tickers: form4Tickers, exchanges: form4Tickers.map(() => "") }
  if (stored !== undefined) return stored.tickers.length > 0 ? stored : { ...stored, ...tickers }
  const name = listed[0]?.name ?? names.form4?.name
  if (name === undefined) return undefined
  return {
    cik,
    name,
    ...tickers,
    sic: null,
    sicDescription: null,
    fiscalYearEnd: null,
    formerNames: []
  }
}

export class EquityStore extends Context.Service<
  EquityStore,
  {
    /** Inserts or replaces a company (key: CIK). */
    readonly putCompany: (company: Company) => Effect.Effect<void>
    /** Ticker list rows (key: CIK and ticker; a repeated row replaces the name and exchange). */
    readonly putTickers: (entries: ReadonlyArray<TickerEntry>) => Effect.Effect<number>
    /** Facts of a company (key: taxonomy, concept, unit, start, end, accession); returns rows newly written. */
    readonly putFacts: (cik: string, facts: ReadonlyArray<Fact>) => Effect.Effect<number>
    /** Filings of a company (key: accession). */
    readonly putFilings: (cik: string, filings: ReadonlyArray<Filing>) => Effect.Effect<number>
    /** Form 4 / 4/A reports (key: accession), filed under their issuer. */
    readonly putOwnershipReports: (reports: ReadonlyArray<OwnershipReport>) => Effect.Effect<number>
    /** 13F-HR reports with their holdings (key: accession). */
    readonly putHoldingsReports: (reports: ReadonlyArray<HoldingsReport>) => Effect.Effect<number>
    /** CUSIPs of a company's securities, tying 13F rows to it (key: CUSIP). */
    readonly putSecurities: (cik: string, cusips: ReadonlyArray<string>) => Effect.Effect<void>
    /**
     * Daily bars of one listed security: the company's `ticker` (key: CIK, ticker and open time; a repeated bar
     * replaces the stored one). Each ticker is its own series: share classes (BRK-A and BRK-B) trade apart.
     */
    readonly putBars: (cik: string, ticker: string, bars: ReadonlyArray<DailyBar>) => Effect.Effect<number>

    /** Every company, by CIK. */
    readonly companies: Effect.Effect<ReadonlyArray<Company>>
    readonly company: (cik: string) => Effect.Effect<Company | undefined>
    /** Every ticker row, by CIK then ticker. */
    readonly tickers: Effect.Effect<ReadonlyArray<TickerEntry>>
    /** A company's facts (all, or of the given concepts), in no promised order. */
    readonly facts: (cik: string, concepts?: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Fact>>
    /** A company's filings, newest first by acceptance time (ties by accession, descending). */
    readonly filings: (cik: string) => Effect.Effect<ReadonlyArray<Filing>>
    /** Ownership reports whose issuer is the company, oldest filed first. */
    readonly ownershipReports: (issuerCik: string) => Effect.Effect<ReadonlyArray<OwnershipReport>>
    /**
     * The company's 13F rows (by its CUSIPs; by issuer name when it has none on file) and every report of the
     * filers that hold it.
     */
    readonly holdings: (cik: string) => Effect.Effect<CompanyHoldings>
    /** Daily bars of the company's `ticker` with `fromMs <= tMs <= toMs`, the newest `limit` of them, oldest first. */
    readonly bars: (
      cik: string,
      ticker: string,
      range: { readonly fromMs?: number; readonly toMs?: number; readonly limit?: number }
    ) => Effect.Effect<ReadonlyArray<DailyBar>>
    /** What is held for each company (all companies by CIK, or the one named). */
    readonly coverage: (cik?: string) => Effect.Effect<ReadonlyArray<CompanyCoverage>>
    /**
     * Every issuer the store knows, by CIK: the stored companies, every CIK of the ticker rows, and every Form 4
     * issuer, each as `issuerCompany` makes it, with its coverage. What the directory lists: it reads counts and
     * latest dates per table (one grouped query each), never a company's filings.
     */
    readonly issuers: Effect.Effect<ReadonlyArray<Issuer>>
    /** One issuer (as in `issuers`), or undefined when nothing in the store names the CIK. */
    readonly issuer: (cik: string) => Effect.Effect<Issuer | undefined>
  }
>()("market-data/core/EquityStore") {}
