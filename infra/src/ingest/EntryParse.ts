/**
 * One bulk-archive entry parsed as its bytes arrive: the work of the ingest's parsing worker (`ParseWorker.ts`),
 * kept apart from the thread plumbing so it reads (and tests) as plain code.
 *
 * - A companyfacts document (`"entityName"` or `"facts"` as a key in its first 4 KB) is read by `CompanyFactsStream`, one concept at a
 *   time: memory holds one concept, whatever the document's size. Its facts leave as soon as they are read: as
 *   `COPY` text (`encoding: "copy"`, the database loaders), in pieces of about 256 KB, each its own
 *   `ArrayBuffer` so it is transferred to the main thread, not copied; or as records (`"records"`, the memory
 *   twin), all at the end.
 * - A submissions document or page is read whole at its end by the per-file parsers (these are small next to
 *   companyfacts: the SEC splits a long history into pages).
 *
 * Values stay the filed decimals (strings) from the source text to the `COPY` line: no float in between.
 */
import type { Company, Fact, Filing } from "@market-data/core"
import { factCopyRows, filingCopyText } from "@market-data/postgres/copy-text"
import { CompanyFactsStream, parseSubmissions, parseSubmissionsPage } from "@market-data/sources/bulk-parsers"
import * as Result from "effect/Result"

export const MAIN_ENTRY = /^CIK\d{10}\.json$/i
export const PAGE_ENTRY = /^CIK(\d{10})-submissions-\d+\.json$/i

/**
 * A companyfacts document names its company `entityName` and holds `facts`, one of them near the start; the
 * submissions feed has neither key (its keys are `name`, `filings`, ...).
 */
const COMPANYFACTS_KEY = /"(?:entityName|facts)"\s*:/

/** How much of a document is read before deciding whether it is companyfacts. */
const SNIFF_BYTES = 4096

/** A piece of `COPY` text is sent once it reaches about this many characters. */
const PIECE_CHARS = 256 * 1024

export type EntryKind = "companyfacts" | "submissions" | "submissions_page"

/** Main thread to worker. */
export type ToWorker =
  | { readonly t: "begin"; readonly id: number; readonly name: string; readonly encoding: "copy" | "records" }
  | { readonly t: "data"; readonly id: number; readonly bytes: Uint8Array }
  | { readonly t: "end"; readonly id: number }
  /** The entry is abandoned (the reader found it corrupt): forget it. */
  | { readonly t: "drop"; readonly id: number }

