/**
 * The crypto market model and its store port.
 *
 * Everything the crypto plane measures is kept per asset (`crypto:<slug>`) and per venue (`binance`, `bybit`,
 * `okx`, `hyperliquid`, ...) as a time series keyed by `(assetId, venue, t)`. Times are epoch milliseconds;
 * market measurements are plain numbers (IEEE doubles). Series are columnar: one `Float64Array` per column,
 * all of the same length, time-ordered, one row per time (a write at an existing time replaces that row).
 * Columnar series keep a year of 15-minute data for the whole universe compact and make range reads a binary
 * search plus a copy, so analytics over 20 assets x 90 days of 15-minute data stay in the low milliseconds.
 *
 * Series kinds (`SeriesColumns` lists their columns):
 * - `bars`: 15-minute OHLCV bars; `t` is the bar's open time (a multiple of `BAR_MS`); `volume` in base units.
 *   Coarser intervals (1h ... 1mo) are derived with `aggregateBars`.
 * - `markIndex`: perpetual mark price and the venue's index (spot reference) price, snapshots at `t`.
 * - `openInterest`: open interest in USD, snapshots at `t` (15-minute cadence for history).
 * - `takerFlow`: taker buy and sell volume in USD over the 15-minute bucket opening at `t`.
 * - `bookMetrics`: what the order book looked like at `t` (mid, spread, imbalance and depth within
 *   `BOOK_DEPTH_PCT` of mid), a 15-minute history so liquidity measures get percentiles.
 * - `funding`: funding settlements at `t` with the rate paid for the venue's interval (`intervalMs`).
 * - `liquidations`: liquidation events at `t` (USD of long positions and of short positions liquidated at
 *   that instant; a source merges prints of one side that share a millisecond).
 *
 * Beside the series the store keeps "latest" state: the newest order-book snapshot per venue, the funding
 * state per venue (current and predicted rate, next funding time), and the status of each source component
 * (newest input time, cadence, failing, last success, last error), from which freshness is computed. The
 * status model also holds SEC EDGAR's health (venue `SEC_VENUE`), so `coverage` and `market-data sources` read
 * every source from one place.
 */
import { Context, type Effect } from "effect"

/** The base bar interval: 15 minutes. */
export const BAR_MS = 15 * 60 * 1000
export const HOUR_MS = 60 * 60 * 1000
export const DAY_MS = 24 * HOUR_MS

/** The columns of each series kind (beside `t`). */
export const SeriesColumns = {
  bars: ["open", "high", "low", "close", "volume"],
  markIndex: ["mark", "index"],
  openInterest: ["oiUsd"],
  takerFlow: ["buyUsd", "sellUsd"],
  bookMetrics: ["mid", "spreadPct", "imbalance", "bidDepthUsd", "askDepthUsd"],
  funding: ["rate", "intervalMs"],
  liquidations: ["longUsd", "shortUsd"]
} as const

export type SeriesKind = keyof typeof SeriesColumns
export const SeriesKinds = Object.keys(SeriesColumns) as ReadonlyArray<SeriesKind>
export type ColumnOf<K extends SeriesKind> = (typeof SeriesColumns)[K][number]

/**
 * One venue's series of one kind for one asset, columnar and time-ordered (strictly increasing `t`).
 * Arrays returned by the store are copies: the caller may keep or modify them.
 */
export type Series<K extends SeriesKind> = {
  readonly kind: K
  readonly assetId: string
  readonly venue: string
  /** Epoch milliseconds, strictly increasing. */
  readonly t: Float64Array
} & { readonly [C in ColumnOf<K>]: Float64Array }

/** What a write takes: the same shape with any array-like columns (order and duplicates are handled). */
export type SeriesInput<K extends SeriesKind> = {
  readonly kind: K
  readonly assetId: string
  readonly venue: string
  readonly t: ArrayLike<number>
} & { readonly [C in ColumnOf<K>]: ArrayLike<number> }

export type AnySeriesInput = { [K in SeriesKind]: SeriesInput<K> }[SeriesKind]

/**
 * 15-minute OHLCV bars: `open`, `high`, `low`, `close` in USD, `volume` in base units, `t` the open time.
 */
