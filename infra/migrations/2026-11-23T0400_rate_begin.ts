/**
 * `md_rate_begin`: one round trip for a paid request carrying an Idempotency-Key. It spends the request's rate
 * unit through `md_rate_consume` itself (the same function the rate limiter calls, so the two paths can never
 * count differently) and, only when the unit was admitted, begins under the idempotency key exactly as the
 * store's `begin` does: a live record answers as it stands (in flight, a different request, or the stored answer
 * to replay, read without a lock or a write), and otherwise the key is taken with the same conditional upsert
 * as `begin` (free, or its record expired).
 *
 * Locks, in order: the rate scope row (`md_rate_consume`), then, only when taking the key, the idempotency record
 * row (the conflicting insert locks it even when its condition leaves it unchanged, so the read after it sees that
 * very record). No function takes them the other way round (`md_settle` locks the account, the hold, then the
 * record), so no lock cycle exists.
 *
 * Frozen: never edit a migration that has shipped; add a new one. Imports nothing from the core. The function's
 * text is its module's (`@market-data/postgres`, `src/sql/md_rate_begin.ts`), exactly what this migration ran.
 */
import { MD_RATE_BEGIN } from "@market-data/postgres"
import { type Kysely, sql } from "kysely"

const UP = MD_RATE_BEGIN

export async function up(db: Kysely<any>): Promise<void> {
  await sql.raw(UP).execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql
    .raw("drop function if exists md_rate_begin(text, integer, bigint, bigint, bigint, text, text, text, text, bigint)")
    .execute(db)
}
