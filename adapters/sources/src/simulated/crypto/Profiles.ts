/**
 * Parameters of the simulated market: per asset its starting price, volatility, co-movement with the
 * market, and the size of its derivatives market and order books; per venue its share of activity, how it
 * prices the perpetual basis, its book quality and its update cadence. Levels are rough late-2025 magnitudes:
 * plausible, not a record of any real day.
 *
 * Each asset's price stays inside a range over the whole simulated history (`priceRangeOf`): the registry's
 * assets have their late-2025 trading range (`LateRangesUsd`), the others a band of their volatility around their
 * starting price. The model pulls the price back toward its starting level and reflects it off the range's edges
 * (`Engine.ts`), so the simulated year never reads an ether at 19,000 USD.
 */
import { BAR_MS } from "@market-data/core"

export interface AssetProfile {
  /** Price at the start of the simulation (USD). */
  readonly priceUsd: number
  /** Long-run annualised volatility of log returns (0.6 = 60 %). */
  readonly annualVol: number
  /** Loading on the common market factor (0..1). */
  readonly beta: number
  /** Open interest across all perpetual venues at the start (USD); 0 for tokens. */
  readonly oiUsd: number
  /** Traded volume per day across all venues (USD). */
  readonly volumeUsd: number
  /** Book depth within 1 % of mid on each side, on a venue of share 1 (USD). */
  readonly depthUsd: number
  /** Typical quoted spread (percent of mid). */
  readonly spreadPct: number
  /** Tracks another asset's price (a wrapped token). */
  readonly peg?: string
  /**
   * The range its price stays in over the whole simulation (USD, low then high); absent: `priceRangeOf` derives
   * one from the starting price and the volatility.
   */
  readonly rangeUsd?: readonly [low: number, high: number]
}

const p = (
  priceUsd: number,
  annualVol: number,
  beta: number,
  oiUsd: number,
  volumeUsd: number,
  depthUsd: number,
  spreadPct: number
): AssetProfile => ({ priceUsd, annualVol, beta, oiUsd, volumeUsd, depthUsd, spreadPct })

const B = 1e9
const M = 1e6

