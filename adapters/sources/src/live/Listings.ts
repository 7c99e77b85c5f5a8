/**
 * The venues' instrument lists as directory listings (`ObservedListing`, core `crypto/Directory.ts`): every linear
 * perpetual margined in USDT or USDC becomes a listing `{venue, symbol, base, quote, multiplier, status}`, with
 * the multiplier split off by the core's `splitMultiplier`. Every other instrument is returned under `skipped`
 * with its reason (inverse, dated, not trading, an index, a non-crypto underlying, another quote, unreadable), so
 * the listing job can name it in `sources`; nothing is dropped silently.
 *
 * A body whose shape is wrong as a whole (no instrument array) throws `Malformed` (a `format` SourceError through
 * `decode`); one unreadable instrument only skips that instrument.
 *
 * Shapes read:
 * - Binance USD-M `GET /fapi/v1/exchangeInfo`: `symbols[]` with `contractType` (`PERPETUAL`), `status` (`TRADING`),
 *   `underlyingType` (`INDEX` for `BTCDOMUSDT`-style index contracts; `COMMODITY`/`EQUITY` for TradFi contracts),
 *   `baseAsset` (`1000PEPE`), `quoteAsset`, `marginAsset`.
 * - Bybit v5 `GET /v5/market/instruments-info?category=linear`: `result.list[]` (or those rows keyed by symbol)
 *   with `contractType` (`LinearPerpetual`), `status` (`Trading`), `baseCoin` (`1000PEPE`, `SHIB1000`),
 *   `quoteCoin`, `settleCoin`.
 * - OKX v5 `GET /api/v5/public/instruments?instType=SWAP`: `data[]` (or `instruments[]`) with `instId`
 *   (`PEPE-USDT-SWAP`), `ctType` (`linear`/`inverse`), `settleCcy`, `state` (`live`), `ctVal` and `ctMult`: OKX
 *   quotes prices per token, its multiplier is only the contract size `ctVal x ctMult` (`contractSize`).
 * - Hyperliquid `POST /info {"type":"metaAndAssetCtxs"}` (or `{"type":"meta"}`): `universe[]` with `name`
 *   (`BTC`, `kPEPE`) and `isDelisted`; every perpetual is USDC-margined. A delisted one is kept as a listing with
 *   status `delisted` (Hyperliquid keeps it in its universe), so the directory knows it is gone.
 *
 * Spot markets (`SpotListingParsers`): every spot pair quoted in USDT or USDC becomes a listing with market
 * `spot`, its base split like a perpetual's (`1000SATSUSDT`); pairs in other quotes, fiat bases (`EURUSDT`),
 * leveraged tokens and pairs not trading are skipped with their reason.
 * - Binance spot `GET /api/v3/exchangeInfo` (api.binance.com; recorded 2021-10-12): `symbols[]` with `status`
 *   (`TRADING`, `BREAK`), `baseAsset`, `quoteAsset`, `isSpotTradingAllowed`, `permissions` (`LEVERAGED` for the
 *   `BTCUPUSDT` tokens; newer answers carry `permissionSets`, arrays of those).
 * - Bybit v5 `GET /v5/market/instruments-info?category=spot`: `result.list[]` with `symbol`, `baseCoin`,
 *   `quoteCoin`, `status` (`Trading`) (the documented shape; no recording).
 * - OKX v5 `GET /api/v5/public/instruments?instType=SPOT`: `data[]` with `instId` (`BTC-USDT`), `baseCcy`,
 *   `quoteCcy`, `state` (`live`) (the documented shape; no recording).
 * - Hyperliquid `POST /info {"type":"spotMeta"}`: `tokens[]` (`{name, index}`) and `universe[]` pairs
 *   (`{name, tokens: [base index, quote index], index}`; `name` is `PURR/USDC` or `@<index>`), the listing's
 *   symbol being the pair's `name` (the documented shape; no recording).
 */

import type { ParsedListings } from "./ListingParse.ts"
import type { LiveVenue } from "./Venue.ts"
import { parseBinanceListings, parseBinanceSpotListings } from "./venues/binance/Listing.ts"
import { parseBybitListings, parseBybitSpotListings } from "./venues/bybit/Listing.ts"
import { parseHyperliquidListings, parseHyperliquidSpotListings } from "./venues/hyperliquid/Listing.ts"
import { parseOkxListings, parseOkxSpotListings } from "./venues/okx/Listing.ts"

export { FiatBases, type ParsedListings } from "./ListingParse.ts"
export {
  parseBinanceListings,
  parseBinanceSpotListings,
  parseBybitListings,
  parseBybitSpotListings,
  parseHyperliquidListings,
  parseHyperliquidSpotListings,
  parseOkxListings,
  parseOkxSpotListings
}

/** The parser of each venue's instrument list. */
export const ListingParsers: { readonly [V in LiveVenue]: (body: unknown) => ParsedListings } = {
  binance: parseBinanceListings,
  bybit: parseBybitListings,
  okx: parseOkxListings,
  hyperliquid: parseHyperliquidListings
}

/** The parser of each venue's spot list. */
export const SpotListingParsers: { readonly [V in LiveVenue]: (body: unknown) => ParsedListings } = {
  binance: parseBinanceSpotListings,
  bybit: parseBybitSpotListings,
  okx: parseOkxSpotListings,
  hyperliquid: parseHyperliquidSpotListings
}
