/**
 * `market-data ingest sec <archive.zip>`: the SEC's bulk archives, `companyfacts.zip` and `submissions.zip` (one
 * JSON document per company, `CIK##########.json`; `submissions.zip` also holds the older pages,
 * `CIK##########-submissions-###.json`), read as downloaded: never extracted to disk.
 *
 * - The archive is read through its central directory (`yauzl`): every entry's name, CRC-32 and sizes are known
 *   before anything is inflated, which gives the progress bar its total and lets a restarted ingest skip the
 *   entries already loaded unchanged (same name, CRC-32 and size as the mark stored with the company).
 * - Three stages overlap, each bounded: this thread inflates entries in order (CRC-32 checked, `yauzl` does not;
 *   sizes checked against the directory) and passes their bytes, 256 KB at a time, to one parsing worker thread
 *   (`ParseWorker.ts`); the worker reads each document as it arrives (a companyfacts document one concept at a
 *   time) and sends its rows back as `COPY` text, transferred, not copied; the `BulkLoader` writes each entry in
 *   one transaction with its mark, `COPY` fed as the rows arrive (`loadStreamed`). Inflating waits while the
 *   worker has `MAX_INFLIGHT` pieces unread or `MAX_BUFFERED_BYTES` of rows wait for the database, so memory does
 *   not follow the archive's size nor its largest entry.
 * - A bad entry (corrupt, truncated, not valid JSON, not the expected document) is named with its reason and
 *   writes nothing: its transaction rolls back, even when its rows were already being copied. The others load;
 *   the ingest exits 1 at the end (`ingestExitCode`). An entry over `MAX_ENTRY_BYTES` uncompressed is refused.
 * - On two cores one worker measured best: the database's `COPY` takes most of the other core (see
 *   docs/performance-log.md).
 */
import { basename, relative } from "node:path"
import type { Readable } from "node:stream"
import { Worker } from "node:worker_threads"
import { crc32 } from "node:zlib"
import type {
  BulkCompanyEntry,
  BulkEncodedPiece,
  BulkLoader,
  BulkWritten,
  Company,
  EquityStore,
  Fact,
  Filing,
  TickerEntry
} from "@market-data/core"
import { type Database, makePgBulkLoader } from "@market-data/postgres"
import { Effect, Exit } from "effect"
import yauzl from "yauzl"
import type { ProgressFactory } from "../Progress.ts"
import { MAIN_ENTRY, PAGE_ENTRY, type ToMain, type ToWorker } from "./EntryParse.ts"
import type { IngestCounts, IngestFileResult, IngestSummary } from "./Summary.ts"

/** An entry larger than this (uncompressed) is refused: the biggest companyfacts document is far below it. */
export const MAX_ENTRY_BYTES = 512 * 1024 * 1024

/** Inflated bytes are passed to the worker in pieces of about this size. */
const PIECE_BYTES = 256 * 1024

/** Pieces sent to the worker and not yet read by it. */
const MAX_INFLIGHT = 4

/** Rows parsed and waiting for the database (over every entry on its way), beyond which inflating waits. */
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024

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

const hex = (n: number) => (n >>> 0).toString(16).padStart(8, "0")

/** A refusal found before an entry is inflated (too large, encrypted, not deflate), or undefined. */
const refusal = (entry: yauzl.Entry): EntryProblem | undefined => {
  if (entry.uncompressedSize > MAX_ENTRY_BYTES)
    return new EntryProblem(
      `too large: ${plural(entry.uncompressedSize, "byte")} uncompressed, over the ${plural(MAX_ENTRY_BYTES, "byte")} an entry may have`
    )
  if (!entry.canDecodeFileData())
    return new EntryProblem(
      entry.isEncrypted()
        ? "encrypted: cannot be read"
        : `compressed with method ${entry.compressionMethod}, which is not deflate: cannot be read`
    )
  return undefined
}

/** The worker's head message: what the entry is and whose. */
type Head = Extract<ToMain, { t: "head" }>

/** Wakes whoever waits on a change. */
class Signal {
  private waiters: Array<() => void> = []
  wait(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve))
  }
  fire(): void {
    const waiters = this.waiters
    this.waiters = []
    for (const w of waiters) w()
  }
}

/** Thrown into an entry's `COPY` when the entry turns out bad: its transaction rolls back. */
class EntryFailed extends Error {}

