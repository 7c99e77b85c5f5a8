/**
 * How the stores send a per-request call: through the database's group commit when it has one, else as its own
 * statement. Failures are the same either way (`query`: deadlocks retried, the rest `StoreUnavailable`).
 */
import type { Effect } from "effect"
import { sql } from "kysely"
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

/**
 * The lone statement of a call whose batch member carries `args`: `select * from fn(p_key => $1, p_now => $2, ...)`,
 * each argument passed in named notation under its record field's name with `p_` in front, so the batch and the
 * lone call read one record and no argument depends on its position. Fields named in `jsonb` are sent as JSON text
 * cast to `jsonb` (null stays null).
 */
export const callByName =
  <R>(database: Database, fn: string, args: Readonly<Record<string, unknown>>, jsonb: ReadonlyArray<string> = []) =>
  async (): Promise<R | undefined> => {
    const named = Object.entries(args).map(([name, value]) =>
      jsonb.includes(name)
        ? sql`${sql.raw(`p_${name}`)} => ${value === null ? null : JSON.stringify(value)}::jsonb`
        : sql`${sql.raw(`p_${name}`)} => ${value}`
    )
    return (await sql<R>`select * from ${sql.raw(fn)}(${sql.join(named)})`.execute(database.db)).rows[0]
  }
