/**
 * The US regular trading session (NYSE/Nasdaq), true to history from 1970: 09:30 to 16:00 New York time on
 * weekdays that are not exchange holidays or one-off closures, and to 13:00 (14:00 in a few older years) on the
 * scheduled early closes. New York time follows the current US daylight-saving rule (second Sunday of March to
 * first Sunday of November).
 *
 * Each holiday applies from the year it did (see `HOLIDAY_RULES`): Martin Luther King Jr. Day from 1998,
 * Juneteenth from 2022, Washington's Birthday and Memorial Day on their fixed dates until 1970 and on Mondays
 * from 1971, Election Day in the presidential years 1972, 1976 and 1980. A Saturday holiday is observed the
 * Friday before (except New Year's Day: that Friday closes the accounting year and trades), a Sunday one the
 * Monday after.
 *
 * Sources, checked against each other:
 * - NYSE, "Holidays and Trading Hours" (https://www.nyse.com/markets/hours-calendars): the current rules, early
 *   closes and the announced calendar of the coming years;
 * - NYSE Group, "NYSE Closings" historical record (the exchange archives' list of every closing since 1885,
 *   with the reason), for the holiday history and the one-off closures;
 * - NYSE notices and press releases for the one-off closures since 2001 (the September 11 attacks, the days of
 *   mourning for Presidents Reagan, Ford, G. H. W. Bush and Carter, Hurricane Sandy).
 * Unscheduled late opens and weather-related early closes are not modelled; nor are the session hours before
 * 1985 (10:00 open) and 1974 (15:30 close): a bar's time stays the 09:30 open.
 */
import { dateOf, dayOf } from "./Statements.ts"

const HOUR_MS = 3_600_000
const DAY_MS = 86_400_000

/** Weekday of a day number: 0 Sunday ... 6 Saturday. */
const weekday = (day: number): number => (((day + 4) % 7) + 7) % 7

const ymd = (year: number, month: number, day: number): number =>
  dayOf(`${year}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`)

/** Day number of the n-th (1-based) `wd` of a month; n = -1 for the last. */
const nthWeekday = (year: number, month: number, wd: number, n: number): number => {
  if (n > 0) {
    const first = ymd(year, month, 1)
    return first + ((wd - weekday(first) + 7) % 7) + (n - 1) * 7
  }
  const last = (month === 12 ? ymd(year + 1, 1, 1) : ymd(year, month + 1, 1)) - 1
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
  return ymd(year, month, day)
}

/** A fixed-date holiday as observed: Saturday -> the Friday before, Sunday -> the Monday after. */
const observed = (day: number): number => (weekday(day) === 6 ? day - 1 : weekday(day) === 0 ? day + 1 : day)

/** A holiday rule: the day it closes the market in a year (undefined: none that year), and its years. */
interface HolidayRule {
  readonly name: string
  readonly from?: number
  readonly through?: number
  readonly day: (year: number) => number | undefined
}

/** The recurring holidays, each with the years it applied (NYSE Closings record; NYSE holiday calendar). */
export const HOLIDAY_RULES: ReadonlyArray<HolidayRule> = [
  {
    name: "New Year's Day",
    // Sunday: the Monday after. Saturday: not observed (the Friday before ends the accounting year).
    day: (y) => {
      const d = ymd(y, 1, 1)
      return weekday(d) === 6 ? undefined : weekday(d) === 0 ? d + 1 : d
    }
  },
  { name: "Martin Luther King Jr. Day", from: 1998, day: (y) => nthWeekday(y, 1, 1, 3) },
  { name: "Washington's Birthday", through: 1970, day: (y) => observed(ymd(y, 2, 22)) },
  { name: "Washington's Birthday", from: 1971, day: (y) => nthWeekday(y, 2, 1, 3) },
  { name: "Good Friday", day: (y) => easter(y) - 2 },
  { name: "Memorial Day", through: 1970, day: (y) => observed(ymd(y, 5, 30)) },
  { name: "Memorial Day", from: 1971, day: (y) => nthWeekday(y, 5, 1, -1) },
  { name: "Juneteenth", from: 2022, day: (y) => observed(ymd(y, 6, 19)) },
  { name: "Independence Day", day: (y) => observed(ymd(y, 7, 4)) },
  { name: "Labor Day", day: (y) => nthWeekday(y, 9, 1, 1) },
  {
    name: "Election Day",
    // Every year until 1968; then the presidential years through 1980.
    through: 1980,
    day: (y) => (y <= 1968 || y % 4 === 0 ? nthWeekday(y, 11, 1, 1) + 1 : undefined)
  },
  { name: "Thanksgiving Day", day: (y) => nthWeekday(y, 11, 4, 4) },
  { name: "Christmas Day", day: (y) => observed(ymd(y, 12, 25)) }
]

/** One-off full-day closures since 1970 (NYSE Closings record; NYSE notices from 2001). */
export const ONE_OFF_CLOSURES: ReadonlyArray<readonly [string, string]> = [
  ["1972-12-28", "day of mourning for President Truman"],
  ["1973-01-25", "day of mourning for President Johnson"],
  ["1977-07-14", "New York City blackout"],
  ["1985-09-27", "Hurricane Gloria"],
  ["1994-04-27", "day of mourning for President Nixon"],
  ["2001-09-11", "September 11 attacks"],
  ["2001-09-12", "September 11 attacks"],
  ["2001-09-13", "September 11 attacks"],
  ["2001-09-14", "September 11 attacks"],
  ["2004-06-11", "day of mourning for President Reagan"],
  ["2007-01-02", "day of mourning for President Ford"],
  ["2012-10-29", "Hurricane Sandy"],
  ["2012-10-30", "Hurricane Sandy"],
  ["2018-12-05", "day of mourning for President George H. W. Bush"],
  ["2025-01-09", "day of mourning for President Carter"]
]

