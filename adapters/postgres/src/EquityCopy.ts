/**
 * Writes a whole equity data set (the simulated companies) with `COPY`, inside a caller's bulk transaction
 * (`inBulkTransaction`): the same rows, deduplicated by the same rules, as writing it company by company through
 * `PgEquityStore` (`putCompany`, `putFacts`, ... then `putTickers`, `putOwnershipReports`, `putHoldingsReports`), at
 * `COPY` speed (PGlite's `COPY FROM '/dev/blob'`, its fastest way in).
 *
 * Tables keyed by CIK (companies, tickers, facts, filings, bars) take a plain `COPY` when none of the data set's
 * CIKs has a row there (a caller that deleted them first, as the simulated load does), else go through a staging
 * table and `insert ... on conflict` with the store's own rule (replace, or keep the first). Tables keyed otherwise
 * (CUSIPs, Form 4 and 13F reports and their rows, by accession), which may hold rows of other companies, always go
 * through a staging table with the store's rule, so a row already there is treated exactly as the store treats it.
 */
import {
  type Company,
  type DailyBar,
  type Fact,
  type Filing,
  type HoldingsReport,
  issuerNameKey,
  type OwnershipReport,
  type TickerEntry
} from "@market-data/core"
import type { BulkSession } from "./Copy.ts"
import {
  type CopyValue,
  companyRow,
  copyText,
  FACT_COLUMNS,
  FILING_COLUMNS,
  factCopyText,
  filingRows
} from "./CopyText.ts"

/** A data set to write: every map is by CIK (bars by CIK, then ticker). */
export interface EquityRows {
  readonly companies: ReadonlyArray<Company>
  readonly tickers: ReadonlyArray<TickerEntry>
  readonly factsByCik: ReadonlyMap<string, ReadonlyArray<Fact>>
  readonly filingsByCik: ReadonlyMap<string, ReadonlyArray<Filing>>
  readonly securitiesByCik: ReadonlyMap<string, ReadonlyArray<string>>
  /** Daily bars of each listed ticker of each company: CIK -> ticker -> bars. */
  readonly barsByCik: ReadonlyMap<string, ReadonlyMap<string, ReadonlyArray<DailyBar>>>
  readonly ownershipReports: ReadonlyArray<OwnershipReport>
  readonly holdingsReports: ReadonlyArray<HoldingsReport>
}

/** Rows written (new or replaced) per table. */
export interface EquityRowsWritten {
  readonly companies: number
  readonly tickers: number
  readonly facts: number
  readonly filings: number
  readonly securities: number
  readonly bars: number
  readonly ownershipReports: number
  readonly insiderTransactions: number
  readonly holdingsReports: number
  readonly holdings: number
}

interface Pieces {
  readonly pieces: ReadonlyArray<string>
  readonly rows: number
}

const asPieces = (rows: ReadonlyArray<ReadonlyArray<CopyValue>>): Pieces => ({
  pieces: copyText(rows),
  rows: rows.length
})

const excludedSet = (columns: ReadonlyArray<string>) => columns.map((c) => `${c} = excluded.${c}`).join(", ")

/** `COPY` into a staging table like `table`, then one `insert ... select ... <conflict>`; rows written. */
const staged = async (
  s: BulkSession,
  table: string,
  columns: ReadonlyArray<string>,
  data: Pieces,
  conflict: string
): Promise<number> => {
  if (data.rows === 0) return 0
  const stage = `equity_copy_stage_${table}`
  await s.run(`drop table if exists ${stage}`)
  await s.run(`create temp table ${stage} (like ${table}) on commit drop`)
  await s.copy(stage, columns, data.pieces)
  const list = columns.join(", ")
  return (await s.run(`insert into ${table} (${list}) select ${list} from ${stage} ${conflict}`)).count
}

/**
 * Most text one plain `COPY` of `byCik` sends: a large table goes in several, each reported (`onChunk`). On the
 * embedded store one `COPY` holds the main thread until it is in, so a chunk is the longest a start goes without
 * a progress line: 1 MB takes about half a second on a quiet core.
 */
const COPY_CHUNK_CHARS = 1 << 20

/**
 * A table keyed by CIK: a plain `COPY` when none of `ciks` has a row in it (in chunks of about
 * `COPY_CHUNK_CHARS`, `onChunk` called after each with the characters sent so far), else `staged` with `conflict`.
 */
