/**
 * `market-data ingest sec <archive.zip>`: the SEC's bulk archives, `companyfacts.zip` and `submissions.zip` (one
 * JSON document per company, `CIK##########.json`; `submissions.zip` also holds the older pages,
 * `CIK##########-submissions-###.json`), read as downloaded: never extracted to disk.
 *
 * - The archive is read through its central directory (`yauzl`): every entry's name, CRC-32 and sizes are known
 *   before anything is inflated, which gives the progress bar its total and lets a restarted ingest skip the
 *   entries already loaded unchanged (same name, CRC-32 and size as the mark stored with the company).
 * - Entries are inflated one at a time, in memory, the CRC-32 checked (`yauzl` does not) and the sizes checked
 *   against the directory; an entry is parsed by the same parsers as the per-file ingest and written by the
 *   `BulkLoader` (`COPY` on PostgreSQL and PGlite) in one transaction with its mark. A bad entry (corrupt,
 *   truncated, not valid JSON, not the expected document) is named with its reason and writes nothing; the
 *   others load; the ingest exits 1 at the end (`ingestExitCode`).
 * - Memory stays bounded by the largest entry (one entry's text and parse tree at a time); an entry over
 *   `MAX_ENTRY_BYTES` uncompressed is refused rather than risking the process.
 */
import { basename, relative } from "node:path"
import { crc32 } from "node:zlib"
import type {
  BulkCompanyEntry,
  BulkLoader,
  BulkWritten,
  Company,
  EquityStore,
  Fact,
  Filing,
  TickerEntry
} from "@market-data/core"
import { type Database, makePgBulkLoader } from "@market-data/postgres"
import { parseCompanyFacts, parseSubmissions, parseSubmissionsPage } from "@market-data/sources"
import { Effect, Fiber, Result } from "effect"
import yauzl from "yauzl"
import type { ProgressFactory } from "../Progress.ts"
import type { IngestCounts, IngestFileResult, IngestSummary } from "./Summary.ts"

/** An entry larger than this (uncompressed) is refused: the biggest companyfacts document is far below it. */
export const MAX_ENTRY_BYTES = 512 * 1024 * 1024

/**
 * Entries up to this size (uncompressed) are parsed while the previous one is written; a larger one is parsed only
 * once the previous is written, so memory holds one large entry at a time (a 44 MB companyfacts document peaks the
 * process at about 1.3 GB; the largest real ones are of that order).
 */
const OVERLAP_MAX_BYTES = 8 * 1024 * 1024

const MAIN_ENTRY = /^CIK\d{10}\.json$/i
const PAGE_ENTRY = /^CIK(\d{10})-submissions-\d+\.json$/i

/** A path ingested as a bulk archive. */
export const isArchivePath = (path: string): boolean => /\.zip$/i.test(path)

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/** Why one entry was refused. */
class EntryProblem {
  readonly _tag = "EntryProblem"
  readonly reason: string
  constructor(reason: string) {
    this.reason = reason
  }
}

