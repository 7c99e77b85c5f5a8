/**
 * One venue's market streams, over the shared connection manager: the venue's topics (its protocol's market
 * topics and each listed perpetual's topics) spread over as many connections as its limits ask, each connection
 * kept alive for weeks, and every frame applied to the process's `QuoteBoard` in canonical units.
 *
 * Connections (one "slot" per connection's worth of topics, grouped by endpoint):
 * - connect at most `connectsPerSecond` (venue-wide), subscribe in messages of `topicsPerMessage` topics, sending
 *   at most `messagesPerSecond` messages a second; every request must be answered within `timeoutMs` (a refusal
 *   names the topics refused: their symbols are served from REST and retried after `REFUSED_RETRY_MS`);
 * - the client's keep-alive every `pingEveryMs`, and any frame counts as life: silence past `silenceMs` is a dead
 *   (half-open) link, closed and replaced;
 * - reconnect with exponential backoff (`backoffBaseMs`, 1 s, doubling to `backoffCapMs`, 8 s: a venue back from
 *   an outage is streamed again within seconds) and jitter (each delay drawn between half and all of it), so slots
 *   that fell together do not return together, and never faster than `connectsPerSecond` venue-wide; the counter
 *   restarts once a connection has been up for a minute;
 * - where the venue closes connections at a fixed age (Binance: 24 h), a second connection is opened and
 *   subscribed `rotateBeforeMs` (with jitter) before that age, and the old one closed only once the new one is
 *   subscribed: both feed the board meanwhile (it keeps the newer event), so the rotation leaves no gap;
 * - the symbol set is followed every `followEveryMs`: a new listing's topics are subscribed on a slot with room
 *   (or a new slot), a delisting's unsubscribed and its streamed state forgotten; no restart.
 *
 * Health (`QuoteBoard.setHealth`, read by `sources` and every answer's freshness): up while every slot is up; its
 * newest time is the newest venue event time applied. The
 * symbols of a slot that is down, of a refused topic, or not mentioned for `symbolSilenceMs` are marked silent:
 * answers serve them from the REST books job, which polls exactly those (`CryptoFeed`'s `streamed`).
 *
 * Frames are read synchronously as they arrive (one `JSON.parse`, a few map updates); a frame that is not the
 * documented format, or larger than `MAX_FRAME_CHARS`, is skipped whole and counted in the status detail.
 *
 * The connection manager itself (`runStream`) knows nothing of what the frames carry: a `StreamTarget` takes them
 * and the stream's state. `runMarketStream` is it over the `QuoteBoard` (every instance's market streams); the
 * leader's liquidation streams (`Liquidation.ts`) are it over the store's liquidation buckets.
 */
import { BAR_MS, type QuoteBoard } from "@market-data/core"
import { Clock, Effect } from "effect"
import { Malformed } from "../Parse.ts"
import type { Instrument } from "../Venue.ts"
import type {
  FrameKind,
  MarketStreamProtocol,
  StreamLimits,
  StreamReader,
  VenueBar,
  VenueSink,
  VenueTickerFields
} from "./Protocol.ts"

/** A frame larger than this is skipped (the largest documented frames, all-market arrays, are about 150 KB). */
export const MAX_FRAME_CHARS = 4_000_000
/** A refused topic is asked again after this long. */
export const REFUSED_RETRY_MS = 10 * 60_000
/** An event more than this far from the service clock is not a live event: its frame is skipped. */
const EVENT_PAST_LIMIT_MS = 24 * 3_600_000
const EVENT_FUTURE_LIMIT_MS = 10 * 60_000
/** The manager's clock tick: sends, timeouts, rotation, health. */
const TICK_MS = 100
/** Request ids start here (a protocol may use lower ones for its own keep-alive). */
const FIRST_REQUEST_ID = 100