const byCik = async (
  s: BulkSession,
  table: string,
  columns: ReadonlyArray<string>,
  ciks: ReadonlyArray<string>,
  data: Pieces,
  conflict: string,
  onChunk: (sent: number, total: number) => void = () => undefined
): Promise<number> => {
  if (data.rows === 0) return 0
  const existing = await s.run(
    `select 1 from ${table} where cik in (select jsonb_array_elements_text($1::jsonb)) limit 1`,
    [JSON.stringify(ciks)]
  )
  if (existing.rows.length > 0) return staged(s, table, columns, data, conflict)
  // Pieces end at a row's end, so a chunk of whole pieces is whole rows.
  const total = data.pieces.reduce((n, piece) => n + piece.length, 0)
  let chunk: Array<string> = []
  let size = 0
  let sent = 0
  for (const piece of data.pieces) {
    chunk.push(piece)
    size += piece.length
    if (size >= COPY_CHUNK_CHARS) {
      await s.copy(table, columns, chunk)
      sent += size
      onChunk(sent, total)
      chunk = []
      size = 0
    }
  }
  if (chunk.length > 0) await s.copy(table, columns, chunk)
  return data.rows
}

const COMPANY_COLUMNS = [
  "cik",
  "name",
  "tickers",
  "exchanges",
  "sic",
  "sic_description",
  "fiscal_year_end",
  "former_names"
] as const
const TICKER_COLUMNS = ["cik", "ticker", "name", "exchange"] as const
const BAR_COLUMNS = ["cik", "ticker", "t_ms", "o", "h", "l", "c", "v"] as const
const SECURITY_COLUMNS = ["cusip", "cik"] as const
const OWNERSHIP_COLUMNS = [
  "accession",
  "issuer_cik",
  "form",
  "filed_at",
  "period_of_report",
  "issuer_name",
  "issuer_ticker",
  "owners",
  "date_of_original_submission"
] as const
const TRANSACTION_COLUMNS = [
  "accession",
  "seq",
  "table_kind",
  "security_title",
  "transaction_date",
  "code",
  "acquired_disposed",
  "shares",
  "price_per_share",
  "shares_owned_after",
  "direct_indirect",
  "exercise_price",
  "underlying_shares",
  "footnotes"
] as const
const HOLDINGS_REPORT_COLUMNS = ["accession", "filer_cik", "filer_name", "form", "filed_at", "report_period"] as const
const HOLDING_COLUMNS = [
  "accession",
  "seq",
  "name_of_issuer",
  "issuer_key",
  "title_of_class",
  "cusip",
  "value_usd",
  "shares",
  "shares_type",
  "put_call",
  "investment_discretion",
  "voting_sole",
  "voting_shared",
  "voting_none"
] as const

const firstBy = <A>(xs: ReadonlyArray<A>, key: (a: A) => string): Array<A> => {
  const seen = new Map<string, A>()
  for (const x of xs) if (!seen.has(key(x))) seen.set(key(x), x)
  return [...seen.values()]
}

/**
 * Writes `rows` in the caller's transaction, in the order the store's writes would leave them (a company's later
 * duplicate replaces an earlier one where the store replaces; the first is kept where the store keeps it).
 * `onTable` hears each table's name before its rows go in, and how far a large one is (a start's progress lines).
 */
