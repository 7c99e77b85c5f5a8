/**
 * The crypto asset registry: every crypto asset the service knows, with its canonical ID (`crypto:<slug>`),
 * symbol, name, networks, coverage tier, circulating supply, and where it trades (venue, market, the venue's
 * own symbol, and for perpetuals the funding interval). Coverage tiers decide which operations an asset gets
 * (`TierOperations` in `Planes.ts`): `core` assets are perpetuals on several venues; `listed_token`s are
 * spot-listed; `contract_token`s are on-chain tokens priced from DEX liquidity; `prices_only` has a price and
 * nothing else; `discovery_only` is known to `resolve` and `coverage` only.
 *
 * Supplies are approximate circulating supplies (late 2025, in base units), used for market capitalisation.
 */
import type { DirectoryEntry, Tier } from "../Planes.ts"
import { HOUR_MS } from "./Market.ts"

/** Venues the crypto plane reads (simulated by default; the live connectors reach the real ones). */
export interface CryptoVenue {
  readonly id: string
  readonly name: string
  /** The funding interval of its perpetuals unless a listing says otherwise (ms); undefined: no perpetuals. */
  readonly fundingIntervalMs: number | undefined
}

export const CryptoVenues: ReadonlyArray<CryptoVenue> = [
  { id: "binance", name: "Binance", fundingIntervalMs: 8 * HOUR_MS },
  { id: "bybit", name: "Bybit", fundingIntervalMs: 8 * HOUR_MS },
  { id: "okx", name: "OKX", fundingIntervalMs: 8 * HOUR_MS },
  { id: "hyperliquid", name: "Hyperliquid", fundingIntervalMs: 1 * HOUR_MS },
  /** On-chain DEX liquidity (AMM pools), quoted as a book by an aggregator. */
  { id: "dex", name: "On-chain DEX aggregate", fundingIntervalMs: undefined }
]

/** Perpetual venues (those with funding). */
export const PerpVenues: ReadonlyArray<string> = CryptoVenues.filter((v) => v.fundingIntervalMs !== undefined).map(
  (v) => v.id
)

/** Where an asset trades. */
export interface Listing {
  readonly venue: string
  readonly market: "perp" | "spot"
  /** The venue's own symbol (`BTCUSDT`, `BTC-USDT-SWAP`, `BTC`, `kPEPE`, a pool address for `dex`). */
  readonly symbol: string
  /** Perpetuals: the settlement interval (ms). */
  readonly fundingIntervalMs?: number
  /**
   * Base tokens one unit of the venue's price and quantity stands for (`1000PEPEUSDT`, `kPEPE`: 1000), where the
   * asset directory (`Directory.ts`) read it from the venue's list; undefined: from the symbol (`Venue.ts`).
   */
  readonly tokensPerUnit?: number
}

export interface CryptoAsset {
  /** Canonical ID, `crypto:<slug>`. */
  readonly id: string
  readonly symbol: string
  readonly name: string
  readonly tier: Extract<Tier, "core" | "listed_token" | "contract_token" | "prices_only" | "discovery_only">
  /** Networks the asset lives on (its own chain, or the chains its token contracts are on). */
  readonly networks: ReadonlyArray<string>
  /** Token contracts per network, for contract tokens. */
  readonly contracts: Readonly<Record<string, string>>
  /** Other names `resolve` matches. */
  readonly aliases: ReadonlyArray<string>
  /** Circulating supply in base units (market cap = price x supply); undefined when unknown. */
  readonly circulatingSupply: number | undefined
  /** Where it trades, primary venue first (the primary venue's price is the asset's headline price). */
  readonly listings: ReadonlyArray<Listing>
}

const venueFunding = (venue: string): number | undefined => CryptoVenues.find((v) => v.id === venue)?.fundingIntervalMs

/** Perpetual listings on the four perpetual venues with their standard symbols. */
const perps = (
  base: string,
  options: {
    readonly hyperliquid?: string | false
    readonly only?: ReadonlyArray<string>
    readonly fundingHours?: Readonly<Record<string, number>>
  } = {}
): ReadonlyArray<Listing> => {
  const symbols: Record<string, string | false> = {
    binance: `${base}USDT`,
    bybit: `${base}USDT`,
    okx: `${base}-USDT-SWAP`,
    hyperliquid: options.hyperliquid ?? base
  }
  return Object.entries(symbols)
    .filter(([venue, s]) => s !== false && (options.only === undefined || options.only.includes(venue)))
    .map(([venue, s]) => {
      const hours = options.fundingHours?.[venue]
      return {
        venue,
        market: "perp" as const,
        symbol: s as string,
        fundingIntervalMs: hours === undefined ? (venueFunding(venue) as number) : hours * HOUR_MS
      }
    })
}

