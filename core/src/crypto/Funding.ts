/**
 * Perpetual funding across venues (DECISIONS, "Definitions" and "funding_band").
 *
 * - Venues settle funding every 1 h, 4 h or 8 h. A rate is made comparable by scaling it to 8 h:
 *   `rate_8h_pct = rate_pct x 8 / interval_hours` (a 1 h venue paying 0.00125 % per hour and an 8 h venue
 *   paying 0.01 % per 8 h carry the same cost of holding a position).
 * - `apr_pct = rate_8h_pct x 3 x 365`: simple annualization, not compounded.
 * - The asset's aggregate 8 h rate is the open-interest-weighted mean of its venues' current 8 h rates (the
 *   plain mean when any venue's open interest is unknown or all are zero). It is computed as the lowest rate
 *   plus the weighted mean of each rate's excess over it, so equal inputs give exactly that input: one venue,
 *   or every venue at 0.01 %, aggregates to the very same number (`(r x w) / w` does not: it is one unit in
 *   the last place off about one time in ten, which splits ties in a percentile baseline).
 * - Scaling to 8 h is exact to 15 significant digits: rates the venues publish as equal decimals (0.01 % per
 *   8 h, 0.00125 % per hour, 0.00375 % per 3 h) give the same 8 h number, whatever the interval.
 * - `bars_since_sign_flip`: the number of samples of the aggregate series since its sign last changed (0 when
 *   the newest sample is the first with the current sign). Zero samples carry no sign and never flip it.
 * - `venue_hot`: the venue whose 8 h rate is furthest from zero. `venue_spread_8h_pct`: highest minus lowest
 *   venue 8 h rate. `next_funding_at`: the earliest next settlement across venues.
 */

/** A venue's current funding as the funding math needs it. */
export interface VenueFunding {
  readonly venue: string
  /** The venue's current (predicted or last settled) rate per interval, in percent. */
  readonly ratePct: number
  readonly intervalHours: number
  /** Next settlement time (epoch ms). */
  readonly nextFundingAtMs: number
  /** Open interest on the venue in USD, the aggregate's weight. */
  readonly oiUsd?: number
}

/**
 * Significant digits a normalized rate is rounded to: a double carries 15.9, and a venue's rate has at most a
 * dozen, so the rounding removes only the binary noise of the scaling.
 */
const RateDigits = 15

/** `x` rounded to `RateDigits` significant digits (0 and non-finite values unchanged). */
export const exactRate = (x: number): number => (x === 0 || !Number.isFinite(x) ? x : Number(x.toPrecision(RateDigits)))

/** A rate per `intervalHours` scaled to 8 h, in percent (scaled rates rounded to 15 significant digits). */
export const rate8hPct = (ratePct: number, intervalHours: number): number => exactRate((ratePct * 8) / intervalHours)

/** A venue's rate as a fraction per `intervalMs` (what venues publish), scaled to percent per 8 h. */
export const fraction8hPct = (rate: number, intervalMs: number): number =>
  exactRate((rate * 100 * 8 * 3_600_000) / intervalMs)

/** Simple annualized rate of an 8 h rate: three settlements a day, 365 days. */
export const aprPct = (rate8h: number): number => rate8h * 3 * 365

/** Open-interest-weighted mean 8 h rate of `venues` (plain mean when weights are missing); undefined if none. */
export const aggregateRate8hPct = (venues: ReadonlyArray<VenueFunding>): number | undefined => {
  if (venues.length === 0) return undefined
  // Rates already given per 8 h (the measures pass `fraction8hPct` results) are taken as they are.
  const rates = venues.map((v) => (v.intervalHours === 8 ? v.ratePct : rate8hPct(v.ratePct, v.intervalHours)))
  const weights = venues.map((v) => v.oiUsd)
  const weighted = weights.every((w) => w !== undefined && Number.isFinite(w) && w >= 0)
  const total = weighted ? weights.reduce((s: number, w) => s + (w as number), 0) : 0
  const useWeights = weighted && total > 0
  let low = Number.POSITIVE_INFINITY
  let high = Number.NEGATIVE_INFINITY
  for (const r of rates) {
    if (r < low) low = r
    if (r > high) high = r
  }
  // Equal rates (one venue included) are their own mean: no arithmetic may move them.
  if (!(high > low)) return low
  // The weighted mean of each rate's excess over the lowest, added to the lowest: a rate whose excess is 0
  // contributes exactly nothing, and the result is clamped into [low, high] against rounding at the edges.
  let excess = 0
  rates.forEach((r, i) => {
    excess += (r - low) * (useWeights ? (weights[i] as number) : 1)
  })
  const mean = low + excess / (useWeights ? total : rates.length)
  return Math.min(high, Math.max(low, mean))
}

/**
 * Samples since the sign of the ascending `series` last changed; undefined when the series has no nonzero
 * sample or never changed sign within it (the flip lies before the available history).
 */
export const barsSinceSignFlip = (series: ReadonlyArray<number>): number | undefined => {
  let i = series.length - 1
  while (i >= 0 && series[i] === 0) i--
  if (i < 0) return undefined
  const sign = Math.sign(series[i] as number)
  // The first sample of the current run is the one after the newest sample of the opposite sign.
  let j = i
  while (j >= 0 && Math.sign(series[j] as number) !== -sign) j--
  if (j < 0) return undefined
  let firstOfRun = j + 1
  while (firstOfRun < series.length && (series[firstOfRun] as number) === 0) firstOfRun++
  return series.length - 1 - firstOfRun
}

export const FundingBands = ["negative", "subdued", "neutral", "elevated", "stretched"] as const
export type FundingBand = (typeof FundingBands)[number]

/**
 * Lower bounds (inclusive, % per 8 h) of each band above `negative`; a rate below the first is `negative`.
 * `neutral` sits around the 0.01 % per 8 h that most venues charge by default.
 */
export const FundingBandThresholds = {
  subdued: -0.001,
  neutral: 0.005,
  elevated: 0.015,
  stretched: 0.05
} as const

/** One-word label of how stretched positioning is, from the aggregate 8 h rate in percent. */
export const fundingBand = (rate8h: number): FundingBand => {
  if (rate8h >= FundingBandThresholds.stretched) return "stretched"
  if (rate8h >= FundingBandThresholds.elevated) return "elevated"
  if (rate8h >= FundingBandThresholds.neutral) return "neutral"
  if (rate8h >= FundingBandThresholds.subdued) return "subdued"
  return "negative"
}

/**
 * Highest minus lowest of the venues' 8 h rates (venues that agree give exactly 0, their rates being scaled
 * exactly); undefined with no venue.
 */
export const venueSpread8hPct = (rates: ReadonlyArray<number>): number | undefined =>
  rates.length === 0 ? undefined : Math.max(...rates) - Math.min(...rates)

/** Index of the venue whose rate is furthest from zero (the first on a tie); undefined with no venue. */
export const hottestVenue = (rates: ReadonlyArray<number>): number | undefined => {
  let best: number | undefined
  rates.forEach((r, i) => {
    if (best === undefined || Math.abs(r) > Math.abs(rates[best] as number)) best = i
  })
  return best
}

/** Earliest next settlement across venues (epoch ms); undefined with no venue. */
export const nextFundingAtMs = (venues: ReadonlyArray<VenueFunding>): number | undefined =>
  venues.length === 0 ? undefined : Math.min(...venues.map((v) => v.nextFundingAtMs))
