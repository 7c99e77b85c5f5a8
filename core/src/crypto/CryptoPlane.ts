/**
 * The crypto plane: what `read`, the crypto domain operations, `series`, `rank` and the crypto directory
 * answer, computed from the `MarketStore` (`Market.ts`) and the asset registry (`Assets.ts`). It plugs into
 * the operations through `PlaneOperations` (`Planes.ts`), which decides refusals before any of this runs.
 *
 * Every measured value is a contextual value `{value, pctl}` against its own hourly baseline (`Baselines.ts`);
 * a value that cannot be computed is `null` and named under `unavailable` with its reason. The baselines and
 * the current measures of each asset are cached and advanced incrementally (the first request for an asset
 * samples its history once).
 */
import { Clock, Effect } from "effect"
import { chargeFor } from "../Billing.ts"
import { decodeCursor, encodeCursor } from "../Cursor.ts"
import { type ApiError, apiError } from "../Errors.ts"
import type { CanonicalParams } from "../Params.ts"
import { BaselineWindows, MinBaselineN, percentileRank, type SortedWindow, sortedFinite } from "../Percentile.ts"
import type { Handler, HandlerInput } from "../Pipeline.ts"
import { type DirectoryEntry, type PlaneForAsset, type PlaneOperations, tierServes } from "../Planes.ts"
import type { RankMetrics } from "../Registry.ts"
import { CascadeRule, cascadeRisk, FlowRule, flow, isExtreme, PositioningRule, positioning } from "./Assessment.ts"
import { type CryptoAsset, CryptoAssets, cryptoAsset, directoryEntryOf } from "./Assets.ts"
import { AssetBaselines, BaselineCadence } from "./Baselines.ts"
import { type ResultFreshness, resultFreshness, worstStatus } from "./Freshness.ts"
import { aprPct, barsSinceSignFlip, fraction8hPct, fundingBand, hottestVenue, venueSpread8hPct } from "./Funding.ts"
import {
  BAR_MS,
  type Bars,
  type BookSnapshot,
  bookDepth,
  type Component,
  completeBars,
  DAY_MS,
  freshnessOf,
  HOUR_MS,
  type Interval,
  intervalEndMs,
  intervalStartMs,
  MarketStore,
  type Series,
  type SeriesKind,
  type SourceStatus,
  sliceSeries
} from "./Market.ts"
import {
  type AssetData,
  DepthBandsPct,
  type MeasureName,
  type Measures,
  measuresAt,
  PrintPrecision,
  venueData,
  venueOiAt
} from "./Measures.ts"
import { rangeStartMs, type SeriesRange, summarize } from "./SeriesSummary.ts"
import { lastBreakOfStructure, StructureBars, StructureRule, sessionLevels, trendState } from "./Structure.ts"
import { adx, atrPct, ema, lastFinite, MovingAveragePeriods, rsi, sma } from "./Technicals.ts"

// ---------------------------------------------------------------------------------------------------------------
// Result building blocks
// ---------------------------------------------------------------------------------------------------------------

type Reason = "not_covered" | "no_data" | "insufficient_history" | "source_stale" | "source_down" | "not_applicable"
type Unavailable = Record<string, { reason: Reason; detail?: string }>

/**
 * Ten significant digits: enough for any market measurement, without binary noise in the JSON. USD amounts
 * and prices (a token may trade at 1e-8 USD) are printed so.
 */
const roundValue = (x: number): number => (x === 0 ? 0 : Number(x.toPrecision(PrintPrecision.significantDigits)))

const ratioScale = 10 ** PrintPrecision.ratioDecimals
/**
 * A percentage, rate, ratio or indicator value as printed: ten significant digits and at most 12 decimal
 * places (`PrintPrecision`), so the rounding residue of a difference of equal inputs (3.5e-18) prints as 0.
 */
const roundRatio = (x: number): number => roundValue(Math.round(x * ratioScale) / ratioScale)

/** A figure as printed, by its name: USD amounts (`usd`, `..._usd`) by `roundValue`, the rest by `roundRatio`. */
const roundFigure = (name: string, x: number): number =>
  name === "usd" || name.endsWith("_usd") || name.endsWith(".usd") ? roundValue(x) : roundRatio(x)

/** ISO 8601 text of a time; results repeat the same few times (bar and session boundaries), so remembered. */
const isoCache = new Map<number, string>()
const iso = (ms: number): string => {
  let text = isoCache.get(ms)
  if (text === undefined) {
    if (isoCache.size >= 4096) isoCache.clear()
    text = new Date(ms).toISOString()
    isoCache.set(ms, text)
  }
  return text
}

/** Most per-asset results remembered at once (operations x assets x parameter sets in use). */
const MaxMemoizedResults = 4096

/** The parameters a per-asset result depends on, as text: all but the asset IDs, in name order. */
const paramsKey = (params: CanonicalParams): string => {
  let key = ""
  for (const name of Object.keys(params).sort()) {
    if (name === "id" || name === "ids") continue
    key += `${name}=${JSON.stringify(params[name])};`
  }
  return key
}

/**
 * The first moment after `nowMs` at which something timed on the grid `newestMs + k * cadenceMs` can change:
 * freshness compares ages with `<=` (live up to one cadence, delayed up to three) and `next_update_at` moves
 * to the next slot once a slot has passed, so every change happens 1 ms after a grid point.
 */
const nextChangeMs = (newestMs: number, cadenceMs: number, nowMs: number): number =>
  newestMs + Math.ceil((nowMs - newestMs) / cadenceMs) * cadenceMs + 1

/**
 * Until when (exclusive) a per-asset result built at `nowMs` stays the same if nothing is written. The clock
 * enters a result only through freshness (statuses and `next_update_at` change just after a point of a
 * source's cadence grid, `newest + k * cadence`), the asset's state (its measure time follows the minute while
 * the newest bar is forming, and stops at the bar's end) and the session levels (per hour). Conservative:
 * every source's grid counts, whether the result reads that source or not; a result timed "now" (nothing
 * delivered yet) is not reused at all.
 */
const validUntilOf = (
  statuses: ReadonlyArray<SourceStatus>,
  state: AssetState,
  fresh: ResultFreshness,
  nowMs: number
): number => {
  if (fresh.asOfMs === nowMs) return nowMs + 1
  let until = (Math.floor(nowMs / HOUR_MS) + 1) * HOUR_MS
  if (state.barsEndMs === undefined || state.barsEndMs >= nowMs) {
    until = Math.min(until, (Math.floor(nowMs / 60_000) + 1) * 60_000)
  }
  if (state.barsEndMs !== undefined) until = Math.min(until, nextChangeMs(state.barsEndMs, BAR_MS, nowMs))
  for (const s of statuses) {
    if (s.cadenceMs <= 0 || s.newestMs <= 0) return nowMs + 1
    until = Math.min(until, nextChangeMs(s.newestMs, s.cadenceMs, nowMs))
  }
  return until
}

