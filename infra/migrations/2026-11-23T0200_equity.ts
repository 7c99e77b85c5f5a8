/**
 * The equity plane's tables: companies, tickers, XBRL facts, filings, Form 4 reports and their transactions,
 * 13F reports and their holdings, CUSIPs, daily bars.
 *
 * Frozen: never edit a migration that has shipped; add a new one. Imports nothing from the core.
 *
 * Conventions (adapters/postgres/src/Bulk.ts): natural keys as primary keys; figures as filed in `numeric`
 * (read back as the same decimal strings); dates as `YYYY-MM-DD` text and instants as ISO 8601 text, exactly as
 * the model carries them; bar times as epoch-millisecond `bigint`, prices as `double precision`. Filings and
 * facts are kept forever (no retention).
 */
import { type Kysely, sql } from "kysely"

const UP: ReadonlyArray<string> = [
  `create table equity_companies (
      cik text primary key,
      name text not null,
      tickers jsonb not null,
      exchanges jsonb not null,
      sic text,
      sic_description text,
      fiscal_year_end text,
      former_names jsonb not null
    )`,
  `create table equity_tickers (
      cik text not null,
      ticker text not null,
      name text not null,
      exchange text,
      primary key (cik, ticker)
    )`,
  `create table equity_facts (
      cik text not null,
      taxonomy text not null,
      concept text not null,
      unit text not null,
      -- '' for instants (a primary key column cannot be null)
      start_date text not null,
      end_date text not null,
      accession text not null,
      value numeric not null,
      fy integer,
      fp text,
      form text not null,
      filed text not null,
      frame text,
      primary key (cik, concept, taxonomy, unit, start_date, end_date, accession)
    )`,
  `create table equity_filings (
      cik text not null,
      accession text not null,
      form text not null,
      filed_at text not null,
      accepted_at text not null,
      report_date text,
      primary_document text not null,
      primary_doc_description text,
      items text,
      is_xbrl boolean not null,
      url text not null,
      primary key (cik, accession)
    )`,
  `create index equity_filings_accepted on equity_filings (cik, accepted_at desc, accession desc)`,
  `create table equity_ownership_reports (
      accession text primary key,
      issuer_cik text not null,
      form text not null,
      filed_at text not null,
      period_of_report text not null,
      issuer_name text not null,
      issuer_ticker text not null,
      owners jsonb not null,
      date_of_original_submission text
    )`,
  `create index equity_ownership_reports_issuer on equity_ownership_reports (issuer_cik, filed_at)`,
  `create table equity_insider_transactions (
      accession text not null,
      seq integer not null,
      table_kind text not null check (table_kind in ('non_derivative', 'derivative')),
      security_title text not null,
      transaction_date text not null,
      code text not null,
      acquired_disposed text not null check (acquired_disposed in ('A', 'D')),
      shares numeric not null,
      price_per_share numeric,
      shares_owned_after numeric,
      direct_indirect text not null check (direct_indirect in ('D', 'I')),
      exercise_price numeric,
      underlying_shares numeric,
      footnotes jsonb not null,
      primary key (accession, seq)
    )`,
  `create table equity_holdings_reports (
      accession text primary key,
      filer_cik text not null,
      filer_name text not null,
      form text not null,
      filed_at text not null,
      report_period text not null
    )`,
  `create index equity_holdings_reports_filer on equity_holdings_reports (filer_cik)`,
  `create table equity_holdings (
      accession text not null,
      seq integer not null,
      name_of_issuer text not null,
      -- the issuer name normalized for matching companies without a CUSIP on file
      issuer_key text not null,
      title_of_class text not null,
      cusip text not null,
      value_usd numeric not null,
      shares numeric not null,
      shares_type text not null check (shares_type in ('SH', 'PRN')),
      put_call text check (put_call in ('Put', 'Call')),
      investment_discretion text not null,
      voting_sole numeric not null,
      voting_shared numeric not null,
      voting_none numeric not null,
      primary key (accession, seq)
    )`,
  `create index equity_holdings_cusip on equity_holdings (upper(cusip))`,
  `create index equity_holdings_issuer_key on equity_holdings (issuer_key)`,
  `create table equity_securities (
      cusip text primary key,
      cik text not null
    )`,
  `create index equity_securities_cik on equity_securities (cik)`,
  `create table equity_bars (
      cik text not null,
      t_ms bigint not null,
      o double precision not null,
      h double precision not null,
      l double precision not null,
      c double precision not null,
      v double precision not null,
      primary key (cik, t_ms)
    )`
]

const DOWN: ReadonlyArray<string> = [
  `drop table if exists equity_bars`,
  `drop table if exists equity_securities`,
  `drop table if exists equity_holdings`,
  `drop table if exists equity_holdings_reports`,
  `drop table if exists equity_insider_transactions`,
  `drop table if exists equity_ownership_reports`,
  `drop table if exists equity_filings`,
  `drop table if exists equity_facts`,
  `drop table if exists equity_tickers`,
  `drop table if exists equity_companies`
]

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of UP) await sql.raw(statement).execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const statement of DOWN) await sql.raw(statement).execute(db)
}
