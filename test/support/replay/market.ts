/**
 * The market behind the replay venues of Bybit, OKX and Hyperliquid (`bybit-venue.ts`, `okx-venue.ts`,
 * `hyperliquid-venue.ts`; the Binance one, `binance-venue.ts`, keeps its own copy of the same walk): one book per
 * listed perpetual, moving on its own timer (mean `meanIntervalMs`, each wait drawn between half and one and a
 * half of it) by a random walk of one or two ticks with a one- or two-tick spread and random sizes; every move a
 * trade at the new mid in the symbol's 15-minute bar; a mark at the mid, an index a hair off it, a funding rate
 * and an open interest drifting slowly. Each venue turns a move into its own frames (`onMove`) and answers its
 * REST from the same state, so the streams and REST agree.
 *
 * What was sent and when: every quote a book published is kept (a ring of `historyPerSymbol`) with the time the
 * venue sent it and the time it replaced it, so `stalenessOf` says how old a quote someone shows is at a moment: 0
 * while it is the venue's current quote, else how long ago the venue replaced it (the "book age at answer time").
 *
 * While the books stand still (`setMeanInterval(0)`) the venues pause their periodic pushes (mark, context,
 * funding) too, so a quiet market sends nothing but answers.
 *
 * Symbols (`VenueSymbol`): the venue's name, the asset's ticker, the tokens one unit of the venue's price and size
 * stands for (`kPEPE`: 1,000), the contract size in venue units (OKX quotes sizes in contracts), the price grid and
 * the listing entry the venue's instrument list serves.
 */
import { hash, rng } from "./symbols.ts"

export const BAR_MS = 15 * 60_000
export const HOUR_MS = 3_600_000
/** Bars kept per symbol (about two days of 15-minute bars). */
const KEPT_BARS = 200

/** One listed perpetual of a replay venue. */
export interface VenueSymbol {
  /** The venue's name for it: `BTCUSDT` (Bybit), `BTC-USDT-SWAP` (OKX), `BTC` or `kPEPE` (Hyperliquid). */
  readonly symbol: string
  /** The asset's ticker (`PEPE`). */
  readonly ticker: string
  /** Tokens one unit of the venue's price and size stands for (`kPEPE`, `1000PEPEUSDT`: 1,000). */
  readonly tokensPerUnit: number
  /** Venue units per contract (OKX's `ctVal x ctMult`; 1 where sizes are in coins). */
  readonly contractSize: number
  /** The price grid, as text and as a number, and the decimals of a price on it. */
  readonly tickText: string
  readonly tick: number
  readonly decimals: number
  /** The starting price, in ticks. */
  readonly startTicks: number
  readonly fundingIntervalHours: number
  /** The instrument-list entry served for it. */
  readonly info: Record<string, unknown>
}

/** A top of book as the venue published it (prices in the venue's units, sizes in venue units). */
export interface PublishedQuote {
  readonly bid: number
  readonly ask: number
  readonly bidQty: number
  readonly askQty: number
  /** When the venue sent it (epoch ms; the event time its frames carry). */
  readonly sentMs: number
  /** When the venue replaced it with another (undefined while it is current). */
  replacedMs: number | undefined
  /** The venue's update number (monotonic across the venue). */
  readonly seq: number
}

/** A 15-minute bar as the venue trades it (every book move a trade at the mid). */
export interface Bar {
  readonly openMs: number
  readonly open: number
  high: number
  low: number
  close: number
  /** Base volume (venue units), quote volume (USD), taker-buy base volume, trades. */
  volume: number
  quoteVolume: number
  takerBuyVolume: number
  trades: number
}

export interface MarketBook {
  readonly s: VenueSymbol
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
  /** When the venue last pushed this book's bar (its throttle). */
  lastKlineMs: number
  /** The venue's first bar (where the synthetic history ends) and its open. */
  anchorSlotMs: number
  anchorOpen: number
  /** Open interest of one side (venue units), drifting. */
  oi: number
  fundingRate: number
  /** Wave parameters of the synthetic history: [period ms, amplitude, phase]. */
  readonly waves: ReadonlyArray<readonly [number, number, number]>
}

export interface MarketOptions {
  /** Each book's mean time between moves (ms, default 1,000); 0: books do not move. */
  readonly meanIntervalMs?: number
  /** Quotes kept per symbol for `stalenessOf` (default 4,096). */
  readonly historyPerSymbol?: number
  readonly seed?: number
}

