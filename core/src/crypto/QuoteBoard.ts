/**
 * The streamed market state of one process: each perpetual's top of book and ticker (mark, index, funding, open
 * interest) as the venues' streams (live mode) or the simulated market (the default) deliver them, applied in
 * place at the venue's pace, and each venue stream's health.
 *
 * The board is the one ingest interface for sub-second market state: a venue stream's parser (after symbol
 * mapping and unit conversion) and the simulated market both call `applyQuote` / `applyTicker` with canonical
 * assets and USD prices, sizes in base tokens. Nothing here is written to the database: every instance holds its
 * own streams (docs: LiveDoc, "Every instance equally fresh").
 *
 * `withQuoteBoard(store, board)` is a `MarketStore` decorator that serves it: `books` answers the stored book
 * (REST depth, persisted) with the streamed top of book in front of it, `fundingStates` the streamed funding state
 * where it is newer, and `status` each streamed component's status from the stream's health (newest event time
 * applied, a few seconds' cadence), so freshness follows the stream: `live` while frames arrive, `stale` with
 * the reason at once when the stream is down, until the REST fallback has delivered since. `assetStatuses` gives
 * the statuses as one asset sees them (a symbol the stream does not serve while it serves the others reads its own
 * REST state), and `streamedOpenInterest` each streaming venue's open interest of an asset for `open_interest`. The
 * kline streams' closed bars (`closedBar`) are what the live feed stores at each close (`CryptoFeed.ts`).
 */
import type { Effect } from "effect"
import { Effect as E } from "effect"
import type {
  BookLevel,
  BookSnapshot,
  Component,
  FundingState,
  MarketStore,
  SourceStatus,
  StreamedOpenInterest
} from "./Market.ts"

/** The cadence a streamed component's status gives: `live` within it of the newest event, `stale` past three. */
export const STREAM_CADENCE_MS = 5_000
/**
 * How soon a venue stream can deliver again (its status's `updateEveryMs`, which `next_update_at` follows): the
 * venues push on every change, and the mark-price arrays every second.
 */
export const STREAM_UPDATE_EVERY_MS = 1_000

/** One top of book, in USD per token and base tokens, at the venue's event time `t`. */
export interface StreamedQuote {
  readonly t: number
  readonly bid: number
  readonly bidSize: number
  readonly ask: number
  readonly askSize: number
}

/** What a venue's ticker stream says of one perpetual; fields the frame lacks are kept from earlier frames. */
export interface StreamedTicker {
  /** The venue's event time of the newest field applied. */
  readonly t: number
  readonly mark?: number | undefined
  readonly index?: number | undefined
  /** Funding rate (a fraction per `intervalMs`) of the running interval. */
  readonly fundingRate?: number | undefined
  readonly predictedRate?: number | undefined
  readonly nextFundingMs?: number | undefined
  readonly intervalMs?: number | undefined
  /** Open interest in USD (one side). */
  readonly oiUsd?: number | undefined
}

/** The 15-minute bar still forming, as a kline stream last sent it (USD per token, base tokens). */
export interface StreamedBar {
  /** The bar's open time. */
  readonly t: number
  /** The venue's event time of the update. */
  readonly eventMs: number
  readonly open: number
  readonly high: number
  readonly low: number
  readonly close: number
  readonly volume: number
  /** Taker buy and sell volume in USD, where the stream carries them (Binance). */
  readonly takerBuyUsd?: number | undefined
  readonly takerSellUsd?: number | undefined
  /** The venue says the bar is closed and final (Binance kline `x: true`, Bybit `confirm: true`). */
  readonly closed?: boolean | undefined
}

/** A venue stream's health, as its connection manager reports it. */
export interface StreamHealth {
  /** The components this venue's stream carries (`books`, `fundingState`, ...). */
  readonly components: ReadonlyArray<Component>
  /** Subscribed and receiving (no silence past its timeout). */
  readonly up: boolean
  /** The newest venue event time applied (epoch ms); 0 before the first. */
  readonly newestMs: number
  /** The service clock when the newest frame arrived (epoch ms). */
  readonly lastFrameMs: number
  /** When `up` last changed. */
  readonly sinceMs: number
  /** Why it is down (while `up` is false). */
  readonly reason?: string | undefined
  /** What the status detail says while up (channels, symbols refused or silent). */
  readonly detail?: string | undefined
  /** How soon the stream can deliver again (`SourceStatus.updateEveryMs`); default `STREAM_UPDATE_EVERY_MS`. */
  readonly updateEveryMs?: number | undefined
}

