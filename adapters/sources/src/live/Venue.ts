/**
 * What a live venue connector delivers, in the market model's units, and how venue symbols map to canonical
 * assets. Each connector (`venues/<venue>/Rest.ts`: Binance, Bybit, OKX, Hyperliquid) reads the venue's own JSON and
 * returns rows already converted: prices in USD per base token, volumes in base tokens, open interest, taker
 * volume and liquidations in USD, funding as a fraction per the venue's interval.
 *
 * Symbol mapping comes from the crypto universe's listings: the asset registry (`CryptoAssets[].listings`) by
 * default, live mode's asset directory when the feed is given one (`CryptoFeedOptions.universe`, with each
 * listing's multiplier as the directory read it, `Listing.tokensPerUnit`): `BTCUSDT` on Binance and Bybit,
 * `BTC-USDT-SWAP` on OKX, `BTC` on Hyperliquid all map to `crypto:bitcoin`. Multiplied listings quote a bundle
 * of tokens: `1000PEPEUSDT` (Binance, Bybit) and `kPEPE` (Hyperliquid) price 1,000 PEPE, so their prices are
 * divided by 1,000 and their quantities multiplied by 1,000 (`tokensPerUnit`). OKX counts quantities in
 * contracts of `ctVal x ctMult` base tokens each (`tokensPerContract`, from its instruments list).
 */
import type { BookSnapshot, FundingState } from "@market-data/core"
import { type CryptoAsset, CryptoAssets, type Listing } from "@market-data/core"
import type { Effect } from "effect"
import type { SourceError } from "./Http.ts"
import type { RequestLimiter } from "./Limiter.ts"

export const LiveVenues = ["binance", "bybit", "okx", "hyperliquid"] as const
export type LiveVenue = (typeof LiveVenues)[number]

/** One perpetual of a canonical asset on a venue, with its unit conversions. */
export interface Instrument {
  readonly assetId: string
  readonly venue: LiveVenue
  /** The venue's symbol. */
  readonly symbol: string
  /** Base tokens one unit of the venue's price and quantity stands for (1000PEPEUSDT, kPEPE: 1000; else 1). */
  readonly tokensPerUnit: number
  /** Base tokens per contract where the venue counts contracts (OKX: ctVal x ctMult); 1 elsewhere. */
  readonly tokensPerContract: number
  /** The settlement interval (ms), from the venue where it publishes one, else from the registry. */
  readonly fundingIntervalMs: number
  /**
   * Whether this venue is the asset's primary (its first listing's venue: the one whose 15-minute bars and book
   * are the asset's price). A stream may give its primaries more (Hyperliquid: their forming bar).
   */
  readonly primary?: boolean
}

/** What a venue says about one of its perpetuals (from its instruments list). */
export interface VenueListing {
  readonly symbol: string
  readonly tokensPerContract?: number
  readonly fundingIntervalMs?: number
}

export interface BarRow {
  readonly t: number
  readonly open: number
  readonly high: number
  readonly low: number
  readonly close: number
  /** Base tokens. */
  readonly volume: number
  /** Taker buy / sell volume in USD, where the kline carries it (Binance). */
  readonly takerBuyUsd?: number
  readonly takerSellUsd?: number
}

export interface FundingRow {
  readonly t: number
  readonly rate: number
  readonly intervalMs: number
}

export interface OpenInterestRow {
  readonly t: number
  readonly oiUsd: number
}

export interface TakerRow {
  readonly t: number
  readonly buyUsd: number
  readonly sellUsd: number
}

export interface LiquidationRow {
  readonly t: number
  readonly longUsd: number
  readonly shortUsd: number
}

/** A snapshot of one perpetual: mark and index price, open interest (USD) and the funding state. */
export interface TickerRow {
  readonly assetId: string
  readonly mark: number
  readonly index: number
  readonly oiUsd: number
  readonly funding: Omit<FundingState, "assetId" | "venue" | "t">
}

