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
import { DirectoryQuotes, type ObservedListing, type SkippedListing, splitMultiplier } from "@market-data/core"
import { Decimal } from "decimal.js"
import { arr, type Json, Malformed, obj } from "./Parse.ts"
import type { LiveVenue } from "./Venue.ts"

export interface ParsedListings {
  readonly listings: ReadonlyArray<ObservedListing>
  readonly skipped: ReadonlyArray<SkippedListing>
}

type Verdict = ObservedListing | Omit<SkippedListing, "venue" | "symbol">

const text = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined)

/** Reads each instrument; an instrument that is not an object or has no symbol is skipped as `unparsable`. */
const each = (
  venue: LiveVenue,
  rows: ReadonlyArray<unknown>,
  symbolOf: (row: Json) => string | undefined,
  read: (row: Json, symbol: string) => Verdict
): ParsedListings => {
  const listings: Array<ObservedListing> = []
  const skipped: Array<SkippedListing> = []
  rows.forEach((value, i) => {
    const row = typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : undefined
    const symbol = row === undefined ? undefined : symbolOf(row)
    if (row === undefined || symbol === undefined) {
      skipped.push({ venue, symbol: `#${i}`, reason: "unparsable", detail: "instrument without a symbol" })
      return
    }
    const v = read(row, symbol)
    if ("reason" in v) skipped.push({ venue, symbol, ...v })
    else listings.push(v)
  })
  return { listings, skipped }
}

const linear = (
  venue: LiveVenue,
  symbol: string,
  venueBase: string | undefined,
  quote: string | undefined,
  extra: { readonly contractSize?: string; readonly status?: ObservedListing["status"] } = {}
): Verdict => {
  if (quote === undefined || !DirectoryQuotes.includes(quote))
    return { reason: "unsupported_quote", detail: `margined in ${quote ?? "(none)"}, not USDT or USDC` }
  const split = venueBase === undefined ? undefined : splitMultiplier(venueBase)
  if (split === undefined)
    return { reason: "unparsable", detail: `base ${JSON.stringify(venueBase)} is not an ASCII ticker (A-Z, 0-9)` }
  return {
    venue,
    market: "perp",
    symbol,
    base: split.base,
    quote,
    multiplier: split.multiplier,
    ...(extra.contractSize === undefined ? {} : { contractSize: extra.contractSize }),
    status: extra.status ?? "trading"
  }
}

/** Binance USD-M `exchangeInfo`. */
export const parseBinanceListings = (body: unknown): ParsedListings =>
  each(
    "binance",
    arr(obj(body, "$").symbols, "$.symbols"),
    (s) => text(s.symbol),
    (s, symbol) => {
      const type = text(s.contractType)
      if (type === "TRADIFI_PERPETUAL") return { reason: "not_crypto", detail: `contractType ${type}` }
      if (type !== "PERPETUAL") return { reason: "not_perpetual", detail: `contractType ${type ?? "(none)"}` }
      const underlying = text(s.underlyingType)
      if (underlying === "INDEX") return { reason: "index", detail: "underlyingType INDEX" }
      if (underlying === "COMMODITY" || underlying === "EQUITY")
        return { reason: "not_crypto", detail: `underlyingType ${underlying}` }
      if (s.status !== "TRADING") return { reason: "not_trading", detail: `status ${text(s.status) ?? "(none)"}` }
      const quote = text(s.marginAsset) === text(s.quoteAsset) ? text(s.quoteAsset) : text(s.marginAsset)
      return linear("binance", symbol, text(s.baseAsset), quote)
    }
  )

/** Bybit v5 `instruments-info?category=linear`: the envelope, its list, or its rows keyed by symbol. */
export const parseBybitListings = (body: unknown): ParsedListings => {
  const root = obj(body, "$")
  const rows =
    root.result !== undefined
      ? arr(obj(root.result, "$.result").list, "$.result.list")
      : Array.isArray(body)
        ? (body as ReadonlyArray<unknown>)
        : Object.values(root)
  return each(
    "bybit",
    rows,
    (s) => text(s.symbol),
    (s, symbol) => {
      const type = text(s.contractType)
      if (type === "InversePerpetual") return { reason: "inverse", detail: `contractType ${type}` }
      if (type !== "LinearPerpetual") return { reason: "not_perpetual", detail: `contractType ${type ?? "(none)"}` }
      if (s.status !== "Trading") return { reason: "not_trading", detail: `status ${text(s.status) ?? "(none)"}` }
      return linear("bybit", symbol, text(s.baseCoin), text(s.settleCoin))
    }
  )
}

