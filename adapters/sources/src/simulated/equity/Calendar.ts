/** Dates as `YYYY-MM-DD` strings, computed in UTC (calendar days, no time zone involved). */

const toMs = (date: string): number =>
  Date.UTC(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10)))

/** Day strings by epoch day, made once each (the generator turns days into strings millions of times). */
const dayStrings = new Map<number, string>()
const fromMs = (ms: number): string => {
  const day = Math.floor(ms / 86_400_000)
  let text = dayStrings.get(day)
  if (text === undefined) {
    text = new Date(day * 86_400_000).toISOString().slice(0, 10)
    dayStrings.set(day, text)
  }
  return text
}

export const addDays = (date: string, days: number): string => fromMs(toMs(date) + days * 86_400_000)

/** The last day of a month (1-based month; months outside 1..12 roll into neighbouring years). */
export const monthEnd = (year: number, month: number): string => fromMs(Date.UTC(year, month, 0))

/** Day of week, 0 Sunday .. 6 Saturday. */
export const weekday = (date: string): number => new Date(toMs(date)).getUTCDay()

export const isWeekday = (date: string): boolean => weekday(date) !== 0 && weekday(date) !== 6

/** The date itself when a weekday, else the following Monday. */
export const onOrAfterWeekday = (date: string): string => {
  let day = date
  while (!isWeekday(day)) day = addDays(day, 1)
  return day
}

/** Whole days from `from` to `to`. */
export const daysBetween = (from: string, to: string): number => Math.round((toMs(to) - toMs(from)) / 86_400_000)

/** Every weekday from `from` to `to`, inclusive. */
export const weekdaysBetween = (from: string, to: string): ReadonlyArray<string> => {
  const days: Array<string> = []
  for (let day = from; day <= to; day = addDays(day, 1)) if (isWeekday(day)) days.push(day)
  return days
}
