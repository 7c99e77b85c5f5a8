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
 * A bar's time is the session's open (09:30 New York). A refused row is counted by reason and named with its line;
 * the good rows load. A weekend date is refused; a row on a weekday the market calendar has closed (a holiday
 * or one-off closure) is kept, with a warning: the source published it. The rows are
 * the company `--id eq:<cik>:<ticker>` names or, without `--id`, each row's company is named by an `id`
 * (`eq:<cik>:<ticker>`) or `ticker` (or `symbol`) column, so one file can carry several companies. The company
 * must be known to the store already (the ticker list, its submissions or companyfacts, or a Form 4 naming it
 * ingested) and trade under that ticker. Once it
 * has prices its tier becomes `full`.
 */
import { type Dirent, readdirSync, readFileSync, realpathSync, statSync } from "node:fs"
import { basename, dirname, join, relative, resolve } from "node:path"
import {
  type Company,
  Equity,
  type EquityStore,
  type HoldingsReport,
  type OwnershipReport,
  type TickerEntry
} from "@market-data/core"
import { makePgEquityStore } from "@market-data/postgres"
import {
  checkThirteenFTotals,
  detectSecFormat,
  parseCompanyFacts,
  parseCompanyTickers,
  parseCompanyTickersExchange,
  parseOwnershipDocument,
  parseSubmissions,
  parseSubmissionsPage,
  parseThirteenFInformationTable,
  parseThirteenFPrimaryDocument,
  type SecFormat,
  ThirteenFDollarValuesFrom,
  thirteenFImpliedValueUnit
} from "@market-data/sources"
import { Effect, References, Result } from "effect"
import { type AppConfig, ConfigProblem, loadConfig } from "./AppConfig.ts"
import { ingestSecWithArchives } from "./ingest/Bulk.ts"
import type { ProgressFactory } from "./Progress.ts"
import { openStores } from "./Stores.ts"

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

const emptyCounts = (): IngestCounts => ({
  companies: 0,
  tickers: 0,
  facts: 0,
  filings: 0,
  ownershipReports: 0,
  holdingsReports: 0,
  bars: 0
})

// ---------------------------------------------------------------------------------------------------------------
// Paths
// ---------------------------------------------------------------------------------------------------------------

const isDirectoryPath = (path: string): boolean => {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

/** The files to read: named files as they are, directories walked recursively (`.json` and `.xml`, by name). */
export const expandPaths = (
  paths: ReadonlyArray<string>,
  accept: RegExp = /\.(json|xml)$/i
): { readonly files: ReadonlyArray<string>; readonly missing: ReadonlyArray<string>; readonly ignored: number } => {
  const files: Array<string> = []
  const missing: Array<string> = []
  let ignored = 0
  const visited = new Set<string>()
  const walk = (dir: string) => {
    // A symbolic link back up the tree must not loop.
    const real = realpathSync(dir)
    if (visited.has(real)) return
    visited.add(real)
    const entries: Array<Dirent> = readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0
    )
    for (const entry of entries) {
      const path = join(dir, entry.name)
      const isDirectory = entry.isDirectory() || (entry.isSymbolicLink() && isDirectoryPath(path))
      if (isDirectory) walk(path)
      else if (entry.isFile() || entry.isSymbolicLink()) {
        if (accept.test(entry.name)) files.push(path)
        else ignored++
      }
    }
  }
  for (const path of paths) {
    let stat: ReturnType<typeof statSync>
    try {
      stat = statSync(path)
    } catch {
      missing.push(path)
      continue
    }
    if (stat.isDirectory()) walk(path)
    else files.push(path)
  }
  return { files: [...new Set(files)], missing, ignored }
}

const ACCESSION_DASHED = /(?<!\d)(\d{10})-(\d{2})-(\d{6})(?!\d)/
const ACCESSION_FOLDER = /(?<!\d)(\d{10})(\d{2})(\d{6})(?!\d)/
const DATE = /(?<!\d)(\d{4}-\d{2}-\d{2})(?!\d)/

/**
 * The accession number a document's path carries (its file name first, then its folders, nearest first), and
 * the filing date written in the same name, if any.
 */
export const accessionFromPath = (
  path: string
): { readonly accession: string; readonly filedAt: string | null; readonly from: string } | undefined => {
  let current = resolve(path)
  for (;;) {
    const name = basename(current)
    const m = ACCESSION_DASHED.exec(name) ?? ACCESSION_FOLDER.exec(name)
    if (m !== null) {
      const date = DATE.exec(name.replace(m[0], ""))
      return { accession: `${m[1]}-${m[2]}-${m[3]}`, filedAt: date?.[1] ?? null, from: name }
    }
    const parent = dirname(current)
    if (parent === current) return undefined
    current = parent
  }
}

