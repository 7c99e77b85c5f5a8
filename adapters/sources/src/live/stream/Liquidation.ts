/**
 * Live liquidations over websockets, run by the leader over the shared connection manager (`MarketStream.ts`'s
 * `runStream`: connections, subscriptions in batches, keep-alive, silence, reconnect with backoff and jitter,
 * rotation, following listings, refused topics); each venue's protocol is in its folder
 * (`venues/<venue>/Liquidations.ts`):
 * - Binance USD-M: the all-market `!forceOrder@arr` on the routed `/market` endpoint (one topic for every symbol);
 * - Bybit v5 linear: `allLiquidation.<symbol>` per perpetual (subscribed in batches; a batch the venue refuses is
 *   asked again topic by topic, so a symbol it no longer lists is refused alone);
 * - OKX v5: the all-market `liquidation-orders` channel of `SWAP` on `/ws/v5/public`, beside the REST poll of
 *   `/api/v5/public/liquidation-orders` (`venues/okx/Rest.ts`), which stays as backfill and fallback.
 * Hyperliquid publishes no market-wide liquidations (neither REST nor websocket; `venues/hyperliquid/Rest.ts`).
 *
 * Symbols: the venue's perpetuals of the crypto universe (live mode: the asset directory's), with their contract
 * sizes from the venue's instrument list (`LiveFeeds.ts`, `followInstruments`), followed without a restart: a new
 * listing is counted from then on (Bybit: its topic subscribed on a connection with room).
 *
 * Counting: a print's USD is price x quantity x the instrument's base tokens per contract (Binance `ap x z`, Bybit
 * `p x v`, OKX `bkPx x sz x ctVal`: a product that is USD whatever unit the symbol counts in, `1000PEPEUSDT`
 * included). A frame is counted whole or not at all (a bad print, or an event time more than 24 h past or 10 min
 * ahead, skips the frame). Events are summed per asset, side and one-minute bucket (`LIQUIDATION_BUCKET_MS`) into
 * the store's liquidation rows (`t` = the bucket's start), written every `flushEveryMs`:
 * - `add` (Binance, Bybit: the stream is the only writer): a bucket is written whole, what this process counted plus
 *   what the store held for it when this process first wrote it, so writing it again never counts an event twice,
 *   and a bucket a previous leader began keeps its part;
 * - `max` (OKX: the REST poll writes the same one-minute buckets from its own list): each side is written as the
 *   larger of what this process counted and what the store holds now. Both are sums over a part of the minute's
 *   liquidations (OKX says neither path carries them all), so the larger is the better floor, and no event is
 *   counted twice whichever path saw it.
 * While a symbol is served (its topic's connection up and not refused), its asset also gets a row at each
 * 15-minute boundary (zero when nothing happened), so "no liquidations" is an answer, not missing data.
 *
 * Health (`Health.ts`, component `liquidations`, cadence 5 min): up -> success with data up to now, renewed every
 * `heartbeatEveryMs` (a connected stream with no events is live), naming refused symbols and malformed frames in
 * `detail`; a connection down (dropped, silent past the protocol's silence limit, a request unanswered, a connect
 * timeout) or every topic refused -> failing with the typed reason (freshness `stale` at once) while the manager
 * reconnects. OKX's stream, which has the REST poll beside it, records successes only: while it is down the REST
 * poll's outcome is the status (and its rows the data).
 */
import { type AnySeriesInput, BAR_MS, MarketStore } from "@market-data/core"
import { Clock, Effect } from "effect"
import { componentCadenceMs } from "../CryptoFeed.ts"
import { type ComponentRef, recordFailure, recordSuccess, sourceErrorText } from "../Health.ts"
import { SourceError } from "../Http.ts"
import { Malformed, num } from "../Parse.ts"
import type { Instrument } from "../Venue.ts"
import {
  emptyStats,
  type MarketStreamOptions,
  type MarketStreamStats,
  runStream,
  type StreamState,
  type StreamTarget
} from "./MarketStream.ts"
import type { MarketStreamProtocol, VenueLiquidation } from "./Protocol.ts"