const Profiles: Readonly<Record<string, AssetProfile>> = {
  "crypto:bitcoin": p(95_000, 0.5, 1, 30 * B, 40 * B, 60 * M, 0.0002),
  "crypto:ethereum": p(3_200, 0.65, 0.85, 16 * B, 20 * B, 30 * M, 0.0005),
  "crypto:solana": p(140, 0.8, 0.75, 5 * B, 5 * B, 10 * M, 0.001),
  "crypto:xrp": p(2.2, 0.8, 0.65, 3.5 * B, 3 * B, 8 * M, 0.002),
  "crypto:bnb": p(900, 0.55, 0.6, 1.2 * B, 1.5 * B, 4 * M, 0.002),
  "crypto:dogecoin": p(0.16, 0.95, 0.7, 1.8 * B, 2 * B, 5 * M, 0.003),
  "crypto:cardano": p(0.45, 0.85, 0.7, 0.8 * B, 0.8 * B, 2.5 * M, 0.004),
  "crypto:tron": p(0.28, 0.45, 0.4, 0.3 * B, 0.5 * B, 1.5 * M, 0.004),
  "crypto:avalanche": p(15, 0.9, 0.75, 0.5 * B, 0.5 * B, 1.5 * M, 0.005),
  "crypto:chainlink": p(13, 0.85, 0.75, 0.6 * B, 0.6 * B, 2 * M, 0.004),
  "crypto:polkadot": p(2.5, 0.85, 0.7, 0.3 * B, 0.3 * B, 1 * M, 0.006),
  "crypto:litecoin": p(90, 0.7, 0.65, 0.5 * B, 0.5 * B, 1.5 * M, 0.004),
  "crypto:bitcoin-cash": p(500, 0.75, 0.65, 0.5 * B, 0.4 * B, 1.2 * M, 0.005),
  "crypto:near": p(2.2, 0.95, 0.7, 0.3 * B, 0.3 * B, 1 * M, 0.006),
  "crypto:aptos": p(3, 1, 0.7, 0.25 * B, 0.25 * B, 0.8 * M, 0.007),
  "crypto:sui": p(1.7, 1.05, 0.7, 0.8 * B, 0.9 * B, 2 * M, 0.005),
  "crypto:arbitrum": p(0.22, 1, 0.7, 0.25 * B, 0.25 * B, 0.8 * M, 0.008),
  "crypto:optimism": p(0.35, 1, 0.7, 0.15 * B, 0.2 * B, 0.6 * M, 0.009),
  "crypto:uniswap": p(6, 0.95, 0.7, 0.3 * B, 0.3 * B, 1 * M, 0.006),
  "crypto:aave": p(180, 0.9, 0.7, 0.35 * B, 0.4 * B, 1 * M, 0.006),
  "crypto:injective": p(7, 1.05, 0.7, 0.12 * B, 0.15 * B, 0.5 * M, 0.01),
  "crypto:pepe": p(0.000_004_5, 1.3, 0.65, 0.6 * B, 0.8 * B, 1.5 * M, 0.006),
  "crypto:toncoin": p(1.6, 0.7, 0.5, 0.15 * B, 0.2 * B, 0.6 * M, 0.008),
  "crypto:hyperliquid": p(35, 1.1, 0.6, 1.5 * B, 0.8 * B, 2 * M, 0.004),
  "crypto:compound": p(30, 0.95, 0.65, 0, 0.04 * B, 0.3 * M, 0.02),
  "crypto:curve-dao": p(0.4, 1.05, 0.65, 0, 0.08 * B, 0.4 * M, 0.02),
  "crypto:lido-dao": p(0.7, 1, 0.65, 0, 0.06 * B, 0.3 * M, 0.02),
  "crypto:the-graph": p(0.05, 1, 0.65, 0, 0.03 * B, 0.2 * M, 0.025),
  "crypto:ethereum-name-service": p(11, 1, 0.65, 0, 0.04 * B, 0.2 * M, 0.025),
  "crypto:mog-coin": p(0.000_000_3, 1.5, 0.5, 0, 0.01 * B, 0.1 * M, 0.3),
  "crypto:popcat": p(0.12, 1.4, 0.5, 0, 0.02 * B, 0.15 * M, 0.2),
  "crypto:aerodrome": p(0.7, 1.2, 0.55, 0, 0.03 * B, 0.3 * M, 0.1),
  "crypto:tokamak-network": p(1.4, 1.1, 0.5, 0, 0.005 * B, 0.08 * M, 0.25),
  "crypto:wrapped-bitcoin": { ...p(95_000, 0.5, 1, 0, 0.2 * B, 2 * M, 0.03), peg: "crypto:bitcoin" },
  "crypto:monero": p(380, 0.6, 0.4, 0, 0.08 * B, 0.4 * M, 0.05)
}

/**
 * The registry's assets' price ranges (USD): roughly where each traded through 2024 and 2025 (public market data,
 * rounded outward), widened so a simulated year has room to trend; the starting price (`priceUsd`) sits inside.
 * The wrapped token follows what it tracks and needs none.
 */
