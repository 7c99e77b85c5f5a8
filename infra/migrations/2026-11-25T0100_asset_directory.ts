/**
 * The crypto asset directory (core `crypto/Directory.ts`, port `AssetDirectoryStore`): one row per canonical
 * asset, one row per venue listing, and the cached public coin list.
 *
 * Frozen: never edit a migration that has shipped; add a new one. Imports nothing from the core.
 *
 * - `crypto_directory_assets`: the asset ID is permanent; rows are upserted, never deleted (an asset listed
 *   nowhere stays with `alive = false`). `aliases` is a JSON array of former tickers.
 * - `crypto_directory_listings`: primary key `(venue, symbol)`, so the database itself holds a venue symbol to one
 *   asset; `multiplier` (tokens per venue unit) and `contract_size` (tokens per contract, OKX) are exact `numeric`;
 *   times as epoch-millisecond `bigint`. A delisted listing stays with `status = 'delisted'`.
 * - `crypto_directory_meta`: one row (`id = 1`), the last refresh merged in and when the coin list was fetched;
 *   `merge` locks it (`for update`) so two instances merging at once run one after the other.
 * - `crypto_coin_list`: the coin list (CoinGecko `coins/list` shape: id, symbol, name), replaced whole on
 *   refresh; `ord` keeps the list's order (the slug rule reads it in that order).
 * No retention: the directory grows by a few hundred rows a year; the coin list is replaced, not appended.
 */
import { type Kysely, sql } from "kysely"

const UP: ReadonlyArray<string> = [
  `create table crypto_directory_assets (
      asset_id text primary key,
      symbol text not null,
      name text not null,
      aliases jsonb not null default '[]'::jsonb,
      coingecko_id text,
      slug_source text not null,
      alive boolean not null,
      first_seen_ms bigint not null
    )`,
  `create table crypto_directory_listings (
      venue text not null,
      symbol text not null,
      asset_id text not null references crypto_directory_assets (asset_id),
      market text not null check (market in ('perp', 'spot')),
      base text not null,
      quote text not null,
      multiplier numeric not null check (multiplier > 0),
      contract_size numeric check (contract_size > 0),
      status text not null check (status in ('trading', 'delisted')),
      first_seen_ms bigint not null,
      last_trading_ms bigint not null,
      primary key (venue, symbol)
    )`,
  "create index crypto_directory_listings_asset on crypto_directory_listings (asset_id)",
  `create table crypto_directory_meta (
      id integer primary key check (id = 1),
      updated_ms bigint not null,
      coins_fetched_ms bigint
    )`,
  "insert into crypto_directory_meta (id, updated_ms) values (1, 0)",
  `create table crypto_coin_list (
      ord integer primary key,
      coin_id text not null unique,
      symbol text not null,
      name text not null
    )`
]

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of UP) await sql.raw(statement).execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    "crypto_coin_list",
    "crypto_directory_meta",
    "crypto_directory_listings",
    "crypto_directory_assets"
  ])
    await sql.raw(`drop table if exists ${table}`).execute(db)
}