const SUBMISSIONS_PAGE_NAME = /^CIK(\d{10})-submissions-\d+\.json$/i

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`

// ---------------------------------------------------------------------------------------------------------------
// SEC files
// ---------------------------------------------------------------------------------------------------------------

/** A failure of one file, with the reason to print. */
class FileProblem {
  readonly _tag = "FileProblem"
  readonly reason: string
  readonly cik: string | null
  constructor(reason: string, cik: string | null = null) {
    this.reason = reason
    this.cik = cik
  }
}

const unwrap = <A>(
  result: Result.Result<A, { readonly format: string; readonly message: string }>
): Effect.Effect<A, FileProblem> =>
  Result.isSuccess(result)
    ? Effect.succeed(result.success)
    : Effect.fail(new FileProblem(`not a valid ${result.failure.format} document: ${result.failure.message}`))

const readText = (path: string): Effect.Effect<string, FileProblem> =>
  Effect.try({
    try: () => readFileSync(path, "utf8"),
    catch: (e) => new FileProblem(`cannot read it: ${e instanceof Error ? e.message : String(e)}`)
  })

interface Loaded {
  readonly cik: string | null
  readonly records: number
  readonly written: number
  readonly notes?: ReadonlyArray<string>
}

/** The store's filing date of an accession, from the submissions feeds of the given companies. */
const storedFilingDate = (store: EquityStore["Service"], ciks: ReadonlyArray<string>, accession: string) =>
  Effect.gen(function* () {
    for (const cik of ciks) {
      const found = (yield* store.filings(cik)).find((f) => f.accession === accession)
      if (found !== undefined) return found.filedAt
    }
    return undefined
  })

const NEEDS_ACCESSION = (what: string) =>
  `a ${what} does not carry its accession number: put it in the file name or a folder name (0001127602-22-029366, or EDGAR's folder 000112760222029366), with the filing date after it (0001127602-22-029366_2022-12-15.xml) unless the submissions feed listing it is ingested too`

const NEEDS_DATE = (what: string, accession: string, whose: string) =>
  `the ${what}'s filing date is unknown: the store has no submissions feed of ${whose} listing ${accession}; ingest that feed too, or name the date after the accession (${accession}_YYYY-MM-DD)`

/**
 * The stored ticker rows by CIK, read once per store (a bulk folder holds thousands of companies) and read again
 * after a ticker list is ingested.
 */
const tickerIndexes = new WeakMap<object, Map<string, ReadonlyArray<TickerEntry>>>()

const listedTickers = (store: EquityStore["Service"], cik: string) =>
  Effect.gen(function* () {
    let index = tickerIndexes.get(store)
    if (index === undefined) {
      index = new Map()
      for (const t of yield* store.tickers) index.set(t.cik, [...(index.get(t.cik) ?? []), t])
      tickerIndexes.set(store, index)
    }
    return index.get(cik) ?? []
  })

/** Fills the tickers of a company created from companyfacts (which names none) from the stored ticker lists. */
const withListedTickers = (store: EquityStore["Service"], company: Company) =>
  Effect.gen(function* () {
    if (company.tickers.length > 0) return company
    const listed = yield* listedTickers(store, company.cik)
    if (listed.length === 0) return company
    return { ...company, tickers: listed.map((t) => t.ticker), exchanges: listed.map((t) => t.exchange ?? "") }
  })

const loadJson = (
  store: EquityStore["Service"],
  counts: IngestCounts,
  path: string,
  text: string,
  format: SecFormat
): Effect.Effect<Loaded, FileProblem> =>
  Effect.gen(function* () {
    switch (format) {
      case "companyfacts": {
        const cf = yield* unwrap(parseCompanyFacts(text))
        let written = 0
        // The submissions feed describes a company fully; companyfacts only names it, so it creates the company
        // only when the store has none (a later submissions feed replaces it).
        if ((yield* store.company(cf.cik)) === undefined) {
          yield* store.putCompany(
            yield* withListedTickers(store, {
              cik: cf.cik,
              name: cf.entityName,
              tickers: [],
              exchanges: [],
              sic: null,
              sicDescription: null,
              fiscalYearEnd: null,
              formerNames: []
            })
          )
          counts.companies++
          written++
        }
        const facts = yield* store.putFacts(cf.cik, cf.facts)
        counts.facts += facts
        return { cik: cf.cik, records: cf.facts.length, written: written + facts }
      }
      case "submissions": {
        const sub = yield* unwrap(parseSubmissions(text))
        const before = yield* store.company(sub.company.cik)
        const company = yield* withListedTickers(store, sub.company)
        let written = 0
        if (before === undefined || JSON.stringify(before) !== JSON.stringify(company)) {
          yield* store.putCompany(company)
          if (before === undefined) counts.companies++
          written++
        }
        const filings = yield* store.putFilings(sub.company.cik, sub.filings)
        counts.filings += filings
        const notes =
          sub.olderFiles.length > 0
            ? [
                `lists ${plural(sub.olderFiles.length, "older page")} (${sub.olderFiles.map((f) => f.name).join(", ")}): their filings load when those files are given too`
              ]
            : []
        return { cik: sub.company.cik, records: sub.filings.length, written: written + filings, notes }
      }
      case "submissions_page": {
        const m = SUBMISSIONS_PAGE_NAME.exec(basename(path))
        if (m === null) {
          return yield* Effect.fail(
            new FileProblem(
              "an older submissions page does not carry its company's CIK: keep the SEC's file name, CIK##########-submissions-###.json"
            )
          )
        }
        const cik = String(Number(m[1]))
        const filings = yield* unwrap(parseSubmissionsPage(text, cik))
        const written = yield* store.putFilings(cik, filings)
        counts.filings += written
        return { cik, records: filings.length, written }
      }
      case "company_tickers":
      case "company_tickers_exchange": {
        const entries = yield* unwrap(
          format === "company_tickers" ? parseCompanyTickers(text) : parseCompanyTickersExchange(text)
        )
        // `company_tickers.json` names no exchange: it adds the rows the store lacks and leaves the others (which
        // may know their exchange) alone; `company_tickers_exchange.json` adds and updates. Rows already stored as
        // they are are not written, so ingesting a list again writes nothing.
        const stored = new Map((yield* store.tickers).map((t) => [`${t.cik}|${t.ticker}`, t]))
        const latest = new Map(entries.map((e) => [`${e.cik}|${e.ticker}`, e]))
        const changed = [...latest].flatMap(([key, e]) => {
          const before = stored.get(key)
          if (before === undefined) return [e]
          if (format === "company_tickers") return []
          return before.name === e.name && before.exchange === e.exchange ? [] : [e]
        })
        if (changed.length > 0) yield* store.putTickers(changed)
        tickerIndexes.delete(store)
        const written = changed.length
        counts.tickers += written
        // Companies created from companyfacts, which names no ticker, take theirs from the list.
        const byCik = new Map<string, Array<(typeof entries)[number]>>()
        for (const e of entries) byCik.set(e.cik, [...(byCik.get(e.cik) ?? []), e])
        for (const company of yield* store.companies) {
          if (company.tickers.length === 0 && byCik.has(company.cik)) {
            yield* store.putCompany(yield* withListedTickers(store, company))
          }
        }
        return { cik: null, records: entries.length, written }
      }
      default:
        return yield* Effect.die(new Error(`not a JSON format: ${format}`))
    }
  })

const loadForm4 = (
  store: EquityStore["Service"],
  counts: IngestCounts,
  path: string,
  text: string
): Effect.Effect<Loaded, FileProblem> =>
  Effect.gen(function* () {
    const found = accessionFromPath(path)
    if (found === undefined) return yield* Effect.fail(new FileProblem(NEEDS_ACCESSION("Form 4")))
    // The document names its issuer; the filing date may come from the issuer's submissions feed.
    const draft = yield* unwrap(
      parseOwnershipDocument(text, { accession: found.accession, filedAt: found.filedAt ?? "1970-01-01" })
    )
    const filedAt = found.filedAt ?? (yield* storedFilingDate(store, [draft.issuerCik], found.accession))
    if (filedAt === undefined) {
      return yield* Effect.fail(
        new FileProblem(NEEDS_DATE("Form 4", found.accession, `its issuer (CIK ${draft.issuerCik})`), draft.issuerCik)
      )
    }
    const report: OwnershipReport = { ...draft, filedAt }
    const written = yield* store.putOwnershipReports([report])
    counts.ownershipReports += written
    return { cik: report.issuerCik, records: report.transactions.length, written }
  })

interface ThirteenFDocument {
  readonly path: string
  readonly format: "13f_information_table" | "13f_primary_document"
}

/** Groups 13F documents into filings: by the accession their paths carry, else by folder. */
const pairThirteenF = (documents: ReadonlyArray<ThirteenFDocument>) => {
  const groups = new Map<string, Array<ThirteenFDocument>>()
  for (const document of documents) {
    const found = accessionFromPath(document.path)
    const key = found === undefined ? `folder:${dirname(resolve(document.path))}` : `accession:${found.accession}`
    groups.set(key, [...(groups.get(key) ?? []), document])
  }
  return [...groups.values()]
}

const loadThirteenF = (
  store: EquityStore["Service"],
  counts: IngestCounts,
  group: ReadonlyArray<ThirteenFDocument>,
  label: (path: string) => string
): Effect.Effect<Loaded, FileProblem> =>
  Effect.gen(function* () {
    const primaries = group.filter((d) => d.format === "13f_primary_document")
    const tables = group.filter((d) => d.format === "13f_information_table")
    const names = group.map((d) => label(d.path)).join(", ")
    if (primaries.length !== 1 || tables.length !== 1) {
      if (primaries.length === 1 && tables.length === 0) {
        const cover = yield* unwrap(parseThirteenFPrimaryDocument(yield* readText(primaries[0]!.path)))
        if (cover.tableEntryTotal === null || cover.reportType === "13F NOTICE") {
          return yield* Effect.fail(
            new FileProblem(`skipped: a ${cover.form} notice holds no holdings`, cover.filerCik)
          )
        }
      }
      return yield* Effect.fail(
        new FileProblem(
          `a 13F filing is one primary document and one information table, in one folder carrying the accession or each named with it; found ${plural(primaries.length, "primary document")} and ${plural(tables.length, "information table")} together (${names})`
        )
      )
    }
    const primaryPath = primaries[0]!.path
    const tablePath = tables[0]!.path
    const cover = yield* unwrap(parseThirteenFPrimaryDocument(yield* readText(primaryPath)))
    const tableText = yield* readText(tablePath)
    // Values as written (the unit is decided below, once the filing date is known).
    const asWritten = yield* unwrap(
      parseThirteenFInformationTable(tableText, ThirteenFDollarValuesFrom, { valueUnit: "dollars" })
    )
    if (cover.tableEntryTotal !== null && cover.tableEntryTotal !== asWritten.length) {
      const sum = checkThirteenFTotals(cover, asWritten, ThirteenFDollarValuesFrom).holdingsValueUsd
      return yield* Effect.fail(
        new FileProblem(
          `the primary document (${label(primaryPath)}, ${cover.filerName}, period ${cover.reportPeriod}) states ${plural(cover.tableEntryTotal, "holding")} with a total value of ${cover.tableValueTotal ?? "(none)"}, the information table (${label(tablePath)}) holds ${plural(asWritten.length, "row")} totalling ${sum} (values as written): they are not one filing`,
          cover.filerCik
        )
      )
    }
    const found = accessionFromPath(tablePath) ?? accessionFromPath(primaryPath)
    if (found === undefined) return yield* Effect.fail(new FileProblem(NEEDS_ACCESSION("13F filing"), cover.filerCik))
    const filedAt =
      accessionFromPath(primaryPath)?.filedAt ??
      found.filedAt ??
      (yield* storedFilingDate(store, [cover.filerCik], found.accession))
    if (filedAt === undefined) {
      return yield* Effect.fail(
        new FileProblem(
          NEEDS_DATE("13F filing", found.accession, `its manager (CIK ${cover.filerCik})`),
          cover.filerCik
        )
      )
    }
    const notes: Array<string> = []
    let unit: "thousands" | "dollars" | undefined
    if (filedAt < ThirteenFDollarValuesFrom) {
      if (thirteenFImpliedValueUnit(asWritten) === "dollars") {
        unit = "dollars"
        notes.push(
          `filed ${filedAt}, before values became dollars (${ThirteenFDollarValuesFrom}), but the prices its values imply say dollars: read as dollars`
        )
      }
    }
    const holdings = yield* unwrap(
      parseThirteenFInformationTable(tableText, filedAt, unit === undefined ? {} : { valueUnit: unit })
    )
    const check = checkThirteenFTotals(cover, holdings, filedAt)
    if (check.tableValueTotalUsd !== null && !check.valueMatches) {
      notes.push(
        `the holdings sum to $${check.holdingsValueUsd}, the primary document states $${check.tableValueTotalUsd}`
      )
    }
    const report: HoldingsReport = {
      filerCik: cover.filerCik,
      filerName: cover.filerName,
      accession: found.accession,
      form: cover.form,
      filedAt,
      reportPeriod: cover.reportPeriod,
      holdings
    }
    const written = yield* store.putHoldingsReports([report])
    counts.holdingsReports += written
    return { cik: cover.filerCik, records: holdings.length, written, notes }
  })

/** Progress of one ingest: how far, and what the last file gave. */
const stepName = (result: IngestFileResult): string =>
  result.status === "loaded" || result.status === "partial"
    ? `${result.path}: ${result.format}, ${plural(result.records, "record")}, ${plural(result.written, "new row")}`
    : `${result.path}: ${result.status} (${(result.reason ?? "").slice(0, 80)}${(result.reason ?? "").length > 80 ? "…" : ""})`

/**
 * Ingests SEC files and directories into the store. JSON files are read first, in the order found; Form 4 and
 * 13F documents after them, so a submissions feed given in the same run supplies their filing dates.
 */
export const ingestSec = (
  store: EquityStore["Service"],
  paths: ReadonlyArray<string>,
  progress: ProgressFactory
): Effect.Effect<IngestSummary> =>
  Effect.gen(function* () {
    const { files, missing, ignored } = expandPaths(paths)
    const cwd = process.cwd()
    const label = (path: string) => {
      const r = relative(cwd, path)
      return r === "" || r.startsWith("..") ? path : r
    }
    const counts = emptyCounts()
    const results: Array<IngestFileResult> = missing.map((path) => ({
      path,
      format: null,
      status: "failed",
      reason: "no such file or directory",
      cik: null,
      records: 0,
      written: 0,
      notes: [],
      ...noRefusals
    }))
    const bar = progress("ingesting", files.length)
    const record = (
      path: string,
      format: IngestFileResult["format"],
      started: number,
      outcome: Result.Result<Loaded, FileProblem>
    ) => {
      const result: IngestFileResult = Result.isSuccess(outcome)
        ? {
            path: label(path),
            format,
            status: "loaded",
            reason: null,
            cik: outcome.success.cik,
            records: outcome.success.records,
            written: outcome.success.written,
            notes: outcome.success.notes ?? [],
            ...noRefusals
          }
        : {
            path: label(path),
            format,
            status: outcome.failure.reason.startsWith("skipped: ") ? "skipped" : "failed",
            reason: outcome.failure.reason.replace(/^skipped: /, ""),
            cik: outcome.failure.cik,
            records: 0,
            written: 0,
            notes: [],
            ...noRefusals
          }
      results.push(result)
      bar.stepDone(stepName(result), performance.now() - started)
    }
    const deferred: Array<{ readonly path: string; readonly format: SecFormat }> = []
    yield* Effect.gen(function* () {
      for (const path of files) {
        const started = performance.now()
        const text = yield* Effect.result(readText(path))
        if (Result.isFailure(text)) {
          record(path, null, started, Result.fail(text.failure))
          continue
        }
        const format = detectSecFormat(text.success)
        if (format === null) {
          record(
            path,
            null,
            started,
            Result.fail(
              new FileProblem(
                text.success.trim() === ""
                  ? "the file is empty"
                  : "not an SEC format this command reads (companyfacts, submissions or an older page, Form 4, 13F primary document or information table, company_tickers.json, company_tickers_exchange.json); if it is one, it is truncated or malformed"
              )
            )
          )
          continue
        }
        if (format === "form4" || format === "13f_information_table" || format === "13f_primary_document") {
          deferred.push({ path, format })
          continue
        }
        record(path, format, started, yield* Effect.result(loadJson(store, counts, path, text.success, format)))
      }
      for (const { path, format } of deferred.filter((d) => d.format === "form4")) {
        const started = performance.now()
        const outcome = yield* Effect.result(
          Effect.flatMap(readText(path), (text) => loadForm4(store, counts, path, text))
        )
        record(path, format, started, outcome)
      }
      const thirteenF = deferred.filter((d) => d.format !== "form4") as Array<ThirteenFDocument>
      for (const group of pairThirteenF(thirteenF)) {
        const started = performance.now()
        const outcome = yield* Effect.result(loadThirteenF(store, counts, group, label))
        for (const document of group) record(document.path, document.format, started, outcome)
      }
    }).pipe(Effect.ensuring(Effect.sync(() => bar.stop())))
    return summarize(results, ignored, counts, ".json or .xml")
  })

const noRefusals = { refused: 0, refusedByReason: {}, refusedRows: [], warnings: [] } as const

const summarize = (
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

// ---------------------------------------------------------------------------------------------------------------
// Daily prices
// ---------------------------------------------------------------------------------------------------------------

const PRICE_COLUMNS = ["date", "open", "high", "low", "close", "volume"] as const

/** Splits one CSV line (RFC 4180 quoting). */
const csvCells = (line: string): Array<string> => {
  const cells: Array<string> = []
  let cell = ""
  let quoted = false
  for (let i = 0; i < line.length; i++) {
    const ch = line[i] as string
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        cell += '"'
        i++
      } else if (ch === '"') quoted = false
      else cell += ch
    } else if (ch === '"') quoted = true
    else if (ch === ",") {
      cells.push(cell)
      cell = ""
    } else cell += ch
  }
  cells.push(cell)
  return cells.map((c) => c.trim())
}

