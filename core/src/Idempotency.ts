/**
 * Idempotency keys, exactly the contract's state table: a chargeable request carrying `Idempotency-Key` K is
 * executed and billed at most once per 24 h per API key; the stored answer replays byte for byte.
 *
 * (none) -> in flight -> stored for 24 h -> (none). A concurrent duplicate of an in-flight request is
 * `409 request_in_progress`; another request under a used key is `409 idempotency_conflict`; a transient
 * outcome (408, 425, 429, 5xx) releases the record so the retry executes; an in-flight record older than its
 * lease (60 s, a crash) counts as released.
 *
 * This module validates the header; the records live behind the money port (`MoneyStore.admit` begins,
 * `MoneyStore.finish` stores or frees), every decision in `Money.ts`.
 */
import { type ApiError, apiError } from "./Errors.ts"

// The lease, the replay window, the stored answer and the state table itself (`decideBegin`) are the money
// rules' (Money.ts); the store that keeps the records is the money port (MoneyStore.ts).

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
