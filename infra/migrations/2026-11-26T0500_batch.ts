/**
 * Group commit on PostgreSQL: `md_batch` runs many store calls of concurrent requests in one statement and one
 * transaction, ordered by lock key and lock class (`md_batch_rank`) so that batches cannot deadlock on each
 * other; `md_batch_call` runs one member. All members run in one block first; when one fails, that block is
 * rolled back and they run again each in its own sub-block (a failing member is rolled back and answered alone).
 * It calls the money functions as they are and changes no table.
 *
 * Frozen: never edit a migration that has shipped; add a new one. Imports nothing from the core. The functions'
 * texts are their module's (`@market-data/postgres`, `src/sql/md_batch.ts`), exactly what this migration ran.
 */
import { MD_BATCH, MD_BATCH_CALL, MD_BATCH_RANK } from "@market-data/postgres"
import { type Kysely, sql } from "kysely"

export async function up(db: Kysely<any>): Promise<void> {
  await sql.raw(MD_BATCH_RANK).execute(db)
  await sql.raw(MD_BATCH_CALL).execute(db)
  await sql.raw(MD_BATCH).execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw("drop function if exists md_batch(jsonb)").execute(db)
  await sql.raw("drop function if exists md_batch_call(text, jsonb)").execute(db)
  await sql.raw("drop function if exists md_batch_rank(text)").execute(db)
}
