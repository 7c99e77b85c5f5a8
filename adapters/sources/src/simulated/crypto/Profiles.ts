/**
 * Parameters of the simulated market: per asset its starting price, volatility, co-movement with the
 * market, and the size of its derivatives market and order books; per venue its share of activity, how it
 * prices the perpetual basis, its book quality and its update cadence. Levels are rough late-2025 magnitudes:
 * plausible, not a record of any real day.
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

export const AssetProfiles: Readonly<Record<string, AssetProfile>> = {
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
