/**
 * The simulated crypto market's model, stepped in 15-minute steps.
 *
 * Per asset (one seeded stream each) a consensus price follows:
 * - GARCH(1,1) volatility (alpha 0.09, beta 0.90 per step; the unconditional level is the asset's annual
 *   volatility) times a slow volatility regime (log-AR(1), half-life about 9 days), so calm and turbulent
 *   stretches cluster over hours and over weeks;
 * - regimes (uptrend, downtrend, range; about four days each on average): trends add drift, ranges pull the
 *   price gently back toward where the range began;
 * - a common market factor (`beta` loading), and rare jumps of 3 to 7 typical moves;
 * - positioning `s`, which chases returns and decays over about a day; open interest builds while positioning is
 *   one-sided and is cut by liquidations;
 * - liquidations when a step moves more than 2.5 typical moves, larger when the crowded side is hit.
 *
 * Per venue (its own stream) the venue's bars, perpetual basis (positioning x the venue's multiplier plus its
 * standing offset, and open-interest pressure), mark and index, funding (premium plus the clamped interest
 * term, averaged over the venue's interval), open interest, taker flow (buy share follows the step's surprise),
 * book spread and depth (spread widens and depth thins as volatility rises) and liquidation events.
 *
 * Backfill and live ticks run the very same step, so a restart regenerates the same history from the seed.
 * Intra-bar book ticks draw from a generator keyed by (seed, asset, venue, time), never from the step streams.
 */
import {
  type AnySeriesInput,
  allocSeries,
  BAR_MS,
  type BookLevel,
  type BookSnapshot,
  type CryptoAsset,
  type FundingState,
  HOUR_MS,
  type Listing,
  type Series
} from "@market-data/core"
import { type AssetProfile, AssetProfiles, type VenueProfile, VenueProfiles } from "./Profiles.ts"
import { Rng } from "./Random.ts"

/**
 * Every value the generator writes into a series, but funding rates, is rounded to the nearest float32
 * (`Math.fround`): about seven significant digits, as venues print them, which lets the memory store keep the
 * columns in four bytes a value (it narrows only columns whose every value is exactly a float32). Funding rates
 * stay float64: a settlement at exactly the 0.01 % interest rate must print as 0.0001, which float32 cannot hold.
 * The model itself runs in float64.
 */
const f32 = Math.fround

/**
 * The generator's version: bumped whenever the same seed would generate different data (a kept history of
 * another version is regenerated, see `History.ts`).
 */
export const SIMULATED_CRYPTO_VERSION = 2

const STEPS_PER_YEAR = 365 * 96
const EIGHT_HOURS_MS = 8 * HOUR_MS
/** Interest component of funding per 8 hours, and the clamp around it (as the large venues define it). */
const INTEREST_8H = 0.0001
const INTEREST_CLAMP = 0.0005
const GARCH_ALPHA = 0.09
const GARCH_BETA = 0.9
/** Slow volatility regime: AR(1) on log volatility with a half-life of about 9 days, sd 0.4. */
const VOL_REGIME_PHI = 0.9992
const VOL_REGIME_SD = 0.4
const REGIME_SWITCH = 1 / 400
const JUMP_PROBABILITY = 1 / 1500
const TREND_DRIFT = 0.05
/** Pull toward the range's anchor per step (half-life about 3.6 days). */
const RANGE_PULL = 0.002
const LIQUIDATION_THRESHOLD = 2.5

/** The consensus state of one asset after its latest step. */
class AssetSim {
  readonly rng: Rng
  readonly sigmaBar: number
  private readonly omega: number
  private sigma2: number
  private lastShock = 0
  private logVolRegime = 0
  private volRegime = 1
  regime: -1 | 0 | 1 = 0
  private anchor: number
  logP: number
  readonly logP0: number
  /** Positioning: positive when longs are crowded. */
  s = 0
  /** Log of the open-interest multiplier (contracts, relative to the start). */
  logO = 0
  // The latest step's outputs.
  r = 0
  sigma: number
  drift = 0
  liq = 0
  buyFrac = 0.5
  volFactor = 1

  readonly asset: CryptoAsset
  readonly profile: AssetProfile