/**
 * One page of a ranged fetch: rows in time order, and where the next page starts (the end of the window the
 * answer covers completely; the caller stops once it reaches the end of its range).
 */
export interface Page<R> {
  readonly rows: ReadonlyArray<R>
  readonly nextMs: number
}

/**
 * The page of `rows` (already filtered to the window, time-ordered) from a request for at most `limit` rows of
 * the window ending at `windowEndMs`: a full answer continues after its last row, a short one covers the window.
 */
export const pageOf = <R extends { readonly t: number }>(
  rows: ReadonlyArray<R>,
  rawCount: number,
  limit: number,
  windowEndMs: number,
  stepMs: number
): Page<R> => {
  const last = rows[rows.length - 1]
  return { rows, nextMs: rawCount >= limit && last !== undefined ? last.t + stepMs : windowEndMs }
}

/** One venue's connector. Every method fetches through the venue's limiter and converts units. */
export interface VenueConnector {
  readonly venue: LiveVenue
  readonly limiter: RequestLimiter
  /** The venue's live perpetuals, by venue symbol. */
  readonly listings: Effect.Effect<ReadonlyMap<string, VenueListing>, SourceError>
  /**
   * The venue's whole instrument list as its endpoint answers it (every page joined), for the asset directory's
   * listing parsers (`Listings.ts`); fetched through the same limiter, timeout and error kinds.
   */
  readonly instrumentList?: Effect.Effect<unknown, SourceError>
  /** The venue's whole spot list as its endpoint answers it, for the directory's spot parsers (`Listings.ts`). */
  readonly spotInstrumentList?: Effect.Effect<unknown, SourceError>
  /** Closed 15-minute bars opening in `[fromMs, toMs)`, oldest first; one page (the caller pages on). */
  readonly bars: (i: Instrument, fromMs: number, toMs: number) => Effect.Effect<Page<BarRow>, SourceError>
  /** Funding settlements in `[fromMs, toMs)`, oldest first; one page. */
  readonly fundingHistory: (i: Instrument, fromMs: number, toMs: number) => Effect.Effect<Page<FundingRow>, SourceError>
  /** Mark, index, open interest and funding state of each instrument now (instruments the venue lacks are absent). */
  readonly tickers: (
    is: ReadonlyArray<Instrument>,
    nowMs: number
  ) => Effect.Effect<ReadonlyArray<TickerRow>, SourceError>
  /** The order book now (bids best first, asks best first), prices in USD per token, sizes in tokens. */
  readonly book: (i: Instrument, nowMs: number) => Effect.Effect<BookSnapshot, SourceError>
  /** What one `book` request spends of `limiter` (default 1): the books job plans its cycle with it. */
  readonly bookWeight?: number
  /** Open interest history (USD) on the 15-minute grid in `[fromMs, toMs)`, where the venue publishes it. */
  readonly openInterestHistory?: (
    i: Instrument,
    fromMs: number,
    toMs: number
  ) => Effect.Effect<Page<OpenInterestRow>, SourceError>
  /** Taker buy/sell volume (USD) per 15 minutes in `[fromMs, toMs)`, where published apart from the klines. */
  readonly takerFlow?: (i: Instrument, fromMs: number, toMs: number) => Effect.Effect<Page<TakerRow>, SourceError>
  /** Recent liquidations, where the venue publishes them over REST. */
  readonly liquidations?: (i: Instrument, nowMs: number) => Effect.Effect<ReadonlyArray<LiquidationRow>, SourceError>
  /** Whether klines carry taker volume (Binance): then `takerFlow` rows come with the bars. */
  readonly klinesCarryTakerFlow: boolean
  /**
   * The 15-minute bar still forming (opening at `slotMs`), as of now; undefined when the venue has none yet.
   * Its values change until it closes; the closed-bar fetch then rewrites it with the final ones.
   */
  readonly formingBar: (i: Instrument, slotMs: number) => Effect.Effect<BarRow | undefined, SourceError>
  /** How often the forming bar is refreshed (ms): each request's weight decides it. */
  readonly formingEveryMs: number
}

