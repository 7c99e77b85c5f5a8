/**
 * What every path of the pipeline speaks: the request a transport hands over, who is calling, what a handler gets
 * and gives, the outcome and the answer a transport turns back into its wire format, and the services the
 * pipeline reads.
 */
import { Context, type Effect, Layer } from "effect"
import type * as Digest from "effect/crypto/Digest"
import type { TrustedProxies } from "../ClientAddress.ts"
import type { ApiError } from "../Errors.ts"
import type { KeyRecord, KeyStore } from "../Keys.ts"
import type { StoredAnswer } from "../Money.ts"
import type { MoneyStore } from "../MoneyStore.ts"
import type { CanonicalParams } from "../Params.ts"
import type { RateLimiter, RateWindow } from "../RateLimit.ts"
import type { OperationSpec } from "../Registry.ts"

/** A request as every transport hands it over. */
export interface ApiRequest {
  readonly operation: string
  /**
   * Parameters as name/value pairs, in the order received (so repetition is visible), or the error the
   * transport met while reading them (a malformed query string), reported at the decode step.
   */
  readonly params: ReadonlyArray<readonly [string, unknown]> | ApiError
  /** Every `Authorization` header value received. */
  readonly authorization: ReadonlyArray<string>
  /** Every `Idempotency-Key` value received (MCP: the header of the POST carrying one `tools/call`). */
  readonly idempotencyKey?: ReadonlyArray<string>
  /** The `If-None-Match` value, where the transport has conditional requests (HTTP). */
  readonly ifNoneMatch?: string
  /**
   * The socket peer's address. Keyless callers are rate limited by the client address resolved from it and
   * `forwardedFor` (`clientAddress`: the peer itself unless it is a trusted proxy).
   */
  readonly client: string
  /** Every `X-Forwarded-For` value received, in order (read only when the peer is a trusted proxy). */
  readonly forwardedFor?: ReadonlyArray<string>
  /**
   * The embedding program itself calling through the in-process library without a key: a trusted internal
   * principal, not authenticated, not rate limited, not billed and without idempotency. Transports that face
   * the network never set it.
   */
  readonly internal?: boolean
}

/** Who is calling. */
export type Principal =
  | { readonly _tag: "Key"; readonly key: KeyRecord; readonly rateLimitPerMinute: number }
  | { readonly _tag: "Anonymous"; readonly client: string; readonly rateLimitPerMinute: number }
  /** The embedding program (`ApiRequest.internal`): unbilled, unlimited. */
  | { readonly _tag: "Internal" }

/** A caller with an API key: the only principal a paid request runs for. */
export type KeyPrincipal = Extract<Principal, { readonly _tag: "Key" }>

/** What a handler has to go on. */
export interface HandlerInput {
  readonly op: OperationSpec
  readonly params: CanonicalParams
  readonly principal: Principal
  /** The rate window after this request spent its unit. */
  readonly rate: RateWindow
  readonly nowMs: number
}

/** What a handler produces. */
export type HandlerOutput =
  | {
      readonly _tag: "Json"
      readonly body: unknown
      /** The charge for what was delivered (never more than the hold; see `Billing`). */
      readonly creditsCharged: number
      /** Earliest time the data can change (epoch ms): sets `Cache-Control: max-age`. */
      readonly nextUpdateAtMs?: number
      /** Which source fed the data (`simulated`, `live`): the `X-Data-Source` header. */
      readonly dataSource?: string
      /** `body` already serialized (exactly `JSON.stringify(body)`), when the handler has it at hand. */
      readonly text?: string
    }
  | { readonly _tag: "Markdown"; readonly section: string; readonly markdown: string }

export type Handler = (input: HandlerInput) => Effect.Effect<HandlerOutput, ApiError>

/** The operations that have an implementation, by name. Operations without one answer `not_implemented`. */
export class Handlers extends Context.Service<Handlers, ReadonlyMap<string, Handler>>()("market-data/core/Handlers") {
  /** Combines handler sets; a later set wins on a name clash. */
  static merge(...sets: ReadonlyArray<ReadonlyMap<string, Handler>>): ReadonlyMap<string, Handler> {
    const out = new Map<string, Handler>()
    for (const s of sets) for (const [k, v] of s) out.set(k, v)
    return out
  }
}

/** Service-wide settings the pipeline reads. */
export class Settings extends Context.Service<
  Settings,
  {
    /** Default rate-limit policy, units per minute (a key's own override wins). */
    readonly rateLimitPerMinute: number
    /** Reverse proxies whose `X-Forwarded-For` is believed (`MARKET_DATA_TRUSTED_PROXIES`); none when absent. */
    readonly trustedProxies?: TrustedProxies
  }
>()("market-data/core/Settings") {
  static readonly defaults = { rateLimitPerMinute: 60 }
  static readonly layerDefault = Layer.succeed(Settings)(Settings.defaults)
}

/** The outcome of a request, transport-neutral. */
export type Outcome =
  | {
      readonly _tag: "Json"
      /** The exact body bytes (also what an idempotent replay sends). */
      readonly body: string
      readonly creditsCharged: number
      readonly etag?: string
      readonly maxAgeSeconds?: number
      /** Which source fed the data (`X-Data-Source`); stored with the answer for replays. */
      readonly dataSource?: string
    }
  | {
      readonly _tag: "Markdown"
      readonly section: string
      readonly markdown: string
      /** Strong ETag of `markdown` (`etagOf`), on a keyless operation's answer. */
      readonly etag?: string
    }
  | { readonly _tag: "Failure"; readonly error: ApiError; readonly creditsCharged: number }
  /** `If-None-Match` matched: no body, zero credits. */
  | { readonly _tag: "NotModified"; readonly etag: string; readonly maxAgeSeconds?: number }
  /** The stored answer of an earlier identical request under the same idempotency key. */
  | { readonly _tag: "Replay"; readonly answer: StoredAnswer }

export interface Answer {
  readonly outcome: Outcome
  /** The operation, when the name was known. */
  readonly op: OperationSpec | undefined
  /** The caller's rate window, when the request got as far as spending a unit. */
  readonly rate: RateWindow | undefined
  /** The key ID, for logs; never the key. */
  readonly keyId: string | undefined
  readonly nowMs: number
}

/** What one path gives back to `handle`: its outcome and the caller's rate window. */
export interface PathResult {
  readonly outcome: Outcome
  readonly rate: RateWindow
}

/** The store ports: one implementation each per store (memory, PGlite, PostgreSQL). */
export type StorePorts = KeyStore | MoneyStore | RateLimiter

/** Services the pipeline needs. */
export type PipelineServices = Handlers | Settings | StorePorts | Digest.Digest
