/**
 * Crypto market data: 15-minute series per (asset, venue), the latest order book and funding state per
 * (asset, venue), and the status of each source component.
 *
 * Frozen: never edit a migration that has shipped; add a new one. Imports nothing from the core.
 *
 * Conventions (adapters/postgres/src/Bulk.ts): one row per natural key ending in time, primary key
 * `(asset_id, venue, t_ms)` (the index every range and "latest N" query walks), times as epoch-millisecond
 * `bigint`, market measurements as `double precision`, writes in batches, idempotent on the key.
 *
 * Retention: the sweeper deletes series rows with `t_ms < now - 400 days` (a year of history for the 1-year
 * percentiles and `series range=1y`, plus a margin); the latest-state tables hold one row per key and need none.
 *
 * The simulated feed does not persist here: it regenerates its history from the seed at each start (see the
 * simulated feed's module comment); these tables hold what live feeds deliver.
 */
import { type Kysely, sql } from "kysely"

const series = (table: string, columns: ReadonlyArray<string>) =>
  `create table ${table} (
      asset_id text not null,
      venue text not null,
      t_ms bigint not null,
      ${columns.map((c) => `${c} not null`).join(",\n      ")},
      primary key (asset_id, venue, t_ms)
    )`

const UP: ReadonlyArray<string> = [
  // 15-minute OHLCV bars; t_ms is the bar's open time, volume in base units.
  series("market_bars", [
    "open double precision",
    "high double precision",
    "low double precision",
    "close double precision",
    "volume double precision"
  ]),
  // Perpetual mark and index price snapshots (USD).
  series("market_mark_index", ["mark_price double precision", "index_price double precision"]),
  // Open interest snapshots (USD).
  series("market_open_interest", ["oi_usd double precision"]),
  // Taker buy/sell volume (USD) per 15-minute bucket opening at t_ms.
  series("market_taker_flow", ["buy_usd double precision", "sell_usd double precision"]),
  // Order-book metrics snapshots: mid, spread (% of mid), imbalance and USD depth within 1 % of mid.
  series("market_book_metrics", [
    "mid double precision",
    "spread_pct double precision",
    "imbalance double precision",
    "bid_depth_usd double precision",
    "ask_depth_usd double precision"
  ]),
  // Funding settlements: the rate (fraction of notional) for the interval ending at t_ms.
  series("market_funding", ["rate double precision", "interval_ms double precision"]),
  // Liquidations at t_ms: USD of longs and of shorts liquidated.
  series("market_liquidations", ["long_usd double precision", "short_usd double precision"]),
  `create table market_books (
      asset_id text not null,
      venue text not null,
      t_ms bigint not null,
      -- [[price, size], ...], best first
      bids jsonb not null,
      asks jsonb not null,
      primary key (asset_id, venue)
    )`,
  `create table market_funding_states (
      asset_id text not null,
      venue text not null,
      t_ms bigint not null,
      interval_ms bigint not null,
      next_funding_ms bigint not null,
      current_rate double precision not null,
      predicted_rate double precision not null,
      primary key (asset_id, venue)
    )`,
  `create table market_source_status (
      venue text not null,
      component text not null,
      source text not null check (source in ('simulated', 'live')),
      newest_ms bigint not null,
      cadence_ms bigint not null,
      checked_ms bigint not null,
      failing boolean not null,
      detail text,
      primary key (venue, component)
    )`
]

const DOWN: ReadonlyArray<string> = [
  "drop table if exists market_source_status",
  "drop table if exists market_funding_states",
  "drop table if exists market_books",
  "drop table if exists market_liquidations",
  "drop table if exists market_funding",
  "drop table if exists market_book_metrics",
  "drop table if exists market_taker_flow",
  "drop table if exists market_open_interest",
  "drop table if exists market_mark_index",
  "drop table if exists market_bars"
]

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of UP) await sql.raw(statement).execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const statement of DOWN) await sql.raw(statement).execute(db)
}