/** One good row of a price CSV. */
export interface PriceRow {
  readonly line: number
  /** The row's company as the file names it (its `id` or `ticker` column, upper-cased), or null without one. */
  readonly company: string | null
  readonly bar: Equity.DailyBar
  /** Why the US market calendar has the market closed that day, when it does (the row is kept all the same). */
  readonly closed: string | null
}

/**
 * Parses a daily price CSV: its good rows and a reason for each bad row (by line number). A column named `id`
 * (`eq:<cik>:<ticker>`) or `ticker` (or `symbol`) names each row's company, so one file can carry several.
 * A row dated on a weekday the calendar has closed (a holiday or one-off closure) is kept, marked `closed`: the
 * source published it, and the calendar is the likelier of the two to be wrong. A weekend date is refused.
 */
export const parsePriceCsv = (
  text: string
):
  | {
      readonly rows: ReadonlyArray<PriceRow>
      readonly bars: ReadonlyArray<Equity.DailyBar>
      /** The refused rows, as `line N: detail`. */
      readonly bad: ReadonlyArray<string>
      readonly refusals: ReadonlyArray<RefusedRow>
      readonly keyed: boolean
    }
  | { readonly error: string } => {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/)
  const headerIndex = lines.findIndex((l) => l.trim() !== "")
  if (headerIndex < 0) return { error: "the file is empty" }
  const header = csvCells(lines[headerIndex] as string).map((h) => h.toLowerCase())
  const at = Object.fromEntries(PRICE_COLUMNS.map((c) => [c, header.indexOf(c)])) as Record<
    (typeof PRICE_COLUMNS)[number],
    number
  >
  const absent = PRICE_COLUMNS.filter((c) => at[c] < 0)
  if (absent.length > 0) {
    return {
      error: `the header (line ${headerIndex + 1}) lacks ${absent.join(", ")}: a price CSV starts with a header naming date, open, high, low, close, volume`
    }
  }
  const keyAt = ["id", "ticker", "symbol"].map((c) => header.indexOf(c)).find((i) => i >= 0) ?? -1
  const rows: Array<PriceRow> = []
  const refusals: Array<RefusedRow> = []
  const seen = new Map<string, number>()
  for (let i = headerIndex + 1; i < lines.length; i++) {
    const line = lines[i] as string
    if (line.trim() === "") continue
    const lineNo = i + 1
    const cells = csvCells(line)
    const date = cells[at.date] ?? ""
    const company = keyAt < 0 ? null : (cells[keyAt] ?? "").toUpperCase().replace(/^EQ:/, "eq:")
    const why = (reason: RefusalReason, detail: string) => refusals.push({ line: lineNo, reason, detail })
    if (company === "") {
      why("no_company", "names no company")
      continue
    }
    if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || Number.isNaN(Date.parse(`${date}T00:00:00Z`))) {
      why("bad_date", `date ${JSON.stringify(date)} is not YYYY-MM-DD`)
      continue
    }
    const closed = Equity.closedReason(Equity.dayOf(date)) ?? null
    if (closed === "Saturday" || closed === "Sunday") {
      why("weekend", `${date} is a ${closed}: US markets do not trade at weekends`)
      continue
    }
    const key = `${company ?? ""}|${date}`
    if (seen.has(key)) {
      why("repeated_date", `${company === null ? "" : `${company} `}${date} repeats line ${seen.get(key)}`)
      continue
    }
    const values: Record<string, number> = {}
    let problem: string | undefined
    for (const column of ["open", "high", "low", "close", "volume"] as const) {
      const cell = (cells[at[column]] ?? "").replaceAll("_", "")
      const n = /^[+]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(cell) ? Number(cell) : Number.NaN
      if (!Number.isFinite(n)) {
        problem = `${column} ${JSON.stringify(cells[at[column]] ?? "")} is not a number 0 or more`
        break
      }
      values[column] = n
    }
    if (problem !== undefined) {
      why("not_a_number", problem)
      continue
    }
    const { open: o, high: h, low: l, close: c, volume: v } = values as Record<string, number>
    if (!(o! > 0 && h! > 0 && l! > 0 && c! > 0)) why("not_positive", "prices must be above 0")
    else if (h! < Math.max(o!, c!, l!)) why("high_below_range", `high ${h} is below open, close or low`)
    else if (l! > Math.min(o!, c!)) why("low_above_range", `low ${l} is above open or close`)
    else {
      seen.set(key, lineNo)
      rows.push({
        line: lineNo,
        company,
        bar: { tMs: Equity.sessionOpenMs(date), o: o!, h: h!, l: l!, c: c!, v: v! },
        closed
      })
    }
  }
  return {
    rows,
    bars: rows.map((r) => r.bar).sort((a, b) => a.tMs - b.tMs),
    bad: refusals.map((r) => `line ${r.line}: ${r.detail}`),
    refusals,
    keyed: keyAt >= 0
  }
}

