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
import type { PGlite, Transaction } from "@electric-sql/pglite"
import type { BulkCompanyEntry, BulkLoader, BulkWritten, Company, Fact, Filing } from "@market-data/core"
import type pg from "pg"
import { from as copyFrom } from "pg-copy-streams"
import type { Database } from "./Database.ts"
import { query } from "./Errors.ts"

/** A value of a `COPY` text-format row: `null` is SQL NULL. */
export type CopyValue = string | number | boolean | null

const ESCAPES = /[\\\t\n\r]/g
const escapeOne = (c: string) => (c === "\\" ? "\\\\" : c === "\t" ? "\\t" : c === "\n" ? "\\n" : "\\r")

/** One value in `COPY`'s text format. */
const field = (v: CopyValue): string =>
  v === null
    ? "\\N"
    : typeof v === "boolean"
      ? v
        ? "t"
        : "f"
      : typeof v === "number"
        ? String(v)
        : v.replace(ESCAPES, escapeOne)

/** Rows in `COPY`'s text format, in pieces of about 1 MB (a 10 MB entry never becomes one string). */
export const copyText = (rows: ReadonlyArray<ReadonlyArray<CopyValue>>): Array<string> => {
  const pieces: Array<string> = []
  let current: Array<string> = []
  let size = 0
  for (const row of rows) {
    const line = `${row.map(field).join("\t")}\n`
    current.push(line)
    size += line.length
    if (size >= 1 << 20) {
      pieces.push(current.join(""))
      current = []
      size = 0
    }
  }
  if (current.length > 0) pieces.push(current.join(""))
  return pieces
}

/** What a bulk write needs of a connection inside a transaction. */
export interface BulkSession {
  readonly run: (text: string, params?: ReadonlyArray<unknown>) => Promise<{ rows: Array<any>; count: number }>
  readonly copy: (table: string, columns: ReadonlyArray<string>, pieces: ReadonlyArray<string>) => Promise<void>
}

const pgSession = (client: pg.PoolClient): BulkSession => ({
  run: async (text, params) => {
    const r = await client.query(text, params as Array<unknown>)
    return { rows: r.rows, count: r.rowCount ?? 0 }
  },
  copy: async (table, columns, pieces) => {
    const stream = client.query(copyFrom(`copy ${table} (${columns.join(", ")}) from stdin`))
    await pipeline(async function* () {
      for (const piece of pieces) yield piece
    }, stream)
  }
})

