/**
 * Live liquidations over websockets, for the venues that publish them only there: Binance USD-M futures and
 * Bybit v5 (linear). OKX's come over REST (`venues/okx/Rest.ts`); Hyperliquid publishes no market-wide liquidations at all
 * (`venues/hyperliquid/Rest.ts` says why).
 *
 * Protocols (each venue's documented websocket API; Node's global `WebSocket`):
 * - Binance (`wss://fstream.binance.com/market/stream`): `{"method":"SUBSCRIBE","params":["!forceOrder@arr"],"id":1}`,
 *   answered `{"result":null,"id":1}` (an error: `{"error":{"code","msg"},"id":1}` or `{"code","msg","id":1}`).
 *   Events, wrapped `{"stream","data"}` on the combined endpoint: `{"e":"forceOrder","E","o":{"s" symbol,
 *   "S" side, "X" status, "q", "p", "ap" average price, "l", "z" filled quantity, "T" trade time}}`. `S` is
 *   the liquidation order's side: `SELL` closes a long (a long was liquidated), `BUY` a short. USD = `z x ap`
 *   (quantities in the symbol's units, prices per unit: `1000PEPEUSDT` counts and prices 1,000 PEPE, so the
 *   product is USD either way). Only terminal orders (`FILLED`, `EXPIRED` with a fill) count, so an order
 *   printed part-filled and then filled is counted once. Binance pushes at most one liquidation per symbol per
 *   second (the latest), so busy seconds are under-counted: the venue's own limitation. The server sends a ping
 *   frame every 3 minutes, which the WebSocket answers by itself; the client also asks `LIST_SUBSCRIPTIONS`
 *   (id 2) every minute and counts the answer as its keep-alive (a connection that no longer answers is
 *   dropped and reopened). Binance closes every connection after 24 hours: that is a reconnect like any other.
 * - Bybit (`wss://stream.bybit.com/v5/public/linear`): one `{"req_id","op":"subscribe","args":
 *   ["allLiquidation.<symbol>"]}` per covered symbol (so a symbol the venue no longer lists is refused alone),
 *   answered `{"success","ret_msg","conn_id","req_id","op":"subscribe"}`. Events: `{"topic":
 *   "allLiquidation.<symbol>","type":"snapshot","ts","data":[{"T" time,"s" symbol,"S" side,"v" size,"p" price}]}`,
 *   pushed every 500 ms. `S` is the liquidated position's side: `Buy` a long, `Sell` a short. USD = `v x p`
 *   (one linear contract is one coin). Bybit asks for `{"op":"ping"}` every 20 s (answered `{"op":"ping",
 *   "ret_msg":"pong"}`, or `"op":"pong"`); without it the connection is closed.
 *
 * Symbols: the venue's perpetuals of the crypto universe (live mode: the asset directory's, `streamSymbols` in
 * `LiveFeeds.ts`), read at each connect and at every flush. A symbol a listing refresh adds is followed on the
 * open connection: Bybit gets one more `subscribe` request (its answer arrives among the events; a refusal is
 * named in the status detail), Binance's all-market stream needs none; its prints count from then on.
 *
 * Storage: events are summed per asset, side and one-minute bucket (`LIQUIDATION_BUCKET_MS`) into the store's
 * liquidation rows (`t` = the bucket's start). A bucket is written whole: what this process has counted plus
 * what the store held for it when this process first touched it, so writing it again (every flush) replaces
 * the row and never counts an event twice, and a bucket a previous leader began keeps its part. While a stream
 * is up, every covered asset also gets a row at each 15-minute boundary (zero when nothing happened), so "no
 * liquidations" is an answer, not missing data.
 *
 * Health (`Health.ts`, component `liquidations`, cadence 5 min): subscribed -> success with data up to now,
 * renewed every minute while the stream is up (a connected stream with no events is live); a refused
 * subscription (every symbol refused), a dropped connection, a keep-alive without answer or a connect timeout ->
 * failing with the error text (freshness `stale` at once), then a reconnect with exponential backoff (2 s
 * doubling to 5 min, ±20 % jitter; a stream that got subscribed starts again from 2 s). Messages that are not
 * the documented format (malformed or truncated JSON, a field of the wrong type) are skipped whole, never in
 * part; their count and the last one's problem are named in the status `detail`.
 */
