/** OKX's instrument lists (perpetual and spot) as directory listings: the shapes `../../Listings.ts` describes. */
import { Decimal } from "decimal.js"
import { each, linear, type ParsedListings, spotPair, text } from "../../ListingParse.ts"
import { arr, Malformed, obj } from "../../Parse.ts"

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