/** OKX v5 `public/instruments?instType=SWAP`: the envelope's `data`, or `instruments`. */
export const parseOkxListings = (body: unknown): ParsedListings => {
  const root = obj(body, "$")
  const rows = root.data !== undefined ? arr(root.data, "$.data") : arr(root.instruments, "$.instruments")
  return each(
    "okx",
    rows,
    (s) => text(s.instId),
    (s, symbol) => {
      if (s.instType !== undefined && s.instType !== "SWAP")
        return { reason: "not_perpetual", detail: `instType ${text(s.instType) ?? "(none)"}` }
      if (s.state !== "live") return { reason: "not_trading", detail: `state ${text(s.state) ?? "(none)"}` }
      const ctType = text(s.ctType)
      if (ctType === "inverse") return { reason: "inverse", detail: "ctType inverse" }
      if (ctType !== "linear") return { reason: "unparsable", detail: `ctType ${JSON.stringify(s.ctType)}` }
      const m = /^([A-Za-z0-9]+)-([A-Z0-9_]+)-SWAP$/.exec(symbol)
      if (m === null) return { reason: "unparsable", detail: "instId is not BASE-QUOTE-SWAP" }
      let contractSize: string
      try {
        const size = new Decimal(text(s.ctVal) ?? "NaN").times(new Decimal(text(s.ctMult) ?? "1"))
        if (!size.isFinite() || size.lte(0)) throw new Malformed("not positive")
        contractSize = size.toFixed()
      } catch {
        return { reason: "unparsable", detail: `ctVal ${JSON.stringify(s.ctVal)} x ctMult ${JSON.stringify(s.ctMult)}` }
      }
      return linear("okx", symbol, m[1], text(s.settleCcy), { contractSize })
    }
  )
}

/** Hyperliquid `metaAndAssetCtxs` (`[meta, contexts]`) or `meta`. */
export const parseHyperliquidListings = (body: unknown): ParsedListings => {
  const meta = Array.isArray(body) ? obj(body[0], "$[0]") : obj(body, "$")
  return each(
    "hyperliquid",
    arr(meta.universe, "$.universe"),
    (s) => text(s.name),
    (s, symbol) =>
      linear("hyperliquid", symbol, symbol, "USDC", { status: s.isDelisted === true ? "delisted" : "trading" })
  )
}

/** The parser of each venue's instrument list. */
export const ListingParsers: { readonly [V in LiveVenue]: (body: unknown) => ParsedListings } = {
  binance: parseBinanceListings,
  bybit: parseBybitListings,
  okx: parseOkxListings,
  hyperliquid: parseHyperliquidListings
}

// ---------------------------------------------------------------------------------------------------------
// Spot

/** Fiat currencies the venues trade as spot pairs against a stablecoin (`EURUSDT`): not crypto assets. */
export const FiatBases: ReadonlySet<string> = new Set([
  "AUD",
  "BRL",
  "CAD",
  "CHF",
  "EUR",
  "GBP",
  "IDR",
  "JPY",
  "MXN",
  "NGN",
  "PLN",
  "RUB",
  "TRY",
  "UAH",
  "USD",
  "ZAR",
  "ARS",
  "COP",
  "CZK",
  "RON"
])

const spotPair = (
  venue: LiveVenue,
  symbol: string,
  venueBase: string | undefined,
  quote: string | undefined
): Verdict => {
  if (quote === undefined || !DirectoryQuotes.includes(quote))
    return { reason: "unsupported_quote", detail: `quoted in ${quote ?? "(none)"}, not USDT or USDC` }
  if (venueBase !== undefined && FiatBases.has(venueBase))
    return { reason: "not_crypto", detail: `fiat currency ${venueBase}` }
  const split = venueBase === undefined ? undefined : splitMultiplier(venueBase)
  if (split === undefined)
    return { reason: "unparsable", detail: `base ${JSON.stringify(venueBase)} is not an ASCII ticker (A-Z, 0-9)` }
  return { venue, market: "spot", symbol, base: split.base, quote, multiplier: split.multiplier, status: "trading" }
}