export interface Market {
  readonly symbols: ReadonlyArray<VenueSymbol>
  readonly books: ReadonlyMap<string, MarketBook>
  readonly current: (b: MarketBook) => PublishedQuote
  readonly mid: (b: MarketBook) => number
  readonly mark: (b: MarketBook) => number
  readonly index: (b: MarketBook) => number
  readonly priceOf: (b: MarketBook, ticks: number) => number
  /** A price of the book's grid as the venue writes it. */
  readonly text: (b: MarketBook, price: number) => string
  readonly nextFundingMs: (b: MarketBook, nowMs: number) => number
  /** The price at `t` (before the venue started: the synthetic history; since: the traded bar's open). */
  readonly priceAt: (b: MarketBook, t: number) => number
  /** The bar opening at `openMs`: traded (the forming one as it stands) or synthetic history before the start. */
  readonly barOf: (b: MarketBook, openMs: number) => Bar
  /** The bar forming now. */
  readonly formingBar: (b: MarketBook, nowMs: number) => Bar
  /** The funding rate that settled at `t` (deterministic per symbol and time). */
  readonly settledRate: (b: MarketBook, t: number) => number
  readonly stalenessOf: (symbol: string, bid: number, ask: number, atMs: number) => number | undefined
  /** Called on every move with the new quote and, when the move opened a new bar, the bar it closed. */
  readonly onMove: (
    listener: (b: MarketBook, q: PublishedQuote, closed: Bar | undefined, nowMs: number) => void
  ) => void
  readonly setMeanInterval: (ms: number) => void
  /** Moves a book once now (as its timer would), its frames sent by the venue's `onMove` (benches' blasts). */
  readonly moveNow: (b: MarketBook) => void
  /** Whether the books stand still (mean interval 0): the venues pause their periodic pushes too. */
  readonly quiet: () => boolean
  readonly stopSymbol: (symbol: string) => void
  readonly resumeSymbol: (symbol: string) => void
  readonly moves: () => number
  /** A fresh venue update number. */
  readonly nextSeq: () => number
  readonly close: () => void
}

const matches = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b))

