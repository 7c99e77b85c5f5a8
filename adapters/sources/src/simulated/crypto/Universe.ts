/**
 * The simulated default's crypto universe, at production scale and built the way live mode builds its own: the
 * simulated venues publish instrument lists (`simulatedVenueSnapshots`), which the real directory logic
 * (`mergeDirectory`, `splitMultiplier`, `slugFor`, `directoryTier`, `universeOfDirectory`) turns into assets. So
 * multiplier symbols (`1000XUSDT`, `kX`, `X1000000USDT`), renamed tickers (`MATICUSDT` under POL), slugs and
 * ticker collisions go through the same code path as in production.
 *
 * Seeded from (deterministic, no randomness but a hash of the ticker):
 * 1. the hand-written registry (`Assets.ts`): its assets with exactly their listings and profiles (`Profiles.ts`),
 *    so what the existing tests name (`crypto:bitcoin`, ...) is simulated as before;
 * 2. the bundled well-known coins (`WellKnownAssets.ts`), in their market-cap order, without stablecoins,
 *    wrapped and staked tokens, and tickers already taken;
 * 3. simulated small caps with made-up tickers (`SimulatedSmallCaps`), until the universe holds
 *    `SIMULATED_CEX_ASSETS` venue-listed assets;
 * 4. on-chain tokens that share a ticker with a venue-listed asset (`SimulatedHomonyms`): two coins, one ticker,
 *    two assets, so `resolve` answers `best: null` with `symbol_collision` (with the registry's TON: four).
 *
 * Listings by market-cap rank (after the registry): the top `CORE_RANKS` trade as perpetuals on Binance and Bybit,
 * the top 150 also on OKX, the top 120 also on Hyperliquid (so they are `core` by the tier rule); the rest trade a
 * perpetual on one venue and spot on another (`listed_token`), every fifth spot only. Market caps fall with rank
 * (below the registry's assets); each ticker's supply is drawn from its hash, price = market cap / supply.
 */
import {
  type AssetDirectory,
  type CoinEntry,
  type CryptoAsset,
  CryptoAssets,
  type CryptoUniverse,
  coinIndex,
  type DirectoryAsset,
  type DirectoryListing,
  DirectoryQuotes,
  mergeDirectory,
  type ObservedListing,
  renamed,
  seedDirectory,
  slugFor,
  splitMultiplier,
  universeOfDirectory,
  type VenueSnapshot,
  WellKnownAssets,
  wellKnownCoins
} from "@market-data/core"
import { type AssetProfile, AssetProfiles } from "./Profiles.ts"
import { hash32 } from "./Random.ts"

/** Venue-listed assets the simulated default holds (the registry's, the well-known coins', simulated small caps). */
export const SIMULATED_CEX_ASSETS = 420
/** Market-cap ranks (after the registry's assets) listed as perpetuals on at least two venues. */
export const CORE_RANKS = 210

const PERP_VENUES = ["binance", "bybit", "okx", "hyperliquid"] as const

/** Not simulated from the well-known list: stablecoins, wrapped, staked and gold tokens (they track something else). */
const TRACKER = /usd|dai$|eur|gold|tether|wrapped|staked|^w[a-z]+$|bridged|paxg|xaut|frax|-eth$|^weth$/i

/** Syllables of the simulated small caps' made-up tickers (upper case, letter-led, no multiplier look-alikes). */
const SYLLABLES = ["ZO", "RA", "KE", "VI", "NU", "TA", "LO", "QI", "XE", "MU", "DA", "FY", "GO", "PE", "SU", "WA"]

/** `count` made-up tickers, deterministic, none in `taken`. */
const smallCapTickers = (count: number, taken: ReadonlySet<string>): Array<string> => {
  const out: Array<string> = []
  for (let i = 0; out.length < count; i++) {
    const h = hash32(`simulated-small-cap|${i}`)
    const t = `${SYLLABLES[h & 15]}${SYLLABLES[(h >>> 4) & 15]}${(h >>> 8) % 3 === 0 ? "X" : ""}`
    if (!taken.has(t) && !out.includes(t) && splitMultiplier(t)?.multiplier === 1) out.push(t)
  }
  return out
}