/** Worker to main thread. */
export type ToMain =
  /** A `data` message was read: the main thread may send another. */
  | { readonly t: "ack"; readonly id: number }
  /** The document's head: what it is and whose; rows come after it. */
  | {
      readonly t: "head"
      readonly id: number
      readonly kind: EntryKind
      readonly cik: string
      readonly company: Company | null
      readonly notes: ReadonlyArray<string>
    }
  | {
      readonly t: "rows"
      readonly id: number
      readonly table: "facts" | "filings"
      readonly bytes: Uint8Array
      readonly rows: number
    }
  | { readonly t: "records"; readonly id: number; readonly facts: Array<Fact>; readonly filings: Array<Filing> }
  /** The document was read to its end, valid; `records` facts or filings in it (repeats included). */
  | { readonly t: "done"; readonly id: number; readonly records: number }
  | { readonly t: "failed"; readonly id: number; readonly reason: string }

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`

const encoder = new TextEncoder()

const companyOf = (cik: string, name: string): Company => ({
  cik,
  name,
  tickers: [],
  exchanges: [],
  sic: null,
  sicDescription: null,
  fiscalYearEnd: null,
  formerNames: []
})

/** One entry, fed its bytes in order; `send` carries its messages out (with the buffers to transfer). */
export class EntryParser {
  private readonly id: number
  private readonly name: string
  private readonly encoding: "copy" | "records"
  private readonly send: (message: ToMain, transfer?: ReadonlyArray<ArrayBuffer>) => void
  /** The first bytes, kept until the kind is known. */
  private sniffed: Array<Uint8Array> = []
  private sniffedBytes = 0
  private kind: EntryKind | undefined
  private facts: CompanyFactsStream | undefined
  /** A whole submissions document, kept to its end. */
  private whole: Array<Uint8Array> = []
  private headSent = false
  /** Facts read before the document named its company (never in SEC documents), kept until it does. */
  private held: Array<Array<Fact>> = []
  private records: Array<Fact> = []
  private text = ""
  private textRows = 0
  private over = false

  constructor(
    id: number,
    name: string,
    encoding: "copy" | "records",
    send: (message: ToMain, transfer?: ReadonlyArray<ArrayBuffer>) => void
  ) {
    this.id = id
    this.name = name
    this.encoding = encoding
    this.send = send
  }

  /** The next bytes of the entry. */
  data(bytes: Uint8Array): void {
    if (this.over) return
    if (this.kind === undefined) {
      this.sniffed.push(bytes)
      this.sniffedBytes += bytes.length
      if (this.sniffedBytes < SNIFF_BYTES) return
      this.decide()
      return
    }
    this.feed(bytes)
  }

  /** The entry's end: the last rows, then `done` or `failed`. */
  end(): void {
    if (this.over) return
    if (this.kind === undefined) this.decide()
    if (this.over) return
    if (this.facts !== undefined) {
      const head = this.facts.end()
      if (!("cik" in head)) {
        this.fail(`not a valid ${head.format} document: ${head.message}`)
        return
      }
      this.companyFactsHead()
      this.flush()
      if (this.encoding === "records") this.send({ t: "records", id: this.id, facts: this.records, filings: [] })
      this.over = true
      this.send({ t: "done", id: this.id, records: this.facts.facts })
      return
    }
    this.endWhole()
  }

  private fail(reason: string): void {
    this.over = true
    this.sniffed = []
    this.whole = []
    this.held = []
    this.records = []
    this.text = ""
    this.send({ t: "failed", id: this.id, reason })
  }

  /** What the entry is, from its name and first bytes; the bytes kept so far go on to its reader. */
  private decide(): void {
    const first = Buffer.concat(this.sniffed)
    this.sniffed = []
    if (PAGE_ENTRY.test(this.name)) this.kind = "submissions_page"
    else if (COMPANYFACTS_KEY.test(first.subarray(0, SNIFF_BYTES).toString("latin1"))) {
      this.kind = "companyfacts"
      this.facts = new CompanyFactsStream((facts) => this.concept(facts))
    } else this.kind = "submissions"
    this.feed(first)
  }

  private feed(bytes: Uint8Array): void {
    if (this.facts === undefined) {
      this.whole.push(bytes)
      return
    }
    const problem = this.facts.push(bytes)
    if (problem !== undefined) {
      this.fail(`not a valid ${problem.format} document: ${problem.message}`)
      return
    }
    this.companyFactsHead()
  }

  /** Sends the head once the document has named its company, and the facts held until then. */
  private companyFactsHead(): void {
    if (this.headSent || this.facts === undefined) return
    const head = this.facts.header
    if (head === undefined) return
    this.headSent = true
    this.send({
      t: "head",
      id: this.id,
      kind: "companyfacts",
      cik: head.cik,
      company: companyOf(head.cik, head.entityName),
      notes: []
    })
    const held = this.held
    this.held = []
    for (const facts of held) this.concept(facts)
  }

  /** One concept's facts: encoded (or kept, for records) once the company is known, else held. */
  private concept(facts: Array<Fact>): void {
    if (this.encoding === "records") {
      for (const f of facts) this.records.push(f)
      return
    }
    const head = this.headSent ? this.facts?.header : undefined
    if (head === undefined) {
      this.held.push(facts)
      return
    }
    // A concept's facts share their taxonomy and concept, and a concept is read once: repeats of a natural key
    // can only be within it, so the keys seen are kept per concept (memory stays one concept's).
    const part = factCopyRows(head.cik, facts, new Set())
    this.text += part.text
    this.textRows += part.rows
    if (this.text.length >= PIECE_CHARS) this.flush()
  }

  private flush(): void {
    if (this.textRows === 0) return
    const bytes = encoder.encode(this.text)
    const rows = this.textRows
    this.text = ""
    this.textRows = 0
    this.send({ t: "rows", id: this.id, table: "facts", bytes, rows }, [bytes.buffer as ArrayBuffer])
  }

  /** A submissions document or page, parsed whole. */
  private endWhole(): void {
    const text = Buffer.concat(this.whole).toString("utf8")
    this.whole = []
    const page = PAGE_ENTRY.exec(this.name)
    let cik: string
    let company: Company | null
    let filings: ReadonlyArray<Filing>
    let notes: ReadonlyArray<string> = []
    if (page !== null) {
      cik = String(Number(page[1]))
      const parsed = parseSubmissionsPage(text, cik)
      if (Result.isFailure(parsed)) {
        this.fail(`not a valid ${parsed.failure.format} document: ${parsed.failure.message}`)
        return
      }
      company = null
      filings = parsed.success
    } else {
      const parsed = parseSubmissions(text)
      if (Result.isFailure(parsed)) {
        this.fail(`not a valid ${parsed.failure.format} document: ${parsed.failure.message}`)
        return
      }
      cik = parsed.success.company.cik
      company = parsed.success.company
      filings = parsed.success.filings
      if (parsed.success.olderFiles.length > 0)
        notes = [`lists ${plural(parsed.success.olderFiles.length, "older page")}: they load from the same archive`]
    }
    this.send({ t: "head", id: this.id, kind: this.kind ?? "submissions", cik, company, notes })
    if (this.encoding === "records") this.send({ t: "records", id: this.id, facts: [], filings: [...filings] })
    else {
      // Pieces of about 1 MB; the rows are counted on the first (the loader only adds them up).
      const encoded = filingCopyText(cik, filings)
      encoded.pieces.forEach((piece, index) => {
        const bytes = encoder.encode(piece)
        const rows = index === 0 ? encoded.rows : 0
        this.send({ t: "rows", id: this.id, table: "filings", bytes, rows }, [bytes.buffer as ArrayBuffer])
      })
    }
    this.over = true
    this.send({ t: "done", id: this.id, records: filings.length })
  }
}
