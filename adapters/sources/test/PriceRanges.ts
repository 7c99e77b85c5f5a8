/**
 * Test support of the believable-prices suites (`SimulatedPriceRanges.test.ts` in `npm test`,
 * `SimulatedPriceRangesSeeds.test.ts` in `npm run test:e2e`): each listing's extremes over a simulated run, the range
 * each asset must stay in, and the whole-year check over every registry asset for one seed.
 */
import { BAR_MS, type CryptoAsset, DAY_MS, pricedAssets } from "@market-data/core"
import { expect } from "vitest"
import { AssetProfiles, makeSimulation, priceRangeOf, SIMULATED_HISTORY_DAYS } from "../src/simulated/crypto/index.ts"

export const NOW = Date.UTC(2026, 11, 6, 4, 0)
/** The default `MARKET_DATA_SEED`. */
export const DEFAULT_SEED = "20261123"
/** Other seeds: the bounds hold for any seed, not only the default one. */
export const OTHER_SEEDS = ["1", "7", "2026"]

/**
 * Lowest and highest price (bar lows, highs and closes) of each listing over a run of `days` up to `NOW`: the whole
 * span for each asset's primary listing, the dense window (the last 120 days) for the others.
 */
export const extremes = (options: {
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
export const rangeOf = (assetId: string, profiles = AssetProfiles): readonly [number, number] => {
  const p = profiles[assetId]
  if (p === undefined) throw new Error(`no profile for ${assetId}`)
  return p.peg === undefined ? priceRangeOf(p) : rangeOf(p.peg, profiles)
}

/** Every bar of every registry asset inside its late-2025 range over the simulated year, for `seed`. */
export const expectRegistryYearInRange = (seed: string): void => {
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
}