/** On-chain tokens sharing a ticker with a venue-listed asset: `[ticker, name, network, pool]`. */
export const SimulatedHomonyms: ReadonlyArray<readonly [string, string, string, string]> = [
  ["GMX", "GMX Inu (Base meme, simulated)", "base", "GMX/WETH"],
  ["ICP", "Internet Cat Protocol (simulated)", "solana", "ICP/SOL"],
  ["FIL", "Filament (simulated)", "arbitrum", "FIL/USDC"]
]

interface Candidate {
  readonly ticker: string
  readonly name: string
  /** Market-cap rank among the simulated (non-registry) assets, 0 first. */
  readonly rank: number
  /** A coin of the bundled well-known list (not a made-up small cap). */
  readonly wellKnown: boolean
}

/** Market cap (USD) of the `rank`-th non-registry asset: below the registry's smallest core assets, falling. */
const marketCapOf = (rank: number): number => 3.3e11 * (rank + 12) ** -1.45

/**
 * A believable circulating supply from the ticker's hash: a well-known coin 100 million to 10 billion (prices of
 * cents to tens of dollars); a simulated small cap 10 million to 100 billion, one in eight a meme supply of a
 * trillion to a quadrillion (prices far below a cent, quoted in bundles: `1000XUSDT`, `kX`).
 */
const supplyOf = (ticker: string, wellKnown: boolean): number => {
  const u = hash32(`supply|${ticker}`) / 2 ** 32
  const exponent = wellKnown ? 8 + 2 * u : u < 0.125 ? 12 + 3 * (u / 0.125) : 7 + 4 * ((u - 0.125) / 0.875)
  return Number((10 ** exponent).toPrecision(3))
}

const perpSymbol = (venue: string, ticker: string, price: number): ObservedListing => {
  const bundle = price < 1e-5 ? 1_000_000 : price < 0.005 ? 1_000 : 1
  const venueBase =
    venue === "okx"
      ? ticker
      : venue === "hyperliquid"
        ? bundle === 1
          ? ticker
          : `k${ticker}`
        : bundle === 1
          ? ticker
          : venue === "bybit" && bundle === 1_000_000
            ? `${ticker}1000000`
            : `${bundle}${ticker}`
  const symbol = venue === "okx" ? `${ticker}-USDT-SWAP` : venue === "hyperliquid" ? venueBase : `${venueBase}USDT`
  const split = splitMultiplier(venueBase) ?? { base: ticker, multiplier: 1 }
  return {
    venue,
    market: "perp",
    symbol,
    base: split.base,
    quote: venue === "hyperliquid" ? "USDC" : "USDT",
    multiplier: split.multiplier,
    ...(venue === "okx" ? { contractSize: "1" } : {}),
    status: "trading"
  }
}

const spotListing = (venue: string, ticker: string): ObservedListing => ({
  venue,
  market: "spot",
  symbol: venue === "okx" ? `${ticker}-USDT` : venue === "hyperliquid" ? `${ticker}/USDC` : `${ticker}USDT`,
  base: ticker,
  quote: venue === "hyperliquid" ? "USDC" : "USDT",
  multiplier: 1,
  status: "trading"
})

/** The listings of the `rank`-th non-registry asset, by the rule in the module's comment. */
const listingsOf = (c: Candidate, price: number): Array<ObservedListing> => {
  if (c.rank < CORE_RANKS) {
    const venues = PERP_VENUES.filter(
      (v) => v === "binance" || v === "bybit" || (v === "okx" ? c.rank < 150 : c.rank < 120)
    )
    return venues.map((v) => perpSymbol(v, c.ticker, price))
  }
  const h = hash32(`venues|${c.ticker}`)
  const first = PERP_VENUES[h & 3] as string
  const second = PERP_VENUES[((h & 3) + 1 + ((h >>> 2) % 3)) & 3] as string
  if (c.rank % 5 === 0) return [spotListing(first, c.ticker), spotListing(second, c.ticker)]
  return [perpSymbol(first, c.ticker, price), spotListing(second, c.ticker)]
}

