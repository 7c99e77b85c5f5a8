/**
 * Daily bars keyed by ticker: `equity_bars` gains `ticker` and its key becomes (cik, ticker, t_ms). Every ticker is
 * its own equity asset (`eq:<cik>:<ticker>`), and share classes (BRK-A and BRK-B, GOOGL and GOOG) trade apart;
 * one series per company answered every class from the same prices.
 *
 * Rows already there belong to the company's primary ticker: the first ticker of its company row
 * (`equity_companies.tickers`, in the order the submissions feed lists them), else the first (by code point) of
 * its ticker-list rows (`equity_tickers`), which is the order `issuerCompany` gives the company's tickers. A CIK
 * with neither (bars of a company the store cannot name) keeps its rows under the empty ticker, where no asset
 * reads them; no such rows are written by any path of the service (both price paths refuse unknown companies).
 *
 * `down` restores the old key: per company and day it keeps the row of the first ticker (by code point).
 *
 * Frozen: never edit a migration that has shipped; add a new one. Imports nothing from the core.
 */
import { type Kysely, sql } from "kysely"

const UP: ReadonlyArray<string> = [
  `alter table equity_bars add column ticker text`,
  `update equity_bars b set ticker = coalesce(
      (select c.tickers ->> 0 from equity_companies c
        where c.cik = b.cik and jsonb_typeof(c.tickers) = 'array' and jsonb_array_length(c.tickers) > 0),
      (select min(t.ticker collate "C") from equity_tickers t where t.cik = b.cik),
      '')`,
  `alter table equity_bars alter column ticker set not null`,
  `alter table equity_bars drop constraint equity_bars_pkey`,
  `alter table equity_bars add constraint equity_bars_pkey primary key (cik, ticker, t_ms)`
]

const DOWN: ReadonlyArray<string> = [
  `delete from equity_bars b where exists (
      select 1 from equity_bars o
       where o.cik = b.cik and o.t_ms = b.t_ms and (o.ticker collate "C") < (b.ticker collate "C"))`,
  `alter table equity_bars drop constraint equity_bars_pkey`,
  `alter table equity_bars drop column ticker`,
  `alter table equity_bars add constraint equity_bars_pkey primary key (cik, t_ms)`
]

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of UP) await sql.raw(statement).execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const statement of DOWN) await sql.raw(statement).execute(db)
}
