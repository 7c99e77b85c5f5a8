/**
 * The four replay venues side by side (`binance-venue.ts`, `bybit-venue.ts`, `okx-venue.ts`,
 * `hyperliquid-venue.ts`), each listing its own assets (no ticker on two venues: every answer's bid and ask come
 * from one known venue), and the environment of a live service pointed at all four. Binance takes the first names
 * of its recorded list, Bybit, OKX and Hyperliquid then take the names of theirs that no venue before them lists.
 */
import { type ReplayVenue, startBinanceReplay } from "./binance-venue.ts"
import { startBybitReplay } from "./bybit-venue.ts"
import { startHyperliquidReplay } from "./hyperliquid-venue.ts"
import { startOkxReplay } from "./okx-venue.ts"
import type { ReplayVenueBase } from "./serve.ts"
import { relatedTickers } from "./venue-symbols.ts"

export type VenueName = "binance" | "bybit" | "okx" | "hyperliquid"
export const VENUES: ReadonlyArray<VenueName> = ["binance", "bybit", "okx", "hyperliquid"]

export interface FourVenueOptions {
  /** Perpetuals per venue (default 300, 300, 250, 150: 1,000 in all). */
  readonly counts?: Partial<Record<VenueName, number>>
  /** Each book's mean time between moves (ms, default 1,000). */
  readonly meanIntervalMs?: number
  readonly syntheticOnly?: boolean
  /** Quotes each venue keeps per symbol for `stalenessOf` (default 4,096). */
  readonly historyPerSymbol?: number
}

export interface FourVenues {
  readonly venues: Readonly<Record<VenueName, ReplayVenueBase>>
  /** The Binance replay itself (its REST log, weights and controls). */
  readonly binance: ReplayVenue
  /** Every listed perpetual with the venue listing it. */
  readonly symbols: ReadonlyArray<{
    readonly venue: VenueName
    readonly symbol: string
    readonly ticker: string
    readonly tokensPerUnit: number
  }>
  readonly venueOf: (symbol: string) => VenueName | undefined
  /** `stalenessOf` of the venue listing `symbol`. */
  readonly stalenessOf: (symbol: string, bid: number, ask: number, atMs: number) => number | undefined
  /** `MARKET_DATA_*` variables pointing a live service at the four. */
  readonly env: () => Record<string, string>
  readonly setMeanInterval: (ms: number) => void
  readonly frames: () => Readonly<
    Record<VenueName, { readonly total: number; readonly byKind: Readonly<Record<string, number>> }>
  >
  readonly close: () => Promise<void>
}

/** The Binance replay seen through the common interface. */
export const binanceBase = (v: ReplayVenue): ReplayVenueBase => ({
  venue: "binance",
  restUrl: v.restUrl,
  wsUrl: v.wsUrl,
  symbols: v.symbols,
  stalenessOf: v.stalenessOf,
  streamedSymbols: () => {
    const out = new Set<string>()
    for (const c of v.ws.connections())
      for (const t of c.topics) if (t.endsWith("@bookTicker")) out.add(t.slice(0, -"@bookTicker".length).toUpperCase())
    return [...out]
  },
  barsAsked: () => [
    ...new Set(v.rest.log.flatMap((e) => (e.path === "/fapi/v1/klines" && e.symbol !== undefined ? [e.symbol] : [])))
  ],
  dropStreams: v.dropStreams,
  refuseConnections: v.refuseConnections,
  setMeanInterval: v.setMeanInterval,
  blast: async (frames) => {
    // Binance's blast sends book frames only.
    const r = await v.blast(frames)
    return { sent: r.sent, book: r.sent, ms: r.ms }
  },
  frames: () => {
    const s = v.ws.stats()
    return { total: s.framesSent, byKind: { book: s.bookFrames, kline: s.klineFrames, mark: s.markFrames } }
  },
  connections: () => v.ws.connections().length,
  close: v.close
})

export const startFourVenues = async (options: FourVenueOptions = {}): Promise<FourVenues> => {
  const counts = { binance: 300, bybit: 300, okx: 250, hyperliquid: 150, ...options.counts }
  const meanIntervalMs = options.meanIntervalMs ?? 1_000
  const synthetic = {
    ...(options.syntheticOnly === undefined ? {} : { syntheticOnly: options.syntheticOnly }),
    ...(options.historyPerSymbol === undefined ? {} : { historyPerSymbol: options.historyPerSymbol })
  }
  const binance = await startBinanceReplay({ symbols: counts.binance, meanIntervalMs, ...synthetic })
  const taken = new Set(binance.symbols.flatMap((s) => relatedTickers(s.ticker)))
  // Binance's synthetic names (`C<k>`) are taken too, whichever it used.
  const bybit = await startBybitReplay({ symbols: counts.bybit, taken, meanIntervalMs, ...synthetic })
  const okx = await startOkxReplay({ symbols: counts.okx, taken, meanIntervalMs, ...synthetic })
  const hyperliquid = await startHyperliquidReplay({ symbols: counts.hyperliquid, taken, meanIntervalMs, ...synthetic })
  const venues: Record<VenueName, ReplayVenueBase> = { binance: binanceBase(binance), bybit, okx, hyperliquid }
  const symbols = VENUES.flatMap((venue) =>
    venues[venue].symbols.map((s) => ({ venue, symbol: s.symbol, ticker: s.ticker, tokensPerUnit: s.tokensPerUnit }))
  )
  const byName = new Map(symbols.map((s) => [s.symbol, s.venue]))
  return {
    venues,
    binance,
    symbols,
    venueOf: (symbol) => byName.get(symbol),
    stalenessOf: (symbol, bid, ask, atMs) => {
      const venue = byName.get(symbol)
      return venue === undefined ? undefined : venues[venue].stalenessOf(symbol, bid, ask, atMs)
    },
    env: () => ({
      MARKET_DATA_LIVE_VENUES: VENUES.join(","),
      MARKET_DATA_BINANCE_BASE_URL: binance.restUrl,
      MARKET_DATA_BINANCE_WS_BASE_URL: binance.wsUrl,
      MARKET_DATA_BYBIT_BASE_URL: bybit.restUrl,
      MARKET_DATA_BYBIT_WS_BASE_URL: bybit.wsUrl,
      MARKET_DATA_OKX_BASE_URL: okx.restUrl,
      MARKET_DATA_OKX_WS_BASE_URL: okx.wsUrl,
      MARKET_DATA_HYPERLIQUID_BASE_URL: hyperliquid.restUrl,
      MARKET_DATA_HYPERLIQUID_WS_BASE_URL: hyperliquid.wsUrl
    }),
    setMeanInterval: (ms) => {
      for (const v of VENUES) venues[v].setMeanInterval(ms)
    },
    frames: () => ({
      binance: venues.binance.frames(),
      bybit: bybit.frames(),
      okx: okx.frames(),
      hyperliquid: hyperliquid.frames()
    }),
    close: async () => {
      await Promise.all(VENUES.map((v) => venues[v].close()))
    }
  }
}
