/**
 * Believable simulated prices: over the whole simulated year (and longer), for several seeds, every bar of every
 * listing of the registry's assets stays inside the asset's late-2025 range (`LateRangesUsd`: ether 1,500 to
 * 8,000 USD, bitcoin 60,000 to 150,000, solana 80 to 400), and the derived range holds for the other simulated
 * assets. (The model once drifted freely: the default seed read an ether at 19,127 USD.)
 */

import { BAR_MS, type CryptoAsset, cryptoAsset, DAY_MS, pricedAssets } from "@market-data/core"
import { describe, expect, it } from "vitest"
import {
  AssetProfiles,
  LateRangesUsd,
  makeSimulation,
  priceRangeOf,
  SIMULATED_HISTORY_DAYS
} from "../src/simulated/crypto/index.ts"
import { makeSimulatedUniverse } from "../src/simulated/crypto/Universe.ts"

const NOW = Date.UTC(2026, 11, 6, 4, 0)
/** The default `MARKET_DATA_SEED`, and a few others. */
const SEEDS = ["20261123", "1", "7", "2026"]

/**
 * Lowest and highest price (bar lows, highs and closes) of each listing over a run of `days` up to `NOW`: the whole
 * span for each asset's primary listing, the dense window (the last 120 days) for the others.
 */
const extremes = (options: {
  seed: string
  assets: ReadonlyArray<CryptoAsset>
  days: number
  profiles?: Parameters<typeof makeSimulation>[0]["profiles"]
}) => {
  const sim = makeSimulation({
    seed: options.seed,
    nowMs: NOW,
    assets: options.assets,
    historyDays: options.days,
    ...(options.profiles === undefined ? {} : { profiles: options.profiles })
  })
  const steps = Math.floor((NOW - sim.openOf(0)) / BAR_MS)
  const run = sim.startRun(steps)
  const out: Array<{
    assetId: string
    venue: string
    primary: boolean
    bars: number
    low: number
    high: number
    last: number
  }> = []
  sim.assetList.forEach((asset, i) => {
    for (const sink of sim.runAsset(run, i)) {
      const b = sink.bars
      let low = Number.POSITIVE_INFINITY
      let high = 0
      for (let k = 0; k < sink.barRows; k++) {
        low = Math.min(low, b.low[k] as number, b.close[k] as number)
        high = Math.max(high, b.high[k] as number, b.close[k] as number)
      }
      out.push({
        assetId: asset.id,
        venue: sink.venue,
        primary: sink.allBars,
        bars: sink.barRows,
        low,
        high,
        last: b.close[sink.barRows - 1] as number
      })
    }
  })
  sim.finishRun(run)
  return { steps, out }
}

/** The range an asset's bars must stay in: its own, or the one of the asset it tracks. */
const rangeOf = (assetId: string, profiles = AssetProfiles): readonly [number, number] => {
  const p = profiles[assetId]
  if (p === undefined) throw new Error(`no profile for ${assetId}`)
  return p.peg === undefined ? priceRangeOf(p) : rangeOf(p.peg, profiles)
}

describe("simulated prices stay believable", () => {
  it("names the late-2025 ranges of the best-known assets", () => {
    expect(LateRangesUsd["crypto:ethereum"]).toEqual([1_500, 8_000])
    expect(LateRangesUsd["crypto:bitcoin"]).toEqual([60_000, 150_000])
    expect(LateRangesUsd["crypto:solana"]).toEqual([80, 400])
    for (const a of pricedAssets()) {
      const p = AssetProfiles[a.id]
      if (p === undefined || p.peg !== undefined) continue
      const [low, high] = priceRangeOf(p)
      expect(LateRangesUsd[a.id], `${a.id} has a late-2025 range`).toBeDefined()
      expect(p.priceUsd, a.id).toBeGreaterThan(low)
      expect(p.priceUsd, a.id).toBeLessThan(high)
    }
  })

  it.each(SEEDS)(
    "keeps every bar of every registry asset inside its late-2025 range over the simulated year (seed %s)",
    (seed) => {
      const { steps, out } = extremes({ seed, assets: pricedAssets(), days: SIMULATED_HISTORY_DAYS })
      expect(steps * BAR_MS).toBeGreaterThanOrEqual(365 * DAY_MS)
      for (const x of out) {
        const [low, high] = rangeOf(x.assetId)
        const label = `${x.assetId} on ${x.venue}, seed ${seed}: ${x.low} to ${x.high} outside ${low} to ${high}`
        if (x.primary) expect(x.bars, label).toBeGreaterThanOrEqual(365 * 96)
        expect(x.low, label).toBeGreaterThanOrEqual(low)
        expect(x.high, label).toBeLessThanOrEqual(high)
      }
      const eth = out.find((x) => x.assetId === "crypto:ethereum")
      expect(eth?.last).toBeGreaterThan(1_500)
      expect(eth?.last).toBeLessThan(8_000)
    },
    30_000
  )

  it("keeps bitcoin, ether and solana in range over three simulated years too (no slow drift out)", () => {
    const { out } = extremes({
      seed: "20261123",
      assets: ["bitcoin", "ethereum", "solana"].map((s) => cryptoAsset(`crypto:${s}`) as CryptoAsset),
      days: 3 * 365
    })
    for (const x of out) {
      const [low, high] = rangeOf(x.assetId)
      expect(x.low, `${x.assetId} ${x.venue}`).toBeGreaterThanOrEqual(low)
      expect(x.high, `${x.assetId} ${x.venue}`).toBeLessThanOrEqual(high)
    }
  }, 30_000)

  it("keeps the market universe's other well-known coins inside their derived ranges (a sample, one seed)", () => {
    const { priced, profiles } = makeSimulatedUniverse()
    const registry = new Set(pricedAssets().map((a) => a.id))
    const others = priced.filter((a) => !registry.has(a.id))
    // Every eighth of the rest, the best-known first (the universe orders them by market cap).
    const sample = others.filter((_, i) => i % 8 === 0)
    expect(sample.length).toBeGreaterThanOrEqual(40)
    const { out } = extremes({ seed: "20261123", assets: sample, days: SIMULATED_HISTORY_DAYS, profiles })
    for (const x of out) {
      const [low, high] = rangeOf(x.assetId, profiles)
      expect(x.low, `${x.assetId} ${x.venue}`).toBeGreaterThanOrEqual(low)
      expect(x.high, `${x.assetId} ${x.venue}`).toBeLessThanOrEqual(high)
    }
  }, 30_000)
})
