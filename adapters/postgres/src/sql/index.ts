/**
 * The database functions as they run today, one module each, named for what the function does, in one list: each
 * text is the `create` statement of the function's current definition, byte for byte as the migration that made it
 * ran it (that migration imports it). A test compares each with what a migrated database holds
 * (`pg_get_functiondef`). Functions a migration dropped keep their frozen text in the migrations that ran them
 * (`infra/migrations/`), not here.
 *
 * | module                    | function(s)                                  | what it does                                                          |
 * | ------------------------- | -------------------------------------------- | --------------------------------------------------------------------- |
 * | `admit_and_hold.ts`       | `md_admit`                                   | admits a paid request: rate unit, key revocation, Idempotency-Key, hold |
 * | `charge_from_hold.ts`     | `md_finish`                                  | ends an admitted request: charges within its hold and stores the answer, keeps a failure's answer, or releases |
 * | `charge_without_hold.ts`  | `md_charge`                                  | charges a request without an Idempotency-Key after it ran: rate unit, revocation, charge |
 * | `rate_limit_unit.ts`      | `md_rate_consume`                            | spends one rate unit of a scope (the rate limiter; the three above call it) |
 * | `available_credits.ts`    | `md_available`                               | a key's available balance: booked minus live holds                    |
 * | `grant_credits.ts`        | `md_grant`                                   | adds credits to a key                                                 |
 * | `top_up_credits.ts`       | `md_top_up`                                  | tops a key up to a balance                                            |
 * | `group_commit_batch.ts`   | `md_batch`, `md_batch_call`, `md_batch_rank` | group commit: many of the calls above in one statement                |
 */
import { MD_ADMIT } from "./admit_and_hold.ts"
import { MD_AVAILABLE } from "./available_credits.ts"
import { MD_FINISH } from "./charge_from_hold.ts"
import { MD_CHARGE } from "./charge_without_hold.ts"
import { MD_GRANT } from "./grant_credits.ts"
import { MD_BATCH, MD_BATCH_CALL, MD_BATCH_RANK } from "./group_commit_batch.ts"
import { MD_RATE_CONSUME } from "./rate_limit_unit.ts"
import { MD_TOP_UP } from "./top_up_credits.ts"

export { MD_ADMIT } from "./admit_and_hold.ts"
export { MD_AVAILABLE } from "./available_credits.ts"
export { MD_FINISH } from "./charge_from_hold.ts"
export { MD_CHARGE } from "./charge_without_hold.ts"
export { MD_GRANT } from "./grant_credits.ts"
export { MD_BATCH, MD_BATCH_CALL, MD_BATCH_RANK } from "./group_commit_batch.ts"
export { MD_RATE_CONSUME } from "./rate_limit_unit.ts"
export { MD_TOP_UP } from "./top_up_credits.ts"

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
  { name: "md_rate_consume", migration: "2026-11-22T0001_accounts", definition: MD_RATE_CONSUME },
  { name: "md_top_up", migration: "2026-11-25T2300_top_up", definition: MD_TOP_UP },
  { name: "md_admit", migration: "2026-11-26T0400_money_port", definition: MD_ADMIT },
  { name: "md_finish", migration: "2026-11-26T0400_money_port", definition: MD_FINISH },
  { name: "md_charge", migration: "2026-11-26T0400_money_port", definition: MD_CHARGE },
  { name: "md_batch_rank", migration: "2026-11-26T0500_batch", definition: MD_BATCH_RANK },
  { name: "md_batch_call", migration: "2026-12-06T0100_named_batch_arguments", definition: MD_BATCH_CALL },
  { name: "md_batch", migration: "2026-11-26T0500_batch", definition: MD_BATCH }
]
