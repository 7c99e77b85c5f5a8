/**
 * How the stores send a per-request call: through the database's group commit when it has one, else as its own
 * statement. Failures are the same either way (`query`: deadlocks retried, the rest `StoreUnavailable`).
 */
import type { Effect } from "effect"
import type { Database } from "./Database.ts"
import { query } from "./Errors.ts"
import type { BatchCall } from "./GroupCommit.ts"

/**
 * Runs one per-request store call: through the database's group commit when it has one (`call`, its answer
 * turned into the row the lone statement would have given by `fromBatch`), else as its own statement (`direct`).
 */
export const perRequest = <A>(
  database: Database,
  what: string,
  call: () => BatchCall,
  fromBatch: (value: unknown) => A,
  direct: () => Promise<A>
): Effect.Effect<A> => {
  const group = database.groupCommit
  return group === undefined ? query(what, direct) : query(what, () => group.call(call()).then(fromBatch))
}

/** A table function's row as `md_batch` answers it (`to_jsonb` of the row, or null). */
export const batchRow = <R>(value: unknown): R | undefined => (value === null ? undefined : (value as R))
