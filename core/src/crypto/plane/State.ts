/**
 * The crypto plane's shared state, created once per plane (`makePlaneState`): the store it reads, every cache
 * the operations share (baselines, asset states, timeframe states, session levels, the per-asset result memo,
 * directory entries) and the loading that fills them. Each asset's baselines and current measures are advanced
 * incrementally: the first request for an asset samples its history once, later ones only the hours since.
 * The operation families (`Price.ts`, `Funding.ts`, `Flow.ts`, `Liquidity.ts`, `Technicals.ts`, `Structure.ts`,
 * `Read.ts`, `Series.ts`, `Rank.ts`, `Directory.ts`) read it; `../CryptoPlane.ts` assembles them.
 */

import { Clock, Effect } from "effect"
import { type BoundedCache, makeBoundedCache } from "../../BoundedCache.ts"
import { type ApiError, apiError } from "../../Errors.ts"
import { BaselineWindows, SlotSorter, sortedFinite } from "../../Percentile.ts"
import type { DirectoryEntry } from "../../Planes.ts"
import type { CryptoAsset } from "../Assets.ts"
import { AssetBaselines } from "../Baselines.ts"
import { runStartIndex } from "../Contiguity.ts"
import { type ResultFreshness, resultFreshness, worstStatus } from "../Freshness.ts"
import {
  BAR_MS,
  type Component,
  completeBars,
  DAY_MS,
  freshnessOf,
  HOUR_MS,
  intervalStartMs,
  lowerBound,
  type MarketStore,
  type Series,
  type SeriesExtent,
  type SeriesKind,
  type SourceStatus,
  sliceSeries
} from "../Market.ts"
import {
  type AssetData,
  MeasureMemo,
  type MeasureName,
  type Measures,
  measuresAt,
  shortWindowsAt,
  venueData,
  venueOiAt
} from "../Measures.ts"
import { lastBreakOfStructure, StructureBars, type sessionLevels, trendState } from "../Structure.ts"
import { adx, atrPct, ema, lastFinite, MovingAveragePeriods, rsi, sma } from "../Technicals.ts"
import { listedVenues, staticUniverse, type UniverseRef } from "../Universe.ts"
import { MaxMemoizedResults, type Reason, roundValue } from "./Result.ts"

/** The components stored as series: what an asset's measures are computed from (its state's cache key). */
export const SeriesComponents: ReadonlySet<Component> = new Set([
  "bars",
  "markIndex",
  "openInterest",
  "takerFlow",
  "bookMetrics",
  "funding",
  "liquidations"
])

/** Source components each operation reads, for its freshness clocks. */
export const OperationComponents: { readonly [op: string]: ReadonlyArray<Component> } = {
  read: ["bars", "openInterest", "funding", "takerFlow"],
  price: ["bars", "books"],
  funding: ["funding", "fundingState"],
  open_interest: ["openInterest", "markIndex"],
  orderflow: ["takerFlow", "openInterest", "markIndex"],
  liquidations: ["liquidations", "openInterest"],
  liquidity: ["books", "bookMetrics"],
  technicals: ["bars"],
  structure: ["bars"],
  series: ["bars"],
  rank: ["bars", "openInterest", "funding", "takerFlow"]
}

/**
 * Operations that read one venue only, the asset's primary (the one its bars and quoted book come from): their
 * freshness and failing sources are that venue's alone, so another venue's outage does not make them `stale`.
 * `price` quotes its book and bars; `technicals`, `structure` and `series` are computed from its 15-minute bars
 * alone (`Technicals.ts`, `Structure.ts`, `Series.ts` read no other venue).
 */
export const PrimaryVenueOperations: ReadonlyArray<string> = ["price", "technicals", "structure", "series"] as const

/** The venues whose statuses an operation's freshness reads for an asset: its primary alone, or every listing's. */
export const operationVenuesOf = (universe: UniverseRef, a: CryptoAsset, op: string): ReadonlyArray<string> => {
  if (!PrimaryVenueOperations.includes(op)) return venuesOf(universe, a)
  const primary = primaryVenue(a)
  return primary === undefined ? venuesOf(universe, a) : [primary]
}

