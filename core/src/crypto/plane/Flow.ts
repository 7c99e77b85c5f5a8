/**
 * The flow family: `open_interest` (total and by venue, its 24 h change, the basis), `orderflow` (net taker
 * delta, the premium rate) and `liquidations` (24 h total, imbalance, intensity against open interest).
 *
 * Venue conventions (`../VenueConventions.ts`) travel with the figures: a `by_venue` row of a venue whose own
 * open interest counts both sides says so (`venue_counts: "both_sides"`; its `usd` is one side, like every
 * other row), and `liquidations` carries `lower_bound` (the figures concerned and each venue behind it, with its
 * reason) whenever a venue's part is partial or missing. Neither appears where it does not apply.
 */
import { Effect } from "effect"
import type { PlaneForAsset } from "../../Planes.ts"
import { perpListings } from "../Assets.ts"
import { countsBothSides, LowerBoundFigures, liquidationLowerBound } from "../VenueConventions.ts"
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
      by_venue: state.oiByVenue.map((r) =>
        countsBothSides(r.venue) ? { venue: r.venue, usd: r.usd, venue_counts: "both_sides" as const } : r
      )
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

  const liquidations = perAsset(st, "liquidations", ({ state, gaps }) => {
    const figures = {
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
    }
    // Only over figures that are given: a null figure is explained by `unavailable` instead.
    const bounded = LowerBoundFigures.filter((f) => figures[f] !== null)
    const venues =
      bounded.length === 0
        ? []
        : liquidationLowerBound(
            perpListings(state.asset).map((l) => l.venue),
            state.liqVenues
          )
    return Effect.succeed(venues.length === 0 ? figures : { ...figures, lower_bound: { figures: bounded, venues } })
  })
  return { openInterest, orderflow, liquidations }
}
