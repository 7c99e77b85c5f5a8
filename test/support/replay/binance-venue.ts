/**
 * A replay Binance USD-M futures venue on 127.0.0.1, for end-to-end tests and benches of live mode: REST (`node:http`)
 * and the market websocket streams (the `ws` package's `WebSocketServer`), each on a port of its own (port 0), for
 * `n` perpetuals (default 550; names from `symbols.ts`: Binance's recorded list, else synthetic). Nothing leaves
 * the machine.
 *
 * The market: each symbol's book moves on its own timer (mean `meanIntervalMs`, default 1 s, each wait drawn
 * between half and one and a half of it), a random walk of one or two ticks (a tick is about a basis point) with a
 * one- or two-tick spread and random sizes; every move is pushed as a `bookTicker` frame to every connection
 * subscribed to `<symbol>@bookTicker`, and every `markEveryMs` (1 s) the `!markPrice@arr@1s` array (mark at the
 * mid, index a hair off it, a funding rate, the next funding time) goes to its subscribers. Each symbol's quotes
 * are recorded with the time the venue sent them and the time it replaced them, so `stalenessOf` says how old a
 * quote someone shows is: 0 while it is the venue's current quote, else how long ago the venue replaced it.
 *
 * The websocket protocol ("Websocket Market Streams" of the USD-M API, routed endpoints): `/public/stream` serves
 * `<symbol>@bookTicker`; `/market/stream` serves `<symbol>@kline_<interval>` (every Binance interval accepted,
 * `15m` pushed), `!markPrice@arr@1s` (also `!markPrice@arr`) and `!forceOrder@arr` (accepted; no liquidations);
 * the legacy `/stream` and `/ws` serve all of them. Combined-stream frames are wrapped `{"stream","data"}` (`/ws`
 * sends the bare payload). `{"method":"SUBSCRIBE","params":[...],"id"}` is answered `{"result":null,"id"}`, or,
 * when any of its streams is unknown to the endpoint, `{"error":{"code":2,"msg"},"id"}` (the whole request refused,
 * as Binance does); `UNSUBSCRIBE` likewise; `LIST_SUBSCRIPTIONS` `{"result":[...],"id"}`; `SET_PROPERTY` and
 * `GET_PROPERTY` (`combined`) are answered; a frame that is not JSON `{"error":{"code":3,...}}`. Limits enforced as
 * documented: more than 10 incoming messages in a second closes the connection (1008), more than 1,024 streams on
 * a connection is refused; the venue pings every `pingEveryMs` (3 minutes) and the `ws` package answers the
 * client's pings. A combined URL (`/stream?streams=a/b`) subscribes at connect.
 *
 * Every book move is also a trade at the new mid in the symbol's 15-minute bar, pushed as a `kline` frame (at most
 * every `klineEveryMs`, 250 ms as Binance) to the subscribers of `<symbol>@kline_15m` (`/market/stream`), the
 * closing bar once more with `"x":true` when the next one opens.
 *
 * REST, consistent with the moving books: `exchangeInfo`, `fundingInfo`, `klines` (the bars the venue traded since
 * it started, the forming one as it stands; before them a synthetic history, smooth waves per symbol, ending at
 * the open of the first), `fundingRate` (settlements on the symbol's interval), `premiumIndex` (mark, index,
 * funding now), `openInterest`, `openInterestHist`, `depth` (the current best bid and ask on top, then one level a
 * tick apart), and the spot `GET /api/v3/exchangeInfo` (no pairs: the directory's spot list is empty). Each request's weight is Binance's (klines and depth by `limit`,
 * the all-symbol `premiumIndex` 10); `X-MBX-USED-WEIGHT-1M` reports the minute's weight, and past 2,400 a minute
 * the venue answers 429 as Binance does. Requests and weights are counted by path, and every request is logged
 * with its time and symbol.
 *
 * Controls: `dropStreams()` cuts every websocket connection (no close handshake), `refuseConnections(true)` also
 * refuses new ones (REST stays up), `rest429(true)` answers every REST request 429, `stopSymbol(s)` halts a book
 * (no more frames, absent from the mark array; `resumeSymbol` moves it again), `setMeanInterval(ms)` changes the
 * pace of every book (0 stops the timers), `blast(frames)` pushes book frames as fast as the connections take
 * them, 512 to a socket write (benches: transport and parsing, not the walk; those quotes are not recorded).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { Socket } from "node:net"
import { type WebSocket, WebSocketServer } from "ws"
import { hash, type ReplaySymbol, replaySymbols, rng } from "./symbols.ts"

export type { ReplaySymbol } from "./symbols.ts"

const BAR_MS = 15 * 60_000
const HOUR_MS = 3_600_000
const MARK_TOPIC = "!markPrice@arr@1s"
/** Kline intervals Binance serves (only `15m` is pushed here; the others are accepted and stay quiet). */
const KLINE_INTERVALS = ["1m", "3m", "5m", "15m", "30m", "1h", "2h", "4h", "6h", "8h", "12h", "1d", "3d", "1w", "1M"]
/** Bars kept per symbol (about two days of 15-minute bars). */
const KEPT_BARS = 200
const MARK_TOPIC_3S = "!markPrice@arr"
const LIQUIDATION_TOPIC = "!forceOrder@arr"
/** Binance's documented limits. */
const MAX_STREAMS_PER_CONNECTION = 1_024
const MAX_INCOMING_PER_SECOND = 10
const WEIGHT_LIMIT_PER_MINUTE = 2_400