export type Bars = Series<"bars">
/** Mark and index price (USD) snapshots. `basis = mark / index - 1`. */
export type MarkIndex = Series<"markIndex">
/** Open interest (USD) snapshots. */
export type OpenInterest = Series<"openInterest">
/** Taker buy and sell volume (USD) per 15-minute bucket opening at `t`. */
export type TakerFlow = Series<"takerFlow">
/**
 * Order-book metrics snapshots: `mid` (USD), `spreadPct` = (ask - bid) / mid x 100, `imbalance` =
 * (bid depth - ask depth) / (bid depth + ask depth) within `BOOK_DEPTH_PCT` of mid (-1 to 1), and the USD
 * depth on each side within `BOOK_DEPTH_PCT` of mid.
 */
export type BookMetrics = Series<"bookMetrics">
/**
 * Funding settlements: at `t` longs paid shorts `rate` x notional (a fraction: 0.0001 = 0.01 %; negative when
 * shorts paid longs), for an interval of `intervalMs` (1 h, 4 h or 8 h, per venue and asset).
 */
export type Funding = Series<"funding">
/** Liquidations: USD of longs (`longUsd`) and of shorts (`shortUsd`) liquidated at `t`. */
export type Liquidations = Series<"liquidations">

/** A time range `[fromMs, toMs)` for one asset, on one venue or (no `venue`) on every venue. */
export interface RangeQuery {
  readonly assetId: string
  readonly venue?: string
  readonly fromMs: number
  readonly toMs: number
}

/** The stored extent of one venue's series. */
export interface SeriesExtent {
  readonly venue: string
  readonly firstMs: number
  readonly lastMs: number
  readonly count: number
}

/** One price level: price in USD, size in base units. */
export type BookLevel = readonly [price: number, size: number]

/** An order-book snapshot: bids best (highest) first, asks best (lowest) first. */
export interface BookSnapshot {
  readonly assetId: string
  readonly venue: string
  readonly t: number
  readonly bids: ReadonlyArray<BookLevel>
  readonly asks: ReadonlyArray<BookLevel>
  /**
   * Where the top of book is streamed (`QuoteBoard.ts`): the newest event time of the stream that carries it. A
   * streamed top that has not moved since `t` is still the venue's current one while its stream is up.
   */
  readonly confirmedMs?: number
  /** Where the top of book is streamed in front of a polled book: when the levels behind the top were read. */
  readonly depthMs?: number
}

/** A venue's funding state for a perpetual, as of `t`. Rates are fractions per `intervalMs`. */
export interface FundingState {
  readonly assetId: string
  readonly venue: string
  readonly t: number
  readonly intervalMs: number
  /** When the next settlement happens (epoch ms). */
  readonly nextFundingMs: number
  /** The rate accrued so far for the running interval (what would settle if it ended now). */
  readonly currentRate: number
  /** The venue's prediction of the next settlement's rate. */
  readonly predictedRate: number
}

/** Which feed produced the data: the deterministic simulated market or real venues. */
export type SourceName = "simulated" | "live"

/** The components a source delivers; each has its own newest time and cadence. */
export const Components = [
  "bars",
  "markIndex",
  "openInterest",
  "takerFlow",
  "bookMetrics",
  "funding",
  "liquidations",
  "books",
  "fundingState",
  // SEC EDGAR (venue `SEC_VENUE`): one poll of every covered company's submissions, companyfacts, Form 4s and
  // 13Fs (`filings`), the ticker list (`tickers`), and the daily-index follower (`dailyIndex`: every company's
  // new filings, day by day; its `newestMs` is the end of the last EDGAR day fully processed), and the
  // latest-filings feed (`latestFilings`: the same filings minutes after acceptance). Not crypto data; kept here
  // so every source's health is one status model, read and persisted alike.
  "filings",
  "tickers",
  "dailyIndex",
  "latestFilings",
  // The asset directory's listing job (live mode): each venue's instrument list, and the public coin list
  // (venue `coingecko`); `detail` names the instruments it skipped.
  "listings",
  // A live venue's REST use (live mode): `detail` says the request weight spent in the last minute against the
  // venue's limit (`REST request weight <n> in the last minute of <limit> allowed`), renewed every minute.
  "rest"
] as const
export type Component = (typeof Components)[number]

/** The `venue` under which the SEC EDGAR fetcher records its status (components `filings` and `tickers`). */
export const SEC_VENUE = "sec"

