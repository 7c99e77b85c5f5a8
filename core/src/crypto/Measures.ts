/**
 * The measured values of one crypto asset at a moment `T`, from its stored series (`Market.ts`). Every
 * measure uses only data strictly before `T`, so the same function gives the current value (`T` = now) and
 * the hourly samples of its baseline (`T` = each UTC hour), and a percentile compares like with like.
 *
 * Definitions (the `domains` docs section repeats them):
 * - price: the close of the primary venue's newest 15 m bar (the asset registry lists the primary venue first).
 * - `return_24h_pct`, `return_7d_pct`: `(price(T) / price(T - 24 h or 7 d) - 1) x 100`.
 * - `range_pos_7d_pct`: where the price sits in the primary venue's 7-day high-low range, 0 (low) to 100 (high).
 * - open interest: the sum over venues of each venue's newest snapshot; `oi_change_24h_pct` its 24 h change.
 * - `basis_pct`: the mean over venues of `(mark / index - 1) x 100`.
 * - `exchange_premium_rate_pct`: the primary venue's traded price over the venues' mean index, in percent.
 * - `net_taker_delta_24h_usd`: taker buys minus taker sells over 24 h, all venues; `net_delta_pct_of_oi_24h`
 *   the same as a percentage of open interest.
 * - liquidations over 24 h, all venues: `total_24h_usd`; `liq_imbalance_24h = (longs - shorts) / total`
 *   (+1 only longs liquidated, -1 only shorts); `intensity_pct_of_oi_24h = total / open interest x 100`.
 * - `spread_pct`: the mean over venues of the book's relative spread; `bid_ask_imbalance`: `(bid depth - ask
 *   depth) / (bid depth + ask depth)` within 1 % of mid, summed over venues; `depth_1pct_usd` both sides.
 * - funding: each perpetual venue's newest settled rate (settled at or before `T`), normalized to 8 h
 *   (`Funding.ts`), and their open-interest-weighted mean.
 * A venue snapshot older than `MaxSnapshotAgeMs` at `T` (a venue that stopped reporting) is left out; a
 * funding settlement counts while it is within two of its intervals plus an hour. The returns and the 7-day range
 * use only the primary bars held end to end up to the price's bar (`Contiguity.ts`): NaN where those do not reach
 * back over their window (`shortWindowsAt` names them).
 */
import { heldEndToEnd, runStartIndex } from "./Contiguity.ts"
import { fraction8hPct, type VenueFunding } from "./Funding.ts"
import {
  BAR_MS,
  type Bars,
  type BookMetrics,
  DAY_MS,
  type Funding,
  HOUR_MS,
  type Liquidations,
  lowerBound,
  type MarkIndex,
  type OpenInterest,
  type TakerFlow
} from "./Market.ts"

/**
 * How figures are printed: USD amounts and prices with `significantDigits`; percentages, rates, ratios and
 * indicator values also with at most `ratioDecimals` decimal places (a difference of equal inputs prints 0).
 */
export const PrintPrecision = { significantDigits: 10, ratioDecimals: 12 } as const

/** Distances from mid (percent) at which `liquidity.depth` reports USD on each side. */
export const DepthBandsPct = [0.1, 0.5, 1, 2] as const

/** Oldest venue snapshot (open interest, mark/index, book metrics) still counted at `T`. */
export const MaxSnapshotAgeMs = 3 * HOUR_MS

/** One venue's series of an asset over a loaded range. */
export interface VenueData {
  readonly venue: string
  readonly markIndex: MarkIndex | undefined
  readonly oi: OpenInterest | undefined
  readonly taker: TakerFlow | undefined
  readonly liq: Liquidations | undefined
  readonly book: BookMetrics | undefined
  readonly funding: Funding | undefined
}

/** What the measures of one asset are computed from. */
export interface AssetData {
  readonly assetId: string
  /** The primary venue's 15 m bars (its price is the asset's price). */
  readonly primary: Bars | undefined
  readonly venues: ReadonlyArray<VenueData>
}