/** The board's own records, updated in place by each frame (see `makeQuoteBoard`). */
type Mutable<T> = { -readonly [K in keyof T]: T[K] }

interface Entry {
  quote: Mutable<StreamedQuote> | undefined
  ticker: Mutable<StreamedTicker> | undefined
  bar: Mutable<StreamedBar> | undefined
  /** The newest bar the venue sent as closed (final). */
  closedBar: Mutable<StreamedBar> | undefined
  silent: boolean
  /** When it last turned silent (`setSilent`'s clock; 0 when not known). */
  silentSinceMs: number
  /** When it last turned served again after being silent (`setSilent`'s clock; 0: never silent). */
  servedSinceMs: number
}

/** The process's streamed state. */
export interface QuoteBoard {
  readonly applyQuote: (assetId: string, venue: string, quote: StreamedQuote) => void
  readonly applyTicker: (assetId: string, venue: string, ticker: StreamedTicker) => void
  /**
   * The forming bar (a newer open time replaces it; within one bar, the newer event); a bar the venue sends as
   * closed is also kept as the newest closed bar (`closedBar`) until a newer one closes.
   */
  readonly applyBar: (assetId: string, venue: string, bar: StreamedBar) => void
  readonly bar: (assetId: string, venue: string) => StreamedBar | undefined
  /** The newest bar the venue's stream sent as closed (final), for the feed to store it without REST. */
  readonly closedBar: (assetId: string, venue: string) => StreamedBar | undefined
  /**
   * The streamed top of book. Like `ticker`, `bar` and `closedBar`, the record is the board's own, updated in place
   * by later frames: read its fields at once (as every reader here does), do not keep it.
   */
  readonly quote: (assetId: string, venue: string) => StreamedQuote | undefined
  readonly ticker: (assetId: string, venue: string) => StreamedTicker | undefined
  /** The venues with streamed state for an asset (sorted). */
  readonly venuesOf: (assetId: string) => ReadonlyArray<string>
  /**
   * Marks the assets of `venue` whose symbol the stream does not serve now (not mentioned for too long, its
   * connection down or its subscription not answered yet: served from REST), at `nowMs` (when they turned so).
   */
  readonly setSilent: (venue: string, assetIds: ReadonlySet<string>, nowMs?: number) => void
  /** When the asset was last served again after being silent on `venue` (0: never silent). */
  readonly servedSince: (assetId: string, venue: string) => number
  /** When the asset turned silent on `venue` (the `nowMs` given to `setSilent`), while it is; undefined otherwise. */
  readonly silentSince: (assetId: string, venue: string) => number | undefined
  /** Whether the stream has not mentioned the asset's symbol for too long (`setSilent`). */
  readonly isSilent: (assetId: string, venue: string) => boolean
  /** Forgets an asset's state on a venue (a delisting). */
  readonly forget: (assetId: string, venue: string) => void
  readonly setHealth: (venue: string, health: StreamHealth) => void
  readonly health: (venue: string) => StreamHealth | undefined
  /** Every venue with a stream (sorted). */
  readonly streamVenues: () => ReadonlyArray<string>
  /** Changes with every applied update, silence or health change. */
  readonly version: () => number
  /**
   * Changes with every applied update of one asset's streamed state (its quotes, tickers, silence, forgetting) and
   * with every health change (any venue's: health enters every answer's freshness); other assets' updates leave it
   * as it was. Never decreases.
   */
  readonly assetVersion: (assetId: string) => number
  /** Changes with every health change (`setHealth`), and only then. Never decreases. */
  readonly healthVersion: () => number
}

/** `bar` copied into `into` (the entry's own record, updated in place), or into a new record where there is none. */
const copyBar = (bar: StreamedBar, into: Mutable<StreamedBar> | undefined): Mutable<StreamedBar> => {
  if (into === undefined)
    return {
      t: bar.t,
      eventMs: bar.eventMs,
      open: bar.open,
      high: bar.high,
      low: bar.low,
      close: bar.close,
      volume: bar.volume,
      takerBuyUsd: bar.takerBuyUsd,
      takerSellUsd: bar.takerSellUsd,
      closed: bar.closed
    }
  into.t = bar.t
  into.eventMs = bar.eventMs
  into.open = bar.open
  into.high = bar.high
  into.low = bar.low
  into.close = bar.close
  into.volume = bar.volume
  into.takerBuyUsd = bar.takerBuyUsd
  into.takerSellUsd = bar.takerSellUsd
  into.closed = bar.closed
  return into
}