/** Where a company named by ID or ticker is in the store: its CIK and the ID, or why it cannot be used. */
const resolveCompany = (
  store: EquityStore["Service"],
  name: string
): Effect.Effect<{ readonly cik: string; readonly id: string } | { readonly problem: string }> =>
  Effect.gen(function* () {
    const byId = Equity.parseEquityId(name)
    if (name.startsWith("eq:") && byId === undefined)
      return { problem: `${name} is not an equity ID like eq:320193:AAPL` }
    const candidates =
      byId !== undefined
        ? [byId.cik]
        : [
            ...new Set([
              ...(yield* store.companies).filter((c) => c.tickers.includes(name)).map((c) => c.cik),
              ...(yield* store.tickers).filter((t) => t.ticker === name).map((t) => t.cik)
            ])
          ]
    // A company of the ticker list (or one a Form 4 names) is an asset before any of its filings is in.
    const known: Array<Company> = []
    for (const cik of candidates) {
      const issuer = yield* store.issuer(cik)
      if (issuer !== undefined) known.push(issuer.company)
    }
    if (known.length === 0) {
      return {
        problem:
          byId === undefined
            ? `no company in the store trades as ${name}: ingest the ticker list (or its submissions or companyfacts) first`
            : `the store has no company with CIK ${byId.cik}: ingest the ticker list (or its submissions or companyfacts) first`
      }
    }
    if (known.length > 1) {
      return {
        problem: `${name} is the ticker of several companies (CIK ${known.map((c) => c.cik).join(", ")}): name it by ID, eq:<cik>:<ticker>`
      }
    }
    const company = known[0] as Company
    const ticker = byId?.ticker ?? name
    const listed = (yield* listedTickers(store, company.cik)).map((t) => t.ticker)
    if (!company.tickers.includes(ticker) && !listed.includes(ticker)) {
      return {
        problem: `${company.name} (CIK ${company.cik}) trades as ${[...new Set([...company.tickers, ...listed])].join(", ") || "no known ticker"}, not ${ticker}`
      }
    }
    return { cik: company.cik, id: `eq:${company.cik}:${ticker}` }
  })

