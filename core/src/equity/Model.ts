/**
 * What companies file with the SEC, as the equity plane keeps it. Every figure stays the decimal string the
 * filer reported (never a float); dates are `YYYY-MM-DD`, instants ISO 8601 UTC. The SEC parsers (in
 * `@market-data/sources`) produce these records from the real formats; the equity plane computes from them.
 */

/** A company the plane covers. */
export interface Company {
  /** SEC CIK without leading zeros, e.g. "320193". */
  readonly cik: string
  readonly name: string
  /** Tickers, primary first. */
  readonly tickers: ReadonlyArray<string>
  /** Exchanges aligned with `tickers` where known (e.g. "Nasdaq", "NYSE"). */
  readonly exchanges: ReadonlyArray<string>
  readonly sic: string | null
  readonly sicDescription: string | null
  /** Fiscal year end as MMDD, e.g. "0928". */
  readonly fiscalYearEnd: string | null
  /** Former names, newest first. */
  readonly formerNames: ReadonlyArray<string>
}

/** One row of `company_tickers.json` / `company_tickers_exchange.json`. */
export interface TickerEntry {
  readonly cik: string
  readonly ticker: string
  readonly name: string
  /** Only in `company_tickers_exchange.json`; null when the file gives none. */
  readonly exchange: string | null
}

/** One XBRL fact from `companyfacts`, exactly as filed. */
export interface Fact {
  /** Taxonomy, e.g. "us-gaap", "dei", "ifrs-full". */
  readonly taxonomy: string
  /** Concept name within the taxonomy, e.g. "Revenues". */
  readonly concept: string
  /** Unit as the SEC names it, e.g. "USD", "USD/shares", "shares". */
  readonly unit: string
  /** The value as a decimal string, exactly as in the source (no float round trip). */
  readonly value: string
  /** Period start (durations); null for instants. */
  readonly start: string | null
  /** Period end, or the instant. */
  readonly end: string
  readonly fy: number | null
  /** "FY", "Q1", "Q2", "Q3", "Q4", "H1", ... or null. */
  readonly fp: string | null
  readonly form: string
  readonly accession: string
  /** Filing date. */
  readonly filed: string
  /** Calendar frame the SEC assigned (e.g. "CY2023Q3I"), or null. */
  readonly frame: string | null
}

/** One filing of the submissions feed. */
export interface Filing {
  readonly accession: string
  readonly form: string
  /** Filing date. */
  readonly filedAt: string
  /** EDGAR acceptance time, ISO 8601 UTC. */
  readonly acceptedAt: string
  /** Period of report, or null. */
  readonly reportDate: string | null
  readonly primaryDocument: string
  readonly primaryDocDescription: string | null
  /** 8-K item numbers ("2.02,9.01"), or null. */
  readonly items: string | null
  readonly isXbrl: boolean
  /** The document's address on EDGAR. */
  readonly url: string
}

/** Submissions feed of one company: the company, its recent filings, and the paged older files to fetch. */
export interface Submissions {
  readonly company: Company
  readonly filings: ReadonlyArray<Filing>
  /** Names of the older pages (`filings.files[].name`), e.g. "CIK0000320193-submissions-001.json". */
  readonly olderFiles: ReadonlyArray<{ readonly name: string; readonly filingFrom: string; readonly filingTo: string }>
}

export interface ReportingOwner {
  readonly cik: string
  readonly name: string
  readonly isDirector: boolean
  readonly isOfficer: boolean
  readonly officerTitle: string | null
  readonly isTenPercentOwner: boolean
  readonly isOther: boolean
}

/** One row of a Form 4's non-derivative or derivative table. */
export interface InsiderTransaction {
  readonly table: "non_derivative" | "derivative"
  readonly securityTitle: string
  readonly transactionDate: string
  /** Transaction code: P open-market purchase, S open-market sale, A grant, M exercise, F tax withholding, G gift, ... */
  readonly code: string
  /** Acquired ("A") or disposed ("D"). */
  readonly acquiredDisposed: "A" | "D"
  readonly shares: string
  /** Price per share, null when none is reported (grants, gifts). */
  readonly pricePerShare: string | null
  readonly sharesOwnedAfter: string | null
  /** Direct ("D") or indirect ("I") ownership. */
  readonly directIndirect: "D" | "I"
  /** Derivative rows: exercise price and underlying shares, when reported. */
  readonly exercisePrice: string | null
  readonly underlyingShares: string | null
  /** Footnote texts referenced by this row. */
  readonly footnotes: ReadonlyArray<string>
}

/** A parsed Form 4 (or 4/A) ownership document. */
export interface OwnershipReport {
  /** "4" or "4/A". */
  readonly form: string
  readonly accession: string
  readonly filedAt: string
  readonly periodOfReport: string
  readonly issuerCik: string
  readonly issuerName: string
  readonly issuerTicker: string
  readonly owners: ReadonlyArray<ReportingOwner>
  readonly transactions: ReadonlyArray<InsiderTransaction>
  /** For a 4/A: the date of the original filing it amends, as the document states it. */
  readonly dateOfOriginalSubmission: string | null
}

/** One holding of a 13F-HR information table. */
export interface Holding {
  readonly nameOfIssuer: string
  readonly titleOfClass: string
  readonly cusip: string
  /** Market value in US dollars (filings before 2023 report thousands; the parser has already scaled them). */
  readonly valueUsd: string
  readonly shares: string
  /** "SH" shares or "PRN" principal amount. */
  readonly sharesType: "SH" | "PRN"
  readonly putCall: "Put" | "Call" | null
  readonly investmentDiscretion: string
  readonly votingSole: string
  readonly votingShared: string
  readonly votingNone: string
}

/** A 13F-HR report: the filer, the period, and its holdings. */
export interface HoldingsReport {
  readonly filerCik: string
  readonly filerName: string
  readonly accession: string
  readonly form: string
  readonly filedAt: string
  /** Period of report (quarter end). */
  readonly reportPeriod: string
  readonly holdings: ReadonlyArray<Holding>
}