export interface ReplayVenueOptions {
  /** Perpetuals listed (default 550). */
  readonly symbols?: number
  /** Synthetic names only, even when the recorded list is there. */
  readonly syntheticOnly?: boolean
  /** Each book's mean time between moves (ms, default 1,000); 0: books do not move. */
  readonly meanIntervalMs?: number
  /** The mark-price array's period (ms, default 1,000). */
  readonly markEveryMs?: number
  /** Shortest time between two kline frames of a symbol (ms, default 250: Binance's update speed). */
  readonly klineEveryMs?: number
  /** The venue's websocket ping period (ms, default 180,000). */
  readonly pingEveryMs?: number
  /** Quotes kept per symbol for `stalenessOf` (default 4,096; older ones are forgotten). */
  readonly historyPerSymbol?: number
  /** Answer 429 past 2,400 weight a minute, as Binance does (default true). */
  readonly enforceWeightLimit?: boolean
  readonly seed?: number
  /**
   * The venue's clock runs this far ahead of this machine's (ms, default 0): event times, bars, funding times and
   * REST log times are on it. A test points a service process at the same time base (`support/shifted-clock.ts`)
   * to bring a 15-minute close within seconds of its start.
   */
  readonly clockOffsetMs?: number
}

/** A top of book as the venue published it. */
export interface PublishedQuote {
  readonly bid: number
  readonly ask: number
  readonly bidQty: number
  readonly askQty: number
  /** When the venue sent it (epoch ms; also its event time `E`). */
  readonly sentMs: number
  /** When the venue replaced it with another (undefined while it is current). */
  replacedMs: number | undefined
  readonly u: number
}

export interface RestLogEntry {
  readonly t: number
  readonly path: string
  readonly symbol: string | undefined
  readonly weight: number
  readonly status: number
}

export interface ReplayVenue {
  /** REST base URL (`http://127.0.0.1:<port>`), for `MARKET_DATA_BINANCE_BASE_URL`. */
  readonly restUrl: string
  /** Websocket base URL (`ws://127.0.0.1:<port>`), for `MARKET_DATA_BINANCE_WS_BASE_URL`. */
  readonly wsUrl: string
  readonly symbols: ReadonlyArray<ReplaySymbol>
  readonly symbol: (symbol: string) => ReplaySymbol | undefined
  /** The current quote of a symbol. */
  readonly quote: (symbol: string) => PublishedQuote | undefined
  /**
   * How stale a shown quote is at `atMs` (this machine's clock, `Date.now()`; prices in the venue's units): 0 when (bid, ask) was the current quote
   * then, else `atMs` minus the time the venue replaced it (its newest publication matching within a relative
   * 1e-9); undefined when the venue never published it (or it is older than the history kept).
   */
  readonly stalenessOf: (symbol: string, bid: number, ask: number, atMs: number) => number | undefined
  /** The venue's clock (epoch ms): this machine's plus `clockOffsetMs`. */
  readonly now: () => number
  /** A symbol's 15-minute bar opening at `openMs` as the venue traded and prints it (undefined: none kept). */
  readonly bar: (
    symbol: string,
    openMs: number
  ) =>
    | {
        readonly open: number
        readonly high: number
        readonly low: number
        readonly close: number
        readonly volume: number
      }
    | undefined
  readonly dropStreams: () => void
  readonly refuseConnections: (on: boolean) => void
  readonly rest429: (on: boolean) => void
  readonly stopSymbol: (symbol: string) => void
  readonly resumeSymbol: (symbol: string) => void
  readonly setMeanInterval: (ms: number) => void
  /**
   * Sends `frames` pre-made `bookTicker` frames (round robin over the symbols each connection subscribed) to
   * every connection subscribed to any, as fast as the sockets drain (at most `bufferBytes` queued per socket);
   * resolves with what it sent and how long it took. The books do not move for these (they are not recorded).
   */
  readonly blast: (frames: number, bufferBytes?: number) => Promise<{ readonly sent: number; readonly ms: number }>
  readonly rest: {
    /** Requests and weight by path (`/fapi/v1/depth`). */
    readonly byPath: () => Readonly<Record<string, { readonly requests: number; readonly weight: number }>>
    readonly log: ReadonlyArray<RestLogEntry>
    /** Answers 429 for the weight limit (not `rest429`). */
    readonly limited: () => number
    readonly weightLastMinute: () => number
  }
  readonly ws: {
    /** Open connections, with the path each asked for and its subscriptions. */
    readonly connections: () => ReadonlyArray<{
      /** The connection's number, in the order they came (from 1). */
      readonly id: number
      readonly path: string
      readonly topics: ReadonlySet<string>
    }>
    /** Connections that subscribe `topic` now. */
    readonly subscribers: (topic: string) => number
    /** Symbols whose `bookTicker` some open connection subscribes. */
    readonly subscribedSymbols: () => number
    readonly stats: () => {
      readonly connects: number
      readonly refused: number
      readonly bookFrames: number
      readonly klineFrames: number
      readonly markFrames: number
      readonly framesSent: number
      readonly requests: number
      readonly errorsAnswered: number
      readonly rateViolations: number
    }
  }
  /** Book moves published so far (every symbol). */
  readonly moves: () => number
  readonly close: () => Promise<void>
}

interface Book {
  readonly s: ReplaySymbol
  readonly lower: string
  readonly topic: string
  readonly klineTopic: string
  bidTicks: number
  spreadTicks: number
  bidQty: number
  askQty: number
  /** Ring buffer of published quotes, newest at `head - 1`. */
  readonly history: Array<PublishedQuote | undefined>
  head: number
  count: number
  timer: NodeJS.Timeout | undefined
  stopped: boolean
  readonly random: () => number
  /** The 15-minute bars since the venue started, by open time (the newest forming), at most `KEPT_BARS`. */
  readonly bars: Map<number, Bar>
  /** When the kline frame was last pushed (throttle). */
  lastKlineMs: number
  /** The venue's first bar (where the synthetic history ends) and its open. */
  anchorSlotMs: number
  anchorOpen: number
  /** Open interest (venue units), drifting. */
  oi: number
  fundingRate: number
  /** Wave parameters of the synthetic history: [period ms, amplitude, phase]. */
  readonly waves: ReadonlyArray<readonly [number, number, number]>
}

/** A 15-minute bar as the venue trades it (every book move a trade at the mid). */
interface Bar {
  readonly openMs: number
  readonly open: number
  high: number
  low: number
  close: number
  /** Base volume, quote volume, taker-buy base and quote volume, trades. */
  volume: number
  quoteVolume: number
  takerBuyVolume: number
  takerBuyQuote: number
  trades: number
  firstTradeId: number
  lastTradeId: number
}

