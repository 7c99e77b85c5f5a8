/**
 * Idempotency keys, exactly the contract's state table: a chargeable request carrying `Idempotency-Key` K is
 * executed and billed at most once per 24 h per API key; the stored answer replays byte for byte.
 *
 * (none) -> in flight -> stored for 24 h -> (none). A concurrent duplicate of an in-flight request is
 * `409 request_in_progress`; another request under a used key is `409 idempotency_conflict`; a transient
 * outcome (408, 425, 429, 5xx) releases the record so the retry executes; an in-flight record older than its
 * lease (60 s, a crash) counts as released.
 */
import { Context, Effect } from "effect"
import { type ApiError, apiError } from "./Errors.ts"
import type { Meter, StoredAnswer } from "./Money.ts"
import type { RateLimiter, RateWindow } from "./RateLimit.ts"

// The lease, the replay window, the stored answer and the state table itself (`decideBegin`) are the money
// rules' (Money.ts); re-exported here for the port's users.
export { IDEMPOTENCY_LEASE_MS, isTransientStatus, REPLAY_WINDOW_MS, type StoredAnswer } from "./Money.ts"

export type BeginResult =
  /** This request owns the key now; `token` proves it when completing or abandoning. */
  | { readonly _tag: "Started"; readonly token: string }
  /** The same request is running under this key. */
  | { readonly _tag: "InProgress" }
  /** The key is in use (running or stored) for a different request. */
  | { readonly _tag: "Conflict" }
  /** The same request completed within 24 h: this is its answer. */
  | { readonly _tag: "Replay"; readonly answer: StoredAnswer }

/** The outcome of spending a rate unit and beginning under an idempotency key in one step. */
export type MeteredBeginResult =
  /** No unit was left in the window: nothing spent, the record untouched. */
  | { readonly _tag: "RateLimited"; readonly rate: RateWindow }
  /** The unit was spent, then the key was begun (`Started`, `InProgress`, `Conflict` or `Replay`). */
  | { readonly _tag: "Begun"; readonly rate: RateWindow; readonly begun: BeginResult }

/**
 * The store of idempotency records, scoped per API key. `fingerprint` is the normalized request
 * (`canonicalRequest`). Implementations make `begin` atomic: of concurrent begins on a free key exactly one
 * is `Started`.
 */
export class IdempotencyStore extends Context.Service<
  IdempotencyStore,
  {
    readonly begin: (keyId: string, key: string, fingerprint: string, nowMs: number) => Effect.Effect<BeginResult>
    /** Stores the answer for 24 h from `nowMs`, if `token` still owns the record. */
    readonly complete: (
      keyId: string,
      key: string,
      token: string,
      answer: StoredAnswer,
      nowMs: number
    ) => Effect.Effect<void>
    /** Frees the key (transient outcome), if `token` still owns the record. */
    readonly abandon: (keyId: string, key: string, token: string) => Effect.Effect<void>
    /**
     * Optional, for stores where each call is a round trip: spends one rate unit in `meter`'s scope exactly as
     * `RateLimiter.consume` does (the same buckets), and only if it was admitted, `begin`s, in one atomic step.
     * Equivalent to `consume` then `begin`; `meteredBegin` falls back to those two calls without it.
     */
    readonly beginMetered?: (
      keyId: string,
      key: string,
      fingerprint: string,
      nowMs: number,
      meter: Meter
    ) => Effect.Effect<MeteredBeginResult>
  }
>()("market-data/core/IdempotencyStore") {}

/**
 * Spends the request's rate unit, then (if admitted) begins under the idempotency key: one round trip with a
 * store that has `beginMetered`, else `RateLimiter.consume` followed by `IdempotencyStore.begin`.
 */
export const meteredBegin = (
  store: IdempotencyStore["Service"],
  limiter: RateLimiter["Service"],
  keyId: string,
  key: string,
  fingerprint: string,
  nowMs: number,
  meter: Meter
): Effect.Effect<MeteredBeginResult> =>
  store.beginMetered !== undefined
    ? store.beginMetered(keyId, key, fingerprint, nowMs, meter)
    : Effect.flatMap(
        limiter.consume(meter.scope, meter.limit, nowMs),
        (rate): Effect.Effect<MeteredBeginResult> =>
          rate.allowed
            ? Effect.map(store.begin(keyId, key, fingerprint, nowMs), (begun) => ({
                _tag: "Begun" as const,
                rate,
                begun
              }))
            : Effect.succeed({ _tag: "RateLimited" as const, rate })
      )

// biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
const INVISIBLE = /[\u0000-\u001f\u007f-\uffff]/

/**
 * Validates the `Idempotency-Key` header values of a request: none is fine (undefined); exactly one of 1 to
 * 128 visible ASCII characters (spaces allowed inside, not at either end) is the key; anything else is
 * `invalid_idempotency_key`.
 */
export const validateIdempotencyKey = (values: ReadonlyArray<string>): string | undefined | ApiError => {
  if (values.length === 0) return undefined
  const bad = (why: string) =>
    apiError("invalid_idempotency_key", `Idempotency-Key ${why}`, { param: "idempotency-key" })
  if (values.length > 1) return bad("was sent more than once; send one")
  const key = values[0] as string
  if (key.length === 0) return bad("is empty; send 1 to 128 visible characters")
  if (key.length > 128) return bad(`is ${key.length} characters long; the limit is 128`)
  if (key.trim() !== key) return bad("has whitespace at its start or end")
  if (INVISIBLE.test(key)) return bad("may contain only visible ASCII characters (and inner spaces)")
  return key
}
