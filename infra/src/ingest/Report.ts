/** The report of an ingest: per file on stderr, the totals on stdout (or one JSON document), and its exit code. */
import { type IngestCounts, type IngestSummary, plural } from "./Summary.ts"

export interface IngestIo {
  readonly out: (line: string) => void
  readonly err: (line: string) => void
}

const countsText = (c: IngestCounts): string => {
  const parts = [
    c.companies > 0 ? plural(c.companies, "company", "companies") : "",
    c.tickers > 0 ? plural(c.tickers, "ticker row") : "",
    c.facts > 0 ? plural(c.facts, "fact") : "",
    c.filings > 0 ? plural(c.filings, "filing") : "",
    c.ownershipReports > 0 ? plural(c.ownershipReports, "Form 4 report") : "",
    c.holdingsReports > 0 ? plural(c.holdingsReports, "13F report") : "",
    c.bars > 0 ? plural(c.bars, "daily bar") : ""
  ].filter((p) => p !== "")
  return parts.length === 0 ? "nothing new (already in the store)" : `new: ${parts.join(", ")}`
}

/**
 * The exit code of an ingest, the same rule for `ingest sec` and `ingest prices`: 0 when every file was loaded in
 * full (warnings and notes may have been printed; a file with nothing to load, such as a 13F notice, is skipped,
 * and files of another kind under a directory are ignored); 1 when anything was refused: a file that loaded
 * nothing, or a row refused in a file whose other rows loaded. Bad usage is 2, before anything is read.
 */
export const ingestExitCode = (summary: IngestSummary): number =>
  summary.failed > 0 || summary.partial > 0 || summary.rows.refused > 0 ? 1 : 0

const reasonsText = (byReason: Readonly<Record<string, number>>): string =>
  Object.entries(byReason)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([reason, n]) => `${reason} ${n.toLocaleString("en-US")}`)
    .join(", ")

const SHOWN_REFUSALS = 20

/**
 * Prints a summary (or one JSON document): per file, what failed or was refused (by reason, each row by line),
 * warnings and notes on stderr; the totals on stdout: files loaded in full and in part, failed, skipped,
 * ignored; rows loaded and refused, by reason; rows new to the store.
 */
export const reportIngest = (summary: IngestSummary, store: string, json: boolean, io: IngestIo): number => {
  const code = ingestExitCode(summary)
  if (json) {
    io.out(
      JSON.stringify({
        store,
        ok: code === 0,
        exit_code: code,
        files: summary.results.length,
        loaded: summary.loaded,
        partial: summary.partial,
        failed: summary.failed,
        skipped: summary.skipped,
        ignored: summary.ignored,
        rows: summary.rows,
        warnings: summary.warnings,
        written: summary.written,
        results: summary.results
      })
    )
    return code
  }
  for (const r of summary.results) {
    if (r.status === "failed" && r.refused === 0) io.err(`failed   ${r.path}: ${r.reason}`)
    else if (r.status === "skipped") io.err(`skipped  ${r.path}: ${r.reason}`)
    if (r.refused > 0) {
      io.err(
        `refused  ${r.path}: ${plural(r.refused, "row")} (${reasonsText(r.refusedByReason)}), ${plural(r.records, "row")} loaded`
      )
      for (const row of r.refusedRows.slice(0, SHOWN_REFUSALS)) {
        io.err(`refused  ${r.path}: line ${row.line}: ${row.reason}: ${row.detail}`)
      }
      if (r.refusedRows.length > SHOWN_REFUSALS) {
        io.err(`refused  ${r.path}: and ${r.refusedRows.length - SHOWN_REFUSALS} more (--json lists every one)`)
      }
    }
    for (const warning of r.warnings) io.err(`warning  ${r.path}: ${warning}`)
    for (const note of r.notes) io.err(`note     ${r.path}: ${note}`)
  }
  const rows =
    summary.rows.loaded > 0 || summary.rows.refused > 0
      ? `; rows: ${summary.rows.loaded.toLocaleString("en-US")} loaded, ${summary.rows.refused.toLocaleString("en-US")} refused${summary.rows.refused > 0 ? ` (${reasonsText(summary.rows.refusedByReason)})` : ""}`
      : ""
  io.out(
    `${store}: ${summary.loaded} of ${summary.results.length} file(s) loaded${summary.partial > 0 ? `, ${summary.partial} in part` : ""}${summary.failed > 0 ? `, ${summary.failed} failed` : ""}${summary.skipped > 0 ? `, ${summary.skipped} skipped` : ""}${summary.ignored > 0 ? `, ${summary.ignored} ignored (not ${summary.reads})` : ""}${rows}${summary.warnings > 0 ? `; ${plural(summary.warnings, "warning")}` : ""}; ${countsText(summary.written)}`
  )
  return code
}