  constructor(seed: string, asset: CryptoAsset, profile: AssetProfile) {
    this.asset = asset
    this.profile = profile
    this.rng = new Rng(`${seed}|${asset.id}`)
    this.sigmaBar = profile.annualVol / Math.sqrt(STEPS_PER_YEAR)
    this.omega = this.sigmaBar ** 2 * (1 - GARCH_ALPHA - GARCH_BETA)
    this.sigma2 = this.sigmaBar ** 2
    this.sigma = this.sigmaBar
    this.logP0 = Math.log(profile.priceUsd)
    this.logP = this.logP0
    this.priceUsd = profile.priceUsd
    this.anchor = this.logP
  }

  /** One 15-minute step. `z` is the market factor's shock; `pegLogP` the tracked asset's log price. */
  step(z: number, pegLogP: number | undefined) {
    const rng = this.rng
    const sb = this.sigmaBar
    const shock = this.profile.beta * z + Math.sqrt(1 - this.profile.beta ** 2) * rng.normal()
    this.sigma2 = this.omega + GARCH_ALPHA * (this.lastShock / this.volRegime) ** 2 + GARCH_BETA * this.sigma2
    this.logVolRegime =
      VOL_REGIME_PHI * this.logVolRegime + VOL_REGIME_SD * Math.sqrt(1 - VOL_REGIME_PHI ** 2) * rng.normal()
    // Normalised so the regime factor averages 1 in variance.
    this.volRegime = Math.exp(this.logVolRegime - VOL_REGIME_SD ** 2)
    this.sigma = Math.sqrt(this.sigma2) * this.volRegime
    if (rng.next() < REGIME_SWITCH) {
      const u = rng.next()
      this.regime = u < 0.3 ? 1 : u < 0.6 ? -1 : 0
      this.anchor = this.logP
    }
    const jump = rng.next() < JUMP_PROBABILITY ? (rng.next() < 0.5 ? -1 : 1) * (3 + 4 * rng.next()) * sb : 0
    this.drift = this.regime * TREND_DRIFT * sb + (this.regime === 0 ? -RANGE_PULL * (this.logP - this.anchor) : 0)
    let r = this.drift + this.sigma * shock + jump
    if (pegLogP !== undefined) {
      // A wrapped token: the tracked price plus a small, mean-reverting premium.
      r = pegLogP + 0.0003 * shock - this.logP
    }
    this.r = r
    this.lastShock = r - this.drift
    this.logP += r
    this.priceUsd = Math.exp(this.logP)
    this.s = 0.993 * this.s + 0.08 * (r / sb) + 0.05 * rng.normal()
    const move = Math.abs(r) / sb
    const crowdedHit = Math.max(0, r < 0 ? this.s : -this.s)
    this.liq =
      move > LIQUIDATION_THRESHOLD
        ? Math.min(0.08, 0.0015 * (move - LIQUIDATION_THRESHOLD) ** 1.5 * (1 + crowdedHit))
        : 0
    this.logO += 0.0006 * (Math.abs(this.s) - 0.6) + 0.003 * rng.normal() - 0.0008 * this.logO + Math.log(1 - this.liq)
    this.buyFrac = 0.5 + 0.3 * Math.tanh((0.8 * this.lastShock) / this.sigma)
    this.volFactor = (this.sigma / sb) ** 1.2 * (1 + 20 * this.liq)
  }

  /** `exp(logP)`, refreshed at each step. */
  priceUsd: number

  /** Everything a step reads or a caller sees, in a fixed order (`ASSET_STATE_LENGTH` numbers). */
  save(): Array<number> {
    return [
      ...this.rng.save(),
      this.sigma2,
      this.lastShock,
      this.logVolRegime,
      this.volRegime,
      this.regime,
      this.anchor,
      this.logP,
      this.s,
      this.logO,
      this.r,
      this.sigma,
      this.drift,
      this.liq,
      this.buyFrac,
      this.volFactor,
      this.priceUsd
    ]
  }

