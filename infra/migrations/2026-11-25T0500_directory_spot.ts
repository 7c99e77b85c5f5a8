/**
 * Spot markets in the asset directory: a venue may name a perpetual and a spot pair alike (Binance and Bybit
 * `BTCUSDT`), so a listing is keyed by `(venue, market, symbol)`, not `(venue, symbol)`. Every stored row keeps
 * its key (the old key was unique, so the new one is too).
 *
 * Frozen: never edit a migration that has shipped; add a new one. Imports nothing from the core.
 */
import { type Kysely, sql } from "kysely"

export async function up(db: Kysely<any>): Promise<void> {
  await sql.raw("alter table crypto_directory_listings drop constraint crypto_directory_listings_pkey").execute(db)
  await sql.raw("alter table crypto_directory_listings add primary key (venue, market, symbol)").execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw("delete from crypto_directory_listings where market = 'spot'").execute(db)
  await sql.raw("alter table crypto_directory_listings drop constraint crypto_directory_listings_pkey").execute(db)
  await sql.raw("alter table crypto_directory_listings add primary key (venue, symbol)").execute(db)
}
