/**
 * A small deterministic crypto market written into a `MarketStore`: for each chosen asset and each of its
 * listed venues, `days` of 15-minute bars, mark/index, open interest, taker flow, book metrics, funding
 * settlements on the venue's own interval, liquidation events, plus the latest books, funding states and
 * source statuses. The raw columns are returned too, so tests can recompute every number independently.
 */
import { Effect } from "effect"
import type { CryptoAsset } from "../../../src/crypto/Assets.ts"
import {
  type AnySeriesInput,
  BAR_MS,
  type BookSnapshot,
  type Component,
  type FundingState,
  type MarketStore,
  type SourceStatus
} from "../../../src/crypto/Market.ts"
import { prng } from "./Fixture.ts"

export interface VenueColumns {
  readonly venue: string
  readonly t: Array<number>
  readonly open: Array<number>
  readonly high: Array<number>
  readonly low: Array<number>
  readonly close: Array<number>
  readonly volume: Array<number>
  readonly mark: Array<number>
  readonly index: Array<number>
  readonly oiUsd: Array<number>
  readonly buyUsd: Array<number>
  readonly sellUsd: Array<number>
  readonly spreadPct: Array<number>
  readonly bidDepthUsd: Array<number>
  readonly askDepthUsd: Array<number>
  readonly fundingT: Array<number>
  readonly fundingRate: Array<number>
  readonly fundingIntervalMs: number | undefined
  readonly liqT: Array<number>
  readonly liqLong: Array<number>
  readonly liqShort: Array<number>
}

export interface AssetFixture {
  readonly asset: CryptoAsset
  readonly venues: ReadonlyArray<VenueColumns>
  readonly book: BookSnapshot
}

/** Builds the fixture's columns: `days` of 15 m rows ending just before `endMs` (a multiple of 15 m). */
export const buildFixture = (
  assets: ReadonlyArray<CryptoAsset>,
  endMs: number,
  days: number,
  seed: number
): ReadonlyArray<AssetFixture> =>
  assets.map((asset, ai) => {
    const rnd = prng(seed * 1000 + ai)
    const n = (days * 86_400_000) / BAR_MS
    const start = endMs - n * BAR_MS
    // One price path per asset; venues differ by a small, persistent offset.
    const path: Array<number> = []
    let p = 100 * (ai + 1)
    let vol = 0.003
    for (let i = 0; i < n; i++) {
      vol = Math.min(0.02, Math.max(0.001, vol * (0.97 + 0.06 * rnd())))
      const drift = Math.sin(i / 700) * 0.0004
      p = p * (1 + drift + vol * (rnd() * 2 - 1))
      path.push(p)
    }
    const listed = [...new Set(asset.listings.map((l) => l.venue))]
    const venues = listed.map((venue, vi): VenueColumns => {
      const listing = asset.listings.find((l) => l.venue === venue)
      const interval = listing?.market === "perp" ? listing.fundingIntervalMs : undefined
      const c: VenueColumns = {
        venue,
        t: [],
        open: [],
        high: [],
        low: [],
        close: [],
        volume: [],
        mark: [],
        index: [],
        oiUsd: [],
        buyUsd: [],
        sellUsd: [],
        spreadPct: [],
        bidDepthUsd: [],
        askDepthUsd: [],
        fundingT: [],
        fundingRate: [],
        fundingIntervalMs: interval,
        liqT: [],
        liqLong: [],
        liqShort: []
      }
      const offset = 1 + (vi - 1) * 0.0004
      let oi = 1e8 * (ai + 1) * (1 + vi / 4)
      let prevClose = (path[0] as number) * offset
      for (let i = 0; i < n; i++) {
        const t = start + i * BAR_MS
        const close = (path[i] as number) * offset
        const open = prevClose
        const high = Math.max(open, close) * (1 + 0.002 * rnd())
        const low = Math.min(open, close) * (1 - 0.002 * rnd())
        prevClose = close
        const ret = close / open - 1
        c.t.push(t)
        c.open.push(open)
        c.high.push(high)
        c.low.push(low)
        c.close.push(close)
        c.volume.push(1000 * (1 + rnd()))
        const basis = 0.0005 * Math.sin(i / 300 + vi) + 0.0002 * (rnd() - 0.5)
        c.index.push(close / (1 + basis))
        c.mark.push(close)
        oi = oi * (1 + 0.002 * (rnd() - 0.5) + ret * 0.5)
        c.oiUsd.push(oi)
        const flow = 1e6 * (1 + rnd())
        const tilt = Math.max(-0.9, Math.min(0.9, ret * 50 + 0.2 * (rnd() - 0.5)))
        c.buyUsd.push(flow * (1 + tilt))
        c.sellUsd.push(flow * (1 - tilt))
        c.spreadPct.push(0.01 + 0.02 * rnd())
        c.bidDepthUsd.push(2e6 * (1 + rnd()))
        c.askDepthUsd.push(2e6 * (1 + rnd()))
        if (interval !== undefined && (t + BAR_MS) % interval === 0) {
          // Settles at the end of this bar, at a rate that follows the basis.
          c.fundingT.push(t + BAR_MS)
          c.fundingRate.push((basis * 0.2 + 0.00005 * (rnd() - 0.3)) * (interval / (8 * 3_600_000)))
        }
        if (Math.abs(ret) > 0.008 || rnd() < 0.05) {
          c.liqT.push(t + Math.floor(rnd() * BAR_MS))
          const size = 1e5 * (1 + 20 * Math.abs(ret) * 100) * rnd()
          c.liqLong.push(ret < 0 ? size : size * 0.1)
          c.liqShort.push(ret < 0 ? size * 0.1 : size)
        }
      }
      // Funding settles at the end of a bar; the data ends with the settlement due at `endMs`.
      while (c.fundingT.length > 0 && (c.fundingT[c.fundingT.length - 1] as number) > endMs) {
        c.fundingT.pop()
        c.fundingRate.pop()
      }
      return c
    })
    const last = (venues[0]?.close[venues[0].close.length - 1] ?? 100) as number
    const book: BookSnapshot = {
      assetId: asset.id,
      venue: venues[0]?.venue ?? "binance",
      t: endMs - 1,
      bids: [0.9999, 0.999, 0.997, 0.994, 0.985].map((f, i) => [last * f, 10 + i] as const),
      asks: [1.0001, 1.001, 1.003, 1.006, 1.015].map((f, i) => [last * f, 8 + i] as const)
    }
    return { asset, venues, book }
  })

