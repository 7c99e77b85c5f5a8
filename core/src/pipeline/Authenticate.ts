/**
 * The first step of every request: who is calling. A presented key is checked (malformed, unknown or revoked:
 * `unauthenticated`); a keyless caller is known by its client address. A failed attempt spends a unit of the
 * client address's keyless budget, so keys cannot be guessed at speed.
 */
import { Effect } from "effect"
import type * as Digest from "effect/crypto/Digest"
import { clientAddress, keylessBudget } from "../ClientAddress.ts"
import { type ApiError, apiError } from "../Errors.ts"
import { authenticate as authenticateKey, type KeyStore, parseAuthorization } from "../Keys.ts"
import { isApiError } from "../Params.ts"
import type { RateLimiter, RateWindow } from "../RateLimit.ts"
import type { OperationSpec } from "../Registry.ts"
import { fail, missingKeyMessage, rateLimited } from "./Answers.ts"
import type { Outcome, Principal, Settings } from "./Types.ts"

/** The budget a keyless caller is rate limited by: its address (see `clientAddress`), an IPv6 one by its /64. */
export const clientOf = (
  request: { readonly client: string; readonly forwardedFor?: ReadonlyArray<string> },
  settings: Settings["Service"]
): string =>
  keylessBudget(
    settings.trustedProxies === undefined || request.forwardedFor === undefined
      ? request.client
      : clientAddress(request.client, request.forwardedFor, settings.trustedProxies)
  )

/** The scope a principal's rate units are spent in: its key, or its client address. */
export const rateScopeOf = (principal: Exclude<Principal, { readonly _tag: "Internal" }>): string =>
  principal._tag === "Key" ? principal.key.id : `ip:${principal.client}`

/** Who is calling, or the refusal (already rate-limited against the client address) with its window. */
export type Authenticated =
  | { readonly _tag: "Principal"; readonly principal: Exclude<Principal, { readonly _tag: "Internal" }> }
  | { readonly _tag: "Refused"; readonly outcome: Outcome; readonly rate: RateWindow }

/**
 * Authenticates a request: a key when one is presented, else the client address, unless `op` is an operation
 * that needs a key (`undefined`: a keyless request that is not an operation, see `admitKeyless`).
 */
export const authenticate = (
  op: OperationSpec | undefined,
  request: {
    readonly authorization: ReadonlyArray<string>
    readonly client: string
    readonly forwardedFor?: ReadonlyArray<string>
  },
  settings: Settings["Service"],
  limiter: RateLimiter["Service"],
  nowMs: number
): Effect.Effect<Authenticated, never, KeyStore | Digest.Digest> => {
  const refuse = (error: ApiError) =>
    Effect.map(
      limiter.consume(`ip:${clientOf(request, settings)}`, settings.rateLimitPerMinute, nowMs),
      (rate): Authenticated => ({
        _tag: "Refused",
        outcome: fail(rate.allowed ? error : rateLimited(rate, nowMs)),
        rate
      })
    )
  const presented = parseAuthorization(request.authorization)
  if (isApiError(presented)) return refuse(presented)
  if (presented === undefined) {
    if (op !== undefined && op.auth !== "keyless") return refuse(apiError("unauthenticated", missingKeyMessage(op)))
    return Effect.succeed({
      _tag: "Principal",
      principal: {
        _tag: "Anonymous",
        client: clientOf(request, settings),
        rateLimitPerMinute: settings.rateLimitPerMinute
      }
    })
  }
  return Effect.flatMap(Effect.result(authenticateKey(presented)), (key) =>
    key._tag === "Failure"
      ? refuse(key.failure)
      : Effect.succeed<Authenticated>({
          _tag: "Principal",
          principal: {
            _tag: "Key",
            key: key.success,
            rateLimitPerMinute: key.success.rateLimitPerMinute ?? settings.rateLimitPerMinute
          }
        })
  )
}
