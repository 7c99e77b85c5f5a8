/**
 * Daily price bars of a simulated company: a geometric random walk with the company's growth as drift and its
 * own volatility, one bar per weekday (US market holidays are not modelled). Bars are split-adjusted, as price
 * series are usually served: before a split every price is divided, and every volume multiplied, by the ratio.
 * `unadjustedClose` gives the price actually traded that day (Form 4 prices, 13F values).
 */
import { newYorkToUtcMs } from "../../sec/NewYorkTime.ts"
import { weekdaysBetween } from "./Calendar.ts"
import type { CompanyProfile } from "./Companies.ts"
import { stream } from "./Seeded.ts"

/** One daily bar; `tMs` is the session's open (09:30 New York time) in epoch milliseconds. */
export interface SimulatedDailyBar {
  readonly tMs: number
  readonly o: number
  readonly h: number
  readonly l: number
  readonly c: number
  readonly v: number
}

export interface PriceHistory {
  /** Split-adjusted bars, oldest first. */
  readonly bars: ReadonlyArray<SimulatedDailyBar>
  /** The trading days of `bars`, `YYYY-MM-DD`. */
  readonly days: ReadonlyArray<string>
  /** The close actually traded on a day (not split-adjusted), or of the last trading day before it. */
  readonly unadjustedClose: (date: string) => number
}

const cents = (x: number): number => Math.round(x * 100) / 100

/** 09:30 New York time of each session day, computed once per day for every company (time zone math is slow). */
const sessionOpens = new Map<string, number>()
const sessionOpen = (day: string): number => {
  let ms = sessionOpens.get(day)
  if (ms === undefined) {
    const [year, month, date] = day.split("-").map(Number) as [number, number, number]
    ms = newYorkToUtcMs(year, month, date, 9, 30, 0)
    sessionOpens.set(day, ms)
  }
  return ms
}

export const generatePrices = (input: {
  readonly seed: number
  readonly profile: CompanyProfile
  readonly from: string
  readonly to: string
  /** Unadjusted price on the first day. */
  readonly startPrice: number
  /** Shares outstanding (pre-split units), for volume. */
  readonly shares: number
  readonly split: { readonly date: string; readonly ratio: number } | null
}): PriceHistory => {
  const { profile, split } = input
  const random = stream(input.seed, `prices:${profile.cik}`)
  const days = weekdaysBetween(input.from, input.to)
  const drift = Math.log(1 + profile.growth) / 252
  const vol = profile.dailyVolatility
  const ratio = split === null ? 1 : split.ratio
  // The walk runs in post-split units throughout; pre-split prices are these times the ratio.
  let close = input.startPrice / ratio
  const bars: Array<SimulatedDailyBar> = []
  const unadjusted = new Map<string, number>()
  for (const day of days) {
    const open = close * (1 + random.normal() * vol * 0.3)
    close = close * Math.exp(drift - (vol * vol) / 2 + vol * random.normal())
    const high = Math.max(open, close) * (1 + Math.abs(random.normal()) * vol * 0.5)
    const low = Math.min(open, close) * (1 - Math.abs(random.normal()) * vol * 0.5)
    const volume = Math.round(input.shares * ratio * 0.006 * Math.exp(random.normal() * 0.35))
    const bar = {
      tMs: sessionOpen(day),
      o: cents(open),
      h: cents(high),
      l: cents(low),
      c: cents(close),
      v: volume
    }
    bars.push({ ...bar, l: Math.min(bar.l, bar.o, bar.c), h: Math.max(bar.h, bar.o, bar.c) })
    const factor = split !== null && day < split.date ? ratio : 1
    unadjusted.set(day, cents(bar.c * factor))
  }
  const unadjustedClose = (date: string): number => {
    // The last trading day on or before `date` (binary search over the sorted days).
    let low = 0
    let high = days.length - 1
    let found = 0
    while (low <= high) {
      const middle = (low + high) >> 1
      if (days[middle]! <= date) {
        found = middle
        low = middle + 1
      } else high = middle - 1
    }
    return unadjusted.get(days[found]!)!
  }
  return { bars, days, unadjustedClose }
}

/**
 * The bars of a further share class (its own ticker): the common stock's session by session, at a premium or
 * discount of its own that wanders (a bounded random walk of about 0.2 % a day, within +/-6 %), on a volume of its
 * own, as two classes of one company trade (GOOGL and GOOG). Deterministic per seed, company and ticker, and
 * independent of every other stream, so adding a class changes no other series.
 */
export const classPrices = (input: {
  readonly seed: number
  readonly cik: string
  readonly ticker: string
  readonly primary: ReadonlyArray<SimulatedDailyBar>
}): ReadonlyArray<SimulatedDailyBar> => {
  const random = stream(input.seed, `prices:${input.cik}:${input.ticker}`)
  let premium = (random.next() - 0.5) * 0.06
  return input.primary.map((bar) => {
    premium = Math.max(-0.06, Math.min(0.06, premium + random.normal() * 0.002))
    const f = 1 + premium
    const o = cents(bar.o * f)
    const c = cents(bar.c * f)
    return {
      tMs: bar.tMs,
      o,
      h: Math.max(cents(bar.h * f), o, c),
      l: Math.min(cents(bar.l * f), o, c),
      c,
      v: Math.round(bar.v * 0.4 * Math.exp(random.normal() * 0.3))
    }
  })
}