/** Builds a venue's data from its series (any may be missing). */
export const venueData = (
  venue: string,
  s: {
    readonly markIndex?: MarkIndex | undefined
    readonly oi?: OpenInterest | undefined
    readonly taker?: TakerFlow | undefined
    readonly liq?: Liquidations | undefined
    readonly book?: BookMetrics | undefined
    readonly funding?: Funding | undefined
  }
): VenueData => ({
  venue,
  markIndex: s.markIndex,
  oi: s.oi,
  taker: s.taker,
  liq: s.liq,
  book: s.book,
  funding: s.funding
})

/** Bars per block of `RangeExtremes`. */
const EXTREMES_BLOCK = 32

/**
 * Highest high and lowest low over any run of bars, built once per loaded bar series: each block of 32 bars'
 * extremes, so a run is its partial blocks at both ends scanned and its whole blocks' extremes (a 7-day run of
 * 672 bars reads about 80 values). The blocks take 1/16 of the bars' bytes, where a sparse table took a
 * level of eight bytes per bar per doubling of the run; `Math.max` and `Math.min` give the same extremes in any
 * grouping (NaN, 0 and -0 included), so the answers are the table's.
 */
export class RangeExtremes {
  private readonly high: Float64Array
  private readonly low: Float64Array
  private readonly blockHigh: Float64Array
  private readonly blockLow: Float64Array
  constructor(high: Float64Array, low: Float64Array) {
    this.high = high
    this.low = low
    const blocks = Math.floor(high.length / EXTREMES_BLOCK)
    this.blockHigh = new Float64Array(blocks)
    this.blockLow = new Float64Array(blocks)
    for (let b = 0; b < blocks; b++) {
      let h = high[b * EXTREMES_BLOCK] as number
      let l = low[b * EXTREMES_BLOCK] as number
      for (let i = b * EXTREMES_BLOCK + 1, end = (b + 1) * EXTREMES_BLOCK; i < end; i++) {
        h = Math.max(h, high[i] as number)
        l = Math.min(l, low[i] as number)
      }
      this.blockHigh[b] = h
      this.blockLow[b] = l
    }
  }
  /** Highest high and lowest low of bars `[from, to)`; undefined when empty. */
  query(from: number, to: number): { readonly high: number; readonly low: number } | undefined {
    if (to <= from) return undefined
    const high = this.high
    const low = this.low
    let h = high[from] as number
    let l = low[from] as number
    // Whole blocks from the first block boundary after `from` to the last one at or before `to`.
    const firstBlock = Math.ceil((from + 1) / EXTREMES_BLOCK)
    const lastBlock = Math.floor(to / EXTREMES_BLOCK)
    if (firstBlock >= lastBlock) {
      for (let i = from + 1; i < to; i++) {
        h = Math.max(h, high[i] as number)
        l = Math.min(l, low[i] as number)
      }
      return { high: h, low: l }
    }
    for (let i = from + 1, end = firstBlock * EXTREMES_BLOCK; i < end; i++) {
      h = Math.max(h, high[i] as number)
      l = Math.min(l, low[i] as number)
    }
    for (let b = firstBlock; b < lastBlock; b++) {
      h = Math.max(h, this.blockHigh[b] as number)
      l = Math.min(l, this.blockLow[b] as number)
    }
    for (let i = lastBlock * EXTREMES_BLOCK; i < to; i++) {
      h = Math.max(h, high[i] as number)
      l = Math.min(l, low[i] as number)
    }
    return { high: h, low: l }
  }
}

/**
 * What measuring derives from loaded series and reuses, and the scratch it works in: one per owner (a crypto
 * plane's state makes one, and so does a test), never shared between owners. The derived columns are keyed by
 * the series object they come from (a loaded series is never changed), so they are dropped with it; the scratch
 * is used by one synchronous call at a time.
 */
