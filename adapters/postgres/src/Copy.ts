/**
 * Bulk writes with `COPY ... FROM STDIN` (server PostgreSQL, through `pg-copy-streams`) and `COPY ... FROM
 * '/dev/blob'` (PGlite's way in for a `COPY`: the rows travel as a `Blob` beside the statement), and the equity
 * `BulkLoader` on them: one archive entry (one company) per transaction, with its mark.
 *
 * Same rules as `PgEquityStore`, so a company loaded from a bulk archive answers exactly as one loaded file by
 * file: a submissions feed replaces the company row, companyfacts creates it only when absent; facts and filings
 * are kept on their natural keys, a repeat of a key written once (the first). A company with no facts (or no
 * filings) yet gets them by a plain `COPY` into the table; one that has some (a changed entry loaded again, or
 * files ingested before) through a temporary staging table and `insert ... on conflict do nothing`.
 */
import { pipeline } from "node:stream/promises"
import type {
  BulkCompanyEntry,
  BulkEncodedPiece,
  BulkEntryMark,
  BulkLoader,
  BulkStreamedEntry,
  BulkWritten
} from "@market-data/core"
import type pg from "pg"
import { from as copyFrom } from "pg-copy-streams"
import {
  type CopyValue,
  companyRow,
  copyText,
  FACT_COLUMNS,
  FILING_COLUMNS,
  factCopyText,
  filingCopyText
} from "./CopyText.ts"
import type { Database } from "./Database.ts"
import { query } from "./Errors.ts"
import type { PgliteHandle, PgliteTx } from "./PgliteProxy.ts"

/** What a `COPY` reads: pieces of its text format. */
export type CopySource = Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>

/** What a bulk write needs of a connection inside a transaction. */
export interface BulkSession {
  readonly run: (text: string, params?: ReadonlyArray<unknown>) => Promise<{ rows: Array<any>; count: number }>
  /** One `COPY` of every piece of `source` (read as it comes, with the connection's backpressure). */
  readonly copy: (table: string, columns: ReadonlyArray<string>, source: CopySource) => Promise<void>
}

const pgSession = (client: pg.PoolClient): BulkSession => ({
  run: async (text, params) => {
    const r = await client.query(text, params as Array<unknown>)
    return { rows: r.rows, count: r.rowCount ?? 0 }
  },
  copy: async (table, columns, source) => {
    const stream = client.query(copyFrom(`copy ${table} (${columns.join(", ")}) from stdin`))
    await pipeline(async function* () {
      for await (const piece of source) yield piece
    }, stream)
  }
})

/**
 * PGlite takes a `COPY`'s rows as one `Blob` beside the statement: a streamed source is written as several
 * `COPY` statements of about this much text each, so an entry's rows are never all in memory at once.
 */
const PGLITE_COPY_BATCH_BYTES = 8 << 20

const pgliteSession = (tx: PgliteTx): BulkSession => ({
  run: async (text, params) => {
    const r = await tx.query<any>(text, params as Array<unknown>)
    return { rows: r.rows, count: r.affectedRows ?? 0 }
  },
  copy: async (table, columns, source) => {
    const statement = `copy ${table} (${columns.join(", ")}) from '/dev/blob'`
    let batch: Array<string | Uint8Array> = []
    let size = 0
    for await (const piece of source) {
      batch.push(piece)
      size += piece.length
      if (size >= PGLITE_COPY_BATCH_BYTES) {
        await tx.query(statement, [], { blob: new Blob(batch) })
        batch = []
        size = 0
      }
    }
    if (batch.length > 0) await tx.query(statement, [], { blob: new Blob(batch) })
  }
})

/**
 * A bulk transaction commits without waiting for its WAL to reach the disk (`synchronous_commit = off`, for this
 * transaction only): one flush per entry would cost more than the entry's rows. Still atomic: a crash can lose only
 * the last entries committed, each whole with its mark, so the next run loads them again.
 */
const ASYNC_COMMIT = "set local synchronous_commit = off"

/**
 * Runs `body` in one transaction on the database's own driver (PGlite's, or a pooled `pg` client), where `COPY`
 * is available; committed when `body` resolves, rolled back when it throws.
 */
