/**
 * The crypto plane's universe: the assets it serves, indexed once per version so every request reads maps and
 * precomputed lists (by ID, the core tier, each asset's directory entry without `alive`), never a scan.
 *
 * - The simulated default serves the hand-written registry (`staticUniverse`, `Assets.ts`) as written.
 * - Live mode serves the asset directory (`universeOfDirectory`, `Directory.ts`): every asset the venues list,
 *   with the listings that trade now, its tier by `directoryTier` (a perpetual on two venues is `core`; the
 *   history its baselines need is applied per answer and by `rank`), and `alive` only while some listing trades.
 *   The registry's assets keep their names, networks and supplies (seed metadata). A new universe is built after
 *   each listing refresh (and each minute from the store, for instances that do not run the job); the plane
 *   reads whichever is current (`UniverseRef`).
 */

import type { DirectoryEntry } from "../Planes.ts"
import { type CryptoAsset, CryptoAssets, CryptoVenues, cryptoAsset, directoryEntryOf, type Listing } from "./Assets.ts"
import {
  type AssetDirectory,
  type DirectoryAsset,
  type DirectoryListing,
  directoryTier,
  toDirectoryEntry
} from "./Directory.ts"

export interface CryptoUniverse {
  /** Unique to every universe built (compared by identity): caches keyed by it never serve a previous universe. */
  readonly version: symbol
  /** Every asset, by ID. */
  readonly assets: ReadonlyArray<CryptoAsset>
  readonly byId: ReadonlyMap<string, CryptoAsset>
  /** The `core` tier, by ID (what `rank` scans). */
  readonly core: ReadonlyArray<CryptoAsset>
  /** Each asset's directory entry as of this universe, `alive` meaning "listed somewhere now". */
  readonly entries: ReadonlyMap<string, DirectoryEntry>
  /** The venues each asset of this universe is listed on, primary first (`listedVenues`), by asset object. */
  readonly venues: ReadonlyMap<CryptoAsset, ReadonlyArray<string>>
  /** Whether the universe is the asset directory (live mode), not the hand-written registry. */
  readonly fromDirectory: boolean
}

/** The plane's current universe; live mode replaces it after each listing refresh. */
export interface UniverseRef {
  readonly get: () => CryptoUniverse
  readonly set: (universe: CryptoUniverse) => void
}

export const makeUniverseRef = (initial: CryptoUniverse): UniverseRef => {
  let current = initial
  return {
    get: () => current,
    set: (u) => {
      current = u
    }
  }
}

/** The venues an asset is listed on, primary first (each once). */
export const listedVenues = (a: CryptoAsset): ReadonlyArray<string> => [...new Set(a.listings.map((l) => l.venue))]

const index = (
  assets: ReadonlyArray<CryptoAsset>,
  entries: ReadonlyMap<string, DirectoryEntry>,
  fromDirectory: boolean
): CryptoUniverse => ({
  version: Symbol("universe"),
  assets,
  byId: new Map(assets.map((a) => [a.id, a])),
  core: assets.filter((a) => a.tier === "core"),
  entries,
  venues: new Map(assets.map((a) => [a, listedVenues(a)])),
  fromDirectory
})

/** The hand-written registry as the universe (the simulated default). */
export const staticUniverse: CryptoUniverse = index(
  CryptoAssets,
  new Map(CryptoAssets.map((a) => [a.id, directoryEntryOf(a, true)])),
  false
)

/** A venue's place in the order a directory asset's listings are tried as its primary (after the registry's own). */
const venueOrder = (venue: string): number => {
  const i = CryptoVenues.findIndex((v) => v.id === venue)
  return i < 0 ? 99 : i
}
const QUOTE_ORDER: Readonly<Record<string, number>> = { USDT: 0, USDC: 1 }

/**
 * One listing per venue: a perpetual before spot (the feeds ingest perpetuals), then the registry's symbol there
 * if it still trades, USDT before USDC, no bundle before a bundle, then the shorter symbol. (The feed writes one
 * series per asset and venue, so two symbols of one asset on one venue would write over each other; the listing
 * job names the others `same_asset`.)
 */
const oneListingPerVenue = (
  trading: ReadonlyArray<DirectoryListing>,
  seed: CryptoAsset | undefined
): Array<DirectoryListing> => {
  const best = new Map<string, DirectoryListing>()
  const rankOf = (l: DirectoryListing) => [
    l.market === "perp" ? 0 : 1,
    seed?.listings.some((s) => s.venue === l.venue && s.symbol === l.symbol) === true ? 0 : 1,
    QUOTE_ORDER[l.quote] ?? 2,
    l.multiplier === 1 ? 0 : 1,
    l.symbol.length
  ]
  const better = (a: DirectoryListing, b: DirectoryListing) => {
    const ra = rankOf(a)
    const rb = rankOf(b)
    for (let i = 0; i < ra.length; i++) if (ra[i] !== rb[i]) return (ra[i] as number) < (rb[i] as number)
    return a.symbol < b.symbol
  }
  for (const l of trading) {
    const held = best.get(l.venue)
    if (held === undefined || better(l, held)) best.set(l.venue, l)
  }
  return [...best.values()]
}

