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
import { type CryptoAsset, perpListings } from "../Assets.ts"
import type { StreamedOpenInterest } from "../Market.ts"
import type { UniverseRef } from "../Universe.ts"
import { countsBothSides, LowerBoundFigures, liquidationLowerBound } from "../VenueConventions.ts"
import { perAsset } from "./Operation.ts"
import { clocks, roundValue } from "./Result.ts"
import { freshnessFor, type PlaneState, venuesOf, w } from "./State.ts"

/**
 * An asset's open interest by venue with each streamed venue's row replaced by (or, without a recent snapshot,
 * added as) its streamed value, in the asset's venue order.
 */
export const withStreamedOi = (
  universe: UniverseRef,
  asset: CryptoAsset,
  stored: ReadonlyArray<{ readonly venue: string; readonly usd: number }>,
  streamed: ReadonlyArray<StreamedOpenInterest>
): ReadonlyArray<{ readonly venue: string; readonly usd: number }> => {
  const usd = new Map(stored.map((r) => [r.venue, r.usd]))
  for (const s of streamed) usd.set(s.venue, roundValue(s.usd))
  return venuesOf(universe, asset).flatMap((venue) => {
    const x = usd.get(venue)
    return x === undefined ? [] : [{ venue, usd: x }]
  })
}

/** `open_interest`, `orderflow` and `liquidations` over a plane's state. */
export const makeFlow = (
  st: PlaneState
): {
  readonly openInterest: PlaneForAsset
  readonly orderflow: PlaneForAsset
  readonly liquidations: PlaneForAsset
} => {
  const openInterest = perAsset(st, "open_interest", ({ asset, state, gaps, statuses, nowMs }) =>
    Effect.sync(() => {
      // Where a venue streams open interest (and serves this asset now), its row is the streamed value and its
      // freshness the stream's; the other venues' rows are the stored snapshots. The 24 h change, the basis and
      // their percentiles stay on the stored 15-minute snapshots (the baselines are built from them).
      const streamed = st.store.streamedOpenInterest?.(asset.id) ?? []
      const rows =
        streamed.length === 0 ? state.oiByVenue : withStreamedOi(st.universe, asset, state.oiByVenue, streamed)
      const usd = streamed.length === 0 ? state.current.oi_usd : rows.reduce((sum, r) => sum + r.usd, 0)
      const body = {
        usd: gaps.plain("usd", usd),
        change_24h_pct: gaps.contextual(
          "change_24h_pct",
          state.current.oi_change_24h_pct,
          w(state, "oi_change_24h_pct")
        ),
        basis_pct: gaps.contextual("basis_pct", state.current.basis_pct, w(state, "basis_pct")),
        by_venue: rows.map((r) =>
          countsBothSides(r.venue) ? { venue: r.venue, usd: r.usd, venue_counts: "both_sides" as const } : r
        )
      }
      if (streamed.length === 0) return body
      // The clocks with each streaming venue's `openInterest` status replaced by its stream's (`as_of` the newest
      // event time applied).
      const byVenue = new Map(streamed.map((s) => [s.venue, s.status]))
      const replaced = statuses.map((s) => {
        const x = s.component === "openInterest" ? byVenue.get(s.venue) : undefined
        return x === undefined ? s : { ...x, source: s.source }
      })
      for (const s of streamed)
        if (!statuses.some((x) => x.venue === s.venue && x.component === "openInterest")) replaced.push(s.status)
      const dataEndMs = state.barsEndMs === undefined ? undefined : Math.min(nowMs, state.barsEndMs)
      return { ...clocks(freshnessFor(st.universe, asset, "open_interest", replaced, nowMs, dataEndMs)), ...body }
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