export const inBulkTransaction = async <A>(database: Database, body: (s: BulkSession) => Promise<A>): Promise<A> => {
  const native = database.native
  if (native === undefined) throw new Error("this database exposes no driver for COPY")
  if (native.kind === "pglite") {
    return (native.pglite as PgliteHandle).transaction(async (tx) => {
      await tx.query(ASYNC_COMMIT)
      return body(pgliteSession(tx))
    })
  }
  const client = await (native.pool as pg.Pool).connect()
  try {
    // One round trip: a simple-protocol query may hold several statements.
    await client.query(`begin; ${ASYNC_COMMIT}`)
    const out = await body(pgSession(client))
    await client.query("commit")
    return out
  } catch (e) {
    await client.query("rollback").catch(() => {})
    throw e
  } finally {
    client.release()
  }
}

/** `COPY` of `rows` into `table` in one transaction (the bench's scratch table). */
export const copyRows = (
  database: Database,
  table: string,
  columns: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<CopyValue>>
) =>
  query(`copy.${table}`, () =>
    inBulkTransaction(database, async (s) => {
      await s.copy(table, columns, copyText(rows))
      return rows.length
    })
  )

/**
 * Writes the rows of a company read from `source` into `table`: a plain `COPY` when the company had no row there
 * (`existing` false: every row is new), else through a staging table, keeping the rows already there. `rows`
 * says, once the source is read, how many rows it held. Returns the rows new to the table.
 */
const writeRows = async (
  s: BulkSession,
  table: "equity_facts" | "equity_filings",
  columns: ReadonlyArray<string>,
  existing: boolean,
  source: CopySource,
  rows: () => number
): Promise<number> => {
  if (!existing) {
    await s.copy(table, columns, source)
    return rows()
  }
  const stage = `bulk_stage_${table}`
  await s.run(`create temp table if not exists ${stage} (like ${table}) on commit drop`)
  await s.copy(stage, columns, source)
  if (rows() === 0) return 0
  const list = columns.join(", ")
  const inserted = await s.run(`insert into ${table} (${list}) select ${list} from ${stage} on conflict do nothing`)
  await s.run(`truncate ${stage}`)
  return inserted.count
}

/** What the store held of an entry's company before the entry. */
interface Before {
  /** 1 if the company is new to the store. */
  readonly companies: number
  readonly facts: boolean
  readonly filings: boolean
}

/**
 * The first statement of an entry's transaction, one round trip: what the store holds of the company (read
 * before this statement's writes, as every part of one statement sees the same snapshot), the company row (a
 * submissions feed replaces it; companyfacts creates it only when absent) and the entry's mark (inside the same
 * transaction as the rows, so a failed entry leaves no mark either). Several statements one after the other
 * cost a round trip each, and on a loaded machine every round trip waits for the database's process and this
 * one to be scheduled again: per entry, that was most of what the ingest spent beyond the rows themselves.
 */
const entryHead = async (
  s: BulkSession,
  mark: BulkEntryMark,
  cik: string,
  company: BulkCompanyEntry["company"]
): Promise<Before> => {
  const params: Array<unknown> = [cik, mark.archive, mark.entry, mark.crc32, mark.size]
  let write = ""
  if (company !== null) {
    const c = companyRow(company.value)
    params.push(...c)
    const insert = `insert into equity_companies (cik, name, tickers, exchanges, sic, sic_description, fiscal_year_end, former_names)
      values ($6, $7, $8::jsonb, $9::jsonb, $10, $11, $12, $13::jsonb)`
    write =
      company.mode === "replace"
        ? `, company as (${insert} on conflict (cik) do update set name = excluded.name, tickers = excluded.tickers,
             exchanges = excluded.exchanges, sic = excluded.sic, sic_description = excluded.sic_description,
             fiscal_year_end = excluded.fiscal_year_end, former_names = excluded.former_names)`
        : `, company as (${insert} on conflict (cik) do nothing)`
  }
  const r = await s.run(
    `with before as (
       select exists (select 1 from equity_companies where cik = $1) as company,
              exists (select 1 from equity_facts where cik = $1) as facts,
              exists (select 1 from equity_filings where cik = $1) as filings
     ), mark as (
       insert into equity_bulk_entries (archive, entry, crc32, size, cik) values ($2, $3, $4, $5, $1)
         on conflict (archive, entry) do update set crc32 = excluded.crc32, size = excluded.size,
           cik = excluded.cik, loaded_at = now()
     )${write}
     select company, facts, filings from before`,
    params
  )
  const row = r.rows[0] as { company: boolean; facts: boolean; filings: boolean }
  return { companies: company !== null && !row.company ? 1 : 0, facts: row.facts, filings: row.filings }
}

