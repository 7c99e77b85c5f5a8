/**
 * Technical indicators on closed OHLC bars (DECISIONS, "Definitions"). Every function returns a series
 * aligned index for index with its input, `NaN` until the indicator is warmed up, so a whole history can be
 * turned into a percentile baseline in one pass.
 *
 * - SMA(n): arithmetic mean of the last n closes.
 * - EMA(n): `alpha = 2 / (n + 1)`, seeded with the SMA of the first n closes.
 * - True range of bar i (i >= 1): `max(h - l, |h - c[i-1]|, |l - c[i-1]|)`; bar 0 has none.
 * - ATR(14): Wilder smoothing of the true range: the first value is the mean of the first 14 true ranges
 *   (bars 1..14), then `ATR = (ATR_prev x 13 + TR) / 14`. `atr_14_pct = ATR / close x 100`.
 * - RSI(14): Wilder averages of gains and losses of close-to-close changes, seeded with the means of the first
 *   14 changes; `RSI = 100 - 100 / (1 + avgGain / avgLoss)`; 100 when avgLoss is 0 (50 when both are 0).
 * - ADX(14): +DM = up move when it exceeds the down move and is positive, else 0 (-DM alike); +DM, -DM and TR
 *   are Wilder-smoothed over 14, `+DI = 100 x sm(+DM) / sm(TR)`, `DX = 100 x |+DI - -DI| / (+DI + -DI)`
 *   (0 when both are 0), and ADX is the Wilder average of DX seeded with the mean of the first 14 DX values.
 *   First ADX at bar 27 (0-based) for period 14.
 */

/** High, low and close columns of a run of bars (oldest first), e.g. a `Bars` series of the market model. */
export interface Hlc {
  readonly high: ArrayLike<number>
  readonly low: ArrayLike<number>
  readonly close: ArrayLike<number>
}

/** The period of the Wilder indicators the API serves. */
export const WilderPeriod = 14

const nans = (n: number): Array<number> => new Array<number>(n).fill(Number.NaN)

/** Simple moving average of `values` over `period`. */
export const sma = (values: ArrayLike<number>, period: number): Array<number> => {
  const out = nans(values.length)
  let sum = 0
  for (let i = 0; i < values.length; i++) {
    sum += values[i] as number
    if (i >= period) sum -= values[i - period] as number
    if (i >= period - 1) out[i] = sum / period
  }
  return out
}

/** Exponential moving average (`alpha = 2 / (period + 1)`), seeded with the SMA of the first `period` values. */
export const ema = (values: ArrayLike<number>, period: number): Array<number> => {
  const out = nans(values.length)
  if (values.length < period) return out
  const alpha = 2 / (period + 1)
  let sum = 0
  for (let i = 0; i < period; i++) sum += values[i] as number
  let prev = sum / period
  out[period - 1] = prev
  for (let i = period; i < values.length; i++) {
    prev = ((values[i] as number) - prev) * alpha + prev
    out[i] = prev
  }
  return out
}

/**
 * Wilder's average of `values[from..]`: the first output (at `from + period - 1`) is the mean of the first
 * `period` values, then `avg = avg + (x - avg) / period`. Outputs before that are NaN.
 */
const wilder = (values: ArrayLike<number>, period: number, from: number): Array<number> => {
  const out = nans(values.length)
  if (values.length - from < period) return out
  let sum = 0
  for (let i = from; i < from + period; i++) sum += values[i] as number
  let avg = sum / period
  out[from + period - 1] = avg
  for (let i = from + period; i < values.length; i++) {
    avg = avg + ((values[i] as number) - avg) / period
    out[i] = avg
  }
  return out
}

/** True range per bar (NaN for the first bar, which has no previous close). */
export const trueRange = (bars: Hlc): Array<number> => {
  const n = bars.close.length
  const out = nans(n)
  for (let i = 1; i < n; i++) {
    const h = bars.high[i] as number
    const l = bars.low[i] as number
    const pc = bars.close[i - 1] as number
    out[i] = Math.max(h - l, Math.abs(h - pc), Math.abs(l - pc))
  }
  return out
}

/** ATR with Wilder smoothing. */
export const atr = (bars: Hlc, period: number = WilderPeriod): Array<number> => wilder(trueRange(bars), period, 1)

/** ATR as a percentage of the same bar's close. */
export const atrPct = (bars: Hlc, period: number = WilderPeriod): Array<number> =>
  atr(bars, period).map((a, i) => (a / (bars.close[i] as number)) * 100)

/** Wilder average gain and loss of close-to-close changes (exposed for verification). */
export const averageGainLoss = (
  closes: ArrayLike<number>,
  period: number = WilderPeriod
): { readonly gain: Array<number>; readonly loss: Array<number> } => {
  const gains = nans(closes.length)
  const losses = nans(closes.length)
  for (let i = 1; i < closes.length; i++) {
    const d = (closes[i] as number) - (closes[i - 1] as number)
    gains[i] = d > 0 ? d : 0
    losses[i] = d < 0 ? -d : 0
  }
  return { gain: wilder(gains, period, 1), loss: wilder(losses, period, 1) }
}

/** RSI with Wilder smoothing. */
export const rsi = (closes: ArrayLike<number>, period: number = WilderPeriod): Array<number> => {
  const { gain, loss } = averageGainLoss(closes, period)
  return gain.map((g, i) => {
    const l = loss[i] as number
    if (Number.isNaN(g) || Number.isNaN(l)) return Number.NaN
    if (l === 0) return g === 0 ? 50 : 100
    return 100 - 100 / (1 + g / l)
  })
}

/** ADX with +DI and -DI, Wilder smoothing. */
export const adx = (
  bars: Hlc,
  period: number = WilderPeriod
): { readonly adx: Array<number>; readonly plusDi: Array<number>; readonly minusDi: Array<number> } => {
  const n = bars.close.length
  const plusDm = nans(n)
  const minusDm = nans(n)
  for (let i = 1; i < n; i++) {
    const up = (bars.high[i] as number) - (bars.high[i - 1] as number)
    const down = (bars.low[i - 1] as number) - (bars.low[i] as number)
    plusDm[i] = up > down && up > 0 ? up : 0
    minusDm[i] = down > up && down > 0 ? down : 0
  }
  const tr = wilder(trueRange(bars), period, 1)
  const pdm = wilder(plusDm, period, 1)
  const mdm = wilder(minusDm, period, 1)
  const plusDi = nans(n)
  const minusDi = nans(n)
  const dx = nans(n)
  for (let i = period; i < n; i++) {
    const t = tr[i] as number
    const pdi = t === 0 ? 0 : (100 * (pdm[i] as number)) / t
    const mdi = t === 0 ? 0 : (100 * (mdm[i] as number)) / t
    plusDi[i] = pdi
    minusDi[i] = mdi
    dx[i] = pdi + mdi === 0 ? 0 : (100 * Math.abs(pdi - mdi)) / (pdi + mdi)
  }
  return { adx: wilder(dx, period, period), plusDi, minusDi }
}

/** Moving-average periods the API serves. */
export const MovingAveragePeriods = [20, 50, 200] as const

/** The last finite value of a series, or undefined. */
export const lastFinite = (series: ArrayLike<number>): number | undefined => {
  const v = series[series.length - 1]
  return v !== undefined && Number.isFinite(v) ? v : undefined
}