export const makeQuoteBoard = (): QuoteBoard => {
  // By venue, then asset: every update looks its entry up with the strings it has (no key built per frame).
  const entries = new Map<string, Map<string, Entry>>()
  const venuesByAsset = new Map<string, Array<string>>()
  const healths = new Map<string, StreamHealth>()
  let version = 0
  // Per asset, so that a quote of one asset leaves what was built from another's state valid.
  const assetVersions = new Map<string, number>()
  let healthVersion = 0
  const touch = (assetId: string) => {
    version++
    assetVersions.set(assetId, (assetVersions.get(assetId) ?? 0) + 1)
  }
  const find = (assetId: string, venue: string): Entry | undefined => entries.get(venue)?.get(assetId)
  const entryOf = (assetId: string, venue: string): Entry => {
    let byAsset = entries.get(venue)
    if (byAsset === undefined) {
      byAsset = new Map()
      entries.set(venue, byAsset)
    }
    let e = byAsset.get(assetId)
    if (e === undefined) {
      e = {
        quote: undefined,
        ticker: undefined,
        bar: undefined,
        closedBar: undefined,
        silent: false,
        silentSinceMs: 0,
        servedSinceMs: 0
      }
      byAsset.set(assetId, e)
      const vs = venuesByAsset.get(assetId) ?? []
      vs.push(venue)
      vs.sort()
      venuesByAsset.set(assetId, vs)
    }
    return e
  }
  return {
    // Each entry keeps one record per kind, created with its first frame and then updated in place: the object a
    // frame's reader built dies young, instead of every frame's record living until the next frame replaces it
    // (a few hundred milliseconds at whole-market pace: long enough to be copied by each scavenge and promoted,
    // which stretched the young-generation pauses answers wait behind).
    applyQuote: (assetId, venue, quote) => {
      const e = entryOf(assetId, venue)
      const q = e.quote
      if (q === undefined) {
        e.quote = { t: quote.t, bid: quote.bid, bidSize: quote.bidSize, ask: quote.ask, askSize: quote.askSize }
      } else {
        // Frames can arrive out of order across connections (a rotation's overlap): the newer event wins.
        if (quote.t < q.t) return
        q.t = quote.t
        q.bid = quote.bid
        q.bidSize = quote.bidSize
        q.ask = quote.ask
        q.askSize = quote.askSize
      }
      touch(assetId)
    },
    applyTicker: (assetId, venue, ticker) => {
      const e = entryOf(assetId, venue)
      const x = e.ticker
      if (x === undefined) {
        e.ticker = {
          t: ticker.t,
          mark: ticker.mark,
          index: ticker.index,
          fundingRate: ticker.fundingRate,
          predictedRate: ticker.predictedRate,
          nextFundingMs: ticker.nextFundingMs,
          intervalMs: ticker.intervalMs,
          oiUsd: ticker.oiUsd
        }
      } else {
        if (ticker.t < x.t) return
        // A venue sends only what changed (or one field per channel): the rest is kept.
        x.t = ticker.t
        if (ticker.mark !== undefined) x.mark = ticker.mark
        if (ticker.index !== undefined) x.index = ticker.index
        if (ticker.fundingRate !== undefined) x.fundingRate = ticker.fundingRate
        if (ticker.predictedRate !== undefined) x.predictedRate = ticker.predictedRate
        if (ticker.nextFundingMs !== undefined) x.nextFundingMs = ticker.nextFundingMs
        if (ticker.intervalMs !== undefined) x.intervalMs = ticker.intervalMs
        if (ticker.oiUsd !== undefined) x.oiUsd = ticker.oiUsd
      }
      touch(assetId)
    },
    applyBar: (assetId, venue, bar) => {
      const e = entryOf(assetId, venue)
      if (bar.closed === true && (e.closedBar === undefined || bar.t >= e.closedBar.t))
        e.closedBar = copyBar(bar, e.closedBar)
      const before = e.bar
      if (before !== undefined && (bar.t < before.t || (bar.t === before.t && bar.eventMs < before.eventMs))) return
      e.bar = copyBar(bar, before)
    },
    bar: (assetId, venue) => find(assetId, venue)?.bar,
    closedBar: (assetId, venue) => find(assetId, venue)?.closedBar,
    quote: (assetId, venue) => find(assetId, venue)?.quote,
    ticker: (assetId, venue) => find(assetId, venue)?.ticker,
    venuesOf: (assetId) => venuesByAsset.get(assetId) ?? [],
    setSilent: (venue, assetIds, nowMs = 0) => {
      for (const [assetId, e] of entries.get(venue) ?? []) {
        const silent = assetIds.has(assetId)
        if (silent !== e.silent) {
          e.silent = silent
          e.silentSinceMs = silent ? nowMs : 0
          if (!silent) e.servedSinceMs = nowMs
          touch(assetId)
        }
      }
    },
    isSilent: (assetId, venue) => find(assetId, venue)?.silent ?? false,
    servedSince: (assetId, venue) => find(assetId, venue)?.servedSinceMs ?? 0,
    silentSince: (assetId, venue) => {
      const e = find(assetId, venue)
      return e?.silent === true ? e.silentSinceMs : undefined
    },
    forget: (assetId, venue) => {
      if (entries.get(venue)?.delete(assetId) !== true) return
      const vs = (venuesByAsset.get(assetId) ?? []).filter((v) => v !== venue)
      if (vs.length === 0) venuesByAsset.delete(assetId)
      else venuesByAsset.set(assetId, vs)
      touch(assetId)
    },
    setHealth: (venue, health) => {
      healths.set(venue, health)
      version++
      healthVersion++
    },
    health: (venue) => healths.get(venue),
    streamVenues: () => [...healths.keys()].sort(),
    version: () => version,
    assetVersion: (assetId) => (assetVersions.get(assetId) ?? 0) + healthVersion,
    healthVersion: () => healthVersion
  }
}