export const makeMarket = (symbols: ReadonlyArray<VenueSymbol>, options: MarketOptions = {}): Market => {
  const seed = options.seed ?? 20261120
  let meanIntervalMs = options.meanIntervalMs ?? 1_000
  const historySize = options.historyPerSymbol ?? 4_096
  let seq = 1_000_000
  let moves = 0
  const listeners: Array<(b: MarketBook, q: PublishedQuote, closed: Bar | undefined, nowMs: number) => void> = []

  const books = new Map<string, MarketBook>()
  for (const s of symbols) {
    const random = rng(seed ^ hash(`${s.symbol}/book`))
    const price = s.startTicks * s.tick
    books.set(s.symbol, {
      s,
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
      anchorOpen: price,
      oi: (1e6 + random() * 5e8) / price,
      fundingRate: (random() - 0.3) * 0.0004,
      waves: [
        [6 * HOUR_MS, 0.004 + random() * 0.006, random() * 2 * Math.PI],
        [41 * HOUR_MS, 0.01 + random() * 0.02, random() * 2 * Math.PI],
        [5.3 * 24 * HOUR_MS, 0.02 + random() * 0.04, random() * 2 * Math.PI],
        [23 * 24 * HOUR_MS, 0.05 + random() * 0.1, random() * 2 * Math.PI]
      ]
    })
  }
  const priceOf = (b: MarketBook, ticks: number) => ticks * b.s.tick
  const text = (b: MarketBook, price: number) => price.toFixed(b.s.decimals)
  const current = (b: MarketBook): PublishedQuote =>
    b.history[(b.head - 1 + historySize) % historySize] as PublishedQuote
  const mid = (b: MarketBook): number => priceOf(b, b.bidTicks + b.spreadTicks / 2)

  const record = (b: MarketBook, nowMs: number): PublishedQuote => {
    if (b.count > 0) current(b).replacedMs = nowMs
    const q: PublishedQuote = {
      bid: Number(text(b, priceOf(b, b.bidTicks))),
      ask: Number(text(b, priceOf(b, b.bidTicks + b.spreadTicks))),
      bidQty: b.bidQty,
      askQty: b.askQty,
      sentMs: nowMs,
      replacedMs: undefined,
      seq: seq++
    }
    b.history[b.head] = q
    b.head = (b.head + 1) % historySize
    b.count = Math.min(historySize, b.count + 1)
    return q
  }

  const tradedBar = (b: MarketBook, slotMs: number): Bar => {
    let bar = b.bars.get(slotMs)
    if (bar !== undefined) return bar
    const m = mid(b)
    bar = {
      openMs: slotMs,
      open: m,
      high: m,
      low: m,
      close: m,
      volume: 0,
      quoteVolume: 0,
      takerBuyVolume: 0,
      trades: 0
    }
    b.bars.set(slotMs, bar)
    if (b.bars.size > KEPT_BARS) b.bars.delete(b.bars.keys().next().value as number)
    return bar
  }
  /** A trade at the new mid in the bar of now; returns the bar before it when this trade opened a new one. */
  const trade = (b: MarketBook, nowMs: number): Bar | undefined => {
    const slotMs = Math.floor(nowMs / BAR_MS) * BAR_MS
    const before = b.bars.has(slotMs) ? undefined : b.bars.get(slotMs - BAR_MS)
    const bar = tradedBar(b, slotMs)
    const m = mid(b)
    bar.close = m
    bar.high = Math.max(bar.high, m)
    bar.low = Math.min(bar.low, m)
    const qty = b.oi * (0.00002 + b.random() * 0.0001)
    bar.volume += qty
    bar.quoteVolume += qty * m
    if (b.random() < 0.5) bar.takerBuyVolume += qty
    bar.trades++
    return before
  }

  const move = (b: MarketBook) => {
    const r = b.random
    const step = (r() < 0.5 ? -1 : 1) * (r() < 0.7 ? 1 : 2)
    b.bidTicks = Math.max(10, b.bidTicks + step)
    b.spreadTicks = r() < 0.8 ? 1 : 2
    b.bidQty = Math.max(0.001, Math.round(b.bidQty * (0.7 + r() * 0.6) * 1000) / 1000 + 1)
    b.askQty = Math.max(0.001, Math.round(b.askQty * (0.7 + r() * 0.6) * 1000) / 1000 + 1)
    if (r() < 0.05) b.oi *= 1 + (r() - 0.5) * 0.002
    const nowMs = Date.now()
    const q = record(b, nowMs)
    moves++
    const closed = trade(b, nowMs)
    for (const l of listeners) l(b, q, closed, nowMs)
  }
  const schedule = (b: MarketBook) => {
    if (b.timer !== undefined) clearTimeout(b.timer)
    b.timer = undefined
    if (b.stopped || meanIntervalMs <= 0) return
    b.timer = setTimeout(
      () => {
        b.timer = undefined
        move(b)
        schedule(b)
      },
      meanIntervalMs * (0.5 + b.random())
    )
  }
  {
    const nowMs = Date.now()
    for (const b of books.values()) {
      record(b, nowMs)
      b.anchorSlotMs = Math.floor(nowMs / BAR_MS) * BAR_MS
      b.anchorOpen = tradedBar(b, b.anchorSlotMs).open
    }
    for (const b of books.values()) schedule(b)
  }

  const priceAt = (b: MarketBook, t: number): number => {
    if (t <= b.anchorSlotMs) {
      const wave = (x: number) =>
        b.waves.reduce((sum, [period, amp, phase]) => sum + amp * Math.sin((2 * Math.PI * x) / period + phase), 0)
      return b.anchorOpen * Math.exp(wave(t) - wave(b.anchorSlotMs))
    }
    return b.bars.get(Math.floor(t / BAR_MS) * BAR_MS)?.open ?? mid(b)
  }
  const barOf = (b: MarketBook, openMs: number): Bar => {
    if (openMs >= b.anchorSlotMs) return tradedBar(b, openMs)
    const open = priceAt(b, openMs)
    const close = priceAt(b, openMs + BAR_MS)
    const r = rng(hash(`${b.s.symbol}/${openMs}`))
    const volume = b.oi * (0.01 + r() * 0.05)
    return {
      openMs,
      open,
      high: Math.max(open, close) * (1 + r() * 0.004),
      low: Math.min(open, close) * (1 - r() * 0.004),
      close,
      volume,
      quoteVolume: volume * (open + close) * 0.5,
      takerBuyVolume: volume * (0.3 + r() * 0.4),
      trades: Math.round(volume / 10) + 1
    }
  }

  return {
    symbols,
    books,
    current,
    mid,
    mark: mid,
    index: (b) => mid(b) * (1 + ((hash(`${b.s.symbol}/${b.bidTicks}`) % 200) - 100) / 1e6),
    priceOf,
    text,
    nextFundingMs: (b, nowMs) => {
      const every = b.s.fundingIntervalHours * HOUR_MS
      return Math.floor(nowMs / every) * every + every
    },
    priceAt,
    barOf,
    formingBar: (b, nowMs) => tradedBar(b, Math.floor(nowMs / BAR_MS) * BAR_MS),
    settledRate: (b, t) => (rng(hash(`${b.s.symbol}/funding/${t}`))() - 0.3) * 0.0004,
    stalenessOf: (symbol, bid, ask, atMs) => {
      const b = books.get(symbol)
      if (b === undefined) return undefined
      for (let k = 1; k <= b.count; k++) {
        const q = b.history[(b.head - k + historySize) % historySize] as PublishedQuote
        if (q.sentMs > atMs) continue
        if (!matches(q.bid, bid) || !matches(q.ask, ask)) continue
        if (q.replacedMs === undefined || q.replacedMs >= atMs) return 0
        return atMs - q.replacedMs
      }
      return undefined
    },
    onMove: (listener) => {
      listeners.push(listener)
    },
    moveNow: move,
    setMeanInterval: (ms) => {
      meanIntervalMs = ms
      for (const b of books.values()) schedule(b)
    },
    quiet: () => meanIntervalMs <= 0,
    stopSymbol: (symbol) => {
      const b = books.get(symbol)
      if (b === undefined) return
      b.stopped = true
      schedule(b)
    },
    resumeSymbol: (symbol) => {
      const b = books.get(symbol)
      if (b === undefined) return
      b.stopped = false
      schedule(b)
    },
    moves: () => moves,
    nextSeq: () => seq++,
    close: () => {
      for (const b of books.values()) {
        b.stopped = true
        if (b.timer !== undefined) clearTimeout(b.timer)
      }
    }
  }
}