const strings = (v: unknown): ReadonlyArray<string> =>
  Array.isArray(v) ? v.flatMap((x) => (typeof x === "string" ? [x] : Array.isArray(x) ? strings(x) : [])) : []

/** Binance spot `GET /api/v3/exchangeInfo`. */
export const parseBinanceSpotListings = (body: unknown): ParsedListings =>
  each(
    "binance",
    arr(obj(body, "$").symbols, "$.symbols"),
    (s) => text(s.symbol),
    (s, symbol) => {
      if ([...strings(s.permissions), ...strings(s.permissionSets)].includes("LEVERAGED"))
        return { reason: "leveraged_token", detail: "permissions LEVERAGED" }
      if (s.status !== "TRADING" || s.isSpotTradingAllowed === false)
        return {
          reason: "not_trading",
          detail: s.status !== "TRADING" ? `status ${text(s.status) ?? "(none)"}` : "isSpotTradingAllowed false"
        }
      return spotPair("binance", symbol, text(s.baseAsset), text(s.quoteAsset))
    }
  )

/** Bybit v5 `instruments-info?category=spot`. */
export const parseBybitSpotListings = (body: unknown): ParsedListings =>
  each(
    "bybit",
    arr(obj(obj(body, "$").result, "$.result").list, "$.result.list"),
    (s) => text(s.symbol),
    (s, symbol) => {
      if (s.status !== "Trading") return { reason: "not_trading", detail: `status ${text(s.status) ?? "(none)"}` }
      return spotPair("bybit", symbol, text(s.baseCoin), text(s.quoteCoin))
    }
  )

/** OKX v5 `public/instruments?instType=SPOT`: the envelope's `data`. */
export const parseOkxSpotListings = (body: unknown): ParsedListings =>
  each(
    "okx",
    arr(obj(body, "$").data, "$.data"),
    (s) => text(s.instId),
    (s, symbol) => {
      if (s.instType !== undefined && s.instType !== "SPOT")
        return { reason: "unparsable", detail: `instType ${text(s.instType) ?? "(none)"} in the spot list` }
      if (s.state !== "live") return { reason: "not_trading", detail: `state ${text(s.state) ?? "(none)"}` }
      const m = /^([A-Za-z0-9]+)-([A-Z0-9]+)$/.exec(symbol)
      if (m === null) return { reason: "unparsable", detail: "instId is not BASE-QUOTE" }
      return spotPair("okx", symbol, text(s.baseCcy) ?? m[1], text(s.quoteCcy) ?? m[2])
    }
  )

/** Hyperliquid `spotMeta` (or `spotMetaAndAssetCtxs`: `[spotMeta, contexts]`). */
export const parseHyperliquidSpotListings = (body: unknown): ParsedListings => {
  const meta = Array.isArray(body) ? obj(body[0], "$[0]") : obj(body, "$")
  const tokens = new Map<number, string>()
  arr(meta.tokens, "$.tokens").forEach((t, i) => {
    const o = typeof t === "object" && t !== null ? (t as Json) : {}
    const index = typeof o.index === "number" ? o.index : i
    const name = text(o.name)
    if (name !== undefined) tokens.set(index, name)
  })
  return each(
    "hyperliquid",
    arr(meta.universe, "$.universe"),
    (s) => text(s.name),
    (s, symbol) => {
      const pair = Array.isArray(s.tokens) ? (s.tokens as ReadonlyArray<unknown>) : []
      const base = typeof pair[0] === "number" ? tokens.get(pair[0]) : undefined
      const quote = typeof pair[1] === "number" ? tokens.get(pair[1]) : undefined
      if (base === undefined || quote === undefined)
        return { reason: "unparsable", detail: `tokens ${JSON.stringify(s.tokens)} not in the token list` }
      return spotPair("hyperliquid", symbol, base, quote)
    }
  )
}

/** The parser of each venue's spot list. */
export const SpotListingParsers: { readonly [V in LiveVenue]: (body: unknown) => ParsedListings } = {
  binance: parseBinanceSpotListings,
  bybit: parseBybitSpotListings,
  okx: parseOkxSpotListings,
  hyperliquid: parseHyperliquidSpotListings
}
