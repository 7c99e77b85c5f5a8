/**
 * `ingest sec`: SEC files recognised by their content (companyfacts, submissions and their older pages, Form 4,
 * 13F primary documents and information tables, both ticker lists), JSON files first, then the documents whose
 * filing dates the submissions feeds supply (see `../Ingest.ts` for the rules).
 */
import { basename, dirname, relative, resolve } from "node:path"
import type { Company, EquityStore, HoldingsReport, OwnershipReport, TickerEntry } from "@market-data/core"
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
import { Effect, Result } from "effect"
import type { ProgressFactory } from "../Progress.ts"
import { accessionFromPath, expandPaths, FileProblem, readText } from "./Files.ts"
import {
  emptyCounts,
  type IngestCounts,
  type IngestFileResult,
  type IngestSummary,
  noRefusals,
  plural,
  summarize
} from "./Summary.ts"

const SUBMISSIONS_PAGE_NAME = /^CIK(\d{10})-submissions-\d+\.json$/i

const unwrap = <A>(
  result: Result.Result<A, { readonly format: string; readonly message: string }>
): Effect.Effect<A, FileProblem> =>
  Result.isSuccess(result)
    ? Effect.succeed(result.success)
    : Effect.fail(new FileProblem(`not a valid ${result.failure.format} document: ${result.failure.message}`))

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

export const listedTickers = (store: EquityStore["Service"], cik: string) =>
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
