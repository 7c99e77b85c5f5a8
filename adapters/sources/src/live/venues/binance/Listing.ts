/** Binance's instrument lists (perpetual and spot) as directory listings: the shapes `../../Listings.ts` describes. */
import { each, linear, type ParsedListings, spotPair, strings, text } from "../../ListingParse.ts"
import { arr, obj } from "../../Parse.ts"

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
