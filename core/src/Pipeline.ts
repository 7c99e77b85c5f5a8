/**
 * The request pipeline, one for every transport (HTTP, MCP, the in-process library):
 *
 *   authenticate -> decode -> (a paid request) admit -> execute (compare ETag) -> finish -> answer
 *
 * `admit` and `finish` are the money port's two steps (`MoneyStore`): admit spends the rate unit, checks the key
 * is not revoked, begins under the Idempotency-Key and holds the credits, in one step; finish charges within the
 * hold and stores the answer (or keeps a failure's answer, or releases), in one step. Every money decision in them
 * is a pure function of `Money.ts`.
 *
 * A paid request without an Idempotency-Key whose key this process last saw able to pay takes the metered
 * path instead: authenticate -> decode -> execute -> charge (rate unit + charge, one step) -> answer. It
 * never serves beyond the balance (the charge refuses), and spends one write instead of two.
 *
 * Free operations spend their rate unit through the `RateLimiter` and execute.
 *
 * A conditional request (`If-None-Match` on a conditional operation) executes and compares its ETag before any
 * hold or charge on either path, so an unchanged answer is a free `304` whatever the key's balance.
 *
 * Transports turn their wire format into an `ApiRequest` and an `Answer` back into their wire format; nothing
 * else. Every failure becomes an answer; the pipeline itself never fails.
 */
import { Cause, Clock, Context, Deferred, Effect, Exit, Layer } from "effect"
import * as Digest from "effect/crypto/Digest"
import { holdFor } from "./Billing.ts"
import { clientAddress, keylessBudget, type TrustedProxies } from "./ClientAddress.ts"
import { type ApiError, apiError, ErrorCatalog, StoreUnavailable } from "./Errors.ts"
import { validateIdempotencyKey } from "./Idempotency.ts"
import { authenticate, type KeyRecord, type KeyStore, parseAuthorization, unauthenticated } from "./Keys.ts"
import {
  beginRefusal,
  chargeWithin,
  comparesBeforeHold,
  holdCovered,
  IDEMPOTENCY_LEASE_MS,
  isTransientStatus,
  type Meter,
  type StoredAnswer
} from "./Money.ts"
import { type FinishEnd, MoneyStore, type Ticket } from "./MoneyStore.ts"
import { type CanonicalParams, canonicalRequest, decodeParams, isApiError } from "./Params.ts"
import { RateLimiter, type RateWindow, secondsUntilReset } from "./RateLimit.ts"
import { type OperationSpec, operation } from "./Registry.ts"

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
  | { readonly _tag: "Markdown"; readonly section: string; readonly markdown: string }
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

/** The store ports: one implementation each per store (memory, PGlite, PostgreSQL). */
export type StorePorts = KeyStore | MoneyStore | RateLimiter

/** Services the pipeline needs. */
export type PipelineServices = Handlers | Settings | StorePorts | Digest.Digest

type FailureOutcome = Extract<Outcome, { readonly _tag: "Failure" }>

const fail = (error: ApiError): FailureOutcome => ({ _tag: "Failure", error, creditsCharged: 0 })

const internalError = () => apiError("internal_error", "internal error; nothing was charged, retry later")

/** HTTP-style status of an outcome (the contract's statuses; used for storing and transience). */
export const statusOf = (o: Outcome): number => {
  switch (o._tag) {
    case "Failure":
      return ErrorCatalog[o.error.code].status
    case "NotModified":
      return 304
    case "Replay":
      return o.answer.status
    default:
      return 200
  }
}

/** The header naming a paid answer's charge (HTTP's `X-Credits-Charged`), lower-case as stored with an answer. */
export const CREDITS_CHARGED_HEADER = "x-credits-charged"

/**
 * The credits an outcome charged, as every transport reports them (HTTP `X-Credits-Charged`, MCP
 * `_meta.credits_charged`, the in-process result): a replay reports its original charge from the stored answer;
 * `304` and markdown charge nothing.
 */
