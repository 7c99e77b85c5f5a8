/**
 * Push at 2026-07-28: `subscriptions/listen` answered with a long-lived SSE stream that starts with
 * `notifications/subscriptions/acknowledged` and carries `notifications/resources/updated` (the URI only, free)
 * for each subscribed asset resource (`service://read/<id>`) whose data changed; reading it is the paid read.
 *
 * What "changed" means comes from the data through the pipeline, not from a store's internals: a watcher reads each
 * subscribed asset with the internal principal (unbilled, not rate limited; ten assets to a `read` batch) when its
 * `next_update_at` comes, and a different `read` result for the asset (a digest of its content) is a change.
 * Because it reads what the planes serve, it works for every plane and store; on an instance that does not lead
 * ingestion it sees what the leader ingested once that instance serves it (test/mcp-listen-instances.test.ts). An
 * asset whose data is due but has not moved yet is read again after 250 ms, then less often (up to 5 s); none goes
 * unread longer than `LISTEN_LIMITS.watchMaxIntervalMs` (15 s), whatever its `next_update_at`.
 *
 * Limits (the `access` docs section): a key is required to subscribe to an asset resource; at most
 * `LISTEN_LIMITS.resourcesPerStream` resources per stream and `LISTEN_LIMITS.streamsPerKey` streams per key
 * (`keylessStreamsPerAddress` for keyless streams, which can subscribe to nothing paid); a slow listener's
 * notifications are coalesced per URI (the body is pulled as the socket drains and nothing is produced ahead of
 * it: a stream holds at most one pending notification per subscribed URI); a revoked key's streams are closed
 * within `keyRecheckMs`; a keep-alive comment is sent after `keepAliveMs` of quiet.
 */
import { createHash } from "node:crypto"
import {
  type ApiError,
  admitKeyless,
  apiError,
  authenticate,
  ErrorCatalog,
  Handlers,
  handle,
  isCanonicalAssetId,
  MCP_LISTEN_LIMITS,
  type PipelineServices,
  parseAuthorization,
  type WireResponse,
  type WireStream
} from "@market-data/core"
import { Cause, Context, Effect } from "effect"
import { ASSET_URI_PREFIX, assetIdOf } from "./AssetResources.ts"
import { failure, isPlainObject, type Params, type RequestId, RpcCode, type RpcResponse, success } from "./JsonRpc.ts"
import { MetaKey } from "./Modern.ts"

/**
 * The limits, as the `mcp` docs section states them (`MCP_LISTEN_LIMITS`). A mutable copy: tests shorten the
 * keep-alive and key re-check periods to observe them.
 */
export const LISTEN_LIMITS: {
  resourcesPerStream: number
  streamsPerKey: number
  keylessStreamsPerAddress: number
  keepAliveMs: number
  keyRecheckMs: number
  watchMaxIntervalMs: number
} = { ...MCP_LISTEN_LIMITS }

/** How soon a due asset whose data has not moved yet is read again, and the most it waits between such reads. */
const RECHECK_FIRST_MS = 250
const RECHECK_MAX_MS = 5_000
/** Internal reads of the watcher at once, and the assets per read (the `read` batch's most). */
const WATCH_CONCURRENCY = 4
const READ_BATCH = 10
const WATCH_TICK_MS = 50

const encoder = new TextEncoder()
const event = (message: unknown): Uint8Array => encoder.encode(`data: ${JSON.stringify(message)}\n\n`)
const KEEP_ALIVE = encoder.encode(": keep-alive\n\n")

/**
 * One open listen stream. Its body is pulled by the HTTP response as the socket drains (`pull`): nothing is
 * produced ahead of the reader, so a slow reader holds at most one pending entry per subscribed URI.
 */
class Listener {
  /** URIs with a change not yet sent: one entry per URI, however many changes (the coalescing). */
  readonly pending = new Set<string>()
  /** The reader waiting for the next message, if any. */
  private waiting: ((chunk: Uint8Array | undefined) => void) | undefined
  private acked = false
  private final: RpcResponse | undefined
  private ended = false
  /** When the last message left (for the keep-alive). */
  private lastSentMs: number
  readonly subscriptionId: RequestId
  /** Subscribed asset IDs and the URI each was subscribed under. */
  readonly uris: ReadonlyMap<string, string>
  readonly presentedKey: string | undefined
  readonly owner: string
  private readonly ack: Uint8Array
  private readonly onNotified: () => void
  nextKeyCheckMs: number