/** A day the calendar has closed, as the report words it. */
const closedDayWarning = (rows: ReadonlyArray<PriceRow>): Array<string> => {
  const closed = rows.filter((r) => r.closed !== null)
  if (closed.length === 0) return []
  const shown = closed.slice(0, 10).map((r) => `${Equity.newYorkDate(r.bar.tMs)} (${r.closed}, line ${r.line})`)
  return [
    `${plural(closed.length, "row")} on a day the US market calendar has closed, kept as the source published ${closed.length === 1 ? "it" : "them"}: ${shown.join(", ")}${closed.length > shown.length ? `, and ${closed.length - shown.length} more` : ""}`
  ]
}

/** The refused rows by reason. */
const countByReason = (refusals: ReadonlyArray<RefusedRow>): Record<string, number> => {
  const out: Record<string, number> = {}
  for (const r of refusals) out[r.reason] = (out[r.reason] ?? 0) + 1
  return out
}

/** Loads one price CSV (see `ingestPrices`). */
const ingestPriceFile = (
  store: EquityStore["Service"],
  counts: IngestCounts,
  path: string,
  target: { readonly cik: string; readonly id: string } | undefined
): Effect.Effect<IngestFileResult> =>
  Effect.gen(function* () {
    const fail = (reason: string, cik: string | null = target?.cik ?? null): IngestFileResult => ({
      path,
      format: "prices",
      status: "failed",
      reason,
      cik,
      records: 0,
      written: 0,
      notes: [],
      ...noRefusals
    })
    const text = yield* Effect.result(readText(path))
    if (Result.isFailure(text)) return fail(text.failure.reason)
    const parsed = parsePriceCsv(text.success)
    if ("error" in parsed) return fail(parsed.error)
    if (target === undefined && !parsed.keyed) {
      return fail(
        "the CSV names no company: give --id eq:<cik>:<ticker>, or an id (eq:<cik>:<ticker>) or ticker column"
      )
    }
    const refusals = [...parsed.refusals]
    const byCik = new Map<string, Array<PriceRow>>()
    const resolved = new Map<string, { readonly cik: string; readonly id: string } | { readonly problem: string }>()
    for (const row of parsed.rows) {
      let cik: string
      if (target !== undefined) {
        // With --id, a row naming its company must name that one.
        const tid = Equity.parseEquityId(target.id)!
        if (row.company !== null && row.company !== target.id && row.company !== tid.ticker) {
          refusals.push({ line: row.line, reason: "other_company", detail: `is for ${row.company}, not ${target.id}` })
          continue
        }
        cik = target.cik
      } else {
        const name = row.company as string
        let found = resolved.get(name)
        if (found === undefined) {
          found = yield* resolveCompany(store, name)
          resolved.set(name, found)
        }
        if ("problem" in found) {
          refusals.push({ line: row.line, reason: "unknown_company", detail: found.problem })
          continue
        }
        cik = found.cik
      }
      byCik.set(cik, [...(byCik.get(cik) ?? []), row])
    }
    refusals.sort((a, b) => a.line - b.line)
    const bad = refusals.map((r) => `line ${r.line}: ${r.detail}`)
    const refusedFields = {
      refused: refusals.length,
      refusedByReason: countByReason(refusals),
      refusedRows: refusals
    }
    const loadedRows = [...byCik.values()].flat()
    const only = byCik.size === 1 ? ([...byCik.keys()][0] as string) : (target?.cik ?? null)
    if (loadedRows.length === 0) {
      return {
        ...fail(`no good rows${bad.length > 0 ? `: ${bad.join("; ")}` : ""}`, only),
        ...refusedFields
      }
    }
    let written = 0
    for (const [cik, rows] of byCik) {
      const before = (yield* store.issuer(cik))?.coverage.bars ?? 0
      yield* store.putBars(
        cik,
        rows.map((r) => r.bar).sort((a, b) => a.tMs - b.tMs)
      )
      written += ((yield* store.issuer(cik))?.coverage.bars ?? 0) - before
    }
    counts.bars += written
    return {
      path,
      format: "prices",
      status: refusals.length > 0 ? "partial" : "loaded",
      reason: refusals.length > 0 ? `${plural(refusals.length, "bad row")} not loaded (${bad.join("; ")})` : null,
      cik: only,
      records: loadedRows.length,
      written,
      notes: byCik.size > 1 ? [`daily bars of ${byCik.size} companies (CIK ${[...byCik.keys()].join(", ")})`] : [],
      ...refusedFields,
      warnings: closedDayWarning(loadedRows)
    }
  })

