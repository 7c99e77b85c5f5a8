/**
 * Admission of a keyless request that does not run an operation (the root and OpenAPI documents, the docs page,
 * an MCP `initialize`, `ping`, `tools/list`, notification, ...) on the rules every operation follows.
 */
import { Clock, Context, Effect } from "effect"
import type { ApiError } from "../Errors.ts"
import { RateLimiter, type RateWindow } from "../RateLimit.ts"
import { defectError, rateLimited } from "./Answers.ts"
import { authenticate, rateScopeOf } from "./Authenticate.ts"
import { type PipelineServices, Settings } from "./Types.ts"

/** What a transport knows of a keyless request that is not an operation (a document, an MCP protocol message). */
export interface Admission {
  /** Every `Authorization` header value received. */
  readonly authorization: ReadonlyArray<string>
  /** The socket peer's address (see `ApiRequest.client`). */
  readonly client: string
  /** Every `X-Forwarded-For` value received, in order (see `ApiRequest.forwardedFor`). */
  readonly forwardedFor?: ReadonlyArray<string>
}

/** The verdict on an admission: the caller's rate window, and the refusal when there is one. */
export interface Admitted {
  /** `unauthenticated`, `invalid_header` or `rate_limited`; undefined when admitted. */
  readonly refusal: ApiError | undefined
  /** Undefined when the store could not be asked (the refusal is then `source_unavailable`). */
  readonly rate: RateWindow | undefined
  readonly keyId: string | undefined
  readonly nowMs: number
}

/**
 * Admits a keyless request through the pipeline's own first step (`authenticate`): a presented key is checked
 * (a malformed, unknown or revoked one is `unauthenticated`), and the request spends one rate unit of its
 * caller: the key's with a valid key, the client address's otherwise (a failed authentication too).
 */
export const admitKeyless = (request: Admission): Effect.Effect<Admitted, never, PipelineServices> =>
  Effect.contextWith((context: Context.Context<PipelineServices>) => {
    const nowMs = Context.get(context, Clock.Clock).currentTimeMillisUnsafe()
    const limiter = Context.get(context, RateLimiter)
    return Effect.flatMap(
      authenticate(undefined, request, Context.get(context, Settings), limiter, nowMs),
      (who): Effect.Effect<Admitted> => {
        if (who._tag === "Refused") {
          const refusal = who.outcome._tag === "Failure" ? who.outcome.error : undefined
          return Effect.succeed({ refusal, rate: who.rate, keyId: undefined, nowMs })
        }
        const principal = who.principal
        return Effect.map(limiter.consume(rateScopeOf(principal), principal.rateLimitPerMinute, nowMs), (rate) => ({
          refusal: rate.allowed ? undefined : rateLimited(rate, nowMs),
          rate,
          keyId: principal._tag === "Key" ? principal.key.id : undefined,
          nowMs
        }))
      }
    )
  }).pipe(
    Effect.catchDefect((defect) =>
      Effect.flatMap(defectError(defect, "admission defect", "the store is unavailable; retry shortly"), (error) =>
        Effect.map(Clock.currentTimeMillis, (nowMs) => ({ refusal: error, rate: undefined, keyId: undefined, nowMs }))
      )
    )
  )
