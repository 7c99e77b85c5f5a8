/**
 * The crypto asset directory: which canonical asset each venue listing belongs to, kept across listing
 * refreshes. Pure: the venue parsers (adapters/sources, `live/Listings.ts`) turn the venues' instrument lists into
 * `ObservedListing`s with `splitMultiplier`; `mergeDirectory` folds one refresh into the previous directory; the
 * store (`AssetDirectoryStore`) keeps the result; `directoryTier` decides each asset's coverage tier.
 *
 * Rules (documented for clients in the `domains` section, `DirectoryDoc.ts`):
 * - Multipliers: a venue symbol may quote a bundle of tokens (`1000PEPEUSDT`, `kPEPE`, `1000000MOGUSDT`,
 *   `1MBABYDOGEUSDT`, Bybit's suffix form `SHIB1000USDT`); the bundle is split off, so every form is one asset.
 *   A digit-leading ticker that is not one of those prefixes stays whole (`1INCH`, `0G`, `2Z`, `4`), as does a
 *   ticker ending in other digits (`LUNA2`, `BANANAS31`).
 * - Renamed tickers (`TickerRenames`): the old ticker is the same asset under its new ticker (an alias).
 * - Two symbols of one ticker trading on one venue in one market and quote (`1000000BOBUSDT`, `BOBUSDT`) are two
 *   coins: two assets.
 * - Canonical IDs are permanent: a venue symbol, once mapped, stays with its asset; an asset is never removed
 *   nor its ID reassigned; an asset listed nowhere any more stays with `alive: false`.
 * - Slugs (`slugFor`): see `SlugRule`.
 */
import type { DirectoryEntry, Tier } from "../Planes.ts"
import { type CryptoAsset, CryptoAssets, cryptoAsset } from "./Assets.ts"
import { WellKnownAssets } from "./WellKnownAssets.ts"

// ---------------------------------------------------------------------------------------------------------
// Listings

/** A listing as a venue's instrument list shows it now, already split into base ticker and multiplier. */
export interface ObservedListing {
  readonly venue: string
  readonly market: "perp" | "spot"
  /** The venue's own symbol (`1000PEPEUSDT`, `PEPE-USDT-SWAP`, `kPEPE`). */
  readonly symbol: string
  /** The asset's ticker, upper case, multiplier removed (`PEPE`). */
  readonly base: string
  /** The quote (and margin) currency (`USDT`, `USDC`). */
  readonly quote: string
  /** Base tokens one unit of the venue's price and quantity stands for (`1000PEPEUSDT`, `kPEPE`: 1000). */
  readonly multiplier: number
  /** Base tokens per contract where the venue counts contracts (OKX: `ctVal x ctMult`), as an exact decimal. */
  readonly contractSize?: string
  /** `delisted`: the venue still shows the instrument but no longer trades it (Hyperliquid `isDelisted`). */
  readonly status: ListingStatus
}

export type ListingStatus = "trading" | "delisted"

/** A listing as the directory keeps it: what was last observed, and when it was first and last seen trading. */
export interface DirectoryListing extends ObservedListing {
  readonly firstSeenMs: number
  /** The last refresh that saw it trading (`firstSeenMs` for one never seen trading). */
  readonly lastTradingMs: number
}

/**
 * An instrument a venue lists that the directory does not take, or (`same_asset`) a perpetual it takes that the
 * feeds do not ingest, with the reason; never dropped silently.
 */
export interface SkippedListing {
  readonly venue: string
  readonly symbol: string
  readonly reason: SkipReason
  readonly detail: string
}

