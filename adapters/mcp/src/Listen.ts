/**
 * Push at 2026-07-28: `subscriptions/listen` answered with a long-lived SSE stream that starts with
 * `notifications/subscriptions/acknowledged` and carries `notifications/resources/updated` (the URI only, free)
 * for each subscribed asset resource (`service://read/<id>`) whose data changed, and, for a stream that asked
 * (`resourcesListChanged`), `notifications/resources/list_changed` when the number of assets served changes (a
 * listing added); reading a resource is the paid read.
 *
 * What "changed" means comes from the data through the pipeline, not from a store's internals: one watcher per
 * service reads each subscribed asset with the internal principal (unbilled, not rate limited; ten assets to a
 * `read` batch) when its `next_update_at` comes, and a different `read` result for the asset (a digest of its
 * content) is a change. An asset is watched once, however many streams subscribe to it. Because it reads what
 * the planes serve, it works for every plane and store; on an instance that does not lead ingestion it sees what
 * the leader ingested once that instance serves it (test/mcp-listen-instances.test.ts). An asset whose data is
 * due but has not moved yet is read again after 250 ms, then less often (up to 5 s). Besides, each asset is
 * looked at every `LISTEN_LIMITS.watchMaxIntervalMs` (15 s), at a point of that period fixed by its ID so the
 * looks are spread evenly: it is read then only if the store's revision for it (`AssetSignals.revisionOf`) moved
 * since its last read, or its plane keeps none; an idle asset costs a number compared every 15 s.
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
  AssetSignals,
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
  universeCheckMs: number
} = { ...MCP_LISTEN_LIMITS }

/** How soon a due asset whose data has not moved yet is read again, and the most it waits between such reads. */
const RECHECK_FIRST_MS = 250
const RECHECK_MAX_MS = 5_000
/** Internal reads of the watcher at once, and the assets per read (the `read` batch's most). */
const WATCH_CONCURRENCY = 4
const READ_BATCH = 10
/** The watcher's tick: due times are filed in buckets this wide, so a tick touches only what is due. */
const WATCH_TICK_MS = 50
/** The longest between two passes over the streams (keep-alives, key re-checks) when their periods are longer. */
const HOUSEKEEPING_MAX_MS = 1_000

const encoder = new TextEncoder()
const event = (message: unknown): Uint8Array => encoder.encode(`data: ${JSON.stringify(message)}\n\n`)
const KEEP_ALIVE = encoder.encode(": keep-alive\n\n")

/**
 * What the watchers of this process have done since it started (every service in it together): assets read
 * (each asset of a batched read counts), looks at an asset that its unchanged revision answered without a read,
 * and notifications handed to readers. For the bench and tests.
 */
export const listenTotals = { assetsRead: 0, reads: 0, floorLooks: 0, floorSkipped: 0, notificationsSent: 0 }

/** 30 bits from an asset ID (FNV-1a): where in the floor period its looks fall. */
const phaseOf = (assetId: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < assetId.length; i++) h = Math.imul(h ^ assetId.charCodeAt(i), 0x01000193)
  return h >>> 2
}

/**
 * Times of the watch state are kept in ticks counted from the process's start, small integers (V8 stores them in
 * the object itself; a millisecond timestamp would be a separate number object per field).
 */
const EPOCH_MS = Date.now()
const tickAt = (ms: number): number => Math.ceil((ms - EPOCH_MS) / WATCH_TICK_MS)
const tickNow = (nowMs: number): number => Math.floor((nowMs - EPOCH_MS) / WATCH_TICK_MS)

/** A flat copy of a string: a slice of a larger one (a URI, a header) keeps all of it alive. */
const flat = (s: string): string => JSON.parse(JSON.stringify(s)) as string

/**
 * One watched asset, shared by every stream subscribed to it: it is read once for all of them. Small integers,
 * the ID, and its stream (or streams: most assets have one).
 */
class Watched {
  readonly assetId: string
  listeners: Listener | Array<Listener> | undefined = undefined
  /** 48 bits of the digest of the asset's `read` data as last read, in two halves (-1 before the first read). */
  digestHigh = -1
  digestLow = -1
  /** The asset's revision (`AssetSignals`) taken before the last read; undefined where its plane has none. */
  revision: number | undefined = undefined
  /** The tick the data is due to be read at (its `next_update_at`, or again while new data is late). */
  dataDue: number
  /** The tick of its next look anyway (the `watchMaxIntervalMs` floor): read then only if its revision moved. */
  floorDue: number
  /** The tick it is filed under in the hub's wheel (the earlier of the two); filed again, the old filing is void. */
  tick = 0
  backoffMs = RECHECK_FIRST_MS
  checking = false
  /** Where in the floor period the looks at this asset fall: spread evenly over the period by ID, not in bursts. */
  readonly phase: number