  restore(state: ArrayLike<number>): void {
    if (state.length !== ASSET_STATE_LENGTH) throw new Error("AssetSim.restore: wrong state length")
    this.rng.restore(Array.from({ length: 6 }, (_, i) => state[i] as number))
    const at = (i: number) => state[6 + i] as number
    this.sigma2 = at(0)
    this.lastShock = at(1)
    this.logVolRegime = at(2)
    this.volRegime = at(3)
    const regime = at(4)
    if (regime !== -1 && regime !== 0 && regime !== 1) throw new Error("AssetSim.restore: bad regime")
    this.regime = regime
    this.anchor = at(5)
    this.logP = at(6)
    this.s = at(7)
    this.logO = at(8)
    this.r = at(9)
    this.sigma = at(10)
    this.drift = at(11)
    this.liq = at(12)
    this.buyFrac = at(13)
    this.volFactor = at(14)
    this.priceUsd = at(15)
  }
}

/** Numbers in a saved asset state (`AssetSim.save`): its generator's six, then sixteen. */
const ASSET_STATE_LENGTH = 22
/** Numbers in a saved listing state (`VenueSim.save`). */
const VENUE_STATE_LENGTH = 6 + 9

/** Where one venue's rows go: preallocated columns for a backfill, one row for a tick. */
export class VenueSink {
  readonly bars: Series<"bars">
  readonly bookMetrics: Series<"bookMetrics">
  readonly markIndex: Series<"markIndex"> | undefined
  readonly openInterest: Series<"openInterest"> | undefined
  readonly takerFlow: Series<"takerFlow"> | undefined
  barRows = 0
  denseRows = 0
  readonly funding = { t: [] as Array<number>, rate: [] as Array<number>, intervalMs: [] as Array<number> }
  readonly liquidations = { t: [] as Array<number>, longUsd: [] as Array<number>, shortUsd: [] as Array<number> }

  readonly assetId: string
  readonly venue: string
  /**
   * Whether this listing keeps bars for the whole history (the asset's primary listing, which technicals,
   * structure and series read) or only for the dense window like the other per-bar series.
   */
  readonly allBars: boolean

  constructor(
    assetId: string,
    venue: string,
    perp: boolean,
    barCapacity: number,
    denseCapacity: number,
    allBars = true
  ) {
    this.assetId = assetId
    this.venue = venue
    this.allBars = allBars
    this.bars = allocSeries("bars", assetId, venue, allBars ? barCapacity : denseCapacity)
    this.bookMetrics = allocSeries("bookMetrics", assetId, venue, denseCapacity)
    this.markIndex = perp ? allocSeries("markIndex", assetId, venue, denseCapacity) : undefined
    this.openInterest = perp ? allocSeries("openInterest", assetId, venue, denseCapacity) : undefined
    this.takerFlow = perp ? allocSeries("takerFlow", assetId, venue, denseCapacity) : undefined
  }

  /** Rows written so far, as store batches (views on the sink's arrays). */
  batches(): Array<AnySeriesInput> {
    const out: Array<AnySeriesInput> = []
    const add = (series: object | undefined, n: number) => {
      if (series === undefined || n === 0) return
      const v: Record<string, unknown> = {}
      for (const [k, col] of Object.entries(series)) v[k] = col instanceof Float64Array ? col.subarray(0, n) : col
      out.push(v as AnySeriesInput)
    }
    add(this.bars, this.barRows)
    add(this.markIndex, this.denseRows)
    add(this.openInterest, this.denseRows)
    add(this.takerFlow, this.denseRows)
    add(this.bookMetrics, this.denseRows)
    if (this.funding.t.length > 0) {
      out.push({ kind: "funding", assetId: this.assetId, venue: this.venue, ...this.funding })
    }
    if (this.liquidations.t.length > 0) {
      out.push({ kind: "liquidations", assetId: this.assetId, venue: this.venue, ...this.liquidations })
    }
    return out
  }
}

/** The book's shape after a step: what the next book ticks start from. */
export interface BookParams {
  readonly mid: number
  readonly spreadPct: number
  readonly bidDepthUsd: number
  readonly askDepthUsd: number
}

/** One venue's listing of one asset. */
class VenueSim {
  readonly rng: Rng
  readonly perp: boolean
  readonly intervalMs: number
  lastClose = Number.NaN
  private fundingSum = 0
  private fundingCount = 0
  /** The latest funding rate per 8 hours (premium plus clamped interest). */
  lastF8h = INTEREST_8H
  book: BookParams = { mid: 0, spreadPct: 0, bidDepthUsd: 0, askDepthUsd: 0 }
  /** Open interest after the latest step (USD). */
  oiUsd = 0