export type SkipReason =
  /** Coin-margined: quantities and P&L in the base coin. */
  | "inverse"
  /** A dated contract (quarterly, delivering). */
  | "not_perpetual"
  /** Not trading now: settling, pending its start, pre-open. */
  | "not_trading"
  /** An index of several assets (`BTCDOMUSDT`, `DEFIUSDT`), not one asset. */
  | "index"
  /** A non-crypto underlying (a commodity, an equity, or a fiat currency traded as a spot pair: `EURUSDT`). */
  | "not_crypto"
  /** Margined and quoted in something other than USDT or USDC. */
  | "unsupported_quote"
  /** The symbol or a required field could not be read. */
  | "unparsable"
  /** A spot leveraged token (Binance `BTCUPUSDT`): a fund rebalancing a leveraged position, not the asset. */
  | "leveraged_token"
  /**
   * Taken, but another symbol of its asset on the venue feeds it (one series per asset and venue): `BTCUSDC`
   * beside `BTCUSDT`, a former ticker beside its new one (`MKRUSDT` beside `SKYUSDT`).
   */
  | "same_asset"

/** Quote currencies the directory takes: linear perpetuals margined in USDT or USDC. */
export const DirectoryQuotes: ReadonlyArray<string> = ["USDT", "USDC"]

// ---------------------------------------------------------------------------------------------------------
// Multipliers

/** Numeric bundle prefixes, longest first. Not `1`, `10` or `100`: too many real tickers start with them. */
export const MultiplierPrefixes: ReadonlyArray<readonly [prefix: string, tokens: number]> = [
  ["1000000", 1_000_000],
  ["100000", 100_000],
  ["10000", 10_000],
  ["1000", 1_000],
  ["1M", 1_000_000]
]

/** Bundle suffixes (Bybit `SHIB1000USDT`), only after a ticker that ends in a letter. */
export const MultiplierSuffixes: ReadonlyArray<readonly [suffix: string, tokens: number]> = [
  ["1000000", 1_000_000],
  ["10000", 10_000],
  ["1000", 1_000]
]

const TICKER = /^[A-Z0-9]+$/

/**
 * A venue's base (`1000PEPE`, `kPEPE`, `1MBABYDOGE`, `SHIB1000`, `1INCH`) as the asset's ticker and how many of
 * its tokens one venue unit stands for; undefined when it is not a ticker (empty, lower case, punctuation).
 * - `k` + an upper-case ticker (Hyperliquid): 1,000.
 * - a prefix of `MultiplierPrefixes` followed by a letter: that many (`1M` needs 3 more characters).
 * - a ticker ending in a letter, then a suffix of `MultiplierSuffixes`: that many.
 * - otherwise the base is the ticker (`1INCH`, `0G`, `2Z`, `4`, `LUNA2`, `BANANAS31`), multiplier 1.
 */
export const splitMultiplier = (
  venueBase: string
): { readonly base: string; readonly multiplier: number } | undefined => {
  const k = /^k([A-Z][A-Z0-9]*)$/.exec(venueBase)
  if (k !== null) return { base: k[1] as string, multiplier: 1_000 }
  if (!TICKER.test(venueBase)) return undefined
  for (const [prefix, tokens] of MultiplierPrefixes) {
    const rest = venueBase.slice(prefix.length)
    if (venueBase.startsWith(prefix) && /^[A-Z]/.test(rest) && (prefix !== "1M" || rest.length >= 3))
      return { base: rest, multiplier: tokens }
  }
  for (const [suffix, tokens] of MultiplierSuffixes) {
    const stem = venueBase.slice(0, venueBase.length - suffix.length)
    if (venueBase.endsWith(suffix) && /^[A-Z][A-Z0-9]*[A-Z]$/.test(stem)) return { base: stem, multiplier: tokens }
  }
  return { base: venueBase, multiplier: 1 }
}

// ---------------------------------------------------------------------------------------------------------
// Renamed tickers

/**
 * Tickers a project renamed. A listing under the old ticker is the same asset as the new one (its old ticker
 * becomes an alias); `tokensPerOld` converts old units to new ones. Sources: each project's own migration
 * announcement, and CoinGecko's coin list (2025-08-24) for the new coin's ID.
 */
