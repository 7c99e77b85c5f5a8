/** Database failures as the core sees them: retried when PostgreSQL says so, otherwise `StoreUnavailable`. */
import { StoreUnavailable } from "@market-data/core"
import { Effect, Schedule } from "effect"

/** Serialization failure and deadlock: the transaction may simply be run again. */
const RETRYABLE = new Set(["40001", "40P01"])

const isRetryable = (e: unknown): boolean =>
  typeof e === "object" && e !== null && RETRYABLE.has(String((e as { code?: unknown }).code))

/**
 * Runs a database call: retries serialization failures and deadlocks a few times, and turns every other
 * failure into a `StoreUnavailable` defect (answered 503 `source_unavailable`, transient).
 */
export const query = <A>(what: string, run: () => Promise<A>): Effect.Effect<A> =>
  Effect.tryPromise({ try: run, catch: (cause) => cause }).pipe(
    Effect.retry({ while: isRetryable, schedule: Schedule.exponential("5 millis"), times: 5 }),
    Effect.catch((cause) => Effect.die(new StoreUnavailable({ operation: what, cause })))
  )
