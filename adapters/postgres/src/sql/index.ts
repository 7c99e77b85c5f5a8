/**
 * The database functions as they run today, one module each (`md_*.ts`), in one list: each text is the
 * `create` statement of the function's current definition, byte for byte as the migration that made it ran it
 * (that migration imports it). A test compares each with what a migrated database holds (`pg_get_functiondef`).
 */
import { MD_ADMIT } from "./md_admit.ts"
import { MD_AVAILABLE } from "./md_available.ts"
import { MD_BATCH, MD_BATCH_CALL, MD_BATCH_RANK } from "./md_batch.ts"
import { MD_CHARGE } from "./md_charge.ts"
import { MD_FINISH } from "./md_finish.ts"
import { MD_GRANT } from "./md_grant.ts"
import { MD_RATE_CONSUME } from "./md_rate_consume.ts"
import { MD_TOP_UP } from "./md_top_up.ts"

export { MD_ADMIT } from "./md_admit.ts"
export { MD_AVAILABLE } from "./md_available.ts"
export { MD_BATCH, MD_BATCH_CALL, MD_BATCH_RANK } from "./md_batch.ts"
export { MD_CHARGE } from "./md_charge.ts"
export { MD_FINISH } from "./md_finish.ts"
export { MD_GRANT } from "./md_grant.ts"
export { MD_HOLD } from "./md_hold.ts"
export { MD_METER_CHARGE } from "./md_meter_charge.ts"
export { MD_RATE_BEGIN } from "./md_rate_begin.ts"
export { MD_RATE_CONSUME } from "./md_rate_consume.ts"
export { MD_SETTLE } from "./md_settle.ts"
export { MD_TOP_UP } from "./md_top_up.ts"

/** A database function: its name, the migration that created its current definition, and that definition. */
export interface DatabaseFunction {
  readonly name: string
  readonly migration: string
  readonly definition: string
}

/**
 * Every function the migrations leave in the database (a test checks the list is complete). The modules of
 * functions a later migration dropped (`md_hold`, `md_settle`, `md_rate_begin`, `md_meter_charge`, replaced by
 * `md_admit`, `md_finish` and `md_charge` in `2026-11-26T0400_money_port`) stay, frozen, for the migrations that
 * created them; they do not run.
 */
export const databaseFunctions: ReadonlyArray<DatabaseFunction> = [
  { name: "md_available", migration: "2026-11-22T0001_accounts", definition: MD_AVAILABLE },
  { name: "md_grant", migration: "2026-11-22T0001_accounts", definition: MD_GRANT },
  { name: "md_rate_consume", migration: "2026-11-22T0001_accounts", definition: MD_RATE_CONSUME },
  { name: "md_top_up", migration: "2026-11-25T2300_top_up", definition: MD_TOP_UP },
  { name: "md_admit", migration: "2026-11-26T0400_money_port", definition: MD_ADMIT },
  { name: "md_finish", migration: "2026-11-26T0400_money_port", definition: MD_FINISH },
  { name: "md_charge", migration: "2026-11-26T0400_money_port", definition: MD_CHARGE },
  { name: "md_batch_rank", migration: "2026-11-26T0500_batch", definition: MD_BATCH_RANK },
  { name: "md_batch_call", migration: "2026-11-26T0500_batch", definition: MD_BATCH_CALL },
  { name: "md_batch", migration: "2026-11-26T0500_batch", definition: MD_BATCH }
]