/**
 * The asset a directory asset is served as: its trading listings, perpetuals first (the plane prices an asset from
 * its first listing, and live mode feeds perpetuals only, so a registry asset listed on-chain or spot that now
 * trades a perpetual is priced from it), the registry's order among them; seed metadata.
 */
export const assetOfDirectory = (
  d: DirectoryAsset
): { readonly asset: CryptoAsset; readonly entry: DirectoryEntry } => {
  const seed = cryptoAsset(d.id)
  const chosen = oneListingPerVenue(
    d.listings.filter((l) => l.status === "trading"),
    seed
  )
  const seedVenueRank = (venue: string) => {
    const i = seed?.listings.findIndex((l) => l.venue === venue) ?? -1
    return i < 0 ? Number.POSITIVE_INFINITY : i
  }
  chosen.sort(
    (a, b) =>
      (a.market === b.market ? 0 : a.market === "perp" ? -1 : 1) ||
      seedVenueRank(a.venue) - seedVenueRank(b.venue) ||
      venueOrder(a.venue) - venueOrder(b.venue)
  )
  const listings: Array<Listing> = chosen.map((l) => {
    const seedListing = seed?.listings.find((s) => s.venue === l.venue && s.symbol === l.symbol)
    const funding = seedListing?.fundingIntervalMs ?? CryptoVenues.find((v) => v.id === l.venue)?.fundingIntervalMs
    return {
      venue: l.venue,
      market: l.market,
      symbol: l.symbol,
      ...(l.market === "perp" && funding !== undefined ? { fundingIntervalMs: funding } : {}),
      tokensPerUnit: l.multiplier
    }
  })
  const tier = directoryTier(
    { listings: chosen },
    {
      // The rule's other half, history enough for the baselines, is applied where the history is read: until an
      // asset's baselines hold `MinBaselineN` samples its percentiles are `insufficient_history` and `rank`
      // excludes it under that reason. Its tier does not wait for it, so a new perpetual is served at once
      // (DECISIONS "Whole-market start-up and growth": usable with its quote, history behind it).
      historyReady: true,
      ...(seed === undefined ? {} : { seedTier: seed.tier })
    }
  ) as CryptoAsset["tier"]
  const asset: CryptoAsset = {
    id: d.id,
    symbol: d.symbol,
    name: d.name,
    tier,
    networks: seed?.networks ?? [],
    contracts: seed?.contracts ?? {},
    aliases: seed?.aliases ?? d.aliases,
    circulatingSupply: seed?.circulatingSupply,
    listings
  }
  const entry: DirectoryEntry = {
    ...toDirectoryEntry(d, tier),
    venues: [...new Set(listings.map((l) => l.venue))]
  }
  return { asset, entry }
}

/** How a universe built from a directory orders its assets and fills what the registry does not know. */
export interface UniverseOptions {
  /** Sort key of an asset (lower first; ties by ID); default: by ID. The simulated default: by market cap. */
  readonly order?: (assetId: string) => number
  /** Circulating supply of an asset the registry has none for (the simulated default's own). */
  readonly circulatingSupply?: (assetId: string) => number | undefined
  /**
   * The universe this one replaces: each asset (and directory entry) that did not change is its object, and an
   * unchanged directory gives `previous` itself. What answering remembers of an asset (its measures, baselines,
   * directory entry) is kept by those objects, so a listing refresh that changes nothing, as most do (every
   * 30 minutes), costs no recomputation, and one that adds a listing recomputes that asset's only.
   */
  readonly previous?: CryptoUniverse | undefined
}

/** Two values built by the same code, compared by content. */
const sameContent = (a: unknown, b: unknown): boolean => a === b || JSON.stringify(a) === JSON.stringify(b)

/** The asset directory as the universe (live mode, and the simulated default from its simulated venues). */
export const universeOfDirectory = (directory: AssetDirectory, options: UniverseOptions = {}): CryptoUniverse => {
  const assets: Array<CryptoAsset> = []
  const entries = new Map<string, DirectoryEntry>()
  for (const d of directory.assets) {
    const { asset, entry } = assetOfDirectory(d)
    const supply = asset.circulatingSupply ?? options.circulatingSupply?.(asset.id)
    assets.push(supply === asset.circulatingSupply ? asset : { ...asset, circulatingSupply: supply })
    entries.set(asset.id, entry)
  }
  const order = options.order
  if (order !== undefined) assets.sort((a, b) => order(a.id) - order(b.id) || (a.id < b.id ? -1 : 1))
  const previous = options.previous
  if (previous === undefined) return index(assets, entries, true)
  let unchanged = previous.fromDirectory && previous.assets.length === assets.length
  for (let i = 0; i < assets.length; i++) {
    const asset = assets[i] as CryptoAsset
    const before = previous.byId.get(asset.id)
    if (before !== undefined && sameContent(before, asset)) assets[i] = before
    if (assets[i] !== previous.assets[i]) unchanged = false
    const entry = entries.get(asset.id)
    const entryBefore = previous.entries.get(asset.id)
    if (entryBefore !== undefined && sameContent(entryBefore, entry)) entries.set(asset.id, entryBefore)
    else unchanged = false
  }
  return unchanged ? previous : index(assets, entries, true)
}