/** The venues whose liquidations come over a websocket. */
export const StreamVenues = ["binance", "bybit", "okx"] as const
export type StreamVenue = (typeof StreamVenues)[number]

/** Events are summed per asset, side and bucket of this length. */
export const LIQUIDATION_BUCKET_MS = 60_000
/** A refused liquidation topic is asked again after this long (a refused all-market topic is the whole stream). */
export const LIQUIDATION_REFUSED_RETRY_MS = 5 * 60_000

/** A venue's liquidation stream protocol: a stream protocol whose reader calls the sink's `liquidations`. */
export interface LiquidationProtocol extends MarketStreamProtocol {
  readonly venue: StreamVenue
  /**
   * How a bucket meets what the store holds: `add` where the stream is the only writer, `max` where the venue's
   * REST poll writes the same buckets (then a stream that is down leaves the status to that poll).
   */
  readonly merge: "add" | "max"
  /**
   * Whether a print's quantity is in contracts whose size only the venue's instrument list gives (OKX): the stream
   * then waits for that list; otherwise (quantities in the symbol's own units) it starts from the universe's
   * listings while the list is not there yet.
   */
  readonly needsContractSizes: boolean
}

export interface LiquidationStreamOptions {
  readonly baseUrl: string
  /** The followed perpetuals now, by venue symbol (read at start and every `followEveryMs`). */
  readonly instruments: () => ReadonlyMap<string, Instrument>
  /** Connect and subscription-answer timeout (ms). */
  readonly timeoutMs: number
  /** How often counted events are written (ms); default 2 s. */
  readonly flushEveryMs?: number
  /** How often a live stream renews its status (ms); default 1 min. */
  readonly heartbeatEveryMs?: number
  /** The manager's options (reconnect backoff, limits, refusal retry, how often symbols are followed). */
  readonly stream?: Partial<Omit<MarketStreamOptions, "baseUrl" | "instruments" | "timeoutMs">>
  /** The counters the manager keeps (frames, malformed, connects), for tests and metrics. */
  readonly stats?: MarketStreamStats
}

/** The side and amount checks every protocol's reader applies. */
export const side = (value: string, long: string, short: string, path: string): "long" | "short" => {
  if (value === long) return "long"
  if (value === short) return "short"
  throw new Malformed(`${path}: not ${long} or ${short} (${JSON.stringify(value).slice(0, 20)})`)
}

export const nonNegative = (value: unknown, path: string): number => {
  const n = num(value, path)
  if (n < 0) throw new Malformed(`${path}: negative`)
  return n
}

interface Bucket {
  readonly assetId: string
  readonly t: number
  longUsd: number
  shortUsd: number
  /** `add`: what the store held for this bucket when this process first wrote it (read once). */
  base: { readonly longUsd: number; readonly shortUsd: number } | undefined
  dirty: boolean
}

/** The manager's state as the component's status says it: undefined while it first connects. */
const outcomeOf = (
  state: StreamState,
  protocol: LiquidationProtocol,
  endpoint: string
): { readonly ok: true } | { readonly ok: false; readonly error: string } | undefined => {
  if (state.topics > 0 && state.refused.length >= state.topics) {
    const first = state.refused[0] as StreamState["refused"][number]
    return {
      ok: false,
      error: sourceErrorText(
        new SourceError({
          source: protocol.venue,
          kind: "status",
          what: "subscribe",
          message: `subscription refused: ${first.message}`
        })
      )
    }
  }
  if (state.up) return { ok: true }
  const reason = state.reason ?? "connecting"
  // Still connecting, or nothing to stream yet (no symbol followed): nothing to say.
  if (reason === "connecting" || state.connections === 0) return undefined
  const timeout = reason.startsWith("no ")
  return {
    ok: false,
    error: sourceErrorText(
      new SourceError({
        source: protocol.venue,
        kind: timeout ? "timeout" : "network",
        what: endpoint,
        message: reason
      })
    )
  }
}

/**
 * Runs one venue's liquidation stream forever (until interrupted): the shared connection manager reads the frames,
 * this counts them into the store and keeps the `liquidations` status. Never fails.
 */