export interface MarketStreamOptions {
  readonly baseUrl: string
  /**
   * The websocket URL of a topic's endpoint, where it is not `protocol.url(baseUrl, topic)` (an endpoint configured
   * apart); undefined for a topic whose endpoint is turned off (the topic is not streamed).
   */
  readonly url?: ((topic: string) => string | undefined) | undefined
  /** The venue's perpetuals now, by venue symbol (read at start and every `followEveryMs`). */
  readonly instruments: () => ReadonlyMap<string, Instrument>
  /** Connect and request-answer timeout (ms). */
  readonly timeoutMs: number
  readonly followEveryMs?: number
  readonly backoffBaseMs?: number
  readonly backoffCapMs?: number
  /** How long before the venue's connection age limit a connection is replaced (default 30 min). */
  readonly rotateBeforeMs?: number
  /** Overrides of the protocol's limits (tests: short lifetimes and silences). */
  readonly limits?: Partial<StreamLimits>
  /** A refused topic is asked again after this long (default `REFUSED_RETRY_MS`). */
  readonly refusedRetryMs?: number
  /** The service clock (default Effect's `Clock`, so `TestClock` drives the manager). */
  readonly now?: () => number
  readonly random?: () => number
}

/** What the stream counts, for metrics and tests. */
export interface MarketStreamStats {
  frames: number
  malformed: number
  connects: number
  rotations: number
  gaps: number
  lastMalformed: string
}

interface Request {
  readonly id: number
  readonly topics: ReadonlyArray<string>
  readonly op: "subscribe" | "unsubscribe"
  readonly sentMs: number
  /** Topics not yet acknowledged (venues that acknowledge topic by topic). */
  readonly waiting: Set<string>
}

interface Conn {
  readonly ws: WebSocket
  readonly reader: StreamReader
  readonly openedMs: number
  open: boolean
  closed: { readonly code: number; readonly reason: string } | undefined
  lastFrameMs: number
  lastPingMs: number
  /** Topics subscribed (sent; acknowledged unless in a pending request). */
  readonly subscribed: Set<string>
  readonly pending: Map<number, Request>
  /** Send times within the last second (the venue's message rate). */
  sends: Array<number>
  readonly outbox: Array<{ readonly text: string; readonly request?: Request }>
}

interface Slot {
  readonly endpoint: string
  readonly topics: Set<string>
  conn: Conn | undefined
  /** The replacement opened before the venue's age limit. */
  next: Conn | undefined
  rotateAtMs: number
  attempt: number
  retryAtMs: number
  upSinceMs: number | undefined
  downSinceMs: number
  reason: string | undefined
}

/** What a target's sink may ask of the manager while a frame is read. */
export interface SinkContext {
  /**
   * The followed instrument of a venue symbol (undefined: not followed, its data is ignored); throws `Malformed`
   * when `t` is not a live event time (the frame is then skipped whole).
   */
  readonly instrument: (symbol: string, t: number) => Instrument | undefined
  /** Records that a symbol's data was applied (its silence clock, and the stream's newest event time). */
  readonly seen: (symbol: string, t: number) => void
}

/** The stream's state as a target publishes it (every 200 ms, and once more when the stream stops). */
export interface StreamState {
  /** The service time of this state. */
  readonly nowMs: number
  /** Every connection up and subscribed. */
  readonly up: boolean
  /** The stream was stopped (interrupted): nothing is ingested any more. */
  readonly stopped: boolean
  /** The newest venue event time applied, and the last frame's arrival (service clock). */
  readonly newestMs: number
  readonly lastFrameMs: number
  /** Why the stream is not up (the first connection down). */
  readonly reason: string | undefined
  readonly connections: number
  readonly topics: number
  /** Topics the venue refused (retried after `refusedRetryMs`), with its message. */
  readonly refused: ReadonlyArray<{ readonly topic: string; readonly message: string }>
  /** The instruments the stream follows now (by venue symbol). */
  readonly instruments: ReadonlyMap<string, Instrument>
  /**
   * The instruments the stream does not serve now: their first topic's connection is down, or the topic is refused
   * or not yet acknowledged (for a protocol with market topics only: a market topic's), or they were not mentioned
   * for `symbolSilenceMs`.
   */
  readonly silent: ReadonlyArray<Instrument>
}

/** Where a stream's frames and state go. */
export interface StreamTarget {
  /** The sink a connection's frames are read into. */
  readonly sink: (context: SinkContext) => VenueSink
  /** A delisted instrument: its streamed state is dropped. */
  readonly forget: (instrument: Instrument) => void
  readonly publish: (state: StreamState) => void
}

/**
 * Runs a venue's market streams into `board` forever (until interrupted); never fails: every problem is in the
 * venue's stream health. Returns the stats object it keeps current.
 */
