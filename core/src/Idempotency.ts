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
import { type ApiError, apiError, IDEMPOTENCY_KEY_RULE } from "./Errors.ts"

// The lease, the replay window, the stored answer and the state table itself (`decideBegin`) are the money
// rules' (Money.ts); the store that keeps the records is the money port (MoneyStore.ts).

// biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
const INVISIBLE = /[\u0000-\u001f\u007f-\uffff]/

/**
 * Validates the `Idempotency-Key` header values of a request: none is fine (undefined); exactly one that is
 * `IDEMPOTENCY_KEY_RULE` (1 to 128 printable ASCII characters, spaces inside allowed, none at either end) is the
 * key; anything else is `invalid_idempotency_key`, its message naming what is wrong and then the rule.
 */
export const validateIdempotencyKey = (values: ReadonlyArray<string>): string | undefined | ApiError => {
  if (values.length === 0) return undefined
  const bad = (why: string) =>
    apiError("invalid_idempotency_key", `Idempotency-Key ${why}; a key is ${IDEMPOTENCY_KEY_RULE}`, {
      param: "idempotency-key"
    })
  if (values.length > 1) return bad("was sent more than once; send one")
  const key = values[0] as string
  if (key.length === 0) return bad("is empty")
  if (key.length > 128) return bad(`is ${key.length} characters long`)
  if (key.trim() !== key) return bad("has whitespace at its start or end")
  if (INVISIBLE.test(key)) return bad("has a character that is not printable ASCII")
  return key
}