export const TickerRenames: ReadonlyArray<{
  readonly from: string
  readonly to: string
  readonly coingeckoId: string
  readonly name: string
  readonly tokensPerOld: number
  readonly source: string
}> = [
  {
    from: "MATIC",
    to: "POL",
    coingeckoId: "polygon-ecosystem-token",
    name: "POL (ex-MATIC)",
    tokensPerOld: 1,
    source: "Polygon Labs: MATIC to POL migration, 1:1, from 2024-09-04"
  },
  {
    from: "RNDR",
    to: "RENDER",
    coingeckoId: "render-token",
    name: "Render",
    tokensPerOld: 1,
    source: "Render Network: RNDR upgraded to RENDER 1:1 in 2024; the venues renamed the ticker"
  },
  {
    from: "FTM",
    to: "S",
    coingeckoId: "sonic-3",
    name: "Sonic",
    tokensPerOld: 1,
    source: "Sonic Labs: Fantom rebranded to Sonic, FTM to S 1:1, 2024-2025"
  },
  {
    from: "MKR",
    to: "SKY",
    coingeckoId: "sky",
    name: "Sky",
    tokensPerOld: 24_000,
    source: "Sky, formerly MakerDAO: MKR upgrades to SKY at 1:24,000, 2024"
  }
]

/** The current ticker of `ticker` and how many current tokens one of its units is. */
export const renamed = (ticker: string): { readonly ticker: string; readonly tokensPerOld: number } => {
  const r = TickerRenames.find((x) => x.from === ticker)
  return r === undefined ? { ticker, tokensPerOld: 1 } : { ticker: r.to, tokensPerOld: r.tokensPerOld }
}

// ---------------------------------------------------------------------------------------------------------
// Slugs

/** One coin of a public coin directory (CoinGecko `GET /api/v3/coins/list`). */
export interface CoinEntry {
  readonly id: string
  readonly symbol: string
  readonly name: string
}

/** A coin list indexed by ticker (upper case), each ticker's coins in list order. */
export interface CoinIndex {
  readonly bySymbol: ReadonlyMap<string, ReadonlyArray<CoinEntry>>
  readonly ids: ReadonlySet<string>
}

export const coinIndex = (coins: ReadonlyArray<CoinEntry>): CoinIndex => {
  const bySymbol = new Map<string, Array<CoinEntry>>()
  const ids = new Set<string>()
  for (const c of coins) {
    ids.add(c.id)
    const s = c.symbol.toUpperCase()
    const list = bySymbol.get(s)
    if (list === undefined) bySymbol.set(s, [c])
    else list.push(c)
  }
  return { bySymbol, ids }
}

/** The bundled well-known coins, highest market cap first. */
export const wellKnownCoins: ReadonlyArray<CoinEntry> = WellKnownAssets.map(([id, symbol, name]) => ({
  id,
  symbol,
  name
}))

export type SlugSource = "seed" | "rename_table" | "well_known" | "coin_list" | "fallback"

/**
 * How a new asset gets its slug, first rule that applies:
 * 1. `seed`: the hand-written registry (`Assets.ts`) names an asset with the ticker: its ID (those assets are in
 *    every directory from the start, so a listing finds them before a slug is ever needed).
 * 2. `rename_table`: the ticker is the new ticker of `TickerRenames`: the coin ID written there.
 * 3. `well_known`: the bundled well-known coins (`WellKnownAssets`) with the ticker: the most valuable one's ID.
 * 4. `coin_list`: exactly one coin of the coin list has the ticker: its ID.
 * 5. `fallback`: otherwise (no coin, or several coins none of them well known): the ticker in lower case.
 * A slug already taken by another asset, or (for the fallback) any coin list ID, is passed over: the next
 * candidate of the same rule, and at last the rule's slug with `-2`, `-3`, ... appended.
 */
export const SlugRule = [
  "seed registry",
  "rename table",
  "well-known coins by market cap",
  "the one coin of the list",
  "fallback: lower-case ticker"
] as const

export interface SlugChoice {
  readonly slug: string
  readonly name: string
  readonly coingeckoId?: string
  readonly source: SlugSource
}

const slugSafe = (ticker: string): string =>
  ticker
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "") || "asset"