export const runMarketStream = (
  protocol: MarketStreamProtocol,
  options: MarketStreamOptions,
  board: QuoteBoard,
  stats: MarketStreamStats = emptyStats()
): Effect.Effect<void> => runStream(protocol, options, boardTarget(protocol, board, stats), stats)

export const emptyStats = (): MarketStreamStats => ({
  frames: 0,
  malformed: 0,
  connects: 0,
  rotations: 0,
  gaps: 0,
  lastMalformed: ""
})

/**
 * Runs a venue's streams of `protocol` into `target` forever (until interrupted): the shared connection manager.
 * Never fails: every problem is in the state it publishes.
 */
export const runStream = (
  protocol: MarketStreamProtocol,
  options: MarketStreamOptions,
  target: StreamTarget,
  stats: MarketStreamStats = emptyStats()
): Effect.Effect<void> =>
  Clock.clockWith((clock) =>
    runWith(protocol, options, target, stats, options.now ?? (() => clock.currentTimeMillisUnsafe()))
  )

/** The market streams' target: quotes, bars and tickers into the board in canonical units, health and silence. */
const boardTarget = (protocol: MarketStreamProtocol, board: QuoteBoard, stats: MarketStreamStats): StreamTarget => {
  const venue = protocol.venue
  return {
    sink: ({ instrument, seen }) => ({
      quote: (symbol, t, bid, bidSize, ask, askSize) => {
        const i = instrument(symbol, t)
        if (i === undefined) return
        if (!(bid > 0 && ask >= bid && bidSize >= 0 && askSize >= 0)) throw new Malformed(`${symbol}: not a quote`)
        const size = i.tokensPerUnit * i.tokensPerContract
        board.applyQuote(i.assetId, venue, {
          t,
          bid: bid / i.tokensPerUnit,
          bidSize: bidSize * size,
          ask: ask / i.tokensPerUnit,
          askSize: askSize * size
        })
        seen(symbol, t)
      },
      bar: (symbol, t, b: VenueBar) => {
        const i = instrument(symbol, t)
        if (i === undefined) return
        const u = i.tokensPerUnit
        if (!(b.low > 0 && b.high >= b.low && b.volume >= 0) || b.openMs % BAR_MS !== 0)
          throw new Malformed(`${symbol}: not a 15-minute bar`)
        const takerBuyUsd = b.takerBuyQuote
        board.applyBar(i.assetId, venue, {
          t: b.openMs,
          eventMs: t,
          open: b.open / u,
          high: b.high / u,
          low: b.low / u,
          close: b.close / u,
          volume: b.volume * u * i.tokensPerContract,
          ...(b.closed === true ? { closed: true } : {}),
          ...(takerBuyUsd === undefined || b.quoteVolume === undefined
            ? {}
            : { takerBuyUsd, takerSellUsd: Math.max(0, b.quoteVolume - takerBuyUsd) })
        })
        seen(symbol, t)
      },
      ticker: (symbol, t, f: VenueTickerFields) => {
        const i = instrument(symbol, t)
        if (i === undefined) return
        const mark = f.mark === undefined ? undefined : f.mark / i.tokensPerUnit
        const markNow = mark ?? board.ticker(i.assetId, venue)?.mark
        const oiUsd =
          f.oiUsd ??
          (f.oiQuantity === undefined || markNow === undefined
            ? undefined
            : f.oiQuantity * i.tokensPerUnit * i.tokensPerContract * markNow)
        board.applyTicker(i.assetId, venue, {
          t,
          mark,
          index: f.index === undefined ? undefined : f.index / i.tokensPerUnit,
          fundingRate: f.fundingRate,
          predictedRate: f.predictedRate,
          nextFundingMs: f.nextFundingMs,
          intervalMs: f.intervalMs ?? i.fundingIntervalMs,
          oiUsd
        })
        seen(symbol, t)
      }
    }),
    forget: (i) => board.forget(i.assetId, venue),
    publish: (s) => {
      const before = board.health(venue)
      if (s.stopped) {
        if (before !== undefined)
          board.setHealth(venue, { ...before, up: false, sinceMs: s.nowMs, reason: "stream stopped (not ingesting)" })
        return
      }
      board.setSilent(venue, new Set(s.silent.map((i) => i.assetId)), s.nowMs)
      const parts = [`streamed over ${s.connections} connections (${s.topics} topics): ${protocol.describe}`]
      if (s.refused.length > 0)
        parts.push(
          `refused: ${s.refused
            .slice(0, 10)
            .map((r) => `${r.topic} (${r.message})`)
            .join(", ")}`
        )
      if (s.silent.length > 0)
        parts.push(
          `served from REST (silent, refused or connection down): ${s.silent
            .slice(0, 20)
            .map((i) => i.symbol)
            .join(", ")}${s.silent.length > 20 ? ` and ${s.silent.length - 20} more` : ""}`
        )
      if (stats.malformed > 0) parts.push(`${stats.malformed} malformed frames skipped (last: ${stats.lastMalformed})`)
      board.setHealth(venue, {
        components: protocol.components,
        up: s.up,
        newestMs: s.newestMs,
        lastFrameMs: s.lastFrameMs,
        sinceMs: before !== undefined && before.up === s.up ? before.sinceMs : s.nowMs,
        reason: s.up ? undefined : s.reason,
        detail: parts.join("; ")
      })
    }
  }
}

