/**
 * The asset directory part of the `domains` docs section: the rules of `Directory.ts` (listings, multipliers,
 * renames, slugs, permanence, tiers), rendered from the same constants, so the text cannot drift from the code.
 */
import {
  CORE_MIN_PERP_VENUES,
  DirectoryQuotes,
  MultiplierPrefixes,
  MultiplierSuffixes,
  TickerRenames
} from "./Directory.ts"
import { WellKnownAssets } from "./WellKnownAssets.ts"

const code = (s: string) => `\`${s}\``

export const directoryDoc: string = [
  "### The asset directory",
  "",
  "In live mode the directory is the crypto universe: `coverage` (browse and by `id`, with `alive`), `resolve` and `rank` list what it holds, kept in the store and refreshed from the venues at start and then every hour (`MARKET_DATA_LIVE_LISTINGS_MINUTES`). The hand-written registry is its seed: names, supplies and networks of the assets it knows, and the whole directory before the first refresh (or with no network). A new listing is served at once: its asset appears in `coverage` and `resolve`, its quote follows within seconds from the venues' bulk endpoints, its history behind it (until its baselines are there its answers say so). A refresh that fails keeps the last good directory; each venue's `listings` source (in `coverage?id=...` `sources`, and in the source summary `sources` on the first page of a `coverage` browse) reports the failure, or on success names in `detail` every instrument it skipped, with the reason (all of them: that `detail` is not cut at 300 characters as other status texts are). With `MARKET_DATA_SIM_UNIVERSE=market` the simulated feed builds its universe the same way, from its simulated venues' listings (over 400 assets, over 200 `core`, with multiplier symbols, the `MATIC` rename and on-chain tokens sharing a ticker with a listed coin: `GMX`, `ICP`, `FIL`); the default, `registry`, serves only the hand-written registry's assets.",
  "",
  `**Listings.** The venues' own instrument lists (Binance USD-M ${code("exchangeInfo")}, Bybit v5 ${code("instruments-info")} linear, OKX v5 ${code("instruments")} SWAP, Hyperliquid ${code("meta")}) are read whole. Every linear perpetual margined in ${DirectoryQuotes.join(" or ")} becomes a listing of one canonical asset. Everything else is skipped and named with its reason: ${["inverse", "not_perpetual", "not_trading", "index", "not_crypto", "unsupported_quote", "unparsable"].map(code).join(", ")} (coin-margined contracts, quarterlies, settling and pre-open contracts, index contracts such as ${code("BTCDOMUSDT")}, commodity and equity contracts, other quotes, and symbols that are not an ASCII ticker). A listing Hyperliquid marks delisted stays known as delisted.`,
  "",
  `**Multipliers.** A venue symbol may quote a bundle of tokens: the prefixes ${MultiplierPrefixes.map(([p]) => code(p)).join(", ")}, Hyperliquid's ${code("k")} (1,000), and Bybit's suffixes ${MultiplierSuffixes.map(([s]) => code(s)).join(", ")} after a ticker that ends in a letter (${code("SHIB1000USDT")}). The bundle is split off: ${code("1000PEPEUSDT")}, ${code("kPEPE")} and ${code("PEPE-USDT-SWAP")} are one asset, as are ${code("1000SATSUSDT")} (Binance) and ${code("10000SATSUSDT")} (Bybit). Other digit-leading tickers stay whole (${["1INCH", "0G", "2Z", "4"].map(code).join(", ")}), as do tickers ending in digits (${code("LUNA2")}, ${code("BANANAS31")}). OKX prices per token; its contract size (${code("ctVal x ctMult")}) is kept as an exact decimal. Bundle symbols are aliases of their asset, so ${code("resolve")} finds them.`,
  "",
  `**Renamed tickers.** A listing under a former ticker is the same asset (the old ticker is an alias; old units convert): ${TickerRenames.map((r) => `${code(r.from)} to ${code(r.to)}${r.tokensPerOld === 1 ? "" : `, 1 ${r.from} = ${r.tokensPerOld.toLocaleString("en-US")} ${r.to}`} (source: ${r.source})`).join("; ")}.`,
  "",
  "**Canonical IDs are permanent.** A venue symbol, once it belongs to an asset, stays with it; an asset is never removed nor its ID given to another coin; an asset listed nowhere any more stays, with `alive: false`, and keeps its ID if it is listed again. A venue whose list could not be fetched keeps its listings as they were. A listing goes to the asset already holding that venue symbol; else to the asset with that ticker (or a former ticker of it; where several share the ticker, the one already listed on a venue); else to a new asset.",
  "",
  `**Slugs** (${code("crypto:<slug>")} of a new asset), first rule that applies: (1) the hand-written registry's ID for the ticker; (2) the rename table's coin ID; (3) the bundled well-known coins (${WellKnownAssets.length} CoinGecko coins in market-cap order, so a start with no network names them right): the most valuable one with the ticker; (4) the public coin list (CoinGecko ${code("coins/list")}, cached in the store): its ID when exactly one coin has the ticker; (5) fallback: the ticker in lower case (${code("crypto:trump")}) when no coin or several coins none of them well known carry it. A slug already taken, or for the fallback any coin list ID, is passed over for the next candidate, and at last gets ${code("-2")}, ${code("-3")}, ...`,
  "",
  `**Collisions.** Two different coins with one ticker are two assets (${code("TON")}: Toncoin and Tokamak Network); ${code("resolve")} then answers ${code("best: null")} with ${code("symbol_collision")} warnings instead of picking one.`,
  "",
  `**Tiers** (applied in live mode after each refresh). ${code("core")}: perpetuals trading on at least ${CORE_MIN_PERP_VENUES} venues, with history enough for the baselines; that history is applied where it is read, not by holding the tier back: a new perpetual is ${code("core")} at once and served, and until its baselines hold the minimum sample count above its percentiles are ${code("insufficient_history")} (with their sample count) and ${code("rank")} excludes it under that reason; ${code("listed_token")}: a perpetual or spot market on one venue; ${code("contract_token")}: on-chain pools only; ${code("discovery_only")}: listed nowhere now (${code("alive: false")}). An asset of the hand-written registry keeps the tier written there unless the rule makes it ${code("core")}. ${code("rank")} scans the whole ${code("core")} tier; its ${code("coverage")} block counts the assets scanned and why the others were excluded (${code("no_data")} before the first quote, ${code("source_stale")}, ${code("insufficient_history")}). ${code("alive")} is true while the asset is listed somewhere and its primary venue's bars are live. A venue listing two symbols of one asset (${code("BTCUSDT")} and ${code("BTCUSDC")}, or a plain and a bundle symbol) is fed from one: USDT before USDC, the plain symbol before a bundle.`
].join("\n")
