/**
 * What an ingest reports: rows written by kind, each file's result (loaded, partial, failed, skipped; refused
 * rows by reason), and the summary over every file (`summarize`), the same for `ingest sec` and `ingest prices`.
 */
import type { SecFormat } from "@market-data/sources"

/** Bad usage of `ingest` (exit 2). */
export class IngestUsage {
  readonly _tag = "IngestUsage"
  readonly message: string
  constructor(message: string) {
    this.message = message
  }
}

/** Rows newly written to the store, by kind. */
export interface IngestCounts {
  companies: number
  tickers: number
  facts: number
  filings: number
  ownershipReports: number
  holdingsReports: number
  bars: number
}

/** What happened to one file. */
export interface IngestFileResult {
  /** The path as given, or found under a given directory. */
  readonly path: string
  /** What the file was recognised as (`prices` for a CSV), or null when it is no SEC format. */
  readonly format: SecFormat | "prices" | null
  /** `partial`: some rows refused (see `refused`), the others loaded. */
  readonly status: "loaded" | "partial" | "failed" | "skipped"
  /** Why it failed or was skipped. */
  readonly reason: string | null
  /** The company (or 13F manager) the file is about, when known. */
  readonly cik: string | null
  /** Records the file holds (facts, filings, transactions, holdings, ticker rows, bars). */
  readonly records: number
  /** Rows new to the store (0 when the file was ingested before). */
  readonly written: number
  /** Remarks that do not stop the load (a value unit read from the implied prices, ...). */
  readonly notes: ReadonlyArray<string>
  /** Rows of the file refused (price rows; an SEC file loads whole or fails whole, so 0 there). */
  readonly refused: number
  /** The refused rows counted by reason (`RefusalReason`). */
  readonly refusedByReason: Readonly<Record<string, number>>
  /** Each refused row: its line, reason and what was wrong. */
  readonly refusedRows: ReadonlyArray<RefusedRow>
  /** What was loaded but deserves a look (a price row on a day the market calendar has closed). */
  readonly warnings: ReadonlyArray<string>
}

/** Why a price row was refused. */
export type RefusalReason =
  | "no_company"
  | "bad_date"
  | "weekend"
  | "repeated_date"
  | "not_a_number"
  | "not_positive"
  | "high_below_range"
  | "low_above_range"
  | "other_company"
  | "unknown_company"

export interface RefusedRow {
  readonly line: number
  readonly reason: RefusalReason
  readonly detail: string
}

export interface IngestSummary {
  readonly results: ReadonlyArray<IngestFileResult>
  /** Files loaded in full. */
  readonly loaded: number
  /** Files loaded in part: some rows refused, the others loaded. */
  readonly partial: number
  /** Files that loaded nothing. */
  readonly failed: number
  readonly skipped: number
  /** Files under the given directories not of the kind the command reads (`.json`/`.xml`, or `.csv`). */
  readonly ignored: number
  /** The file kinds the command reads, for the report (`.json or .xml`, `.csv`). */
  readonly reads: string
  /** Rows (records) loaded and refused over every file, refused ones by reason. */
  readonly rows: {
    readonly loaded: number
    readonly refused: number
    readonly refusedByReason: Readonly<Record<string, number>>
  }
  readonly warnings: number
  readonly written: IngestCounts
}

export const emptyCounts = (): IngestCounts => ({
  companies: 0,
  tickers: 0,
  facts: 0,
  filings: 0,
  ownershipReports: 0,
  holdingsReports: 0,
  bars: 0
})

export const noRefusals = { refused: 0, refusedByReason: {}, refusedRows: [], warnings: [] } as const

export const summarize = (
  results: ReadonlyArray<IngestFileResult>,
  ignored: number,
  written: IngestCounts,
  reads: string
): IngestSummary => {
  const refusedByReason: Record<string, number> = {}
  for (const r of results) {
    for (const [reason, n] of Object.entries(r.refusedByReason))
      refusedByReason[reason] = (refusedByReason[reason] ?? 0) + n
  }
  return {
    results,
    loaded: results.filter((r) => r.status === "loaded").length,
    partial: results.filter((r) => r.status === "partial").length,
    failed: results.filter((r) => r.status === "failed").length,
    skipped: results.filter((r) => r.status === "skipped").length,
    ignored,
    reads,
    rows: {
      loaded: results.reduce((n, r) => n + (r.status === "loaded" || r.status === "partial" ? r.records : 0), 0),
      refused: results.reduce((n, r) => n + r.refused, 0),
      refusedByReason
    },
    warnings: results.reduce((n, r) => n + r.warnings.length, 0),
    written
  }
}

export const plural = (n: number, one: string, many = `${one}s`) =>
  `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`
