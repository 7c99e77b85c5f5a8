/**
 * The price measures of the equity plane, from daily bars: returns, the 7-day range position, and each measure's
 * percentile against the last year of its daily values (`baseline` window `1y`, cadence `1d`; below 30 values
 * the measure is `insufficient_history`).
 */

import { percentileRank, sortedFinite } from "../../Percentile.ts"
import type { DailyBar } from "../EquityStore.ts"
import { DAY_MS } from "./Freshness.ts"

/** Trailing window of the price percentiles, in days, and its label. */
export const BASELINE_DAYS = 365
export const BASELINE = { window: "1y", cadence: "1d" } as const

export const contextual = (
  series: ReadonlyArray<number>,
  baselineFrom: number
): { readonly value: number; readonly pctl: number } | { readonly value: number | null; readonly n: number } => {
  const value = series[series.length - 1]
  if (value === undefined || !Number.isFinite(value)) return { value: null, n: 0 }
  const baseline = sortedFinite(series.slice(baselineFrom))
  const pctl = percentileRank(value, baseline)
  return pctl === undefined ? { value, n: baseline.length } : { value: round(value, 6), pctl }
}

export const round = (x: number, places: number) => Number(x.toFixed(places))

/** Daily close-to-close returns in percent, aligned with the bars (NaN for the first). */
export const returnsPct = (bars: ReadonlyArray<DailyBar>): Array<number> =>
  bars.map((b, i) => (i === 0 ? Number.NaN : (b.c / (bars[i - 1] as DailyBar).c - 1) * 100))

/** Position of each close within the high-low range of the trailing 7 calendar days, 0 to 100. */
export const rangePos7dPct = (bars: ReadonlyArray<DailyBar>): Array<number> => {
  const out: Array<number> = []
  let from = 0
  for (let i = 0; i < bars.length; i++) {
    const b = bars[i] as DailyBar
    while ((bars[from] as DailyBar).tMs <= b.tMs - 7 * DAY_MS) from++
    let hi = Number.NEGATIVE_INFINITY
    let lo = Number.POSITIVE_INFINITY
    for (let j = from; j <= i; j++) {
      hi = Math.max(hi, (bars[j] as DailyBar).h)
      lo = Math.min(lo, (bars[j] as DailyBar).l)
    }
    out.push(hi > lo ? ((b.c - lo) / (hi - lo)) * 100 : Number.NaN)
  }
  return out
}

/** Index of the first bar inside the baseline window ending at the last bar. */
export const baselineStart = (bars: ReadonlyArray<DailyBar>): number => {
  const last = bars[bars.length - 1]
  if (last === undefined) return 0
  const from = last.tMs - BASELINE_DAYS * DAY_MS
  const i = bars.findIndex((b) => b.tMs > from)
  return i < 0 ? 0 : i
}