export const creditsChargedOf = (o: Outcome): number => {
  switch (o._tag) {
    case "Json":
    case "Failure":
      return o.creditsCharged
    case "Replay":
      return Number(o.answer.headers[CREDITS_CHARGED_HEADER] ?? 0)
    default:
      return 0
  }
}

/**
 * The `X-Credits-Charged` value a transport adds to an answer: every answer of a paid operation carries it,
 * except a replay, whose stored headers already carry the original charge. Undefined otherwise.
 */
export const creditsHeaderOf = (answer: Answer): string | undefined =>
  answer.op?.auth === "paid" && answer.outcome._tag !== "Replay" ? String(creditsChargedOf(answer.outcome)) : undefined

/** The transport-neutral stored form of a JSON or failure outcome. */
export const storedAnswerOf = (o: Outcome & { readonly _tag: "Json" | "Failure" }): StoredAnswer => {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    [CREDITS_CHARGED_HEADER]: String(o.creditsCharged)
  }
  if (o._tag === "Json") {
    if (o.etag !== undefined) headers.etag = o.etag
    if (o.dataSource !== undefined) headers["x-data-source"] = o.dataSource
    return { status: 200, headers, body: o.body }
  }
  return { status: ErrorCatalog[o.error.code].status, headers, body: JSON.stringify(o.error.toBody()) }
}

/** Strong ETag of a body: SHA-256 of its bytes, from the content alone (never the clock). */
export const etagOf = (body: string): Effect.Effect<string, never, Digest.Digest> =>
  Effect.flatMap(Digest.Digest, (d) => d.digestHex(Digest.sha256, new TextEncoder().encode(body))).pipe(
    Effect.map((hex) => `"${hex.slice(0, 40)}"`)
  )

/**
 * ETags of bodies a handler handed over already serialized (`text`, which handlers reuse while their data is
 * unchanged): the same string is hashed once. Bounded; other bodies are hashed every time.
 */
const rememberedEtags = new Map<string, string>()
const REMEMBERED_ETAGS_MAX = 1024

const rememberEtag = (body: string, text: string | undefined): Effect.Effect<string, never, Digest.Digest> =>
  Effect.map(etagOf(body), (etag) => {
    if (text !== undefined) {
      if (rememberedEtags.size >= REMEMBERED_ETAGS_MAX) rememberedEtags.clear()
      rememberedEtags.set(body, etag)
    }
    return etag
  })