export class MeasureMemo {
  /** Each bar series' block extremes (`RangeExtremes`), for the 7-day range. */
  readonly extremes = new WeakMap<Bars, RangeExtremes>()
  /** Each funding series' rates scaled to percent per 8 h. */
  readonly rates8hPct = new WeakMap<Funding, Float64Array>()
  /** Scratch columns of `fundingAt`: the venues' rates and open interest at one moment. */
  readonly scratchRates: Array<number> = []
  readonly scratchWeights: Array<number | undefined> = []
}

const extremesOf = (b: Bars, memo: MeasureMemo): RangeExtremes => {
  let e = memo.extremes.get(b)
  if (e === undefined) {
    e = new RangeExtremes(b.high, b.low)
    memo.extremes.set(b, e)
  }
  return e
}

/** Index of the newest row with `t < T`, or -1. */
const before = (t: Float64Array, T: number): number => lowerBound(t, T) - 1

/** Index of the newest row with `t < T` no older than `maxAgeMs`, or -1. */
const recent = (t: Float64Array | undefined, T: number, maxAgeMs: number): number => {
  if (t === undefined) return -1
  const i = before(t, T)
  return i >= 0 && T - (t[i] as number) <= maxAgeMs ? i : -1
}

/**
 * Sum of `column` over rows with `from <= t < to`, added in row order. The same rows give the same total
 * whatever range was loaded around them (a difference of prefix sums would not, in floating point), so a value
 * recomputed from a shorter load equals the baseline sample taken of it and ranks the same.
 */
const windowSum = (t: Float64Array, column: ArrayLike<number>, from: number, to: number): number => {
  let sum = 0
  for (let i = lowerBound(t, from), end = lowerBound(t, to); i < end; i++) sum += column[i] as number
  return sum
}

/** The asset's price at `T` (close of the newest primary bar opened before `T`), NaN without one. */
export const priceAt = (d: AssetData, T: number): number => {
  const b = d.primary
  if (b === undefined) return Number.NaN
  const i = recent(b.t, T, MaxSnapshotAgeMs)
  return i < 0 ? Number.NaN : (b.close[i] as number)
}

/** Total open interest (USD) over venues at `T`; NaN when no venue has a recent snapshot. */
export const oiAt = (d: AssetData, T: number): number => {
  let sum = 0
  let any = false
  for (const v of d.venues) {
    const i = recent(v.oi?.t, T, MaxSnapshotAgeMs)
    if (i < 0) continue
    sum += (v.oi as OpenInterest).oiUsd[i] as number
    any = true
  }
  return any ? sum : Number.NaN
}

/** One venue's open interest at `T`, or undefined. */
export const venueOiAt = (v: VenueData, T: number): number | undefined => {
  const i = recent(v.oi?.t, T, MaxSnapshotAgeMs)
  return i < 0 ? undefined : ((v.oi as OpenInterest).oiUsd[i] as number)
}

/** Each settlement's rate scaled to percent per 8 h, computed once per loaded series (per memo). */
const normalizedRates = (f: Funding, memo: MeasureMemo): Float64Array => {
  let out = memo.rates8hPct.get(f)
  if (out === undefined) {
    out = new Float64Array(f.t.length)
    for (let i = 0; i < out.length; i++) out[i] = fraction8hPct(f.rate[i] as number, f.intervalMs[i] as number)
    memo.rates8hPct.set(f, out)
  }
  return out
}

/** A venue's newest settled funding at `T`, normalized to 8 h, or undefined. */
export const venueFundingAt = (
  v: VenueData,
  T: number,
  memo: MeasureMemo
): { readonly rate8hPct: number; readonly intervalMs: number; readonly t: number } | undefined => {
  const f = v.funding
  if (f === undefined) return undefined
  // A settlement is an instant: one at `T` itself counts.
  const i = before(f.t, T + 1)
  if (i < 0) return undefined
  const intervalMs = f.intervalMs[i] as number
  const t = f.t[i] as number
  if (T - t > 2 * intervalMs + HOUR_MS) return undefined
  return { rate8hPct: normalizedRates(f, memo)[i] as number, intervalMs, t }
}

