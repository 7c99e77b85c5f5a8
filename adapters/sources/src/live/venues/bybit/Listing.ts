/** Bybit's instrument lists (perpetual and spot) as directory listings: the shapes `../../Listings.ts` describes. */
import { each, linear, type ParsedListings, spotPair, text } from "../../ListingParse.ts"
import { arr, obj } from "../../Parse.ts"

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
