/**
 * The equity plane's clocks (DECISIONS, Freshness `status`): price-based answers follow the US regular session
 * and the last closed daily bar (`priceFreshness`); filings-based answers follow the latest periodic report and
 * EDGAR's accepting hours (`filingsFreshness`, `nextEdgarMomentMs`). See `../EquityPlane.ts` for the rules.
 */

import {
  isSessionOpen,
  isTradingDay,
  lastClosedSession,
  newYorkDate,
  nextSessionOpenMs,
  sessionCloseMs,
  sessionOpenMs
} from "../MarketHours.ts"
import { dateOf, dayOf } from "../Statements.ts"

export type Status = "live" | "delayed" | "stale" | "closed"

export interface Freshness {
  readonly as_of: string
  readonly status: Status
  readonly next_update_at: string
}

export const DAY_MS = 86_400_000
export const iso = (ms: number) => new Date(ms).toISOString()

/** Trading days d with `after < d <= through`. */
const sessionsBetween = (after: string, through: string): number => {
  let n = 0
  for (let d = dayOf(after) + 1; d <= dayOf(through); d++) if (isTradingDay(d)) n++
  return n
}

/**
 * The newest daily bar an answer may use: the one of the last closed session (its `t` is that session's open).
 * A bar of the session still running is left out: its close is not a close yet, and an answer built on it would
 * describe "now" (a new `as_of` and ETag on every request) while nothing new can be known before the close.
 */
export const closedBarsThroughMs = (nowMs: number): number => sessionOpenMs(lastClosedSession(nowMs))

/**
 * Freshness of an answer computed from daily bars. With `closeIsDelayed` (a daily source that publishes a session's
 * bar after its close, such as the live price connector), an answer during the session is `delayed` even when it
 * holds the last closed session: it is the previous session's close while the market trades.
 */
export const priceFreshness = (lastBarMs: number, nowMs: number, closeIsDelayed = false): Freshness => {
  const barDate = newYorkDate(lastBarMs)
  const expected = lastClosedSession(nowMs)
  const behind = barDate >= expected ? 0 : sessionsBetween(barDate, expected)
  const asOf = Math.min(sessionCloseMs(barDate), nowMs)
  const open = isSessionOpen(nowMs)
  const today = newYorkDate(nowMs)
  const next = open ? sessionCloseMs(today) : nextSessionOpenMs(nowMs)
  if (behind > 3) return { as_of: iso(asOf), status: "stale", next_update_at: iso(next) }
  if (!open) return { as_of: iso(asOf), status: "closed", next_update_at: iso(next) }
  return { as_of: iso(asOf), status: behind === 0 && !closeIsDelayed ? "live" : "delayed", next_update_at: iso(next) }
}

const MINUTE_MS = 60_000

/**
 * The next moment EDGAR accepts filings (business days 06:00 to 22:00 New York). While it accepts them, a filing
 * can arrive at any moment; the answer is then the start of the next minute, so that two requests in the same minute
 * get the same `next_update_at` (and the same ETag, which a conditional request needs) instead of one that moves
 * with every millisecond.
 */
export const nextEdgarMomentMs = (nowMs: number): number => {
  let day = dayOf(newYorkDate(nowMs))
  for (let i = 0; i < 15; i++, day++) {
    if (!isTradingDay(day)) continue
    const open = sessionOpenMs(dateOf(day)) - 3.5 * 3_600_000
    // 22:00 New York: EDGAR's hours do not follow the market's early closes.
    const close = sessionOpenMs(dateOf(day)) + 12.5 * 3_600_000
    if (nowMs < open) return open
    if (nowMs < close) return Math.min(close, Math.floor(nowMs / MINUTE_MS) * MINUTE_MS + MINUTE_MS)
  }
  return nowMs + DAY_MS
}

/** Freshness of an answer computed from filings. */
export const filingsFreshness = (
  latest: { readonly acceptedMs: number | null; readonly lastPeriodicFiled: string | null },
  nowMs: number,
  next: "periodic" | "stream"
): Freshness => {
  const asOf = latest.acceptedMs ?? nowMs
  const periodic = latest.lastPeriodicFiled
  const ageDays = periodic === null ? Number.POSITIVE_INFINITY : (nowMs - Date.parse(`${periodic}T00:00:00Z`)) / DAY_MS
  const status: Status = ageDays <= 135 ? "live" : ageDays <= 405 ? "delayed" : "stale"
  const expected = periodic === null ? Number.NaN : Date.parse(`${periodic}T00:00:00Z`) + 91 * DAY_MS
  const nextMs =
    next === "periodic" && Number.isFinite(expected) && expected > nowMs ? expected : nextEdgarMomentMs(nowMs)
  return { as_of: iso(Math.min(asOf, nowMs)), status, next_update_at: iso(Math.max(nextMs, nowMs)) }
}