interface Conn {
  readonly id: number
  readonly socket: WebSocket
  readonly path: string
  readonly combined: boolean
  readonly topics: Set<string>
  /** Incoming message times in the last second. */
  incoming: Array<number>
}

const fmt = (value: number, decimals: number) => value.toFixed(decimals)
const qtyText = (q: number) => q.toFixed(3)

/** Which endpoint serves a stream name (`public`, `market`), or undefined when unknown. */
const routeOf = (topic: string, known: (lowerSymbol: string) => boolean): "public" | "market" | undefined => {
  if (topic === MARK_TOPIC || topic === MARK_TOPIC_3S || topic === LIQUIDATION_TOPIC) return "market"
  const m = /^([a-z0-9]+)@bookTicker$/.exec(topic)
  if (m !== null && known(m[1] as string)) return "public"
  const k = /^([a-z0-9]+)@kline_([0-9a-zA-Z]+)$/.exec(topic)
  if (k !== null && known(k[1] as string) && KLINE_INTERVALS.includes(k[2] as string)) return "market"
  return undefined
}

const listen = (server: Server): Promise<number> =>
  new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      resolve(typeof address === "object" && address !== null ? address.port : 0)
    })
  })

export const startBinanceReplay = async (options: ReplayVenueOptions = {}): Promise<ReplayVenue> => {
  const seed = options.seed ?? 20261120
  const symbols = replaySymbols(options.symbols ?? 550, {
    seed,
    ...(options.syntheticOnly === undefined ? {} : { syntheticOnly: options.syntheticOnly })
  })
  let meanIntervalMs = options.meanIntervalMs ?? 1_000
  const klineEveryMs = options.klineEveryMs ?? 250
  const markEveryMs = options.markEveryMs ?? 1_000
  const historySize = options.historyPerSymbol ?? 4_096
  const enforceWeight = options.enforceWeightLimit ?? true
  const clockOffsetMs = options.clockOffsetMs ?? 0
  const clock = () => Date.now() + clockOffsetMs
  let nextU = 1_000_000

  // -- the books ---------------------------------------------------------------------------------------------
  const books = new Map<string, Book>()
  const byLower = new Map<string, Book>()
  for (const s of symbols) {
    const random = rng(seed ^ hash(`${s.symbol}/book`))
    const b: Book = {
      s,
      lower: s.symbol.toLowerCase(),
      topic: `${s.symbol.toLowerCase()}@bookTicker`,
      klineTopic: `${s.symbol.toLowerCase()}@kline_15m`,
      bidTicks: s.startTicks,
      spreadTicks: 1,
      bidQty: 1 + Math.round(random() * 500),
      askQty: 1 + Math.round(random() * 500),
      history: new Array(historySize),
      head: 0,
      count: 0,
      timer: undefined,
      stopped: false,
      random,
      bars: new Map(),
      lastKlineMs: 0,
      anchorSlotMs: 0,
      anchorOpen: s.startTicks * s.tick,
      oi: (1e6 + random() * 5e8) / (s.startTicks * s.tick),
      fundingRate: (random() - 0.3) * 0.0004,
      waves: [
        [6 * HOUR_MS, 0.004 + random() * 0.006, random() * 2 * Math.PI],
        [41 * HOUR_MS, 0.01 + random() * 0.02, random() * 2 * Math.PI],
        [5.3 * 24 * HOUR_MS, 0.02 + random() * 0.04, random() * 2 * Math.PI],
        [23 * 24 * HOUR_MS, 0.05 + random() * 0.1, random() * 2 * Math.PI]
      ]
    }
    books.set(s.symbol, b)
    byLower.set(b.lower, b)
  }
  const priceOf = (b: Book, ticks: number) => ticks * b.s.tick
  const current = (b: Book): PublishedQuote | undefined =>
    b.count === 0 ? undefined : b.history[(b.head - 1 + historySize) % historySize]
  const midOf = (b: Book): number => priceOf(b, b.bidTicks + b.spreadTicks / 2)

  let moves = 0
  const record = (b: Book, nowMs: number): PublishedQuote => {
    const before = current(b)
    if (before !== undefined) before.replacedMs = nowMs
    const q: PublishedQuote = {
      bid: Number(fmt(priceOf(b, b.bidTicks), b.s.decimals)),
      ask: Number(fmt(priceOf(b, b.bidTicks + b.spreadTicks), b.s.decimals)),
      bidQty: b.bidQty,
      askQty: b.askQty,
      sentMs: nowMs,
      replacedMs: undefined,
      u: nextU++
    }
    b.history[b.head] = q
    b.head = (b.head + 1) % historySize
    b.count = Math.min(historySize, b.count + 1)
    return q
  }
  const bookFrame = (b: Book, q: PublishedQuote, combined: boolean): string => {
    const data = `{"e":"bookTicker","u":${q.u},"s":"${b.s.symbol}","b":"${fmt(q.bid, b.s.decimals)}","B":"${qtyText(q.bidQty)}","a":"${fmt(q.ask, b.s.decimals)}","A":"${qtyText(q.askQty)}","T":${q.sentMs - 1},"E":${q.sentMs}}`
    return combined ? `{"stream":"${b.topic}","data":${data}}` : data
  }

  // -- websocket side ----------------------------------------------------------------------------------------
  const conns = new Set<Conn>()
  const subscribers = new Map<string, Set<Conn>>()
  const wsStats = {
    connects: 0,
    refused: 0,
    bookFrames: 0,
    klineFrames: 0,
    markFrames: 0,
    framesSent: 0,
    requests: 0,
    errorsAnswered: 0,
    rateViolations: 0
  }
  let refusing = false

  const send = (c: Conn, text: string) => {
    if (c.socket.readyState !== 1) return
    c.socket.send(text)
    wsStats.framesSent++
  }

  let nextTradeId = 1
  /** The bar of `slotMs` (opened at the last close when none yet: a quiet book's bar is flat). */
  const barAt = (b: Book, slotMs: number): Bar => {
    let bar = b.bars.get(slotMs)
    if (bar !== undefined) return bar
    const mid = midOf(b)
    bar = {
      openMs: slotMs,
      open: mid,
      high: mid,
      low: mid,
      close: mid,
      volume: 0,
      quoteVolume: 0,
      takerBuyVolume: 0,
      takerBuyQuote: 0,
      trades: 0,
      firstTradeId: nextTradeId,
      lastTradeId: nextTradeId - 1
    }
    b.bars.set(slotMs, bar)
    if (b.bars.size > KEPT_BARS) b.bars.delete(b.bars.keys().next().value as number)
    return bar
  }
  /**
   * A trade at the new mid in the bar of now; returns the bar before it when this trade opened a new one (it
   * closed).
   */
  const trade = (b: Book, nowMs: number, r: () => number): Bar | undefined => {
    const slotMs = Math.floor(nowMs / BAR_MS) * BAR_MS
    const fresh = !b.bars.has(slotMs)
    const before = fresh ? b.bars.get(slotMs - BAR_MS) : undefined
    const bar = barAt(b, slotMs)
    const mid = midOf(b)
    bar.close = mid
    bar.high = Math.max(bar.high, mid)
    bar.low = Math.min(bar.low, mid)
    const qty = b.oi * (0.00002 + r() * 0.0001)
    bar.volume += qty
    bar.quoteVolume += qty * mid
    if (r() < 0.5) {
      bar.takerBuyVolume += qty
      bar.takerBuyQuote += qty * mid
    }
    bar.trades++
    bar.lastTradeId = nextTradeId++
    return before
  }

  /** Moves a book one step and pushes it. */
  const move = (b: Book) => {
    const r = b.random
    const step = (r() < 0.5 ? -1 : 1) * (r() < 0.7 ? 1 : 2)
    b.bidTicks = Math.max(10, b.bidTicks + step)
    b.spreadTicks = r() < 0.8 ? 1 : 2
    b.bidQty = Math.max(0.001, Math.round(b.bidQty * (0.7 + r() * 0.6) * 1000) / 1000 + 1)
    b.askQty = Math.max(0.001, Math.round(b.askQty * (0.7 + r() * 0.6) * 1000) / 1000 + 1)
    const nowMs = clock()
    const q = record(b, nowMs)
    moves++
    const closed = trade(b, nowMs, r)
    const subs = subscribers.get(b.topic)
    if (subs !== undefined && subs.size > 0) {
      const combined = bookFrame(b, q, true)
      let bare: string | undefined
      for (const c of subs) {
        if (c.combined) send(c, combined)
        else {
          bare ??= bookFrame(b, q, false)
          send(c, bare)
        }
        wsStats.bookFrames++
      }
    }
    const klines = subscribers.get(b.klineTopic)
    if (klines === undefined || klines.size === 0) return
    if (closed !== undefined) pushKline(b, closed, true, nowMs, klines)
    if (nowMs - b.lastKlineMs < klineEveryMs) return
    b.lastKlineMs = nowMs
    pushKline(b, b.bars.get(Math.floor(nowMs / BAR_MS) * BAR_MS) as Bar, false, nowMs, klines)
  }
  const pushKline = (b: Book, bar: Bar, final: boolean, nowMs: number, subs: ReadonlySet<Conn>) => {
    const d = b.s.decimals
    const k = `{"t":${bar.openMs},"T":${bar.openMs + BAR_MS - 1},"s":"${b.s.symbol}","i":"15m","f":${bar.firstTradeId},"L":${bar.lastTradeId},"o":"${fmt(bar.open, d)}","c":"${fmt(bar.close, d)}","h":"${fmt(bar.high, d)}","l":"${fmt(bar.low, d)}","v":"${bar.volume.toFixed(3)}","n":${bar.trades},"x":${final},"q":"${bar.quoteVolume.toFixed(4)}","V":"${bar.takerBuyVolume.toFixed(3)}","Q":"${bar.takerBuyQuote.toFixed(4)}","B":"0"}`
    const data = `{"e":"kline","E":${nowMs},"s":"${b.s.symbol}","k":${k}}`
    const combined = `{"stream":"${b.klineTopic}","data":${data}}`
    for (const c of subs) {
      send(c, c.combined ? combined : data)
      wsStats.klineFrames++
    }
  }
  const schedule = (b: Book) => {
    if (b.timer !== undefined) clearTimeout(b.timer)
    b.timer = undefined
    if (b.stopped || meanIntervalMs <= 0) return
    const wait = meanIntervalMs * (0.5 + b.random())
    b.timer = setTimeout(() => {
      b.timer = undefined
      move(b)
      schedule(b)
    }, wait)
  }
  // A first quote for every book now, and each one's timer.
  {
    const nowMs = clock()
    for (const b of books.values()) {
      record(b, nowMs)
      b.anchorSlotMs = Math.floor(nowMs / BAR_MS) * BAR_MS
      b.anchorOpen = barAt(b, b.anchorSlotMs).open
    }
    for (const b of books.values()) schedule(b)
  }

  const nextFundingMs = (b: Book, nowMs: number) => {
    const every = b.s.fundingIntervalHours * HOUR_MS
    return Math.floor(nowMs / every) * every + every
  }
  const markOf = (b: Book) => midOf(b)
  const indexOf = (b: Book) => midOf(b) * (1 + ((hash(`${b.s.symbol}/${b.bidTicks}`) % 200) - 100) / 1e6)
  const markDecimals = (b: Book) => Math.max(8, b.s.decimals)

  const markTimer = setInterval(() => {
    const subs = [...(subscribers.get(MARK_TOPIC) ?? [])]
    if (subs.length === 0) return
    const nowMs = clock()
    const items: Array<string> = []
    for (const b of books.values()) {
      if (b.stopped) continue
      const d = markDecimals(b)
      items.push(
        `{"e":"markPriceUpdate","E":${nowMs},"s":"${b.s.symbol}","p":"${fmt(markOf(b), d)}","P":"${fmt(markOf(b), d)}","i":"${fmt(indexOf(b), d)}","r":"${b.fundingRate.toFixed(8)}","T":${nextFundingMs(b, nowMs)}}`
      )
    }
    const data = `[${items.join(",")}]`
    const combined = `{"stream":"${MARK_TOPIC}","data":${data}}`
    for (const c of subs) {
      send(c, c.combined ? combined : data)
      wsStats.markFrames++
    }
  }, markEveryMs)

  const answer = (c: Conn, body: Record<string, unknown>) => send(c, JSON.stringify(body))
  const refuse = (c: Conn, id: unknown, code: number, msg: string) => {
    wsStats.errorsAnswered++
    answer(c, { error: { code, msg }, id: id ?? null })
  }
  const endpointOf = (path: string): "public" | "market" | "any" =>
    path.startsWith("/public") ? "public" : path.startsWith("/market") ? "market" : "any"
  const known = (lower: string) => byLower.has(lower)
  const subscribe = (c: Conn, topics: ReadonlyArray<string>) => {
    for (const t of topics) {
      c.topics.add(t)
      const key = t === MARK_TOPIC_3S ? MARK_TOPIC : t
      let set = subscribers.get(key)
      if (set === undefined) {
        set = new Set()
        subscribers.set(key, set)
      }
      set.add(c)
    }
  }
  const unsubscribe = (c: Conn, topics: ReadonlyArray<string>) => {
    for (const t of topics) {
      c.topics.delete(t)
      subscribers.get(t === MARK_TOPIC_3S ? MARK_TOPIC : t)?.delete(c)
    }
  }
  /** The first stream of `topics` this connection's endpoint does not serve, or undefined. */
  const invalidTopic = (c: Conn, topics: ReadonlyArray<unknown>): string | undefined => {
    const endpoint = endpointOf(c.path)
    for (const t of topics) {
      if (typeof t !== "string") return String(t)
      const route = routeOf(t, known)
      if (route === undefined) return t
      if (endpoint !== "any" && route !== endpoint) return t
    }
    return undefined
  }

  const onMessage = (c: Conn, text: string) => {
    if (c.socket.readyState !== 1) return
    const nowMs = clock()
    c.incoming = c.incoming.filter((t) => t > nowMs - 1_000)
    c.incoming.push(nowMs)
    if (c.incoming.length > MAX_INCOMING_PER_SECOND) {
      wsStats.rateViolations++
      c.socket.close(1008, "Too many requests")
      return
    }
    wsStats.requests++
    let m: Record<string, unknown>
    try {
      const parsed: unknown = JSON.parse(text)
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not an object")
      m = parsed as Record<string, unknown>
    } catch (e) {
      return refuse(c, null, 3, `Invalid JSON: ${String(e).slice(0, 80)}`)
    }
    const id = m.id
    if (!(typeof id === "number" || typeof id === "string" || id === null || id === undefined))
      return refuse(c, null, 2, "Invalid request: request ID must be an unsigned integer")
    switch (m.method) {
      case "SUBSCRIBE":
      case "UNSUBSCRIBE": {
        const params = m.params
        if (!Array.isArray(params)) return refuse(c, id, 2, "Invalid request: params must be an array")
        const bad = invalidTopic(c, params)
        if (bad !== undefined)
          return refuse(c, id, 2, `Invalid request: unknown stream ${JSON.stringify(bad)} on ${c.path}`)
        const topics = params as ReadonlyArray<string>
        if (m.method === "SUBSCRIBE") {
          const after = new Set([...c.topics, ...topics])
          if (after.size > MAX_STREAMS_PER_CONNECTION)
            return refuse(c, id, 2, `Invalid request: more than ${MAX_STREAMS_PER_CONNECTION} streams`)
          subscribe(c, topics)
        } else unsubscribe(c, topics)
        return answer(c, { result: null, id: id ?? null })
      }
      case "LIST_SUBSCRIPTIONS":
        return answer(c, { result: [...c.topics], id: id ?? null })
      case "SET_PROPERTY":
        return answer(c, { result: null, id: id ?? null })
      case "GET_PROPERTY":
        return answer(c, { result: c.combined, id: id ?? null })
      default:
        return refuse(c, id, 2, `Invalid request: unknown method ${JSON.stringify(m.method)}`)
    }
  }

  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 })
  const wsHttp = createServer((_req, res) => {
    res.writeHead(404, { "Content-Type": "text/plain" })
    res.end("websocket endpoints only")
  })
  const wsSockets = new Set<Socket>()
  wsHttp.on("connection", (s) => {
    wsSockets.add(s)
    s.on("close", () => wsSockets.delete(s))
  })
  wsHttp.on("upgrade", (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1")
    const path = url.pathname
    const served = ["/public/stream", "/market/stream", "/stream", "/public/ws", "/market/ws", "/ws"]
    if (refusing || !served.includes(path)) {
      wsStats.refused++
      socket.end(
        refusing
          ? "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
          : "HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
      )
      return
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      wsStats.connects++
      const c: Conn = {
        id: wsStats.connects,
        socket: ws,
        path,
        combined: !path.endsWith("/ws"),
        topics: new Set(),
        incoming: []
      }
      conns.add(c)
      const streams = url.searchParams.get("streams")
      if (streams !== null && streams !== "") {
        const topics = streams.split("/")
        if (invalidTopic(c, topics) === undefined) subscribe(c, topics)
      }
      ws.on("message", (data, isBinary) => {
        if (isBinary) return refuse(c, null, 3, "Invalid JSON: binary frame")
        onMessage(c, data.toString())
      })
      const drop = () => {
        if (!conns.delete(c)) return
        unsubscribe(c, [...c.topics])
      }
      ws.on("close", drop)
      ws.on("error", drop)
    })
  })
  const pingTimer = setInterval(() => {
    for (const c of conns) if (c.socket.readyState === 1) c.socket.ping()
  }, options.pingEveryMs ?? 180_000)

  // -- REST side ---------------------------------------------------------------------------------------------
  const byPath: Record<string, { requests: number; weight: number }> = {}
  const log: Array<RestLogEntry> = []
  const spent: Array<{ t: number; w: number }> = []
  let limited = 0
  let refuse429 = false
  const weightLastMinute = (nowMs = clock()) => {
    while (spent.length > 0 && (spent[0] as { t: number }).t <= nowMs - 60_000) spent.shift()
    return spent.reduce((s, x) => s + x.w, 0)
  }
  const klinesWeight = (limit: number) => (limit < 100 ? 1 : limit < 500 ? 2 : limit <= 1000 ? 5 : 10)
  const depthWeight = (limit: number) => (limit <= 50 ? 2 : limit <= 100 ? 5 : limit <= 500 ? 10 : 20)
  const weightOf = (path: string, q: URLSearchParams): number => {
    switch (path) {
      case "/fapi/v1/klines":
        return klinesWeight(Number(q.get("limit") ?? 500))
      case "/fapi/v1/depth":
        return depthWeight(Number(q.get("limit") ?? 500))
      case "/fapi/v1/premiumIndex":
        return q.has("symbol") ? 1 : 10
      case "/api/v3/exchangeInfo":
        return 20
      default:
        return 1
    }
  }

  /**
   * The price at `t`: before the venue started, a synthetic history (smooth waves per symbol) ending at the open of
   * its first bar; since then, the open of the bar it traded at `t` (the mid where it has none).
   */
  const priceAt = (b: Book, t: number): number => {
    if (t <= b.anchorSlotMs) {
      const wave = (x: number) =>
        b.waves.reduce((sum, [period, amp, phase]) => sum + amp * Math.sin((2 * Math.PI * x) / period + phase), 0)
      return b.anchorOpen * Math.exp(wave(t) - wave(b.anchorSlotMs))
    }
    return b.bars.get(Math.floor(t / BAR_MS) * BAR_MS)?.open ?? midOf(b)
  }
  /** A kline row: a bar the venue traded (the forming one as it stands), or one of the history before it. */
  const kline = (b: Book, openMs: number): ReadonlyArray<unknown> => {
    const d = b.s.decimals
    const traded = openMs >= b.anchorSlotMs ? barAt(b, openMs) : undefined
    const row = (
      open: number,
      high: number,
      low: number,
      close: number,
      volume: number,
      quoteVolume: number,
      trades: number,
      buyVolume: number,
      buyQuote: number
    ) => [
      openMs,
      fmt(open, d),
      fmt(high, d),
      fmt(low, d),
      fmt(close, d),
      volume.toFixed(3),
      openMs + BAR_MS - 1,
      quoteVolume.toFixed(4),
      trades,
      buyVolume.toFixed(3),
      buyQuote.toFixed(4),
      "0"
    ]
    if (traded !== undefined)
      return row(
        traded.open,
        traded.high,
        traded.low,
        traded.close,
        traded.volume,
        traded.quoteVolume,
        traded.trades,
        traded.takerBuyVolume,
        traded.takerBuyQuote
      )
    const open = priceAt(b, openMs)
    const close = priceAt(b, openMs + BAR_MS)
    const r = rng(hash(`${b.s.symbol}/${openMs}`))
    const high = Math.max(open, close) * (1 + r() * 0.004)
    const low = Math.min(open, close) * (1 - r() * 0.004)
    const volume = b.oi * (0.01 + r() * 0.05)
    const quoteVolume = volume * (open + close) * 0.5
    const buy = 0.3 + r() * 0.4
    return row(
      open,
      high,
      low,
      close,
      volume,
      quoteVolume,
      Math.round(volume / 10) + 1,
      volume * buy,
      quoteVolume * buy
    )
  }
  /** Grid times `step` apart in [from, to], the first `limit` (from given) or the last `limit`. */
  const grid = (from: number | undefined, to: number, step: number, limit: number): Array<number> => {
    const out: Array<number> = []
    if (from !== undefined) {
      for (let t = Math.ceil(from / step) * step; t <= to && out.length < limit; t += step) out.push(t)
      return out
    }
    for (let t = Math.floor(to / step) * step; out.length < limit; t -= step) out.unshift(t)
    return out
  }
  const num = (q: URLSearchParams, name: string): number | undefined => {
    const v = q.get(name)
    return v === null || v === "" ? undefined : Number(v)
  }

  const exchangeInfo = (nowMs: number) => ({
    timezone: "UTC",
    serverTime: nowMs,
    futuresType: "U_MARGINED",
    rateLimits: [
      { rateLimitType: "REQUEST_WEIGHT", interval: "MINUTE", intervalNum: 1, limit: WEIGHT_LIMIT_PER_MINUTE },
      { rateLimitType: "ORDERS", interval: "MINUTE", intervalNum: 1, limit: 1200 }
    ],
    exchangeFilters: [],
    assets: [
      { asset: "USDT", marginAvailable: true, autoAssetExchange: "-10000" },
      { asset: "USDC", marginAvailable: true, autoAssetExchange: "-10000" }
    ],
    symbols: symbols.map((s) => s.info)
  })

  type Answer = { readonly status: number; readonly body: unknown }
  const bad = (code: number, msg: string): Answer => ({ status: 400, body: { code, msg } })
  const route = (path: string, q: URLSearchParams, nowMs: number): Answer => {
    const symbolName = q.get("symbol") ?? undefined
    const b = symbolName === undefined ? undefined : books.get(symbolName)
    const needSymbol = (): Answer | undefined =>
      symbolName === undefined
        ? bad(-1102, "Mandatory parameter 'symbol' was not sent, was empty/null, or malformed.")
        : b === undefined
          ? bad(-1121, "Invalid symbol.")
          : undefined
    switch (path) {
      case "/fapi/v1/ping":
        return { status: 200, body: {} }
      case "/fapi/v1/time":
        return { status: 200, body: { serverTime: nowMs } }
      case "/fapi/v1/exchangeInfo":
        return { status: 200, body: exchangeInfo(nowMs) }
      case "/api/v3/exchangeInfo":
        return {
          status: 200,
          body: { timezone: "UTC", serverTime: nowMs, rateLimits: [], exchangeFilters: [], symbols: [] }
        }
      case "/fapi/v1/fundingInfo":
        return {
          status: 200,
          body: symbols
            .filter((s) => s.fundingIntervalHours !== 8)
            .map((s) => ({
              symbol: s.symbol,
              adjustedFundingRateCap: "0.02000000",
              adjustedFundingRateFloor: "-0.02000000",
              fundingIntervalHours: s.fundingIntervalHours,
              disclaimer: false
            }))
        }
      case "/fapi/v1/klines": {
        const missing = needSymbol()
        if (missing !== undefined) return missing
        if (q.get("interval") !== "15m") return bad(-1120, "Invalid interval.")
        const limit = Math.min(1500, num(q, "limit") ?? 500)
        const to = Math.min(num(q, "endTime") ?? nowMs, nowMs)
        const times = grid(num(q, "startTime"), to, BAR_MS, limit)
        return { status: 200, body: times.map((t) => kline(b as Book, t)) }
      }
      case "/fapi/v1/fundingRate": {
        const missing = needSymbol()
        if (missing !== undefined) return missing
        const book = b as Book
        const every = book.s.fundingIntervalHours * HOUR_MS
        const limit = Math.min(1000, num(q, "limit") ?? 100)
        const to = Math.min(num(q, "endTime") ?? nowMs, nowMs)
        const times = grid(num(q, "startTime"), to, every, limit)
        return {
          status: 200,
          body: times.map((t) => {
            const r = rng(hash(`${book.s.symbol}/funding/${t}`))
            return {
              symbol: book.s.symbol,
              fundingTime: t,
              fundingRate: ((r() - 0.3) * 0.0004).toFixed(8),
              markPrice: fmt(priceAt(book, t), Math.max(8, book.s.decimals))
            }
          })
        }
      }
      case "/fapi/v1/premiumIndex": {
        const one = (book: Book) => {
          const d = markDecimals(book)
          return {
            symbol: book.s.symbol,
            markPrice: fmt(markOf(book), d),
            indexPrice: fmt(indexOf(book), d),
            estimatedSettlePrice: fmt(markOf(book), d),
            lastFundingRate: book.fundingRate.toFixed(8),
            interestRate: "0.00010000",
            nextFundingTime: nextFundingMs(book, nowMs),
            time: nowMs
          }
        }
        if (symbolName !== undefined)
          return b === undefined ? bad(-1121, "Invalid symbol.") : { status: 200, body: one(b) }
        return { status: 200, body: [...books.values()].filter((x) => !x.stopped).map(one) }
      }
      case "/fapi/v1/openInterest": {
        const missing = needSymbol()
        if (missing !== undefined) return missing
        const book = b as Book
        book.oi *= 1 + (book.random() - 0.5) * 0.002
        return { status: 200, body: { openInterest: book.oi.toFixed(3), symbol: book.s.symbol, time: nowMs } }
      }
      case "/futures/data/openInterestHist": {
        const missing = needSymbol()
        if (missing !== undefined) return missing
        if (q.get("period") !== "15m") return bad(-1120, "Invalid period.")
        const book = b as Book
        const limit = Math.min(500, num(q, "limit") ?? 30)
        const to = Math.min(num(q, "endTime") ?? nowMs, nowMs)
        // Binance keeps the last 30 days.
        const from = Math.max(num(q, "startTime") ?? 0, nowMs - 30 * 24 * HOUR_MS)
        const times = grid(num(q, "startTime") === undefined ? undefined : from, to, BAR_MS, limit)
        return {
          status: 200,
          body: times.map((t) => {
            const oi = book.oi * (1 + 0.1 * Math.sin(t / (9 * HOUR_MS) + (book.waves[0]?.[2] ?? 0)))
            return {
              symbol: book.s.symbol,
              sumOpenInterest: oi.toFixed(8),
              sumOpenInterestValue: (oi * priceAt(book, t)).toFixed(8),
              CMCCirculatingSupply: "0",
              timestamp: t
            }
          })
        }
      }
      case "/fapi/v1/depth": {
        const missing = needSymbol()
        if (missing !== undefined) return missing
        const book = b as Book
        const limit = Math.min(1000, num(q, "limit") ?? 500)
        const q0 = current(book) as PublishedQuote
        const d = book.s.decimals
        const r = rng(hash(`${book.s.symbol}/depth/${q0.u}`))
        const bids: Array<[string, string]> = [[fmt(q0.bid, d), qtyText(q0.bidQty)]]
        const asks: Array<[string, string]> = [[fmt(q0.ask, d), qtyText(q0.askQty)]]
        for (let k = 1; k < limit; k++) {
          bids.push([fmt(priceOf(book, book.bidTicks - k), d), qtyText(1 + r() * 800)])
          asks.push([fmt(priceOf(book, book.bidTicks + book.spreadTicks + k), d), qtyText(1 + r() * 800)])
        }
        return { status: 200, body: { lastUpdateId: q0.u, E: nowMs, T: q0.sentMs, bids, asks } }
      }
      default:
        return { status: 404, body: { code: -5000, msg: `Path ${path}, Method GET is invalid` } }
    }
  }

  const onRest = (req: IncomingMessage, res: ServerResponse) => {
    const nowMs = clock()
    const url = new URL(req.url ?? "/", "http://127.0.0.1")
    const path = url.pathname
    const weight = weightOf(path, url.searchParams)
    const counted = byPath[path] ?? { requests: 0, weight: 0 }
    byPath[path] = counted
    counted.requests++
    const reply = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      log.push({ t: nowMs, path, symbol: url.searchParams.get("symbol") ?? undefined, weight, status })
      res.writeHead(status, {
        "Content-Type": "application/json",
        "X-MBX-USED-WEIGHT-1M": String(weightLastMinute(nowMs)),
        ...headers
      })
      res.end(JSON.stringify(body))
    }
    if (refuse429)
      return reply(
        429,
        { code: -1003, msg: "Too many requests; please use the websocket for live updates to avoid polling the API." },
        { "Retry-After": "5" }
      )
    if (path.startsWith("/fapi/") || path.startsWith("/futures/")) {
      if (enforceWeight && weightLastMinute(nowMs) + weight > WEIGHT_LIMIT_PER_MINUTE) {
        limited++
        return reply(
          429,
          {
            code: -1003,
            msg: `Too many requests; current limit of IP(127.0.0.1) is ${WEIGHT_LIMIT_PER_MINUTE} requests per minute.`
          },
          { "Retry-After": "60" }
        )
      }
      spent.push({ t: nowMs, w: weight })
    }
    counted.weight += weight
    const a = route(path, url.searchParams, nowMs)
    reply(a.status, a.body)
  }
  const restServer = createServer((req, res) => {
    req.resume()
    req.on("end", () => onRest(req, res))
  })
  const restSockets = new Set<Socket>()
  restServer.on("connection", (s) => {
    restSockets.add(s)
    s.on("close", () => restSockets.delete(s))
  })

  const [restPort, wsPort] = await Promise.all([listen(restServer), listen(wsHttp)])

  const matches = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b))

  return {
    restUrl: `http://127.0.0.1:${restPort}`,
    wsUrl: `ws://127.0.0.1:${wsPort}`,
    symbols,
    symbol: (s) => books.get(s)?.s,
    quote: (s) => {
      const b = books.get(s)
      return b === undefined ? undefined : current(b)
    },
    now: clock,
    bar: (s, openMs) => {
      const b = books.get(s)
      const bar = b?.bars.get(openMs)
      if (b === undefined || bar === undefined) return undefined
      // As the kline frames and REST print them (the symbol's decimals).
      const d = b.s.decimals
      const at = (x: number) => Number(fmt(x, d))
      return { open: at(bar.open), high: at(bar.high), low: at(bar.low), close: at(bar.close), volume: bar.volume }
    },
    stalenessOf: (s, bid, ask, realMs) => {
      const b = books.get(s)
      if (b === undefined) return undefined
      const atMs = realMs + clockOffsetMs
      for (let k = 1; k <= b.count; k++) {
        const q = b.history[(b.head - k + historySize) % historySize] as PublishedQuote
        if (q.sentMs > atMs) continue
        if (!matches(q.bid, bid) || !matches(q.ask, ask)) continue
        if (q.replacedMs === undefined || q.replacedMs >= atMs) return 0
        return atMs - q.replacedMs
      }
      return undefined
    },
    dropStreams: () => {
      for (const c of conns) c.socket.terminate()
    },
    refuseConnections: (on) => {
      refusing = on
      if (on) for (const c of conns) c.socket.terminate()
    },
    rest429: (on) => {
      refuse429 = on
    },
    stopSymbol: (s) => {
      const b = books.get(s)
      if (b === undefined) return
      b.stopped = true
      schedule(b)
    },
    resumeSymbol: (s) => {
      const b = books.get(s)
      if (b === undefined) return
      b.stopped = false
      schedule(b)
    },
    setMeanInterval: (ms) => {
      meanIntervalMs = ms
      for (const b of books.values()) schedule(b)
    },
    blast: (frames, bufferBytes = 4 * 1024 * 1024) =>
      new Promise((resolve) => {
        const t0 = performance.now()
        const targets = [...conns]
          .filter((c) => c.socket.readyState === 1)
          .map((c) => ({
            c,
            books: [...c.topics].flatMap((t) => {
              const m = /^([a-z0-9]+)@bookTicker$/.exec(t)
              const b = m === null ? undefined : byLower.get(m[1] as string)
              return b === undefined ? [] : [b]
            }),
            k: 0
          }))
          .filter((x) => x.books.length > 0)
        let sent = 0
        if (targets.length === 0) return resolve({ sent: 0, ms: 0 })
        const pump = () => {
          const nowMs = Date.now()
          let progressed = false
          for (const x of targets) {
            if (x.c.socket.readyState !== 1) continue
            // Up to 512 frames in one write to the TCP socket (the `ws` package writes each frame on its own).
            const raw = (x.c.socket as unknown as { _socket?: Socket })._socket
            raw?.cork()
            while (sent < frames && x.c.socket.bufferedAmount < bufferBytes) {
              const b = x.books[x.k % x.books.length] as Book
              x.k++
              const bidTicks = b.bidTicks + (x.k % 3) - 1
              x.c.socket.send(
                bookFrame(
                  b,
                  {
                    bid: Number(fmt(priceOf(b, bidTicks), b.s.decimals)),
                    ask: Number(fmt(priceOf(b, bidTicks + 1), b.s.decimals)),
                    bidQty: 1 + (x.k % 97),
                    askQty: 1 + (x.k % 89),
                    sentMs: nowMs,
                    replacedMs: undefined,
                    u: nextU++
                  },
                  x.c.combined
                )
              )
              sent++
              progressed = true
              if (sent % 512 === 0) break
            }
            raw?.uncork()
          }
          if (sent >= frames || targets.every((x) => x.c.socket.readyState !== 1))
            return resolve({ sent, ms: performance.now() - t0 })
          if (progressed) setImmediate(pump)
          else setTimeout(pump, 1)
        }
        pump()
      }),
    rest: {
      byPath: () => byPath,
      log,
      limited: () => limited,
      weightLastMinute: () => weightLastMinute()
    },
    ws: {
      connections: () => [...conns].map((c) => ({ id: c.id, path: c.path, topics: c.topics })),
      subscribers: (topic) => subscribers.get(topic)?.size ?? 0,
      subscribedSymbols: () => {
        let n = 0
        for (const b of books.values()) if ((subscribers.get(b.topic)?.size ?? 0) > 0) n++
        return n
      },
      stats: () => ({ ...wsStats })
    },
    moves: () => moves,
    close: async () => {
      clearInterval(markTimer)
      clearInterval(pingTimer)
      for (const b of books.values()) {
        b.stopped = true
        if (b.timer !== undefined) clearTimeout(b.timer)
      }
      for (const c of conns) c.socket.terminate()
      for (const s of restSockets) s.destroy()
      for (const s of wsSockets) s.destroy()
      await new Promise<void>((r) => wss.close(() => r()))
      await Promise.all([
        new Promise<void>((r) => restServer.close(() => r())),
        new Promise<void>((r) => wsHttp.close(() => r()))
      ])
    }
  }
}