import { type AnySeriesInput, BAR_MS, MarketStore } from "@market-data/core"
import { Cause, Clock, Effect, Option, Queue, Random } from "effect"
import { componentCadenceMs } from "./CryptoFeed.ts"
import { type ComponentRef, recordFailure, recordSuccess, sourceErrorText } from "./Health.ts"
import { SourceError } from "./Http.ts"
import { Malformed } from "./Parse.ts"
import type { StreamMessage, StreamProtocol, StreamVenue, SubscriptionRequest } from "./stream/Liquidation.ts"
import { binanceProtocol } from "./venues/binance/Liquidations.ts"
import { bybitProtocol } from "./venues/bybit/Liquidations.ts"

export const BINANCE_WS_DEFAULT_BASE_URL = "wss://fstream.binance.com"
export const BYBIT_WS_DEFAULT_BASE_URL = "wss://stream.bybit.com"

export { type StreamVenue, StreamVenues } from "./stream/Liquidation.ts"

/** Events are summed per asset, side and bucket of this length. */
export const LIQUIDATION_BUCKET_MS = 60_000
/** An event more than this far from the service clock is not a live event: its message is rejected. */
const EVENT_AGE_LIMIT_MS = 24 * 3_600_000
const EVENT_FUTURE_LIMIT_MS = 10 * 60_000

export type {
  LiquidationPrint,
  StreamMessage,
  StreamProtocol,
  SubscriptionRequest
} from "./stream/Liquidation.ts"
export { binanceProtocol } from "./venues/binance/Liquidations.ts"
export { bybitProtocol } from "./venues/bybit/Liquidations.ts"
export const streamProtocol = (venue: StreamVenue): StreamProtocol =>
  venue === "binance" ? binanceProtocol : bybitProtocol

export interface LiquidationStreamOptions {
  readonly baseUrl: string
  /**
   * The covered instruments: venue symbol -> canonical asset; or a function answering them now (live mode's
   * asset directory), read at each connect and at every flush: a symbol it adds is subscribed on the open
   * connection (Bybit: one request per symbol; Binance's all-market stream needs none) and counted at once.
   */
  readonly symbols: ReadonlyMap<string, string> | (() => ReadonlyMap<string, string>)
  /** Connect and subscription-answer timeout (ms). */
  readonly timeoutMs: number
  /** How often counted events are written (ms); default 2 s. */
  readonly flushEveryMs?: number
  /** How often a live stream renews its status (ms); default 1 min. */
  readonly heartbeatEveryMs?: number
  /** The keep-alive period (ms); default the venue's. */
  readonly pingEveryMs?: number
  /** How long a keep-alive may go unanswered (ms); default 10 s. */
  readonly pongTimeoutMs?: number
  /** First reconnect delay (ms); default 2 s, doubling. */
  readonly backoffBaseMs?: number
  /** Longest reconnect delay (ms); default 5 min. */
  readonly backoffCapMs?: number
}

/** What arrives from the socket. */
type Inbound =
  | { readonly _tag: "open" }
  | { readonly _tag: "message"; readonly text: string }
  | { readonly _tag: "error" }
  | { readonly _tag: "closed"; readonly code: number; readonly reason: string }

interface Bucket {
  readonly assetId: string
  readonly t: number
  longUsd: number
  shortUsd: number
  /** What the store held for this bucket when this process first wrote it (read once). */
  base: { readonly longUsd: number; readonly shortUsd: number } | undefined
  dirty: boolean
}

const textOf = (data: unknown): string => {
  if (typeof data === "string") return data
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString("utf8")
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("utf8")
  return String(data)
}

/**
 * Runs one venue's liquidation stream forever (until interrupted): connect, subscribe, count, keep alive,
 * reconnect. Never fails; every problem is in the component's status.
 */
