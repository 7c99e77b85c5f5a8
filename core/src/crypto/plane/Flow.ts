/**
 * The flow family: `open_interest` (total and by venue, its 24 h change, the basis), `orderflow` (net taker
 * delta, the premium rate) and `liquidations` (24 h total, imbalance, intensity against open interest).
 */
import { Effect } from "effect"
import type { PlaneForAsset } from "../../Planes.ts"
import { perAsset } from "./Operation.ts"
import { type PlaneState, w } from "./State.ts"

/** `open_interest`, `orderflow` and `liquidations` over a plane's state. */
export const makeFlow = (
  st: PlaneState
): {
  readonly openInterest: PlaneForAsset
  readonly orderflow: PlaneForAsset
  readonly liquidations: PlaneForAsset
} => {
  const openInterest = perAsset(st, "open_interest", ({ state, gaps }) =>
    Effect.succeed({
      usd: gaps.plain("usd", state.current.oi_usd),
      change_24h_pct: gaps.contextual("change_24h_pct", state.current.oi_change_24h_pct, w(state, "oi_change_24h_pct")),
      basis_pct: gaps.contextual("basis_pct", state.current.basis_pct, w(state, "basis_pct")),
      by_venue: state.oiByVenue
    })
  )

  const orderflow = perAsset(st, "orderflow", ({ state, gaps }) =>
    Effect.succeed({
      net_taker_delta_24h_usd: gaps.contextual(
        "net_taker_delta_24h_usd",
        state.current.net_taker_delta_24h_usd,
        w(state, "net_taker_delta_24h_usd")
      ),
      net_delta_pct_of_oi_24h: gaps.contextual(
        "net_delta_pct_of_oi_24h",
        state.current.net_delta_pct_of_oi_24h,
        w(state, "net_delta_pct_of_oi_24h")
      ),
      exchange_premium_rate_pct: gaps.contextual(
        "exchange_premium_rate_pct",
        state.current.exchange_premium_rate_pct,
        w(state, "exchange_premium_rate_pct")
      )
    })
  )

  const liquidations = perAsset(st, "liquidations", ({ state, gaps }) =>
    Effect.succeed({
      total_24h_usd: gaps.contextual("total_24h_usd", state.current.liq_total_24h_usd, w(state, "liq_total_24h_usd")),
      liq_imbalance_24h: gaps.contextual(
        "liq_imbalance_24h",
        state.current.liq_imbalance_24h,
        w(state, "liq_imbalance_24h")
      ),
      intensity_pct_of_oi_24h: gaps.contextual(
        "intensity_pct_of_oi_24h",
        state.current.liq_intensity_pct_of_oi_24h,
        w(state, "liq_intensity_pct_of_oi_24h")
      )
    })
  )
  return { openInterest, orderflow, liquidations }
}