/**
 * The statuses an operation's freshness and failing sources read for an asset: its venues' (`operationVenuesOf`)
 * components (`OperationComponents`), where `bars` is the primary venue's alone for every operation: no answer
 * reads another venue's 15-minute bars (the price, the returns, the technicals, `structure`, `series` and the
 * directory's extent are all the primary's), so another venue's bars job running late or failing does not make an
 * answer `delayed` or `stale`.
 */
export const statusesReadBy = (
  universe: UniverseRef,
  a: CryptoAsset,
  op: string,
  statuses: ReadonlyArray<SourceStatus>
): ReadonlyArray<SourceStatus> => {
  const venues = operationVenuesOf(universe, a, op)
  const components = OperationComponents[op] ?? ["bars"]
  const primary = primaryVenue(a)
  return statuses.filter(
    (s) =>
      venues.includes(s.venue) &&
      components.includes(s.component) &&
      (s.component !== "bars" || primary === undefined || s.venue === primary)
  )
}

/**
 * The venues an asset is listed on, primary first: as the plane's current universe listed them when it was built
 * (an asset of an earlier universe, met by a request that outlived it, has them listed again).
 */
export const venuesOf = (universe: UniverseRef, a: CryptoAsset): ReadonlyArray<string> =>
  universe.get().venues.get(a) ?? listedVenues(a)

/** Whether two status lists (same source, same order) report the same series data. */
export const sameSeriesStatuses = (a: ReadonlyArray<SourceStatus>, b: ReadonlyArray<SourceStatus>): boolean => {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as SourceStatus
    const y = b[i] as SourceStatus
    if (x.venue !== y.venue || x.component !== y.component || x.newestMs !== y.newestMs || x.failing !== y.failing) {
      return false
    }
  }
  return true
}
export const primaryVenue = (a: CryptoAsset): string | undefined => a.listings[0]?.venue

/**
 * Technicals and structure of one asset on one timeframe, as of its newest closed bar: the figures the operations
 * answer with, not the bars and indicator series they were computed from (those are dropped once computed; at
 * 15-minute bars a year of them is about 3.5 MB an asset). Computed from the closed bars aggregated from the 15 m
 * bars held end to end up to the newest one (`../Contiguity.ts`), complete periods only.
 */
export interface TimeframeState {
  /** Open time of the newest closed bar (NaN when `closedBars` is 0). */
  readonly lastBarT: number
  /** End of the newest closed bar: the cache key, with `barsExtent`. */
  readonly closedEndMs: number
  /** The primary venue's stored bars when this was computed (or last found unchanged behind their newest bar). */
  readonly barsExtent: SeriesExtent | undefined
  /** Closed bars of the timeframe from the bars held end to end (0: bars are stored, but no such closed bar). */
  readonly closedBars: number
  readonly lastClose: number
  /** The newest finite value of each Wilder indicator (NaN: none). */
  readonly rsi: number
  readonly adx: number
  readonly atrPct: number
  /** The directional indicators at the newest bar (undefined or NaN: not enough bars). */
  readonly plusDi: number | undefined
  readonly minusDi: number | undefined
  /** Sorted 90-day baselines of the three Wilder indicators (typed arrays: no growth headroom kept). */
  readonly baselines: { readonly rsi: Float64Array; readonly adx: Float64Array; readonly atrPct: Float64Array }
  /** Last SMA and EMA values by `sma_20` ... `ema_200` (undefined: not enough bars). */
  readonly movingAverages: ReadonlyMap<string, number | undefined>
  /** Structure over the last `StructureBars` closed bars. */
  readonly trend: ReturnType<typeof trendState>
  readonly bos: ReturnType<typeof lastBreakOfStructure>
}

/** What one asset's measures are as of one moment, with the baselines they are ranked against. */
export interface AssetState {
  readonly asset: CryptoAsset
  /** The moment the measures describe: the end of the newest primary bar (now when there is none). */
  readonly atMs: number
  readonly baselines: AssetBaselines
  readonly current: Measures
  /** End of the newest primary 15 m bar (capped at now), when there is one. */
  readonly primaryNewestMs: number | undefined
  /** End of the newest primary 15 m bar, not capped (it is in the future while the bar is forming). */
  readonly barsEndMs: number | undefined
  /** Each venue's newest open interest (USD), venues with a recent snapshot only. */
  readonly oiByVenue: ReadonlyArray<{ readonly venue: string; readonly usd: number }>
  /** The venues whose liquidation series the liquidation measures were computed from. */
  readonly liqVenues: ReadonlyArray<string>
  /**
   * The bar-window measures left NaN because the bars held end to end do not cover their window, and how far
   * back those bars reach (`shortWindowsAt`); undefined without a price.
   */
  readonly shortWindows: { readonly measures: ReadonlyArray<MeasureName>; readonly heldMs: number } | undefined
}