  constructor(assetId: string, nowMs: number) {
    this.assetId = flat(assetId)
    this.phase = phaseOf(assetId)
    this.dataDue = tickAt(nowMs)
    this.floorDue = this.dataDue
  }

  /** The tick of the floor's next look after `nowMs`: the next instant of the asset's phase, within one period. */
  nextFloor(nowMs: number): number {
    const period = LISTEN_LIMITS.watchMaxIntervalMs
    const at = nowMs - (nowMs % period) + Math.floor((this.phase / 0x4000_0000) * period)
    return tickAt(at > nowMs ? at : at + period)
  }

  addListener(listener: Listener): void {
    const l = this.listeners
    if (l === undefined) this.listeners = listener
    else if (Array.isArray(l)) l.push(listener)
    else this.listeners = [l, listener]
  }

  /** Removes a stream; whether any is left. */
  removeListener(listener: Listener): boolean {
    const l = this.listeners
    if (l === listener) this.listeners = undefined
    else if (Array.isArray(l)) {
      const i = l.indexOf(listener)
      if (i >= 0) {
        l[i] = l[l.length - 1] as Listener
        l.pop()
      }
      if (l.length === 1) this.listeners = l[0]
    }
    return this.listeners !== undefined
  }
}

/**
 * One open listen stream. Its body is pulled by the transport as the socket drains (`pull`): nothing is produced
 * ahead of the reader, so a slow reader holds at most one pending entry per subscribed URI.
 */
class Listener {
  readonly hub: Hub
  readonly subscriptionId: RequestId
  /** The subscribed asset IDs until the stream is registered, then none (the entries say them). */
  private assetIds: ReadonlyArray<string> | undefined
  /** The subscribed assets (the hub's shared entries), in the order acknowledged; set when registered. */
  watched: ReadonlyArray<Watched> = []
  readonly presentedKey: string | undefined
  readonly owner: string
  /** Asked for `resourcesListChanged`, and whether such a notification is pending. */
  readonly wantsListChanged: boolean
  listChangedPending = false
  /** Subscribed assets with a change not yet sent, each at most once (the coalescing); made on the first change. */
  private pending: Array<Watched> | undefined
  /** The reader waiting for the next message, if any. */
  private waiting: ((chunk: Uint8Array | undefined) => void) | undefined
  private acked = false
  private final: RpcResponse | undefined
  private ended = false
  /** When the last message left (for the keep-alive). */
  private lastSentMs: number
  nextKeyCheckMs: number