/** The entry's bytes, inflated in memory, with its CRC-32 checked against the central directory. */
const readEntry = (zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Buffer | EntryProblem> =>
  new Promise((resolveRead) => {
    if (entry.uncompressedSize > MAX_ENTRY_BYTES) {
      resolveRead(
        new EntryProblem(
          `too large: ${plural(entry.uncompressedSize, "byte")} uncompressed, over the ${plural(MAX_ENTRY_BYTES, "byte")} an entry may have`
        )
      )
      return
    }
    if (!entry.canDecodeFileData()) {
      resolveRead(
        new EntryProblem(
          entry.isEncrypted()
            ? "encrypted: cannot be read"
            : `compressed with method ${entry.compressionMethod}, which is not deflate: cannot be read`
        )
      )
      return
    }
    zip.openReadStream(entry, (err, stream) => {
      if (err !== null) {
        resolveRead(new EntryProblem(`corrupt: ${err.message}`))
        return
      }
      const chunks: Array<Buffer> = []
      let crc = 0
      stream.on("data", (chunk: Buffer) => {
        chunks.push(chunk)
        crc = crc32(chunk, crc)
      })
      stream.on("error", (e) => resolveRead(new EntryProblem(`corrupt: ${message(e)}`)))
      stream.on("end", () => {
        if (crc >>> 0 !== entry.crc32 >>> 0) {
          resolveRead(
            new EntryProblem(
              `corrupt: its data's CRC-32 is ${hex(crc)}, the archive's directory says ${hex(entry.crc32)}`
            )
          )
        } else resolveRead(Buffer.concat(chunks))
      })
    })
  })

const hex = (n: number) => (n >>> 0).toString(16).padStart(8, "0")

/** The company rows an entry gives, parsed by the per-file ingest's parsers. */
const parseEntry = (
  name: string,
  text: string
):
  | {
      readonly kind: "companyfacts" | "submissions" | "submissions_page"
      readonly cik: string
      readonly company: Company | null
      readonly facts: ReadonlyArray<Fact>
      readonly filings: ReadonlyArray<Filing>
      readonly notes: ReadonlyArray<string>
    }
  | EntryProblem => {
  const page = PAGE_ENTRY.exec(name)
  if (page !== null) {
    const cik = String(Number(page[1]))
    const filings = parseSubmissionsPage(text, cik)
    if (Result.isFailure(filings))
      return new EntryProblem(`not a valid ${filings.failure.format} document: ${filings.failure.message}`)
    return { kind: "submissions_page", cik, company: null, facts: [], filings: filings.success, notes: [] }
  }
  // companyfacts names its company `entityName`, near the start; the submissions feed never carries that key.
  if (text.slice(0, 4096).includes('"entityName"')) {
    const cf = parseCompanyFacts(text)
    if (Result.isFailure(cf))
      return new EntryProblem(`not a valid ${cf.failure.format} document: ${cf.failure.message}`)
    const { cik, entityName, facts } = cf.success
    return {
      kind: "companyfacts",
      cik,
      company: {
        cik,
        name: entityName,
        tickers: [],
        exchanges: [],
        sic: null,
        sicDescription: null,
        fiscalYearEnd: null,
        formerNames: []
      },
      facts,
      filings: [],
      notes: []
    }
  }
  const sub = parseSubmissions(text)
  if (Result.isFailure(sub))
    return new EntryProblem(`not a valid ${sub.failure.format} document: ${sub.failure.message}`)
  return {
    kind: "submissions",
    cik: sub.success.company.cik,
    company: sub.success.company,
    facts: [],
    filings: sub.success.filings,
    notes:
      sub.success.olderFiles.length > 0
        ? [`lists ${plural(sub.success.olderFiles.length, "older page")}: they load from the same archive`]
        : []
  }
}

/** The loader over any `EquityStore` (the memory twin): the same rules, marks kept beside it. */
export const makeStoreBulkLoader = (store: EquityStore["Service"]): BulkLoader => {
  const marks = new Map<string, Map<string, { readonly crc32: number; readonly size: number }>>()
  return {
    method: "EquityStore writes (memory)",
    marks: (archive) => Effect.sync(() => new Map(marks.get(archive) ?? [])),
    load: (entry) =>
      Effect.gen(function* () {
        let companies = 0
        if (entry.company !== null) {
          const before = yield* store.company(entry.cik)
          if (before === undefined) companies = 1
          if (entry.company.mode === "replace" || before === undefined) yield* store.putCompany(entry.company.value)
        }
        const facts = entry.facts.length === 0 ? 0 : yield* store.putFacts(entry.cik, entry.facts)
        const filings = entry.filings.length === 0 ? 0 : yield* store.putFilings(entry.cik, entry.filings)
        const m = entry.mark
        const forArchive = marks.get(m.archive) ?? new Map()
        forArchive.set(m.entry, { crc32: m.crc32, size: m.size })
        marks.set(m.archive, forArchive)
        return { companies, facts, filings } satisfies BulkWritten
      })
  }
}

/** The loader for an ingest's database: `COPY` on PostgreSQL and PGlite. */
export const bulkLoaderFor = (database: Database): BulkLoader => makePgBulkLoader(database)

const seconds = (s: number): string => {
  if (!Number.isFinite(s)) return "?"
  const t = Math.max(0, Math.round(s))
  const h = Math.floor(t / 3600)
  const m = Math.floor((t % 3600) / 60)
  const sec = t % 60
  return h > 0 ? `${h}h ${String(m).padStart(2, "0")}m` : m > 0 ? `${m}m ${String(sec).padStart(2, "0")}s` : `${sec}s`
}

/** What one archive gave. */
interface ArchiveOutcome {
  readonly results: Array<IngestFileResult>
  readonly unchanged: number
  readonly ignored: number
}

const entryResult = (
  path: string,
  format: IngestFileResult["format"],
  fields: Partial<IngestFileResult> & Pick<IngestFileResult, "status">
): IngestFileResult => ({
  path,
  format,
  reason: null,
  cik: null,
  records: 0,
  written: 0,
  notes: [],
  refused: 0,
  refusedByReason: {},
  refusedRows: [],
  warnings: [],
  ...fields
})

/** Fills the tickers of a company that names none from the stored ticker lists, as the per-file ingest does. */
const withTickers = (company: Company, listed: ReadonlyMap<string, ReadonlyArray<TickerEntry>>): Company => {
  if (company.tickers.length > 0) return company
  const rows = listed.get(company.cik) ?? []
  if (rows.length === 0) return company
  return { ...company, tickers: rows.map((t) => t.ticker), exchanges: rows.map((t) => t.exchange ?? "") }
}

/** Ingests one archive. */
const ingestArchive = (
  loader: BulkLoader,
  listed: ReadonlyMap<string, ReadonlyArray<TickerEntry>>,
  counts: IngestCounts,
  path: string,
  label: string,
  progress: ProgressFactory
): Effect.Effect<ArchiveOutcome> =>
  Effect.gen(function* () {
    const archive = basename(path)
    const opened = yield* Effect.promise(() =>
      yauzl.openPromise(path, { lazyEntries: true, autoClose: false, validateEntrySizes: true }).then(
        (zip) => zip,
        (e: unknown) => new EntryProblem(message(e))
      )
    )
    if (opened instanceof EntryProblem) {
      return {
        results: [
          entryResult(label, null, {
            status: "failed",
            reason: `not a readable zip archive (${opened.reason}); a download still under way or cut short has no central directory yet`
          })
        ],
        unchanged: 0,
        ignored: 0
      }
    }
    const zip = opened
    return yield* Effect.gen(function* () {
      const entries: Array<yauzl.Entry> = []
      let ignored = 0
      const listing = yield* Effect.promise(async () => {
        try {
          for await (const entry of zip.eachEntry()) {
            if (MAIN_ENTRY.test(basename(entry.fileName)) || PAGE_ENTRY.test(basename(entry.fileName)))
              entries.push(entry)
            else ignored++
          }
          return undefined
        } catch (e) {
          return new EntryProblem(message(e))
        }
      })
      const results: Array<IngestFileResult> = []
      if (listing !== undefined) {
        results.push(
          entryResult(label, null, { status: "failed", reason: `its central directory is corrupt: ${listing.reason}` })
        )
        return { results, unchanged: 0, ignored }
      }
      const marks = yield* loader.marks(archive)
      const todo = entries.filter((e) => {
        const mark = marks.get(e.fileName)
        return mark === undefined || mark.crc32 !== e.crc32 >>> 0 || mark.size !== e.uncompressedSize
      })
      const unchanged = entries.length - todo.length
      const totalBytes = todo.reduce((n, e) => n + e.compressedSize, 0)
      const bar = progress(`ingesting ${archive}`, todo.length)
      const started = performance.now()
      let bytesDone = 0
      let rows = 0
      let done = 0
      let last = started
      /** Records an entry's result and steps the bar: its time is the time since the previous entry finished. */
      const finish = (entry: yauzl.Entry, result: IngestFileResult) => {
        results.push(result)
        done++
        bytesDone += entry.compressedSize
        const now = performance.now()
        const elapsed = (now - started) / 1000
        const eta = bytesDone === 0 ? Number.NaN : (elapsed * (totalBytes - bytesDone)) / bytesDone
        const rate =
          elapsed > 0
            ? `${Math.round(done / elapsed).toLocaleString("en-US")} entries/s, ${Math.round(rows / elapsed).toLocaleString("en-US")} rows/s`
            : ""
        const what =
          result.status === "loaded"
            ? `${plural(result.records, "record")}, ${plural(result.written, "new row")}`
            : `failed (${(result.reason ?? "").slice(0, 60)})`
        bar.stepDone(`${entry.fileName}: ${what} | ${rate} | ETA ${seconds(eta)}`, now - last)
        last = now
      }
      type Parsed = Exclude<ReturnType<typeof parseEntry>, EntryProblem>
      /** The entry read, checked and parsed (CPU work here, while the previous entry's load runs in the database). */
      const prepare = (entry: yauzl.Entry) =>
        Effect.map(
          Effect.promise(() => readEntry(zip, entry)),
          (bytes): Parsed | EntryProblem =>
            bytes instanceof EntryProblem ? bytes : parseEntry(basename(entry.fileName), bytes.toString("utf8"))
        )
      const loaded = (entry: yauzl.Entry, parsed: Parsed, written: BulkWritten): IngestFileResult => {
        counts.companies += written.companies
        counts.facts += written.facts
        counts.filings += written.filings
        rows += parsed.facts.length + parsed.filings.length
        return entryResult(`${label}:${entry.fileName}`, parsed.kind, {
          status: "loaded",
          cik: parsed.cik,
          records: parsed.facts.length + parsed.filings.length,
          written: written.companies + written.facts + written.filings,
          notes: parsed.notes
        })
      }
      yield* Effect.gen(function* () {
        // One entry is written while the next is read and parsed: the database and this process work at once.
        let inFlight:
          | {
              readonly entry: yauzl.Entry
              readonly size: number
              readonly parsed: Parsed
              readonly fiber: Fiber.Fiber<BulkWritten>
            }
          | undefined
        const settle = Effect.gen(function* () {
          if (inFlight === undefined) return
          const { entry, parsed, fiber } = inFlight
          inFlight = undefined
          finish(entry, loaded(entry, parsed, yield* Fiber.join(fiber)))
        })
        for (const entry of todo) {
          // A large entry waits for the previous one to be written, so at most one large entry is in memory.
          if (entry.uncompressedSize > OVERLAP_MAX_BYTES || (inFlight?.size ?? 0) > OVERLAP_MAX_BYTES) yield* settle
          const parsed = yield* prepare(entry)
          yield* settle
          if (parsed instanceof EntryProblem) {
            finish(entry, entryResult(`${label}:${entry.fileName}`, null, { status: "failed", reason: parsed.reason }))
            continue
          }
          const fiber = yield* Effect.forkChild(
            loader.load({
              mark: { archive, entry: entry.fileName, crc32: entry.crc32 >>> 0, size: entry.uncompressedSize },
              cik: parsed.cik,
              company:
                parsed.company === null
                  ? null
                  : {
                      value: withTickers(parsed.company, listed),
                      mode: parsed.kind === "submissions" ? "replace" : "if_absent"
                    },
              facts: parsed.facts,
              filings: parsed.filings
            } satisfies BulkCompanyEntry)
          )
          inFlight = { entry, size: entry.uncompressedSize, parsed, fiber }
        }
        yield* settle
      }).pipe(Effect.ensuring(Effect.sync(() => bar.stop())))
      return { results, unchanged, ignored }
    }).pipe(Effect.ensuring(Effect.sync(() => zip.close())))
  })

const emptyCounts = (): IngestCounts => ({
  companies: 0,
  tickers: 0,
  facts: 0,
  filings: 0,
  ownershipReports: 0,
  holdingsReports: 0,
  bars: 0
})

/**
 * Ingests bulk archives (`companyfacts.zip`, `submissions.zip`) through `loader`. Entries loaded before unchanged
 * are skipped and counted in `skipped` (not listed one by one); every other entry is one result, named
 * `<archive>:<entry>`.
 */
export const ingestArchives = (
  loader: BulkLoader,
  store: EquityStore["Service"],
  paths: ReadonlyArray<string>,
  progress: ProgressFactory
): Effect.Effect<IngestSummary> =>
  Effect.gen(function* () {
    const cwd = process.cwd()
    const label = (path: string) => {
      const r = relative(cwd, path)
      return r === "" || r.startsWith("..") ? path : r
    }
    const listed = new Map<string, Array<TickerEntry>>()
    for (const t of yield* store.tickers) listed.set(t.cik, [...(listed.get(t.cik) ?? []), t])
    const counts = emptyCounts()
    const results: Array<IngestFileResult> = []
    let unchanged = 0
    let ignored = 0
    for (const path of paths) {
      const outcome = yield* ingestArchive(loader, listed, counts, path, label(path), progress)
      results.push(...outcome.results)
      unchanged += outcome.unchanged
      ignored += outcome.ignored
    }
    const loaded = results.filter((r) => r.status === "loaded")
    return {
      results,
      loaded: loaded.length,
      partial: 0,
      failed: results.filter((r) => r.status === "failed").length,
      skipped: unchanged,
      ignored,
      reads: "CIK##########.json entries",
      rows: { loaded: loaded.reduce((n, r) => n + r.records, 0), refused: 0, refusedByReason: {} },
      warnings: 0,
      written: counts
    }
  })

/** Two ingests' summaries as one (files and archives given together). */
export const mergeSummaries = (a: IngestSummary, b: IngestSummary): IngestSummary => {
  const refusedByReason: Record<string, number> = { ...a.rows.refusedByReason }
  for (const [k, n] of Object.entries(b.rows.refusedByReason)) refusedByReason[k] = (refusedByReason[k] ?? 0) + n
  const written = emptyCounts()
  for (const k of Object.keys(written) as Array<keyof IngestCounts>) written[k] = a.written[k] + b.written[k]
  return {
    results: [...a.results, ...b.results],
    loaded: a.loaded + b.loaded,
    partial: a.partial + b.partial,
    failed: a.failed + b.failed,
    skipped: a.skipped + b.skipped,
    ignored: a.ignored + b.ignored,
    reads: a.reads === b.reads ? a.reads : `${a.reads}, or ${b.reads}`,
    rows: { loaded: a.rows.loaded + b.rows.loaded, refused: a.rows.refused + b.rows.refused, refusedByReason },
    warnings: a.warnings + b.warnings,
    written
  }
}

/**
 * `ingest sec` with archives among its paths: the `.zip` files go to the bulk ingest (`COPY` into the database),
 * first (their submissions give Form 4 and 13F documents their filing dates), the rest to the per-file ingest
 * (`files`), and the two summaries are reported as one.
 */
export const ingestSecWithArchives = (
  database: Database,
  store: EquityStore["Service"],
  paths: ReadonlyArray<string>,
  progress: ProgressFactory,
  files: (paths: ReadonlyArray<string>) => Effect.Effect<IngestSummary>
): Effect.Effect<IngestSummary> =>
  Effect.gen(function* () {
    const archives = paths.filter(isArchivePath)
    const others = paths.filter((p) => !isArchivePath(p))
    if (archives.length === 0) return yield* files(others)
    const bulk = yield* ingestArchives(bulkLoaderFor(database), store, archives, progress)
    if (others.length === 0) return bulk
    return mergeSummaries(bulk, yield* files(others))
  })
