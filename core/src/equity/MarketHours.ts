/**
 * The US regular trading session (NYSE/Nasdaq): 09:30 to 16:00 New York time on weekdays that are not exchange
 * holidays. New York time follows US daylight saving (second Sunday of March to first Sunday of November).
 * Holidays by rule: New Year's Day, Martin Luther King Jr. Day, Washington's Birthday, Good Friday, Memorial
 * Day, Juneteenth (from 2022), Independence Day, Labor Day, Thanksgiving, Christmas; a Saturday holiday is
 * observed the Friday before (except New Year's Day), a Sunday one the Monday after. Early closes are not
 * modelled (the session is taken to run to 16:00).
 */
import { dateOf, dayOf } from "./Statements.ts"

const HOUR_MS = 3_600_000
const DAY_MS = 86_400_000

/** Weekday of a day number: 0 Sunday ... 6 Saturday. */
const weekday = (day: number): number => (((day + 4) % 7) + 7) % 7

/** Day number of the n-th (1-based) `wd` of a month; n = -1 for the last. */
const nthWeekday = (year: number, month: number, wd: number, n: number): number => {
  if (n > 0) {
    const first = dayOf(`${year}-${String(month).padStart(2, "0")}-01`)
    return first + ((wd - weekday(first) + 7) % 7) + (n - 1) * 7
  }
  const nextFirst = dayOf(
    `${month === 12 ? year + 1 : year}-${String(month === 12 ? 1 : month + 1).padStart(2, "0")}-01`
  )
  const last = nextFirst - 1
  return last - ((weekday(last) - wd + 7) % 7)
}

/** Easter Sunday (Gregorian, anonymous algorithm). */
const easter = (year: number): number => {
  const a = year % 19
  const b = Math.floor(year / 100)
  const c = year % 100
  const d = Math.floor(b / 4)
  const e = b % 4
  const f = Math.floor((b + 8) / 25)
  const g = Math.floor((b - f + 1) / 3)
  const h = (19 * a + b - d - g + 15) % 30
  const i = Math.floor(c / 4)
  const k = c % 4
  const l = (32 + 2 * e + 2 * i - h - k) % 7
  const m = Math.floor((a + 11 * h + 22 * l) / 451)
  const month = Math.floor((h + l - 7 * m + 114) / 31)
  const day = ((h + l - 7 * m + 114) % 31) + 1
  return dayOf(`${year}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`)
}

const observed = (day: number): number => (weekday(day) === 6 ? day - 1 : weekday(day) === 0 ? day + 1 : day)

const holidayCache = new Map<number, ReadonlySet<number>>()

/** Exchange holidays of a year, as day numbers. */
export const holidays = (year: number): ReadonlySet<number> => {
  const hit = holidayCache.get(year)
  if (hit !== undefined) return hit
  const fixed = (m: number, d: number) => dayOf(`${year}-${String(m).padStart(2, "0")}-${String(d).padStart(2, "0")}`)
  const out = new Set<number>()
  const newYear = fixed(1, 1)
  // A Saturday New Year's Day is not observed on the Friday before (that Friday ends the prior year).
  if (weekday(newYear) === 0) out.add(newYear + 1)
  else if (weekday(newYear) !== 6) out.add(newYear)
  out.add(nthWeekday(year, 1, 1, 3))
  out.add(nthWeekday(year, 2, 1, 3))
  out.add(easter(year) - 2)
  out.add(nthWeekday(year, 5, 1, -1))
  if (year >= 2022) out.add(observed(fixed(6, 19)))
  out.add(observed(fixed(7, 4)))
  out.add(nthWeekday(year, 9, 1, 1))
  out.add(nthWeekday(year, 11, 4, 4))
  out.add(observed(fixed(12, 25)))
  holidayCache.set(year, out)
  return out
}

/** Whether a date (`YYYY-MM-DD` day number) is a trading day. */
export const isTradingDay = (day: number): boolean => {
  const wd = weekday(day)
  if (wd === 0 || wd === 6) return false
  return !holidays(Number(dateOf(day).slice(0, 4))).has(day)
}

/** New York's offset from UTC in hours on a day (-4 in daylight saving time, else -5), at midday. */
const newYorkOffsetHours = (day: number): number => {
  const year = Number(dateOf(day).slice(0, 4))
  const start = nthWeekday(year, 3, 0, 2)
  const end = nthWeekday(year, 11, 0, 1)
  return day >= start && day < end ? -4 : -5
}

/** Session open of a trading day (09:30 New York) in epoch ms. */
export const sessionOpenMs = (date: string): number => {
  const day = dayOf(date)
  return day * DAY_MS + (9.5 - newYorkOffsetHours(day)) * HOUR_MS
}

/** Session close of a trading day (16:00 New York) in epoch ms. */
export const sessionCloseMs = (date: string): number => {
  const day = dayOf(date)
  return day * DAY_MS + (16 - newYorkOffsetHours(day)) * HOUR_MS
}

/** The New York calendar date at an instant. */
export const newYorkDate = (ms: number): string => {
  const utcDay = Math.floor(ms / DAY_MS)
  // The offset of the UTC day is right except in the hours around a switch, where the result is off by one
  // hour at most: irrelevant for a session that opens at 09:30.
  return dateOf(Math.floor((ms + newYorkOffsetHours(utcDay) * HOUR_MS) / DAY_MS))
}

/** Whether the regular session is open at `ms`. */
export const isSessionOpen = (ms: number): boolean => {
  const date = newYorkDate(ms)
  if (!isTradingDay(dayOf(date))) return false
  return ms >= sessionOpenMs(date) && ms < sessionCloseMs(date)
}

/** The next session open strictly after `ms`. */
export const nextSessionOpenMs = (ms: number): number => {
  let day = dayOf(newYorkDate(ms))
  for (let i = 0; i < 15; i++, day++) {
    if (!isTradingDay(day)) continue
    const open = sessionOpenMs(dateOf(day))
    if (open > ms) return open
  }
  return sessionOpenMs(dateOf(day))
}

/** The trading date of the last session that has closed at or before `ms`. */
export const lastClosedSession = (ms: number): string => {
  let day = dayOf(newYorkDate(ms))
  for (let i = 0; i < 15; i++, day--) {
    if (isTradingDay(day) && sessionCloseMs(dateOf(day)) <= ms) return dateOf(day)
  }
  return dateOf(day)
}