const COMPONENTS: ReadonlyArray<Component> = [
  "bars",
  "markIndex",
  "openInterest",
  "takerFlow",
  "bookMetrics",
  "funding",
  "liquidations",
  "books",
  "fundingState"
]

/** Writes the fixture into `store` and marks every venue's components as delivered up to `endMs`. */
export const writeFixture = (
  store: MarketStore["Service"],
  fixture: ReadonlyArray<AssetFixture>,
  endMs: number
): Effect.Effect<void> =>
  Effect.gen(function* () {
    const batch: Array<AnySeriesInput> = []
    const books: Array<BookSnapshot> = []
    const fundingStates: Array<FundingState> = []
    const venues = new Map<string, number>()
    for (const { asset, venues: vs, book } of fixture) {
      books.push(book)
      for (const v of vs) {
        const base = { assetId: asset.id, venue: v.venue }
        batch.push({
          kind: "bars",
          ...base,
          t: v.t,
          open: v.open,
          high: v.high,
          low: v.low,
          close: v.close,
          volume: v.volume
        })
        batch.push({ kind: "markIndex", ...base, t: v.t, mark: v.mark, index: v.index })
        batch.push({ kind: "openInterest", ...base, t: v.t, oiUsd: v.oiUsd })
        batch.push({ kind: "takerFlow", ...base, t: v.t, buyUsd: v.buyUsd, sellUsd: v.sellUsd })
        batch.push({
          kind: "bookMetrics",
          ...base,
          t: v.t,
          mid: v.close,
          spreadPct: v.spreadPct,
          imbalance: v.bidDepthUsd.map(
            (b, i) => (b - (v.askDepthUsd[i] as number)) / (b + (v.askDepthUsd[i] as number))
          ),
          bidDepthUsd: v.bidDepthUsd,
          askDepthUsd: v.askDepthUsd
        })
        batch.push({ kind: "liquidations", ...base, t: v.liqT, longUsd: v.liqLong, shortUsd: v.liqShort })
        const interval = v.fundingIntervalMs
        if (interval !== undefined) {
          batch.push({
            kind: "funding",
            ...base,
            t: v.fundingT,
            rate: v.fundingRate,
            intervalMs: v.fundingT.map(() => interval)
          })
          const lastRate = v.fundingRate[v.fundingRate.length - 1] ?? 0
          fundingStates.push({
            ...base,
            t: endMs - 1,
            intervalMs: interval,
            nextFundingMs: Math.floor(endMs / interval) * interval + interval,
            currentRate: lastRate,
            predictedRate: lastRate * 1.1
          })
        }
        venues.set(v.venue, Math.max(venues.get(v.venue) ?? 0, interval ?? 0))
      }
    }
    yield* store.write(batch)
    yield* store.putBooks(books)
    yield* store.putFundingStates(fundingStates)
    const statuses: Array<SourceStatus> = []
    for (const [venue, interval] of venues) {
      for (const component of COMPONENTS) {
        const funding = component === "funding" && interval > 0
        statuses.push({
          source: "simulated",
          venue,
          component,
          newestMs: funding ? Math.floor(endMs / interval) * interval : endMs - 1,
          cadenceMs: funding ? interval : BAR_MS,
          checkedMs: endMs - 1,
          failing: false
        })
      }
    }
    yield* store.putStatus(statuses)
  })
