/**
 * `liquidity`: spread and bid/ask imbalance against their baselines, and the summed book depth of every venue
 * within each band of `DepthBandsPct`.
 */
import { Effect } from "effect"
import type { PlaneForAsset } from "../../Planes.ts"
import { bookDepth } from "../Market.ts"
import { DepthBandsPct } from "../Measures.ts"
import { perAsset } from "./Operation.ts"
import { iso, roundValue } from "./Result.ts"
import { type PlaneState, w } from "./State.ts"

/** `liquidity` over a plane's state. */
export const makeLiquidity = (st: PlaneState): PlaneForAsset => {
  const { store } = st
  const liquidity = perAsset(st, "liquidity", ({ asset, state, gaps }) =>
    Effect.gen(function* () {
      const books = yield* store.books(asset.id)
      const bands = DepthBandsPct.map((pct) => {
        let bid = 0
        let ask = 0
        let any = false
        for (const b of books) {
          const d = bookDepth(b, pct)
          if (d === undefined) continue
          bid += d.bidUsd
          ask += d.askUsd
          any = true
        }
        return any ? { within_pct: pct, bid_usd: roundValue(bid), ask_usd: roundValue(ask) } : undefined
      })
      const present = bands.filter((b) => b !== undefined)
      // The depth behind a streamed top of book is polled on a slower cadence: its age is the oldest read's.
      const depthAsOf = books.length === 0 ? undefined : Math.min(...books.map((b) => b.depthMs ?? b.t))
      return {
        spread_pct: gaps.contextual("spread_pct", state.current.spread_pct, w(state, "spread_pct")),
        bid_ask_imbalance: gaps.contextual(
          "bid_ask_imbalance",
          state.current.bid_ask_imbalance,
          w(state, "bid_ask_imbalance")
        ),
        depth:
          present.length === 0
            ? gaps.add("depth", "no_data", "no order book")
            : {
                venues: books.length,
                as_of: iso(depthAsOf as number),
                bands: present,
                total_1pct_usd: gaps.contextual(
                  "depth.total_1pct_usd",
                  state.current.depth_1pct_usd,
                  w(state, "depth_1pct_usd")
                )
              }
      }
    })
  )
  return liquidity
}