export const TIMEFRAMES = ["15m", "1h", "4h", "1d"] as const
export type Timeframe = (typeof TIMEFRAMES)[number]

/** Stored history read for technicals: a year plus warm-up for the 200-bar averages on daily bars. */
export const TECHNICALS_HISTORY_MS = 420 * DAY_MS

/**
 * Freshness of `op` for `asset` (of `universe`): its venues' source components, and the asset's own newest bar
 * (a venue that is live for other assets may have stopped quoting this one). `primaryNewestMs` is the end of the
 * newest primary 15 m bar (capped at now), when known.
 */
export const freshnessFor = (
  universe: UniverseRef,
  asset: CryptoAsset,
  op: string,
  statuses: ReadonlyArray<SourceStatus>,
  nowMs: number,
  primaryNewestMs?: number
): ResultFreshness => {
  const read = statusesReadBy(universe, asset, op, statuses)
  const venues = resultFreshness(
    read,
    operationVenuesOf(universe, asset, op),
    OperationComponents[op] ?? ["bars"],
    nowMs
  )
  if (venues === undefined) return { asOfMs: nowMs, status: "stale", nextUpdateAtMs: nowMs }
  // Venues that deliver, but nothing for this asset: its source is failing for it.
  if (primaryNewestMs === undefined) return { ...venues, status: "stale" }
  const own = freshnessOf({ newestMs: primaryNewestMs, cadenceMs: BAR_MS, failing: false }, nowMs)
  return {
    asOfMs: Math.min(venues.asOfMs, primaryNewestMs),
    status: worstStatus([venues.status, own]),
    nextUpdateAtMs: venues.nextUpdateAtMs
  }
}

/** The asset behind a directory entry in the plane's current universe (the plane only gets entries it listed). */
export const assetOf = (st: PlaneState, entry: DirectoryEntry): Effect.Effect<CryptoAsset, ApiError> => {
  const a = st.universe.get().byId.get(entry.asset_id)
  return a === undefined
    ? Effect.fail(apiError("unknown_asset", `no asset ${entry.asset_id}; find canonical IDs with \`resolve\``))
    : Effect.succeed(a)
}

/** The 90-day window of measure `m` in an asset's baselines. */
export const w = (s: AssetState, m: MeasureName) => s.baselines.windows[m]

/**
 * Why measure `m` is missing when it is because the bars held end to end do not cover its window (for
 * `Gaps.contextual`); undefined otherwise.
 */
export const missingOf = (
  s: AssetState,
  m: MeasureName
): { readonly reason: Reason; readonly detail: string } | undefined => {
  const short = s.shortWindows
  if (short === undefined || !short.measures.includes(m)) return undefined
  const held = Number((short.heldMs / HOUR_MS).toFixed(2))
  const window = m === "return_24h_pct" ? "24 h" : "7 days"
  return {
    reason: "insufficient_history",
    detail: `the 15 m bars held without a gap reach back ${held} h; its window is ${window}`
  }
}

/** When a memoized answer holds: while the store's revision is `revision` and the clock is in `[fromMs, untilMs)`. */
interface Validity {
  readonly revision: number
  readonly fromMs: number
  readonly untilMs: number
}

