/**
 * Market structure on closed bars (rule `structure@1`).
 *
 * - Swing high at bar i: its high is strictly above the highs of the `SwingSpan` (2) bars before and after it;
 *   swing low alike with lows. A swing is confirmed `SwingSpan` bars after it, so the newest 2 bars never form one.
 * - Break of structure (BOS): walking the bars in time order, a close strictly above the most recent confirmed,
 *   not yet broken swing high is a bullish BOS at that level; a close strictly below the most recent confirmed,
 *   not yet broken swing low is a bearish one. Each swing level breaks at most once. `last_bos` is the newest.
 * - `trend_state`: `uptrend` when the last two swing highs and the last two swing lows both step up (higher
 *   high and higher low) and the last close is not below the last swing low; `downtrend` when both step down
 *   and the last close is not above the last swing high; `range` otherwise. Needs two swing highs and two
 *   swing lows, else it cannot be assessed.
 * - Session levels (from 15 m bars, UTC): Asia 00:00-08:00, Europe 07:00-16:00, US 13:00-21:00; for each, the
 *   high and low of its latest session that has started (with `complete` telling whether it has ended), plus
 *   the prior UTC day's high and low.
 */
import { intervalStartMs } from "./Market.ts"

/** Open times and high, low, close columns of a run of bars (oldest first), e.g. a `Bars` series. */
export interface Ohlc {
  readonly t: ArrayLike<number>
  readonly high: ArrayLike<number>
  readonly low: ArrayLike<number>
  readonly close: ArrayLike<number>
}

export const StructureRule = "structure@1"

/** Closed bars the structure operation looks at (the newest ones). */
export const StructureBars = 500

/** Bars on each side a swing point must exceed. */
export const SwingSpan = 2

export const TrendStates = ["uptrend", "downtrend", "range"] as const
export type TrendState = (typeof TrendStates)[number]

export interface Swing {
  readonly kind: "high" | "low"
  readonly index: number
  readonly t: number
  readonly level: number
}

/** Confirmed swing highs and lows of `bars`, in time order. */
export const swings = (bars: Ohlc, span: number = SwingSpan): Array<Swing> => {
  const out: Array<Swing> = []
  const H = bars.high
  const L = bars.low
  for (let i = span; i < bars.close.length - span; i++) {
    const h = H[i] as number
    const l = L[i] as number
    let high = true
    let low = true
    for (let k = 1; k <= span; k++) {
      if (!(h > (H[i - k] as number) && h > (H[i + k] as number))) high = false
      if (!(l < (L[i - k] as number) && l < (L[i + k] as number))) low = false
    }
    const t = bars.t[i] as number
    if (high) out.push({ kind: "high", index: i, t, level: h })
    if (low) out.push({ kind: "low", index: i, t, level: l })
  }
  return out
}

export interface BreakOfStructure {
  readonly direction: "bullish" | "bearish"
  /** The swing level that was broken. */
  readonly level: number
  /** Open time of the bar whose close broke it. */
  readonly at: number
  /** Open time of the swing bar. */
  readonly swing_at: number
}

/** The newest break of structure, or undefined when none happened within `bars`. */
export const lastBreakOfStructure = (bars: Ohlc, span: number = SwingSpan): BreakOfStructure | undefined => {
  const sw = swings(bars, span)
  let next = 0
  let high: Swing | undefined
  let low: Swing | undefined
  let last: BreakOfStructure | undefined
  for (let i = 0; i < bars.close.length; i++) {
    // Swings confirmed by bar i: those at index <= i - span.
    while (next < sw.length && (sw[next] as Swing).index <= i - span) {
      const s = sw[next] as Swing
      if (s.kind === "high") high = s
      else low = s
      next++
    }
    const c = bars.close[i] as number
    const t = bars.t[i] as number
    if (high !== undefined && c > high.level) {
      last = { direction: "bullish", level: high.level, at: t, swing_at: high.t }
      high = undefined
    }
    if (low !== undefined && c < low.level) {
      last = { direction: "bearish", level: low.level, at: t, swing_at: low.t }
      low = undefined
    }
  }
  return last
}

/** Trend state from the last two swing highs and lows; undefined with fewer than two of either. */
export const trendState = (bars: Ohlc, span: number = SwingSpan): TrendState | undefined => {
  const sw = swings(bars, span)
  const highs = sw.filter((s) => s.kind === "high")
  const lows = sw.filter((s) => s.kind === "low")
  const n = bars.close.length
  if (highs.length < 2 || lows.length < 2 || n === 0) return undefined
  const [h1, h2] = highs.slice(-2) as [Swing, Swing]
  const [l1, l2] = lows.slice(-2) as [Swing, Swing]
  const close = bars.close[n - 1] as number
  if (h2.level > h1.level && l2.level > l1.level && close >= l2.level) return "uptrend"
  if (h2.level < h1.level && l2.level < l1.level && close <= h2.level) return "downtrend"
  return "range"
}

/** Trading sessions by UTC hour: [start, end). */
export const Sessions = {
  asia: { startHour: 0, endHour: 8 },
  europe: { startHour: 7, endHour: 16 },
  us: { startHour: 13, endHour: 21 }
} as const
export type SessionName = keyof typeof Sessions

export interface SessionLevel {
  readonly high: number
  readonly low: number
  readonly start: number
  readonly end: number
  readonly complete: boolean
}

const HOUR = 3_600_000
const DAY = 24 * HOUR

const rangeOf = (bars: Ohlc, from: number, to: number): { high: number; low: number } | undefined => {
  let high = Number.NEGATIVE_INFINITY
  let low = Number.POSITIVE_INFINITY
  for (let i = 0; i < bars.t.length; i++) {
    const t = bars.t[i] as number
    if (t < from || t >= to) continue
    if ((bars.high[i] as number) > high) high = bars.high[i] as number
    if ((bars.low[i] as number) < low) low = bars.low[i] as number
  }
  return high === Number.NEGATIVE_INFINITY ? undefined : { high, low }
}

/**
 * Session levels from ascending fine bars (15 m or 1 h, which align with session hours) as of `nowMs`:
 * each session's latest started occurrence, and the prior UTC day. Sessions without bars are left out, and so is
 * one that began before `heldFromMs` (where the bars given begin to cover it: named in `uncovered`).
 */
export const sessionLevels = (
  bars: Ohlc,
  nowMs: number,
  heldFromMs: number = Number.NEGATIVE_INFINITY
): {
  readonly sessions: Partial<Record<SessionName, SessionLevel>>
  readonly prior_day: { readonly high: number; readonly low: number; readonly date: number } | undefined
  readonly uncovered: ReadonlyArray<SessionName | "prior_day">
} => {
  const today = intervalStartMs(nowMs, "1d")
  const sessions: Partial<Record<SessionName, SessionLevel>> = {}
  const uncovered: Array<SessionName | "prior_day"> = []
  for (const name of Object.keys(Sessions) as Array<SessionName>) {
    const s = Sessions[name]
    let start = today + s.startHour * HOUR
    if (start > nowMs) start -= DAY
    const end = start + (s.endHour - s.startHour) * HOUR
    if (start < heldFromMs) {
      uncovered.push(name)
      continue
    }
    const r = rangeOf(bars, start, Math.min(end, nowMs))
    if (r !== undefined) sessions[name] = { ...r, start, end, complete: end <= nowMs }
  }
  const prior = today - DAY < heldFromMs ? undefined : rangeOf(bars, today - DAY, today)
  if (today - DAY < heldFromMs) uncovered.push("prior_day")
  return { sessions, prior_day: prior === undefined ? undefined : { ...prior, date: today - DAY }, uncovered }
}