  readonly asset: AssetSim
  readonly listing: Listing
  readonly venue: VenueProfile
  /** This venue's share of the asset's activity (shares of its listings sum to 1). */
  readonly share: number

  constructor(seed: string, asset: AssetSim, listing: Listing, venue: VenueProfile, share: number) {
    this.asset = asset
    this.listing = listing
    this.venue = venue
    this.share = share
    this.rng = new Rng(`${seed}|${asset.asset.id}|${listing.venue}`)
    this.perp = listing.market === "perp"
    this.intervalMs = listing.fundingIntervalMs ?? EIGHT_HOURS_MS
  }

  /** The step of the bar opening at `tOpen`, written at the sink's next rows (dense rows when `dense`). */
  step(tOpen: number, sink: VenueSink, dense: boolean) {
    const a = this.asset
    const p = a.profile
    const rng = this.rng
    const tClose = tOpen + BAR_MS
    const index = a.priceUsd * Math.exp(this.venue.priceOffset + 0.00008 * rng.noise())
    const oiDev = a.logO
    const basis = this.perp
      ? (0.0005 * a.s + 0.0002 * oiDev) * this.venue.basisMult + this.venue.basisOffset + 0.00006 * rng.noise()
      : 0
    const mark = index * (1 + basis)
    const close = this.perp ? mark : index
    const open = Number.isNaN(this.lastClose) ? close * Math.exp(-a.r) : this.lastClose
    const excursion = 0.6 * a.sigma
    const high = Math.max(open, close) * Math.exp(excursion * Math.abs(rng.noise()))
    const low = Math.min(open, close) * Math.exp(-excursion * Math.abs(rng.noise()))
    const turnoverUsd = (p.volumeUsd / 96) * this.share * a.volFactor * Math.exp(0.25 * rng.noise())
    const spreadPct = Math.min(
      1.5,
      p.spreadPct * this.venue.spreadMult * (a.sigma / a.sigmaBar) ** 0.8 * Math.exp(0.2 * rng.noise())
    )
    const depthUsd = p.depthUsd * this.share * (a.sigmaBar / a.sigma) ** 0.7 * Math.exp(0.25 * rng.noise())
    const imbalance = Math.tanh(0.25 * a.s + 0.8 * (a.buyFrac - 0.5) + 0.3 * rng.noise())
    this.lastClose = close
    this.book = {
      mid: close,
      spreadPct,
      bidDepthUsd: depthUsd * (1 + imbalance),
      askDepthUsd: depthUsd * (1 - imbalance)
    }

    if (dense || sink.allBars) {
      const i = sink.barRows++
      const b = sink.bars
      b.t[i] = tOpen
      b.open[i] = f32(open)
      b.high[i] = f32(high)
      b.low[i] = f32(low)
      b.close[i] = f32(close)
      b.volume[i] = f32(turnoverUsd / close)
    }
    if (dense) {
      const j = sink.denseRows++
      const m = sink.bookMetrics
      m.t[j] = tClose
      m.mid[j] = f32(close)
      m.spreadPct[j] = f32(spreadPct)
      m.imbalance[j] = f32(imbalance)
      m.bidDepthUsd[j] = f32(this.book.bidDepthUsd)
      m.askDepthUsd[j] = f32(this.book.askDepthUsd)
    }
    if (!this.perp) return

    this.oiUsd = p.oiUsd * this.share * Math.exp(a.logO + a.logP - a.logP0) * Math.exp(0.01 * rng.noise())
    const buyShare = Math.min(0.95, Math.max(0.05, a.buyFrac + 0.03 * rng.noise()))
    if (dense) {
      const j = sink.denseRows - 1
      const mi = sink.markIndex as Series<"markIndex">
      mi.t[j] = tClose
      mi.mark[j] = f32(mark)
      mi.index[j] = f32(index)
      const oi = sink.openInterest as Series<"openInterest">
      oi.t[j] = tClose
      oi.oiUsd[j] = f32(this.oiUsd)
      const f = sink.takerFlow as Series<"takerFlow">
      f.t[j] = tOpen
      f.buyUsd[j] = f32(turnoverUsd * buyShare)
      f.sellUsd[j] = f32(turnoverUsd * (1 - buyShare))
    }

    // Funding: the premium (basis) plus the interest term clamped around it, averaged over the interval.
    const f8h = basis + Math.min(INTEREST_CLAMP, Math.max(-INTEREST_CLAMP, INTEREST_8H - basis))
    this.lastF8h = f8h
    this.fundingSum += f8h
    this.fundingCount++
    if (tClose % this.intervalMs === 0) {
      sink.funding.t.push(tClose)
      // Not rounded: a settlement at exactly the interest rate prints as 0.0001, which float32 cannot hold.
      sink.funding.rate.push((this.fundingSum / this.fundingCount) * (this.intervalMs / EIGHT_HOURS_MS))
      sink.funding.intervalMs.push(this.intervalMs)
      this.fundingSum = 0
      this.fundingCount = 0
    }

    // Liquidations: a burst on a sharp move (the side the move hurts), a trickle otherwise.
    if (a.liq > 0) {
      const events: Array<[offset: number, longUsd: number, shortUsd: number]> = []
      const totalUsd = a.liq * this.oiUsd * Math.exp(0.3 * rng.noise())
      const count = 1 + Math.min(5, Math.floor(a.liq * 400))
      const weights = Array.from({ length: count }, () => 0.2 + rng.next())
      const sum = weights.reduce((x, y) => x + y, 0)
      for (const w of weights) {
        const usd = (totalUsd * w) / sum
        events.push([Math.floor(rng.next() * BAR_MS), a.r < 0 ? usd : 0, a.r < 0 ? 0 : usd])
      }
      // The other side is squeezed a little too.
      const otherUsd = 0.1 * totalUsd * rng.next()
      events.push([Math.floor(rng.next() * BAR_MS), a.r < 0 ? 0 : otherUsd, a.r < 0 ? otherUsd : 0])
      events.sort((x, y) => x[0] - y[0])
      let last = -1
      for (const [offset, longUsd, shortUsd] of events) {
        // Distinct milliseconds within the bar (a row per instant).
        const at = Math.min(BAR_MS - 1, Math.max(offset, last + 1))
        if (at <= last) continue
        last = at
        sink.liquidations.t.push(tOpen + at)
        sink.liquidations.longUsd.push(f32(longUsd))
        sink.liquidations.shortUsd.push(f32(shortUsd))
      }
    } else if (rng.next() < 0.04) {
      const usd = this.oiUsd * 0.00003 * Math.exp(rng.noise())
      const long = rng.next() < 0.5
      sink.liquidations.t.push(tOpen + Math.floor(rng.next() * BAR_MS))
      sink.liquidations.longUsd.push(long ? f32(usd) : 0)
      sink.liquidations.shortUsd.push(long ? 0 : f32(usd))
    }
  }

