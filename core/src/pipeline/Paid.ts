/**
 * The paid path with a hold: admit (one step: rate unit, key not revoked, Idempotency-Key begun, credits held)
 * -> execute (and compare the ETag) -> finish (one step: charge within the hold and store the answer, or keep a
 * failure's answer, or release). A conditional request holds nothing at admission: it compares its ETag first,
 * so an unchanged answer is a free `304` whatever the balance, and a changed one is charged only if the balance
 * covers it when it finishes.
 *
 * The 409 decisions (`request_in_progress`, `idempotency_conflict`) are `decideBegin` in `Money.ts`; the price
 * of a request is `holdFor` in `Billing.ts`; the charge SQL is `md_admit`/`md_finish` under
 * `adapters/postgres/src/sql/`. What the store could not be told during an outage is the money store's own
 * business (`ReleaseAfterOutage.ts`).
 */
import { type Clock, Effect } from "effect"
import type * as Digest from "effect/crypto/Digest"
import { holdFor } from "../Billing.ts"
import type { BoundedCache } from "../BoundedCache.ts"
import { apiError, StoreUnavailable } from "../Errors.ts"
import { unauthenticated } from "../Keys.ts"
import { beginRefusal, chargeWithin, isTransientStatus, type Meter } from "../Money.ts"
import type { FinishEnd, MoneyStore, Ticket } from "../MoneyStore.ts"
import { type CanonicalParams, canonicalRequest } from "../Params.ts"
import type { OperationSpec } from "../Registry.ts"
import { fail, insufficient, internalError, rateLimited, statusOf, storedAnswerOf } from "./Answers.ts"
import { comparesFirst, prepare } from "./Conditional.ts"
import { execute } from "./Execute.ts"
import type { Handler, HandlerInput, KeyPrincipal, Outcome, PathResult } from "./Types.ts"

export const RELEASE: FinishEnd = { _tag: "Release" }

/** What the paid path runs with: the services `handle` read once, and the request's own parts. */
export interface PaidRequest {
  readonly money: MoneyStore["Service"]
  readonly clock: Clock.Clock
  readonly etags: BoundedCache<string, string> | undefined
  readonly op: OperationSpec
  readonly handler: Handler
  readonly params: CanonicalParams
  readonly principal: KeyPrincipal
  readonly meter: Meter
  readonly ifNoneMatch: string | undefined
  readonly nowMs: number
}

/** Admit, execute, finish; `idemKey` the request's validated Idempotency-Key, when it sent one. */
export const paid = (r: PaidRequest, idemKey: string | undefined): Effect.Effect<PathResult, never, Digest.Digest> => {
  const { money, op, params, nowMs } = r
  const amount = holdFor(op, params)
  const admit = money.admit({
    keyId: r.principal.key.id,
    nowMs,
    meter: r.meter,
    hold: comparesFirst(op, r.ifNoneMatch) ? 0 : amount,
    ...(idemKey === undefined ? {} : { idempotency: { key: idemKey, fingerprint: canonicalRequest(op.name, params) } })
  })
  return Effect.flatMap(admit, (admitted): Effect.Effect<PathResult, never, Digest.Digest> => {
    const rate = admitted.rate
    const done = (outcome: Outcome) => Effect.succeed({ outcome, rate })
    switch (admitted._tag) {
      case "RateLimited":
        return done(fail(rateLimited(rate, nowMs)))
      case "KeyRevoked":
        return done(fail(unauthenticated()))
      case "InProgress":
      case "Conflict":
        return done(fail(beginRefusal(admitted) ?? internalError()))
      case "Replay":
        return done({ _tag: "Replay", answer: admitted.answer })
      case "Insufficient":
        return done(fail(insufficient(amount, admitted.available)))
      case "Admitted": {
        const ticket = admitted.ticket
        const input: HandlerInput = { op, params, principal: r.principal, rate, nowMs }
        return attempt(r, input, amount, ticket).pipe(
          // A request interrupted mid-way (client gone, shutdown) releases what it held at once.
          Effect.onInterrupt(() => money.finish(ticket, RELEASE, nowMs)),
          // A store failing under the attempt (an outage: a handler's read or the finish itself) answers 503; its
          // release is asked for here, and when the store cannot take it the money store keeps it until it can.
          Effect.catchDefect((defect) =>
            defect instanceof StoreUnavailable
              ? Effect.andThen(Effect.ignoreCause(money.finish(ticket, RELEASE, nowMs)), Effect.die(defect))
              : Effect.die(defect)
          ),
          Effect.map((outcome) => ({ outcome, rate }))
        )
      }
    }
  })
}

/** An admitted request: execute, compare its ETag, finish. */
const attempt = Effect.fnUntraced(function* (r: PaidRequest, input: HandlerInput, amount: number, ticket: Ticket) {
  const { money, op } = r
  const run = yield* execute(r.handler, input)
  if (run._tag === "Error" || run.out._tag === "Markdown") {
    const o = fail(run._tag === "Error" ? run.error : internalError())
    // A transient failure frees its Idempotency-Key for the retry; any other is stored and replays.
    const end: FinishEnd = isTransientStatus(statusOf(o)) ? RELEASE : { _tag: "Keep", answer: storedAnswerOf(o) }
    yield* money.finish(ticket, end, input.nowMs)
    return o
  }
  const ready = yield* prepare(r.clock, r.etags, op, run.out, r.ifNoneMatch)
  if (ready.notModified !== undefined) {
    // 304: zero credits, and nothing stored (a later replay without If-None-Match needs the body).
    yield* money.finish(ticket, RELEASE, ready.settledAt)
    return ready.notModified
  }
  const charge = chargeWithin(run.out.creditsCharged, amount)
  const o = ready.json(charge)
  // The charge and the stored answer commit together: a crash leaves both or neither.
  const finished = yield* money.finish(
    ticket,
    { _tag: "Settle", charge, required: amount, reason: op.name, answer: storedAnswerOf(o) },
    ready.settledAt
  )
  switch (finished._tag) {
    case "Settled":
      return o
    case "Insufficient":
      // Compared first without a hold, changed, and the balance does not cover it: served nothing.
      return fail(insufficient(amount, finished.available))
    default:
      // The hold outlived its lease and the balance no longer covers the charge (or another attempt took the
      // Idempotency-Key over): serve nothing, retryable.
      return fail(apiError("source_unavailable", "the request took longer than its credit hold; retry"))
  }
})
