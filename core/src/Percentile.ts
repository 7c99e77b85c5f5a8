/**
 * Percentile ranks of a measurement within its own history (DECISIONS, "Contextual value").
 *
 * - The baseline of a measure is the set of its samples inside a trailing window (default 90 days; funding also
 *   1 year) taken at a fixed cadence, described to clients as `{window, cadence, n}`.
 * - `pctl` is the mid-rank percentile: `100 x (below + equal / 2) / n`, where `below` counts baseline samples
 *   strictly smaller than the value and `equal` those equal to it (ties share the middle of their run). It lies
 *   in 0..100 and is rounded to one decimal. A value above every sample ranks 100, below every sample 0.
 * - Below `MinBaselineN` samples the percentile is not computed: the value is reported `insufficient_history`.
 *
 * Lookups are O(log n) binary searches on a sorted baseline; `SortedWindow` keeps that sorted baseline up to
 * date incrementally as samples arrive and age out, so no request sorts history.
 */

/** Fewest baseline samples a percentile is computed from. */
export const MinBaselineN = 30

/** Default baseline window, and the long one funding also reports (`pctl_1y`). */
export const BaselineWindows = {
  "90d": 90 * 24 * 3_600_000,
  "1y": 365 * 24 * 3_600_000
} as const
export type BaselineWindow = keyof typeof BaselineWindows

/** The history a percentile is measured against, as `baseline` reports it. */
export interface BaselineInfo {
  readonly window: string
  readonly cadence: string
  readonly n: number
}

/** Index of the first element of ascending `sorted` that is >= `value` (`sorted.length` if none). */
export const lowerBound = (sorted: ArrayLike<number>, value: number): number => {
  let lo = 0
  let hi = sorted.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if ((sorted[mid] as number) < value) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** Index of the first element of ascending `sorted` that is > `value` (`sorted.length` if none). */
export const upperBound = (sorted: ArrayLike<number>, value: number): number => {
  let lo = 0
  let hi = sorted.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if ((sorted[mid] as number) <= value) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** Rounds to one decimal (percentiles are published with one decimal). */
export const roundPctl = (x: number): number => Math.round(x * 10) / 10

/**
 * Mid-rank percentile (0..100, one decimal) of `value` among the ascending `sorted` samples; undefined when
 * there are fewer than `minN` samples or the value is not finite.
 */
export const percentileRank = (
  value: number,
  sorted: ArrayLike<number>,
  minN: number = MinBaselineN
): number | undefined => {
  const n = sorted.length
  if (n < Math.max(1, minN) || !Number.isFinite(value)) return undefined
  const below = lowerBound(sorted, value)
  const equal = upperBound(sorted, value) - below
  return roundPctl((100 * (below + equal / 2)) / n)
}

/** Ascending copy of the finite values (for one-off baselines built from a computed series). */
export const sortedFinite = (values: Iterable<number>): Array<number> => {
  const out: Array<number> = []
  for (const v of values) if (Number.isFinite(v)) out.push(v)
  return out.sort((a, b) => a - b)
}

/**
 * A trailing time window of samples kept sorted by value. Samples arrive in time order (`push`), old ones
 * leave with `evictBefore`; both keep the sorted view in step by binary search, so `rank` never sorts.
 */
export class SortedWindow {
  private readonly times: Array<number> = []
  private readonly values: Array<number> = []
  private head = 0
  private readonly sorted: Array<number> = []

  /** Number of samples in the window. */
  get n(): number {
    return this.sorted.length
  }

  /** Time of the newest sample, or undefined when empty. */
  get newestAt(): number | undefined {
    return this.times.length > this.head ? this.times[this.times.length - 1] : undefined
  }

  /** Adds a sample taken at `t` (not earlier than the newest one); non-finite values are skipped. */
  push(t: number, value: number): void {
    const newest = this.newestAt
    if (newest !== undefined && t < newest) throw new RangeError("SortedWindow.push: samples must arrive in time order")
    if (!Number.isFinite(value)) return
    this.times.push(t)
    this.values.push(value)
    this.sorted.splice(upperBound(this.sorted, value), 0, value)
  }

  /**
   * Adds many samples at once (times ascending, not earlier than the newest one): one sort of the new values
   * and a linear merge, instead of one insertion each.
   */
  pushMany(times: ReadonlyArray<number>, values: ReadonlyArray<number>): void {
    const fresh: Array<number> = []
    let last = this.newestAt ?? Number.NEGATIVE_INFINITY
    for (let i = 0; i < times.length; i++) {
      const t = times[i] as number
      const v = values[i] as number
      if (t < last) throw new RangeError("SortedWindow.pushMany: samples must arrive in time order")
      last = t
      if (!Number.isFinite(v)) continue
      this.times.push(t)
      this.values.push(v)
      fresh.push(v)
    }
    if (fresh.length === 0) return
    // A typed array sorts numerically without a comparator call per pair.
    const add = Float64Array.from(fresh).sort()
    const old = this.sorted.splice(0, this.sorted.length)
    let i = 0
    let j = 0
    while (i < old.length || j < add.length) {
      if (j >= add.length || (i < old.length && (old[i] as number) <= (add[j] as number))) {
        this.sorted.push(old[i++] as number)
      } else this.sorted.push(add[j++] as number)
    }
  }

  /** Removes every sample taken before `t`. */
  evictBefore(t: number): void {
    while (this.head < this.times.length && (this.times[this.head] as number) < t) {
      const v = this.values[this.head] as number
      this.sorted.splice(lowerBound(this.sorted, v), 1)
      this.head++
    }
    if (this.head > 1024 && this.head * 2 > this.times.length) {
      this.times.splice(0, this.head)
      this.values.splice(0, this.head)
      this.head = 0
    }
  }

  /** Mid-rank percentile of `value` in the window (see `percentileRank`). */
  rank(value: number, minN: number = MinBaselineN): number | undefined {
    return percentileRank(value, this.sorted, minN)
  }

  /** The sorted samples (read-only view). */
  get sortedValues(): ReadonlyArray<number> {
    return this.sorted
  }
}
