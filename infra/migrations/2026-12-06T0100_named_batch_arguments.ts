/**
 * `md_batch_call` reads each member's arguments by name (`{"key": ..., "now": ...}`, the called function's
 * parameter names without `p_`) and passes them on in named notation (`md_admit(p_key => ..., ...)`), instead of
 * by position in a JSON array. Same calls, same order, same answers; only the shape of a member's arguments changes.
 * A member whose arguments are not a JSON object (sent by a process older than this migration, by position) is
 * answered an error, as a failing member is, instead of running on arguments read as nulls.
 *
 * Frozen: never edit a migration that has shipped; add a new one. Imports nothing from the core. The new text is
 * its module's (`@market-data/postgres`, `src/sql/group_commit_batch.ts`), exactly what this migration ran; the
 * one it replaced (restored by `down`) is the frozen copy in `2026-11-26T0500_batch`.
 */
import { MD_BATCH_CALL } from "@market-data/postgres"
import { type Kysely, sql } from "kysely"
import { MD_BATCH_CALL as POSITIONAL } from "./2026-11-26T0500_batch.ts"

export async function up(db: Kysely<any>): Promise<void> {
  await sql.raw(MD_BATCH_CALL).execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw(POSITIONAL.replace("create function", "create or replace function")).execute(db)
}