/** Whether the board serves `venue`'s streamed state now (the stream is up) for an asset (not silent). */
const served = (board: QuoteBoard, assetId: string, venue: string): boolean => {
  const h = board.health(venue)
  if (h === undefined || !h.up) return false
  return !board.isSilent(assetId, venue)
}

/**
 * The stored book with the streamed top of book in front: the streamed best bid and ask, then the stored levels
 * behind them (bids below the streamed bid, asks above the streamed ask), `t` the streamed event time, `depthMs`
 * the stored book's time. A stored book newer than the quote (the REST fallback while the stream was down) is
 * served as it is.
 */
export const composeBook = (
  assetId: string,
  venue: string,
  stored: BookSnapshot | undefined,
  quote: StreamedQuote,
  confirmedMs: number
): BookSnapshot => {
  if (stored !== undefined && stored.t > quote.t) return stored
  const top = { bid: [quote.bid, quote.bidSize] as BookLevel, ask: [quote.ask, quote.askSize] as BookLevel }
  const bids: Array<BookLevel> = [top.bid]
  const asks: Array<BookLevel> = [top.ask]
  if (stored !== undefined) {
    for (const l of stored.bids) if (l[0] < quote.bid) bids.push(l)
    for (const l of stored.asks) if (l[0] > quote.ask) asks.push(l)
  }
  return {
    assetId,
    venue,
    t: quote.t,
    bids,
    asks,
    confirmedMs: Math.max(quote.t, confirmedMs),
    ...(stored === undefined ? {} : { depthMs: stored.depthMs ?? stored.t })
  }
}

/** The streamed funding state of a ticker, where it carries one. */
const fundingOf = (
  assetId: string,
  venue: string,
  ticker: StreamedTicker,
  stored: FundingState | undefined
): FundingState | undefined => {
  if (ticker.fundingRate === undefined) return undefined
  if (stored !== undefined && stored.t > ticker.t) return undefined
  const intervalMs = ticker.intervalMs ?? stored?.intervalMs
  const nextFundingMs = ticker.nextFundingMs ?? stored?.nextFundingMs
  if (intervalMs === undefined || nextFundingMs === undefined) return undefined
  return {
    assetId,
    venue,
    t: ticker.t,
    intervalMs,
    nextFundingMs,
    currentRate: ticker.fundingRate,
    predictedRate: ticker.predictedRate ?? ticker.fundingRate
  }
}