export const runLiquidationStream = (
  protocol: StreamProtocol,
  options: LiquidationStreamOptions
): Effect.Effect<void, never, MarketStore> =>
  Effect.gen(function* () {
    const store = yield* MarketStore
    const venue = protocol.venue
    const url = protocol.url(options.baseUrl)
    const ref: ComponentRef = {
      venue,
      component: "liquidations",
      cadenceMs: componentCadenceMs(venue, "liquidations")
    }
    const flushEveryMs = options.flushEveryMs ?? 2_000
    const heartbeatEveryMs = options.heartbeatEveryMs ?? 60_000
    const pingEveryMs = options.pingEveryMs ?? protocol.ping.everyMs
    const pongTimeoutMs = options.pongTimeoutMs ?? 10_000
    const backoffBaseMs = options.backoffBaseMs ?? 2_000
    const backoffCapMs = options.backoffCapMs ?? 5 * 60_000
    const symbolsNow = (): ReadonlyMap<string, string> =>
      typeof options.symbols === "function" ? options.symbols() : options.symbols
    /** The instruments counted now (the map of the last connect or refresh). */
    let mapping = symbolsNow()

    const buckets = new Map<string, Bucket>()
    /** The newest 15-minute boundary each asset has a row at (so "no liquidations" is on record). */
    const presence = new Map<string, number>()
    let malformed = 0
    let lastMalformed = ""
    let refusedText: Array<string> = []

    const fail = (kind: SourceError["kind"], what: string, message: string) =>
      new SourceError({ source: venue, kind, what, message })

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

    /** Writes every changed bucket whole (stored part + counted part), then forgets buckets long closed. */
    const flush = Effect.gen(function* () {
      const dirty = [...buckets.values()].filter((b) => b.dirty)
      if (dirty.length > 0) {
        for (const b of dirty) {
          if (b.base === undefined) {
            const stored = yield* store.read("liquidations", {
              assetId: b.assetId,
              venue,
              fromMs: b.t,
              toMs: b.t + 1
            })
            const s = stored[0]
            b.base =
              s === undefined || s.t.length === 0
                ? { longUsd: 0, shortUsd: 0 }
                : { longUsd: s.longUsd[0] as number, shortUsd: s.shortUsd[0] as number }
          }
        }
        const byAsset = new Map<string, Array<Bucket>>()
        for (const b of dirty) byAsset.set(b.assetId, [...(byAsset.get(b.assetId) ?? []), b])
        const batch: Array<AnySeriesInput> = []
        for (const [assetId, rows] of byAsset) {
          rows.sort((a, b) => a.t - b.t)
          batch.push({
            kind: "liquidations",
            assetId,
            venue,
            t: rows.map((r) => r.t),
            longUsd: rows.map((r) => (r.base?.longUsd ?? 0) + r.longUsd),
            shortUsd: rows.map((r) => (r.base?.shortUsd ?? 0) + r.shortUsd)
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

    const detail = () => {
      const parts = [...refusedText]
      if (malformed > 0) parts.push(`${malformed} malformed messages skipped (last: ${lastMalformed})`)
      return parts.length === 0 ? undefined : parts.join("; ")
    }

    const reportLive = Effect.gen(function* () {
      const nowMs = yield* Clock.currentTimeMillis
      yield* recordSuccess(store, ref, { newestMs: nowMs, detail: detail() })
      malformed = 0
      lastMalformed = ""
    })

    /** Handles one text frame: skipped whole when it is not the documented format. */
    const handle = (text: string): Effect.Effect<StreamMessage> =>
      Effect.gen(function* () {
        const nowMs = yield* Clock.currentTimeMillis
        let message: StreamMessage
        try {
          message = protocol.read(JSON.parse(text))
          if (message._tag === "prints") {
            for (const p of message.prints) {
              if (!(p.t >= nowMs - EVENT_AGE_LIMIT_MS && p.t <= nowMs + EVENT_FUTURE_LIMIT_MS))
                throw new Malformed(`event time ${new Date(p.t).toISOString()} is not live`)
              if (!Number.isFinite(p.usd)) throw new Malformed("amount is not finite")
            }
          }
        } catch (e) {
          malformed++
          lastMalformed = (e instanceof Error ? e.message : String(e)).slice(0, 120)
          yield* Effect.logWarning(`live ${venue} liquidations: message skipped: ${lastMalformed}`)
          return { _tag: "other" } as const
        }
        if (message._tag === "prints") {
          for (const p of message.prints) {
            const assetId = mapping.get(p.symbol)
            if (assetId === undefined) continue
            add(assetId, p.t, p.side === "long" ? p.usd : 0, p.side === "short" ? p.usd : 0)
          }
        }
        return message
      })

    /** Whether the current session got subscribed (a reconnect after one starts the backoff afresh). */
    let subscribed = false

    const session = Effect.scoped(
      Effect.gen(function* () {
        subscribed = false
        const queue = yield* Queue.unbounded<Inbound>()
        const socket = yield* Effect.acquireRelease(
          Effect.try({
            try: () => {
              const ws = new WebSocket(url)
              ws.binaryType = "arraybuffer"
              ws.onopen = () => Queue.offerUnsafe(queue, { _tag: "open" })
              ws.onmessage = (ev) => Queue.offerUnsafe(queue, { _tag: "message", text: textOf(ev.data) })
              ws.onerror = () => Queue.offerUnsafe(queue, { _tag: "error" })
              ws.onclose = (ev) => Queue.offerUnsafe(queue, { _tag: "closed", code: ev.code, reason: ev.reason })
              return ws
            },
            catch: (e) => fail("format", url, `cannot open a websocket: ${String(e)}`)
          }),
          (ws) =>
            Effect.sync(() => {
              ws.onopen = null
              ws.onmessage = null
              ws.onerror = null
              ws.onclose = null
              try {
                ws.close()
              } catch {
                // Already closed or closing.
              }
            })
        )
        /** The connection ended (`closed`; an `error` is always followed by `closed`, which says more). */
        const lost = (item: Inbound & { readonly _tag: "closed" }, what: string, opened: boolean): SourceError =>
          fail(
            "network",
            what,
            `connection ${opened ? "closed" : "failed"} (code ${item.code}${item.reason === "" ? "" : `: ${item.reason}`})`
          )

        /** The next inbound item within `ms` (errors skipped: their close follows), or undefined. */
        const next = (ms: number): Effect.Effect<Exclude<Inbound, { readonly _tag: "error" }> | undefined> =>
          Effect.gen(function* () {
            const until = (yield* Clock.currentTimeMillis) + ms
            while (true) {
              const left = until - (yield* Clock.currentTimeMillis)
              if (left <= 0) return undefined
              const item = Option.getOrUndefined(yield* Queue.take(queue).pipe(Effect.timeoutOption(left)))
              if (item === undefined || item._tag !== "error") return item
            }
          })

        // Connect.
        const opened = yield* next(options.timeoutMs)
        if (opened === undefined)
          return yield* Effect.fail(fail("timeout", url, `no connection within ${options.timeoutMs} ms`))
        if (opened._tag === "closed") return yield* Effect.fail(lost(opened, url, false))

        // Subscribe: every request must be answered; symbols refused alone are named, all refused fails.
        mapping = symbolsNow()
        const requests = protocol.subscriptions([...mapping.keys()])
        for (const r of requests) socket.send(r.text)
        const pending = new Map(requests.map((r) => [r.id, r]))
        const refused: Array<{ readonly request: SubscriptionRequest; readonly message: string }> = []
        const deadline = (yield* Clock.currentTimeMillis) + options.timeoutMs
        while (pending.size > 0) {
          const left = deadline - (yield* Clock.currentTimeMillis)
          const item = left > 0 ? yield* next(left) : undefined
          if (item === undefined)
            return yield* Effect.fail(
              fail("timeout", "subscribe", `no answer to ${pending.size} subscription requests`)
            )
          if (item._tag === "closed") return yield* Effect.fail(lost(item, "subscribe", true))
          if (item._tag !== "message") continue
          const m = yield* handle(item.text)
          if (m._tag === "subscribed" || m._tag === "refused") {
            const r = pending.get(m.id)
            if (r === undefined) continue
            pending.delete(m.id)
            if (m._tag === "refused") refused.push({ request: r, message: m.message })
          }
        }
        if (refused.length === requests.length && requests.length > 0) {
          const first = refused[0] as (typeof refused)[number]
          return yield* Effect.fail(
            new SourceError({
              source: venue,
              kind: "status",
              what: "subscribe",
              message: `subscription refused: ${first.message}`
            })
          )
        }
        refusedText = refused.map((r) => `not subscribed: ${r.request.symbols.join(", ")} (${r.message})`)
        const refusedSymbols = new Set(refused.flatMap((r) => r.request.symbols))
        /** Every symbol this connection asked for (or, on an all-market stream, counts). */
        const requested = new Set(mapping.keys())
        /** Requests sent after the connect, awaiting their answer (answered in the loop below). */
        const later = new Map<string, SubscriptionRequest>()
        const coveredNow = () =>
          [...mapping].filter(([s]) => !refusedSymbols.has(s) && !later.has(`sym:${s}`)).map(([, assetId]) => assetId)
        let covered = coveredNow()
        /** Takes the symbols as they are now: subscribes the new ones on this connection. */
        const follow = Effect.gen(function* () {
          const current = symbolsNow()
          if (current === mapping) return
          mapping = current
          const added = [...current.keys()].filter((s) => !requested.has(s))
          for (const s of added) requested.add(s)
          if (added.length > 0 && !protocol.allSymbols) {
            for (const r of protocol.subscriptions(added)) {
              socket.send(r.text)
              later.set(r.id, r)
              for (const sym of r.symbols) later.set(`sym:${sym}`, r)
            }
          }
          covered = coveredNow()
          if (added.length > 0)
            yield* Effect.logInfo(
              `live ${venue} liquidations: ${added.length} new symbols followed (${covered.length} assets)`
            )
        })
        subscribed = true
        yield* Effect.logInfo(`live ${venue} liquidations: stream subscribed (${covered.length} assets)`)
        yield* reportLive

        let nowMs = yield* Clock.currentTimeMillis
        let nextFlush = nowMs + flushEveryMs
        let nextHeartbeat = nowMs + heartbeatEveryMs
        let nextPing = nowMs + pingEveryMs
        let awaitingPongSince: number | undefined
        while (true) {
          nowMs = yield* Clock.currentTimeMillis
          const wait = Math.max(
            1,
            Math.min(
              nextFlush,
              nextHeartbeat,
              awaitingPongSince === undefined ? nextPing : awaitingPongSince + pongTimeoutMs
            ) - nowMs
          )
          const item = yield* next(wait)
          if (item !== undefined) {
            if (item._tag === "closed") {
              yield* flush
              return yield* Effect.fail(lost(item, url, true))
            }
            if (item._tag !== "message") continue
            const m = yield* handle(item.text)
            if (m._tag === "pong") awaitingPongSince = undefined
            if (m._tag === "subscribed" || m._tag === "refused") {
              const r = later.get(m.id)
              if (r !== undefined) {
                later.delete(m.id)
                for (const sym of r.symbols) later.delete(`sym:${sym}`)
                if (m._tag === "refused") {
                  for (const sym of r.symbols) refusedSymbols.add(sym)
                  refusedText.push(`not subscribed: ${r.symbols.join(", ")} (${m.message})`)
                }
                covered = coveredNow()
              }
            }
            continue
          }
          nowMs = yield* Clock.currentTimeMillis
          if (awaitingPongSince !== undefined && nowMs >= awaitingPongSince + pongTimeoutMs) {
            yield* flush
            return yield* Effect.fail(
              fail("timeout", "keep-alive", `no answer to the keep-alive within ${pongTimeoutMs} ms`)
            )
          }
          if (nowMs >= nextPing) {
            socket.send(protocol.ping.text)
            awaitingPongSince ??= nowMs
            nextPing = nowMs + pingEveryMs
          }
          if (nowMs >= nextFlush) {
            yield* follow
            const slot = Math.floor(nowMs / BAR_MS) * BAR_MS
            for (const assetId of covered) {
              if ((presence.get(assetId) ?? 0) < slot) {
                add(assetId, slot, 0, 0)
                presence.set(assetId, slot)
              }
            }
            yield* flush
            nextFlush = nowMs + flushEveryMs
          }
          if (nowMs >= nextHeartbeat) {
            yield* reportLive
            nextHeartbeat = nowMs + heartbeatEveryMs
          }
        }
      })
    )

    let attempt = 0
    while (true) {
      const exit = yield* Effect.exit(session)
      if (exit._tag === "Failure" && Cause.hasInterruptsOnly(exit.cause)) return yield* Effect.interrupt
      yield* flush
      const error = exit._tag === "Failure" ? Option.getOrUndefined(Cause.findErrorOption(exit.cause)) : undefined
      const text =
        error !== undefined
          ? sourceErrorText(error)
          : exit._tag === "Failure"
            ? `defect: ${Cause.pretty(exit.cause).split("\n")[0]}`
            : "stream ended"
      yield* recordFailure(store, ref, text)
      yield* Effect.logWarning(`live ${venue} liquidations: stream down: ${text}`)
      if (subscribed) attempt = 0
      const jitter = 0.8 + 0.4 * (yield* Random.next)
      const delayMs = Math.round(Math.min(backoffCapMs, backoffBaseMs * 2 ** attempt) * jitter)
      attempt = Math.min(attempt + 1, 30)
      yield* Effect.sleep(delayMs)
    }
  }).pipe(Effect.withSpan(`live.${protocol.venue}.liquidations`))