const TABLES = {
  facts: { table: "equity_facts", columns: FACT_COLUMNS },
  filings: { table: "equity_filings", columns: FILING_COLUMNS }
} as const

/**
 * Writes a streamed entry's pieces: each run of pieces of one table is one `COPY` fed as the pieces arrive. A
 * failure of the source (the entry turned out bad) aborts the `COPY` and throws, so the transaction rolls back.
 */
const writePieces = async (
  s: BulkSession,
  before: Before,
  pieces: AsyncIterable<BulkEncodedPiece>
): Promise<{ facts: number; filings: number }> => {
  const written = { facts: 0, filings: 0 }
  const seen = new Set<"facts" | "filings">()
  const it = pieces[Symbol.asyncIterator]()
  let next = await it.next()
  while (next.done !== true) {
    const table = next.value.table
    let rows = 0
    let ahead: IteratorResult<BulkEncodedPiece> | undefined
    let current: IteratorResult<BulkEncodedPiece> = next
    const run = async function* () {
      while (current.done !== true && current.value.table === table) {
        rows += current.value.rows
        yield current.value.bytes
        current = await it.next()
      }
      ahead = current
    }
    const { table: name, columns } = TABLES[table]
    // A second run of one table in an entry (never made by the worker) goes through the staging table.
    written[table] += await writeRows(s, name, columns, before[table] || seen.has(table), run(), () => rows)
    seen.add(table)
    if (ahead === undefined) throw new Error("a streamed entry's rows were not read to their end")
    next = ahead
  }
  return written
}

/** The bulk loader on a PostgreSQL or PGlite database: `COPY`, one transaction per entry. */
export const makePgBulkLoader = (database: Database): BulkLoader => ({
  method: database.kind === "pglite" ? "COPY FROM /dev/blob (PGlite)" : "COPY FROM STDIN (PostgreSQL)",
  marks: (archive) =>
    query("bulk.marks", () =>
      inBulkTransaction(database, async (s) => {
        const r = await s.run(`select entry, crc32, size from equity_bulk_entries where archive = $1`, [archive])
        return new Map(r.rows.map((row) => [String(row.entry), { crc32: Number(row.crc32), size: Number(row.size) }]))
      })
    ),
  load: (entry: BulkCompanyEntry) =>
    query("bulk.load", () =>
      inBulkTransaction(database, async (s): Promise<BulkWritten> => {
        const before = await entryHead(s, entry.mark, entry.cik, entry.company)
        const f = factCopyText(entry.cik, entry.facts)
        const facts =
          f.rows === 0 ? 0 : await writeRows(s, "equity_facts", FACT_COLUMNS, before.facts, f.pieces, () => f.rows)
        const g = filingCopyText(entry.cik, entry.filings)
        const filings =
          g.rows === 0
            ? 0
            : await writeRows(s, "equity_filings", FILING_COLUMNS, before.filings, g.pieces, () => g.rows)
        return { companies: before.companies, facts, filings }
      })
    ),
  loadStreamed: (entry: BulkStreamedEntry) =>
    query("bulk.load", () =>
      inBulkTransaction(database, async (s): Promise<BulkWritten> => {
        const before = await entryHead(s, entry.mark, entry.cik, entry.company)
        const { facts, filings } = await writePieces(s, before, entry.pieces)
        return { companies: before.companies, facts, filings }
      })
    )
})