/**
 * The status of a streamed component from its stream's health: up -> the newest event time on the stream cadence;
 * down -> the stored (REST) status once the REST fallback has delivered since the stream went down, else failing
 * with the reason (freshness `stale` at once).
 */
export const streamedStatus = (
  venue: string,
  component: Component,
  health: StreamHealth,
  stored: SourceStatus | undefined
): SourceStatus => {
  if (health.up) {
    return {
      source: "live",
      venue,
      component,
      newestMs: Math.max(health.newestMs, 0),
      cadenceMs: STREAM_CADENCE_MS,
      updateEveryMs: health.updateEveryMs ?? STREAM_UPDATE_EVERY_MS,
      checkedMs: health.lastFrameMs,
      failing: false,
      lastSuccessMs: health.lastFrameMs,
      ...(health.detail === undefined ? {} : { detail: health.detail })
    }
  }
  const why = `stream down since ${new Date(health.sinceMs).toISOString()}: ${health.reason ?? "unknown"}`
  if (stored !== undefined && !stored.failing && stored.newestMs >= health.sinceMs) {
    return { ...stored, detail: `${why}; served from REST polling` }
  }
  return {
    source: "live",
    venue,
    component,
    newestMs: Math.max(health.newestMs, stored?.newestMs ?? 0),
    cadenceMs: STREAM_CADENCE_MS,
    checkedMs: Math.max(health.sinceMs, health.lastFrameMs),
    failing: true,
    detail: why,
    lastError: why,
    ...(health.lastFrameMs > 0 ? { lastSuccessMs: health.lastFrameMs } : {})
  }
}

/** Every status with each streamed component's replaced by its stream's (`streamedStatus`), sorted as stored. */
export const overlayStatuses = (
  stored: ReadonlyArray<SourceStatus>,
  board: QuoteBoard
): ReadonlyArray<SourceStatus> => {
  const venues = board.streamVenues()
  if (venues.length === 0) return stored
  const replaced = new Map<string, SourceStatus>()
  for (const venue of venues) {
    const h = board.health(venue) as StreamHealth
    for (const c of h.components) {
      const before = stored.find((s) => s.venue === venue && s.component === c)
      replaced.set(`${venue}\u0000${c}`, streamedStatus(venue, c, h, before))
    }
  }
  const out: Array<SourceStatus> = []
  for (const s of stored) {
    const k = `${s.venue}\u0000${s.component}`
    const r = replaced.get(k)
    if (r === undefined) out.push(s)
    else {
      out.push(r)
      replaced.delete(k)
    }
  }
  if (replaced.size === 0) return out
  out.push(...replaced.values())
  return out.sort((a, b) => (a.venue === b.venue ? (a.component < b.component ? -1 : 1) : a.venue < b.venue ? -1 : 1))
}

/** Whether the board serves `component` of an asset on `venue` from the stream now (up, not silent, has data). */
const servesComponent = (board: QuoteBoard, assetId: string, venue: string, component: Component): boolean => {
  if (!served(board, assetId, venue)) return false
  if (component === "books") return board.quote(assetId, venue) !== undefined
  if (component === "fundingState") return board.ticker(assetId, venue)?.fundingRate !== undefined
  return true
}

/**
 * A streamed component's status for one asset that the stream does not serve now, from the asset's own REST state:
 * `newestMs` the time of its stored book or funding state (the REST poll that fetched it; 0 when none is stored,
 * so `stale`), the REST job's cadence and failure, and why in `detail`. `s` is the venue's status (kept: source,
 * venue, component).
 */
export const restStatusOfAsset = (
  s: SourceStatus,
  rest: SourceStatus | undefined,
  dataMs: number | undefined,
  why: string
): SourceStatus => {
  const failing = rest?.failing === true
  const out: SourceStatus = {
    source: s.source,
    venue: s.venue,
    component: s.component,
    newestMs: dataMs ?? 0,
    cadenceMs: rest?.cadenceMs ?? s.cadenceMs,
    checkedMs: rest?.checkedMs ?? s.checkedMs,
    failing,
    detail: `${why}; served from REST polling${dataMs === undefined ? " (nothing fetched yet)" : ""}`,
    ...(rest?.lastSuccessMs === undefined ? {} : { lastSuccessMs: rest.lastSuccessMs }),
    ...(failing && rest?.lastError !== undefined ? { lastError: rest.lastError } : {})
  }
  return out
}

