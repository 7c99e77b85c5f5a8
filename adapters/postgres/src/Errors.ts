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

/** Socket errors met while connecting: the statement was never sent, so it cannot have committed. */
const NOT_CONNECTED = new Set(["ECONNREFUSED", "ENOENT", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN", "ENOTFOUND"])

/**
 * Whether a failure certainly happened before the statement reached the database (no connection could be
 * made), rather than possibly after it committed (the connection lost mid-way). When unsure: possibly after.
 */
export const neverSent = (cause: unknown): boolean =>
  typeof cause === "object" && cause !== null && NOT_CONNECTED.has(String((cause as { code?: unknown }).code))