  /** Everything its steps carry from one to the next, in a fixed order (`VENUE_STATE_LENGTH` numbers). */
  save(): Array<number> {
    return [
      ...this.rng.save(),
      this.lastClose,
      this.fundingSum,
      this.fundingCount,
      this.lastF8h,
      this.book.mid,
      this.book.spreadPct,
      this.book.bidDepthUsd,
      this.book.askDepthUsd,
      this.oiUsd
    ]
  }

  restore(state: ArrayLike<number>): void {
    if (state.length !== VENUE_STATE_LENGTH) throw new Error("VenueSim.restore: wrong state length")
    this.rng.restore(Array.from({ length: 6 }, (_, i) => state[i] as number))
    const at = (i: number) => state[6 + i] as number
    this.lastClose = at(0)
    this.fundingSum = at(1)
    this.fundingCount = at(2)
    this.lastF8h = at(3)
    this.book = { mid: at(4), spreadPct: at(5), bidDepthUsd: at(6), askDepthUsd: at(7) }
    this.oiUsd = at(8)
  }

  /** The funding state at `nowMs` (between settlements). */
  fundingState(nowMs: number): FundingState {
    const scale = this.intervalMs / EIGHT_HOURS_MS
    return {
      assetId: this.asset.asset.id,
      venue: this.listing.venue,
      t: nowMs,
      intervalMs: this.intervalMs,
      nextFundingMs: (Math.floor(nowMs / this.intervalMs) + 1) * this.intervalMs,
      currentRate: (this.fundingCount > 0 ? this.fundingSum / this.fundingCount : this.lastF8h) * scale,
      predictedRate: this.lastF8h * scale
    }
  }
}