/**
 * One asset's statuses (`MarketStore.assetStatuses`): each streamed component of a venue whose stream is up but does
 * not serve the asset (a symbol the venue refused, or silent past its limit) is replaced by the asset's own REST
 * state (`restStatusOfAsset`): its book and funding state are polled over REST, and their freshness is that poll's,
 * not the stream's. A venue where the asset has no state at all, streamed or stored (a spot listing: the feeds and
 * streams take the perpetuals), keeps the venue's status. While a stream is down every symbol of the venue is
 * polled, and the venue's status already says so (`streamedStatus`).
 */
export const assetStatusesOf = (
  board: QuoteBoard,
  assetId: string,
  statuses: ReadonlyArray<SourceStatus>,
  rest: ReadonlyArray<SourceStatus>,
  books: ReadonlyArray<BookSnapshot> | undefined,
  funding: ReadonlyArray<FundingState> | undefined
): ReadonlyArray<SourceStatus> =>
  statuses.map((s) => {
    const h = board.health(s.venue)
    if (h === undefined || !h.up || !h.components.includes(s.component)) return s
    if (servesComponent(board, assetId, s.venue, s.component)) {
      // Served, but the stored REST book is newer than the stream's last quote (fetched while the stream was
      // down, before the symbol's first frame since): that book is what `books` answers (`composeBook`), so its
      // time is the asset's, on the stream's cadence, until the stream's next quote.
      // Likewise a quote older than the symbol's return to the stream (a reconnect's resubscription) is not
      // confirmed by it: its own time, until the stream's next quote.
      const quote = board.quote(assetId, s.venue)
      if (s.component !== "books" || quote === undefined) return s
      const stored = books?.find((b) => b.venue === s.venue)
      if (stored !== undefined && stored.t > quote.t)
        return {
          ...s,
          newestMs: stored.t,
          detail: "the REST book fetched while the stream was down is newer than the stream's last quote of this symbol"
        }
      if (quote.t < board.servedSince(assetId, s.venue))
        return {
          ...s,
          newestMs: quote.t,
          detail: "no quote of this symbol since it was subscribed again; the last one is from before"
        }
      return s
    }
    const dataMs =
      s.component === "books"
        ? books?.find((b) => b.venue === s.venue)?.t
        : s.component === "fundingState"
          ? funding?.find((f) => f.venue === s.venue)?.t
          : undefined
    if (dataMs === undefined && !board.venuesOf(assetId).includes(s.venue)) return s
    const since = board.silentSince(assetId, s.venue)
    const why =
      since === undefined
        ? "the stream does not serve this symbol (refused by the venue, or nothing received yet)"
        : `the stream has not served this symbol since ${new Date(since).toISOString()} (silent past its limit, its connection down or its subscription unanswered)`
    const restStatus = rest.find((r) => r.venue === s.venue && r.component === s.component)
    // Until the REST fallback has fetched it since the stream stopped serving it, nothing fresh is held (a book
    // fetched before is as old as it is, on no cadence kept for it): failing with the reason, so `stale`.
    if (since !== undefined && since > 0 && (dataMs === undefined || dataMs < since)) {
      return {
        ...restStatusOfAsset(s, restStatus, dataMs, why),
        failing: true,
        lastError: `${why}; not fetched over REST since`
      }
    }
    return restStatusOfAsset(s, restStatus, dataMs, why)
  })

/** Whether `assetStatusesOf` would change any of `statuses` for the asset (so the stored state need not be read). */
const needsAssetState = (board: QuoteBoard, assetId: string, statuses: ReadonlyArray<SourceStatus>): boolean =>
  statuses.some((s) => {
    const h = board.health(s.venue)
    if (h === undefined || !h.up || !h.components.includes(s.component)) return false
    // A streamed book can be behind the stored one (`assetStatusesOf`): books are always looked at.
    return s.component === "books" || !servesComponent(board, assetId, s.venue, s.component)
  })