/**
 * The `venue` under which the equities' daily price connector records its status (component `bars`): Yahoo
 * Finance's chart endpoint (see the equity `domains` docs for its terms, format and delay).
 */
export const PRICES_VENUE = "yahoo"

/**
 * The EDGAR day (`YYYY-MM-DD`) through which the daily-index follower has processed every followed filing, from
 * its status (`newestMs` = the UTC midnight after that day); undefined before it completed a day.
 */
export const dailyIndexThrough = (statuses: ReadonlyArray<SourceStatus>): string | undefined => {
  const s = statuses.find((x) => x.venue === SEC_VENUE && x.component === "dailyIndex")
  return s === undefined || s.newestMs <= 0 ? undefined : new Date(s.newestMs - 1).toISOString().slice(0, 10)
}

/**
 * Status of one component of one venue's feed: the newest input time, the cadence at which new input is
 * expected, and whether fetching it is failing now. Freshness: `live` while `nowMs - newestMs` is within one
 * cadence, `delayed` up to three, `stale` beyond or when `failing`.
 */
export interface SourceStatus {
  readonly source: SourceName
  readonly venue: string
  readonly component: Component
  /** Newest data time delivered (epoch ms); 0 when nothing yet. */
  readonly newestMs: number
  /** Expected time between updates (ms). */
  readonly cadenceMs: number
  /** When the source last tried (epoch ms). */
  readonly checkedMs: number
  readonly failing: boolean
  /** Why it is failing, when it is (or, while not failing, what part of the last run delivered nothing). */
  readonly detail?: string
  /**
   * When fetching this component last succeeded (epoch ms), as the live connectors record it; absent when it
   * never has, or when the writer does not say (the simulated feed: every check is a success, `checkedMs`).
   */
  readonly lastSuccessMs?: number
  /** The error text of the last failed fetch, while the component is failing; cleared by the next success. */
  readonly lastError?: string
  /**
   * Where updates are pushed (a stream, `QuoteBoard.ts`): how soon after the newest one the next can come, which
   * `next_update_at` follows; `cadenceMs` stays the yardstick of freshness. Absent: `cadenceMs` for both.
   */
  readonly updateEveryMs?: number
}

/**
 * When a component last succeeded: `lastSuccessMs` when recorded; otherwise, while it is not failing, its last
 * check (writers that record no success time, such as the simulated feed, only write successes); else unknown.
 */
export const lastSuccessOf = (s: Pick<SourceStatus, "lastSuccessMs" | "checkedMs" | "failing">): number | undefined =>
  s.lastSuccessMs ?? (s.failing ? undefined : s.checkedMs)

/**
 * The market-data store port. Reads answer one series per venue (sorted by venue name), restricted to
 * `[fromMs, toMs)`, omitting venues with no rows in range. Writes are batches, idempotent on
 * `(assetId, venue, t)`: a row at an existing time replaces it.
 */
/** One venue's streamed open interest of an asset (`MarketStore.streamedOpenInterest`). */
export interface StreamedOpenInterest {
  readonly venue: string
  /** USD, one side (the venue's convention normalized by its stream parser). */
  readonly usd: number
  /** The venue's event time of the ticker state it is part of. */
  readonly t: number
  /** The `openInterest` status of this venue for this asset: its stream's (newest event time, stream cadence). */
  readonly status: SourceStatus
}