  constructor(
    hub: Hub,
    subscriptionId: RequestId,
    assetIds: ReadonlyArray<string>,
    wantsListChanged: boolean,
    presentedKey: string | undefined,
    owner: string,
    nowMs: number
  ) {
    this.hub = hub
    this.subscriptionId = subscriptionId
    this.assetIds = assetIds
    this.wantsListChanged = wantsListChanged
    this.presentedKey = presentedKey === undefined ? undefined : flat(presentedKey)
    this.owner = owner
    this.lastSentMs = nowMs
    this.nextKeyCheckMs = nowMs + LISTEN_LIMITS.keyRecheckMs
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
      chunk = this.acknowledgement()
    } else if (this.ended) {
      chunk = undefined
    } else if (this.final !== undefined) {
      this.ended = true
      chunk = event(this.final)
    } else if (this.listChangedPending) {
      this.listChangedPending = false
      this.hub.notificationsSent++
      listenTotals.notificationsSent++
      chunk = event({
        jsonrpc: "2.0",
        method: "notifications/resources/list_changed",
        params: { _meta: { [MetaKey.subscriptionId]: this.subscriptionId } }
      })
    } else if (this.pending !== undefined && this.pending.length > 0) {
      const w = this.pending.shift() as Watched
      this.hub.notificationsSent++
      listenTotals.notificationsSent++
      chunk = event({
        jsonrpc: "2.0",
        method: "notifications/resources/updated",
        params: { _meta: { [MetaKey.subscriptionId]: this.subscriptionId }, uri: ASSET_URI_PREFIX + w.assetId }
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

  /** Takes the subscribed asset IDs, once (the hub registering the stream). */
  takeAssetIds(): ReadonlyArray<string> {
    const ids = this.assetIds ?? []
    this.assetIds = undefined
    return ids
  }

  /** The first message: what of the filter is honoured. Made when sent, not kept for the stream's life. */
  private acknowledgement(): Uint8Array {
    // An asset resource's URI is the prefix and the asset ID (`assetIdOf`), so it is not stored beside the ID.
    const ids = this.assetIds ?? this.watched.map((w) => w.assetId)
    const notifications = {
      ...(this.wantsListChanged ? { resourcesListChanged: true } : {}),
      ...(ids.length > 0 ? { resourceSubscriptions: ids.map((id) => ASSET_URI_PREFIX + id) } : {})
    }
    return event({
      jsonrpc: "2.0",
      method: "notifications/subscriptions/acknowledged",
      params: { _meta: { [MetaKey.subscriptionId]: this.subscriptionId }, notifications }
    })
  }

  /** Marks a subscribed asset changed. */
  changed(w: Watched, nowMs: number): void {
    if (this.pending === undefined) this.pending = [w]
    else if (!this.pending.includes(w)) this.pending.push(w)
    this.serve(nowMs)
  }

  /** Marks the list of resources changed. */
  listChanged(nowMs: number): void {
    this.listChangedPending = true
    this.serve(nowMs)
  }

  /** Ends the stream with a final JSON-RPC response (the refusal of a revoked key, or the graceful end). */
  close(final: RpcResponse): void {
    this.final ??= final
    this.serve(Date.now())
  }
}

/**
 * The listen streams and the watched assets of one service (one per pipeline `Handlers`). One watcher serves
 * them all: a loop that wakes every `WATCH_TICK_MS`, takes the assets filed under the ticks that passed (a
 * wheel of due times, so a tick costs what is due, not what is watched), reads those whose data is due, and looks
 * at the revision of those whose floor came, reading only where it moved.
 */
class Hub {
  readonly assets = new Map<string, Watched>()
  readonly listeners = new Set<Listener>()
  readonly streamsByOwner = new Map<string, number>()
  /** Due assets by tick (`tickAt`); an entry filed again since is skipped where it was. */
  private readonly wheel = new Map<number, Array<Watched>>()
  private lastTick = 0
  private running = false
  private nextHousekeepingMs = 0
  /** Streams that asked for `resourcesListChanged`, the universe's size they were told of, and the next look. */
  private listChangedStreams = 0
  universeSize: number | undefined
  private nextUniverseCheckMs = 0
  /** Change notifications handed to the streams' readers (for the bench and tests). */
  notificationsSent = 0

  private readonly context: Context.Context<PipelineServices>
  readonly signals: AssetSignals["Service"] | undefined
  constructor(context: Context.Context<PipelineServices>) {
    this.context = context
    // Provided beside the handlers by `layerHandlers`; a service composed without it has no revisions to offer.
    this.signals = Context.getOrUndefined(context, AssetSignals)
  }

  /** Registers a stream (when its response starts): its assets' shared entries, a new one read at once. */
  add(listener: Listener, nowMs: number): void {
    this.listeners.add(listener)
    this.streamsByOwner.set(listener.owner, (this.streamsByOwner.get(listener.owner) ?? 0) + 1)
    if (listener.wantsListChanged) this.listChangedStreams++
    const ids = listener.takeAssetIds()
    const watched = new Array<Watched>(ids.length)
    let i = 0
    for (const assetId of ids) {
      let w = this.assets.get(assetId)
      if (w === undefined) {
        w = new Watched(assetId, nowMs)
        this.assets.set(w.assetId, w)
        this.file(w, w.dataDue)
      }
      w.addListener(listener)
      watched[i++] = w
    }
    listener.watched = watched
    this.start()
  }

  remove(listener: Listener): void {
    if (!this.listeners.delete(listener)) return
    const n = (this.streamsByOwner.get(listener.owner) ?? 1) - 1
    if (n <= 0) this.streamsByOwner.delete(listener.owner)
    else this.streamsByOwner.set(listener.owner, n)
    if (listener.wantsListChanged && --this.listChangedStreams === 0) this.universeSize = undefined
    for (const w of listener.watched) {
      if (!w.removeListener(listener) && this.assets.get(w.assetId) === w) this.assets.delete(w.assetId)
    }
  }

  openStreams(owner: string): number {
    return this.streamsByOwner.get(owner) ?? 0
  }

  /** Files `w` to be looked at at tick `due` (no earlier than the next tick). */
  private file(w: Watched, due: number): void {
    const tick = Math.max(this.lastTick + 1, due)
    w.tick = tick
    const bucket = this.wheel.get(tick)
    if (bucket === undefined) this.wheel.set(tick, [w])
    else bucket.push(w)
  }

  private start(): void {
    if (this.running) return
    this.running = true
    this.lastTick = tickNow(Date.now()) - 1
    Effect.runForkWith(this.context)(
      this.loop.pipe(
        Effect.ensuring(
          Effect.sync(() => {
            this.running = false
            if (this.listeners.size > 0) this.start()
            else this.wheel.clear()
          })
        )
      )
    )
  }

  /** The assets whose time came by `nowMs`: due for a read, or at a floor look whose revision moved. */
  private takeDue(nowMs: number): Array<Watched> {
    const due: Array<Watched> = []
    const nowTick = tickNow(nowMs)
    for (let tick = this.lastTick + 1; tick <= nowTick; tick++) {
      const bucket = this.wheel.get(tick)
      if (bucket === undefined) continue
      this.wheel.delete(tick)
      for (const w of bucket) {
        // Filed again under another tick since, being read, or gone (no stream left).
        if (w.tick !== tick || w.checking || this.assets.get(w.assetId) !== w) continue
        if (nowTick < w.dataDue) {
          // The floor: a read only where the revision moved since the last one (or the plane keeps none).
          listenTotals.floorLooks++
          const revision = this.signals?.revisionOf(w.assetId)
          if (revision !== undefined && revision === w.revision) {
            listenTotals.floorSkipped++
            w.floorDue = w.nextFloor(nowMs)
            this.refile(w)
            continue
          }
        }
        w.checking = true
        due.push(w)
      }
    }
    this.lastTick = Math.max(this.lastTick, nowTick)
    return due
  }

  /** Files `w` for the earlier of its read and its floor look (both after now, so under a later tick). */
  private refile(w: Watched): void {
    this.file(w, Math.min(w.dataDue, w.floorDue))
  }

  /** Runs while any stream is open: reads the due assets, and checks the streams' keys again. */
  private get loop(): Effect.Effect<void, never, PipelineServices> {
    const hub = this
    return Effect.gen(function* () {
      while (hub.listeners.size > 0) {
        const nowMs = Date.now()
        const due = hub.takeDue(nowMs)
        if (due.length > 0) {
          // Read in batches of up to READ_BATCH assets: one pass through the pipeline for ten assets.
          const batches: Array<Array<Watched>> = []
          for (let i = 0; i < due.length; i += READ_BATCH) batches.push(due.slice(i, i + READ_BATCH))
          yield* Effect.forEach(batches, (batch) => hub.check(batch), { concurrency: WATCH_CONCURRENCY, discard: true })
        }
        if (nowMs >= hub.nextHousekeepingMs) {
          hub.nextHousekeepingMs =
            nowMs + Math.min(HOUSEKEEPING_MAX_MS, LISTEN_LIMITS.keepAliveMs, LISTEN_LIMITS.keyRecheckMs)
          yield* hub.housekeeping(nowMs)
        }
        yield* Effect.sleep(WATCH_TICK_MS)
      }
    }).pipe(Effect.catchCause((cause) => Effect.logError("listen watcher stopped", Cause.pretty(cause))))
  }

  /** Keys checked again, keep-alives, and the universe's size looked at for the streams that asked. */
  private housekeeping(nowMs: number): Effect.Effect<void, never, PipelineServices> {
    const hub = this
    return Effect.gen(function* () {
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
      if (hub.listChangedStreams > 0 && hub.signals !== undefined && nowMs >= hub.nextUniverseCheckMs) {
        hub.nextUniverseCheckMs = nowMs + LISTEN_LIMITS.universeCheckMs
        const size = yield* hub.signals.universeSize
        if (hub.universeSize !== undefined && size !== hub.universeSize) {
          for (const listener of hub.listeners) if (listener.wantsListChanged) listener.listChanged(nowMs)
        }
        hub.universeSize = size
      }
      // Keep-alive comments for the streams quiet for `keepAliveMs` (one pass for all, not a timer per stream).
      for (const listener of hub.listeners) listener.serve(nowMs)
    })
  }

  /**
   * Reads a batch of assets as the internal principal (unbilled, not rate limited): an asset whose `read` data
   * differs from the last read notifies its listeners; each is read again when its `next_update_at` comes.
   */
  private check(batch: ReadonlyArray<Watched>): Effect.Effect<void, never, PipelineServices> {
    const signals = this.signals
    // The revisions before the read: a write during it moves them again, and the next floor look reads.
    for (const w of batch) w.revision = signals?.revisionOf(w.assetId)
    listenTotals.reads++
    listenTotals.assetsRead += batch.length
    const params: ReadonlyArray<readonly [string, unknown]> =
      batch.length === 1 ? [["id", batch[0]?.assetId]] : [["ids", batch.map((w) => w.assetId).join(",")]]
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
        for (const w of batch) {
          w.checking = false
          const element = read.get(w.assetId)
          if (element === undefined) {
            // Not readable now (refused, a failing source, an asset that is gone): look again later.
            w.revision = undefined
            w.dataDue = tickAt(nowMs + RECHECK_MAX_MS)
            w.floorDue = w.nextFloor(nowMs)
          } else {
            this.observe(w, JSON.stringify(element), nowMs)
          }
          if (this.assets.get(w.assetId) === w) this.refile(w)
        }
      }
    )
  }

  private observe(w: Watched, content: string, nowMs: number): void {
    // 48 bits of a digest of the content, not the content: a watched asset costs a few numbers, not its answer.
    const digest = createHash("sha256").update(content).digest()
    const high = digest.readUIntBE(0, 3)
    const low = digest.readUIntBE(3, 3)
    const changed = w.digestHigh !== -1 && (w.digestHigh !== high || w.digestLow !== low)
    w.digestHigh = high
    w.digestLow = low
    if (changed) {
      w.backoffMs = RECHECK_FIRST_MS
      const l = w.listeners
      if (Array.isArray(l)) for (const listener of l) listener.changed(w, nowMs)
      else l?.changed(w, nowMs)
    }
    const next = nextUpdateOf(content)
    if (next !== undefined && next > nowMs) {
      // `next_update_at` is the earliest time the inputs can be new, but the content can move before it: a `read`
      // whose `next_update_at` is its next bar close carries the bar being formed, and an instance that does not
      // lead ingestion serves the leader's new data when it re-reads the store (every minute), not on the data's
      // schedule. So each asset is also looked at every `watchMaxIntervalMs` (its floor), and read then if the
      // store's revision for it moved (or its plane keeps none).
      w.dataDue = tickAt(next)
      w.backoffMs = RECHECK_FIRST_MS
    } else {
      // Due (or no schedule): the new data may not have landed yet; read again soon, then less often.
      w.dataDue = tickAt(nowMs + w.backoffMs)
      w.backoffMs = Math.min(RECHECK_MAX_MS, w.backoffMs * 2)
    }
    w.floorDue = w.nextFloor(nowMs)
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
    const wantsListChanged = filter.resourcesListChanged
    if (wantsListChanged !== undefined && typeof wantsListChanged !== "boolean") {
      return invalid("`resourcesListChanged` must be a boolean")
    }
    const uris = [...new Set((requested ?? []) as ReadonlyArray<string>)]
    if (uris.length > LISTEN_LIMITS.resourcesPerStream) {
      return invalid(
        `a listen stream subscribes to at most ${LISTEN_LIMITS.resourcesPerStream} resources; got ${uris.length}`,
        { limit: LISTEN_LIMITS.resourcesPerStream }
      )
    }
    const assets: Array<string> = []
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
      assets.push(assetId)
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
    if (admitted.keyId === undefined && assets.length > 0) {
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
    // `resourcesListChanged` is honoured where the service can count its assets (it has planes).
    const listChanged = wantsListChanged === true && hub.signals !== undefined
    if (listChanged && hub.universeSize === undefined) hub.universeSize = yield* hub.signals.universeSize
    const listener = new Listener(
      hub,
      id,
      assets,
      listChanged,
      typeof presented === "string" ? presented : undefined,
      owner,
      Date.now()
    )
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