/** The state one crypto plane shares between its operations. */
export interface PlaneState {
  readonly store: MarketStore["Service"]
  /** The assets the plane serves (`../Universe.ts`): the registry, or live mode's asset directory. */
  readonly universe: UniverseRef
  /**
   * Each asset's baselines, with the first funding settlement they were sampled from (infinite: none) and the
   * primary venue's stored bars at their last advance (bars stored behind those restart them).
   */
  readonly baselines: Map<
    string,
    { baselines: AssetBaselines; firstFundingMs: number; barsExtent: SeriesExtent | undefined }
  >
  /**
   * Each asset's state, with what it was computed from (the data's end, its series statuses, and the store's
   * revision of the asset's series where the store has one, else its global revision, so that no write is
   * hidden by it).
   */
  readonly states: Map<
    string,
    {
      readonly at: number
      readonly revision: number | undefined
      readonly statuses: ReadonlyArray<SourceStatus>
      readonly state: AssetState
    }
  >
  /** Technicals and structure by `assetId/timeframe`, as of the newest closed bar. */
  readonly timeframes: Map<string, TimeframeState>
  /** Session levels by asset, with the newest bar and hour they were computed at. */
  readonly sessions: Map<string, { key: string; value: ReturnType<typeof sessionLevels> | undefined }>
  /** Per-asset results while their inputs are unchanged (`Operation.ts`), by operation, asset and parameters. */
  readonly results: BoundedCache<string, Validity & { readonly value: object }>
  /** What measuring derives from loaded series, and its scratch: this plane's own (`Measures.ts`). */
  readonly measureMemo: MeasureMemo
  /** Directory entries by asset while nothing that can change `alive` has happened (`Directory.ts`). */
  readonly entries: BoundedCache<string, Validity & { readonly version: symbol; readonly entry: DirectoryEntry }>
  /** The asset's series statuses (its venues' sources). */
  readonly statusesOf: (asset: CryptoAsset) => Effect.Effect<Array<SourceStatus>>
  /**
   * The asset's baselines advanced to the current hour and its measures now. The first call samples the
   * stored history (up to a year); later calls sample only the hours since.
   */
  readonly stateOf: (
    asset: CryptoAsset,
    nowMs: number,
    statuses: ReadonlyArray<SourceStatus>
  ) => Effect.Effect<AssetState>
  /**
   * Technicals and structure of `timeframe` from the bars held end to end up to the newest one, cached per newest
   * closed bar while no bars are stored behind the newest one read.
   */
  readonly timeframeOf: (
    asset: CryptoAsset,
    timeframe: Timeframe,
    nowMs: number
  ) => Effect.Effect<TimeframeState | undefined>
}

/** A timeframe with bars stored but no closed bar among those held end to end up to the newest one. */
const emptyTimeframe = (closedEndMs: number, barsExtent: SeriesExtent | undefined): TimeframeState => ({
  lastBarT: Number.NaN,
  closedEndMs,
  barsExtent,
  closedBars: 0,
  lastClose: Number.NaN,
  rsi: Number.NaN,
  adx: Number.NaN,
  atrPct: Number.NaN,
  plusDi: undefined,
  minusDi: undefined,
  baselines: { rsi: new Float64Array(0), adx: new Float64Array(0), atrPct: new Float64Array(0) },
  movingAverages: new Map(),
  trend: undefined,
  bos: undefined
})