  constructor(options: {
    readonly subscriptionId: RequestId
    readonly uris: ReadonlyMap<string, string>
    readonly presentedKey: string | undefined
    readonly owner: string
    readonly ack: Uint8Array
    readonly nowMs: number
    /** Counts a notification handed to the reader. */
    readonly onNotified: () => void
  }) {
    this.subscriptionId = options.subscriptionId
    this.uris = options.uris
    this.presentedKey = options.presentedKey
    this.owner = options.owner
    this.ack = options.ack
    this.onNotified = options.onNotified
    this.lastSentMs = options.nowMs
    this.nextKeyCheckMs = options.nowMs + LISTEN_LIMITS.keyRecheckMs
  }

  /** The next message for the reader (undefined: the stream ends), as soon as there is one. */
  pull(): Promise<Uint8Array | undefined> {
    return new Promise((resolve) => {
      this.waiting = resolve
      this.serve(Date.now())
    })
  }

  /** Something may be ready for a waiting reader: a change, the final answer, or a keep-alive due at `nowMs`. */
  serve(nowMs: number): void {
    const resolve = this.waiting
    if (resolve === undefined) return
    let chunk: Uint8Array | undefined
    if (!this.acked) {
      this.acked = true
      chunk = this.ack
    } else if (this.ended) {
      chunk = undefined
    } else if (this.final !== undefined) {
      this.ended = true
      chunk = event(this.final)
    } else if (this.pending.size > 0) {
      const [uri] = this.pending
      this.pending.delete(uri as string)
      this.onNotified()
      chunk = event({
        jsonrpc: "2.0",
        method: "notifications/resources/updated",
        params: { _meta: { [MetaKey.subscriptionId]: this.subscriptionId }, uri }
      })
    } else if (nowMs - this.lastSentMs >= LISTEN_LIMITS.keepAliveMs) {
      chunk = KEEP_ALIVE
    } else {
      return
    }
    this.waiting = undefined
    this.lastSentMs = nowMs
    resolve(chunk)
  }

  /** Marks a subscribed URI changed. */
  changed(uri: string): void {
    this.pending.add(uri)
    this.serve(Date.now())
  }

  /** Ends the stream with a final JSON-RPC response (the refusal of a revoked key, or the graceful end). */
  close(final: RpcResponse): void {
    this.final ??= final
    this.serve(Date.now())
  }
}

interface Watched {
  readonly listeners: Set<Listener>
  /** The asset's `read` data as last read (its content is what a change is measured on). */
  etag: string | undefined
  nextCheckMs: number
  backoffMs: number
  checking: boolean
}

/** The listen streams and the watched assets of one service (one per pipeline `Handlers`). */
class Hub {
  readonly assets = new Map<string, Watched>()
  readonly listeners = new Set<Listener>()
  readonly streamsByOwner = new Map<string, number>()
  private running = false
  /** Change notifications handed to the streams' readers (for the bench and tests). */
  notificationsSent = 0

  private readonly context: Context.Context<PipelineServices>
  constructor(context: Context.Context<PipelineServices>) {
    this.context = context
  }

  add(listener: Listener, nowMs: number): void {
    this.listeners.add(listener)
    this.streamsByOwner.set(listener.owner, (this.streamsByOwner.get(listener.owner) ?? 0) + 1)
    for (const assetId of listener.uris.keys()) {
      let w = this.assets.get(assetId)
      if (w === undefined) {
        w = { listeners: new Set(), etag: undefined, nextCheckMs: nowMs, backoffMs: RECHECK_FIRST_MS, checking: false }
        this.assets.set(assetId, w)
      }
      w.listeners.add(listener)
    }
    this.start()
  }

  remove(listener: Listener): void {
    if (!this.listeners.delete(listener)) return
    const n = (this.streamsByOwner.get(listener.owner) ?? 1) - 1
    if (n <= 0) this.streamsByOwner.delete(listener.owner)
    else this.streamsByOwner.set(listener.owner, n)
    for (const assetId of listener.uris.keys()) {
      const w = this.assets.get(assetId)
      if (w === undefined) continue
      w.listeners.delete(listener)
      if (w.listeners.size === 0) this.assets.delete(assetId)
    }
  }

