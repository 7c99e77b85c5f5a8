/**
 * Source health beside freshness: `market_source_status` gains when each component last succeeded
 * (`last_success_ms`) and the error text of its last failed fetch (`last_error`, cleared by the next success),
 * so `coverage` and `market-data sources` on any instance (or the CLI on the database) see what the ingesting
 * leader saw. Additive: both columns are nullable and older rows read as "not recorded".
 *
 * Frozen: never edit a migration that has shipped; add a new one. Imports nothing from the core.
 */
import { type Kysely, sql } from "kysely"

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table market_source_status add column if not exists last_success_ms bigint`.execute(db)
  await sql`alter table market_source_status add column if not exists last_error text`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table market_source_status drop column if exists last_error`.execute(db)
  await sql`alter table market_source_status drop column if exists last_success_ms`.execute(db)
}