/** One entry on its way: the reader's verdict, the worker's head, rows and verdict. */
class EntryFlow {
  readonly entry: yauzl.Entry
  readonly id: number
  head: Head | undefined
  readonly queue: Array<BulkEncodedPiece> = []
  records: { readonly facts: Array<Fact>; readonly filings: Array<Filing> } | undefined
  /** Facts or filings read in the document (repeats included), once done. */
  count = 0
  /** The reader's verdict: undefined while inflating, then true or the problem. */
  read: true | EntryProblem | undefined
  /** The worker's verdict: undefined while parsing, then true or the reason. */
  parsed: true | string | undefined
  readonly changed = new Signal()
  constructor(entry: yauzl.Entry, id: number) {
    this.entry = entry
    this.id = id
  }
  get failed(): boolean {
    return this.read instanceof EntryProblem || typeof this.parsed === "string"
  }
  get whole(): boolean {
    return this.read === true && this.parsed === true
  }
  get settled(): boolean {
    return this.read !== undefined && this.parsed !== undefined
  }
  /** Why the entry failed: the archive's problem first (a corrupt entry also reads as bad JSON), else the parse's. */
  get reason(): string {
    if (this.read instanceof EntryProblem) return this.read.reason
    return typeof this.parsed === "string" ? this.parsed : "unknown"
  }
  async until(ready: () => boolean): Promise<void> {
    while (!ready()) await this.changed.wait()
  }
}

/** The parsing worker and the bookkeeping of what is on its way through it. */
class ParserThread {
  private readonly worker: Worker
  private readonly flows = new Map<number, EntryFlow>()
  private inflight = 0
  /** Bytes of rows received and not yet taken by the database. */
  private buffered = 0
  private readonly room = new Signal()
  crashed: Error | undefined
  stopped = false
  readonly encoding: "copy" | "records"

  constructor(encoding: "copy" | "records") {
    this.encoding = encoding
    this.worker = new Worker(WORKER_URL)
    this.worker.on("message", (m: ToMain) => this.receive(m))
    this.worker.on("error", (e) => this.crash(e))
    this.worker.on("exit", (code) => {
      if (!this.stopped) this.crash(new Error(`the parsing worker exited with code ${code}`))
    })
  }

  private crash(e: Error): void {
    if (this.crashed !== undefined) return
    this.crashed = new Error(`the bulk ingest's parsing worker failed: ${e.message}`, { cause: e })
    for (const flow of this.flows.values()) {
      flow.parsed ??= this.crashed.message
      this.discard(flow)
      flow.changed.fire()
    }
    this.room.fire()
  }

  private receive(m: ToMain): void {
    if (m.t === "ack") {
      this.inflight--
      this.room.fire()
      return
    }
    const flow = this.flows.get(m.id)
    if (flow === undefined) return
    switch (m.t) {
      case "head":
        flow.head = m
        break
      case "rows":
        if (flow.failed) return
        flow.queue.push({ table: m.table, bytes: m.bytes, rows: m.rows })
        this.buffered += m.bytes.byteLength
        break
      case "records":
        flow.records = { facts: m.facts, filings: m.filings }
        break
      case "done":
        flow.count = m.records
        flow.parsed = true
        break
      case "failed":
        flow.parsed = m.reason
        break
    }
    if (flow.failed) this.discard(flow)
    flow.changed.fire()
  }

  /** Resolves once the worker may be given more bytes (or the ingest stops). */
  async ready(): Promise<void> {
    while (
      !this.stopped &&
      this.crashed === undefined &&
      (this.inflight >= MAX_INFLIGHT || this.buffered >= MAX_BUFFERED_BYTES)
    )
      await this.room.wait()
  }

  begin(flow: EntryFlow): void {
    this.flows.set(flow.id, flow)
    this.post({ t: "begin", id: flow.id, name: basename(flow.entry.fileName), encoding: this.encoding })
  }

  data(flow: EntryFlow, bytes: Uint8Array): void {
    this.inflight++
    this.post({ t: "data", id: flow.id, bytes }, [bytes.buffer as ArrayBuffer])
  }

  end(flow: EntryFlow): void {
    this.post({ t: "end", id: flow.id })
  }

  /** The entry is abandoned: the worker forgets it, and so does this side. */
  drop(flow: EntryFlow): void {
    this.post({ t: "drop", id: flow.id })
    flow.parsed ??= "abandoned"
    this.discard(flow)
    flow.changed.fire()
  }

