/**
 * What `series` serves besides raw bars: the start of each `range`, and the summary view of a run of closed
 * bars (DECISIONS, "series").
 *
 * - Ranges are calendar spans back from now (UTC): `1w` 7 days, `1mo`/`3mo`/`6mo` calendar months, `1y`/`5y`
 *   calendar years (a day the earlier month lacks becomes its last day: 31 March minus a month is 29 February
 *   in a leap year), `ytd` since January 1, `max` all stored history.
 * - Summary: first and last close, `return_pct = (last / first - 1) x 100`, highest high and lowest low,
 *   `max_drawdown_pct` (largest fall of a close from the highest close before it, as a negative percentage;
 *   0 when closes never fell), `realized_volatility_pct` (standard deviation of close-to-close log returns,
 *   annualized by the number of bars in 365 days: crypto trades around the clock), and `bar_count`.
 */
import { DAY_MS, type Interval, IntervalMs } from "./Market.ts"

export const SeriesRanges = ["1w", "1mo", "3mo", "6mo", "ytd", "1y", "5y", "max"] as const
export type SeriesRange = (typeof SeriesRanges)[number]

/** The same day and time `months` calendar months earlier; a day the month lacks becomes its last day. */
const monthsBack = (nowMs: number, months: number): number => {
  const d = new Date(nowMs)
  const lastDay = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - months + 1, 0)).getUTCDate()
  return Date.UTC(
    d.getUTCFullYear(),
    d.getUTCMonth() - months,
    Math.min(d.getUTCDate(), lastDay),
    d.getUTCHours(),
    d.getUTCMinutes(),
    d.getUTCSeconds(),
    d.getUTCMilliseconds()
  )
}

/** Start (epoch ms, inclusive) of `range` ending at `nowMs`. */
export const rangeStartMs = (range: SeriesRange, nowMs: number): number => {
  switch (range) {
    case "1w":
      return nowMs - 7 * DAY_MS
    case "1mo":
      return monthsBack(nowMs, 1)
    case "3mo":
      return monthsBack(nowMs, 3)
    case "6mo":
      return monthsBack(nowMs, 6)
    case "ytd":
      return Date.UTC(new Date(nowMs).getUTCFullYear(), 0, 1)
    case "1y":
      return monthsBack(nowMs, 12)
    case "5y":
      return monthsBack(nowMs, 60)
    case "max":
      return 0
  }
}

/** Bars of `interval` in 365 days (a month counts 365 / 12 days). */
export const barsPerYear = (interval: Interval): number =>
  interval === "1mo" ? 12 : (365 * DAY_MS) / IntervalMs[interval]

export interface SeriesSummaryValues {
  readonly first_close: number
  readonly last_close: number
  readonly return_pct: number
  readonly high: number
  readonly low: number
  readonly max_drawdown_pct: number
  readonly realized_volatility_pct: number | null
  readonly bar_count: number
}

/** The summary of closed bars (oldest first); undefined without bars. */
export const summarize = (
  bars: { readonly high: ArrayLike<number>; readonly low: ArrayLike<number>; readonly close: ArrayLike<number> },
  interval: Interval
): SeriesSummaryValues | undefined => {
  const n = bars.close.length
  if (n === 0) return undefined
  let high = Number.NEGATIVE_INFINITY
  let low = Number.POSITIVE_INFINITY
  let peak = Number.NEGATIVE_INFINITY
  let maxDrawdown = 0
  let sum = 0
  let sumSq = 0
  for (let i = 0; i < n; i++) {
    const c = bars.close[i] as number
    if ((bars.high[i] as number) > high) high = bars.high[i] as number
    if ((bars.low[i] as number) < low) low = bars.low[i] as number
    if (c > peak) peak = c
    const dd = (c / peak - 1) * 100
    if (dd < maxDrawdown) maxDrawdown = dd
    if (i > 0) {
      const r = Math.log(c / (bars.close[i - 1] as number))
      sum += r
      sumSq += r * r
    }
  }
  const first = bars.close[0] as number
  const last = bars.close[n - 1] as number
  const m = n - 1
  const variance = m >= 2 ? (sumSq - (sum * sum) / m) / (m - 1) : Number.NaN
  return {
    first_close: first,
    last_close: last,
    return_pct: (last / first - 1) * 100,
    high,
    low,
    max_drawdown_pct: maxDrawdown,
    realized_volatility_pct: Number.isFinite(variance)
      ? Math.sqrt(Math.max(0, variance) * barsPerYear(interval)) * 100
      : null,
    bar_count: n
  }
}