/**
 * Each settlement's interval from the gaps between settlements: the gap to the one before (the first: to the one
 * after), in whole hours from 1 to 8; `fallbackMs` for a lone row. For venues whose interval changed over time
 * (Hyperliquid settled every 8 hours before mid-2023) or differs per listing without being published (OKX).
 */
export const intervalsFromGaps = (times: ReadonlyArray<number>, fallbackMs: number): Array<number> =>
  times.map((t, k) => {
    const gap = k > 0 ? t - (times[k - 1] as number) : times.length > 1 ? (times[1] as number) - t : Number.NaN
    if (!Number.isFinite(gap)) return fallbackMs
    return Math.min(8, Math.max(1, Math.round(gap / 3_600_000))) * 3_600_000
  })

/** Base tokens per price/quantity unit of a venue symbol: 1000 for `1000PEPEUSDT` and `kPEPE`, else 1. */
export const tokensPerUnitOf = (venue: LiveVenue, symbol: string): number => {
  if ((venue === "binance" || venue === "bybit") && /^1000[A-Z]/.test(symbol)) return 1000
  if (venue === "hyperliquid" && /^k[A-Z]/.test(symbol)) return 1000
  return 1
}

/** The registry's perpetual listings on `venue`, each with its canonical asset. */
export const registryListings = (
  venue: LiveVenue,
  assetIds?: ReadonlyArray<string>
): ReadonlyArray<{ readonly assetId: string; readonly listing: Listing }> =>
  perpListingsOf(CryptoAssets, venue, assetIds)

/** The perpetual listings on `venue` of `assets` (the registry, or live mode's directory universe). */
export const perpListingsOf = (
  assets: ReadonlyArray<CryptoAsset>,
  venue: LiveVenue,
  assetIds?: ReadonlyArray<string>
): ReadonlyArray<{ readonly assetId: string; readonly listing: Listing; readonly primary: boolean }> =>
  assets
    .filter((a) => assetIds === undefined || assetIds.includes(a.id))
    .flatMap((a) =>
      a.listings
        .filter((l) => l.venue === venue && l.market === "perp")
        .map((listing) => ({ assetId: a.id, listing, primary: a.listings[0]?.venue === venue }))
    )

/** The canonical asset of a venue symbol, or undefined. */
export const assetOfSymbol = (venue: LiveVenue, symbol: string): string | undefined =>
  registryListings(venue).find((l) => l.listing.symbol === symbol)?.assetId

/**
 * Instruments of `venue` for the registry's listings that the venue lists now; the registry listings it does
 * not list are returned apart (a venue dropping a symbol).
 */
export const instrumentsOf = (
  venue: LiveVenue,
  listed: ReadonlyMap<string, VenueListing>,
  assetIds?: ReadonlyArray<string>,
  universe: ReadonlyArray<CryptoAsset> = CryptoAssets
): { readonly instruments: ReadonlyArray<Instrument>; readonly missing: ReadonlyArray<string> } => {
  const instruments: Array<Instrument> = []
  const missing: Array<string> = []
  for (const { assetId, listing, primary } of perpListingsOf(universe, venue, assetIds)) {
    const v = listed.get(listing.symbol)
    if (v === undefined) {
      missing.push(listing.symbol)
      continue
    }
    instruments.push({
      assetId,
      venue,
      symbol: listing.symbol,
      tokensPerUnit: listing.tokensPerUnit ?? tokensPerUnitOf(venue, listing.symbol),
      tokensPerContract: v.tokensPerContract ?? 1,
      fundingIntervalMs: v.fundingIntervalMs ?? listing.fundingIntervalMs ?? 8 * 3_600_000,
      primary
    })
  }
  return { instruments, missing }
}