/**
 * Loads daily price CSVs (files, or the `.csv` files of directories, walked recursively): every row for the
 * company `id` names, or, without `id`, each row for the company its `id` or `ticker` column names. Each file
 * loads its good rows; its refused rows are counted by reason and named by line.
 */
export const ingestPrices = (
  store: EquityStore["Service"],
  paths: string | ReadonlyArray<string>,
  id: string | undefined
): Effect.Effect<IngestSummary> =>
  Effect.gen(function* () {
    const counts = emptyCounts()
    const { files, missing, ignored } = expandPaths(typeof paths === "string" ? [paths] : paths, /\.csv$/i)
    const results: Array<IngestFileResult> = missing.map((path) => ({
      path,
      format: "prices",
      status: "failed",
      reason: "no such file or directory",
      cik: null,
      records: 0,
      written: 0,
      notes: [],
      ...noRefusals
    }))
    let target: { readonly cik: string; readonly id: string } | undefined
    if (id !== undefined) {
      const found = yield* resolveCompany(store, id)
      if ("problem" in found) {
        const cik = Equity.parseEquityId(id)?.cik ?? null
        for (const path of files) {
          results.push({
            path,
            format: "prices",
            status: "failed",
            reason: found.problem,
            cik,
            records: 0,
            written: 0,
            notes: [],
            ...noRefusals
          })
        }
        return summarize(results, ignored, counts, ".csv")
      }
      target = found
    }
    for (const path of files) results.push(yield* ingestPriceFile(store, counts, path, target))
    return summarize(results, ignored, counts, ".csv")
  })