const volumeProfile = (
  marketCap: number,
  supply: number,
  rank: number,
  perp: boolean,
  ticker: string
): AssetProfile => {
  const h = hash32(`profile|${ticker}`) / 2 ** 32
  const volumeUsd = marketCap * (0.04 + 0.08 * h)
  return {
    priceUsd: marketCap / supply,
    annualVol: Math.min(1.6, 0.85 + rank / 600 + 0.3 * h),
    beta: 0.7 - Math.min(0.25, rank / 1600),
    oiUsd: perp ? volumeUsd * 0.6 : 0,
    volumeUsd,
    depthUsd: Math.max(20_000, volumeUsd / 400),
    spreadPct: Math.min(0.3, 0.004 + rank / 20_000)
  }
}

export interface SimulatedUniverse {
  readonly universe: CryptoUniverse
  /** The directory the universe is built from (the seed plus the simulated venues' listings). */
  readonly directory: AssetDirectory
  /** Each simulated asset's model parameters (the registry's own, and derived ones), by ID. */
  readonly profiles: Readonly<Record<string, AssetProfile>>
  /** The assets with market data, registry first then by market cap (the order a progressive start fills them). */
  readonly priced: ReadonlyArray<CryptoAsset>
}

/** Builds the simulated universe (pure, deterministic: the same every start). */
export const makeSimulatedUniverse = (): SimulatedUniverse => {
  const seed = seedDirectory(0)
  const taken = new Set<string>()
  for (const a of CryptoAssets) {
    taken.add(a.symbol.toUpperCase())
    for (const alias of a.aliases) taken.add(alias.toUpperCase())
  }
  const registryCex = CryptoAssets.filter((a) => a.listings.some((l) => l.venue !== "dex")).length
  const candidates: Array<Candidate> = []
  for (const [id, symbol, name] of WellKnownAssets) {
    const ticker = renamed(symbol.toUpperCase()).ticker
    if (TRACKER.test(id) || TRACKER.test(name) || DirectoryQuotes.includes(ticker)) continue
    if (taken.has(ticker) || taken.has(symbol.toUpperCase()) || splitMultiplier(ticker)?.base !== ticker) continue
    taken.add(ticker)
    candidates.push({ ticker: symbol.toUpperCase(), name, rank: candidates.length, wellKnown: true })
  }
  for (const ticker of smallCapTickers(Math.max(0, SIMULATED_CEX_ASSETS - registryCex - candidates.length), taken)) {
    candidates.push({
      ticker,
      name: `${ticker[0]}${ticker.slice(1).toLowerCase()} (simulated)`,
      rank: candidates.length,
      wellKnown: false
    })
  }

  // The venues' instrument lists: the registry's listings as written, then every candidate's.
  const byVenue = new Map<string, Array<ObservedListing>>()
  const add = (l: ObservedListing) => {
    const list = byVenue.get(l.venue) ?? []
    list.push(l)
    byVenue.set(l.venue, list)
  }
  for (const a of seed.assets) for (const l of a.listings) add(observed(l))
  const perpTickers = new Set<string>()
  for (const c of candidates) {
    const cap = marketCapOf(c.rank)
    const listings = listingsOf(c, cap / supplyOf(c.ticker, c.wellKnown))
    if (listings.some((l) => l.market === "perp")) perpTickers.add(c.ticker)
    for (const l of listings) add(l)
  }
  const cexSnapshots: Array<VenueSnapshot> = PERP_VENUES.map((venue) => ({ venue, listings: byVenue.get(venue) ?? [] }))
  const coins = coinIndex(wellKnownCoins)
  const cex = mergeDirectory(seed, cexSnapshots, { coins, nowMs: 0 }).directory

  // Two coins, one ticker: the on-chain homonyms are assets of their own, slugged by the same rule.
  const ids = new Set(cex.assets.map((a) => a.id))
  const homonyms: Array<DirectoryAsset> = SimulatedHomonyms.map(([ticker, name, , pool]) => {
    const choice = slugFor(ticker, {
      coins: coinIndex([] as ReadonlyArray<CoinEntry>),
      taken: (s) => ids.has(`crypto:${s}`)
    })
    const id = `crypto:${choice.slug}`
    ids.add(id)
    const listing: DirectoryListing = {
      venue: "dex",
      market: "spot",
      symbol: pool,
      base: ticker,
      quote: pool.split("/")[1] as string,
      multiplier: 1,
      status: "trading",
      firstSeenMs: 0,
      lastTradingMs: 0
    }
    return {
      id,
      symbol: ticker,
      name,
      aliases: [],
      slugSource: choice.source,
      listings: [listing],
      alive: true,
      firstSeenMs: 0
    }
  })
  const withHomonyms: AssetDirectory = {
    assets: [...cex.assets, ...homonyms].sort((x, y) => (x.id < y.id ? -1 : 1)),
    updatedMs: cex.updatedMs
  }
  const dexSnapshot: VenueSnapshot = {
    venue: "dex",
    listings: withHomonyms.assets.flatMap((a) => a.listings.filter((l) => l.venue === "dex").map(observed))
  }
  const directory = mergeDirectory(withHomonyms, [dexSnapshot], { coins, nowMs: 0 }).directory

  // Profiles: the registry's as written; the others from their market-cap rank and ticker.
  const profiles: Record<string, AssetProfile> = { ...AssetProfiles }
  const rankOf = new Map<string, number>()
  const supplies = new Map<string, number>()
  const byTicker = new Map(candidates.map((c) => [renamed(c.ticker).ticker, c]))
  for (const a of directory.assets) {
    if (profiles[a.id] !== undefined || !a.alive) continue
    const homonym = SimulatedHomonyms.findIndex(([t]) => t === a.symbol && a.listings.every((l) => l.venue === "dex"))
    const c = homonym >= 0 ? undefined : byTicker.get(a.symbol)
    if (homonym < 0 && c === undefined) throw new Error(`simulated universe: no candidate for ${a.id}`)
    // An on-chain homonym: a small meme-sized token below every venue-listed asset.
    const ticker = c?.ticker ?? `${a.symbol}|dex`
    const rank = c?.rank ?? SIMULATED_CEX_ASSETS + homonym
    const cap = c === undefined ? 2e6 * (SimulatedHomonyms.length - homonym) : marketCapOf(c.rank)
    const supply = supplyOf(ticker, c?.wellKnown ?? false)
    profiles[a.id] = volumeProfile(cap, supply, rank, c !== undefined && perpTickers.has(c.ticker), ticker)
    rankOf.set(a.id, rank)
    supplies.set(a.id, supply)
  }
  const registryOrder = new Map(CryptoAssets.map((a, i) => [a.id, i]))
  const order = (id: string) => registryOrder.get(id) ?? 1_000 + (rankOf.get(id) ?? 10_000)
  const universe = universeOfDirectory(directory, { order, circulatingSupply: (id) => supplies.get(id) })
  return {
    universe,
    directory,
    profiles,
    priced: universe.assets.filter((a) => a.listings.length > 0)
  }
}

/** A directory listing as its venue shows it. */
const observed = (l: ObservedListing): ObservedListing => ({
  venue: l.venue,
  market: l.market,
  symbol: l.symbol,
  base: l.base,
  quote: l.quote,
  multiplier: l.multiplier,
  ...(l.contractSize === undefined ? {} : { contractSize: l.contractSize }),
  status: l.status
})