const runWith = (
  protocol: MarketStreamProtocol,
  options: MarketStreamOptions,
  target: StreamTarget,
  stats: MarketStreamStats,
  now: () => number
): Effect.Effect<void> => {
  const venue = protocol.venue
  const limits: StreamLimits = { ...protocol.limits, ...options.limits }
  const random = options.random ?? Math.random
  /** Connection events (connected, down, rotated), logged by the loop. */
  const logs: Array<readonly ["info" | "warning", string]> = []
  const log = (level: "info" | "warning", line: string) => {
    if (logs.length < 100) logs.push([level, line])
  }
  const followEveryMs = options.followEveryMs ?? 10_000
  const backoffBaseMs = options.backoffBaseMs ?? 1_000
  const backoffCapMs = options.backoffCapMs ?? 8_000
  const rotateBeforeMs = options.rotateBeforeMs ?? 30 * 60_000
  const refusedRetryMs = options.refusedRetryMs ?? REFUSED_RETRY_MS

  let instruments = options.instruments()
  const slots: Array<Slot> = []
  const slotOf = new Map<string, Slot>()
  const refused = new Map<string, { readonly message: string; readonly atMs: number }>()
  const lastSeen = new Map<string, number>()
  let newestMs = 0
  /** When the frame being read arrived: one clock read a frame serves its checks and its symbols' last-seen times. */
  let receivedMs = 0
  let nextRequestId = FIRST_REQUEST_ID
  let nextConnectMs = 0
  let startedMs = now()

  const sink: VenueSink = target.sink({
    instrument: (symbol, t) => {
      const i = instruments.get(symbol)
      if (i !== undefined) live(t)
      return i
    },
    seen: (symbol, t) => seen(symbol, t)
  })
  const live = (t: number) => {
    const n = receivedMs
    if (!(t >= n - EVENT_PAST_LIMIT_MS && t <= n + EVENT_FUTURE_LIMIT_MS))
      throw new Malformed(`event time ${Number.isFinite(t) ? new Date(t).toISOString() : String(t)} is not live`)
  }
  const seen = (symbol: string, t: number) => {
    lastSeen.set(symbol, receivedMs)
    if (t > newestMs) newestMs = t
  }

  /** A topic's endpoint (undefined: its endpoint is off). */
  const endpointOf = (topic: string): string | undefined =>
    options.url === undefined ? protocol.url(options.baseUrl, topic) : options.url(topic)

  /** The topics wanted now: the market topics and every listed symbol's (those whose endpoint is on). */
  const wanted = (): Set<string> => {
    const out = new Set<string>()
    for (const t of protocol.marketTopics) if (endpointOf(t) !== undefined) out.add(t)
    for (const [symbol, instrument] of instruments)
      for (const t of protocol.symbolTopics(symbol, instrument))
        if (options.url === undefined || endpointOf(t) !== undefined) out.add(t)
    return out
  }

  const place = (topic: string) => {
    const endpoint = endpointOf(topic) as string
    let slot = slots.find((s) => s.endpoint === endpoint && s.topics.size < limits.topicsPerConnection)
    if (slot === undefined) {
      slot = {
        endpoint,
        topics: new Set(),
        conn: undefined,
        next: undefined,
        rotateAtMs: Number.POSITIVE_INFINITY,
        attempt: 0,
        retryAtMs: 0,
        upSinceMs: undefined,
        downSinceMs: now(),
        reason: "connecting"
      }
      slots.push(slot)
    }
    slot.topics.add(topic)
    slotOf.set(topic, slot)
  }

  /** Takes the symbol set as it is now: new topics placed, gone ones dropped (and their state forgotten). */
  const follow = () => {
    const next = options.instruments()
    if (next === instruments && slotOf.size > 0) return
    const before = instruments
    instruments = next
    const want = wanted()
    let added = 0
    let removed = 0
    for (const topic of want) {
      if (!slotOf.has(topic)) {
        place(topic)
        added++
      }
    }
    for (const [topic, slot] of slotOf) {
      if (want.has(topic)) continue
      slot.topics.delete(topic)
      slotOf.delete(topic)
      refused.delete(topic)
      removed++
    }
    for (const [symbol, i] of before) {
      if (!instruments.has(symbol)) {
        target.forget(i)
        lastSeen.delete(symbol)
      }
    }
    for (let k = slots.length - 1; k >= 0; k--) {
      const s = slots[k] as Slot
      if (s.topics.size === 0) {
        closeConn(s.conn, "no topics left")
        closeConn(s.next, "no topics left")
        slots.splice(k, 1)
      }
    }
    if (added + removed > 0 && before.size > 0)
      log("info", `live ${venue} streams: ${added} topics added, ${removed} removed (${slotOf.size} topics)`)
  }

  const closeConn = (c: Conn | undefined, _why: string) => {
    if (c === undefined) return
    c.ws.onopen = null
    c.ws.onmessage = null
    c.ws.onerror = null
    c.ws.onclose = null
    try {
      c.ws.close()
    } catch {
      // Already closing.
    }
  }

  const openConn = (slot: Slot): Conn | undefined => {
    let ws: WebSocket
    try {
      ws = new WebSocket(slot.endpoint)
    } catch (e) {
      slot.reason = `cannot open a websocket: ${String(e)}`
      return undefined
    }
    ws.binaryType = "arraybuffer"
    stats.connects++
    const c: Conn = {
      ws,
      reader: protocol.reader(),
      openedMs: now(),
      open: false,
      closed: undefined,
      lastFrameMs: now(),
      lastPingMs: now(),
      subscribed: new Set(),
      pending: new Map(),
      sends: [],
      outbox: []
    }
    ws.onopen = () => {
      c.open = true
      c.lastFrameMs = now()
    }
    ws.onclose = (ev) => {
      c.closed = { code: ev.code, reason: ev.reason }
    }
    ws.onerror = () => undefined
    ws.onmessage = (ev) => onFrame(c, ev.data)
    return c
  }

  const textOf = (data: unknown): string =>
    typeof data === "string"
      ? data
      : data instanceof ArrayBuffer
        ? Buffer.from(data).toString("utf8")
        : ArrayBuffer.isView(data)
          ? Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("utf8")
          : String(data)

  const onFrame = (c: Conn, data: unknown) => {
    receivedMs = now()
    c.lastFrameMs = receivedMs
    stats.frames++
    let frame: FrameKind
    try {
      const text = textOf(data)
      if (text.length > MAX_FRAME_CHARS) throw new Malformed(`a frame of ${text.length} characters`)
      frame = c.reader.read(text, sink)
    } catch (e) {
      stats.malformed++
      stats.lastMalformed = (e instanceof Error ? e.message : String(e)).slice(0, 120)
      return
    }
    switch (frame.kind) {
      case "ack":
        acknowledge(c, frame.id, frame.topics, undefined)
        return
      case "refused":
        acknowledge(c, frame.id, frame.topics, frame.message)
        return
      case "gap": {
        stats.gaps++
        // Resubscribe the topic: its next snapshot repairs the state.
        c.reader.reset?.(frame.topic)
        c.subscribed.delete(frame.topic)
        request(c, "unsubscribe", [frame.topic])
        return
      }
      default:
        return
    }
  }

  /** Settles what a (n)ack answers: a request by id, or topics one by one. */
  const acknowledge = (
    c: Conn,
    id: string | undefined,
    topics: ReadonlyArray<string> | undefined,
    refusal: string | undefined
  ) => {
    const settle = (r: Request, which: ReadonlyArray<string>) => {
      for (const t of which) {
        r.waiting.delete(t)
        if (refusal !== undefined && r.op === "subscribe") {
          c.subscribed.delete(t)
          refused.set(t, { message: refusal, atMs: now() })
        }
      }
      if (r.waiting.size === 0) c.pending.delete(r.id)
    }
    if (id !== undefined) {
      const r = c.pending.get(Number(id))
      if (r === undefined) return
      // A batch refused whole (one unknown symbol refuses a Binance SUBSCRIBE): each topic is asked alone.
      if (refusal !== undefined && topics === undefined && r.op === "subscribe" && r.topics.length > 1) {
        c.pending.delete(r.id)
        for (const t of r.topics) request(c, "subscribe", [t])
        return
      }
      settle(r, topics ?? [...r.waiting])
      return
    }
    if (topics === undefined) {
      // A refusal naming neither request nor topic (Hyperliquid's per-IP caps, some OKX errors): the oldest pending
      // subscription is the one answered (venues answer in order), refused whole rather than waited on until the
      // connection times out and the same refusal repeats after every reconnect.
      if (refusal === undefined) return
      const oldest = [...c.pending.values()].find((r) => r.op === "subscribe")
      if (oldest !== undefined) settle(oldest, [...oldest.waiting])
      return
    }
    for (const r of [...c.pending.values()])
      settle(
        r,
        topics.filter((t) => r.waiting.has(t))
      )
  }

  const request = (c: Conn, op: "subscribe" | "unsubscribe", topics: ReadonlyArray<string>) => {
    for (let k = 0; k < topics.length; k += limits.topicsPerMessage) {
      const batch = topics.slice(k, k + limits.topicsPerMessage)
      const id = nextRequestId++
      const r: Request = { id, topics: batch, op, sentMs: Number.POSITIVE_INFINITY, waiting: new Set(batch) }
      if (op === "subscribe") for (const t of batch) c.subscribed.add(t)
      c.outbox.push({
        text: op === "subscribe" ? protocol.subscribe(batch, id) : protocol.unsubscribe(batch, id),
        request: r
      })
    }
  }

  /** Sends what the rate allows; returns false when the link broke. */
  const flush = (c: Conn, nowMs: number) => {
    c.sends = c.sends.filter((t) => t > nowMs - 1_000)
    while (c.outbox.length > 0 && c.sends.length < limits.messagesPerSecond) {
      const m = c.outbox.shift() as (typeof c.outbox)[number]
      try {
        c.ws.send(m.text)
      } catch {
        return false
      }
      c.sends.push(nowMs)
      if (m.request !== undefined) c.pending.set(m.request.id, { ...m.request, sentMs: nowMs })
    }
    return true
  }

  /** Brings a connection's subscriptions to its slot's topics (refused ones wait for their retry). */
  const sync = (slot: Slot, c: Conn, nowMs: number) => {
    const add: Array<string> = []
    for (const t of slot.topics) {
      if (c.subscribed.has(t)) continue
      const r = refused.get(t)
      if (r !== undefined && nowMs < r.atMs + refusedRetryMs) continue
      refused.delete(t)
      add.push(t)
    }
    const drop = [...c.subscribed].filter((t) => !slot.topics.has(t))
    for (const t of drop) c.subscribed.delete(t)
    if (add.length > 0) request(c, "subscribe", add)
    if (drop.length > 0) request(c, "unsubscribe", drop)
  }

  /** Why a connection is dead now, or undefined while it lives. */
  const deathOf = (c: Conn, nowMs: number): string | undefined => {
    if (c.closed !== undefined)
      return `connection ${c.open ? "closed" : "failed"} (code ${c.closed.code}${c.closed.reason === "" ? "" : `: ${c.closed.reason}`})`
    if (!c.open)
      return nowMs - c.openedMs > options.timeoutMs ? `no connection within ${options.timeoutMs} ms` : undefined
    if (nowMs - c.lastFrameMs > limits.silenceMs) return `no frame for ${limits.silenceMs} ms (half-open link)`
    for (const r of c.pending.values())
      if (nowMs - r.sentMs > options.timeoutMs) return `no answer to a ${r.op} request within ${options.timeoutMs} ms`
    return undefined
  }

  const isUp = (c: Conn | undefined): boolean =>
    c?.open === true && c.closed === undefined && ![...c.pending.values()].some((r) => r.op === "subscribe")

  /** One connection's step: keep-alive, sends, and whether it died. */
  const step = (slot: Slot, c: Conn, nowMs: number): string | undefined => {
    const death = deathOf(c, nowMs)
    if (death !== undefined) return death
    if (!c.open) return undefined
    sync(slot, c, nowMs)
    if (protocol.ping !== undefined && nowMs - c.lastPingMs >= limits.pingEveryMs) {
      c.outbox.push({ text: protocol.ping })
      c.lastPingMs = nowMs
    }
    if (!flush(c, nowMs)) return "send failed"
    return undefined
  }

  const down = (slot: Slot, reason: string, nowMs: number) => {
    closeConn(slot.conn, reason)
    closeConn(slot.next, reason)
    const wasUp = slot.upSinceMs !== undefined
    if (wasUp && nowMs - (slot.upSinceMs as number) >= 60_000) slot.attempt = 0
    const delay = Math.min(backoffCapMs, backoffBaseMs * 2 ** slot.attempt) * (0.5 + 0.5 * random())
    slot.attempt = Math.min(slot.attempt + 1, 20)
    slot.retryAtMs = nowMs + delay
    slot.conn = undefined
    slot.next = undefined
    if (wasUp || slot.reason === "connecting") slot.downSinceMs = nowMs
    slot.upSinceMs = undefined
    slot.reason = reason
    log("warning", `live ${venue} streams: ${slot.endpoint} down: ${reason}; reconnecting in ${Math.round(delay)} ms`)
  }

  const rotationAt = (openedMs: number): number =>
    limits.maxLifetimeMs === undefined
      ? Number.POSITIVE_INFINITY
      : openedMs + limits.maxLifetimeMs - rotateBeforeMs * (0.5 + 0.5 * random())

  const waitingToConnect = () => slots.some((s) => s.conn === undefined)

  const tick = () => {
    const nowMs = now()
    for (const slot of slots) {
      if (slot.conn === undefined) {
        if (nowMs < slot.retryAtMs || nowMs < nextConnectMs) continue
        nextConnectMs = nowMs + 1_000 / limits.connectsPerSecond
        slot.conn = openConn(slot)
        if (slot.conn === undefined) {
          down(slot, slot.reason ?? "cannot connect", nowMs)
          continue
        }
        slot.rotateAtMs = rotationAt(slot.conn.openedMs)
        continue
      }
      const death = step(slot, slot.conn, nowMs)
      if (death !== undefined) {
        // A replacement already subscribed takes over at once.
        if (slot.next !== undefined && isUp(slot.next)) {
          closeConn(slot.conn, death)
          slot.conn = slot.next
          slot.next = undefined
          slot.rotateAtMs = rotationAt(slot.conn.openedMs)
          continue
        }
        down(slot, death, nowMs)
        continue
      }
      if (isUp(slot.conn) && slot.upSinceMs === undefined) {
        slot.upSinceMs = nowMs
        slot.reason = undefined
        log("info", `live ${venue} streams: ${slot.endpoint} subscribed (${slot.topics.size} topics)`)
      }
      // The venue's age limit: a replacement, subscribed before the old one goes (after any slot still waiting to
      // connect: a rotation never takes the connect pace from a slot that has no connection).
      if (slot.next === undefined && nowMs >= slot.rotateAtMs && nowMs >= nextConnectMs && !waitingToConnect()) {
        nextConnectMs = nowMs + 1_000 / limits.connectsPerSecond
        slot.next = openConn(slot)
      }
      if (slot.next !== undefined) {
        const nextDeath = step(slot, slot.next, nowMs)
        if (nextDeath !== undefined) {
          closeConn(slot.next, nextDeath)
          slot.next = undefined
          slot.rotateAtMs = nowMs + 60_000
        } else if (isUp(slot.next) && slot.next.subscribed.size >= slot.topics.size) {
          closeConn(slot.conn, "rotated")
          slot.conn = slot.next
          slot.next = undefined
          slot.rotateAtMs = rotationAt(slot.conn.openedMs)
          stats.rotations++
          log("info", `live ${venue} streams: ${slot.endpoint} rotated before the venue's age limit`)
        }
      }
    }
  }

  let lastHealthMs = 0
  /**
   * Each followed symbol's serving topics (its first topic, or the market topics for a protocol without symbol
   * topics), built when the followed set changes: `publish` runs every 200 ms over every symbol and would otherwise
   * build the same arrays and strings each time.
   */
  type Serving = { readonly instrument: Instrument; readonly topics: ReadonlyArray<string> }
  let servingOf: ReadonlyMap<string, Serving> = new Map()
  let servingFor: ReadonlyMap<string, Instrument> | undefined
  const servingTopics = (): ReadonlyMap<string, Serving> => {
    if (servingFor === instruments) return servingOf
    const out = new Map<string, Serving>()
    for (const [symbol, instrument] of instruments) {
      const own = protocol.symbolTopics(symbol, instrument)
      out.set(symbol, { instrument, topics: own.length > 0 ? own.slice(0, 1) : protocol.marketTopics })
    }
    servingOf = out
    servingFor = instruments
    return out
  }
  const publish = () => {
    const nowMs = now()
    let upSlots = 0
    let lastFrameMs = 0
    let downSlot: Slot | undefined
    let anyPending = false
    for (const s of slots) {
      if (s.upSinceMs !== undefined) upSlots++
      else downSlot ??= s
      if (s.conn !== undefined) {
        if (s.conn.lastFrameMs > lastFrameMs) lastFrameMs = s.conn.lastFrameMs
        if (s.conn.pending.size > 0) anyPending = true
      }
    }
    // Up while every connection is: the status is the venue's, so a symbol on a connection still reconnecting must
    // not be answered `live` from its older REST book meanwhile.
    const up = slots.length > 0 && upSlots === slots.length
    // Topics not yet asked for on their serving connection, or asked and not answered yet (a new listing's): not
    // served yet.
    let pendingTopics: Set<string> | undefined
    if (anyPending) {
      pendingTopics = new Set<string>()
      for (const s of slots)
        for (const r of s.conn?.pending.values() ?? [])
          if (r.op === "subscribe") for (const t of r.waiting) pendingTopics.add(t)
    }
    // The symbol's first topic carries its top of book: its book is served from REST when that topic's connection
    // is down or the venue refused it (a refused kline topic leaves the book streamed). A protocol with market
    // topics only (an all-market liquidation stream) serves every symbol through them.
    const silent: Array<Instrument> = []
    for (const [symbol, { instrument, topics }] of servingTopics()) {
      let down = false
      let since = startedMs
      for (const t of topics) {
        const slot = slotOf.get(t)
        const upSince = slot?.upSinceMs
        if (
          upSince === undefined ||
          refused.has(t) ||
          pendingTopics?.has(t) === true ||
          slot?.conn?.subscribed.has(t) !== true
        )
          down = true
        since = Math.max(since, upSince ?? nowMs)
      }
      if (!down && !(nowMs - (lastSeen.get(symbol) ?? since) > limits.symbolSilenceMs)) continue
      silent.push(instrument)
    }
    target.publish({
      nowMs,
      up,
      stopped: false,
      newestMs,
      lastFrameMs,
      reason: up ? undefined : (downSlot?.reason ?? (slots.length === 0 ? "no topics" : "connecting")),
      connections: slots.length,
      topics: slotOf.size,
      refused: refused.size === 0 ? [] : [...refused].map(([topic, r]) => ({ topic, message: r.message })),
      instruments,
      silent
    })
    lastHealthMs = nowMs
  }

  return Effect.gen(function* () {
    startedMs = now()
    follow()
    publish()
    let lastFollowMs = now()
    while (true) {
      tick()
      const nowMs = now()
      if (nowMs - lastFollowMs >= followEveryMs) {
        follow()
        lastFollowMs = nowMs
      }
      if (nowMs - lastHealthMs >= 200) publish()
      for (const [level, line] of logs.splice(0)) {
        if (level === "info") yield* Effect.logInfo(line)
        else yield* Effect.logWarning(line)
      }
      yield* Effect.sleep(TICK_MS)
    }
  }).pipe(
    Effect.ensuring(
      Effect.sync(() => {
        for (const s of slots) {
          closeConn(s.conn, "stopped")
          closeConn(s.next, "stopped")
        }
        target.publish({
          nowMs: now(),
          up: false,
          stopped: true,
          newestMs,
          lastFrameMs: Math.max(0, ...slots.map((s) => s.conn?.lastFrameMs ?? 0)),
          reason: "stream stopped (not ingesting)",
          connections: slots.length,
          topics: slotOf.size,
          refused: [],
          instruments,
          silent: [...instruments.values()]
        })
      })
    ),
    Effect.withSpan(`live.${venue}.streams`)
  )
}
