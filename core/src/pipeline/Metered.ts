/**
 * The metered path of a paid request without an Idempotency-Key: execute first, then spend the rate unit and
 * charge in one atomic step (`MoneyStore.charge`), which refuses when the balance does not cover the hold
 * amount. Nothing is ever served beyond the balance, and it spends one write instead of two. Taken only when this
 * process last saw the key's balance cover the hold and no rate refusal pending (`MoneyStore.hint`), so a 402 or
 * a 429 normally executes nothing; otherwise `undefined` and the request takes the paid path (`Paid.ts`).
 */
import { Effect } from "effect"
import type * as Digest from "effect/crypto/Digest"
import { holdFor } from "../Billing.ts"
import { unauthenticated } from "../Keys.ts"
import { chargeWithin, holdCovered } from "../Money.ts"
import type { RateWindow } from "../RateLimit.ts"
import { fail, insufficient, internalError, rateLimited } from "./Answers.ts"
import { comparesFirst, prepare } from "./Conditional.ts"
import { execute } from "./Execute.ts"
import type { PaidRequest } from "./Paid.ts"
import type { Outcome, PathResult } from "./Types.ts"

export const metered = Effect.fnUntraced(function* (r: PaidRequest) {
  const { money, op, params, meter, nowMs } = r
  const keyId = r.principal.key.id
  const amount = holdFor(op, params)
  if (money.hint(keyId).rateBlockedUntilMs > nowMs) return undefined
  // A conditional request is compared first whatever the balance: an unchanged `read` is a free 304 even for
  // a key that could not pay for the body (a changed one is then refused by the charge below, never served).
  if (!comparesFirst(op, r.ifNoneMatch)) {
    let available = money.hint(keyId).available
    if (available === undefined) available = yield* money.balance(keyId, nowMs)
    if (!holdCovered(available, amount)) return undefined
  }

  // The handler sees the window as last known; the unit is spent with the charge.
  const provisional: RateWindow = { limit: meter.limit, remaining: meter.limit, resetAtMs: nowMs, allowed: true }
  const run = yield* execute(r.handler, { op, params, principal: r.principal, rate: provisional, nowMs })
  // An answer that charges nothing (an error, a 304) still spends its rate unit, through the same step: nothing
  // is charged (`required` 0), and a revoked key is refused.
  const spendUnit = (outcome: Outcome) =>
    Effect.map(
      money.charge({ keyId, required: 0, charge: 0, reason: op.name, nowMs, meter }),
      (result): PathResult => ({
        outcome:
          result._tag === "RateLimited"
            ? fail(rateLimited(result.rate, nowMs))
            : result._tag === "KeyRevoked"
              ? fail(unauthenticated())
              : outcome,
        rate: result.rate
      })
    )
  if (run._tag === "Error" || run.out._tag === "Markdown") {
    return yield* spendUnit(fail(run._tag === "Error" ? run.error : internalError()))
  }
  const ready = yield* prepare(r.clock, r.etags, op, run.out, r.ifNoneMatch)
  if (ready.notModified !== undefined) return yield* spendUnit(ready.notModified)
  const charge = chargeWithin(run.out.creditsCharged, amount)
  const result = yield* money.charge({
    keyId,
    required: amount,
    charge,
    reason: op.name,
    nowMs: ready.settledAt,
    meter
  })
  switch (result._tag) {
    case "RateLimited":
      return { outcome: fail(rateLimited(result.rate, ready.settledAt)), rate: result.rate }
    case "KeyRevoked":
      return { outcome: fail(unauthenticated()), rate: result.rate }
    case "Insufficient":
      return { outcome: fail(insufficient(amount, result.available)), rate: result.rate }
    case "Charged":
      return { outcome: ready.json(charge), rate: result.rate }
  }
}) as (r: PaidRequest) => Effect.Effect<PathResult | undefined, never, Digest.Digest>