  openStreams(owner: string): number {
    return this.streamsByOwner.get(owner) ?? 0
  }

  private start(): void {
    if (this.running) return
    this.running = true
    Effect.runForkWith(this.context)(
      this.loop.pipe(
        Effect.ensuring(
          Effect.sync(() => {
            this.running = false
            if (this.listeners.size > 0) this.start()
          })
        )
      )
    )
  }

  /** Runs while any stream is open: reads the due assets, and checks the streams' keys again. */
  private get loop(): Effect.Effect<void, never, PipelineServices> {
    const hub = this
    return Effect.gen(function* () {
      while (hub.listeners.size > 0) {
        const nowMs = Date.now()
        const due: Array<[string, Watched]> = []
        for (const entry of hub.assets) {
          if (!entry[1].checking && entry[1].nextCheckMs <= nowMs) {
            entry[1].checking = true
            due.push(entry)
          }
        }
        if (due.length > 0) {
          // Read in batches of up to READ_BATCH assets: one pass through the pipeline for ten assets.
          const batches: Array<Array<[string, Watched]>> = []
          for (let i = 0; i < due.length; i += READ_BATCH) batches.push(due.slice(i, i + READ_BATCH))
          yield* Effect.forEach(batches, (batch) => hub.check(batch), { concurrency: WATCH_CONCURRENCY, discard: true })
        }
        // Each presented key is checked once per pass, however many streams it has open.
        const checked = new Map<string, ApiError | undefined>()
        for (const listener of hub.listeners) {
          const presented = listener.presentedKey
          if (presented === undefined || listener.nextKeyCheckMs > nowMs) continue
          listener.nextKeyCheckMs = nowMs + LISTEN_LIMITS.keyRecheckMs
          if (!checked.has(presented)) {
            const key = yield* Effect.result(authenticate(presented))
            checked.set(presented, key._tag === "Failure" ? key.failure : undefined)
          }
          const error = checked.get(presented)
          if (error !== undefined) {
            listener.close(failure(listener.subscriptionId, RpcCode.ServerError, error.message, error.toBody()))
          }
        }
        // Keep-alive comments for the streams quiet for `keepAliveMs` (one timer for all, not one per stream).
        for (const listener of hub.listeners) listener.serve(nowMs)
        yield* Effect.sleep(WATCH_TICK_MS)
      }
    }).pipe(Effect.catchCause((cause) => Effect.logError("listen watcher stopped", Cause.pretty(cause))))
  }

  /**
   * Reads a batch of assets as the internal principal (unbilled, not rate limited): an asset whose `read` data
   * differs from the last read notifies its listeners; each is read again when its `next_update_at` comes.
   */
  private check(batch: ReadonlyArray<[string, Watched]>): Effect.Effect<void, never, PipelineServices> {
    const params: ReadonlyArray<readonly [string, unknown]> =
      batch.length === 1 ? [["id", batch[0]?.[0]]] : [["ids", batch.map(([id]) => id).join(",")]]
    return Effect.map(
      handle({ operation: "read", params, authorization: [], client: "internal", internal: true }),
      (answer) => {
        const nowMs = Date.now()
        const o = answer.outcome
        const read = new Map<string, unknown>()
        if (o._tag === "Json") {
          const body = JSON.parse(o.body) as { readonly data: unknown }
          for (const element of Array.isArray(body.data) ? body.data : [body.data]) {
            const id = (element as { readonly asset_id?: unknown }).asset_id
            if (typeof id === "string") read.set(id, element)
          }
        }
        for (const [assetId, w] of batch) {
          w.checking = false
          const element = read.get(assetId)
          if (element === undefined) {
            // Not readable now (refused, a failing source, an asset that is gone): look again later.
            w.nextCheckMs = nowMs + RECHECK_MAX_MS
            continue
          }
          this.observe(assetId, w, JSON.stringify(element), nowMs)
        }
      }
    )
  }