/** The slug of a new asset with ticker `ticker` (upper case, renamed), by `SlugRule`. */
export const slugFor = (
  ticker: string,
  context: { readonly coins: CoinIndex; readonly taken: (slug: string) => boolean }
): SlugChoice => {
  const free = (slug: string) => !context.taken(slug)
  const rename = TickerRenames.find((r) => r.to === ticker && free(r.coingeckoId))
  if (rename !== undefined)
    return { slug: rename.coingeckoId, name: rename.name, coingeckoId: rename.coingeckoId, source: "rename_table" }
  const known = wellKnownCoins.find((c) => c.symbol.toUpperCase() === ticker && free(c.id))
  if (known !== undefined) return { slug: known.id, name: known.name, coingeckoId: known.id, source: "well_known" }
  const listed = context.coins.bySymbol.get(ticker) ?? []
  const only = listed[0]
  if (listed.length === 1 && only !== undefined && free(only.id))
    return { slug: only.id, name: only.name, coingeckoId: only.id, source: "coin_list" }
  const base = slugSafe(ticker)
  const usable = (s: string) => free(s) && !context.coins.ids.has(s)
  let slug = base
  for (let n = 2; !usable(slug); n++) slug = `${base}-${n}`
  return { slug, name: ticker, source: "fallback" }
}

// ---------------------------------------------------------------------------------------------------------
// The directory

export interface DirectoryAsset {
  /** Canonical ID `crypto:<slug>`: permanent. */
  readonly id: string
  /** Current ticker. */
  readonly symbol: string
  readonly name: string
  /** Former tickers (renames) and other tickers the asset was listed under. */
  readonly aliases: ReadonlyArray<string>
  readonly coingeckoId?: string
  readonly slugSource: SlugSource
  /** Every listing ever seen, by venue then symbol; delisted ones stay with `status: "delisted"`. */
  readonly listings: ReadonlyArray<DirectoryListing>
  /** Whether some listing trades now. */
  readonly alive: boolean
  readonly firstSeenMs: number
}

export interface AssetDirectory {
  /** By ID. */
  readonly assets: ReadonlyArray<DirectoryAsset>
  /** The last refresh merged in (0: seed only). */
  readonly updatedMs: number
}

/**
 * One venue's whole instrument list of the markets `markets` (default: both) from one refresh. A venue (or a
 * market of it) absent from a refresh keeps its listings as they were: a venue's perpetual and spot lists come
 * from two endpoints, and one failing leaves the other's listings untouched.
 */
export interface VenueSnapshot {
  readonly venue: string
  readonly markets?: ReadonlyArray<ObservedListing["market"]>
  readonly listings: ReadonlyArray<ObservedListing>
}

/**
 * The key of a listing: venue, market and the venue's symbol (Binance and Bybit name a perpetual and the spot
 * pair of one asset alike, `BTCUSDT`; they are two listings).
 */
export const listingKey = (l: Pick<ObservedListing, "venue" | "market" | "symbol">): string =>
  `${l.venue}\u0000${l.market}\u0000${l.symbol}`

export interface MergeResult {
  readonly directory: AssetDirectory
  /** Assets created by this refresh. */
  readonly added: ReadonlyArray<string>
  /** Assets that traded before and trade nowhere now. */
  readonly delisted: ReadonlyArray<string>
  /** Assets that traded nowhere before and trade again. */
  readonly relisted: ReadonlyArray<string>
}

const byVenueSymbol = (a: DirectoryListing, b: DirectoryListing) =>
  a.venue < b.venue
    ? -1
    : a.venue > b.venue
      ? 1
      : a.symbol < b.symbol
        ? -1
        : a.symbol > b.symbol
          ? 1
          : a.market < b.market
            ? -1
            : a.market > b.market
              ? 1
              : 0

const quoteOfSeed = (l: CryptoAsset["listings"][number]): string => {
  if (l.venue === "hyperliquid") return "USDC"
  const pair = /[-/]([A-Z]+)(?:-SWAP)?$/.exec(l.symbol)
  if (pair !== null) return pair[1] as string
  return DirectoryQuotes.find((q) => l.symbol.endsWith(q)) ?? "USDT"
}

