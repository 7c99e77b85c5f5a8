/**
 * Perpetual funding across venues (DECISIONS, "Definitions" and "funding_band").
 *
 * - Venues settle funding every 1 h, 4 h or 8 h. A rate is made comparable by scaling it to 8 h:
 *   `rate_8h_pct = rate_pct x 8 / interval_hours` (a 1 h venue paying 0.00125 % per hour and an 8 h venue
 *   paying 0.01 % per 8 h carry the same cost of holding a position).
 * - `apr_pct = rate_8h_pct x 3 x 365`: simple annualization, not compounded.
 * - The asset's aggregate 8 h rate is the open-interest-weighted mean of its venues' current 8 h rates (the
 *   plain mean when any venue's open interest is unknown or all are zero).
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

/** A rate per `intervalHours` scaled to 8 h, in percent. */
export const rate8hPct = (ratePct: number, intervalHours: number): number => (ratePct * 8) / intervalHours

/** Simple annualized rate of an 8 h rate: three settlements a day, 365 days. */
export const aprPct = (rate8h: number): number => rate8h * 3 * 365

/** Open-interest-weighted mean 8 h rate of `venues` (plain mean when weights are missing); undefined if none. */
export const aggregateRate8hPct = (venues: ReadonlyArray<VenueFunding>): number | undefined => {
  if (venues.length === 0) return undefined
  const rates = venues.map((v) => rate8hPct(v.ratePct, v.intervalHours))
  const weights = venues.map((v) => v.oiUsd)
  const weighted = weights.every((w) => w !== undefined && Number.isFinite(w) && w >= 0)
  const total = weighted ? weights.reduce((s: number, w) => s + (w as number), 0) : 0
  if (weighted && total > 0) return rates.reduce((s, r, i) => s + r * (weights[i] as number), 0) / total
  return rates.reduce((s, r) => s + r, 0) / rates.length
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

/** Highest minus lowest of the venues' 8 h rates; undefined with no venue. */
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