const BOOK_LEVELS_NEAR = 10
const BOOK_LEVELS_FAR = 10

/**
 * A 20-level book whose spread, depth within 1 % of mid and imbalance are exactly `params`: ten levels per side
 * inside 1 %, carrying the depth in equal USD slices, and ten deeper levels from 1.2 % to 3 %.
 */
export const bookOf = (assetId: string, venue: string, t: number, params: BookParams): BookSnapshot => {
  const half = params.spreadPct / 200
  const side = (sign: -1 | 1, depthUsd: number): Array<BookLevel> => {
    const levels: Array<BookLevel> = []
    for (let j = 0; j < BOOK_LEVELS_NEAR; j++) {
      const distance = half + (j * (0.0099 - half)) / (BOOK_LEVELS_NEAR - 1)
      const price = params.mid * (1 + sign * Math.min(distance, 0.0099))
      levels.push([price, depthUsd / BOOK_LEVELS_NEAR / price])
    }
    for (let j = 0; j < BOOK_LEVELS_FAR; j++) {
      const price = params.mid * (1 + sign * (0.012 + (j * 0.018) / (BOOK_LEVELS_FAR - 1)))
      levels.push([price, (depthUsd * (0.3 + 0.05 * j)) / price])
    }
    return levels
  }
  return { assetId, venue, t, bids: side(-1, params.bidDepthUsd), asks: side(1, params.askDepthUsd) }
}

/** Options of a simulation. */
export interface SimulationOptions {
  readonly seed: string
  /** The assets to simulate (each must have a profile and at least one listing). */
  readonly assets: ReadonlyArray<CryptoAsset>
  /** Time of the first bar's open (a multiple of `BAR_MS`). */
  readonly genesisMs: number
  /**
   * Bars before this time update the model but write no dense rows (mark/index, OI, taker flow, book metrics,
   * and the bars of every listing but the asset's primary one).
   */
  readonly denseFromMs: number
  /** Each asset's model parameters, by ID; default: the registry's (`AssetProfiles`). */
  readonly profiles?: Readonly<Record<string, AssetProfile>>
}

/** A run of several steps in progress (see `Simulation.startRun`). */
export interface SimulationRun {
  readonly steps: number
  readonly start: number
  readonly z: Float64Array
  readonly pegPaths: Map<string, Float64Array>
}

/** Where an asset's part of a run starts instead of the run's start: a state saved after `step` steps. */
export interface AssetResume {
  /** Steps since the genesis the state was saved after. */
  readonly step: number
  /** `Simulation.assetState` then. */
  readonly state: ArrayLike<number>
}

/** One asset's part of a run in progress (see `Simulation.beginAsset`). */
export interface AssetRun {
  readonly run: SimulationRun
  readonly asset: AssetSim
  readonly mine: ReadonlyArray<readonly [VenueSim, VenueSink]>
  readonly peg: Float64Array | undefined
  readonly path: Float64Array | undefined
  /** Steps run so far. */
  k: number
}

/** The whole simulated market: every asset and listing, advanced step by step. */
export class Simulation {
  private readonly market: Rng
  private readonly assets: ReadonlyArray<AssetSim>
  readonly venues: ReadonlyArray<VenueSim>
  private readonly byId: ReadonlyMap<string, AssetSim>
  /** Index of the next step; its bar opens at `genesisMs + nextStep * BAR_MS`. */
  nextStep = 0

  readonly options: SimulationOptions

  constructor(options: SimulationOptions) {
    this.options = options
    if (options.genesisMs % BAR_MS !== 0) throw new Error("genesis must be a multiple of 15 minutes")
    this.market = new Rng(`${options.seed}|market`)
    this.assets = options.assets.map((asset) => {
      const profile = (options.profiles ?? AssetProfiles)[asset.id]
      if (profile === undefined) throw new Error(`no simulation profile for ${asset.id}`)
      return new AssetSim(options.seed, asset, profile)
    })
    this.byId = new Map(this.assets.map((a) => [a.asset.id, a]))
    this.venues = this.assets.flatMap((a) => {
      const total = a.asset.listings.reduce((x, l) => x + (VenueProfiles[l.venue]?.share ?? 0), 0)
      return a.asset.listings.map((l) => {
        const venue = VenueProfiles[l.venue]
        if (venue === undefined) throw new Error(`no simulation profile for venue ${l.venue}`)
        return new VenueSim(options.seed, a, l, venue, venue.share / total)
      })
    })
    for (const a of this.assets) {
      const peg = a.profile.peg
      if (peg !== undefined && !this.isBefore(peg, a.asset.id)) {
        throw new Error(`${a.asset.id} tracks ${peg}, which must be simulated before it`)
      }
    }
  }