// ---------------------------------------------------------------------------------------------------------------
// The command
// ---------------------------------------------------------------------------------------------------------------

export interface IngestArgs {
  readonly positional: ReadonlyArray<string>
  readonly flags: ReadonlyMap<string, string | true>
}

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

const storeNeeded = new ConfigProblem(
  "`ingest` writes into a database the server reads: DATABASE_URL=memory lives inside one process. Use the embedded store (DATABASE_URL unset, with the server stopped) or PostgreSQL."
)

/**
 * `ingest sec <file-or-dir>... [--json]` and `ingest prices <csv-or-dir>... [--id eq:<cik>:<ticker>] [--json]`;
 * the exit code follows `ingestExitCode`.
 */
export const ingestCommand = (
  args: IngestArgs,
  io: IngestIo,
  progress: ProgressFactory,
  config?: AppConfig
): Effect.Effect<number, IngestUsage | ConfigProblem> =>
  Effect.gen(function* () {
    const [, sub, ...rest] = args.positional
    const json = args.flags.get("json") === true
    const allowed = sub === "prices" ? ["json", "id"] : ["json"]
    for (const name of args.flags.keys()) {
      if (!allowed.includes(name)) return yield* Effect.fail(new IngestUsage(`unknown option --${name}`))
    }
    if (sub !== "sec" && sub !== "prices") {
      return yield* Effect.fail(
        new IngestUsage(`unknown ingest command ${JSON.stringify(sub ?? "")}; use sec or prices`)
      )
    }
    if (rest.length === 0) {
      return yield* Effect.fail(
        new IngestUsage(
          sub === "sec" ? "ingest sec needs files or directories" : "ingest prices needs CSV files or directories"
        )
      )
    }
    let id: string | undefined
    if (sub === "prices") {
      const flag = args.flags.get("id")
      if (flag !== undefined && (flag === true || Equity.parseEquityId(flag) === undefined)) {
        return yield* Effect.fail(
          new IngestUsage(`--id ${JSON.stringify(flag === true ? "" : flag)} is not an equity ID like eq:320193:AAPL`)
        )
      }
      id = flag === undefined ? undefined : flag
    }
    const cfg = config ?? (yield* loadConfig)
    if (cfg.store._tag === "Memory") return yield* Effect.fail(storeNeeded)
    // Info logs (migrations applied on a new store) would mix with the data on stdout.
    return yield* Effect.scoped(
      Effect.gen(function* () {
        const stores = yield* openStores(cfg).pipe(Effect.provideService(References.MinimumLogLevel, "Warn"))
        if (stores.database === undefined) return yield* Effect.fail(storeNeeded)
        const store = makePgEquityStore(stores.database)
        const summary =
          sub === "sec"
            ? yield* ingestSecWithArchives(stores.database, store, rest, progress, (files) =>
                ingestSec(store, files, progress)
              )
            : yield* ingestPrices(store, rest, id)
        return reportIngest(summary, stores.description, json, io)
      })
    )
  })