  private observe(assetId: string, w: Watched, content: string, nowMs: number): void {
    // A digest of the content, not the content: a watched asset costs a few dozen bytes, not its whole answer.
    const digest = createHash("sha256").update(content).digest("base64url").slice(0, 22)
    const changed = w.etag !== undefined && w.etag !== digest
    w.etag = digest
    if (changed) {
      w.backoffMs = RECHECK_FIRST_MS
      for (const listener of w.listeners) {
        const uri = listener.uris.get(assetId)
        if (uri === undefined) continue
        listener.changed(uri)
      }
    }
    const next = nextUpdateOf(content)
    if (next !== undefined && next > nowMs) {
      // `next_update_at` is the earliest time the inputs can be new, but the content can move before it: a `read`
      // whose `next_update_at` is its next bar close carries the bar being formed, and an instance that does not
      // lead ingestion serves the leader's new data when it re-reads the store (every minute), not on the data's
      // schedule. So no asset goes unread longer than `watchMaxIntervalMs`: one internal read per subscribed asset
      // per period at most (ten to a read), none added where the data's own schedule is sooner.
      w.nextCheckMs = Math.min(next, nowMs + LISTEN_LIMITS.watchMaxIntervalMs)
      w.backoffMs = RECHECK_FIRST_MS
    } else {
      // Due (or no schedule): the new data may not have landed yet; read again soon, then less often.
      w.nextCheckMs = nowMs + w.backoffMs
      w.backoffMs = Math.min(RECHECK_MAX_MS, w.backoffMs * 2)
    }
  }
}

const nextUpdateOf = (body: string): number | undefined => {
  const m = /"next_update_at":"([^"]+)"/.exec(body)
  if (m === null) return undefined
  const t = Date.parse(m[1] as string)
  return Number.isFinite(t) ? t : undefined
}

const hubs = new WeakMap<object, Hub>()

const hubOf = (context: Context.Context<PipelineServices>): Hub => {
  const handlers = Context.get(context, Handlers)
  let hub = hubs.get(handlers)
  if (hub === undefined) {
    hub = new Hub(context)
    hubs.set(handlers, hub)
  }
  return hub
}

/**
 * Ends every listen stream of the service gracefully, as the revision asks of a server that stops: the listen
 * request's successful response (`resultType: "complete"`, the subscription id), then the end of the stream.
 */
export const closeListenStreams: Effect.Effect<void, never, PipelineServices> = Effect.map(
  Effect.context<PipelineServices>(),
  (context) => {
    for (const listener of hubOf(context).listeners) {
      listener.close(
        success(listener.subscriptionId, {
          resultType: "complete",
          _meta: { [MetaKey.subscriptionId]: listener.subscriptionId }
        })
      )
    }
  }
)

/** The listen streams of the service the effect runs in: how many are open, and the notifications sent so far. */
export const listenStats: Effect.Effect<
  { readonly streams: number; readonly assets: number; readonly notificationsSent: number },
  never,
  PipelineServices
> = Effect.map(Effect.context<PipelineServices>(), (context) => {
  const hub = hubOf(context)
  return { streams: hub.listeners.size, assets: hub.assets.size, notificationsSent: hub.notificationsSent }
})

/** What the listen request knows of its POST. */
export interface ListenContext {
  readonly authorization: ReadonlyArray<string>
  readonly client: string
  readonly forwardedFor: ReadonlyArray<string>
  readonly headers: Record<string, string>
}

/** A refusal of a listen request: the HTTP status and the JSON-RPC error. */
export interface ListenRefusal {
  readonly _tag: "Refused"
  readonly status: number
  readonly response: RpcResponse
  readonly retryAfter?: number
}

/** Answers `subscriptions/listen`: the SSE stream, or a refusal. */
export const listen = (
  id: RequestId,
  params: Params,
  context: ListenContext
): Effect.Effect<
  ListenRefusal | { readonly _tag: "Stream"; readonly response: WireResponse },
  never,
  PipelineServices