  private isBefore(first: string, second: string): boolean {
    const ids = this.assets.map((a) => a.asset.id)
    const i = ids.indexOf(first)
    return i >= 0 && i < ids.indexOf(second)
  }

  /** Open time of step `k`'s bar. */
  openOf(k: number): number {
    return this.options.genesisMs + k * BAR_MS
  }

  /** How many of `steps` steps from step `start` write dense rows (their bar closes after `denseFromMs`). */
  private denseCount(start: number, steps: number): number {
    const skipped = Math.floor((this.options.denseFromMs - this.openOf(start)) / BAR_MS - 1) + 1
    return steps - Math.min(steps, Math.max(0, skipped))
  }

  /**
   * Starts a run of `steps` steps done asset by asset (`runAsset` for every asset in order, then `finishRun`):
   * equivalent to `steps` calls of `step`, each stream being consumed in the same order.
   */
  startRun(steps: number): SimulationRun {
    const z = new Float64Array(steps)
    for (let k = 0; k < steps; k++) z[k] = this.market.normal()
    return { steps, start: this.nextStep, z, pegPaths: new Map() }
  }

  /** The assets in simulation order. */
  get assetList(): ReadonlyArray<CryptoAsset> {
    return this.assets.map((a) => a.asset)
  }

  /** Runs asset `index` through the run's steps; answers its listings' sinks. */
  runAsset(run: SimulationRun, index: number): Array<VenueSink> {
    const part = this.beginAsset(run, index)
    this.advanceAsset(part, run.steps)
    return this.endAsset(part)
  }

  /**
   * Asset `index`'s part of a run, to be advanced a few steps at a time (`advanceAsset`) and closed with
   * `endAsset`: the same as `runAsset`, for a caller that does other work between the pieces.
   */
  beginAsset(run: SimulationRun, index: number, resume?: AssetResume): AssetRun {
    const a = this.assets[index] as AssetSim
    const k = resume === undefined ? 0 : resume.step - run.start
    if (k < 0 || k > run.steps) throw new Error(`cannot resume ${a.asset.id} at step ${resume?.step} in this run`)
    if (resume !== undefined) this.restoreAsset(index, resume.state)
    const dense = this.denseCount(run.start + k, run.steps - k)
    const mine = this.venues
      .filter((v) => v.asset === a)
      .map(
        (v) =>
          [
            v,
            new VenueSink(a.asset.id, v.listing.venue, v.perp, run.steps - k, dense, v.listing === a.asset.listings[0])
          ] as const
      )
    const peg = a.profile.peg === undefined ? undefined : run.pegPaths.get(a.profile.peg)
    const needed = this.assets.some((other) => other.profile.peg === a.asset.id)
    const path = needed ? new Float64Array(run.steps) : undefined
    return { run, asset: a, mine, peg, path, k }
  }

  /** How many numbers `assetState(index)` answers. */
  stateLength(index: number): number {
    const a = this.assets[index] as AssetSim
    return ASSET_STATE_LENGTH + this.venues.filter((v) => v.asset === a).length * VENUE_STATE_LENGTH
  }

  /** Index of `assetId` in simulation order (-1 when not simulated). */
  indexOf(assetId: string): number {
    return this.assets.findIndex((a) => a.asset.id === assetId)
  }

  /** The asset a simulated asset tracks (`AssetProfile.peg`), if any. */
  pegOf(index: number): string | undefined {
    return (this.assets[index] as AssetSim).profile.peg
  }

  /**
   * Asset `index`'s whole model state after its latest step (its own, then each listing's, in listing order):
   * what `beginAsset` needs to resume it there, for a history kept on disk.
   */
  assetState(index: number): Float64Array {
    const a = this.assets[index] as AssetSim
    return Float64Array.from([...a.save(), ...this.venues.filter((v) => v.asset === a).flatMap((v) => v.save())])
  }