/**
 * `store` with the board's streamed state in front (see the module's comment). Writes go to `store` unchanged.
 * `revision` stays the store's (series, rank and directory memos do not depend on quotes); `quotesRevision`
 * changes with the board too, for what reads books, funding states or statuses; `quotesRevisionOf(asset)` with
 * that asset's streamed state and the streams' health only.
 */
export const withQuoteBoard = (store: MarketStore["Service"], board: QuoteBoard): MarketStore["Service"] => {
  const confirmed = (venue: string): number => board.health(venue)?.newestMs ?? 0
  const books = (assetId: string, venue?: string): Effect.Effect<ReadonlyArray<BookSnapshot>> =>
    E.map(store.books(assetId, venue), (stored) => {
      const venues = venue === undefined ? board.venuesOf(assetId) : [venue]
      let out: Array<BookSnapshot> | undefined
      for (const v of venues) {
        const q = board.quote(assetId, v)
        if (q === undefined || !served(board, assetId, v)) continue
        out ??= [...stored]
        const i = out.findIndex((b) => b.venue === v)
        const composed = composeBook(assetId, v, i < 0 ? undefined : out[i], q, confirmed(v))
        if (i < 0) out.push(composed)
        else out[i] = composed
      }
      if (out === undefined) return stored
      return out.sort((a, b) => (a.venue < b.venue ? -1 : a.venue > b.venue ? 1 : 0))
    })
  const fundingStates = (assetId: string, venue?: string): Effect.Effect<ReadonlyArray<FundingState>> =>
    E.map(store.fundingStates(assetId, venue), (stored) => {
      const venues = venue === undefined ? board.venuesOf(assetId) : [venue]
      let out: Array<FundingState> | undefined
      for (const v of venues) {
        const x = board.ticker(assetId, v)
        if (x === undefined || !served(board, assetId, v)) continue
        const i = stored.findIndex((s) => s.venue === v)
        const f = fundingOf(assetId, v, x, i < 0 ? undefined : stored[i])
        if (f === undefined) continue
        out ??= [...stored]
        const j = out.findIndex((s) => s.venue === v)
        if (j < 0) out.push(f)
        else out[j] = f
      }
      if (out === undefined) return stored
      return out.sort((a, b) => (a.venue < b.venue ? -1 : a.venue > b.venue ? 1 : 0))
    })
  // The overlay reads the streams' health alone: quotes leave it as it was.
  let statusCache:
    | { stored: ReadonlyArray<SourceStatus>; version: number; value: ReadonlyArray<SourceStatus> }
    | undefined
  const status = E.map(store.status, (stored) => {
    const version = board.healthVersion()
    if (statusCache !== undefined && statusCache.stored === stored && statusCache.version === version)
      return statusCache.value
    const value = overlayStatuses(stored, board)
    statusCache = { stored, version, value }
    return value
  })
  const assetStatuses = (
    assetId: string,
    statuses: ReadonlyArray<SourceStatus>
  ): Effect.Effect<ReadonlyArray<SourceStatus>> => {
    if (!needsAssetState(board, assetId, statuses)) return E.succeed(statuses)
    return E.gen(function* () {
      const rest = yield* store.status
      const stored = statuses.some((s) => s.component === "books") ? yield* store.books(assetId) : undefined
      const funding = statuses.some((s) => s.component === "fundingState")
        ? yield* store.fundingStates(assetId)
        : undefined
      return assetStatusesOf(board, assetId, statuses, rest, stored, funding)
    })
  }
  const underlying = store.revision
  return {
    ...store,
    books,
    fundingStates,
    status,
    assetStatuses,
    streamedOpenInterest: (assetId) => {
      const out: Array<StreamedOpenInterest> = []
      for (const v of board.venuesOf(assetId)) {
        const usd = board.ticker(assetId, v)?.oiUsd
        const h = board.health(v)
        if (usd === undefined || !(usd >= 0) || h === undefined || !served(board, assetId, v)) continue
        out.push({
          venue: v,
          usd,
          t: (board.ticker(assetId, v) as StreamedTicker).t,
          status: streamedStatus(v, "openInterest", h, undefined)
        })
      }
      return out
    },
    quotesRevision: () => board.version() * 1_000_003 + (underlying?.() ?? 0),
    // Both never decrease, so their sum changes whenever either does.
    quotesRevisionOf: (assetId) => board.assetVersion(assetId) + (underlying?.() ?? 0)
  }
}
