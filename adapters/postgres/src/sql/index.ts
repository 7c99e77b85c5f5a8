/**
 * The database functions as they run today, one module each (`md_*.ts`), in one list: each text is the
 * `create` statement of the function's current definition, byte for byte as the migration that made it ran it
 * (that migration imports it). A test compares each with what a migrated database holds (`pg_get_functiondef`).
 */
import { MD_AVAILABLE } from "./md_available.ts"
import { MD_BATCH, MD_BATCH_CALL, MD_BATCH_RANK } from "./md_batch.ts"
import { MD_GRANT } from "./md_grant.ts"
import { MD_HOLD } from "./md_hold.ts"
import { MD_METER_CHARGE } from "./md_meter_charge.ts"
import { MD_RATE_BEGIN } from "./md_rate_begin.ts"
import { MD_RATE_CONSUME } from "./md_rate_consume.ts"
import { MD_SETTLE } from "./md_settle.ts"
import { MD_TOP_UP } from "./md_top_up.ts"

export { MD_AVAILABLE } from "./md_available.ts"
export { MD_BATCH, MD_BATCH_CALL, MD_BATCH_RANK } from "./md_batch.ts"
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

/** Every function the migrations leave in the database (a test checks the list is complete). */
export const databaseFunctions: ReadonlyArray<DatabaseFunction> = [
  { name: "md_available", migration: "2026-11-22T0001_accounts", definition: MD_AVAILABLE },
  { name: "md_grant", migration: "2026-11-22T0001_accounts", definition: MD_GRANT },
  { name: "md_hold", migration: "2026-11-22T0001_accounts", definition: MD_HOLD },
  { name: "md_rate_consume", migration: "2026-11-22T0001_accounts", definition: MD_RATE_CONSUME },
  { name: "md_meter_charge", migration: "2026-11-23T0001_metered_charge", definition: MD_METER_CHARGE },
  { name: "md_settle", migration: "2026-11-23T0002_settle_owner", definition: MD_SETTLE },
  { name: "md_rate_begin", migration: "2026-11-23T0400_rate_begin", definition: MD_RATE_BEGIN },
  { name: "md_top_up", migration: "2026-11-25T2300_top_up", definition: MD_TOP_UP },
  { name: "md_batch_rank", migration: "2026-11-26T0100_batch", definition: MD_BATCH_RANK },
  { name: "md_batch_call", migration: "2026-11-26T0100_batch", definition: MD_BATCH_CALL },
  { name: "md_batch", migration: "2026-11-26T0100_batch", definition: MD_BATCH }
]