  private restoreAsset(index: number, state: ArrayLike<number>) {
    const a = this.assets[index] as AssetSim
    const mine = this.venues.filter((v) => v.asset === a)
    if (state.length !== ASSET_STATE_LENGTH + mine.length * VENUE_STATE_LENGTH) {
      throw new Error(`the saved state of ${a.asset.id} does not fit its listings`)
    }
    const part = (from: number, n: number) => Array.from({ length: n }, (_, i) => state[from + i] as number)
    a.restore(part(0, ASSET_STATE_LENGTH))
    mine.forEach((v, j) => {
      v.restore(part(ASSET_STATE_LENGTH + j * VENUE_STATE_LENGTH, VENUE_STATE_LENGTH))
    })
  }

  /** Advances an asset's part by up to `steps` steps; answers whether it has run every step. */
  advanceAsset(part: AssetRun, steps: number): boolean {
    const { run, asset: a, mine, peg, path } = part
    const end = Math.min(run.steps, part.k + steps)
    for (let k = part.k; k < end; k++) {
      a.step(run.z[k] as number, peg === undefined ? undefined : peg[k])
      if (path !== undefined) path[k] = a.logP
      const tOpen = this.openOf(run.start + k)
      const writeDense = tOpen + BAR_MS > this.options.denseFromMs
      for (const [v, sink] of mine) v.step(tOpen, sink, writeDense)
    }
    part.k = end
    return end >= run.steps
  }

  /** Closes an asset's part (every step run): its listings' sinks. */
  endAsset(part: AssetRun): Array<VenueSink> {
    if (part.k < part.run.steps) throw new Error("endAsset before every step of the run")
    if (part.path !== undefined) part.run.pegPaths.set(part.asset.asset.id, part.path)
    return part.mine.map(([, sink]) => sink)
  }

  finishRun(run: SimulationRun) {
    this.nextStep = run.start + run.steps
  }

  /** One step for the whole market, into one-row sinks. */
  step(): Array<VenueSink> {
    const sinks = this.venues.map((v) => new VenueSink(v.asset.asset.id, v.listing.venue, v.perp, 1, 1))
    const z = this.market.normal()
    const tOpen = this.openOf(this.nextStep)
    for (const a of this.assets) {
      const peg = a.profile.peg === undefined ? undefined : this.byId.get(a.profile.peg)?.logP
      a.step(z, peg)
    }
    this.venues.forEach((v, i) => {
      v.step(tOpen, sinks[i] as VenueSink, true)
    })
    this.nextStep++
    return sinks
  }

  /**
   * Books of every listing (of `venue`, of `assetId`, when given) at `nowMs`: the last step's book, moved by
   * intra-bar noise keyed by the time.
   */
  books(nowMs: number, venue?: string, assetId?: string): Array<BookSnapshot> {
    return this.venues
      .filter(
        (v) =>
          (venue === undefined || v.listing.venue === venue) && (assetId === undefined || v.asset.asset.id === assetId)
      )
      .map((v) => {
        const rng = new Rng(`${this.options.seed}|${v.asset.asset.id}|${v.listing.venue}|book|${nowMs}`)
        const drift = Math.exp(0.3 * v.asset.sigma * rng.normal())
        const depth = Math.exp(0.1 * rng.normal())
        const params: BookParams = {
          mid: v.book.mid * drift,
          spreadPct: v.book.spreadPct * Math.exp(0.1 * rng.normal()),
          bidDepthUsd: v.book.bidDepthUsd * depth * Math.exp(0.05 * rng.normal()),
          askDepthUsd: v.book.askDepthUsd * depth * Math.exp(0.05 * rng.normal())
        }
        return bookOf(v.asset.asset.id, v.listing.venue, nowMs, params)
      })
  }

  /** Funding states of every perpetual listing (of `venue`, of `assetId`, when given) at `nowMs`. */
  fundingStates(nowMs: number, venue?: string, assetId?: string): Array<FundingState> {
    return this.venues
      .filter(
        (v) =>
          v.perp &&
          (venue === undefined || v.listing.venue === venue) &&
          (assetId === undefined || v.asset.asset.id === assetId)
      )
      .map((v) => v.fundingState(nowMs))
  }
}