/** Whether an `If-None-Match` value (one tag, a list, or `*`) matches `etag`. Weak tags compare weakly. */
export const ifNoneMatchMatches = (header: string | undefined, etag: string): boolean => {
  if (header === undefined) return false
  const value = header.trim()
  if (value === "*") return true
  return value.split(",").some((t) => t.trim().replace(/^W\//, "") === etag)
}

/** Whether a paid request compares its ETag before it holds or charges anything (`comparesBeforeHold`). */
const comparesFirst = (op: OperationSpec, ifNoneMatch: string | undefined): boolean =>
  comparesBeforeHold(op.conditional, ifNoneMatch)

/** What running a handler gave: its output, or the error it failed with. */
type Executed =
  | { readonly _tag: "Output"; readonly out: HandlerOutput }
  | { readonly _tag: "Error"; readonly error: ApiError }

/** Runs a handler, turning a defect into `internal_error`. */
const execute = (handler: Handler, input: HandlerInput): Effect.Effect<Executed> =>
  Effect.matchCauseEffectEager(handler(input), {
    onSuccess: (out) => Effect.succeed({ _tag: "Output" as const, out }),
    onFailure: (cause) => {
      const failure = Cause.findErrorOption(cause)
      if (failure._tag === "Some") return Effect.succeed({ _tag: "Error" as const, error: failure.value })
      if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
      return Effect.logError("handler defect", Cause.pretty(cause)).pipe(
        Effect.as({ _tag: "Error" as const, error: internalError() })
      )
    }
  })

/** Runs one request through the pipeline. Never fails: every failure is an `Answer` carrying an error. */
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

export const handle = (request: ApiRequest): Effect.Effect<Answer, never, PipelineServices> =>
  // The services are read from the fiber's context once, here, rather than yielded one by one on the way.
  Effect.contextWith((context: Context.Context<PipelineServices>) => {
    const answered = Context.get(context, PipelineObserver).answered
    const answer = handleUnobserved(request, context)
    return answered === undefined
      ? answer
      : Effect.map(answer, (a) => {
          answered(request, a)
          return a
        })
  })

const handleUnobserved = (
  request: ApiRequest,
  context: Context.Context<PipelineServices>
): Effect.Effect<Answer, never, PipelineServices> =>
  run(request, context).pipe(
    Effect.catchDefect((defect) =>
      Effect.gen(function* () {
        const nowMs = yield* Clock.currentTimeMillis
        const unavailable = defect instanceof StoreUnavailable
        yield* unavailable
          ? Effect.logWarning("store unavailable", defect.operation, String(defect.cause))
          : Effect.logError("pipeline defect", defect)
        const error = unavailable
          ? apiError("source_unavailable", "the store is unavailable; nothing was charged, retry shortly", {
              retryAfterSeconds: 1
            })
          : internalError()
        return { outcome: fail(error), op: operation(request.operation), rate: undefined, keyId: undefined, nowMs }
      })
    )
  )

const run: (
  request: ApiRequest,
  context: Context.Context<PipelineServices>
) => Effect.Effect<Answer, never, PipelineServices> = Effect.fnUntraced(function* (
  request: ApiRequest,
  context: Context.Context<PipelineServices>
) {
  const clock = Context.get(context, Clock.Clock)
  const nowMs = clock.currentTimeMillisUnsafe()
  const op = operation(request.operation)
  const answer = (outcome: Outcome, rate?: RateWindow, keyId?: string): Answer => ({
    outcome,
    op,
    rate,
    keyId,
    nowMs
  })
  if (op === undefined) {
    return answer(fail(apiError("unknown_operation", `no operation named ${JSON.stringify(request.operation)}`)))
  }

  if (request.internal === true) return yield* internal(op, request, nowMs)

  // Authenticate. A failed attempt spends a unit of the client address's keyless budget, so keys cannot
  // be guessed at speed.
  const settings = Context.get(context, Settings)
  const limiter = Context.get(context, RateLimiter)
  const refuse = (error: ApiError) =>
    Effect.map(limiter.consume(`ip:${clientOf(request, settings)}`, settings.rateLimitPerMinute, nowMs), (rate) =>
      rate.allowed ? answer(fail(error), rate) : answer(fail(rateLimited(rate, nowMs)), rate)
    )
  const presented = parseAuthorization(request.authorization)
  if (isApiError(presented)) return yield* refuse(presented)
  let principal: Principal
  if (presented === undefined) {
    if (op.auth !== "keyless") return yield* refuse(apiError("unauthenticated", missingKeyMessage(op)))
    principal = {
      _tag: "Anonymous",
      client: clientOf(request, settings),
      rateLimitPerMinute: settings.rateLimitPerMinute
    }
  } else {
    const key = yield* Effect.result(authenticate(presented))
    if (key._tag === "Failure") return yield* refuse(key.failure)
    principal = {
      _tag: "Key",
      key: key.success,
      rateLimitPerMinute: key.success.rateLimitPerMinute ?? settings.rateLimitPerMinute
    }
  }
  const keyId = principal._tag === "Key" ? principal.key.id : undefined

  const scope = principal._tag === "Key" ? principal.key.id : `ip:${principal.client}`
  const handlers = Context.get(context, Handlers)

  // Releases an outage kept this key's earlier requests from making are retried first, so a retry of the same
  // Idempotency-Key finds its record free instead of `request_in_progress` for the whole lease.
  if (op.auth === "paid" && principal._tag === "Key") yield* retryPendingReleases(principal.key.id, nowMs)

  // The Idempotency-Key header of a paid request, validated here once: the key, none (undefined), or the
  // `invalid_idempotency_key` error answered after the rate limit and the decode.
  const idemKey =
    op.auth === "paid" && principal._tag === "Key" ? validateIdempotencyKey(request.idempotencyKey ?? []) : undefined

  const params = isApiError(request.params) ? request.params : decodeParams(op, request.params)
  const handler = handlers.get(op.name)

  // A paid request: admit (rate unit, key, Idempotency-Key, hold) -> execute -> finish; or, without an
  // Idempotency-Key and a balance this process last saw able to pay, execute -> charge (one step either way).
  if (
    op.auth === "paid" &&
    principal._tag === "Key" &&
    handler !== undefined &&
    !isApiError(params) &&
    !isApiError(idemKey)
  ) {
    const meter = { scope, limit: principal.rateLimitPerMinute }
    if (idemKey === undefined) {
      const metered = yield* meteredPath(
        Context.get(context, MoneyStore),
        clock,
        op,
        handler,
        params,
        principal,
        meter,
        request.ifNoneMatch,
        nowMs
      )
      if (metered !== undefined) return answer(metered.outcome, metered.rate, keyId)
    }
    const done = yield* paid(op, handler, params, principal, meter, request.ifNoneMatch, idemKey, nowMs)
    return answer(done.outcome, done.rate, keyId)
  }

  // Every other request spends its rate unit alone: one unit per request, paid or free.
  const rate = yield* limiter.consume(scope, principal.rateLimitPerMinute, nowMs)
  if (!rate.allowed) return answer(fail(rateLimited(rate, nowMs)), rate, keyId)
  const done = (outcome: Outcome) => answer(outcome, rate, keyId)

  // Decode, then (a paid request) its Idempotency-Key.
  if (isApiError(params)) return done(fail(params))
  if (isApiError(idemKey)) return done(fail(idemKey))
  // A paid operation without a handler is `not_implemented` (transient: nothing held, nothing stored).
  if (handler === undefined) return done(fail(notImplemented(op)))

  // Free operations: no credits, no idempotency.
  const run = yield* execute(handler, { op, params, principal, rate, nowMs })
  if (run._tag === "Error") return done(fail(run.error))
  const out = run.out
  return done(
    out._tag === "Markdown"
      ? out
      : { _tag: "Json", body: JSON.stringify(out.body), creditsCharged: 0, ...sourceOf(out) }
  )
})

/** The internal principal's path: decode, execute; no key, no rate unit, no credits, no idempotency. */
const internal: (op: OperationSpec, request: ApiRequest, nowMs: number) => Effect.Effect<Answer, never, Handlers> =
  Effect.fnUntraced(function* (op: OperationSpec, request: ApiRequest, nowMs: number) {
    const done = (outcome: Outcome): Answer => ({ outcome, op, rate: undefined, keyId: undefined, nowMs })
    const params = isApiError(request.params) ? request.params : decodeParams(op, request.params)
    if (isApiError(params)) return done(fail(params))
    const handler = (yield* Handlers).get(op.name)
    if (handler === undefined) return done(fail(notImplemented(op)))
    const unlimited: RateWindow = { limit: 0, remaining: 0, resetAtMs: nowMs, allowed: true }
    const run = yield* execute(handler, { op, params, principal: { _tag: "Internal" }, rate: unlimited, nowMs })
    if (run._tag === "Error") return done(fail(run.error))
    const out = run.out
    if (out._tag === "Markdown") return done(out)
    const maxAge =
      out.nextUpdateAtMs === undefined
        ? {}
        : { maxAgeSeconds: Math.max(0, Math.ceil((out.nextUpdateAtMs - nowMs) / 1000)) }
    return done({
      _tag: "Json",
      body: out.text ?? JSON.stringify(out.body),
      creditsCharged: 0,
      ...maxAge,
      ...sourceOf(out)
    })
  })

/**
 * Releases that could not reach the store: the ticket of a paid request (its credit hold, its idempotency
 * record) when the store became unavailable under it, so that its own release failed too. Kept per store, by
 * API key, and retried before that key's next paid request (`retryPendingReleases`): a retry of the same
 * Idempotency-Key then finds its record free instead of `request_in_progress` until the lease (60 s) ends.
 * One request of the key makes them (`retrying`); the key's other requests arriving meanwhile wait for it, so a
 * retry of a released Idempotency-Key never meets its own record still in flight.
 * A release is guarded (`finish` with `Release` leaves a settled or released hold alone and frees the record
 * only while it is in flight under the ticket's token), so running one late never frees what was meanwhile
 * resolved: a settlement that did commit before the failure stored its answer, which then replays; a retry that
 * took over after the lease has its own token. Per process and bounded: what another instance or a crash leaves
 * behind still expires with its lease, and so does a pending release whose key never comes back: once the leases
 * it would free have ended (`usefulUntil`) it frees nothing a lease did not, and the key's entry is swept
 * (`sweepReleases`) at most every `SWEEP_RELEASES_MS` by any paid request on the same store.
 */
interface KeyReleases {
  /** The releases waiting, oldest first. */
  tickets: Array<Ticket>
  /** Completed when the request making this key's releases is done (failed with the store's failure). */
  retrying: Deferred.Deferred<void> | undefined
}
interface StoreReleases {
  readonly byKey: Map<string, KeyReleases>
  /** When `sweepReleases` next looks at this store's keys (epoch ms). */
  sweepAtMs: number
}
const pendingReleases = new WeakMap<object, StoreReleases>()
/** Keys with releases waiting or being made, over every store: 0 keeps `retryPendingReleases` a no-op. */
let keysWithReleases = 0
/** At most this many pending releases per API key (the oldest go first; their leases still free them). */
const PENDING_RELEASES_PER_KEY = 64
/** How often a store's pending releases are swept of those whose leases have ended. */
const SWEEP_RELEASES_MS = 10_000

/**
 * Until when a release can free something its leases do not: the hold counts as released once its lease ends,
 * and the idempotency record, begun at admission (at or before `holdExpiresAtMs`), is free for a takeover once
 * its lease ends.
 */
const usefulUntil = (ticket: Ticket): number => ticket.holdExpiresAtMs + IDEMPOTENCY_LEASE_MS

const keep = (entry: KeyReleases, tickets: Array<Ticket>): void => {
  entry.tickets = tickets.length > PENDING_RELEASES_PER_KEY ? tickets.slice(-PENDING_RELEASES_PER_KEY) : tickets
}

const rememberRelease = (store: object, ticket: Ticket): void => {
  let releases = pendingReleases.get(store)
  if (releases === undefined) {
    releases = { byKey: new Map(), sweepAtMs: 0 }
    pendingReleases.set(store, releases)
  }
  const byKey = releases.byKey
  let entry = byKey.get(ticket.keyId)
  if (entry === undefined) {
    entry = { tickets: [], retrying: undefined }
    byKey.set(ticket.keyId, entry)
    keysWithReleases++
  }
  entry.tickets.push(ticket)
  keep(entry, entry.tickets)
}

/** How many releases are waiting for the money store `store`, for `keyId` (tests and diagnostics). */
export const pendingReleaseCount = (store: object, keyId: string): number =>
  pendingReleases.get(store)?.byKey.get(keyId)?.tickets.length ?? 0

/** How many API keys, over every store of this process, have releases waiting or being made (diagnostics). */
export const keysWithPendingReleases = (): number => keysWithReleases

const RELEASE: FinishEnd = { _tag: "Release" }

/**
 * Makes the releases waiting for `keyId` (see `pendingReleases`) before the key's request goes on. Nothing
 * waiting anywhere (the normal case): nothing allocated, nothing awaited. Otherwise the first request of the key
 * makes them, oldest first, and the key's requests arriving meanwhile wait for it and then look again. When the
 * store is still unavailable the rest stay waiting and the failure propagates to the request making them and to
 * those waiting for it (each would fail on the store anyway).
 */
const retryPendingReleases = (keyId: string, nowMs: number): Effect.Effect<void, never, MoneyStore> =>
  keysWithReleases === 0
    ? Effect.void
    : Effect.flatMap(MoneyStore, (money) => {
        sweepReleases(money, nowMs)
        return releasesOf(money, keyId)
      })

/**
 * Drops the pending releases of `money` whose leases have ended (`usefulUntil`), and the entries of keys left
 * with none, at most every `SWEEP_RELEASES_MS`; an entry whose releases are being made is left to that request.
 */
const sweepReleases = (money: MoneyStore["Service"], nowMs: number): void => {
  const releases = pendingReleases.get(money)
  if (releases === undefined || nowMs < releases.sweepAtMs) return
  releases.sweepAtMs = nowMs + SWEEP_RELEASES_MS
  for (const [keyId, entry] of releases.byKey) {
    if (entry.retrying !== undefined) continue
    entry.tickets = entry.tickets.filter((ticket) => usefulUntil(ticket) > nowMs)
    if (entry.tickets.length === 0) {
      releases.byKey.delete(keyId)
      keysWithReleases--
    }
  }
}

const releasesOf = (money: MoneyStore["Service"], keyId: string): Effect.Effect<void> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.suspend(() => {
      const byKey = pendingReleases.get(money)?.byKey
      const entry = byKey?.get(keyId)
      if (byKey === undefined || entry === undefined) return Effect.void
      if (entry.retrying !== undefined) {
        return Effect.andThen(restore(Deferred.await(entry.retrying)), releasesOf(money, keyId))
      }
      const list = entry.tickets
      const retrying = Deferred.makeUnsafe<void>()
      entry.tickets = []
      entry.retrying = retrying
      let made = 0
      const work = Effect.flatMap(Clock.currentTimeMillis, (nowMs) =>
        Effect.forEach(
          list,
          (ticket) =>
            Effect.map(money.finish(ticket, RELEASE, nowMs), () => {
              made++
            }),
          { discard: true }
        )
      )
      return restore(work).pipe(
        Effect.onExit((exit) =>
          Effect.sync(() => {
            // What was not made goes back ahead of what was remembered meanwhile.
            if (made < list.length) keep(entry, list.slice(made).concat(entry.tickets))
            entry.retrying = undefined
            if (entry.tickets.length === 0 && byKey.get(keyId) === entry) {
              byKey.delete(keyId)
              keysWithReleases--
            }
            // The store's failure reaches the requests waiting; an interruption of this request does not (they
            // look again, and one of them makes what is left).
            Deferred.doneUnsafe(retrying, exit._tag === "Failure" && !Exit.hasInterrupts(exit) ? exit : Effect.void)
          })
        )
      )
    })
  )

/**
 * The paid path: admit (one step: rate unit, key not revoked, Idempotency-Key begun, credits held) -> execute
 * (and compare the ETag) -> finish (one step: charge within the hold and store the answer, or keep a failure's
 * answer, or release). A conditional request holds nothing at admission: it compares its ETag first, so an
 * unchanged answer is a free `304` whatever the balance, and a changed one is charged only if the balance covers
 * it when it finishes.
 */
const paid = Effect.fnUntraced(function* (
  op: OperationSpec,
  handler: Handler,
  params: CanonicalParams,
  principal: Extract<Principal, { readonly _tag: "Key" }>,
  meter: Meter,
  ifNoneMatch: string | undefined,
  idemKey: string | undefined,
  nowMs: number
) {
  const money = yield* MoneyStore
  const keyId = principal.key.id
  const amount = holdFor(op, params)
  const admitted = yield* money.admit({
    keyId,
    nowMs,
    meter,
    hold: comparesFirst(op, ifNoneMatch) ? 0 : amount,
    ...(idemKey === undefined ? {} : { idempotency: { key: idemKey, fingerprint: canonicalRequest(op.name, params) } })
  })
  const rate = admitted.rate
  const done = (outcome: Outcome) => ({ outcome, rate })
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
      const outcome = yield* attempt(
        op,
        handler,
        { op, params, principal, rate, nowMs },
        amount,
        ticket,
        ifNoneMatch
      ).pipe(
        // A request interrupted mid-way (client gone, shutdown) releases what it held at once.
        Effect.onInterrupt(() => money.finish(ticket, RELEASE, nowMs)),
        // The store failing under the attempt (an outage) leaves its ticket for the key's next request.
        Effect.catchDefect((defect) => {
          if (defect instanceof StoreUnavailable) rememberRelease(money, ticket)
          return Effect.die(defect)
        })
      )
      return done(outcome)
    }
  }
})

