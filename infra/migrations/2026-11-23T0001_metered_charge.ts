/**
 * The metered charge: one round trip for a paid request whose result is already in hand. It spends the
 * request's rate unit and charges the delivered amount when the available balance covers the request's hold
 * amount, in one transaction: rate scope row lock first, then the account row lock. No other function takes
 * these two locks, and each takes at most one of them or the account before a hold, so no lock cycle exists.
 *
 * Frozen: never edit a migration that has shipped; add a new one. Imports nothing from the core. The function's
 * text is its module's (`@market-data/postgres`, `src/sql/md_meter_charge.ts`), exactly what this migration ran.
 */
import { MD_METER_CHARGE } from "@market-data/postgres"
import { type Kysely, sql } from "kysely"

const UP = MD_METER_CHARGE

export async function up(db: Kysely<any>): Promise<void> {
  await sql.raw(UP).execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql
    .raw("drop function if exists md_meter_charge(text, bigint, bigint, text, bigint, text, integer, bigint, bigint)")
    .execute(db)
}