  /** A failed entry's rows are never written: they leave the queue at once, so the reader never waits on them. */
  private discard(flow: EntryFlow): void {
    for (const piece of flow.queue) this.buffered -= piece.bytes.byteLength
    flow.queue.length = 0
    this.room.fire()
  }

  private post(message: ToWorker, transfer?: Array<ArrayBuffer>): void {
    if (this.crashed === undefined && !this.stopped) this.worker.postMessage(message, transfer)
  }

  /** An entry's rows as the database takes them: ends once the entry is whole, throws if it turns out bad. */
  async *pieces(flow: EntryFlow): AsyncGenerator<BulkEncodedPiece> {
    for (;;) {
      const piece = flow.queue.shift()
      if (piece !== undefined) {
        this.buffered -= piece.bytes.byteLength
        this.room.fire()
        yield piece
        continue
      }
      if (flow.failed) throw new EntryFailed(flow.reason)
      if (flow.whole) return
      await flow.changed.wait()
    }
  }

  /** Forgets an entry that is over, and the rows it left unread. */
  release(flow: EntryFlow): void {
    this.discard(flow)
    flow.records = undefined
    this.flows.delete(flow.id)
    this.room.fire()
  }

  async stop(): Promise<void> {
    this.stopped = true
    this.room.fire()
    for (const flow of this.flows.values()) flow.changed.fire()
    await this.worker.terminate()
  }
}

/** The worker's module: its TypeScript source in the workspace (Node strips the types), `.js` in a packed build. */
const WORKER_URL = new URL(import.meta.url.endsWith(".ts") ? "./ParseWorker.ts" : "./ParseWorker.js", import.meta.url)

/** A copy of `parts` in one new buffer of its own, so it can be transferred (inflated chunks share buffers). */
const own = (parts: ReadonlyArray<Buffer>, size: number): Uint8Array => {
  const out = new Uint8Array(size)
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}

