/**
 * `md_batch`: group commit on PostgreSQL. One statement runs many store calls of concurrent requests in one
 * transaction, each member in its own sub-block (a failing member is rolled back and answered alone), ordered by
 * lock key and lock class so that batches cannot deadlock on each other. It calls the money functions as they are
 * and changes no table.
 *
 * Frozen: never edit a migration that has shipped; add a new one. Imports nothing from the core. The function's
 * text is its module's (`@market-data/postgres`, `src/sql/md_batch.ts`), exactly what this migration ran.
 */
import { MD_BATCH } from "@market-data/postgres"
import { type Kysely, sql } from "kysely"

const UP = MD_BATCH

export async function up(db: Kysely<any>): Promise<void> {
  await sql.raw(UP).execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw("drop function if exists md_batch(jsonb)").execute(db)
}
