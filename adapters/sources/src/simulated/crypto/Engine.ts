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
 * - a slow pull back toward the asset's starting price (half-life about 60 days); near the edges of its price
 *   range (`priceRangeOf`) new trends lean inward and a steep pull turns the price, and a move that would still
 *   cross is reflected a few percent inside: over any span, a year or many, the price stays where the asset has
 *   traded (an ether between 1,500 and 8,000 USD) instead of drifting tenfold;
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
  type Series,
  type StreamedQuote,
  type StreamedTicker
} from "@market-data/core"
import { type AssetProfile, AssetProfiles, priceRangeOf, type VenueProfile, VenueProfiles } from "./Profiles.ts"
import { hash32, keyedNoise, Rng } from "./Random.ts"

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
export const SIMULATED_CRYPTO_VERSION = 3

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
/** Pull of the log price toward the starting price per step (half-life about 60 days). */
const HOME_PULL = Math.LN2 / (60 * 96)
/** The price reflects this far (log) inside its range's edges, so bar closes, highs and lows stay inside it. */
const RANGE_MARGIN = 0.04
/**
 * Pull back from the range's edges, in current typical moves per step at the edge, growing with the twelfth power
 * of the way there (`edgeness`): nothing to speak of within two thirds of the way, a trend's whole drift at
 * 70 %, a quarter of a typical move per step at 80 %, so the price turns before the edge rather than bouncing off
 * it; and what would still cross is reflected (`RANGE_MARGIN`).
 */