/** The venues' funding at `T` as `Funding.ts` takes it (next funding unknown here: 0). */
export const fundingVenuesAt = (d: AssetData, T: number, memo: MeasureMemo): Array<VenueFunding> => {
  const out: Array<VenueFunding> = []
  for (const v of d.venues) {
    const f = venueFundingAt(v, T, memo)
    if (f === undefined) continue
    const oi = venueOiAt(v, T)
    // Already normalized: present it as an 8 h rate.
    out.push(
      oi === undefined
        ? { venue: v.venue, ratePct: f.rate8hPct, intervalHours: 8, nextFundingAtMs: 0 }
        : { venue: v.venue, ratePct: f.rate8hPct, intervalHours: 8, nextFundingAtMs: 0, oiUsd: oi }
    )
  }
  return out
}

/**
 * The aggregate 8 h funding rate at `T` alone; NaN without venues. The same number as
 * `aggregateRate8hPct(fundingVenuesAt(d, T))`, the same arithmetic in the same order (`Funding.ts`), without the
 * objects: the one-year funding baseline samples it at every hour of the year.
 */
export const fundingAt = (d: AssetData, T: number, memo: MeasureMemo): number => {
  const { scratchRates, scratchWeights } = memo
  let n = 0
  for (const v of d.venues) {
    const f = v.funding
    if (f === undefined) continue
    const i = before(f.t, T + 1)
    if (i < 0 || T - (f.t[i] as number) > 2 * (f.intervalMs[i] as number) + HOUR_MS) continue
    scratchRates[n] = normalizedRates(f, memo)[i] as number
    scratchWeights[n] = venueOiAt(v, T)
    n++
  }
  if (n === 0) return Number.NaN
  let weighted = true
  for (let k = 0; k < n; k++) {
    const w = scratchWeights[k]
    if (!(w !== undefined && Number.isFinite(w) && w >= 0)) weighted = false
  }
  let total = 0
  if (weighted) for (let k = 0; k < n; k++) total += scratchWeights[k] as number
  const useWeights = weighted && total > 0
  let low = Number.POSITIVE_INFINITY
  let high = Number.NEGATIVE_INFINITY
  for (let k = 0; k < n; k++) {
    const r = scratchRates[k] as number
    if (r < low) low = r
    if (r > high) high = r
  }
  if (!(high > low)) return low
  let excess = 0
  for (let k = 0; k < n; k++) {
    excess += ((scratchRates[k] as number) - low) * (useWeights ? (scratchWeights[k] as number) : 1)
  }
  const mean = low + excess / (useWeights ? total : n)
  return Math.min(high, Math.max(low, mean))
}

/**
 * The funding measures at `T`: each venue's 8 h rate (venues with a recent settlement) and their aggregate
 * (NaN without venues). They need only the funding settlements and open interest, so funding baselines are
 * sampled from the settlement history, however short the bar history is (`measuresAt` uses the same).
 */
export const fundingMeasuresAt = (
  d: AssetData,
  T: number,
  memo: MeasureMemo
): { readonly aggregate: number; readonly byVenue: ReadonlyMap<string, number> } => {
  // `aggregateRate8hPct(fundingVenuesAt(d, T))` as `fundingAt` computes it (bit for bit), and the venues' rates as
  // `fundingVenuesAt` lists them, without its objects: the 90-day baselines take these at each of 2,160 hours.
  const byVenue = new Map<string, number>()
  for (const v of d.venues) {
    const f = venueFundingAt(v, T, memo)
    if (f !== undefined) byVenue.set(v.venue, f.rate8hPct)
  }
  return { aggregate: fundingAt(d, T, memo), byVenue }
}

