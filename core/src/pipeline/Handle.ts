/**
 * One request through the pipeline, top to bottom:
 *
 *   authenticate (`Authenticate.ts`) -> decode -> choose the path:
 *     paid, without an Idempotency-Key, balance last seen able to pay  `Metered.ts`  execute -> charge
 *     paid otherwise                                                   `Paid.ts`     admit -> execute -> finish
 *     free, or a paid request refused before it runs                  `Free.ts`     rate unit -> execute
 *     the embedding program in-process                                 `Free.ts`     `internal`
 *   -> the answer (`Answers.ts`); a conditional request compares its ETag before any charge (`Conditional.ts`).
 *
 * Transports turn their wire format into an `ApiRequest` and an `Answer` back into their wire format; nothing
 * else. Every failure becomes an answer; the pipeline itself never fails.
 */
import { Clock, Context, Effect } from "effect"
import { apiError } from "../Errors.ts"
import { validateIdempotencyKey } from "../Idempotency.ts"
import { MoneyStore } from "../MoneyStore.ts"
import { decodeParams, isApiError } from "../Params.ts"
import { RateLimiter } from "../RateLimit.ts"
import { operation } from "../Registry.ts"
import { RequestCaches } from "../RequestCaches.ts"
import { defectError, fail } from "./Answers.ts"
import { authenticate } from "./Authenticate.ts"
import { free, internal } from "./Free.ts"
import { metered } from "./Metered.ts"
import { type PaidRequest, paid } from "./Paid.ts"
import { type Answer, type ApiRequest, Handlers, type Outcome, type PipelineServices, Settings } from "./Types.ts"

/**
 * Watches every answer the pipeline gives, whatever the transport (metrics: credits charged, idempotency
 * outcomes, rate-limit refusals). Called synchronously once per request: it must be cheap and must not throw.
 * By default nothing watches, and the pipeline pays nothing for it.
 */
export interface PipelineObserverShape {
  readonly answered: ((request: ApiRequest, answer: Answer) => void) | undefined
}

export const PipelineObserver = Context.Reference<PipelineObserverShape>("@market-data/core/PipelineObserver", {
  defaultValue: () => ({ answered: undefined })
})

/** Runs one request through the pipeline. Never fails: every failure is an `Answer` carrying an error. */
export const handle = (request: ApiRequest): Effect.Effect<Answer, never, PipelineServices> =>
  // The services are read from the fiber's context once, here, rather than yielded one by one on the way.
  Effect.contextWith((context: Context.Context<PipelineServices>) => {
    const answered = Context.get(context, PipelineObserver).answered
    const answer = run(request, context).pipe(Effect.catchDefect((defect) => answerDefect(request, defect)))
    return answered === undefined
      ? answer
      : Effect.map(answer, (a) => {
          answered(request, a)
          return a
        })
  })

/** A defect under a request: `503 source_unavailable` when a store could not be reached, else `500`. */
const answerDefect = (request: ApiRequest, defect: unknown) =>
  Effect.flatMap(
    defectError(defect, "pipeline defect", "the store is unavailable; nothing was charged, retry shortly"),
    (error) =>
      Effect.map(
        Clock.currentTimeMillis,
        (nowMs): Answer => ({
          outcome: fail(error),
          op: operation(request.operation),
          rate: undefined,
          keyId: undefined,
          nowMs
        })
      )
  )

const run = Effect.fnUntraced(function* (request: ApiRequest, context: Context.Context<PipelineServices>) {
  const clock = Context.get(context, Clock.Clock)
  const nowMs = clock.currentTimeMillisUnsafe()
  const op = operation(request.operation)
  const answer = (outcome: Outcome, rate?: Answer["rate"], keyId?: string): Answer => ({
    outcome,
    op,
    rate,
    keyId,
    nowMs
  })
  if (op === undefined) {
    return answer(fail(apiError("unknown_operation", `no operation named ${JSON.stringify(request.operation)}`)))
  }
  const handlers = Context.get(context, Handlers)
  const caches = Context.get(context, RequestCaches)
  if (request.internal === true) return answer(yield* internal(handlers, op, request, nowMs))

  const settings = Context.get(context, Settings)
  const limiter = Context.get(context, RateLimiter)
  const who = yield* authenticate(op, request, settings, limiter, nowMs)
  if (who._tag === "Refused") return answer(who.outcome, who.rate)
  const principal = who.principal
  const keyId = principal._tag === "Key" ? principal.key.id : undefined

  // The Idempotency-Key header of a paid request, validated here once: the key, none (undefined), or the
  // `invalid_idempotency_key` error answered after the rate limit and the decode.
  const idemKey =
    op.auth === "paid" && principal._tag === "Key" ? validateIdempotencyKey(request.idempotencyKey ?? []) : undefined
  const params = isApiError(request.params) ? request.params : decodeParams(op, request.params, caches?.decodedParams)
  const handler = handlers.get(op.name)

  if (
    op.auth === "paid" &&
    principal._tag === "Key" &&
    handler !== undefined &&
    !isApiError(params) &&
    !isApiError(idemKey)
  ) {
    const r: PaidRequest = {
      money: Context.get(context, MoneyStore),
      clock,
      etags: caches?.etags,
      op,
      handler,
      params,
      principal,
      meter: { scope: principal.key.id, limit: principal.rateLimitPerMinute },
      ifNoneMatch: request.ifNoneMatch,
      nowMs
    }
    if (idemKey === undefined) {
      const done = yield* metered(r)
      if (done !== undefined) return answer(done.outcome, done.rate, keyId)
    }
    const done = yield* paid(r, idemKey)
    return answer(done.outcome, done.rate, keyId)
  }

  const done = yield* free(limiter, caches?.etags, op, handler, params, idemKey, principal, nowMs)
  return answer(done.outcome, done.rate, keyId)
}) as (
  request: ApiRequest,
  context: Context.Context<PipelineServices>
) => Effect.Effect<Answer, never, PipelineServices>