export class MarketStore extends Context.Service<
  MarketStore,
  {
    /** Rows of `kind` in the range, one series per venue. */
    readonly read: <K extends SeriesKind>(kind: K, query: RangeQuery) => Effect.Effect<ReadonlyArray<Series<K>>>
    /** The newest `n` rows of `kind` at or before `atMs` (default: all time), one series per venue. */
    readonly latest: <K extends SeriesKind>(
      kind: K,
      query: { readonly assetId: string; readonly venue?: string; readonly n: number; readonly atMs?: number }
    ) => Effect.Effect<ReadonlyArray<Series<K>>>
    /** First and last time and row count of `kind` per venue for an asset. */
    readonly extent: (kind: SeriesKind, assetId: string) => Effect.Effect<ReadonlyArray<SeriesExtent>>
    /** Writes a batch of series (any kinds, assets and venues). */
    readonly write: (batch: ReadonlyArray<AnySeriesInput>) => Effect.Effect<void>
    /** Replaces the latest order-book snapshot of each `(assetId, venue)` given (an older `t` is ignored). */
    readonly putBooks: (books: ReadonlyArray<BookSnapshot>) => Effect.Effect<void>
    /** The latest order-book snapshot per venue (sorted by venue). */
    readonly books: (assetId: string, venue?: string) => Effect.Effect<ReadonlyArray<BookSnapshot>>
    /** Replaces the funding state of each `(assetId, venue)` given (an older `t` is ignored). */
    readonly putFundingStates: (states: ReadonlyArray<FundingState>) => Effect.Effect<void>
    /** The funding state per venue (sorted by venue). */
    readonly fundingStates: (assetId: string, venue?: string) => Effect.Effect<ReadonlyArray<FundingState>>
    /** Replaces the status of each `(venue, component)` given. */
    readonly putStatus: (status: ReadonlyArray<SourceStatus>) => Effect.Effect<void>
    /** Every component's status (sorted by venue, then component). */
    readonly status: Effect.Effect<ReadonlyArray<SourceStatus>>
    /** Deletes rows of every series kind older than `cutoffMs`; returns how many were deleted. */
    readonly prune: (cutoffMs: number) => Effect.Effect<number>
    /**
     * A number that changes whenever anything stored changes (any write, status, book, funding state or
     * pruning). Optional: a store that offers it lets readers reuse results built from unchanged content.
     */
    readonly revision?: () => number
    /**
     * A number that changes whenever one asset's stored series (any kind) change: a write or trim of its rows,
     * or a pruning. Books, funding states, statuses and other assets' writes leave it as it was. Optional, as
     * `revision`: a reader of one asset's series reuses what it built from them while this is unchanged.
     */
    readonly seriesRevision?: (assetId: string) => number
    /**
     * A number that changes whenever `revision` does and whenever streamed state changes (books, funding states,
     * the streamed components' statuses: `QuoteBoard.ts`). Optional: where absent, `revision` covers them.
     */
    readonly quotesRevision?: () => number
    /**
     * The statuses as they apply to one asset: `statuses` (what `status` answered, any subset) with each
     * streamed component of a venue whose stream is up but does not serve this asset (a refused or silent symbol)
     * replaced by the asset's own REST state (`QuoteBoard.ts`, `assetStatusesOf`). Optional: where
     * absent, every asset reads its venues' statuses.
     */
    readonly assetStatuses?: (
      assetId: string,
      statuses: ReadonlyArray<SourceStatus>
    ) => Effect.Effect<ReadonlyArray<SourceStatus>>
    /**
     * Open interest as the venues' streams last sent it for an asset (USD of one side), per venue whose stream
     * serves the asset now, with that stream's status (`QuoteBoard.ts`). Optional: where absent (or empty), open
     * interest is the stored snapshots'.
     */
    readonly streamedOpenInterest?: (assetId: string) => ReadonlyArray<StreamedOpenInterest>
    /**
     * As `quotesRevision`, for what one asset's answers read: changes whenever `revision` does and whenever that
     * asset's streamed state changes (its books, funding states, streamed open interest and `assetStatuses`) or a
     * stream's health does; other assets' quotes leave it as it was. Optional: where absent, `quotesRevision`
     * covers it.
     */
    readonly quotesRevisionOf?: (assetId: string) => number
  }
>()("market-data/core/MarketStore") {}

// ---------------------------------------------------------------------------------------------------------
// Working with columnar series

