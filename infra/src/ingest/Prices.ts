/**
 * `ingest prices`: daily price CSVs (see `../Ingest.ts` for the format), each row for the ticker `--id` names or the
 * one its `id` or `ticker` column names (each ticker of a company is its own series: the rows load under that
 * ticker); good rows load, refused rows are counted by reason and named by line.
 */
import { type Company, Equity, type EquityStore } from "@market-data/core"
import { parse } from "csv-parse/sync"
import { Effect, Result } from "effect"
import { expandPaths, readText } from "./Files.ts"
import { listedTickers } from "./Sec.ts"
import {
  emptyCounts,
  type IngestCounts,
  type IngestFileResult,
  type IngestSummary,
  noRefusals,
  plural,
  type RefusalReason,
  type RefusedRow,
  summarize
} from "./Summary.ts"

const PRICE_COLUMNS = ["date", "open", "high", "low", "close", "volume"] as const

/** One record of a CSV: its cells (trimmed) and the line it starts on. */
interface CsvRecord {
  readonly line: number
  readonly cells: ReadonlyArray<string>
}

/** The line a record starts on, from the line it ends on and its raw text. */
const startLine = (endLine: number, raw: string): number => {
  const text = raw.replace(/\n$/, "")
  let n = 0
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) n++
  return endLine - n
}

/**
 * The records of a CSV (RFC 4180, by `csv-parse`): a quoted cell may hold commas, doubled quotes and line breaks;
 * cells are trimmed (around their quotes too); a byte-order mark is dropped; blank lines are skipped. A file the
 * grammar refuses (a quote never closed, text after a closing quote) has no trustworthy rows after the fault:
 * its reason, with the line, instead.
 */
const csvRecords = (text: string): Array<CsvRecord> | { readonly error: string } => {
  let records: ReadonlyArray<{
    readonly record: ReadonlyArray<string>
    readonly raw: string
    readonly info: { readonly lines: number }
  }>
  try {
    records = parse(text.replace(/\r\n/g, "\n"), {
      bom: true,
      trim: true,
      relax_column_count: true,
      relax_quotes: true,
      record_delimiter: "\n",
      info: true,
      raw: true
    }) as unknown as typeof records
  } catch (e) {
    return { error: `not a well-formed CSV (RFC 4180), nothing loaded: ${e instanceof Error ? e.message : String(e)}` }
  }
  const out: Array<CsvRecord> = []
  for (const r of records) {
    if (r.raw.trim() === "") continue
    out.push({ line: startLine(r.info.lines, r.raw), cells: r.record })
  }
  return out
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
  const records = csvRecords(text)
  if ("error" in records) return records
  const headerRecord = records[0]
  if (headerRecord === undefined) return { error: "the file is empty" }
  const header = headerRecord.cells.map((h) => h.toLowerCase())
  const at = Object.fromEntries(PRICE_COLUMNS.map((c) => [c, header.indexOf(c)])) as Record<
    (typeof PRICE_COLUMNS)[number],
    number
  >
  const absent = PRICE_COLUMNS.filter((c) => at[c] < 0)
  if (absent.length > 0) {
    return {
      error: `the header (line ${headerRecord.line}) lacks ${absent.join(", ")}: a price CSV starts with a header naming date, open, high, low, close, volume`
    }
  }
  const keyAt = ["id", "ticker", "symbol"].map((c) => header.indexOf(c)).find((i) => i >= 0) ?? -1
  const rows: Array<PriceRow> = []
  const refusals: Array<RefusedRow> = []
  const seen = new Map<string, number>()
  for (const record of records.slice(1)) {
    const lineNo = record.line
    const cells = record.cells
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
    // Rows by the asset they load into (`eq:<cik>:<ticker>`): each ticker is its own series.
    const byId = new Map<string, { readonly cik: string; readonly ticker: string; readonly rows: Array<PriceRow> }>()
    const resolved = new Map<string, { readonly cik: string; readonly id: string } | { readonly problem: string }>()
    for (const row of parsed.rows) {
      let into: { readonly cik: string; readonly id: string }
      if (target !== undefined) {
        // With --id, a row naming its company must name that one.
        const tid = Equity.parseEquityId(target.id)!
        if (row.company !== null && row.company !== target.id && row.company !== tid.ticker) {
          refusals.push({ line: row.line, reason: "other_company", detail: `is for ${row.company}, not ${target.id}` })
          continue
        }
        into = target
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
        into = found
      }
      let group = byId.get(into.id)
      if (group === undefined) {
        group = { cik: into.cik, ticker: Equity.parseEquityId(into.id)!.ticker, rows: [] }
        byId.set(into.id, group)
      }
      group.rows.push(row)
    }
    refusals.sort((a, b) => a.line - b.line)
    const bad = refusals.map((r) => `line ${r.line}: ${r.detail}`)
    const refusedFields = {
      refused: refusals.length,
      refusedByReason: countByReason(refusals),
      refusedRows: refusals
    }
    const loadedRows = [...byId.values()].flatMap((g) => g.rows)
    const ciks = [...new Set([...byId.values()].map((g) => g.cik))]
    const only = ciks.length === 1 ? (ciks[0] as string) : (target?.cik ?? null)
    if (loadedRows.length === 0) {
      return {
        ...fail(`no good rows${bad.length > 0 ? `: ${bad.join("; ")}` : ""}`, only),
        ...refusedFields
      }
    }
    let written = 0
    for (const { cik, ticker, rows } of byId.values()) {
      const before = (yield* store.issuer(cik))?.coverage.bars ?? 0
      yield* store.putBars(
        cik,
        ticker,
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
      notes: byId.size > 1 ? [`daily bars of ${byId.size} tickers (${[...byId.keys()].join(", ")})`] : [],
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
