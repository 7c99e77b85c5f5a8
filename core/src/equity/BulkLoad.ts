/**
 * The port a bulk ingest (the SEC's `companyfacts.zip` and `submissions.zip`) writes through: one archive entry,
 * one company, loaded whole or not at all, together with the mark that lets a restarted ingest skip the entries
 * already loaded unchanged. The PostgreSQL/PGlite adapter writes with `COPY`; the memory twin through the
 * `EquityStore`. Same rules as the per-file ingest, so the answers are identical either way.
 */
import type { Effect } from "effect"
import type { Company, Fact, Filing } from "./Model.ts"

/** An archive entry as its zip's central directory describes it. */
export interface BulkEntryMark {
  /** The archive's file name (`companyfacts.zip`), without its folder. */
  readonly archive: string
  /** The entry's name in the archive (`CIK0000320193.json`). */
  readonly entry: string
  /** CRC-32 and uncompressed size of the entry, from the central directory. */
  readonly crc32: number
  readonly size: number
}

/** One entry's company, ready to write. */
export interface BulkCompanyEntry {
  readonly mark: BulkEntryMark
  readonly cik: string
  /**
   * The company row: `replace` (a submissions feed describes the company fully) or `if_absent` (companyfacts only
   * names it, so it creates the company only when the store has none); null for an older submissions page.
   */
  readonly company: { readonly value: Company; readonly mode: "replace" | "if_absent" } | null
  /** Facts and filings as parsed; repeats of a natural key are written once (the first), as `putFacts` does. */
  readonly facts: ReadonlyArray<Fact>
  readonly filings: ReadonlyArray<Filing>
}

/** Rows new to the store from one entry. */
export interface BulkWritten {
  readonly companies: number
  readonly facts: number
  readonly filings: number
}

/**
 * A piece of an entry's rows already in the loader's own encoding (`COPY`'s text format: one line per row, a
 * repeated natural key once), made off the ingest's main thread by the parsing worker, as the entry is read.
 */
export interface BulkEncodedPiece {
  readonly table: "facts" | "filings"
  readonly bytes: Uint8Array
  readonly rows: number
}

/**
 * An entry streamed: its company is known (read from the document's head), its rows arrive in pieces while the
 * rest is still being inflated and parsed. `pieces` ends only once the entry is known whole and valid (CRC-32,
 * sizes, the document to its end); a bad entry makes it throw, and the loader's transaction must then roll back.
 */
export interface BulkStreamedEntry {
  readonly mark: BulkEntryMark
  readonly cik: string
  readonly company: BulkCompanyEntry["company"]
  readonly pieces: AsyncIterable<BulkEncodedPiece>
}

export interface BulkLoader {
  /** The marks of the entries of `archive` loaded before: entry name -> CRC-32 and size. */
  readonly marks: (
    archive: string
  ) => Effect.Effect<ReadonlyMap<string, { readonly crc32: number; readonly size: number }>>
  /** Writes one entry and its mark in one transaction. */
  readonly load: (entry: BulkCompanyEntry) => Effect.Effect<BulkWritten>
  /**
   * Writes one streamed entry and its mark in one transaction, rows as they arrive (`COPY`); absent on loaders
   * that need the rows as records (the memory twin), which get `load`.
   */
  readonly loadStreamed?: (entry: BulkStreamedEntry) => Effect.Effect<BulkWritten>
  /** How it writes, for the report (`COPY (PostgreSQL)`, ...). */
  readonly method: string
}