/** The measures sampled into baselines (and ranked), by name. */
export const MeasureNames = [
  "return_24h_pct",
  "return_7d_pct",
  "range_pos_7d_pct",
  "funding_rate_8h_pct",
  "oi_change_24h_pct",
  "basis_pct",
  "exchange_premium_rate_pct",
  "net_taker_delta_24h_usd",
  "net_delta_pct_of_oi_24h",
  "liq_total_24h_usd",
  "liq_imbalance_24h",
  "liq_intensity_pct_of_oi_24h",
  "spread_pct",
  "bid_ask_imbalance",
  "depth_1pct_usd"
] as const
export type MeasureName = (typeof MeasureNames)[number]

export type Measures = { readonly [M in MeasureName]: number } & {
  readonly price: number
  readonly oi_usd: number
  /** Each venue's 8 h funding rate (venues without a recent settlement are absent). */
  readonly venueFunding8hPct: ReadonlyMap<string, number>
}

/** The bar-window measures: what the primary bars held end to end must cover, and how far back. */
const BarWindows = [
  ["return_24h_pct", DAY_MS],
  ["return_7d_pct", 7 * DAY_MS],
  ["range_pos_7d_pct", 7 * DAY_MS]
] as const satisfies ReadonlyArray<readonly [MeasureName, number]>

/**
 * The close `backMs` before `T` as a return compares it: the newest primary bar opened before `T - backMs`, held
 * end to end with the price's bar `i` (NaN otherwise: across a hole, or before the history began).
 */
const priceBack = (b: Bars, i: number, T: number, backMs: number): number => {
  const j = recent(b.t, T - backMs, MaxSnapshotAgeMs)
  return j >= 0 && heldEndToEnd(b.t, j, i) ? (b.close[j] as number) : Number.NaN
}

/** Index of the first bar of the 7-day window before `T` when the bars held end to end up to bar `i` cover it, or -1. */
const rangeFrom = (b: Bars, i: number, T: number): number => {
  const from = lowerBound(b.t, T - 7 * DAY_MS)
  return from <= i && (b.t[from] as number) < T - 7 * DAY_MS + BAR_MS && heldEndToEnd(b.t, from, i) ? from : -1
}

/**
 * The bar-window measures (`return_24h_pct`, `return_7d_pct`, `range_pos_7d_pct`) that `measuresAt` leaves NaN at
 * `T` because the primary bars held end to end up to the price's bar do not reach back over their window, and how
 * far back those bars reach (ms before `T`). Undefined when there is no price at `T` (nothing to measure from).
 */
export const shortWindowsAt = (
  d: AssetData,
  T: number
): { readonly measures: ReadonlyArray<MeasureName>; readonly heldMs: number } | undefined => {
  const b = d.primary
  const i = b === undefined ? -1 : recent(b.t, T, MaxSnapshotAgeMs)
  if (b === undefined || i < 0) return undefined
  const measures: Array<MeasureName> = []
  for (const [name, backMs] of BarWindows) {
    const held = name === "range_pos_7d_pct" ? rangeFrom(b, i, T) >= 0 : !Number.isNaN(priceBack(b, i, T, backMs))
    if (!held) measures.push(name)
  }
  const first = runStartIndex(b.t, i, Math.ceil((7 * DAY_MS) / BAR_MS) + 1)
  return { measures, heldMs: T - (b.t[first] as number) }
}