> =>
  Effect.gen(function* () {
    const invalid = (message: string, data?: unknown): ListenRefusal => ({
      _tag: "Refused",
      status: 200,
      response: failure(id, RpcCode.InvalidParams, `Invalid params: ${message}`, data)
    })
    const filter = params.notifications
    if (!isPlainObject(filter)) return invalid("`notifications` must be an object (the notification filter)")
    const requested = filter.resourceSubscriptions
    if (requested !== undefined && !(Array.isArray(requested) && requested.every((u) => typeof u === "string"))) {
      return invalid("`resourceSubscriptions` must be an array of resource URIs")
    }
    const uris = [...new Set((requested ?? []) as ReadonlyArray<string>)]
    if (uris.length > LISTEN_LIMITS.resourcesPerStream) {
      return invalid(
        `a listen stream subscribes to at most ${LISTEN_LIMITS.resourcesPerStream} resources; got ${uris.length}`,
        { limit: LISTEN_LIMITS.resourcesPerStream }
      )
    }
    const assets = new Map<string, string>()
    for (const uri of uris) {
      const assetId = assetIdOf(uri)
      if (assetId !== undefined && !isCanonicalAssetId(assetId)) {
        return invalid(
          `not a canonical asset ID in ${JSON.stringify(uri.slice(0, 200))} (crypto:<slug> or eq:<cik>:<ticker>)`,
          {
            uri
          }
        )
      }
      if (assetId === undefined) {
        return invalid(
          `only asset resources (${ASSET_URI_PREFIX}{asset_id}) can be subscribed to; got ${JSON.stringify(uri.slice(0, 200))}`,
          {
            uri
          }
        )
      }
      assets.set(assetId, uri)
    }
    // The listen request is one request: its key is checked and it spends one rate unit, as `tools/list` does.
    const admitted = yield* admitKeyless({
      authorization: context.authorization,
      client: context.client,
      forwardedFor: context.forwardedFor
    })
    const refusal = (error: ReturnType<typeof apiError>): ListenRefusal => ({
      _tag: "Refused",
      status: ErrorCatalog[error.code].status,
      response: failure(id, RpcCode.ServerError, error.message, error.toBody()),
      ...(error.retryAfterSeconds === undefined ? {} : { retryAfter: error.retryAfterSeconds })
    })
    if (admitted.refusal !== undefined) return refusal(admitted.refusal)
    if (admitted.keyId === undefined && assets.size > 0) {
      return refusal(
        apiError(
          "unauthenticated",
          "subscribing to an asset resource needs an API key: send `Authorization: Bearer <API_KEY>` (see docs section access)"
        )
      )
    }
    const services = yield* Effect.context<PipelineServices>()
    const hub = hubOf(services)
    const owner = admitted.keyId === undefined ? `ip:${context.client}` : `key:${admitted.keyId}`
    const cap = admitted.keyId === undefined ? LISTEN_LIMITS.keylessStreamsPerAddress : LISTEN_LIMITS.streamsPerKey
    if (hub.openStreams(owner) >= cap) {
      return {
        _tag: "Refused",
        status: 429,
        response: failure(
          id,
          RpcCode.ServerError,
          `Listen stream limit: ${admitted.keyId === undefined ? "this address" : "this key"} has ${cap} open listen streams, the most allowed; close one first`,
          { reason: "listen_stream_limit", limit: cap, retryable: true }
        ),
        retryAfter: 1
      }
    }
    const presented = parseAuthorization(context.authorization)
    const acknowledged = assets.size > 0 ? { resourceSubscriptions: [...assets.values()] } : {}
    const ack = event({
      jsonrpc: "2.0",
      method: "notifications/subscriptions/acknowledged",
      params: { _meta: { [MetaKey.subscriptionId]: id }, notifications: acknowledged }
    })
    const listener = new Listener({
      subscriptionId: id,
      uris: assets,
      presentedKey: typeof presented === "string" ? presented : undefined,
      owner,
      ack,
      nowMs: Date.now(),
      onNotified: () => {
        hub.notificationsSent++
      }
    })
    // Registered when the response starts streaming; removed however it ends (the reader gone, the key revoked).
    const body: WireStream = {
      _tag: "Stream",
      open: () => hub.add(listener, Date.now()),
      next: () => listener.pull(),
      close: () => hub.remove(listener)
    }
    return {
      _tag: "Stream",
      response: {
        status: 200,
        headers: {
          "content-type": "text/event-stream",
          ...context.headers,
          "cache-control": "no-store",
          "x-accel-buffering": "no"
        },
        body
      }
    }
  })