/** Collects `unavailable` entries while a result is built. */
class Gaps {
  readonly entries: Unavailable = {}
  add(component: string, reason: Reason, detail?: string): null {
    this.entries[component] = detail === undefined ? { reason } : { reason, detail }
    return null
  }
  /** `{value, pctl}` of `value` in `window`, or null with the reason recorded. */
  contextual(
    component: string,
    value: number,
    window: SortedWindow | ReadonlyArray<number> | undefined
  ): { value: number; pctl: number; n: number } | null {
    if (!Number.isFinite(value)) return this.add(component, "no_data", "its inputs are missing in the store")
    const sorted = window === undefined ? [] : Array.isArray(window) ? window : (window as SortedWindow).sortedValues
    const pctl = percentileRank(value, sorted)
    if (pctl === undefined) {
      return this.add(
        component,
        "insufficient_history",
        `${sorted.length} baseline samples; a percentile needs at least ${MinBaselineN}`
      )
    }
    return { value: roundFigure(component, value), pctl, n: sorted.length }
  }
  plain(component: string, value: number | undefined): number | null {
    if (value === undefined || !Number.isFinite(value)) return this.add(component, "no_data")
    return roundFigure(component, value)
  }
  /**
   * The sources feeding this result are failing: what is missing is missing because of them, so `no_data`
   * becomes `source_down` (DECISIONS: the reason names the cause a client can act on: wait and retry).
   */
  blameFailingSource(): void {
    for (const [component, entry] of Object.entries(this.entries)) {
      if (entry.reason !== "no_data") continue
      this.entries[component] = {
        reason: "source_down",
        detail: entry.detail === undefined ? "its source is failing" : `${entry.detail}; its source is failing`
      }
    }
  }
  /** `unavailable` when something is missing (the key is absent otherwise). */
  get block(): { unavailable?: Unavailable } {
    return Object.keys(this.entries).length === 0 ? {} : { unavailable: this.entries }
  }
}

/** The components stored as series: what an asset's measures are computed from (its state's cache key). */
const SeriesComponents: ReadonlySet<Component> = new Set([
  "bars",
  "markIndex",
  "openInterest",
  "takerFlow",
  "bookMetrics",
  "funding",
  "liquidations"
])