export const LateRangesUsd: Readonly<Record<string, readonly [low: number, high: number]>> = {
  "crypto:bitcoin": [60_000, 150_000],
  "crypto:ethereum": [1_500, 8_000],
  "crypto:solana": [80, 400],
  "crypto:xrp": [1, 5],
  "crypto:bnb": [450, 1_800],
  "crypto:dogecoin": [0.07, 0.5],
  "crypto:cardano": [0.25, 1.3],
  "crypto:tron": [0.15, 0.5],
  "crypto:avalanche": [8, 60],
  "crypto:chainlink": [7, 35],
  "crypto:polkadot": [1.3, 10],
  "crypto:litecoin": [45, 180],
  "crypto:bitcoin-cash": [250, 900],
  "crypto:near": [1, 8],
  "crypto:aptos": [1.5, 15],
  "crypto:sui": [0.8, 6],
  "crypto:arbitrum": [0.1, 1.2],
  "crypto:optimism": [0.15, 2.5],
  "crypto:uniswap": [3, 20],
  "crypto:aave": [90, 450],
  "crypto:injective": [3.5, 35],
  "crypto:pepe": [0.000_002, 0.000_03],
  "crypto:toncoin": [0.8, 8],
  "crypto:hyperliquid": [12, 80],
  "crypto:compound": [15, 120],
  "crypto:curve-dao": [0.2, 1.5],
  "crypto:lido-dao": [0.35, 3],
  "crypto:the-graph": [0.025, 0.35],
  "crypto:ethereum-name-service": [5, 50],
  "crypto:mog-coin": [0.000_000_1, 0.000_003],
  "crypto:popcat": [0.05, 1.8],
  "crypto:aerodrome": [0.3, 2.5],
  "crypto:tokamak-network": [0.6, 4],
  "crypto:monero": [180, 700]
}

export const AssetProfiles: Readonly<Record<string, AssetProfile>> = Object.fromEntries(
  Object.entries(Profiles).map(([id, profile]) => {
    const range = LateRangesUsd[id]
    return [id, range === undefined ? profile : { ...profile, rangeUsd: range }]
  })
)

/** A derived range spans this many annual volatilities of log price either side of the starting price. */
const DERIVED_RANGE_VOLS = 1.2

/**
 * The price range (USD) an asset stays in over the whole simulation: its own (`rangeUsd`), else its starting price
 * times `exp(-1.2 x annualVol)` to `exp(+1.2 x annualVol)` (an ether-like 65 % volatility: x0.46 to x2.2).
 */
export const priceRangeOf = (profile: AssetProfile): readonly [low: number, high: number] =>
  profile.rangeUsd ?? [
    profile.priceUsd * Math.exp(-DERIVED_RANGE_VOLS * profile.annualVol),
    profile.priceUsd * Math.exp(DERIVED_RANGE_VOLS * profile.annualVol)
  ]

export interface VenueProfile {
  /** Share of an asset's open interest, volume and depth this venue holds (before renormalising). */
  readonly share: number
  /** How strongly its perpetual basis reacts to positioning, and its standing offset (fraction). */
  readonly basisMult: number
  readonly basisOffset: number
  /** Its standing spot-price offset from the consensus (fraction). */
  readonly priceOffset: number
  /** Spread multiplier (> 1: wider than the asset's typical spread). */
  readonly spreadMult: number
  /** Time between book and funding-state updates (ms). */
  readonly cadenceMs: number
}

export const VenueProfiles: Readonly<Record<string, VenueProfile>> = {
  binance: { share: 0.38, basisMult: 1, basisOffset: 0, priceOffset: 0, spreadMult: 1, cadenceMs: 30_000 },
  bybit: {
    share: 0.24,
    basisMult: 1.1,
    basisOffset: 0.00003,
    priceOffset: 0.00004,
    spreadMult: 1.2,
    cadenceMs: 30_000
  },
  okx: { share: 0.2, basisMult: 0.9, basisOffset: -0.00002, priceOffset: -0.00003, spreadMult: 1.3, cadenceMs: 60_000 },
  hyperliquid: {
    share: 0.18,
    basisMult: 1.5,
    basisOffset: 0.00006,
    priceOffset: 0.00008,
    spreadMult: 1.6,
    cadenceMs: 20_000
  },
  dex: { share: 1, basisMult: 0, basisOffset: 0, priceOffset: 0, spreadMult: 1, cadenceMs: 60_000 }
}

/** Every venue's cadence divides the bar interval, so book ticks and bar closes line up. */
export const checkCadences = (): boolean => Object.values(VenueProfiles).every((v) => BAR_MS % v.cadenceMs === 0)
