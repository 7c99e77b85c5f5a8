/**
 * The free path (a free operation, or a paid one that goes no further than its refusal): the rate unit is spent
 * alone through the `RateLimiter`, then decode and execute; no credits, no idempotency. And the internal path of
 * the embedding program calling in-process without a key: decode, execute; no key, no rate unit, no credits.
 */
import { Effect } from "effect"
import type * as Digest from "effect/crypto/Digest"
import type { BoundedCache } from "../BoundedCache.ts"
import type { ApiError } from "../Errors.ts"
import type { CanonicalParams } from "../Params.ts"
import { decodeParams, isApiError } from "../Params.ts"
import type { RateLimiter, RateWindow } from "../RateLimit.ts"
import type { OperationSpec } from "../Registry.ts"
import { fail, notImplemented, rateLimited, sourceOf } from "./Answers.ts"
import { rateScopeOf } from "./Authenticate.ts"
import { rememberedEtag } from "./Conditional.ts"
import { execute } from "./Execute.ts"
import type { ApiRequest, Handler, Outcome, PathResult, Principal } from "./Types.ts"

/** Spends the request's rate unit, then reports a decode or Idempotency-Key error, or executes a free handler. */
export const free = Effect.fnUntraced(function* (
  limiter: RateLimiter["Service"],
  etags: BoundedCache<string, string> | undefined,
  op: OperationSpec,
  handler: Handler | undefined,
  params: CanonicalParams | ApiError,
  idemKey: string | ApiError | undefined,
  principal: Exclude<Principal, { readonly _tag: "Internal" }>,
  nowMs: number
) {
  // One unit per request, paid or free.
  const rate = yield* limiter.consume(rateScopeOf(principal), principal.rateLimitPerMinute, nowMs)
  const done = (outcome: Outcome): PathResult => ({ outcome, rate })
  if (!rate.allowed) return done(fail(rateLimited(rate, nowMs)))
  // Decode, then (a paid request) its Idempotency-Key.
  if (isApiError(params)) return done(fail(params))
  if (isApiError(idemKey)) return done(fail(idemKey))
  // A paid operation without a handler is `not_implemented` (transient: nothing held, nothing stored).
  if (handler === undefined) return done(fail(notImplemented(op)))
  const run = yield* execute(handler, { op, params, principal, rate, nowMs })
  if (run._tag === "Error") return done(fail(run.error))
  const out = run.out
  const text = out._tag === "Markdown" ? out.markdown : JSON.stringify(out.body)
  // A keyless answer is the same for every caller: it carries its ETag (its text repeats, so it is remembered).
  const tag = op.auth === "keyless" ? { etag: yield* rememberedEtag(etags, text) } : {}
  return done(
    out._tag === "Markdown"
      ? { _tag: "Markdown", section: out.section, markdown: out.markdown, ...tag }
      : { _tag: "Json", body: text, creditsCharged: 0, ...tag, ...sourceOf(out) }
  )
}) as (
  limiter: RateLimiter["Service"],
  etags: BoundedCache<string, string> | undefined,
  op: OperationSpec,
  handler: Handler | undefined,
  params: CanonicalParams | ApiError,
  idemKey: string | ApiError | undefined,
  principal: Exclude<Principal, { readonly _tag: "Internal" }>,
  nowMs: number
) => Effect.Effect<PathResult, never, Digest.Digest>

/** The internal principal's path: decode, execute. */
export const internal = Effect.fnUntraced(function* (
  handlers: ReadonlyMap<string, Handler>,
  op: OperationSpec,
  request: ApiRequest,
  nowMs: number
) {
  const params = isApiError(request.params) ? request.params : decodeParams(op, request.params)
  if (isApiError(params)) return fail(params)
  const handler = handlers.get(op.name)
  if (handler === undefined) return fail(notImplemented(op))
  const unlimited: RateWindow = { limit: 0, remaining: 0, resetAtMs: nowMs, allowed: true }
  const run = yield* execute(handler, { op, params, principal: { _tag: "Internal" }, rate: unlimited, nowMs })
  if (run._tag === "Error") return fail(run.error)
  const out = run.out
  if (out._tag === "Markdown") return out
  const maxAge =
    out.nextUpdateAtMs === undefined
      ? {}
      : { maxAgeSeconds: Math.max(0, Math.ceil((out.nextUpdateAtMs - nowMs) / 1000)) }
  return {
    _tag: "Json",
    body: out.text ?? JSON.stringify(out.body),
    creditsCharged: 0,
    ...maxAge,
    ...sourceOf(out)
  } satisfies Outcome
}) as (
  handlers: ReadonlyMap<string, Handler>,
  op: OperationSpec,
  request: ApiRequest,
  nowMs: number
) => Effect.Effect<Outcome>
