/**
 * `market-data ingest sec <file-or-dir>...` and `market-data ingest prices <csv-or-dir>... [--id eq:<cik>:<ticker>]`:
 * load SEC files and daily prices into the database's equity store, the one `serve` answers from. Both report
 * what happened the same way (loaded and refused rows by count and reason, per file and in total) and end with
 * the same exit-code rule (`ingestExitCode`).
 *
 * SEC files are recognised by their content (`detectSecFormat`), never by their names: companyfacts, submissions
 * and their older pages, Form 4 / 4/A ownership documents, 13F-HR primary documents and information tables, and
 * both ticker lists. Directories are walked recursively (the SEC's bulk `companyfacts/` and `submissions/`
 * folders included), reading the `.json` and `.xml` files in them; a file named on the command line is always
 * read. Every write is idempotent on its natural key, so ingesting the same files again changes nothing. A bad
 * file is named with its reason and the others still load.
 *
 * What the documents do not carry, the paths give:
 * - an older submissions page (`CIK##########-submissions-###.json`) names its company only in its file name,
 *   as the SEC names it;
 * - a Form 4 or 13F document carries neither its accession number nor its filing date. The accession is taken
 *   from the file name or, failing that, from the nearest folder that carries one, dashed
 *   (`0001127602-22-029366`) or as EDGAR's archive folder writes it (`000112760222029366`). The filing date is a
 *   `YYYY-MM-DD` in that same name (`0001127602-22-029366_2022-12-15.xml`); without one it is the date the
 *   store knows for that accession from a submissions feed (the issuer's for a Form 4, the manager's for a 13F),
 *   ingested earlier or in the same run (documents are read after every JSON file).
 * - a 13F filing is its primary document and its information table together: both in one folder that carries
 *   the accession (EDGAR's own layout, `<accession>/primary_doc.xml` + the table), or, several filings sharing a
 *   folder, each document's file name carrying its accession. A table without its primary document (or the
 *   reverse) is refused, and so is a pair whose row count differs from what the primary document states. Filed
 *   before 2023-01-03 a table's values are thousands of dollars, unless the prices they imply say the filer wrote
 *   dollars (`thirteenFImpliedValueUnit`), which the file's result notes.
 *
 * Daily prices: CSVs (named, or the `.csv` files of directories) with a header naming `date`, `open`, `high`,
 * `low`, `close`, `volume` (any order and case; other columns ignored), one row per session, dates `YYYY-MM-DD`.
 * The CSV grammar is RFC 4180 (read by `csv-parse`: quoted cells may hold commas, quotes and line breaks; cells
 * trimmed); a file it refuses fails whole, naming the fault and its line.
 * A bar's time is the session's open (09:30 New York). A refused row is counted by reason and named with its line;
 * the good rows load. A weekend date is refused; a row on a weekday the market calendar has closed (a holiday
 * or one-off closure) is kept, with a warning: the source published it. The rows are
 * the company `--id eq:<cik>:<ticker>` names or, without `--id`, each row's company is named by an `id`
 * (`eq:<cik>:<ticker>`) or `ticker` (or `symbol`) column, so one file can carry several companies. The company
 * must be known to the store already (the ticker list, its submissions or companyfacts, or a Form 4 naming it
 * ingested) and trade under that ticker. Once it
 * has prices its tier becomes `full`.
 *
 * One file per concern under `ingest/`: `Files.ts` (paths, accessions in paths, reading a file), `Sec.ts` (SEC
 * files), `Prices.ts` (price CSVs), `Summary.ts` (what a file and an ingest report), `Report.ts` (printing, exit
 * code), `Command.ts` (the command). This module keeps their exported names.
 */
export { type IngestArgs, ingestCommand } from "./ingest/Command.ts"
export { accessionFromPath, expandPaths } from "./ingest/Files.ts"
export { ingestPrices, type PriceRow, parsePriceCsv } from "./ingest/Prices.ts"
export { type IngestIo, ingestExitCode, reportIngest } from "./ingest/Report.ts"
export { ingestSec } from "./ingest/Sec.ts"
export {
  type IngestCounts,
  type IngestFileResult,
  type IngestSummary,
  IngestUsage,
  type RefusalReason,
  type RefusedRow
} from "./ingest/Summary.ts"
