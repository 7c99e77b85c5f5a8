/**
 * The assessments of a crypto `read` (DECISIONS, "Assessment values"). Each is a small, versioned rule over
 * percentiles the asset already reports, so a client can check it: the rule name and version travel with the
 * answer (`rule: "<name>@<n>"`); the version is bumped whenever a rule's output can change. Thresholds are
 * inclusive where written `>=` / `<=`. A rule whose inputs are missing gives no state (null, `unavailable`).
 */
import type { FundingBand } from "./Funding.ts"

export const PositioningStates = ["crowded_long", "leaning_long", "balanced", "leaning_short", "crowded_short"] as const
export type PositioningState = (typeof PositioningStates)[number]
export const FlowStates = ["strong_buying", "buying", "balanced", "selling", "strong_selling"] as const
export type FlowState = (typeof FlowStates)[number]
export const CascadeLevels = ["low", "moderate", "elevated", "high"] as const
export type CascadeLevel = (typeof CascadeLevels)[number]

export const PositioningRule = "positioning@1"
export const FlowRule = "flow@1"
export const CascadeRule = "cascade_risk@1"

/** Thresholds of the rules, in percentile points (0..100) of each input's own 90-day baseline. */
export const AssessmentThresholds = {
  positioning: { crowded: 90, leaning: 70, oiBuilding: 70 },
  flow: { strong: 90, leaning: 70 },
  cascade: { fundingTail: 10, oiBuilding: 80, liquidationIntensity: 80, moveTail: 10 }
} as const

/**
 * `positioning@1`, from the aggregate 8 h funding rate's percentile `f`, its band, and the percentile `o` of
 * the 24 h open-interest change:
 * - `crowded_long`: band `stretched`, or `f >= 90` and `o >= 70` (longs paying up while positions build);
 * - `crowded_short`: `f <= 10` and `o >= 70`;
 * - `leaning_long`: `f >= 70`; `leaning_short`: `f <= 30`; otherwise `balanced`.
 */
export const positioning = (input: {
  readonly fundingPctl: number
  readonly fundingBand: FundingBand
  readonly oiChangePctl: number
}): PositioningState => {
  const t = AssessmentThresholds.positioning
  const f = input.fundingPctl
  const building = input.oiChangePctl >= t.oiBuilding
  if (input.fundingBand === "stretched" || (f >= t.crowded && building)) return "crowded_long"
  if (f <= 100 - t.crowded && building) return "crowded_short"
  if (f >= t.leaning) return "leaning_long"
  if (f <= 100 - t.leaning) return "leaning_short"
  return "balanced"
}

/**
 * `flow@1`, from the 24 h net taker delta as a share of open interest: its value `v` (sign) and percentile `p`:
 * `strong_buying` `v > 0` and `p >= 90`; `buying` `v > 0` and `p >= 70`; `strong_selling` `v < 0` and
 * `p <= 10`; `selling` `v < 0` and `p <= 30`; otherwise `balanced`.
 */
export const flow = (input: { readonly netDeltaPctOfOi: number; readonly pctl: number }): FlowState => {
  const t = AssessmentThresholds.flow
  const v = input.netDeltaPctOfOi
  const p = input.pctl
  if (v > 0 && p >= t.strong) return "strong_buying"
  if (v > 0 && p >= t.leaning) return "buying"
  if (v < 0 && p <= 100 - t.strong) return "strong_selling"
  if (v < 0 && p <= 100 - t.leaning) return "selling"
  return "balanced"
}

/**
 * `cascade_risk@1`: one point for each stress sign, from the percentiles of
 * - the aggregate 8 h funding rate in either tail (`<= 10` or `>= 90`): crowded positioning;
 * - the 24 h open-interest change `>= 80`: leverage building;
 * - liquidation intensity (24 h liquidations as % of open interest) `>= 80`: forced selling under way;
 * - the 24 h return in either tail (`<= 10` or `>= 90`): an outsized move.
 * 0 points `low`, 1 `moderate`, 2 `elevated`, 3 or 4 `high`.
 */
export const cascadeRisk = (input: {
  readonly fundingPctl: number
  readonly oiChangePctl: number
  readonly liqIntensityPctl: number
  readonly return24hPctl: number
}): { readonly level: CascadeLevel; readonly points: number } => {
  const t = AssessmentThresholds.cascade
  const tail = (p: number, q: number) => p <= q || p >= 100 - q
  const points =
    (tail(input.fundingPctl, t.fundingTail) ? 1 : 0) +
    (input.oiChangePctl >= t.oiBuilding ? 1 : 0) +
    (input.liqIntensityPctl >= t.liquidationIntensity ? 1 : 0) +
    (tail(input.return24hPctl, t.moveTail) ? 1 : 0)
  const level: CascadeLevel = points === 0 ? "low" : points === 1 ? "moderate" : points === 2 ? "elevated" : "high"
  return { level, points }
}

/** Percentile tails `extreme_count` counts: at or below 5, or at or above 95. */
export const ExtremeTail = 5

/** Whether a percentile sits in its own historical tail. */
export const isExtreme = (pctl: number): boolean => pctl <= ExtremeTail || pctl >= 100 - ExtremeTail
