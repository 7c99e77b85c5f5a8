/**
 * Admission of a keyless request that does not run an operation (the root and OpenAPI documents, the docs page,
 * an MCP `initialize`, `ping`, `tools/list`, notification, ...) on the rules every operation follows.
 */
import { Clock, Effect } from "effect"
import { type ApiError, apiError, StoreUnavailable } from "../Errors.ts"
import { authenticate, parseAuthorization } from "../Keys.ts"
import { isApiError } from "../Params.ts"
import { RateLimiter, type RateWindow } from "../RateLimit.ts"
import { internalError, rateLimited } from "./Answers.ts"
import { clientOf } from "./Authenticate.ts"
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
 * Admits a keyless request: a presented key is checked (a malformed, unknown or revoked one is
 * `unauthenticated`), and the request spends one rate unit of its caller: the key's with a valid key, the client
 * address's otherwise (a failed authentication too).
 */
export const admitKeyless = (request: Admission): Effect.Effect<Admitted, never, PipelineServices> =>
  Effect.gen(function* () {
    const nowMs = yield* Clock.currentTimeMillis
    const settings = yield* Settings
    const limiter = yield* RateLimiter
    const address = `ip:${clientOf(request, settings)}`
    const refuse = (error: ApiError) =>
      Effect.map(
        limiter.consume(address, settings.rateLimitPerMinute, nowMs),
        (rate): Admitted => ({
          refusal: rate.allowed ? error : rateLimited(rate, nowMs),
          rate,
          keyId: undefined,
          nowMs
        })
      )
    const presented = parseAuthorization(request.authorization)
    if (isApiError(presented)) return yield* refuse(presented)
    let scope = address
    let limit = settings.rateLimitPerMinute
    let keyId: string | undefined
    if (presented !== undefined) {
      const key = yield* Effect.result(authenticate(presented))
      if (key._tag === "Failure") return yield* refuse(key.failure)
      scope = key.success.id
      keyId = key.success.id
      limit = key.success.rateLimitPerMinute ?? settings.rateLimitPerMinute
    }
    const rate = yield* limiter.consume(scope, limit, nowMs)
    return { refusal: rate.allowed ? undefined : rateLimited(rate, nowMs), rate, keyId, nowMs }
  }).pipe(
    Effect.catchDefect((defect) =>
      Effect.gen(function* () {
        const nowMs = yield* Clock.currentTimeMillis
        const unavailable = defect instanceof StoreUnavailable
        yield* unavailable
          ? Effect.logWarning("store unavailable", defect.operation, String(defect.cause))
          : Effect.logError("admission defect", defect)
        const error = unavailable
          ? apiError("source_unavailable", "the store is unavailable; retry shortly", { retryAfterSeconds: 1 })
          : internalError()
        return { refusal: error, rate: undefined, keyId: undefined, nowMs }
      })
    )
  )