const seedAsset = (a: CryptoAsset, nowMs: number): DirectoryAsset => {
  const listings = a.listings.map((l): DirectoryListing => {
    const quote = quoteOfSeed(l)
    const venueBase =
      l.venue === "hyperliquid"
        ? l.symbol.split("/")[0]
        : l.symbol.replace(/-SWAP$/, "").replace(new RegExp(`[-/]?${quote}$`), "")
    return {
      venue: l.venue,
      market: l.market,
      symbol: l.symbol,
      base: a.symbol,
      quote,
      multiplier: l.venue === "dex" ? 1 : (splitMultiplier(venueBase ?? "")?.multiplier ?? 1),
      status: "trading",
      firstSeenMs: nowMs,
      lastTradingMs: nowMs
    }
  })
  return {
    id: a.id,
    symbol: a.symbol,
    name: a.name,
    aliases: a.aliases,
    slugSource: "seed",
    listings: [...listings].sort(byVenueSymbol),
    alive: listings.length > 0,
    firstSeenMs: nowMs
  }
}

/** The directory before any refresh: the hand-written registry's assets with their listings. */
export const seedDirectory = (nowMs = 0): AssetDirectory => ({
  assets: CryptoAssets.map((a) => seedAsset(a, nowMs)).sort((x, y) => (x.id < y.id ? -1 : 1)),
  updatedMs: 0
})

const isCex = (venue: string) => venue !== "dex"

/**
 * Folds one refresh into the previous directory. For each venue in `snapshots`, its listings are replaced by
 * what the venue shows now (one it no longer shows becomes `delisted`); venues absent keep theirs. Each listing
 * goes to: the asset already holding that venue symbol; else an asset whose ticker or alias is the listing's
 * ticker after renames (several: the one already listed on a venue, then seed before the other slug sources,
 * then by ID), unless that asset holds another symbol of the same base that the venue trades now in the same
 * market and quote (then the two are different coins); else a new asset named by `slugFor`. Seed assets missing
 * from `previous` are added first. No asset is removed and no ID changes meaning.
 */
