/**
 * `COPY`'s text format for the bulk ingest's rows: plain string work, no driver, so the ingest's parsing worker
 * encodes rows with it off the main thread (`@market-data/postgres/copy-text`) and `Copy.ts` writes them.
 */
import type { Company, Fact, Filing } from "@market-data/core"

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

/** A company's row of `equity_companies`, in its column order (names, tickers and exchanges as JSON). */
export const companyRow = (c: Company): Array<CopyValue> => [
  c.cik,
  c.name,
  JSON.stringify(c.tickers),
  JSON.stringify(c.exchanges),
  c.sic,
  c.sicDescription,
  c.fiscalYearEnd,
  JSON.stringify(c.formerNames)
]

export const FILING_COLUMNS = [
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
 * The `COPY` text of `equity_facts` rows for `facts` of company `cik`, a natural key already in `seen` skipped
 * (and every key written added to it), as `putFacts` keeps a repeat: the first.
 */
export const factCopyRows = (
  cik: string,
  facts: ReadonlyArray<Fact>,
  seen: Set<string>
): { readonly text: string; readonly rows: number } => {
  const c = text(cik)
  let out = ""
  let rows = 0
  for (const f of facts) {
    const start = f.start ?? ""
    const key = `${f.taxonomy}|${f.concept}|${f.unit}|${start}|${f.end}|${f.accession}`
    if (seen.has(key)) continue
    seen.add(key)
    rows++
    out += `${c}\t${text(f.taxonomy)}\t${text(f.concept)}\t${text(f.unit)}\t${text(start)}\t${text(f.end)}\t${text(f.accession)}\t${text(f.value)}\t${f.fy === null ? "\\N" : f.fy}\t${optional(f.fp)}\t${text(f.form)}\t${text(f.filed)}\t${optional(f.frame)}\n`
  }
  return { text: out, rows }
}

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
  let current = ""
  let rows = 0
  for (let i = 0; i < facts.length; i += 2048) {
    const part = factCopyRows(cik, facts.slice(i, i + 2048), seen)
    rows += part.rows
    current += part.text
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

/** The `COPY` text of `equity_filings` rows for a company's filings, a repeated accession once (the first). */
export const filingCopyText = (
  cik: string,
  filings: ReadonlyArray<Filing>
): { readonly pieces: Array<string>; readonly rows: number } => {
  const rows = filingRows(cik, filings)
  return { pieces: copyText(rows), rows: rows.length }
}
