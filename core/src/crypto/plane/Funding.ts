/**
 * `funding`: the funding rate against its 90-day and one-year baselines, each venue's rate, prediction and
 * next settlement, the hottest venue, the venues' spread and the band. The arithmetic is in `../Funding.ts`.
 */
import { Effect } from "effect"
import { MinBaselineN } from "../../Percentile.ts"
import type { PlaneForAsset } from "../../Planes.ts"
import type { CryptoAsset } from "../Assets.ts"
import { aprPct, barsSinceSignFlip, fraction8hPct, fundingBand, hottestVenue, venueSpread8hPct } from "../Funding.ts"
import { HOUR_MS } from "../Market.ts"
import { perAsset } from "./Operation.ts"
import { type Gaps, iso, roundRatio } from "./Result.ts"
import { type AssetState, type PlaneState, w } from "./State.ts"

/** `funding` over a plane's state. */
export const makeFunding = (st: PlaneState): PlaneForAsset => {
  const { store } = st
  const fundingOf = (asset: CryptoAsset, s: AssetState, gaps: Gaps) =>
    Effect.gen(function* () {
      const statesNow = yield* store.fundingStates(asset.id)
      const rate = s.current.funding_rate_8h_pct
      const rateCtx = gaps.contextual("funding.rate_8h_pct", rate, w(s, "funding_rate_8h_pct"))
      const year = s.baselines.funding1y
      const pctl1y = Number.isFinite(rate) ? year.rank(rate) : undefined
      if (rateCtx !== null && pctl1y === undefined) {
        gaps.add(
          "funding.rate_8h_pct.pctl_1y",
          "insufficient_history",
          `${year.n} baseline samples over a year; at least ${MinBaselineN} needed`
        )
      }
      const venues = [...s.current.venueFunding8hPct.entries()]
      const byVenue = venues.map(([venue, r]) => {
        const own = s.baselines.venueFunding.get(venue)
        const ownN = own?.n ?? 0
        const pctl = own?.rank(r)
        if (pctl === undefined) {
          gaps.add(
            `funding.by_venue.${venue}.rate_pctl`,
            "insufficient_history",
            `${ownN} baseline samples of this venue; at least ${MinBaselineN} needed`
          )
        }
        const st = statesNow.find((x) => x.venue === venue)
        return {
          venue,
          rate_8h_pct: roundRatio(r),
          rate_pctl: pctl ?? null,
          rate_pctl_n: ownN,
          interval_hours: st === undefined ? null : st.intervalMs / HOUR_MS,
          predicted_rate_8h_pct: st === undefined ? null : roundRatio(fraction8hPct(st.predictedRate, st.intervalMs)),
          next_funding_at: st === undefined ? null : iso(st.nextFundingMs)
        }
      })
      const hot = hottestVenue(venues.map(([, r]) => r))
      const hotRow = hot === undefined ? undefined : byVenue[hot]
      const nextMs = statesNow.length === 0 ? undefined : Math.min(...statesNow.map((x) => x.nextFundingMs))
      // Sign flips over the hourly samples, the current value standing in for the running hour.
      let flips: number | undefined
      if (Number.isFinite(rate)) {
        const series = s.baselines.fundingValues
        const last = series[series.length - 1]
        if (last === undefined || Math.sign(last) !== Math.sign(rate)) series.push(rate)
        flips = barsSinceSignFlip(series)
      }
      const spread = venueSpread8hPct(venues.map(([, r]) => r))
      return {
        funding: {
          rate_8h_pct: rateCtx === null ? null : { ...rateCtx, pctl_1y: pctl1y ?? null, n_1y: year.n },
          apr_pct: Number.isFinite(rate) ? roundRatio(aprPct(rate)) : gaps.add("funding.apr_pct", "no_data"),
          bars_since_sign_flip:
            flips ??
            gaps.add(
              "funding.bars_since_sign_flip",
              Number.isFinite(rate) ? "insufficient_history" : "no_data",
              "no sign change within the stored year of hourly samples"
            ),
          venue_hot:
            hotRow === undefined || hotRow.rate_pctl === null
              ? gaps.add("funding.venue_hot", hotRow === undefined ? "no_data" : "insufficient_history")
              : {
                  venue: hotRow.venue,
                  rate_8h_pct: hotRow.rate_8h_pct,
                  rate_pctl: hotRow.rate_pctl,
                  rate_pctl_n: hotRow.rate_pctl_n
                },
          venues: byVenue.length,
          by_venue: byVenue,
          next_funding_at: nextMs === undefined ? gaps.add("funding.next_funding_at", "no_data") : iso(nextMs),
          venue_spread_8h_pct:
            spread === undefined ? gaps.add("funding.venue_spread_8h_pct", "no_data") : roundRatio(spread),
          funding_band: Number.isFinite(rate) ? fundingBand(rate) : gaps.add("funding.funding_band", "no_data")
        },
        nextFundingMs: nextMs
      }
    })

  const funding = perAsset(st, "funding", ({ asset, state, gaps }) =>
    Effect.map(fundingOf(asset, state, gaps), (f) => ({ funding: f.funding }))
  )
  return funding
}
