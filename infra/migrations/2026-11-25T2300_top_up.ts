/**
 * `md_top_up`: "make the key's available balance at least N" as one locked decision (the start-up bootstrap key).
 * Before it, the bootstrap read the balance and granted the difference in two statements, so two instances
 * starting together could both grant.
 *
 * Frozen: never edit a migration that has shipped; add a new one. Imports nothing from the core. The function's
 * text is its module's (`@market-data/postgres`, `src/sql/top_up_credits.ts`), exactly what this migration ran.
 */
import { MD_TOP_UP } from "@market-data/postgres"
import { type Kysely, sql } from "kysely"

const UP = MD_TOP_UP

export async function up(db: Kysely<any>): Promise<void> {
  await sql.raw(UP).execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw("drop function if exists md_top_up(text, bigint, text, bigint)").execute(db)
}