export const copyEquityRows = async (
  s: BulkSession,
  rows: EquityRows,
  onTable: (table: string, done?: string) => void = () => undefined
): Promise<EquityRowsWritten> => {
  const companies = new Map<string, Company>()
  for (const c of rows.companies) companies.set(c.cik, c)
  const ciks = [...new Set([...companies.keys(), ...rows.tickers.map((t) => t.cik)])]

  const companyRows = asPieces([...companies.values()].map(companyRow))
  onTable("equity_companies")
  const writtenCompanies = await byCik(
    s,
    "equity_companies",
    COMPANY_COLUMNS,
    ciks,
    companyRows,
    `on conflict (cik) do update set ${excludedSet(COMPANY_COLUMNS.slice(1))}`,
    (sent, total) => onTable("equity_companies", `${Math.round((100 * sent) / total)} %`)
  )

  const factPieces: Array<string> = []
  let factRows = 0
  let rendered = 0
  for (const [cik, facts] of rows.factsByCik) {
    const text = factCopyText(cik, facts)
    factPieces.push(...text.pieces)
    factRows += text.rows
    // Rendering every company's facts as COPY text takes seconds: each company is reported.
    onTable("equity_facts", `preparing: ${++rendered} of ${rows.factsByCik.size} companies`)
  }
  onTable("equity_facts")
  const facts = await byCik(
    s,
    "equity_facts",
    FACT_COLUMNS,
    ciks,
    { pieces: factPieces, rows: factRows },
    "on conflict do nothing",
    (sent, total) => onTable("equity_facts", `${Math.round((100 * sent) / total)} %`)
  )

  const filingTable: Array<Array<CopyValue>> = []
  for (const [cik, filings] of rows.filingsByCik) filingTable.push(...filingRows(cik, filings))
  onTable("equity_filings")
  const filings = await byCik(
    s,
    "equity_filings",
    FILING_COLUMNS,
    ciks,
    asPieces(filingTable),
    "on conflict do nothing",
    (sent, total) => onTable("equity_filings", `${Math.round((100 * sent) / total)} %`)
  )

  // One CUSIP belongs to one company: the last company naming it wins, as successive `putSecurities` leave it.
  const cusips = new Map<string, string>()
  for (const [cik, list] of rows.securitiesByCik) for (const cusip of list) cusips.set(cusip.toUpperCase(), cik)
  onTable("equity_securities")
  const securities = await staged(
    s,
    "equity_securities",
    SECURITY_COLUMNS,
    asPieces([...cusips].map(([cusip, cik]) => [cusip, cik])),
    "on conflict (cusip) do update set cik = excluded.cik"
  )

  const barTable: Array<Array<CopyValue>> = []
  for (const [cik, byTicker] of rows.barsByCik) {
    for (const [ticker, bars] of byTicker) {
      const byOpen = new Map<number, DailyBar>()
      for (const b of bars) byOpen.set(b.tMs, b)
      for (const b of byOpen.values()) barTable.push([cik, ticker, b.tMs, b.o, b.h, b.l, b.c, b.v])
    }
  }
  onTable("equity_bars")
  const bars = await byCik(
    s,
    "equity_bars",
    BAR_COLUMNS,
    ciks,
    asPieces(barTable),
    `on conflict (cik, ticker, t_ms) do update set ${excludedSet(BAR_COLUMNS.slice(3))}`,
    (sent, total) => onTable("equity_bars", `${Math.round((100 * sent) / total)} %`)
  )

  const tickerRows = new Map<string, TickerEntry>()
  for (const t of rows.tickers) tickerRows.set(`${t.cik}|${t.ticker}`, t)
  onTable("equity_tickers")
  const tickers = await byCik(
    s,
    "equity_tickers",
    TICKER_COLUMNS,
    ciks,
    asPieces([...tickerRows.values()].map((t) => [t.cik, t.ticker, t.name, t.exchange])),
    "on conflict (cik, ticker) do update set name = excluded.name, exchange = excluded.exchange",
    (sent, total) => onTable("equity_tickers", `${Math.round((100 * sent) / total)} %`)
  )

  // Reports: their rows first, then the report (as the store writes them); a report already there is kept.
  const ownership = firstBy(rows.ownershipReports, (r) => r.accession)
  onTable("equity_insider_transactions")
  const insiderTransactions = await staged(
    s,
    "equity_insider_transactions",
    TRANSACTION_COLUMNS,
    asPieces(
      ownership.flatMap((r) =>
        r.transactions.map((t, seq) => [
          r.accession,
          seq,
          t.table,
          t.securityTitle,
          t.transactionDate,
          t.code,
          t.acquiredDisposed,
          t.shares,
          t.pricePerShare,
          t.sharesOwnedAfter,
          t.directIndirect,
          t.exercisePrice,
          t.underlyingShares,
          JSON.stringify(t.footnotes)
        ])
      )
    ),
    "on conflict do nothing"
  )
  onTable("equity_ownership_reports")
  const ownershipReports = await staged(
    s,
    "equity_ownership_reports",
    OWNERSHIP_COLUMNS,
    asPieces(
      ownership.map((r) => [
        r.accession,
        r.issuerCik,
        r.form,
        r.filedAt,
        r.periodOfReport,
        r.issuerName,
        r.issuerTicker,
        JSON.stringify(r.owners),
        r.dateOfOriginalSubmission
      ])
    ),
    "on conflict do nothing"
  )

  const thirteenF = firstBy(rows.holdingsReports, (r) => r.accession)
  onTable("equity_holdings")
  const holdings = await staged(
    s,
    "equity_holdings",
    HOLDING_COLUMNS,
    asPieces(
      thirteenF.flatMap((r) =>
        r.holdings.map((h, seq) => [
          r.accession,
          seq,
          h.nameOfIssuer,
          issuerNameKey(h.nameOfIssuer),
          h.titleOfClass,
          h.cusip,
          h.valueUsd,
          h.shares,
          h.sharesType,
          h.putCall,
          h.investmentDiscretion,
          h.votingSole,
          h.votingShared,
          h.votingNone
        ])
      )
    ),
    "on conflict do nothing"
  )
  onTable("equity_holdings_reports")
  const holdingsReports = await staged(
    s,
    "equity_holdings_reports",
    HOLDINGS_REPORT_COLUMNS,
    asPieces(thirteenF.map((r) => [r.accession, r.filerCik, r.filerName, r.form, r.filedAt, r.reportPeriod])),
    "on conflict do nothing"
  )

  return {
    companies: writtenCompanies,
    tickers,
    facts,
    filings,
    securities,
    bars,
    ownershipReports,
    insiderTransactions,
    holdingsReports,
    holdings
  }
}