/** Index of the first element of the sorted `t` that is >= `x` (`t.length` when none). */
export const lowerBound = (t: ArrayLike<number>, x: number, from = 0, to = t.length): number => {
  let lo = from
  let hi = to
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if ((t[mid] as number) < x) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** An empty series of `kind`. */
export const emptySeries = <K extends SeriesKind>(kind: K, assetId: string, venue: string): Series<K> =>
  allocSeries(kind, assetId, venue, 0)

/** A series of `kind` with `length` zeroed rows, to fill in place. */
export const allocSeries = <K extends SeriesKind>(
  kind: K,
  assetId: string,
  venue: string,
  length: number
): Series<K> => {
  const out: Record<string, unknown> = { kind, assetId, venue, t: new Float64Array(length) }
  for (const c of SeriesColumns[kind]) out[c] = new Float64Array(length)
  return out as Series<K>
}

/** Rows `[from, to)` of a series, as a copy. */
export const sliceSeries = <K extends SeriesKind>(s: Series<K>, from: number, to: number): Series<K> => {
  const out: Record<string, unknown> = { kind: s.kind, assetId: s.assetId, venue: s.venue, t: s.t.slice(from, to) }
  for (const c of SeriesColumns[s.kind] as ReadonlyArray<ColumnOf<K>>) out[c] = (s[c] as Float64Array).slice(from, to)
  return out as Series<K>
}

/** Rows of a series with `fromMs <= t < toMs`, as a copy. */
export const rangeOf = <K extends SeriesKind>(s: Series<K>, fromMs: number, toMs: number): Series<K> =>
  sliceSeries(s, lowerBound(s.t, fromMs), lowerBound(s.t, toMs))

/** The row count of a series. */
export const lengthOf = (s: { readonly t: ArrayLike<number> }): number => s.t.length

/** One liquidation event, for callers that prefer rows. */
export interface LiquidationEvent {
  readonly t: number
  /** `long`: a long position was liquidated (a forced sell); `short`: a forced buy. */
  readonly side: "long" | "short"
  readonly usd: number
}

/** Liquidation rows as events (a row with both sides gives two events, long first). */
export const liquidationEvents = (s: Liquidations): ReadonlyArray<LiquidationEvent> => {
  const out: Array<LiquidationEvent> = []
  for (let i = 0; i < s.t.length; i++) {
    const t = s.t[i] as number
    const l = s.longUsd[i] as number
    const sh = s.shortUsd[i] as number
    if (l > 0) out.push({ t, side: "long", usd: l })
    if (sh > 0) out.push({ t, side: "short", usd: sh })
  }
  return out
}

// ---------------------------------------------------------------------------------------------------------
// Bar intervals

/** Bar intervals served by `series`, `technicals` and `structure`. */
export const Intervals = ["15m", "1h", "4h", "1d", "1w", "1mo"] as const
export type Interval = (typeof Intervals)[number]

/** Fixed lengths of the intervals that have one (`1mo` follows the calendar). */
export const IntervalMs: { readonly [I in Exclude<Interval, "1mo">]: number } = {
  "15m": BAR_MS,
  "1h": HOUR_MS,
  "4h": 4 * HOUR_MS,
  "1d": DAY_MS,
  "1w": 7 * DAY_MS
}

/** 1970-01-05 was a Monday: weeks start on Monday 00:00 UTC. */
const WEEK_ORIGIN_MS = 4 * DAY_MS

/**
 * Open time of the interval containing `tMs` (UTC): multiples of the interval for 15m..1d, Monday 00:00 for
 * `1w`, the first of the month 00:00 for `1mo`.
 */
export const intervalStartMs = (tMs: number, interval: Interval): number => {
  if (interval === "1mo") {
    const d = new Date(tMs)
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)
  }
  if (interval === "1w")
    return tMs - ((((tMs - WEEK_ORIGIN_MS) % IntervalMs["1w"]) + IntervalMs["1w"]) % IntervalMs["1w"])
  const len = IntervalMs[interval]
  return tMs - (((tMs % len) + len) % len)
}

/** Close time (exclusive end) of the interval opening at `startMs`. */
export const intervalEndMs = (startMs: number, interval: Interval): number => {
  if (interval === "1mo") {
    const d = new Date(startMs)
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)
  }
  return startMs + IntervalMs[interval]
}

/**
 * 15-minute bars aggregated to `interval`: open of the first, highest high, lowest low, close of the last,
 * summed volume; `t` is the interval's open time. The last bar may be incomplete (check
 * `intervalEndMs(t, interval)` against the newest 15-minute bar's end); intervals with no 15-minute bar are
 * absent. One pass, O(n).
 */