const pgliteSession = (tx: Transaction): BulkSession => ({
  run: async (text, params) => {
    const r = await tx.query<any>(text, params as Array<unknown>)
    return { rows: r.rows, count: r.affectedRows ?? 0 }
  },
  copy: async (table, columns, pieces) => {
    await tx.query(`copy ${table} (${columns.join(", ")}) from '/dev/blob'`, [], { blob: new Blob([...pieces]) })
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
    return (native.pglite as PGlite).transaction(async (tx) => {
      await tx.query(ASYNC_COMMIT)
      return body(pgliteSession(tx))
    })
  }
  const client = await (native.pool as pg.Pool).connect()
  try {
    await client.query("begin")
    await client.query(ASYNC_COMMIT)
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

export const FACT_COLUMNS = [
  "cik",
  "taxonomy",
  "concept",
  "unit",
  "start_date",
  "end_date",
  "accession",
  "value",
  "fy",
  "fp",
  "form",
  "filed",
  "frame"
] as const

const FILING_COLUMNS = [
  "cik",
  "accession",
  "form",
  "filed_at",
  "accepted_at",
  "report_date",
  "primary_document",
  "primary_doc_description",
  "items",
  "is_xbrl",
  "url"
] as const

const NEEDS_ESCAPE = /[\\\t\n\r]/

/** A text value in `COPY`'s text format (most need no escaping: tested first). */
const text = (v: string): string => (NEEDS_ESCAPE.test(v) ? v.replace(ESCAPES, escapeOne) : v)

const optional = (v: string | null): string => (v === null ? "\\N" : text(v))

/**
 * The `COPY` text of `equity_facts` rows for a company's facts, a repeated natural key once (the first), as
 * `putFacts` keeps them; written straight from the facts, in pieces of about 1 MB. Returns the pieces and the
 * number of rows.
 */
export const factCopyText = (
  cik: string,
  facts: ReadonlyArray<Fact>
): { readonly pieces: Array<string>; readonly rows: number } => {
  const seen = new Set<string>()
  const pieces: Array<string> = []
  const c = text(cik)
  let current = ""
  let rows = 0
  for (const f of facts) {
    const start = f.start ?? ""
    const key = `${f.taxonomy}|${f.concept}|${f.unit}|${start}|${f.end}|${f.accession}`
    if (seen.has(key)) continue
    seen.add(key)
    rows++
    current += `${c}\t${text(f.taxonomy)}\t${text(f.concept)}\t${text(f.unit)}\t${text(start)}\t${text(f.end)}\t${text(f.accession)}\t${text(f.value)}\t${f.fy === null ? "\\N" : f.fy}\t${optional(f.fp)}\t${text(f.form)}\t${text(f.filed)}\t${optional(f.frame)}\n`
    if (current.length >= 1 << 20) {
      pieces.push(current)
      current = ""
    }
  }
  if (current.length > 0) pieces.push(current)
  return { pieces, rows }
}

export const filingRows = (cik: string, filings: ReadonlyArray<Filing>): Array<Array<CopyValue>> => {
  const seen = new Set<string>()
  const rows: Array<Array<CopyValue>> = []
  for (const f of filings) {
    if (seen.has(f.accession)) continue
    seen.add(f.accession)
    rows.push([
      cik,
      f.accession,
      f.form,
      f.filedAt,
      f.acceptedAt,
      f.reportDate,
      f.primaryDocument,
      f.primaryDocDescription,
      f.items,
      f.isXbrl,
      f.url
    ])
  }
  return rows
}

const companyParams = (c: Company) => [
  c.cik,
  c.name,
  JSON.stringify(c.tickers),
  JSON.stringify(c.exchanges),
  c.sic,
  c.sicDescription,
  c.fiscalYearEnd,
  JSON.stringify(c.formerNames)
]

const INSERT_COMPANY = `insert into equity_companies (cik, name, tickers, exchanges, sic, sic_description, fiscal_year_end, former_names)
  values ($1, $2, $3::jsonb, $4::jsonb, $5, $6, $7, $8::jsonb)`

/**
 * Writes `rows` of a company into `table`: a plain `COPY` when the company has no row there yet (every row is
 * new), else through a staging table, keeping the rows already there. Returns the rows new to the table.
 */
const writeRows = async (
  s: BulkSession,
  table: "equity_facts" | "equity_filings",
  columns: ReadonlyArray<string>,
  cik: string,
  data: { readonly pieces: ReadonlyArray<string>; readonly rows: number }
): Promise<number> => {
  if (data.rows === 0) return 0
  const existing = await s.run(`select 1 from ${table} where cik = $1 limit 1`, [cik])
  if (existing.rows.length === 0) {
    await s.copy(table, columns, data.pieces)
    return data.rows
  }
  const stage = `bulk_stage_${table}`
  await s.run(`create temp table ${stage} (like ${table}) on commit drop`)
  await s.copy(stage, columns, data.pieces)
  const list = columns.join(", ")
  return (await s.run(`insert into ${table} (${list}) select ${list} from ${stage} on conflict do nothing`)).count
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
        let companies = 0
        if (entry.company !== null) {
          const c = entry.company.value
          const before = await s.run(`select 1 from equity_companies where cik = $1`, [c.cik])
          if (before.rows.length === 0) companies = 1
          if (entry.company.mode === "replace") {
            await s.run(
              `${INSERT_COMPANY} on conflict (cik) do update set name = excluded.name, tickers = excluded.tickers,
                 exchanges = excluded.exchanges, sic = excluded.sic, sic_description = excluded.sic_description,
                 fiscal_year_end = excluded.fiscal_year_end, former_names = excluded.former_names`,
              companyParams(c)
            )
          } else if (companies === 1) {
            await s.run(INSERT_COMPANY, companyParams(c))
          }
        }
        const facts = await writeRows(s, "equity_facts", FACT_COLUMNS, entry.cik, factCopyText(entry.cik, entry.facts))
        const filings = await writeRows(
          s,
          "equity_filings",
          FILING_COLUMNS,
          entry.cik,
          (() => {
            const rows = filingRows(entry.cik, entry.filings)
            return { pieces: copyText(rows), rows: rows.length }
          })()
        )
        const m = entry.mark
        await s.run(
          `insert into equity_bulk_entries (archive, entry, crc32, size, cik) values ($1, $2, $3, $4, $5)
             on conflict (archive, entry) do update set crc32 = excluded.crc32, size = excluded.size,
               cik = excluded.cik, loaded_at = now()`,
          [m.archive, m.entry, m.crc32, m.size, entry.cik]
        )
        return { companies, facts, filings }
      })
    )
})