export const runLiquidationStream = (
  protocol: LiquidationProtocol,
  options: LiquidationStreamOptions
): Effect.Effect<void, never, MarketStore> =>
  Effect.gen(function* () {
    const store = yield* MarketStore
    const venue = protocol.venue
    const endpoint = protocol.url(options.baseUrl, protocol.marketTopics[0] ?? "")
    const ref: ComponentRef = { venue, component: "liquidations", cadenceMs: componentCadenceMs(venue, "liquidations") }
    const flushEveryMs = options.flushEveryMs ?? 2_000
    const heartbeatEveryMs = options.heartbeatEveryMs ?? 60_000
    const stats = options.stats ?? emptyStats()

    const buckets = new Map<string, Bucket>()
    /** The newest 15-minute boundary each asset has a row at (so "no liquidations" is on record). */
    const presence = new Map<string, number>()
    let state: StreamState | undefined

    const add = (assetId: string, t: number, longUsd: number, shortUsd: number) => {
      const bt = Math.floor(t / LIQUIDATION_BUCKET_MS) * LIQUIDATION_BUCKET_MS
      const key = `${assetId}|${bt}`
      let b = buckets.get(key)
      if (b === undefined) {
        b = { assetId, t: bt, longUsd: 0, shortUsd: 0, base: undefined, dirty: false }
        buckets.set(key, b)
      }
      b.longUsd += longUsd
      b.shortUsd += shortUsd
      b.dirty = true
    }

    const target: StreamTarget = {
      sink: ({ instrument, seen }) => ({
        // A liquidation protocol's reader sends no quotes or tickers.
        quote: () => undefined,
        ticker: () => undefined,
        liquidations: (prints: ReadonlyArray<VenueLiquidation>) => {
          // Checked whole before any is counted: a frame is counted entirely or not at all.
          const counted: Array<readonly [Instrument, VenueLiquidation, number]> = []
          for (const p of prints) {
            const i = instrument(p.symbol, p.t)
            if (i === undefined) continue
            const usd = p.price * p.quantity * i.tokensPerContract
            if (!(Number.isFinite(usd) && usd >= 0))
              throw new Malformed(`${p.symbol}: amount is not a finite USD value`)
            counted.push([i, p, usd])
          }
          for (const [i, p, usd] of counted) {
            add(i.assetId, p.t, p.side === "long" ? usd : 0, p.side === "short" ? usd : 0)
            seen(p.symbol, p.t)
          }
        }
      }),
      // A delisted symbol's buckets stay (written whole); it gets no more "no liquidations" rows.
      forget: (i) => {
        presence.delete(i.assetId)
      },
      publish: (s) => {
        state = s
      }
    }

    const stored = (b: Bucket) =>
      Effect.map(store.read("liquidations", { assetId: b.assetId, venue, fromMs: b.t, toMs: b.t + 1 }), (series) => {
        const s = series[0]
        return s === undefined || s.t.length === 0
          ? { longUsd: 0, shortUsd: 0 }
          : { longUsd: s.longUsd[0] as number, shortUsd: s.shortUsd[0] as number }
      })

    /** Writes every changed bucket (see the module comment for `add` and `max`), then forgets buckets long closed. */
    const flush = Effect.gen(function* () {
      const dirty = [...buckets.values()].filter((b) => b.dirty)
      if (dirty.length > 0) {
        const rows = new Map<Bucket, { readonly longUsd: number; readonly shortUsd: number }>()
        for (const b of dirty) {
          if (protocol.merge === "max") {
            const now = yield* stored(b)
            rows.set(b, { longUsd: Math.max(now.longUsd, b.longUsd), shortUsd: Math.max(now.shortUsd, b.shortUsd) })
          } else {
            b.base ??= yield* stored(b)
            rows.set(b, { longUsd: b.base.longUsd + b.longUsd, shortUsd: b.base.shortUsd + b.shortUsd })
          }
        }
        const byAsset = new Map<string, Array<Bucket>>()
        for (const b of dirty) byAsset.set(b.assetId, [...(byAsset.get(b.assetId) ?? []), b])
        const batch: Array<AnySeriesInput> = []
        for (const [assetId, list] of byAsset) {
          list.sort((a, b) => a.t - b.t)
          batch.push({
            kind: "liquidations",
            assetId,
            venue,
            t: list.map((b) => b.t),
            longUsd: list.map((b) => rows.get(b)?.longUsd ?? 0),
            shortUsd: list.map((b) => rows.get(b)?.shortUsd ?? 0)
          })
        }
        yield* store.write(batch)
        for (const b of dirty) b.dirty = false
      }
      const nowMs = yield* Clock.currentTimeMillis
      for (const [key, b] of buckets) {
        if (!b.dirty && b.t + LIQUIDATION_BUCKET_MS < nowMs - 10 * 60_000) buckets.delete(key)
      }
    })

    /** Zero rows at the current 15-minute boundary for every served asset without one. */
    const presenceRows = (s: StreamState, nowMs: number) => {
      const silent = new Set(s.silent.map((i) => i.assetId))
      const slot = Math.floor(nowMs / BAR_MS) * BAR_MS
      for (const i of s.instruments.values()) {
        if (silent.has(i.assetId) || (presence.get(i.assetId) ?? 0) >= slot) continue
        add(i.assetId, slot, 0, 0)
        presence.set(i.assetId, slot)
      }
    }

    const detail = (s: StreamState, malformed: number) => {
      const parts: Array<string> = []
      for (const r of s.refused.slice(0, 10))
        parts.push(`not subscribed: ${protocol.symbolOfTopic(r.topic) ?? r.topic} (${r.message})`)
      if (s.refused.length > 10) parts.push(`and ${s.refused.length - 10} more not subscribed`)
      if (malformed > 0) parts.push(`${malformed} malformed messages skipped (last: ${stats.lastMalformed})`)
      return parts.length === 0 ? undefined : parts.join("; ")
    }

    /** Keeps the status: a success on coming up and every heartbeat; a failure when it goes down or its reason changes. */
    const report = Effect.gen(function* () {
      const nowMs = yield* Clock.currentTimeMillis
      if (state === undefined) return
      const outcome = outcomeOf(state, protocol, endpoint)
      if (outcome === undefined) return
      if (outcome.ok) {
        if (reported === "up" && nowMs < nextHeartbeat) return
        if (reported !== "up") yield* Effect.logInfo(`live ${venue} liquidations: stream up (${state.topics} topics)`)
        yield* recordSuccess(store, ref, { newestMs: nowMs, detail: detail(state, stats.malformed - malformedBefore) })
        malformedBefore = stats.malformed
        reported = "up"
        lastError = undefined
        nextHeartbeat = nowMs + heartbeatEveryMs
        return
      }
      if (reported === "down" && lastError === outcome.error) return
      reported = "down"
      lastError = outcome.error
      yield* Effect.logWarning(`live ${venue} liquidations: stream down: ${outcome.error}`)
      // Where the REST poll writes beside the stream, its outcome is the status while the stream is down.
      if (protocol.merge === "add") yield* recordFailure(store, ref, outcome.error)
    })
    let reported: "up" | "down" | undefined
    let lastError: string | undefined
    let nextHeartbeat = 0
    let malformedBefore = stats.malformed

    const loop = Effect.gen(function* () {
      let nextFlush = (yield* Clock.currentTimeMillis) + flushEveryMs
      while (true) {
        yield* Effect.sleep(Math.min(200, flushEveryMs))
        const nowMs = yield* Clock.currentTimeMillis
        yield* report
        if (nowMs >= nextFlush) {
          if (state !== undefined) presenceRows(state, nowMs)
          yield* flush
          nextFlush = nowMs + flushEveryMs
        }
      }
    })

    const stream = runStream(
      protocol,
      {
        baseUrl: options.baseUrl,
        instruments: options.instruments,
        timeoutMs: options.timeoutMs,
        refusedRetryMs: LIQUIDATION_REFUSED_RETRY_MS,
        ...options.stream
      },
      target,
      stats
    )
    yield* Effect.all([stream, loop], { concurrency: "unbounded", discard: true }).pipe(
      Effect.onInterrupt(() => Effect.ignore(flush))
    )
  }).pipe(Effect.withSpan(`live.${protocol.venue}.liquidations`))
