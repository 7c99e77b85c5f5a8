/**
 * The money port (core `MoneyStore`): one database function per call of the paid path. `md_admit` (rate unit,
 * key revocation, Idempotency-Key begin, hold), `md_finish` (settle, keep or release) and `md_charge` (the
 * metered rate unit, key revocation and charge) replace the functions the old ports called one step at a time
 * (`md_hold`, `md_settle`, `md_rate_begin`, `md_meter_charge`), which are dropped. `md_rate_consume` (the rate
 * limiter's), `md_available` and `md_grant` stay.
 *
 * Frozen: never edit a migration that has shipped; add a new one. Imports nothing from the core. The new
 * functions' texts are their modules' (`@market-data/postgres`, `src/sql/`), exactly what this migration ran; the
 * dropped ones' texts (for `down`) are the frozen copies in the migrations that last defined them.
 */
import { MD_ADMIT, MD_CHARGE, MD_FINISH } from "@market-data/postgres"
import { type Kysely, sql } from "kysely"
import { MD_HOLD } from "./2026-11-22T0001_accounts.ts"
import { MD_METER_CHARGE } from "./2026-11-23T0001_metered_charge.ts"
import { MD_SETTLE } from "./2026-11-23T0002_settle_owner.ts"
import { MD_RATE_BEGIN } from "./2026-11-23T0400_rate_begin.ts"

const OLD = [
  "drop function if exists md_hold(text, text, bigint, bigint, bigint)",
  "drop function if exists md_settle(text, bigint, text, bigint, text, text, text, integer, jsonb, text, bigint)",
  "drop function if exists md_rate_begin(text, integer, bigint, bigint, bigint, text, text, text, text, bigint)",
  "drop function if exists md_meter_charge(text, bigint, bigint, text, bigint, text, integer, bigint, bigint)"
]

const UP = [MD_ADMIT, MD_FINISH, MD_CHARGE, ...OLD]

const DOWN = [
  "drop function if exists md_charge(text, bigint, bigint, text, bigint, text, integer, bigint, bigint)",
  "drop function if exists md_finish(text, text, text, bigint, bigint, text, bigint, text, text, integer, jsonb, text, bigint)",
  "drop function if exists md_admit(text, bigint, text, integer, bigint, bigint, bigint, text, bigint, text, text, text, bigint)",
  MD_HOLD,
  MD_SETTLE,
  MD_RATE_BEGIN,
  MD_METER_CHARGE
]

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of UP) await sql.raw(statement).execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const statement of DOWN) await sql.raw(statement).execute(db)
}