/** An entry's inflated data, or the problem opening it. */
const openEntry = (zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable | EntryProblem> =>
  new Promise((resolve) =>
    zip.openReadStream(entry, (err, stream) =>
      resolve(err !== null ? new EntryProblem(`corrupt: ${err.message}`) : stream)
    )
  )

/**
 * Inflates `toLoad` in order into the worker, each entry's CRC-32 and sizes checked, handing each entry's flow to
 * `flows` as it starts. Stops early when the thread is stopped.
 */
const readEntries = async (
  zip: yauzl.ZipFile,
  toLoad: ReadonlyArray<yauzl.Entry>,
  thread: ParserThread,
  flows: (flow: EntryFlow) => void,
  current: { stream: Readable | undefined }
): Promise<void> => {
  let id = 0
  for (const entry of toLoad) {
    if (thread.stopped) return
    const flow = new EntryFlow(entry, id++)
    flows(flow)
    const refused = refusal(entry)
    if (refused !== undefined) {
      flow.read = refused
      flow.parsed = "not read"
      flow.changed.fire()
      continue
    }
    thread.begin(flow)
    const opened = await openEntry(zip, entry)
    if (opened instanceof EntryProblem) {
      flow.read = opened
      thread.drop(flow)
      continue
    }
    current.stream = opened
    let crc = 0
    let parts: Array<Buffer> = []
    let size = 0
    let problem: EntryProblem | undefined
    try {
      for await (const chunk of opened as AsyncIterable<Buffer>) {
        crc = crc32(chunk, crc)
        parts.push(chunk)
        size += chunk.length
        if (size >= PIECE_BYTES) {
          await thread.ready()
          if (thread.stopped) return
          thread.data(flow, own(parts, size))
          parts = []
          size = 0
        }
      }
      if (size > 0) {
        await thread.ready()
        if (thread.stopped) return
        thread.data(flow, own(parts, size))
      }
      if (crc >>> 0 !== entry.crc32 >>> 0)
        problem = new EntryProblem(
          `corrupt: its data's CRC-32 is ${hex(crc)}, the archive's directory says ${hex(entry.crc32)}`
        )
    } catch (e) {
      if (thread.stopped) return
      problem = new EntryProblem(`corrupt: ${message(e)}`)
    } finally {
      current.stream = undefined
    }
    if (problem !== undefined) {
      flow.read = problem
      thread.drop(flow)
    } else {
      flow.read = true
      thread.end(flow)
      flow.changed.fire()
    }
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
      const toLoad = entries.filter((e) => {
        const mark = marks.get(e.fileName)
        return mark === undefined || mark.crc32 !== e.crc32 >>> 0 || mark.size !== e.uncompressedSize
      })
      const unchanged = entries.length - toLoad.length
      const totalBytes = toLoad.reduce((n, e) => n + e.compressedSize, 0)
      const bar = progress(`ingesting ${archive}`, toLoad.length)
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
      const failed = (entry: yauzl.Entry, reason: string) =>
        entryResult(`${label}:${entry.fileName}`, null, { status: "failed", reason })
      const loaded = (flow: EntryFlow, head: Head, written: BulkWritten): IngestFileResult => {
        counts.companies += written.companies
        counts.facts += written.facts
        counts.filings += written.filings
        rows += flow.count
        return entryResult(`${label}:${flow.entry.fileName}`, head.kind, {
          status: "loaded",
          cik: head.cik,
          records: flow.count,
          written: written.companies + written.facts + written.filings,
          notes: head.notes
        })
      }
      if (toLoad.length === 0) {
        bar.stop()
        return { results, unchanged, ignored }
      }
      const streamed = loader.loadStreamed
      const thread = new ParserThread(streamed === undefined ? "records" : "copy")
      const arrived: Array<EntryFlow> = []
      const arrival = new Signal()
      const current: { stream: Readable | undefined } = { stream: undefined }
      let readerError: unknown
      const reader = readEntries(
        zip,
        toLoad,
        thread,
        (flow) => {
          arrived.push(flow)
          arrival.fire()
        },
        current
      ).then(
        () => undefined,
        (e: unknown) => {
          readerError = e
          arrival.fire()
        }
      )
      const stop = Effect.promise(async () => {
        await thread.stop()
        current.stream?.destroy()
        arrival.fire()
        await reader
      })
      /** The next entry's flow, in archive order. */
      const next = Effect.promise(async () => {
        while (arrived.length === 0 && readerError === undefined) await arrival.wait()
        return arrived.shift()
      })
      /** Fails the ingest if the reader or the worker broke (not an entry's fault). */
      const healthy = Effect.suspend(() =>
        readerError !== undefined
          ? Effect.die(readerError)
          : thread.crashed !== undefined
            ? Effect.die(thread.crashed)
            : Effect.void
      )
      yield* Effect.gen(function* () {
        for (let k = 0; k < toLoad.length; k++) {
          const flow = yield* next
          yield* healthy
          if (flow === undefined) return yield* Effect.die(new Error("the archive's reader stopped early"))
          const entry = flow.entry
          const mark = { archive, entry: entry.fileName, crc32: entry.crc32 >>> 0, size: entry.uncompressedSize }
          yield* Effect.promise(() => flow.until(() => flow.head !== undefined || flow.failed))
          const head = flow.head
          const company = (h: Head) =>
            h.company === null
              ? null
              : ({
                  value: withTickers(h.company, listed),
                  mode: h.kind === "submissions" ? "replace" : "if_absent"
                } as const)
          let result: IngestFileResult
          if (head === undefined || flow.failed) {
            yield* Effect.promise(() => flow.until(() => flow.settled))
            yield* healthy
            result = failed(entry, flow.reason)
          } else if (streamed !== undefined) {
            const exit = yield* Effect.exit(
              streamed({ mark, cik: head.cik, company: company(head), pieces: thread.pieces(flow) })
            )
            // A failure of the database (not of the entry) ends the ingest, as any store failure does.
            if (Exit.isFailure(exit) && !flow.failed) return yield* Effect.failCause(exit.cause)
            yield* Effect.promise(() => flow.until(() => flow.settled))
            yield* healthy
            if (flow.failed || Exit.isFailure(exit)) result = failed(entry, flow.reason)
            else result = loaded(flow, head, exit.value)
          } else {
            yield* Effect.promise(() => flow.until(() => flow.settled))
            yield* healthy
            if (flow.failed || flow.records === undefined) result = failed(entry, flow.reason)
            else {
              const written = yield* loader.load({
                mark,
                cik: head.cik,
                company: company(head),
                facts: flow.records.facts,
                filings: flow.records.filings
              } satisfies BulkCompanyEntry)
              result = loaded(flow, head, written)
            }
          }
          thread.release(flow)
          finish(entry, result)
        }
      }).pipe(
        Effect.ensuring(
          Effect.andThen(
            stop,
            Effect.sync(() => bar.stop())
          )
        )
      )
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