/** An admitted request: execute, compare its ETag, finish. */
const attempt = Effect.fnUntraced(function* (
  op: OperationSpec,
  handler: Handler,
  input: HandlerInput,
  amount: number,
  ticket: Ticket,
  ifNoneMatch: string | undefined
) {
  const money = yield* MoneyStore
  const clock = yield* Clock.Clock
  const run = yield* execute(handler, input)
  if (run._tag === "Error" || run.out._tag === "Markdown") {
    const o = fail(run._tag === "Error" ? run.error : internalError())
    // A transient failure frees its Idempotency-Key for the retry; any other is stored and replays.
    const end: FinishEnd = isTransientStatus(statusOf(o)) ? RELEASE : { _tag: "Keep", answer: storedAnswerOf(o) }
    yield* money.finish(ticket, end, input.nowMs)
    return o
  }
  const ready = yield* prepare(clock, op, run.out, ifNoneMatch)
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

/**
 * The metered path of a paid request without an Idempotency-Key: execute first, then spend the rate unit and
 * charge in one atomic step (`MoneyStore.charge`), which refuses when the balance does not cover the hold
 * amount. Nothing is ever served beyond the balance. Taken only when this process last saw the key's balance
 * cover the hold and no rate refusal pending, so a 402 or a 429 normally executes nothing; otherwise
 * `undefined` and the request takes the admit/finish path.
 */
const meteredPath = Effect.fnUntraced(function* (
  money: MoneyStore["Service"],
  clock: Clock.Clock,
  op: OperationSpec,
  handler: Handler,
  params: CanonicalParams,
  principal: Extract<Principal, { readonly _tag: "Key" }>,
  meter: Meter,
  ifNoneMatch: string | undefined,
  nowMs: number
) {
  const keyId = principal.key.id
  const amount = holdFor(op, params)
  if (money.hint(keyId).rateBlockedUntilMs > nowMs) return undefined
  // A conditional request is compared first whatever the balance: an unchanged `read` is a free 304 even for
  // a key that could not pay for the body (a changed one is then refused by the charge below, never served).
  if (!comparesFirst(op, ifNoneMatch)) {
    let available = money.hint(keyId).available
    if (available === undefined) available = yield* money.balance(keyId, nowMs)
    if (!holdCovered(available, amount)) return undefined
  }

  // The handler sees the window as last known; the unit is spent with the charge.
  const provisional: RateWindow = { limit: meter.limit, remaining: meter.limit, resetAtMs: nowMs, allowed: true }
  const run = yield* execute(handler, { op, params, principal, rate: provisional, nowMs })
  // An answer that charges nothing (an error, a 304) still spends its rate unit, through the same step: nothing
  // is charged (`required` 0), and a revoked key is refused.
  const spendUnit = (outcome: Outcome) =>
    Effect.map(
      money.charge({ keyId, required: 0, charge: 0, reason: op.name, nowMs, meter }),
      (result): { readonly outcome: Outcome; readonly rate: RateWindow } => ({
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
  const ready = yield* prepare(clock, op, run.out, ifNoneMatch)
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
})

/**
 * What a handler's JSON output becomes once it has run: the body, its ETag (conditional operations), the time it
 * is settled at and its `max-age`; `notModified` when `If-None-Match` matches the ETag; `json(charge)` the answer
 * charging `charge`.
 */
const prepare = (
  clock: Clock.Clock,
  op: OperationSpec,
  out: Extract<HandlerOutput, { readonly _tag: "Json" }>,
  ifNoneMatch: string | undefined
): Effect.Effect<Prepared, never, Digest.Digest> => {
  const body = out.text ?? JSON.stringify(out.body)
  const known = op.conditional ? rememberedEtags.get(body) : undefined
  // A body hashed before (the common case) is prepared at once: the value, not an effect to run.
  if (!op.conditional || known !== undefined) {
    return Effect.succeed(prepared(out, body, known, ifNoneMatch, clock.currentTimeMillisUnsafe()))
  }
  return Effect.map(rememberEtag(body, out.text), (etag) =>
    prepared(out, body, etag, ifNoneMatch, clock.currentTimeMillisUnsafe())
  )
}

interface Prepared {
  readonly settledAt: number
  readonly notModified: Outcome | undefined
  readonly json: (charge: number) => Outcome & { readonly _tag: "Json" }
}

const prepared = (
  out: Extract<HandlerOutput, { readonly _tag: "Json" }>,
  body: string,
  etag: string | undefined,
  ifNoneMatch: string | undefined,
  settledAt: number
): Prepared => {
  const maxAgeSeconds =
    out.nextUpdateAtMs === undefined ? undefined : Math.max(0, Math.ceil((out.nextUpdateAtMs - settledAt) / 1000))
  const cache = maxAgeSeconds === undefined ? {} : { maxAgeSeconds }
  const notModified: Outcome | undefined =
    etag !== undefined && ifNoneMatchMatches(ifNoneMatch, etag) ? { _tag: "NotModified", etag, ...cache } : undefined
  const json = (charge: number): Outcome & { readonly _tag: "Json" } => ({
    _tag: "Json",
    body,
    creditsCharged: charge,
    ...(etag === undefined ? {} : { etag }),
    ...cache,
    ...sourceOf(out)
  })
  return { settledAt, notModified, json }
}

const sourceOf = (out: { readonly dataSource?: string }) =>
  out.dataSource === undefined ? {} : { dataSource: out.dataSource }

const insufficient = (amount: number, available: number): ApiError =>
  apiError(
    "insufficient_credits",
    `this request holds ${amount} credit${amount === 1 ? "" : "s"}; the key has ${available} available. To top up, ask the service's operator: they add credits with \`market-data credits grant <key-id> <n>\` (your key ID is in \`usage\`); see docs section access`
  )

const rateLimited = (rate: RateWindow, nowMs: number): ApiError => {
  const wait = secondsUntilReset(rate, nowMs)
  return apiError("rate_limited", `rate limit of ${rate.limit} units per minute reached; retry in ${wait} s`, {
    retryAfterSeconds: wait
  })
}

const notImplemented = (op: OperationSpec): ApiError =>
  apiError(
    "not_implemented",
    `\`${op.name}\` is defined but its data plane has not landed yet; see docs section changelog`
  )

/** The budget a keyless caller is rate limited by: its address (see `clientAddress`), an IPv6 one by its /64. */
const clientOf = (
  request: { readonly client: string; readonly forwardedFor?: ReadonlyArray<string> },
  settings: Settings["Service"]
): string =>
  keylessBudget(
    settings.trustedProxies === undefined || request.forwardedFor === undefined
      ? request.client
      : clientAddress(request.client, request.forwardedFor, settings.trustedProxies)
  )

const missingKeyMessage = (op: OperationSpec): string =>
  `\`${op.name}\` needs an API key: send \`Authorization: Bearer <API_KEY>\` (see docs section access)`

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
 * Admits a keyless request that does not run an operation (the root and OpenAPI documents, the docs page, an
 * MCP `initialize`, `ping`, `tools/list`, notification, ...) on the rules every operation follows: a presented
 * key is checked (a malformed, unknown or revoked one is `unauthenticated`), and the request spends one rate
 * unit of its caller: the key's with a valid key, the client address's otherwise (a failed authentication too).
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