/** The one-off closures by year, built once from the list. */
const closuresByYear: ReadonlyMap<number, ReadonlyArray<readonly [number, string]>> = (() => {
  const byYear = new Map<number, Array<readonly [number, string]>>()
  for (const [date, why] of ONE_OFF_CLOSURES) {
    const year = Number(date.slice(0, 4))
    byYear.set(year, [...(byYear.get(year) ?? []), [dayOf(date), why]])
  }
  return byYear
})()

/** Weekday closures of a year, computed from the rules. */
const closuresOf = (year: number): ReadonlyMap<number, string> => {
  const out = new Map<number, string>()
  for (const rule of HOLIDAY_RULES) {
    if ((rule.from !== undefined && year < rule.from) || (rule.through !== undefined && year > rule.through)) continue
    const day = rule.day(year)
    if (day !== undefined && weekday(day) !== 0 && weekday(day) !== 6) out.set(day, rule.name)
  }
  for (const [day, why] of closuresByYear.get(year) ?? []) out.set(day, why)
  return out
}

/** The years whose closures are tabled once at load (a few thousand rule evaluations); others are computed. */
const TABLED_FROM = 1970
const TABLED_THROUGH = 2100
const closuresTable: ReadonlyArray<ReadonlyMap<number, string>> = Array.from(
  { length: TABLED_THROUGH - TABLED_FROM + 1 },
  (_, i) => closuresOf(TABLED_FROM + i)
)

/** Weekday closures of a year (holidays and one-off closures), as day number -> why. */
export const closures = (year: number): ReadonlyMap<number, string> =>
  (Number.isInteger(year) && year >= TABLED_FROM && year <= TABLED_THROUGH
    ? closuresTable[year - TABLED_FROM]
    : undefined) ?? closuresOf(year)

/** Exchange holidays and one-off closures of a year, as day numbers. */
export const holidays = (year: number): ReadonlySet<number> => new Set(closures(year).keys())

const yearOf = (day: number): number => Number(dateOf(day).slice(0, 4))

/** Why the market does not trade on a day (`weekend`, or the holiday or closure), or undefined on a trading day. */
export const closedReason = (day: number): string | undefined => {
  const wd = weekday(day)
  if (wd === 0 || wd === 6) return wd === 0 ? "Sunday" : "Saturday"
  return closures(yearOf(day)).get(day)
}

/** Whether a date (`YYYY-MM-DD` day number) is a trading day. */
export const isTradingDay = (day: number): boolean => closedReason(day) === undefined

/**
 * The early close of a trading day, in hours New York time (13 or 14), or undefined for a full session:
 * the day after Thanksgiving (14:00 in 1992, 13:00 from 1993); July 3 on a Monday, Tuesday or Thursday (from
 * 1995) or a Wednesday (from 2013); Friday July 5 (1996 to 2012); Christmas Eve on a Monday to Thursday (from
 * 1999; also 1996 to 1998); December 26 of 1997 and 2003; and Christmas Eve at 14:00 in 1974, 1975 and 1990 to
 * 1992.
 */
export const earlyCloseHour = (day: number): number | undefined => {
  if (!isTradingDay(day)) return undefined
  const date = dateOf(day)
  const year = yearOf(day)
  const md = date.slice(5)
  const wd = weekday(day)
  if (day === nthWeekday(year, 11, 4, 4) + 1) return year >= 1993 ? 13 : year === 1992 ? 14 : undefined
  if (md === "07-03" && year >= 1995 && (wd === 1 || wd === 2 || wd === 4)) return 13
  if (md === "07-03" && year >= 2013 && wd === 3) return 13
  if (md === "07-05" && year >= 1996 && year <= 2012 && wd === 5) return 13
  if (md === "12-24") {
    if (year >= 1996 && wd >= 1 && wd <= 4) return 13
    if (year === 1974 || year === 1975 || (year >= 1990 && year <= 1992)) return 14
  }
  if (date === "1997-12-26" || date === "2003-12-26") return 13
  return undefined
}

/** New York's offset from UTC in hours on a day (-4 in daylight saving time, else -5), at midday. */
const newYorkOffsetHours = (day: number): number => {
  const year = yearOf(day)
  const start = nthWeekday(year, 3, 0, 2)
  const end = nthWeekday(year, 11, 0, 1)
  return day >= start && day < end ? -4 : -5
}

/** Session open of a trading day (09:30 New York) in epoch ms. */
export const sessionOpenMs = (date: string): number => {
  const day = dayOf(date)
  return day * DAY_MS + (9.5 - newYorkOffsetHours(day)) * HOUR_MS
}

/** Session close of a trading day (16:00 New York, or the early close) in epoch ms. */
export const sessionCloseMs = (date: string): number => {
  const day = dayOf(date)
  return day * DAY_MS + ((earlyCloseHour(day) ?? 16) - newYorkOffsetHours(day)) * HOUR_MS
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