const EDGE_PULL = 4
const EDGE_POWER = 12

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
  /** Log of the lowest and highest price the model takes (the asset's range, `RANGE_MARGIN` inside). */
  private readonly logLow: number
  private readonly logHigh: number
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
  /**
   * Steps since the genesis this state is after (set by the simulation; not part of the saved state, which is
   * always saved with its step).
   */
  stepsDone = 0
  /** Key of the intra-bar path's draws (`bridgeAt`). */
  readonly bridgeKey: number

  constructor(seed: string, asset: CryptoAsset, profile: AssetProfile) {
    this.asset = asset
    this.profile = profile
    this.rng = new Rng(`${seed}|${asset.id}`)
    this.bridgeKey = hash32(`${seed}|${asset.id}|bridge`)
    this.sigmaBar = profile.annualVol / Math.sqrt(STEPS_PER_YEAR)
    this.omega = this.sigmaBar ** 2 * (1 - GARCH_ALPHA - GARCH_BETA)
    this.sigma2 = this.sigmaBar ** 2
    this.sigma = this.sigmaBar
    this.logP0 = Math.log(profile.priceUsd)
    this.logP = this.logP0
    this.priceUsd = profile.priceUsd
    this.anchor = this.logP
    const [low, high] = priceRangeOf(profile)
    this.logLow = Math.min(this.logP0, Math.log(low) + RANGE_MARGIN)
    this.logHigh = Math.max(this.logP0, Math.log(high) - RANGE_MARGIN)
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
    // A wrapped token follows what it tracks: its own range plays no part.
    const edge = pegLogP === undefined ? this.edgeness() : 0
    if (rng.next() < REGIME_SWITCH) {
      const u = rng.next()
      // A new trend leans away from the nearer edge (even odds at the starting price).
      const up = 0.3 * (1 - edge)
      this.regime = u < up ? 1 : u < 0.6 ? -1 : 0
      this.anchor = this.logP
    }
    const jump = rng.next() < JUMP_PROBABILITY ? (rng.next() < 0.5 ? -1 : 1) * (3 + 4 * rng.next()) * sb : 0
    this.drift =
      this.regime * TREND_DRIFT * sb +
      (this.regime === 0 ? -RANGE_PULL * (this.logP - this.anchor) : 0) -
      (pegLogP === undefined ? HOME_PULL * (this.logP - this.logP0) : 0) -
      EDGE_PULL * this.sigma * Math.sign(edge) * Math.abs(edge) ** EDGE_POWER
    let r = this.drift + this.sigma * shock + jump
    if (pegLogP !== undefined) {
      // A wrapped token: the tracked price plus a small, mean-reverting premium.
      r = pegLogP + 0.0003 * shock - this.logP
    } else {
      // Off a range's edge the move reflects: the same size, back inside.
      const to = this.logP + r
      if (to > this.logHigh) r = Math.max(this.logLow, 2 * this.logHigh - to) - this.logP
      else if (to < this.logLow) r = Math.min(this.logHigh, 2 * this.logLow - to) - this.logP
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

  /** Where the price is between its starting level (0) and the range's edge (1 above, -1 below). */
  private edgeness(): number {
    const x = this.logP - this.logP0
    return x >= 0 ? x / (this.logHigh - this.logP0 || 1) : x / (this.logP0 - this.logLow || 1)
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
const VENUE_STATE_LENGTH = 6 + 10

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
  /** The index price at the latest close (the close itself for a spot listing). */
  lastIndex = Number.NaN
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
  /** Key of this listing's own intra-bar draws (`Simulation.momentOf`). */
  readonly quoteKey: number

  constructor(seed: string, asset: AssetSim, listing: Listing, venue: VenueProfile, share: number) {
    this.asset = asset
    this.listing = listing
    this.venue = venue
    this.share = share
    this.rng = new Rng(`${seed}|${asset.asset.id}|${listing.venue}`)
    this.quoteKey = hash32(`${seed}|${asset.asset.id}|${listing.venue}|quote`)
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
    this.lastIndex = index
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
      this.lastIndex,
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
    this.lastIndex = at(1)
    this.fundingSum = at(2)
    this.fundingCount = at(3)
    this.lastF8h = at(4)
    this.book = { mid: at(5), spreadPct: at(6), bidDepthUsd: at(7), askDepthUsd: at(8) }
    this.oiUsd = at(9)
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

/** The best bid and ask of `bookOf(params)` (its first level each side), without building the book. */
export const topOf = (t: number, params: BookParams): StreamedQuote => {
  const half = Math.min(params.spreadPct / 200, 0.0099)
  const bid = params.mid * (1 - half)
  const ask = params.mid * (1 + half)
  return {
    t,
    bid,
    bidSize: params.bidDepthUsd / BOOK_LEVELS_NEAR / bid,
    ask,
    askSize: params.askDepthUsd / BOOK_LEVELS_NEAR / ask
  }
}

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

/** What one listing's next step (the bar now forming) ends at: what the quotes between closes move toward. */
interface ListingPreview {
  readonly close: number
  readonly index: number
  readonly high: number
  readonly low: number
  readonly volume: number
  readonly book: BookParams
  readonly oiUsd: number
}

/** An asset's next step, computed ahead from its state and put back (`Simulation.previewOf`). */
interface AssetPreview {
  /** Steps since the genesis the preview starts from (the asset's `stepsDone`). */
  readonly step: number
  readonly logP: number
  /** The next step's volatility (log, per bar): the scale of the path between the closes. */
  readonly sigma: number
  readonly listings: ReadonlyArray<ListingPreview>
}

/** One listing's market at an instant between two closes. */
export interface ListingMoment extends BookParams {
  /** The perpetual's mark (the listing's price: the book's mid), and its index; a spot listing's price twice. */
  readonly mark: number
  readonly index: number
  /** Open interest (USD; 0 for a spot listing). */
  readonly oiUsd: number
}

/** Points of the dyadic grid the intra-bar path is drawn on (about 220 ms apart in a 15-minute bar). */
const BRIDGE_POINTS = 4096
/** The grid the quotes' own noise is keyed on (ms): the quote ticker's fastest cadence. */
export const QUOTE_GRID_MS = 250
/** The forming bar's high and low are the path's extremes at this spacing (ms). */
const FORMING_SAMPLE_MS = 5_000
/** Each listing's own jitter around the asset's path (log): a fraction of a basis point. */
const VENUE_JITTER = 0.00002

/**
 * A Brownian bridge on [0, 1] (0 at both ends, variance `f (1 - f)`) at point `i` of `BRIDGE_POINTS`, drawn by
 * midpoint displacement with keyed draws: its value at a point depends only on `key`, `step` and `i` (never on
 * which points were asked before), so the path between two closes is the same whenever and however often it is
 * read.
 */
export const bridgeAt = (key: number, step: number, i: number): number => {
  if (i <= 0 || i >= BRIDGE_POINTS) return 0
  let l = 0
  let r = BRIDGE_POINTS
  let bl = 0
  let br = 0
  for (;;) {
    const m = (l + r) >>> 1
    const bm = 0.5 * (bl + br) + Math.sqrt((r - l) / (4 * BRIDGE_POINTS)) * keyedNoise(key, step, m)
    if (m === i) return bm
    if (i < m) {
      r = m
      br = bm
    } else {
      l = m
      bl = bm
    }
  }
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
  private readonly indexById: ReadonlyMap<string, number>
  /** Each asset's listings (by asset index, in listing order). */
  private readonly listingsByAsset: ReadonlyArray<ReadonlyArray<VenueSim>>
  /** Each asset's next step, once computed for its current state (`previewOf`). */
  private readonly previews: Array<AssetPreview | undefined>
  /** Market-factor draws taken so far: a run's draws are all taken at its start. */
  private marketSteps = 0
  /** The latest bridge value asked (an asset's listings ask the same one in a row). */
  private lastBridge = { asset: undefined as AssetSim | undefined, step: -1, point: -1, value: 0 }
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
    this.indexById = new Map(this.assets.map((a, i) => [a.asset.id, i]))
    this.venues = this.assets.flatMap((a) => {
      const total = a.asset.listings.reduce((x, l) => x + (VenueProfiles[l.venue]?.share ?? 0), 0)
      return a.asset.listings.map((l) => {
        const venue = VenueProfiles[l.venue]
        if (venue === undefined) throw new Error(`no simulation profile for venue ${l.venue}`)
        return new VenueSim(options.seed, a, l, venue, venue.share / total)
      })
    })
    this.listingsByAsset = this.assets.map((a) => this.venues.filter((v) => v.asset === a))
    this.previews = this.assets.map(() => undefined)
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
    this.marketSteps += steps
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
    a.stepsDone = run.start + k
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

  /** The venues `assetId` is simulated on, in listing order (none when it is not simulated). */
  venuesOfAsset(assetId: string): ReadonlyArray<string> {
    const i = this.indexOf(assetId)
    return i < 0 ? [] : (this.listingsByAsset[i] as ReadonlyArray<VenueSim>).map((v) => v.listing.venue)
  }

  /** Market steps drawn so far: changes with every step (and run) of the simulation. */
  get stepsDrawn(): number {
    return this.marketSteps
  }

  /** Index of `assetId` in simulation order (-1 when not simulated). */
  indexOf(assetId: string): number {
    return this.indexById.get(assetId) ?? -1
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
    a.stepsDone = run.start + end
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
    this.marketSteps++
    const tOpen = this.openOf(this.nextStep)
    for (const a of this.assets) {
      const peg = a.profile.peg === undefined ? undefined : this.byId.get(a.profile.peg)?.logP
      a.step(z, peg)
      a.stepsDone++
    }
    this.venues.forEach((v, i) => {
      v.step(tOpen, sinks[i] as VenueSink, true)
    })
    this.nextStep++
    return sinks
  }

  /**
   * Asset `index`'s next step (the bar now forming, as it will close), computed from its state and the market's
   * next draw and then put back: the same numbers the step itself will give. Undefined before the asset's first
   * step, and while the asset is behind the market's draws (a run still generating it).
   */
  private previewOf(index: number): AssetPreview | undefined {
    const a = this.assets[index] as AssetSim
    const step = a.stepsDone
    if (step === 0 || step !== this.marketSteps) return undefined
    const cached = this.previews[index]
    if (cached !== undefined && cached.step === step) return cached
    let pegLogP: number | undefined
    if (a.profile.peg !== undefined) {
      const peg = this.previewOf(this.indexOf(a.profile.peg))
      if (peg === undefined) return undefined
      pegLogP = peg.logP
    }
    const market = this.market.save()
    const z = this.market.normal()
    this.market.restore(market)
    const mine = this.listingsByAsset[index] as ReadonlyArray<VenueSim>
    const saved = a.save()
    const savedListings = mine.map((v) => v.save())
    a.step(z, pegLogP)
    const tOpen = this.openOf(step)
    const listings = mine.map((v): ListingPreview => {
      const sink = new VenueSink(a.asset.id, v.listing.venue, v.perp, 1, 1, true)
      v.step(tOpen, sink, false)
      return {
        close: v.lastClose,
        index: v.lastIndex,
        high: sink.bars.high[0] as number,
        low: sink.bars.low[0] as number,
        volume: sink.bars.volume[0] as number,
        book: v.book,
        oiUsd: v.oiUsd
      }
    })
    const preview: AssetPreview = { step, logP: a.logP, sigma: a.sigma, listings }
    a.restore(saved)
    mine.forEach((v, j) => {
      v.restore(savedListings[j] as Array<number>)
    })
    this.previews[index] = preview
    return preview
  }

  /** `bridgeAt` for asset `a`, remembered for the next call (its other listings at the same instant). */
  private bridgeOf(a: AssetSim, step: number, point: number): number {
    const last = this.lastBridge
    if (last.asset === a && last.step === step && last.point === point) return last.value
    const value = bridgeAt(a.bridgeKey, step, point)
    this.lastBridge = { asset: a, step, point, value }
    return value
  }

  /**
   * Listing `j` of asset `assetIndex` at `nowMs`, between its latest close and the next: a Brownian bridge from the
   * latest close to the next one (`previewOf`; log prices, scaled by the next step's volatility, squashed inside
   * that bar's low and high), the spread, depth and open interest moving from the latest step's to the next's,
   * and a little noise of the listing's own keyed by the instant. Deterministic from the seed and the time: the
   * same instant reads the same whenever it is asked. At a close it is exactly that close. Before the
   * asset's first step, or while it is being generated, the latest step's book as it is.
   */
  momentOf(assetIndex: number, j: number, nowMs: number): ListingMoment {
    const a = this.assets[assetIndex] as AssetSim
    const v = (this.listingsByAsset[assetIndex] as ReadonlyArray<VenueSim>)[j] as VenueSim
    const p = this.previewOf(assetIndex)
    const next = p?.listings[j]
    if (p === undefined || next === undefined || Number.isNaN(v.lastClose)) {
      return { ...v.book, mark: v.lastClose, index: v.lastIndex, oiUsd: v.oiUsd }
    }
    const f = Math.min(1, Math.max(0, (nowMs - this.openOf(p.step)) / BAR_MS))
    const tick = Math.floor(nowMs / QUOTE_GRID_MS)
    // The log price: the straight line from the latest close to the next, plus the bridge (and the listing's
    // jitter) squashed into the room the next bar's high and low leave (tanh: unchanged when small), so the bar
    // written at the close holds every price quoted during it.
    const line = (1 - f) * Math.log(v.lastClose) + f * Math.log(next.close)
    const off =
      f === 0 || f === 1
        ? 0
        : p.sigma * this.bridgeOf(a, p.step, Math.round(f * BRIDGE_POINTS)) +
          VENUE_JITTER * keyedNoise(v.quoteKey, tick, 1)
    const room = off >= 0 ? Math.log(next.high) - line : line - Math.log(next.low)
    const path = room > 0 ? Math.sign(off) * room * Math.tanh(Math.abs(off) / room) : 0
    const mark = Math.min(next.high, Math.max(next.low, Math.exp(line + path)))
    const index = v.perp ? Math.exp((1 - f) * Math.log(v.lastIndex) + f * Math.log(next.index) + path) : mark
    const depth = Math.exp(0.1 * keyedNoise(v.quoteKey, tick, 3))
    const lerp = (x0: number, x1: number) => x0 + f * (x1 - x0)
    return {
      mid: mark,
      spreadPct: lerp(v.book.spreadPct, next.book.spreadPct) * Math.exp(0.08 * keyedNoise(v.quoteKey, tick, 2)),
      bidDepthUsd: lerp(v.book.bidDepthUsd, next.book.bidDepthUsd) * depth,
      askDepthUsd: lerp(v.book.askDepthUsd, next.book.askDepthUsd) * depth,
      mark,
      index,
      oiUsd: v.perp ? Math.exp(lerp(Math.log(v.oiUsd), Math.log(next.oiUsd))) : 0
    }
  }

  /**
   * The bar still forming of `assetId` on `venue` as of `atMs` (live venues' forming bar: the latest 15-minute
   * slot, open at the latest close, closing at the listing's price then, high and low over its path so far sampled
   * every `FORMING_SAMPLE_MS`, volume pro rata), values rounded as the stored bars'. Undefined when the listing
   * is not simulated, the asset has no step yet or is being generated, or `atMs` is before the slot.
   */
  formingBar(
    assetId: string,
    venue: string,
    atMs: number
  ): { t: number; open: number; high: number; low: number; close: number; volume: number } | undefined {
    const i = this.indexOf(assetId)
    if (i < 0) return undefined
    const listings = this.listingsByAsset[i] as ReadonlyArray<VenueSim>
    const j = listings.findIndex((v) => v.listing.venue === venue)
    const p = this.previewOf(i)
    const next = p?.listings[j]
    const v = listings[j]
    if (p === undefined || next === undefined || v === undefined) return undefined
    const openMs = this.openOf(p.step)
    if (atMs < openMs) return undefined
    const endMs = Math.min(atMs, openMs + BAR_MS)
    const open = v.lastClose
    let high = open
    let low = open
    let close = open
    for (let t = openMs + FORMING_SAMPLE_MS; ; t += FORMING_SAMPLE_MS) {
      const at = Math.min(t, endMs)
      if (at > openMs) {
        close = this.momentOf(i, j, at).mark
        high = Math.max(high, close)
        low = Math.min(low, close)
      }
      if (t >= endMs) break
    }
    return {
      t: openMs,
      open: f32(open),
      high: f32(high),
      low: f32(low),
      close: f32(close),
      volume: f32((next.volume * (endMs - openMs)) / BAR_MS)
    }
  }

  /**
   * Books of every listing (of `venue`, of `assetId`, when given) at `nowMs`: 20 levels around the listing's
   * moment (`momentOf`), so a book and the streamed top of book of the same instant agree.
   */
  books(nowMs: number, venue?: string, assetId?: string): Array<BookSnapshot> {
    const out: Array<BookSnapshot> = []
    this.assets.forEach((a, i) => {
      if (assetId !== undefined && a.asset.id !== assetId) return
      ;(this.listingsByAsset[i] as ReadonlyArray<VenueSim>).forEach((v, j) => {
        if (venue !== undefined && v.listing.venue !== venue) return
        out.push(bookOf(a.asset.id, v.listing.venue, nowMs, this.momentOf(i, j, nowMs)))
      })
    })
    return out
  }

  /**
   * Streams the market at `nowMs` (`QuoteBoard`'s ingest calls): each listing's top of book (of the book `books`
   * would give), and each perpetual's ticker (mark, index, funding, open interest), for the assets `include`
   * selects (default: all) that are generated up to the market's latest step (during a progressive backfill, the
   * assets done so far).
   */
  streamQuotes(
    nowMs: number,
    emit: (assetId: string, venue: string, quote: StreamedQuote, ticker: StreamedTicker | undefined) => void,
    include?: (assetIndex: number) => boolean
  ): void {
    this.assets.forEach((a, i) => {
      // An asset still being generated (or not yet stepped) has no moment to stream.
      if ((include !== undefined && !include(i)) || this.previewOf(i) === undefined) return
      ;(this.listingsByAsset[i] as ReadonlyArray<VenueSim>).forEach((v, j) => {
        const m = this.momentOf(i, j, nowMs)
        if (!(m.mid > 0)) return
        let ticker: StreamedTicker | undefined
        if (v.perp) {
          const f = v.fundingState(nowMs)
          ticker = {
            t: nowMs,
            mark: m.mark,
            index: m.index,
            fundingRate: f.currentRate,
            predictedRate: f.predictedRate,
            nextFundingMs: f.nextFundingMs,
            intervalMs: f.intervalMs,
            oiUsd: m.oiUsd
          }
        }
        emit(a.asset.id, v.listing.venue, topOf(nowMs, m), ticker)
      })
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