export const aggregateBars = (bars: Bars, interval: Interval): Bars => {
  if (interval === "15m") return sliceSeries(bars, 0, bars.t.length)
  const n = bars.t.length
  const out = allocSeries("bars", bars.assetId, bars.venue, n)
  let k = -1
  let end = Number.NEGATIVE_INFINITY
  for (let i = 0; i < n; i++) {
    const t = bars.t[i] as number
    if (t >= end) {
      k++
      const start = intervalStartMs(t, interval)
      end = intervalEndMs(start, interval)
      out.t[k] = start
      out.open[k] = bars.open[i] as number
      out.high[k] = bars.high[i] as number
      out.low[k] = bars.low[i] as number
      out.volume[k] = 0
    } else {
      if ((bars.high[i] as number) > (out.high[k] as number)) out.high[k] = bars.high[i] as number
      if ((bars.low[i] as number) < (out.low[k] as number)) out.low[k] = bars.low[i] as number
    }
    out.close[k] = bars.close[i] as number
    out.volume[k] = (out.volume[k] as number) + (bars.volume[i] as number)
  }
  return sliceSeries(out, 0, k + 1)
}

/**
 * `aggregateBars` over complete periods only at the start: a period that opened before the first 15-minute
 * bar given (history that begins mid-period, such as a backfill started at 13:47) would be a part of a bar
 * counted as a whole one, so it is left out. What an indicator sees then does not depend on the minute the
 * history began. (The newest period may still be forming: callers cut it by its end.)
 */
export const completeBars = (bars: Bars, interval: Interval): Bars => {
  const agg = aggregateBars(bars, interval)
  const first = bars.t[0]
  if (first === undefined || (agg.t[0] as number) >= first) return agg
  let start = 0
  while (start < agg.t.length && (agg.t[start] as number) < first) start++
  return sliceSeries(agg, start, agg.t.length)
}

// ---------------------------------------------------------------------------------------------------------
// Order books

/** Distance from mid within which `bookMetrics` measures depth and imbalance: 1 %. */
export const BOOK_DEPTH_PCT = 1

/** USD depth on each side of `book` within `pct` % of mid, and mid/spread. Undefined for an empty side. */
export const bookDepth = (
  book: Pick<BookSnapshot, "bids" | "asks">,
  pct: number
):
  | { readonly mid: number; readonly spreadPct: number; readonly bidUsd: number; readonly askUsd: number }
  | undefined => {
  const bestBid = book.bids[0]
  const bestAsk = book.asks[0]
  if (bestBid === undefined || bestAsk === undefined) return undefined
  const mid = (bestBid[0] + bestAsk[0]) / 2
  const lowest = mid * (1 - pct / 100)
  const highest = mid * (1 + pct / 100)
  let bidUsd = 0
  for (const [p, s] of book.bids) {
    if (p < lowest) break
    bidUsd += p * s
  }
  let askUsd = 0
  for (const [p, s] of book.asks) {
    if (p > highest) break
    askUsd += p * s
  }
  return { mid, spreadPct: ((bestAsk[0] - bestBid[0]) / mid) * 100, bidUsd, askUsd }
}

/** The `bookMetrics` row of a snapshot (depth and imbalance within `BOOK_DEPTH_PCT`), or undefined. */
export const bookMetricsOf = (
  book: Pick<BookSnapshot, "bids" | "asks">
):
  | {
      readonly mid: number
      readonly spreadPct: number
      readonly imbalance: number
      readonly bidDepthUsd: number
      readonly askDepthUsd: number
    }
  | undefined => {
  const d = bookDepth(book, BOOK_DEPTH_PCT)
  if (d === undefined) return undefined
  const total = d.bidUsd + d.askUsd
  return {
    mid: d.mid,
    spreadPct: d.spreadPct,
    imbalance: total === 0 ? 0 : (d.bidUsd - d.askUsd) / total,
    bidDepthUsd: d.bidUsd,
    askDepthUsd: d.askUsd
  }
}

// ---------------------------------------------------------------------------------------------------------
// Freshness

export type Freshness = "live" | "delayed" | "stale"

/**
 * Freshness of a component at `nowMs` (DECISIONS, Freshness): `live` within one cadence of its newest input,
 * `delayed` up to three cadences, `stale` beyond or while the source is failing.
 */
export const freshnessOf = (s: Pick<SourceStatus, "newestMs" | "cadenceMs" | "failing">, nowMs: number): Freshness => {
  const age = nowMs - s.newestMs
  if (s.failing || s.newestMs <= 0) return "stale"
  if (age <= s.cadenceMs) return "live"
  if (age <= 3 * s.cadenceMs) return "delayed"
  return "stale"
}