const spot = (base: string, venues: ReadonlyArray<string>): ReadonlyArray<Listing> =>
  venues.map((venue) => ({
    venue,
    market: "spot" as const,
    symbol: venue === "okx" ? `${base}-USDT` : venue === "hyperliquid" ? `${base}/USDC` : `${base}USDT`
  }))

const core = (
  slug: string,
  symbol: string,
  name: string,
  networks: ReadonlyArray<string>,
  circulatingSupply: number,
  listings: ReadonlyArray<Listing>,
  aliases: ReadonlyArray<string> = []
): CryptoAsset => ({
  id: `crypto:${slug}`,
  symbol,
  name,
  tier: "core",
  networks,
  contracts: {},
  aliases,
  circulatingSupply,
  listings
})

/** Every crypto asset, core first. */
export const CryptoAssets: ReadonlyArray<CryptoAsset> = [
  core("bitcoin", "BTC", "Bitcoin", ["bitcoin"], 19_950_000, perps("BTC"), ["XBT"]),
  core("ethereum", "ETH", "Ethereum", ["ethereum"], 120_700_000, perps("ETH"), ["Ether"]),
  core("solana", "SOL", "Solana", ["solana"], 555_000_000, perps("SOL")),
  core("xrp", "XRP", "XRP", ["xrp-ledger"], 60_000_000_000, perps("XRP"), ["Ripple"]),
  core("bnb", "BNB", "BNB", ["bnb-smart-chain"], 138_000_000, perps("BNB"), ["Binance Coin"]),
  core("dogecoin", "DOGE", "Dogecoin", ["dogecoin"], 151_000_000_000, perps("DOGE")),
  core("cardano", "ADA", "Cardano", ["cardano"], 36_500_000_000, perps("ADA")),
  core("tron", "TRX", "TRON", ["tron"], 94_700_000_000, perps("TRX", { only: ["binance", "bybit", "okx"] })),
  core("avalanche", "AVAX", "Avalanche", ["avalanche"], 425_000_000, perps("AVAX")),
  core("chainlink", "LINK", "Chainlink", ["ethereum"], 678_000_000, perps("LINK")),
  core("polkadot", "DOT", "Polkadot", ["polkadot"], 1_630_000_000, perps("DOT")),
  core("litecoin", "LTC", "Litecoin", ["litecoin"], 76_400_000, perps("LTC")),
  core("bitcoin-cash", "BCH", "Bitcoin Cash", ["bitcoin-cash"], 19_950_000, perps("BCH")),
  core("near", "NEAR", "NEAR Protocol", ["near"], 1_280_000_000, perps("NEAR")),
  core("aptos", "APT", "Aptos", ["aptos"], 700_000_000, perps("APT")),
  core(
    "sui",
    "SUI",
    "Sui",
    ["sui"],
    3_600_000_000,
    // Binance settles SUI every 4 hours (as it does for many younger listings).
    perps("SUI", { fundingHours: { binance: 4 } })
  ),
  core("arbitrum", "ARB", "Arbitrum", ["arbitrum"], 5_400_000_000, perps("ARB")),
  core("optimism", "OP", "Optimism", ["optimism"], 1_800_000_000, perps("OP")),
  core("uniswap", "UNI", "Uniswap", ["ethereum"], 630_000_000, perps("UNI")),
  core("aave", "AAVE", "Aave", ["ethereum"], 15_200_000, perps("AAVE")),
  core("injective", "INJ", "Injective", ["injective"], 97_700_000, perps("INJ", { fundingHours: { bybit: 4 } })),
  core(
    "pepe",
    "PEPE",
    "Pepe",
    ["ethereum"],
    420_690_000_000_000,
    // Venues list PEPE per thousand tokens on some markets; the price served is per token.
    perps("PEPE", { hyperliquid: "kPEPE" }).map((l) =>
      l.venue === "binance" || l.venue === "bybit" ? { ...l, symbol: "1000PEPEUSDT" } : l
    )
  ),
  core("toncoin", "TON", "Toncoin", ["ton"], 2_560_000_000, perps("TON", { only: ["binance", "bybit", "okx"] }), [
    "The Open Network"
  ]),
  core("hyperliquid", "HYPE", "Hyperliquid", ["hyperliquid"], 336_000_000, perps("HYPE")),

  // Spot-listed tokens: price, technicals, structure, liquidity, series.
  ...(
    [
      ["compound", "COMP", "Compound", 9_600_000],
      ["curve-dao", "CRV", "Curve DAO", 1_400_000_000],
      ["lido-dao", "LDO", "Lido DAO", 895_000_000],
      ["the-graph", "GRT", "The Graph", 10_600_000_000],
      ["ethereum-name-service", "ENS", "Ethereum Name Service", 37_000_000]
    ] as const
  ).map(
    ([slug, symbol, name, supply]): CryptoAsset => ({
      id: `crypto:${slug}`,
      symbol,
      name,
      tier: "listed_token",
      networks: ["ethereum"],
      contracts: {},
      aliases: [],
      circulatingSupply: supply,
      listings: spot(symbol, ["binance", "okx"])
    })
  ),

  // On-chain tokens: price and series from DEX liquidity.
  {
    id: "crypto:mog-coin",
    symbol: "MOG",
    name: "Mog Coin",
    tier: "contract_token",
    networks: ["ethereum"],
    contracts: { ethereum: "0xaaee1a9723aadb7afa2810263653a34ba2c21c7a" },
    aliases: [],
    circulatingSupply: 390_000_000_000_000,
    listings: [{ venue: "dex", market: "spot", symbol: "MOG/WETH" }]
  },
  {
    id: "crypto:popcat",
    symbol: "POPCAT",
    name: "Popcat",
    tier: "contract_token",
    networks: ["solana"],
    contracts: { solana: "7GCihgDB8fe6KNjn2MYtkzZcRjQy3t9GHdC8uHYmW2hr" },
    aliases: [],
    circulatingSupply: 980_000_000,
    listings: [{ venue: "dex", market: "spot", symbol: "POPCAT/SOL" }]
  },
  {
    id: "crypto:aerodrome",
    symbol: "AERO",
    name: "Aerodrome Finance",
    tier: "contract_token",
    networks: ["base"],
    contracts: { base: "0x940181a94a35a4569e4529a3cdfb74e38fd98631" },
    aliases: [],
    circulatingSupply: 850_000_000,
    listings: [{ venue: "dex", market: "spot", symbol: "AERO/USDC" }]
  },
  {
    id: "crypto:wrapped-bitcoin",
    symbol: "WBTC",
    name: "Wrapped Bitcoin",
    tier: "contract_token",
    networks: ["ethereum", "solana"],
    contracts: {
      ethereum: "0x2260fac5e5542a773aa44fbcfedf7c193bc2c599",
      solana: "3NZ9JMVBmGAqocybic2c7LQCJScmgsAZ6vQqTDzcqmJh"
    },
    aliases: [],
    circulatingSupply: 130_000,
    listings: [{ venue: "dex", market: "spot", symbol: "WBTC/USDC" }]
  },

  {
    // Shares the symbol TON with Toncoin: `resolve` must warn rather than pick.
    id: "crypto:tokamak-network",
    symbol: "TON",
    name: "Tokamak Network",
    tier: "contract_token",
    networks: ["ethereum"],
    contracts: { ethereum: "0x2be5e8c109e2197d077d13a82daead6a9b3433c5" },
    aliases: [],
    circulatingSupply: 60_000_000,
    listings: [{ venue: "dex", market: "spot", symbol: "TON/WETH" }]
  },

  // A price feed and nothing else.
  {
    id: "crypto:monero",
    symbol: "XMR",
    name: "Monero",
    tier: "prices_only",
    networks: ["monero"],
    contracts: {},
    aliases: [],
    circulatingSupply: 18_450_000,
    listings: [{ venue: "okx", market: "spot", symbol: "XMR-USDT" }]
  },

  // Known to resolve and coverage only.
  {
    id: "crypto:pi-network",
    symbol: "PI",
    name: "Pi Network",
    tier: "discovery_only",
    networks: ["pi"],
    contracts: {},
    aliases: [],
    circulatingSupply: undefined,
    listings: []
  }
]

/** The registry asset with canonical ID `id`, or undefined (a scan of the registry: no table at module scope). */
export const cryptoAsset = (id: string): CryptoAsset | undefined => CryptoAssets.find((a) => a.id === id)

/** Assets whose symbol is `symbol` (case-insensitive). */
export const cryptoAssetsBySymbol = (symbol: string): ReadonlyArray<CryptoAsset> => {
  const s = symbol.toUpperCase()
  return CryptoAssets.filter((a) => a.symbol.toUpperCase() === s)
}

/** Assets that have market data (every tier but `discovery_only`). */
export const pricedAssets = (): ReadonlyArray<CryptoAsset> => CryptoAssets.filter((a) => a.listings.length > 0)

/** The perpetual listings of an asset. */
export const perpListings = (a: CryptoAsset): ReadonlyArray<Listing> => a.listings.filter((l) => l.market === "perp")

/** The asset as the plane directory lists it. */
export const directoryEntryOf = (a: CryptoAsset, alive: boolean): DirectoryEntry => ({
  asset_id: a.id,
  plane: "crypto",
  symbol: a.symbol,
  name: a.name,
  tier: a.tier,
  networks: a.networks,
  aliases: a.aliases,
  alive
})
