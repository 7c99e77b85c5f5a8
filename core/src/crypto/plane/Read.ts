/**
 * `read`: the headline figures against their baselines and the four assessments (positioning, structure, flow,
 * cascade risk). A tier below `core` gets a partial read: what its tier does not serve is `not_covered`.
 */
import { Effect } from "effect"
import { type PlaneForAsset, tierServes } from "../../Planes.ts"
import { CascadeRule, cascadeRisk, FlowRule, flow, PositioningRule, positioning } from "../Assessment.ts"
import { BaselineCadence } from "../Baselines.ts"
import { fundingBand } from "../Funding.ts"
import { StructureRule } from "../Structure.ts"
import { perAsset } from "./Operation.ts"
import { Gaps, sourceOf } from "./Result.ts"
import { missingOf, type PlaneState, w } from "./State.ts"
import type { StructureOf } from "./Structure.ts"

/** `read` over a plane's state; its trend comes from `structureOf` (`Structure.ts`). */
export const makeRead = (st: PlaneState, structureOf: StructureOf): PlaneForAsset => {
  const read = perAsset(st, "read", ({ asset, state, gaps, nowMs, statuses }) =>
    Effect.gen(function* () {
      const c = state.current
      // A tier below `core` gets a partial read: what its tier does not serve is null, named `not_covered`.
      const serves = (op: string) => tierServes(asset.tier, op)
      const notServed = (component: string, op: string) =>
        gaps.add(component, "not_covered", `tier \`${asset.tier}\` does not serve \`${op}\``)
      const ret = gaps.contextual(
        "headline.return_24h_pct",
        c.return_24h_pct,
        w(state, "return_24h_pct"),
        missingOf(state, "return_24h_pct")
      )
      const fund = serves("funding")
        ? gaps.contextual("headline.funding_rate_8h_pct", c.funding_rate_8h_pct, w(state, "funding_rate_8h_pct"))
        : notServed("headline.funding_rate_8h_pct", "funding")
      const oi = serves("open_interest")
        ? gaps.contextual("headline.oi_change_24h_pct", c.oi_change_24h_pct, w(state, "oi_change_24h_pct"))
        : notServed("headline.oi_change_24h_pct", "open_interest")
      const structureGaps = new Gaps()
      const st = serves("structure")
        ? yield* structureOf(asset, "4h", nowMs, structureGaps)
        : { trend_state: null, notServed: true as const }
      if (st.trend_state === null) {
        if ("notServed" in st) notServed("headline.trend_state", "structure")
        else gaps.add("headline.trend_state", structureGaps.entries.trend_state?.reason ?? "no_data")
      }
      const netPct = c.net_delta_pct_of_oi_24h
      const netPctl = Number.isFinite(netPct) ? w(state, "net_delta_pct_of_oi_24h").rank(netPct) : undefined
      const liqPctl = w(state, "liq_intensity_pct_of_oi_24h").rank(c.liq_intensity_pct_of_oi_24h)
      const band = Number.isFinite(c.funding_rate_8h_pct) ? fundingBand(c.funding_rate_8h_pct) : undefined
      const positioningState = !(serves("funding") && serves("open_interest"))
        ? notServed("assessment.positioning", "funding")
        : fund !== null && oi !== null && band !== undefined
          ? positioning({ fundingPctl: fund.pctl, fundingBand: band, oiChangePctl: oi.pctl })
          : gaps.add("assessment.positioning", "insufficient_history", "needs funding and open-interest percentiles")
      const flowState = !serves("orderflow")
        ? notServed("assessment.flow", "orderflow")
        : netPctl !== undefined
          ? flow({ netDeltaPctOfOi: netPct, pctl: netPctl })
          : gaps.add("assessment.flow", "insufficient_history", "needs the net taker delta percentile")
      const cascade = !serves("liquidations")
        ? notServed("assessment.cascade_risk", "liquidations")
        : fund !== null && oi !== null && ret !== null && liqPctl !== undefined
          ? cascadeRisk({
              fundingPctl: fund.pctl,
              oiChangePctl: oi.pctl,
              liqIntensityPctl: liqPctl,
              return24hPctl: ret.pctl
            }).level
          : gaps.add(
              "assessment.cascade_risk",
              "insufficient_history",
              "needs funding, open-interest, liquidation and return percentiles"
            )
      if (st.trend_state === null) {
        if ("notServed" in st) notServed("assessment.structure", "structure")
        else gaps.add("assessment.structure", structureGaps.entries.trend_state?.reason ?? "no_data")
      }
      return {
        symbol: asset.symbol,
        name: asset.name,
        class: asset.tier,
        baseline: {
          window: "90d",
          cadence: BaselineCadence,
          n: w(state, "return_24h_pct").n,
          ...sourceOf(statuses)
        },
        assessment: {
          positioning: { state: positioningState, rule: PositioningRule },
          structure: { trend_state: st.trend_state, rule: StructureRule },
          flow: { state: flowState, rule: FlowRule },
          cascade_risk: { level: cascade, rule: CascadeRule }
        },
        headline: {
          price_usd: gaps.plain("headline.price_usd", c.price),
          return_24h_pct: ret,
          funding_rate_8h_pct: fund,
          oi_change_24h_pct: oi,
          trend_state: st.trend_state
        }
      }
    })
  )
  return read
}