export const mergeDirectory = (
  previous: AssetDirectory,
  snapshots: ReadonlyArray<VenueSnapshot>,
  context: { readonly coins: CoinIndex; readonly nowMs: number }
): MergeResult => {
  const { nowMs } = context
  const assets = new Map<string, DirectoryAsset>(previous.assets.map((a) => [a.id, a]))
  for (const s of CryptoAssets) if (!assets.has(s.id)) assets.set(s.id, seedAsset(s, nowMs))
  const wasAlive = new Map([...assets.values()].map((a) => [a.id, a.alive]))
  const isNew = new Set<string>()

  const holder = new Map<string, string>()
  const byTicker = new Map<string, Set<string>>()
  const indexTicker = (t: string, id: string) => {
    const set = byTicker.get(t) ?? new Set<string>()
    set.add(id)
    byTicker.set(t, set)
  }
  const index = (a: DirectoryAsset) => {
    for (const l of a.listings) holder.set(listingKey(l), a.id)
    indexTicker(a.symbol.toUpperCase(), a.id)
    for (const alias of a.aliases) indexTicker(alias.toUpperCase(), a.id)
  }
  for (const a of assets.values()) index(a)

  const SOURCE_RANK: { readonly [S in SlugSource]: number } = {
    seed: 0,
    rename_table: 1,
    well_known: 2,
    coin_list: 3,
    fallback: 4
  }
  const pick = (ticker: string, accept: (a: DirectoryAsset) => boolean): string | undefined => {
    const olds = TickerRenames.filter((r) => r.to === ticker).map((r) => r.from)
    const ids = new Set([ticker, ...olds].flatMap((t) => [...(byTicker.get(t) ?? [])]))
    const candidates = [...ids].map((id) => assets.get(id) as DirectoryAsset).filter(accept)
    candidates.sort((x, y) => {
      const cx = x.listings.some((l) => isCex(l.venue)) ? 0 : 1
      const cy = y.listings.some((l) => isCex(l.venue)) ? 0 : 1
      if (cx !== cy) return cx - cy
      const sx = SOURCE_RANK[x.slugSource]
      const sy = SOURCE_RANK[y.slugSource]
      if (sx !== sy) return sx - sy
      return x.id < y.id ? -1 : 1
    })
    return candidates[0]?.id
  }

  for (const snapshot of snapshots) {
    const covers = (market: ObservedListing["market"]) => snapshot.markets?.includes(market) ?? true
    const seen = new Map<string, ObservedListing>()
    for (const l of snapshot.listings) if (l.venue === snapshot.venue && covers(l.market)) seen.set(listingKey(l), l)
    for (const observed of seen.values()) {
      const { ticker, tokensPerOld } = renamed(observed.base)
      const key = listingKey(observed)
      // Another symbol of this base trading on the venue now, in this market and quote: a different coin.
      const otherCoin = (a: DirectoryAsset) =>
        observed.status === "trading" &&
        a.listings.some((l) => {
          const now = listingKey(l) === key ? undefined : seen.get(listingKey(l))
          return (
            now !== undefined &&
            now.status === "trading" &&
            now.market === observed.market &&
            now.base === observed.base &&
            now.quote === observed.quote
          )
        })
      let id = holder.get(key) ?? pick(ticker, (a) => !otherCoin(a))
      if (id === undefined) {
        const choice = slugFor(ticker, { coins: context.coins, taken: (slug) => assets.has(`crypto:${slug}`) })
        id = `crypto:${choice.slug}`
        const created: DirectoryAsset = {
          id,
          symbol: ticker,
          name: choice.name,
          aliases: [],
          ...(choice.coingeckoId === undefined ? {} : { coingeckoId: choice.coingeckoId }),
          slugSource: choice.source,
          listings: [],
          alive: false,
          firstSeenMs: nowMs
        }
        assets.set(id, created)
        isNew.add(id)
        index(created)
      }
      const asset = assets.get(id) as DirectoryAsset
      const listing: ObservedListing = { ...observed, multiplier: observed.multiplier * tokensPerOld }
      const old = asset.listings.find((l) => listingKey(l) === key)
      const trading = observed.status === "trading"
      const next: DirectoryListing = {
        ...listing,
        firstSeenMs: old?.firstSeenMs ?? nowMs,
        lastTradingMs: trading ? nowMs : (old?.lastTradingMs ?? nowMs)
      }
      const others = asset.listings.filter((l) => listingKey(l) !== key)
      const tickers = [observed.base, ticker].filter((t) => t !== asset.symbol && !asset.aliases.includes(t))
      // A trading listing under the new ticker of a rename moves an asset known by the old one to the new ticker
      // (the old one stays an alias).
      const symbol =
        trading && TickerRenames.some((r) => r.from === asset.symbol && r.to === ticker) ? ticker : asset.symbol
      const aliases = [...new Set([...asset.aliases, ...tickers, ...(symbol !== asset.symbol ? [asset.symbol] : [])])]
        .filter((t) => t !== symbol)
        .sort()
      const updated: DirectoryAsset = { ...asset, symbol, aliases, listings: [...others, next].sort(byVenueSymbol) }
      assets.set(id, updated)
      holder.set(key, id)
      indexTicker(ticker, id)
      indexTicker(observed.base, id)
    }
    // What the venue no longer shows (in the markets the snapshot covers) is delisted there.
    const gone = (l: DirectoryListing) => l.venue === snapshot.venue && covers(l.market) && !seen.has(listingKey(l))
    for (const [id, a] of assets) {
      if (!a.listings.some((l) => l.status === "trading" && gone(l))) continue
      assets.set(id, {
        ...a,
        listings: a.listings.map((l) => (gone(l) ? { ...l, status: "delisted" as const } : l))
      })
    }
  }

  const added: Array<string> = []
  const delisted: Array<string> = []
  const relisted: Array<string> = []
  const out: Array<DirectoryAsset> = []
  for (const a of assets.values()) {
    const alive = a.listings.some((l) => l.status === "trading")
    if (isNew.has(a.id)) added.push(a.id)
    else if (wasAlive.get(a.id) === true && !alive) delisted.push(a.id)
    else if (wasAlive.get(a.id) === false && alive) relisted.push(a.id)
    out.push(alive === a.alive ? a : { ...a, alive })
  }
  out.sort((x, y) => (x.id < y.id ? -1 : 1))
  return {
    directory: { assets: out, updatedMs: Math.max(previous.updatedMs, nowMs) },
    added: added.sort(),
    delisted: delisted.sort(),
    relisted: relisted.sort()
  }
}

