/** Hyperliquid's instrument lists (perpetual and spot) as directory listings: the shapes `../../Listings.ts` describes. */
import { each, linear, type ParsedListings, spotPair, text } from "../../ListingParse.ts"
import { arr, type Json, obj } from "../../Parse.ts"

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
