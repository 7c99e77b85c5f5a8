/**
 * `price`: the asset's price, its 24 h return and 7-day range position, bid and ask from the primary venue's
 * latest book, and the market cap where the circulating supply is known.
 */
import { Effect } from "effect"
import type { PlaneForAsset } from "../../Planes.ts"
import { BAR_MS, type BookSnapshot } from "../Market.ts"
import { perAsset } from "./Operation.ts"
import { roundValue } from "./Result.ts"
import { missingOf, type PlaneState, primaryVenue, w } from "./State.ts"

/**
 * A book older than this behind the newest bar's end (a forming bar's: now) is not quoted as the price: one
 * bar. Books arrive every few seconds, bars every minute (forming) or 15 minutes (closed), so a book within a bar
 * of the newest price is the newer observation or close to it.
 */
export const MaxBookLagMs = BAR_MS

/**
 * The quote of one book snapshot: best bid, best ask and their mid, all rounded alike (so the mid printed lies
 * between the bid and ask printed). Undefined when a side is empty or the book lags the newest bar by more than
 * `MaxBookLagMs`.
 */
export const quoteOf = (
  book: BookSnapshot | undefined,
  newestBarEndMs: number | undefined
): { readonly bid: number; readonly ask: number; readonly mid: number } | undefined => {
  const bid = book?.bids[0]?.[0]
  const ask = book?.asks[0]?.[0]
  if (book === undefined || bid === undefined || ask === undefined || !(bid > 0) || !(ask >= bid)) return undefined
  if (newestBarEndMs !== undefined && (book.confirmedMs ?? book.t) < newestBarEndMs - MaxBookLagMs) return undefined
  const b = roundValue(bid)
  const a = roundValue(ask)
  const mid = Math.min(a, Math.max(b, roundValue((bid + ask) / 2)))
  return { bid: b, ask: a, mid }
}

/** `price` over a plane's state. */
export const makePrice = (st: PlaneState): PlaneForAsset => {
  const { store } = st
  const price = perAsset(st, "price", ({ asset, state, gaps }) =>
    Effect.gen(function* () {
      const primary = primaryVenue(asset)
      const books = primary === undefined ? [] : yield* store.books(asset.id, primary)
      const book = books[0]
      // One moment: \`usd\`, \`bid_usd\` and \`ask_usd\` come from the primary venue's latest book (usd its mid), so
      // \`usd\` always lies inside the spread. Without a usable book (none, one side empty, or older than one
      // bars behind the newest bar) \`usd\` is the last 15-minute close and the quotes are named in \`unavailable\`.
      const quote = quoteOf(book, state.primaryNewestMs)
      const side = (name: "bid_usd" | "ask_usd", value: number | undefined): number | null => {
        if (value !== undefined) return value
        const bookMs = book === undefined ? undefined : (book.confirmedMs ?? book.t)
        if (bookMs !== undefined && bookMs < (state.primaryNewestMs ?? bookMs) - MaxBookLagMs) {
          return gaps.add(
            name,
            "source_stale",
            "the latest order book lags the newest price by more than one 15-minute bar"
          )
        }
        return gaps.add(name, "no_data")
      }
      const p = quote?.mid ?? state.current.price
      return {
        usd: gaps.plain("usd", p),
        return_24h_pct: gaps.contextual(
          "return_24h_pct",
          state.current.return_24h_pct,
          w(state, "return_24h_pct"),
          missingOf(state, "return_24h_pct")
        ),
        range_pos_7d_pct: gaps.contextual(
          "range_pos_7d_pct",
          state.current.range_pos_7d_pct,
          w(state, "range_pos_7d_pct"),
          missingOf(state, "range_pos_7d_pct")
        ),
        bid_usd: side("bid_usd", quote?.bid),
        ask_usd: side("ask_usd", quote?.ask),
        market: {
          market_cap_usd:
            asset.circulatingSupply === undefined
              ? gaps.add("market.market_cap_usd", "not_applicable", "circulating supply unknown")
              : gaps.plain("market.market_cap_usd", p * asset.circulatingSupply)
        }
      }
    })
  )
  return price
}