// ---------------------------------------------------------------------------------------------------------
// Tiers

/** Perpetual venues an asset needs (trading now) to be `core`. */
export const CORE_MIN_PERP_VENUES = 2

/**
 * The tier of a directory asset:
 * - listed nowhere now: `discovery_only` (resolve and coverage find it, with `alive: false`);
 * - perpetuals trading on at least `CORE_MIN_PERP_VENUES` venues and history enough for its baselines
 *   (`historyReady`): `core`. The service's universes (`universeOfDirectory`) pass `historyReady: true` and apply
 *   the history half where the history is read (DirectoryDoc "Tiers"): a new perpetual is `core` and served at
 *   once, its percentiles `insufficient_history` and `rank` excluding it under that reason until its baselines
 *   hold `MinBaselineN` samples (core/test/crypto/ShortHistory.test.ts);
 * - otherwise a perpetual or a spot market on a venue: `listed_token`;
 * - otherwise only on-chain pools: `contract_token`.
 * An asset of the hand-written registry keeps the tier written there (`seedTier`) unless the rule makes it
 * `core`; a seed `core` asset must meet the rule like any other, and a seed `discovery_only` one that trades
 * takes the rule's tier (so its perpetuals are served).
 */
export const directoryTier = (
  asset: Pick<DirectoryAsset, "listings">,
  options: { readonly historyReady: boolean; readonly seedTier?: Tier }
): Tier => {
  const trading = asset.listings.filter((l) => l.status === "trading")
  const perpVenues = new Set(trading.filter((l) => l.market === "perp" && isCex(l.venue)).map((l) => l.venue)).size
  const derived: Tier =
    trading.length === 0
      ? "discovery_only"
      : perpVenues >= CORE_MIN_PERP_VENUES && options.historyReady
        ? "core"
        : trading.some((l) => isCex(l.venue))
          ? "listed_token"
          : "contract_token"
  const seed = options.seedTier
  if (seed === undefined || seed === "core" || seed === "discovery_only") return derived
  if (derived === "core" || derived === "discovery_only") return derived
  return seed
}

/**
 * The asset as the crypto plane lists it to `resolve` and `coverage`: networks from the hand-written registry
 * where it knows the asset; as aliases its former tickers and the venue symbols that quote a bundle of it
 * (`1000PEPEUSDT`, `kPEPE`), so `resolve` finds those under the asset; `alive` as listed somewhere now. Two assets with one
 * ticker stay two entries, so `resolve` answers `best: null` with `symbol_collision` warnings.
 */
export const toDirectoryEntry = (asset: DirectoryAsset, tier: Tier): DirectoryEntry => {
  const seed = cryptoAsset(asset.id)
  return {
    asset_id: asset.id,
    plane: "crypto",
    symbol: asset.symbol,
    name: asset.name,
    tier,
    networks: seed?.networks ?? [],
    aliases: [
      ...new Set([
        ...(seed?.aliases ?? []),
        ...asset.aliases,
        ...asset.listings.filter((l) => l.multiplier !== 1).map((l) => l.symbol)
      ])
    ],
    alive: asset.alive
  }
}

/** The ID's slug. */
export const slugOf = (assetId: string): string => assetId.replace(/^crypto:/, "")