/** Every measure of the asset at `T`; NaN where the inputs are missing. Derived columns come from `memo`. */
export const measuresAt = (d: AssetData, T: number, memo: MeasureMemo): Measures => {
  const b = d.primary
  const i = b === undefined ? -1 : recent(b.t, T, MaxSnapshotAgeMs)
  const price = b === undefined || i < 0 ? Number.NaN : (b.close[i] as number)
  const price24 = b === undefined || i < 0 ? Number.NaN : priceBack(b, i, T, DAY_MS)
  const price7d = b === undefined || i < 0 ? Number.NaN : priceBack(b, i, T, 7 * DAY_MS)
  const oi = oiAt(d, T)
  const oi24 = oiAt(d, T - DAY_MS)

  let rangePos = Number.NaN
  if (b !== undefined && i >= 0 && Number.isFinite(price)) {
    const from = rangeFrom(b, i, T)
    const r = from < 0 ? undefined : extremesOf(b, memo).query(from, i + 1)
    if (r !== undefined && r.high > r.low) rangePos = ((price - r.low) / (r.high - r.low)) * 100
  }

  let basisSum = 0
  let basisN = 0
  let indexSum = 0
  let takerNet = 0
  let takerAny = false
  let liqLong = 0
  let liqShort = 0
  let liqAny = false
  let spreadSum = 0
  let spreadN = 0
  let bidDepth = 0
  let askDepth = 0
  for (const v of d.venues) {
    const mi = recent(v.markIndex?.t, T, MaxSnapshotAgeMs)
    if (mi >= 0) {
      const m = v.markIndex as MarkIndex
      const index = m.index[mi] as number
      if (index > 0) {
        basisSum += ((m.mark[mi] as number) / index - 1) * 100
        indexSum += index
        basisN++
      }
    }
    if (v.taker !== undefined && v.taker.t.length > 0 && (v.taker.t[0] as number) <= T - DAY_MS + HOUR_MS) {
      const taker = v.taker
      // Summed on its own, then added (as `windowSum` does): the same rows give the same total.
      let net = 0
      for (let i = lowerBound(taker.t, T - DAY_MS), end = lowerBound(taker.t, T); i < end; i++) {
        net += (taker.buyUsd[i] as number) - (taker.sellUsd[i] as number)
      }
      takerNet += net
      takerAny = true
    }
    if (v.liq !== undefined) {
      const liq = v.liq
      liqLong += windowSum(liq.t, liq.longUsd, T - DAY_MS, T)
      liqShort += windowSum(liq.t, liq.shortUsd, T - DAY_MS, T)
      liqAny = true
    }
    const bk = recent(v.book?.t, T, MaxSnapshotAgeMs)
    if (bk >= 0) {
      const book = v.book as BookMetrics
      spreadSum += book.spreadPct[bk] as number
      spreadN++
      bidDepth += book.bidDepthUsd[bk] as number
      askDepth += book.askDepthUsd[bk] as number
    }
  }
  const funding = fundingMeasuresAt(d, T, memo)
  const liqTotal = liqLong + liqShort
  const depth = bidDepth + askDepth
  const pctOfOi = (x: number) => (Number.isFinite(oi) && oi > 0 ? (x / oi) * 100 : Number.NaN)
  const netDelta = takerAny ? takerNet : Number.NaN
  return {
    price,
    oi_usd: oi,
    return_24h_pct: (price / price24 - 1) * 100,
    return_7d_pct: (price / price7d - 1) * 100,
    range_pos_7d_pct: rangePos,
    funding_rate_8h_pct: funding.aggregate,
    oi_change_24h_pct: (oi / oi24 - 1) * 100,
    basis_pct: basisN > 0 ? basisSum / basisN : Number.NaN,
    exchange_premium_rate_pct: basisN > 0 ? (price / (indexSum / basisN) - 1) * 100 : Number.NaN,
    net_taker_delta_24h_usd: netDelta,
    net_delta_pct_of_oi_24h: pctOfOi(netDelta),
    liq_total_24h_usd: liqAny ? liqTotal : Number.NaN,
    liq_imbalance_24h: liqAny && liqTotal > 0 ? (liqLong - liqShort) / liqTotal : Number.NaN,
    liq_intensity_pct_of_oi_24h: liqAny ? pctOfOi(liqTotal) : Number.NaN,
    spread_pct: spreadN > 0 ? spreadSum / spreadN : Number.NaN,
    bid_ask_imbalance: spreadN > 0 && depth > 0 ? (bidDepth - askDepth) / depth : Number.NaN,
    depth_1pct_usd: spreadN > 0 ? depth : Number.NaN,
    venueFunding8hPct: funding.byVenue
  }
}