/** The shared state of one crypto plane over `store` and `universe` (default: the registry), its caches empty. */
export const makePlaneState = (
  store: MarketStore["Service"],
  universe: UniverseRef = { get: () => staticUniverse, set: () => undefined }
): PlaneState => {
  const baselines: PlaneState["baselines"] = new Map()
  /** The scratch every asset's baselines are sorted with (one advance at a time: it is synchronous). */
  const sorter = new SlotSorter()
  /** The columns measuring derives from loaded series, and its scratch (`Measures.ts`). */
  const measureMemo = new MeasureMemo()
  const states: PlaneState["states"] = new Map()
  const timeframes: PlaneState["timeframes"] = new Map()
  const sessions: PlaneState["sessions"] = new Map()
  const results: PlaneState["results"] = makeBoundedCache(MaxMemoizedResults)
  const entries: PlaneState["entries"] = makeBoundedCache(MaxMemoizedResults)

  // -- loading ----------------------------------------------------------------------------------------------

  const byVenue = <K extends SeriesKind>(rows: ReadonlyArray<Series<K>>) => new Map(rows.map((s) => [s.venue, s]))

  /** The asset's series in `[fromMs, toMs)`; funding and open interest from `longFromMs`. */
  const load = (asset: CryptoAsset, fromMs: number, toMs: number, longFromMs: number) =>
    Effect.gen(function* () {
      const q = { assetId: asset.id, fromMs, toMs }
      const long = { assetId: asset.id, fromMs: longFromMs, toMs }
      const primary = primaryVenue(asset)
      const [bars, markIndex, oi, taker, book, funding, liq] = yield* Effect.all([
        primary === undefined ? Effect.succeed([]) : store.read("bars", { ...q, venue: primary }),
        store.read("markIndex", q),
        store.read("openInterest", long),
        store.read("takerFlow", q),
        store.read("bookMetrics", q),
        store.read("funding", long),
        store.read("liquidations", q)
      ])
      const m = {
        markIndex: byVenue(markIndex),
        oi: byVenue(oi),
        taker: byVenue(taker),
        book: byVenue(book),
        funding: byVenue(funding),
        liq: byVenue(liq)
      }
      const data: AssetData = {
        assetId: asset.id,
        primary: bars[0],
        venues: venuesOf(universe, asset).map((venue) =>
          venueData(venue, {
            markIndex: m.markIndex.get(venue),
            oi: m.oi.get(venue),
            taker: m.taker.get(venue),
            liq: m.liq.get(venue),
            book: m.book.get(venue),
            funding: m.funding.get(venue)
          })
        )
      }
      return data
    })

  /**
   * The statuses of the asset's venues, as they apply to the asset (`MarketStore.assetStatuses`: a symbol its
   * venue's stream does not serve reads its own REST state).
   */
  const statusesOf = (asset: CryptoAsset): Effect.Effect<Array<SourceStatus>> =>
    Effect.flatMap(store.status, (all) => {
      const venues = venuesOf(universe, asset)
      const mine = all.filter((s) => venues.includes(s.venue))
      const refine = store.assetStatuses
      return refine === undefined ? Effect.succeed(mine) : Effect.map(refine(asset.id, mine), (x) => [...x])
    })

  /**
   * Whether bars were stored behind the newest of `then` (an earlier extent of the same series) by `now`: a
   * backfill behind the first bar, or a hole filled. Bars appended after it, a rewrite of it (a bar still
   * forming) and the pruning of the oldest bars are not.
   */
  const storedBehind = (
    assetId: string,
    venue: string,
    then: SeriesExtent | undefined,
    now: SeriesExtent | undefined
  ) =>
    Effect.gen(function* () {
      if (now === undefined) return false
      if (then === undefined || now.firstMs < then.firstMs || now.lastMs < then.lastMs) return true
      const grew = now.count - then.count
      if (grew <= 0) return false
      if (grew > (now.lastMs - then.lastMs) / BAR_MS) return true
      const after = (yield* store.read("bars", { assetId, venue, fromMs: then.lastMs + 1, toMs: now.lastMs + 1 }))[0]
      return grew > (after?.t.length ?? 0)
    })

  /**
   * The asset's baselines advanced to the current hour and its measures now. The first call samples the
   * stored history (up to a year); later calls sample only the hours since.
   */
  const stateOf = (asset: CryptoAsset, nowMs: number, statuses: ReadonlyArray<SourceStatus>) =>
    Effect.gen(function* () {
      const primary = primaryVenue(asset)
      const extent =
        primary === undefined ? undefined : (yield* store.extent("bars", asset.id)).find((e) => e.venue === primary)
      const firstBarMs = extent?.firstMs
      // Measures are taken as of the end of the asset's newest bar: they depend on the data alone, and the
      // baselines only ever sample hours the data fully covers.
      const dataEnd = extent === undefined ? undefined : Math.min(nowMs, extent.lastMs + BAR_MS)
      // A feed that writes the bar still forming (live venues) moves the end with the clock: whole minutes
      // then, so answers within a minute share one computation.
      const at = dataEnd === undefined || dataEnd >= nowMs ? Math.floor(nowMs / 60_000) * 60_000 : dataEnd
      const series = statuses.filter((s) => SeriesComponents.has(s.component))
      const cached = states.get(asset.id)
      // Only the asset's own series feed its state: other assets' writes, books, funding states and ticks of
      // statuses that are not series leave it valid (the store's global revision where it has no per-asset one).
      const revision = store.seriesRevision?.(asset.id) ?? store.revision?.()
      if (
        cached !== undefined &&
        cached.state.asset === asset &&
        cached.at === at &&
        cached.revision === revision &&
        sameSeriesStatuses(cached.statuses, series)
      )
        return cached.state
      const hour = Math.floor(at / HOUR_MS) * HOUR_MS
      // Funding baselines start at the first settlement held, however short the bar history (`Baselines.ts`).
      const venues = venuesOf(universe, asset)
      const fundingExtents = (yield* store.extent("funding", asset.id)).filter((e) => venues.includes(e.venue))
      const firstFundingMs = fundingExtents.length === 0 ? undefined : Math.min(...fundingExtents.map((e) => e.firstMs))
      let entry = baselines.get(asset.id)
      // History written behind what was sampled (a late backfill, or the hole between the day a live start
      // stores first and the history filling in behind it) restarts the baselines.
      if (
        entry !== undefined &&
        ((firstFundingMs ?? Number.POSITIVE_INFINITY) < entry.firstFundingMs ||
          (primary !== undefined && (yield* storedBehind(asset.id, primary, entry.barsExtent, extent))))
      )
        entry = undefined
      const b = entry?.baselines ?? new AssetBaselines()
      const synced = b.syncedHour
      let data: AssetData
      const yearStart = hour - BaselineWindows["1y"] + HOUR_MS
      // The bar-derived measures need the week before their first hour; funding only settlements.
      const measuresFrom =
        firstBarMs === undefined
          ? undefined
          : Math.max(yearStart, Math.ceil((firstBarMs + 7 * DAY_MS) / HOUR_MS) * HOUR_MS)
      const fundingFrom =
        firstFundingMs === undefined ? undefined : Math.max(yearStart, Math.ceil(firstFundingMs / HOUR_MS) * HOUR_MS)
      if (measuresFrom === undefined && fundingFrom === undefined) {
        data = yield* load(asset, nowMs - 8 * DAY_MS, nowMs, nowMs - 8 * DAY_MS)
      } else if (synced === undefined) {
        const shortFrom =
          measuresFrom === undefined
            ? nowMs - 8 * DAY_MS
            : Math.max(measuresFrom, hour - BaselineWindows["90d"]) - 8 * DAY_MS
        const firstHour = Math.min(measuresFrom ?? Number.POSITIVE_INFINITY, fundingFrom ?? Number.POSITIVE_INFINITY)
        data = yield* load(asset, shortFrom, nowMs, Math.min(shortFrom, firstHour - 8 * DAY_MS))
        if (firstHour <= hour)
          b.advance(data, { measures: measuresFrom, funding: fundingFrom }, hour, sorter, measureMemo)
        if (b.syncedHour !== undefined) {
          baselines.set(asset.id, {
            baselines: b,
            firstFundingMs: firstFundingMs ?? Number.POSITIVE_INFINITY,
            barsExtent: extent
          })
        }
      } else {
        const from = Math.min(synced, hour) - 8 * DAY_MS
        data = yield* load(asset, from, nowMs, from)
        if (synced < hour) b.advance(data, synced + HOUR_MS, hour, sorter, measureMemo)
        if (entry !== undefined) entry.barsExtent = extent
      }
      // The loaded series are dropped here: only what the results need is kept.
      const state: AssetState = {
        asset,
        atMs: at,
        baselines: b,
        current: measuresAt(data, at, measureMemo),
        primaryNewestMs: dataEnd,
        barsEndMs: extent === undefined ? undefined : extent.lastMs + BAR_MS,
        oiByVenue: data.venues.flatMap((v) => {
          const usd = venueOiAt(v, at)
          return usd === undefined ? [] : [{ venue: v.venue, usd: roundValue(usd) }]
        }),
        liqVenues: data.venues.flatMap((v) => (v.liq === undefined ? [] : [v.venue])),
        shortWindows: shortWindowsAt(data, at)
      }
      states.set(asset.id, { at, revision, statuses: series, state })
      return state
    })

  /**
   * Closed bars of `timeframe` and their indicator series, cached per newest closed bar while no bars are stored
   * behind the newest one read (a backfill, a hole filled: those are recomputed).
   */
  const timeframeOf = (asset: CryptoAsset, timeframe: Timeframe, nowMs: number) =>
    Effect.gen(function* () {
      const primary = primaryVenue(asset)
      if (primary === undefined) return undefined
      const newest = (yield* store.latest("bars", { assetId: asset.id, venue: primary, n: 1, atMs: nowMs }))[0]
      if (newest === undefined || newest.t.length === 0) return undefined
      const newestT = newest.t[0] as number
      const newest15mEnd = Math.min(nowMs, newestT + BAR_MS)
      // The newest closed bar ends at the start of the interval holding the newest 15 m bar's end.
      const closedEnd = intervalStartMs(newest15mEnd, timeframe)
      const key = `${asset.id}/${timeframe}`
      const extent = (yield* store.extent("bars", asset.id)).find((e) => e.venue === primary)
      const cached = timeframes.get(key)
      if (
        cached !== undefined &&
        cached.closedEndMs === closedEnd &&
        !(yield* storedBehind(asset.id, primary, cached.barsExtent, extent))
      ) {
        const was = cached.barsExtent
        if (extent === undefined || (was?.lastMs === extent.lastMs && was.count === extent.count)) return cached
        const checked = { ...cached, barsExtent: extent }
        timeframes.set(key, checked)
        return checked
      }
      // Up to the newest bar, so that the run held end to end is the one that ends there.
      const raw = (yield* store.read("bars", {
        assetId: asset.id,
        venue: primary,
        fromMs: closedEnd - TECHNICALS_HISTORY_MS,
        toMs: newestT + 1
      }))[0]
      if (raw === undefined || raw.t.length === 0) return undefined
      const held = sliceSeries(raw, runStartIndex(raw.t, raw.t.length - 1), lowerBound(raw.t, closedEnd))
      // Complete periods only: a first period the held bars join mid-way is not a bar.
      const agg = completeBars(held, timeframe)
      const closed = agg.t.length
      if (closed === 0) {
        const state = emptyTimeframe(closedEnd, extent)
        timeframes.set(key, state)
        return state
      }
      const lastBarT = agg.t[closed - 1] as number
      const bars = sliceSeries(agg, 0, closed)
      const r = rsi(bars.close)
      const a = adx(bars)
      const atr = atrPct(bars)
      const from = lastBarT - BaselineWindows["90d"]
      const inWindow = (series: ReadonlyArray<number>) =>
        Float64Array.from(sortedFinite(series.filter((_, i) => (bars.t[i] as number) > from)))
      const structureBars = sliceSeries(bars, Math.max(0, bars.t.length - StructureBars), bars.t.length)
      const state: TimeframeState = {
        lastBarT,
        closedEndMs: closedEnd,
        barsExtent: extent,
        closedBars: closed,
        lastClose: bars.close[closed - 1] as number,
        rsi: lastFinite(r) ?? Number.NaN,
        adx: lastFinite(a.adx) ?? Number.NaN,
        atrPct: lastFinite(atr) ?? Number.NaN,
        plusDi: a.plusDi[closed - 1],
        minusDi: a.minusDi[closed - 1],
        baselines: { rsi: inWindow(r), adx: inWindow(a.adx), atrPct: inWindow(atr) },
        movingAverages: new Map(
          MovingAveragePeriods.flatMap((p) => [
            [`sma_${p}`, lastFinite(sma(bars.close, p))] as const,
            [`ema_${p}`, lastFinite(ema(bars.close, p))] as const
          ])
        ),
        trend: trendState(structureBars),
        bos: lastBreakOfStructure(structureBars)
      }
      timeframes.set(key, state)
      return state
    })

  return {
    store,
    universe,
    baselines,
    states,
    timeframes,
    sessions,
    results,
    measureMemo,
    entries,
    statusesOf,
    stateOf,
    timeframeOf
  }
}

/** The warm-ups of `CryptoPlane` (`warm`, `warmAsset`) over a plane's state. */
export const makeWarm = (st: PlaneState) => {
  const { statusesOf, stateOf, timeframeOf } = st
  const warmOne = (asset: CryptoAsset, nowMs: number) =>
    Effect.gen(function* () {
      if (asset.listings.length === 0) return
      const statuses = yield* statusesOf(asset)
      yield* stateOf(asset, nowMs, statuses)
      yield* timeframeOf(asset, "4h", nowMs)
    })

  // Between assets the warm-up yields, so requests arriving meanwhile are not held up for all of it.
  const warm = Effect.gen(function* () {
    const nowMs = yield* Clock.currentTimeMillis
    for (const asset of st.universe.get().assets) {
      yield* warmOne(asset, nowMs)
      yield* Effect.yieldNow
    }
  })

  const warmAsset = (assetId: string) =>
    Effect.gen(function* () {
      const asset = st.universe.get().byId.get(assetId)
      if (asset !== undefined) yield* warmOne(asset, yield* Clock.currentTimeMillis)
    })

  return { warm, warmAsset }
}