/** Source components each operation reads, for its freshness clocks. */
const OperationComponents: { readonly [op: string]: ReadonlyArray<Component> } = {
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

const venuesCache = new WeakMap<CryptoAsset, ReadonlyArray<string>>()
/** The venues an asset is listed on, primary first (remembered: the registry is immutable). */
const venuesOf = (a: CryptoAsset): ReadonlyArray<string> => {
  let v = venuesCache.get(a)
  if (v === undefined) {
    v = [...new Set(a.listings.map((l) => l.venue))]
    venuesCache.set(a, v)
  }
  return v
}

/** Whether two status lists (same source, same order) report the same series data. */
const sameSeriesStatuses = (a: ReadonlyArray<SourceStatus>, b: ReadonlyArray<SourceStatus>): boolean => {
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
const primaryVenue = (a: CryptoAsset): string | undefined => a.listings[0]?.venue

/**
 * A book older than this behind the newest bar's end (a forming bar's: now) is not quoted as the price: one
 * bar. Books arrive every few seconds, bars every minute (forming) or 15 minutes (closed), so a book within a bar
 * of the newest price is the newer observation or close to it.
 */
const MaxBookLagMs = BAR_MS

/**
 * The quote of one book snapshot: best bid, best ask and their mid, all rounded alike (so the mid printed lies
 * between the bid and ask printed). Undefined when a side is empty or the book lags the newest bar by more than
 * `MaxBookLagMs`.
 */
export const quoteOf = (
  book: BookSnapshot | undefined,
  newestBarEndMs: number | undefined
): { readonly bid: number; readonly ask: number; readonly mid: number } | undefined => {
  const bid = book?.bids[0]?.[0]
  const ask = book?.asks[0]?.[0]
  if (book === undefined || bid === undefined || ask === undefined || !(bid > 0) || !(ask >= bid)) return undefined
  if (newestBarEndMs !== undefined && book.t < newestBarEndMs - MaxBookLagMs) return undefined
  const b = roundValue(bid)
  const a = roundValue(ask)
  const mid = Math.min(a, Math.max(b, roundValue((bid + ask) / 2)))
  return { bid: b, ask: a, mid }
}

const clocks = (f: ResultFreshness) => ({
  as_of: iso(f.asOfMs),
  status: f.status,
  next_update_at: iso(f.nextUpdateAtMs)
})

// ---------------------------------------------------------------------------------------------------------------
// The plane
// ---------------------------------------------------------------------------------------------------------------

/** Technicals and structure of one asset on one timeframe, as of its newest closed bar. */
interface TimeframeState {
  readonly lastBarT: number
  /** End of the newest closed bar: the cache key. */
  readonly closedEndMs: number
  readonly bars: Bars
  readonly rsi: ReadonlyArray<number>
  readonly adx: ReadonlyArray<number>
  readonly plusDi: ReadonlyArray<number>
  readonly minusDi: ReadonlyArray<number>
  readonly atrPct: ReadonlyArray<number>
  /** Sorted 90-day baselines of the three Wilder indicators. */
  readonly baselines: { readonly rsi: Array<number>; readonly adx: Array<number>; readonly atrPct: Array<number> }
  /** Last SMA and EMA values by `sma_20` ... `ema_200` (undefined: not enough bars). */
  readonly movingAverages: ReadonlyMap<string, number | undefined>
  /** Structure over the last `StructureBars` closed bars. */
  readonly trend: ReturnType<typeof trendState>
  readonly bos: ReturnType<typeof lastBreakOfStructure>
}

/** What one asset's measures are as of one moment, with the baselines they are ranked against. */
interface AssetState {
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
}

const TIMEFRAMES = ["15m", "1h", "4h", "1d"] as const
type Timeframe = (typeof TIMEFRAMES)[number]

/** Stored history read for technicals: a year plus warm-up for the 200-bar averages on daily bars. */
const TECHNICALS_HISTORY_MS = 420 * DAY_MS

/** The crypto plane's operations, and a warm-up the composition root may fork once the feed has backfilled. */
export interface CryptoPlane extends PlaneOperations {
  /**
   * Samples every priced asset's baselines and its default-timeframe technicals now, so the first requests
   * (a `rank` scans the whole core tier) do not pay for it. Optional: everything also happens on demand.
   */
  readonly warm: Effect.Effect<void>
  /**
   * The same for one asset (its baselines sampled up to now, its default-timeframe technicals), for a feed
   * that fills the store asset by asset; unknown or unpriced assets are skipped.
   */
  readonly warmAsset: (assetId: string) => Effect.Effect<void>
}

/**
 * Builds the crypto plane over the market store in context. Results are computed on demand and cached per
 * asset; the Clock gives "now" where the pipeline does not.
 */
export const makeCryptoPlane: Effect.Effect<CryptoPlane, never, MarketStore> = Effect.gen(function* () {
  const store = yield* MarketStore
  /** Each asset's baselines, with the first bar and funding settlement they were sampled from (infinite: none). */
  const baselines = new Map<string, { baselines: AssetBaselines; firstBarMs: number; firstFundingMs: number }>()
  /**
   * Each asset's state, with what it was computed from (the data's end, its series statuses, and the store's
   * revision where the store has one, so that no write is hidden by it).
   */
  const states = new Map<
    string,
    {
      readonly at: number
      readonly revision: number | undefined
      readonly statuses: ReadonlyArray<SourceStatus>
      readonly state: AssetState
    }
  >()
  const timeframes = new Map<string, TimeframeState>()
  const sessionsCache = new Map<string, { key: string; value: ReturnType<typeof sessionLevels> | undefined }>()

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
        venues: venuesOf(asset).map((venue) =>
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

  const statusesOf = (asset: CryptoAsset) =>
    Effect.map(store.status, (all) => {
      const venues = venuesOf(asset)
      return all.filter((s) => venues.includes(s.venue))
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
      const revision = store.revision?.()
      if (
        cached !== undefined &&
        cached.at === at &&
        cached.revision === revision &&
        sameSeriesStatuses(cached.statuses, series)
      )
        return cached.state
      const hour = Math.floor(at / HOUR_MS) * HOUR_MS
      // Funding baselines start at the first settlement held, however short the bar history (`Baselines.ts`).
      const venues = venuesOf(asset)
      const fundingExtents = (yield* store.extent("funding", asset.id)).filter((e) => venues.includes(e.venue))
      const firstFundingMs = fundingExtents.length === 0 ? undefined : Math.min(...fundingExtents.map((e) => e.firstMs))
      let entry = baselines.get(asset.id)
      // History written before what was sampled (a late backfill) restarts the baselines.
      if (
        entry !== undefined &&
        ((firstBarMs ?? Number.POSITIVE_INFINITY) < entry.firstBarMs ||
          (firstFundingMs ?? Number.POSITIVE_INFINITY) < entry.firstFundingMs)
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
        if (firstHour <= hour) b.advance(data, { measures: measuresFrom, funding: fundingFrom }, hour)
        if (b.syncedHour !== undefined) {
          baselines.set(asset.id, {
            baselines: b,
            firstBarMs: firstBarMs ?? Number.POSITIVE_INFINITY,
            firstFundingMs: firstFundingMs ?? Number.POSITIVE_INFINITY
          })
        }
      } else {
        const from = Math.min(synced, hour) - 8 * DAY_MS
        data = yield* load(asset, from, nowMs, from)
        if (synced < hour) b.advance(data, synced + HOUR_MS, hour)
      }
      // The loaded series are dropped here: only what the results need is kept.
      const state: AssetState = {
        asset,
        atMs: at,
        baselines: b,
        current: measuresAt(data, at),
        primaryNewestMs: dataEnd,
        barsEndMs: extent === undefined ? undefined : extent.lastMs + BAR_MS,
        oiByVenue: data.venues.flatMap((v) => {
          const usd = venueOiAt(v, at)
          return usd === undefined ? [] : [{ venue: v.venue, usd: roundValue(usd) }]
        })
      }
      states.set(asset.id, { at, revision, statuses: series, state })
      return state
    })

  /** Closed bars of `timeframe` and their indicator series, cached per newest closed bar. */
  const timeframeOf = (asset: CryptoAsset, timeframe: Timeframe, nowMs: number) =>
    Effect.gen(function* () {
      const primary = primaryVenue(asset)
      if (primary === undefined) return undefined
      const newest = (yield* store.latest("bars", { assetId: asset.id, venue: primary, n: 1, atMs: nowMs }))[0]
      if (newest === undefined || newest.t.length === 0) return undefined
      const newest15mEnd = Math.min(nowMs, (newest.t[0] as number) + BAR_MS)
      // The newest closed bar ends at the start of the interval holding the newest 15 m bar's end.
      const closedEnd = intervalStartMs(newest15mEnd, timeframe)
      const key = `${asset.id}/${timeframe}`
      const cached = timeframes.get(key)
      if (cached !== undefined && cached.closedEndMs === closedEnd) return cached
      const raw = (yield* store.read("bars", {
        assetId: asset.id,
        venue: primary,
        fromMs: closedEnd - TECHNICALS_HISTORY_MS,
        toMs: closedEnd
      }))[0]
      if (raw === undefined || raw.t.length === 0) return undefined
      // Complete periods only: a first period the stored history joins mid-way is not a bar.
      const agg = completeBars(raw, timeframe)
      const closed = agg.t.length
      if (closed === 0) return undefined
      const lastBarT = agg.t[closed - 1] as number
      const bars = sliceSeries(agg, 0, closed)
      const r = rsi(bars.close)
      const a = adx(bars)
      const atr = atrPct(bars)
      const from = lastBarT - BaselineWindows["90d"]
      const inWindow = (series: ReadonlyArray<number>) =>
        sortedFinite(series.filter((_, i) => (bars.t[i] as number) > from))
      const structureBars = sliceSeries(bars, Math.max(0, bars.t.length - StructureBars), bars.t.length)
      const state: TimeframeState = {
        lastBarT,
        closedEndMs: closedEnd,
        bars,
        rsi: r,
        adx: a.adx,
        plusDi: a.plusDi,
        minusDi: a.minusDi,
        atrPct: atr,
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

  /**
   * Freshness of `op` for `asset`: its venues' source components, and the asset's own newest bar (a venue
   * that is live for other assets may have stopped quoting this one). `primaryNewestMs` is the end of the
   * newest primary 15 m bar (capped at now), when known.
   */
  const freshnessFor = (
    asset: CryptoAsset,
    op: string,
    statuses: ReadonlyArray<SourceStatus>,
    nowMs: number,
    primaryNewestMs?: number
  ): ResultFreshness => {
    const venues = resultFreshness(statuses, venuesOf(asset), OperationComponents[op] ?? ["bars"], nowMs)
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

  const sourceOf = (statuses: ReadonlyArray<SourceStatus>): { source?: string } =>
    statuses[0] === undefined ? {} : { source: statuses[0].source }

  /** The asset behind a directory entry (the plane only gets entries it listed). */
  const assetOf = (entry: DirectoryEntry): Effect.Effect<CryptoAsset, ApiError> => {
    const a = cryptoAsset(entry.asset_id)
    return a === undefined
      ? Effect.fail(apiError("unknown_asset", `no asset ${entry.asset_id}; find canonical IDs with \`resolve\``))
      : Effect.succeed(a)
  }

  /** Per-asset results while their inputs are unchanged (see `perAsset`), by operation, asset and parameters. */
  const results = new Map<
    string,
    { readonly revision: number; readonly fromMs: number; readonly untilMs: number; readonly value: object }
  >()

  /** Runs `build` with the asset, its statuses and state, for one per-asset operation. */
  const perAsset =
    (
      op: string,
      build: (ctx: {
        readonly asset: CryptoAsset
        readonly params: CanonicalParams
        readonly nowMs: number
        readonly statuses: ReadonlyArray<SourceStatus>
        readonly state: AssetState
        readonly gaps: Gaps
        readonly fresh: ResultFreshness
      }) => Effect.Effect<object, ApiError>
    ): PlaneForAsset =>
    (entry, params, input) => {
      const nowMs = input.nowMs
      // A result depends on the store's content (its revision), the parameters and the clock only through
      // the moments listed in `validUntilOf`: until the first of them, with nothing written meanwhile, the
      // same answer is served again instead of being rebuilt.
      const revision = store.revision?.()
      const memoKey = `${op}\u0000${entry.asset_id}\u0000${paramsKey(params)}`
      const memo = revision === undefined ? undefined : results.get(memoKey)
      if (memo !== undefined && memo.revision === revision && nowMs >= memo.fromMs && nowMs < memo.untilMs) {
        return Effect.succeed(memo.value)
      }
      return Effect.gen(function* () {
        const asset = yield* assetOf(entry)
        const statuses = yield* statusesOf(asset)
        const state = yield* stateOf(asset, nowMs, statuses)
        const fresh = freshnessFor(asset, op, statuses, nowMs, state.primaryNewestMs)
        const gaps = new Gaps()
        const body = yield* build({ asset, params, nowMs, statuses, state, gaps, fresh })
        const components = OperationComponents[op] ?? ["bars"]
        const venues = venuesOf(asset)
        if (statuses.some((s) => s.failing && venues.includes(s.venue) && components.includes(s.component))) {
          gaps.blameFailingSource()
        }
        // `body` may refine `next_update_at` (technicals change only when a bar closes).
        const value = { asset_id: asset.id, ...clocks(fresh), ...body, ...gaps.block }
        // Only when nothing was written meanwhile (a write during the build may or may not be in it).
        if (revision !== undefined && store.revision?.() === revision) {
          if (results.size >= MaxMemoizedResults) results.clear()
          results.set(memoKey, { revision, fromMs: nowMs, untilMs: validUntilOf(statuses, state, fresh, nowMs), value })
        }
        return value
      })
    }

  const w = (s: AssetState, m: MeasureName) => s.baselines.windows[m]

  // -- funding ------------------------------------------------------------------------------------------------

  const fundingOf = (asset: CryptoAsset, s: AssetState, gaps: Gaps) =>
    Effect.gen(function* () {
      const statesNow = yield* store.fundingStates(asset.id)
      const rate = s.current.funding_rate_8h_pct
      const rateCtx = gaps.contextual("funding.rate_8h_pct", rate, w(s, "funding_rate_8h_pct"))
      const year = s.baselines.funding1y
      const pctl1y = Number.isFinite(rate) ? percentileRank(rate, year.sortedValues) : undefined
      if (rateCtx !== null && pctl1y === undefined) {
        gaps.add(
          "funding.rate_8h_pct.pctl_1y",
          "insufficient_history",
          `${year.n} baseline samples over a year; at least ${MinBaselineN} needed`
        )
      }
      const venues = [...s.current.venueFunding8hPct.entries()]
      const byVenue = venues.map(([venue, r]) => {
        const own = s.baselines.venueFunding.get(venue)?.sortedValues ?? []
        const pctl = percentileRank(r, own)
        if (pctl === undefined) {
          gaps.add(
            `funding.by_venue.${venue}.rate_pctl`,
            "insufficient_history",
            `${own.length} baseline samples of this venue; at least ${MinBaselineN} needed`
          )
        }
        const st = statesNow.find((x) => x.venue === venue)
        return {
          venue,
          rate_8h_pct: roundRatio(r),
          rate_pctl: pctl ?? null,
          rate_pctl_n: own.length,
          interval_hours: st === undefined ? null : st.intervalMs / HOUR_MS,
          predicted_rate_8h_pct: st === undefined ? null : roundRatio(fraction8hPct(st.predictedRate, st.intervalMs)),
          next_funding_at: st === undefined ? null : iso(st.nextFundingMs)
        }
      })
      const hot = hottestVenue(venues.map(([, r]) => r))
      const hotRow = hot === undefined ? undefined : byVenue[hot]
      const nextMs = statesNow.length === 0 ? undefined : Math.min(...statesNow.map((x) => x.nextFundingMs))
      // Sign flips over the hourly samples, the current value standing in for the running hour.
      let flips: number | undefined
      if (Number.isFinite(rate)) {
        const series = [...s.baselines.fundingValues]
        const last = series[series.length - 1]
        if (last === undefined || Math.sign(last) !== Math.sign(rate)) series.push(rate)
        flips = barsSinceSignFlip(series)
      }
      const spread = venueSpread8hPct(venues.map(([, r]) => r))
      return {
        funding: {
          rate_8h_pct: rateCtx === null ? null : { ...rateCtx, pctl_1y: pctl1y ?? null, n_1y: year.n },
          apr_pct: Number.isFinite(rate) ? roundRatio(aprPct(rate)) : gaps.add("funding.apr_pct", "no_data"),
          bars_since_sign_flip:
            flips ??
            gaps.add(
              "funding.bars_since_sign_flip",
              Number.isFinite(rate) ? "insufficient_history" : "no_data",
              "no sign change within the stored year of hourly samples"
            ),
          venue_hot:
            hotRow === undefined || hotRow.rate_pctl === null
              ? gaps.add("funding.venue_hot", hotRow === undefined ? "no_data" : "insufficient_history")
              : {
                  venue: hotRow.venue,
                  rate_8h_pct: hotRow.rate_8h_pct,
                  rate_pctl: hotRow.rate_pctl,
                  rate_pctl_n: hotRow.rate_pctl_n
                },
          venues: byVenue.length,
          by_venue: byVenue,
          next_funding_at: nextMs === undefined ? gaps.add("funding.next_funding_at", "no_data") : iso(nextMs),
          venue_spread_8h_pct:
            spread === undefined ? gaps.add("funding.venue_spread_8h_pct", "no_data") : roundRatio(spread),
          funding_band: Number.isFinite(rate) ? fundingBand(rate) : gaps.add("funding.funding_band", "no_data")
        },
        nextFundingMs: nextMs
      }
    })

  // -- technicals and structure -------------------------------------------------------------------------------

  const timeframeParam = (params: CanonicalParams): Timeframe => {
    const t = params.timeframe
    return typeof t === "string" && (TIMEFRAMES as ReadonlyArray<string>).includes(t) ? (t as Timeframe) : "4h"
  }

  const technicalsOf = (asset: CryptoAsset, timeframe: Timeframe, nowMs: number, gaps: Gaps) =>
    Effect.gen(function* () {
      const tf = yield* timeframeOf(asset, timeframe, nowMs)
      if (tf === undefined) {
        gaps.add("rsi_14", "no_data", "no closed bars")
        gaps.add("adx_14", "no_data", "no closed bars")
        gaps.add("atr_14_pct", "no_data", "no closed bars")
        gaps.add("moving_averages", "no_data", "no closed bars")
        return { timeframe, rsi_14: null, adx_14: null, atr_14_pct: null }
      }
      const close = tf.bars.close
      const last = close[close.length - 1] as number
      const mas: Record<string, number | null> = {}
      for (const p of MovingAveragePeriods) {
        for (const name of ["sma", "ema"] as const) {
          const key = `${name}_${p}`
          const v = tf.movingAverages.get(key)
          mas[key] =
            v === undefined
              ? gaps.add(`moving_averages.${key}`, "insufficient_history", `${close.length} closed bars; ${p} needed`)
              : roundValue(v)
          const vs = `close_vs_${key}_pct`
          mas[vs] =
            v === undefined
              ? gaps.add(`moving_averages.${vs}`, "insufficient_history")
              : roundRatio((last / v - 1) * 100)
        }
      }
      const n = close.length
      return {
        timeframe,
        bar_at: iso(tf.lastBarT),
        close: roundValue(last),
        rsi_14: gaps.contextual("rsi_14", lastFinite(tf.rsi) ?? Number.NaN, tf.baselines.rsi),
        adx_14: gaps.contextual("adx_14", lastFinite(tf.adx) ?? Number.NaN, tf.baselines.adx),
        atr_14_pct: gaps.contextual("atr_14_pct", lastFinite(tf.atrPct) ?? Number.NaN, tf.baselines.atrPct),
        plus_di_14: gaps.plain("plus_di_14", tf.plusDi[n - 1]),
        minus_di_14: gaps.plain("minus_di_14", tf.minusDi[n - 1]),
        moving_averages: mas,
        baseline: { window: "90d", cadence: timeframe, n: tf.baselines.rsi.length }
      }
    })

  /** Session levels from the last two days of 15 m bars, cached per newest bar and hour. */
  const sessionsOf = (asset: CryptoAsset, primary: string, nowMs: number) =>
    Effect.gen(function* () {
      const newest = (yield* store.latest("bars", { assetId: asset.id, venue: primary, n: 1, atMs: nowMs }))[0]
      const key = `${newest?.t[0] ?? 0}:${newest?.close[0] ?? 0}:${Math.floor(nowMs / HOUR_MS)}`
      const cached = sessionsCache.get(asset.id)
      if (cached !== undefined && cached.key === key) return cached.value
      const recent = (yield* store.read("bars", {
        assetId: asset.id,
        venue: primary,
        fromMs: nowMs - 2 * DAY_MS,
        toMs: nowMs
      }))[0]
      const value = recent === undefined ? undefined : sessionLevels(recent, nowMs)
      sessionsCache.set(asset.id, { key, value })
      return value
    })

  const structureOf = (asset: CryptoAsset, timeframe: Timeframe, nowMs: number, gaps: Gaps) =>
    Effect.gen(function* () {
      const tf = yield* timeframeOf(asset, timeframe, nowMs)
      const primary = primaryVenue(asset)
      const sessions = primary === undefined ? undefined : yield* sessionsOf(asset, primary, nowMs)
      const bars = tf?.bars
      const trend = tf?.trend
      const bos = tf?.bos
      const sessionBlock: Record<string, unknown> = {}
      if (sessions !== undefined) {
        for (const [name, s] of Object.entries(sessions.sessions)) {
          sessionBlock[name] = {
            high: roundValue(s.high),
            low: roundValue(s.low),
            start: iso(s.start),
            end: iso(s.end),
            complete: s.complete
          }
        }
        if (sessions.prior_day !== undefined) {
          sessionBlock.prior_day = {
            high: roundValue(sessions.prior_day.high),
            low: roundValue(sessions.prior_day.low),
            date: iso(sessions.prior_day.date).slice(0, 10)
          }
        }
      }
      return {
        timeframe,
        trend_state:
          trend ??
          gaps.add(
            "trend_state",
            bars === undefined ? "no_data" : "insufficient_history",
            "needs two swing highs and two swing lows"
          ),
        last_bos:
          bos === undefined
            ? gaps.add(
                "last_bos",
                bars === undefined ? "no_data" : "insufficient_history",
                `no break of structure in the last ${StructureBars} closed bars`
              )
            : { direction: bos.direction, level: roundValue(bos.level), at: iso(bos.at), swing_at: iso(bos.swing_at) },
        session_levels: Object.keys(sessionBlock).length === 0 ? gaps.add("session_levels", "no_data") : sessionBlock,
        rule: StructureRule
      }
    })

  // -- per-asset operations ---------------------------------------------------------------------------------

  const price = perAsset("price", ({ asset, state, gaps }) =>
    Effect.gen(function* () {
      const primary = primaryVenue(asset)
      const books = primary === undefined ? [] : yield* store.books(asset.id, primary)
      const book = books[0]
      // One moment: \`usd\`, \`bid_usd\` and \`ask_usd\` come from the primary venue's latest book (usd its mid), so
      // \`usd\` always lies inside the spread. Without a usable book (none, one side empty, or older than one
      // bars behind the newest bar) \`usd\` is the last 15-minute close and the quotes are named in \`unavailable\`.
      const quote = quoteOf(book, state.primaryNewestMs)
      const side = (name: "bid_usd" | "ask_usd", value: number | undefined): number | null => {
        if (value !== undefined) return value
        if (book !== undefined && book.t < (state.primaryNewestMs ?? book.t) - MaxBookLagMs) {
          return gaps.add(
            name,
            "source_stale",
            "the latest order book lags the newest price by more than one 15-minute bar"
          )
        }
        return gaps.add(name, "no_data")
      }
      const p = quote?.mid ?? state.current.price
      return {
        usd: gaps.plain("usd", p),
        return_24h_pct: gaps.contextual("return_24h_pct", state.current.return_24h_pct, w(state, "return_24h_pct")),
        range_pos_7d_pct: gaps.contextual(
          "range_pos_7d_pct",
          state.current.range_pos_7d_pct,
          w(state, "range_pos_7d_pct")
        ),
        bid_usd: side("bid_usd", quote?.bid),
        ask_usd: side("ask_usd", quote?.ask),
        market: {
          market_cap_usd:
            asset.circulatingSupply === undefined
              ? gaps.add("market.market_cap_usd", "not_applicable", "circulating supply unknown")
              : gaps.plain("market.market_cap_usd", p * asset.circulatingSupply)
        }
      }
    })
  )

  const funding = perAsset("funding", ({ asset, state, gaps }) =>
    Effect.map(fundingOf(asset, state, gaps), (f) => ({ funding: f.funding }))
  )

  const openInterest = perAsset("open_interest", ({ state, gaps }) =>
    Effect.succeed({
      usd: gaps.plain("usd", state.current.oi_usd),
      change_24h_pct: gaps.contextual("change_24h_pct", state.current.oi_change_24h_pct, w(state, "oi_change_24h_pct")),
      basis_pct: gaps.contextual("basis_pct", state.current.basis_pct, w(state, "basis_pct")),
      by_venue: state.oiByVenue
    })
  )

  const orderflow = perAsset("orderflow", ({ state, gaps }) =>
    Effect.succeed({
      net_taker_delta_24h_usd: gaps.contextual(
        "net_taker_delta_24h_usd",
        state.current.net_taker_delta_24h_usd,
        w(state, "net_taker_delta_24h_usd")
      ),
      net_delta_pct_of_oi_24h: gaps.contextual(
        "net_delta_pct_of_oi_24h",
        state.current.net_delta_pct_of_oi_24h,
        w(state, "net_delta_pct_of_oi_24h")
      ),
      exchange_premium_rate_pct: gaps.contextual(
        "exchange_premium_rate_pct",
        state.current.exchange_premium_rate_pct,
        w(state, "exchange_premium_rate_pct")
      )
    })
  )

  const liquidations = perAsset("liquidations", ({ state, gaps }) =>
    Effect.succeed({
      total_24h_usd: gaps.contextual("total_24h_usd", state.current.liq_total_24h_usd, w(state, "liq_total_24h_usd")),
      liq_imbalance_24h: gaps.contextual(
        "liq_imbalance_24h",
        state.current.liq_imbalance_24h,
        w(state, "liq_imbalance_24h")
      ),
      intensity_pct_of_oi_24h: gaps.contextual(
        "intensity_pct_of_oi_24h",
        state.current.liq_intensity_pct_of_oi_24h,
        w(state, "liq_intensity_pct_of_oi_24h")
      )
    })
  )

  const liquidity = perAsset("liquidity", ({ asset, state, gaps }) =>
    Effect.gen(function* () {
      const books = yield* store.books(asset.id)
      const bands = DepthBandsPct.map((pct) => {
        let bid = 0
        let ask = 0
        let any = false
        for (const b of books) {
          const d = bookDepth(b, pct)
          if (d === undefined) continue
          bid += d.bidUsd
          ask += d.askUsd
          any = true
        }
        return any ? { within_pct: pct, bid_usd: roundValue(bid), ask_usd: roundValue(ask) } : undefined
      })
      const present = bands.filter((b) => b !== undefined)
      return {
        spread_pct: gaps.contextual("spread_pct", state.current.spread_pct, w(state, "spread_pct")),
        bid_ask_imbalance: gaps.contextual(
          "bid_ask_imbalance",
          state.current.bid_ask_imbalance,
          w(state, "bid_ask_imbalance")
        ),
        depth:
          present.length === 0
            ? gaps.add("depth", "no_data", "no order book")
            : {
                venues: books.length,
                bands: present,
                total_1pct_usd: gaps.contextual(
                  "depth.total_1pct_usd",
                  state.current.depth_1pct_usd,
                  w(state, "depth_1pct_usd")
                )
              }
      }
    })
  )

  /**
   * Technicals change only when a bar of the timeframe closes: `next_update_at` is the close of the bar now
   * forming (or later, when the feed itself is late).
   */
  const technicals = perAsset("technicals", ({ asset, params, nowMs, gaps, fresh }) =>
    Effect.gen(function* () {
      const timeframe = timeframeParam(params)
      const body = yield* technicalsOf(asset, timeframe, nowMs, gaps)
      const tf = timeframes.get(`${asset.id}/${timeframe}`)
      if (!("bar_at" in body) || tf === undefined) return body
      const nextClose = intervalEndMs(tf.closedEndMs, timeframe)
      return { next_update_at: iso(Math.max(fresh.nextUpdateAtMs, nextClose)), ...body }
    })
  )

  const structure = perAsset("structure", ({ asset, params, nowMs, gaps }) =>
    Effect.map(structureOf(asset, timeframeParam(params), nowMs, gaps), ({ rule: _rule, ...rest }) => rest)
  )

  const read = perAsset("read", ({ asset, state, gaps, nowMs, statuses }) =>
    Effect.gen(function* () {
      const c = state.current
      // A tier below `core` gets a partial read: what its tier does not serve is null, named `not_covered`.
      const serves = (op: string) => tierServes(asset.tier, op)
      const notServed = (component: string, op: string) =>
        gaps.add(component, "not_covered", `tier \`${asset.tier}\` does not serve \`${op}\``)
      const ret = gaps.contextual("headline.return_24h_pct", c.return_24h_pct, w(state, "return_24h_pct"))
      const fund = serves("funding")
        ? gaps.contextual("headline.funding_rate_8h_pct", c.funding_rate_8h_pct, w(state, "funding_rate_8h_pct"))
        : notServed("headline.funding_rate_8h_pct", "funding")
      const oi = serves("open_interest")
        ? gaps.contextual("headline.oi_change_24h_pct", c.oi_change_24h_pct, w(state, "oi_change_24h_pct"))
        : notServed("headline.oi_change_24h_pct", "open_interest")
      const structureGaps = new Gaps()
      const st = serves("structure")
        ? yield* structureOf(asset, "4h", nowMs, structureGaps)
        : { trend_state: null, notServed: true as const }
      if (st.trend_state === null) {
        if ("notServed" in st) notServed("headline.trend_state", "structure")
        else gaps.add("headline.trend_state", structureGaps.entries.trend_state?.reason ?? "no_data")
      }
      const netPct = c.net_delta_pct_of_oi_24h
      const netPctl = Number.isFinite(netPct)
        ? percentileRank(netPct, w(state, "net_delta_pct_of_oi_24h").sortedValues)
        : undefined
      const liqPctl = percentileRank(
        c.liq_intensity_pct_of_oi_24h,
        w(state, "liq_intensity_pct_of_oi_24h").sortedValues
      )
      const band = Number.isFinite(c.funding_rate_8h_pct) ? fundingBand(c.funding_rate_8h_pct) : undefined
      const positioningState = !(serves("funding") && serves("open_interest"))
        ? notServed("assessment.positioning", "funding")
        : fund !== null && oi !== null && band !== undefined
          ? positioning({ fundingPctl: fund.pctl, fundingBand: band, oiChangePctl: oi.pctl })
          : gaps.add("assessment.positioning", "insufficient_history", "needs funding and open-interest percentiles")
      const flowState = !serves("orderflow")
        ? notServed("assessment.flow", "orderflow")
        : netPctl !== undefined
          ? flow({ netDeltaPctOfOi: netPct, pctl: netPctl })
          : gaps.add("assessment.flow", "insufficient_history", "needs the net taker delta percentile")
      const cascade = !serves("liquidations")
        ? notServed("assessment.cascade_risk", "liquidations")
        : fund !== null && oi !== null && ret !== null && liqPctl !== undefined
          ? cascadeRisk({
              fundingPctl: fund.pctl,
              oiChangePctl: oi.pctl,
              liqIntensityPctl: liqPctl,
              return24hPctl: ret.pctl
            }).level
          : gaps.add(
              "assessment.cascade_risk",
              "insufficient_history",
              "needs funding, open-interest, liquidation and return percentiles"
            )
      if (st.trend_state === null) {
        if ("notServed" in st) notServed("assessment.structure", "structure")
        else gaps.add("assessment.structure", structureGaps.entries.trend_state?.reason ?? "no_data")
      }
      return {
        symbol: asset.symbol,
        name: asset.name,
        class: asset.tier,
        baseline: {
          window: "90d",
          cadence: BaselineCadence,
          n: w(state, "return_24h_pct").n,
          ...sourceOf(statuses)
        },
        assessment: {
          positioning: { state: positioningState, rule: PositioningRule },
          structure: { trend_state: st.trend_state, rule: StructureRule },
          flow: { state: flowState, rule: FlowRule },
          cascade_risk: { level: cascade, rule: CascadeRule }
        },
        headline: {
          price_usd: gaps.plain("headline.price_usd", c.price),
          return_24h_pct: ret,
          funding_rate_8h_pct: fund,
          oi_change_24h_pct: oi,
          trend_state: st.trend_state
        }
      }
    })
  )

  // -- series ---------------------------------------------------------------------------------------------------

  const series: Handler = (input: HandlerInput) =>
    Effect.gen(function* () {
      const params = input.params
      const asset = cryptoAsset(String(params.id))
      if (asset === undefined)
        return yield* Effect.fail(apiError("unknown_asset", `no asset ${String(params.id)}`, { param: "id" }))
      const nowMs = input.nowMs
      const interval = (typeof params.interval === "string" ? params.interval : "4h") as Interval
      const range = (typeof params.range === "string" ? params.range : "1y") as SeriesRange
      const view = params.view === "summary" ? "summary" : "bars"
      const limit = typeof params.limit === "number" ? params.limit : 120
      let beforeMs = Number.POSITIVE_INFINITY
      if (typeof params.cursor === "string") {
        const pos = decodeCursor(input.op.name, params, params.cursor)
        if (typeof pos !== "string") return yield* Effect.fail(pos)
        beforeMs = Number(pos)
        if (!Number.isFinite(beforeMs)) {
          return yield* Effect.fail(
            apiError("invalid_cursor", "`cursor` is not a cursor this service issued", { param: "cursor" })
          )
        }
      }
      const statuses = yield* statusesOf(asset)
      const primary = primaryVenue(asset)
      const fromMs = rangeStartMs(range, nowMs)
      const raw =
        primary === undefined
          ? undefined
          : (yield* store.read("bars", { assetId: asset.id, venue: primary, fromMs, toMs: nowMs }))[0]
      const rawNewest =
        raw === undefined || raw.t.length === 0
          ? undefined
          : Math.min(nowMs, (raw.t[raw.t.length - 1] as number) + BAR_MS)
      const fresh = freshnessFor(asset, "series", statuses, nowMs, rawNewest)
      const gaps = new Gaps()
      let closed: Bars | undefined
      if (raw !== undefined && raw.t.length > 0) {
        const newestEnd = Math.min(nowMs, (raw.t[raw.t.length - 1] as number) + 15 * 60_000)
        const agg = completeBars(raw, interval)
        // Whole intervals only: drop a first bar that began before the range or the stored history (both in
        // `completeBars`) and a last one still forming.
        let start = 0
        while (start < agg.t.length && (agg.t[start] as number) < fromMs) start++
        let end = agg.t.length
        while (end > start && intervalEndMs(agg.t[end - 1] as number, interval) > newestEnd) end--
        closed = sliceSeries(agg, start, end)
      }
      const nextUpdateAtMs =
        closed !== undefined && closed.t.length > 0
          ? Math.max(
              fresh.nextUpdateAtMs,
              intervalEndMs(intervalEndMs(closed.t[closed.t.length - 1] as number, interval), interval)
            )
          : fresh.nextUpdateAtMs
      // Closed bars change only when the next bar closes.
      const head = { asset_id: asset.id, ...clocks(fresh), next_update_at: iso(nextUpdateAtMs), interval, range }
      if (view === "summary") {
        const s = closed === undefined ? undefined : summarize(closed, interval)
        const summary =
          s === undefined
            ? gaps.add("summary", "no_data", "no closed bars in the range")
            : {
                first_close: roundValue(s.first_close),
                last_close: roundValue(s.last_close),
                return_pct: roundRatio(s.return_pct),
                high: roundValue(s.high),
                low: roundValue(s.low),
                max_drawdown_pct: roundRatio(s.max_drawdown_pct),
                realized_volatility_pct:
                  s.realized_volatility_pct === null
                    ? gaps.add("summary.realized_volatility_pct", "insufficient_history", "needs three bars")
                    : roundRatio(s.realized_volatility_pct),
                bar_count: s.bar_count,
                first_bar_at: iso((closed as Bars).t[0] as number),
                last_bar_at: iso((closed as Bars).t[(closed as Bars).t.length - 1] as number)
              }
        return {
          _tag: "Json" as const,
          body: { data: { ...head, summary, ...gaps.block } },
          creditsCharged: chargeFor(input.op, {}),
          nextUpdateAtMs
        }
      }
      const t = closed?.t ?? new Float64Array(0)
      let end = t.length
      while (end > 0 && (t[end - 1] as number) >= beforeMs) end--
      const start = Math.max(0, end - limit)
      const bars: Array<{ t: string; o: number; h: number; l: number; c: number; v: number }> = []
      for (let i = start; i < end; i++) {
        const b = closed as Bars
        bars.push({
          t: iso(b.t[i] as number),
          o: roundValue(b.open[i] as number),
          h: roundValue(b.high[i] as number),
          l: roundValue(b.low[i] as number),
          c: roundValue(b.close[i] as number),
          v: roundValue(b.volume[i] as number)
        })
      }
      if (t.length === 0) gaps.add("bars", "no_data", "no closed bars in the range")
      const next_cursor = start > 0 ? encodeCursor(input.op.name, params, String(t[start])) : null
      return {
        _tag: "Json" as const,
        body: { data: { ...head, bars, next_cursor, ...gaps.block } },
        creditsCharged: chargeFor(input.op, {}),
        nextUpdateAtMs
      }
    })

  // -- rank -----------------------------------------------------------------------------------------------------

  /** The measure and baseline behind each rank metric (`extreme_count` counts the others' tails). */
  const RankMeasures: { readonly [M in Exclude<(typeof RankMetrics)[number], "extreme_count">]: MeasureName } = {
    funding_rate_8h_pct: "funding_rate_8h_pct",
    return_24h_pct: "return_24h_pct",
    return_7d_pct: "return_7d_pct",
    oi_change_24h_pct: "oi_change_24h_pct",
    net_taker_delta_24h_usd: "net_taker_delta_24h_usd",
    net_taker_delta_pct_of_oi_24h: "net_delta_pct_of_oi_24h",
    liq_intensity_pct_of_oi_24h: "liq_intensity_pct_of_oi_24h",
    liq_imbalance_24h: "liq_imbalance_24h"
  }

  const rank: Handler = (input: HandlerInput) =>
    Effect.gen(function* () {
      const params = input.params
      const metric = (
        typeof params.metric === "string" ? params.metric : "extreme_count"
      ) as (typeof RankMetrics)[number]
      const direction = params.direction === "bottom" ? "bottom" : "top"
      const limit = typeof params.limit === "number" ? params.limit : 10
      const nowMs = input.nowMs
      let after: { score: number; id: string } | undefined
      if (typeof params.cursor === "string") {
        const pos = decodeCursor(input.op.name, params, params.cursor)
        if (typeof pos !== "string") return yield* Effect.fail(pos)
        const cut = pos.indexOf("|")
        const score = Number(pos.slice(0, cut))
        if (cut < 0 || !Number.isFinite(score)) {
          return yield* Effect.fail(
            apiError("invalid_cursor", "`cursor` is not a cursor this service issued", { param: "cursor" })
          )
        }
        after = { score, id: pos.slice(cut + 1) }
      }
      const universe = CryptoAssets.filter((a) => a.tier === "core")
      const all = yield* store.status
      const excluded: Record<string, number> = {}
      const rows: Array<{ asset_id: string; symbol: string; score: number; extreme_metrics: Array<string> }> = []
      let newest = 0
      let nextUpdate = Number.POSITIVE_INFINITY
      /** The freshest status among the scanned assets with data (`stale` when none has any). */
      let freshest: "live" | "delayed" | "stale" = "stale"
      for (const asset of universe) {
        const venues = venuesOf(asset)
        const statuses = all.filter((s) => venues.includes(s.venue))
        const s = yield* stateOf(asset, nowMs, statuses)
        const own = s.primaryNewestMs
        if (own === undefined || !Number.isFinite(s.current.price)) {
          excluded.no_data = (excluded.no_data ?? 0) + 1
          continue
        }
        const fresh = freshnessFor(asset, "rank", statuses, nowMs, own)
        nextUpdate = Math.min(nextUpdate, fresh.nextUpdateAtMs)
        if (fresh.status === "live" || (fresh.status === "delayed" && freshest === "stale")) freshest = fresh.status
        if (fresh.status !== "live") {
          excluded.source_stale = (excluded.source_stale ?? 0) + 1
          continue
        }
        if (w(s, "return_24h_pct").n < MinBaselineN) {
          excluded.insufficient_history = (excluded.insufficient_history ?? 0) + 1
          continue
        }
        newest = Math.max(newest, fresh.asOfMs)
        const extremes: Array<string> = []
        for (const [name, m] of Object.entries(RankMeasures)) {
          const v = s.current[m]
          const p = Number.isFinite(v) ? percentileRank(v, w(s, m).sortedValues) : undefined
          if (p !== undefined && isExtreme(p)) extremes.push(name)
        }
        let score: number
        if (metric === "extreme_count") score = extremes.length
        else {
          const m = RankMeasures[metric]
          const v = s.current[m]
          if (!Number.isFinite(v)) {
            excluded.no_data = (excluded.no_data ?? 0) + 1
            continue
          }
          score = roundFigure(metric, v)
        }
        rows.push({ asset_id: asset.id, symbol: asset.symbol, score, extreme_metrics: extremes })
      }
      const sign = direction === "top" ? -1 : 1
      rows.sort(
        (a, b) => sign * (a.score - b.score) || (a.asset_id < b.asset_id ? -1 : a.asset_id > b.asset_id ? 1 : 0)
      )
      const startAt =
        after === undefined
          ? 0
          : rows.findIndex((r) => {
              const cmp = sign * (r.score - (after as { score: number }).score)
              return cmp > 0 || (cmp === 0 && r.asset_id > (after as { id: string }).id)
            })
      const from = startAt < 0 ? rows.length : startAt
      const page = rows.slice(from, from + limit)
      const lastRow = page[page.length - 1]
      const next_cursor =
        from + limit < rows.length && lastRow !== undefined
          ? encodeCursor(input.op.name, params, `${lastRow.score}|${lastRow.asset_id}`)
          : null
      const excludedCount = Object.values(excluded).reduce((a, b) => a + b, 0)
      return {
        _tag: "Json" as const,
        body: {
          data: {
            as_of: iso(newest === 0 ? nowMs : newest),
            // Only live assets are ranked: a ranking with rows is live; an empty one says how fresh the
            // freshest scanned asset was (why nothing was ranked).
            status: rows.length > 0 ? "live" : freshest,
            next_update_at: iso(Number.isFinite(nextUpdate) ? nextUpdate : nowMs),
            metric,
            direction,
            rows: page,
            coverage: {
              scanned: universe.length,
              ranked: rows.length,
              excluded: excludedCount,
              excluded_by_reason: excluded
            },
            next_cursor
          }
        },
        creditsCharged: chargeFor(input.op, { rows: page.length }),
        ...(Number.isFinite(nextUpdate) ? { nextUpdateAtMs: nextUpdate } : {})
      }
    })

  // -- directory ------------------------------------------------------------------------------------------------

  /** Alive: the venues' bar feeds and the asset's own newest primary bar are live now. */
  const aliveOf = (asset: CryptoAsset, statuses: ReadonlyArray<SourceStatus>, nowMs: number) =>
    Effect.gen(function* () {
      const primary = primaryVenue(asset)
      if (primary === undefined) return false
      const extent = (yield* store.extent("bars", asset.id)).find((e) => e.venue === primary)
      if (extent === undefined) return false
      const f = freshnessFor(asset, "series", statuses, nowMs, Math.min(nowMs, extent.lastMs + BAR_MS))
      return f.status === "live"
    })

  const directory = Effect.gen(function* () {
    const nowMs = yield* Clock.currentTimeMillis
    const statuses = yield* store.status
    return yield* Effect.forEach(CryptoAssets, (a) =>
      Effect.map(aliveOf(a, statuses, nowMs), (alive) => directoryEntryOf(a, alive))
    )
  })

  /**
   * Directory entries by asset while the store's revision holds and the clock has not reached a moment that
   * can change `alive` (a point of some source's cadence grid, or of the asset's own bars).
   */
  const entries = new Map<
    string,
    { readonly revision: number; readonly fromMs: number; readonly untilMs: number; readonly entry: DirectoryEntry }
  >()

  const lookup = (assetId: string): Effect.Effect<DirectoryEntry | undefined> =>
    Effect.flatMap(Clock.currentTimeMillis, (nowMs) => {
      const revision = store.revision?.()
      const known = revision === undefined ? undefined : entries.get(assetId)
      if (known !== undefined && known.revision === revision && nowMs >= known.fromMs && nowMs < known.untilMs) {
        return Effect.succeed(known.entry)
      }
      return lookupNow(assetId, nowMs, revision)
    })

  const lookupNow = (assetId: string, nowMs: number, revision: number | undefined) =>
    Effect.gen(function* () {
      const a = cryptoAsset(assetId)
      if (a === undefined) return undefined
      const statuses = yield* store.status
      const entry = directoryEntryOf(a, yield* aliveOf(a, statuses, nowMs))
      if (revision !== undefined && store.revision?.() === revision) {
        const primary = primaryVenue(a)
        const extent =
          primary === undefined ? undefined : (yield* store.extent("bars", a.id)).find((e) => e.venue === primary)
        let untilMs =
          extent === undefined ? Number.POSITIVE_INFINITY : nextChangeMs(extent.lastMs + BAR_MS, BAR_MS, nowMs)
        for (const st of statuses) {
          untilMs =
            st.cadenceMs <= 0 || st.newestMs <= 0
              ? nowMs + 1
              : Math.min(untilMs, nextChangeMs(st.newestMs, st.cadenceMs, nowMs))
        }
        if (entries.size >= MaxMemoizedResults) entries.clear()
        entries.set(assetId, { revision, fromMs: nowMs, untilMs, entry })
      }
      return entry
    })

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
    for (const asset of CryptoAssets) {
      yield* warmOne(asset, nowMs)
      yield* Effect.yieldNow
    }
  })

  const warmAsset = (assetId: string) =>
    Effect.gen(function* () {
      const asset = cryptoAsset(assetId)
      if (asset !== undefined) yield* warmOne(asset, yield* Clock.currentTimeMillis)
    })

  const plane: CryptoPlane = {
    plane: "crypto",
    perAsset: new Map<string, PlaneForAsset>([
      ["read", read],
      ["price", price],
      ["funding", funding],
      ["open_interest", openInterest],
      ["orderflow", orderflow],
      ["liquidations", liquidations],
      ["liquidity", liquidity],
      ["technicals", technicals],
      ["structure", structure]
    ]),
    calls: new Map<string, Handler>([
      ["series", series],
      ["rank", rank]
    ]),
    directory,
    lookup,
    warm,
    warmAsset
  }
  return plane
})
