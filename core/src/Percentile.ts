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
 * date incrementally as samples arrive and age out, so no request sorts history. `CadenceWindow` is the compact form
 * the crypto baselines keep (samples on a fixed cadence: their times are implied by their place).
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

/** Slot indices of a ring of `capacity` slots: two bytes each while they fit. */
const slotIndices = (capacity: number): Uint16Array | Uint32Array =>
  capacity <= 65_536 ? new Uint16Array(capacity) : new Uint32Array(capacity)

/** Which word of a float64's two 32-bit words holds its high (sign and exponent) half on this machine. */
const radixHigh = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0

/**
 * Orders slots by value (`sort`) with scratch of its own, grown to the largest sort it has made: whoever sorts
 * many windows (a plane advancing every asset's baselines) makes one sorter and hands it to each window, so the
 * scratch is allocated once for them all and belongs to that owner. Synchronous: one sort at a time.
 */
export class SlotSorter {
  private keysHi = new Uint32Array(0)
  private keysLo = new Uint32Array(0)
  private slots = new Uint32Array(0)
  private keysHi2 = new Uint32Array(0)
  private keysLo2 = new Uint32Array(0)
  private slots2 = new Uint32Array(0)
  private readonly counts = new Uint32Array(2048)
  private readonly float = new Float64Array(1)
  private readonly words = new Uint32Array(this.float.buffer)

  /**
   * Orders `slots` (given oldest first) by their finite `values`, equal values (0 and -0 included) keeping their
   * age order: what a stable sort with `(a, b) => values[a] - values[b]` gives, without a comparator call per
   * pair (a window's first fill sorts thousands of samples, and a reopen fills every window of every asset). A
   * stable least-significant-digit radix sort, 11 bits a pass, over each value's float64 bits made
   * order-preserving (-0 read as 0; a negative value's bits inverted, a positive one's sign bit set): six passes
   * over the slots, a pass skipped when every key has the same digit there.
   */
  sort(slots: Array<number>, values: Float64Array): void {
    const n = slots.length
    if (n < 2) return
    if (this.slots.length < n) {
      this.keysHi = new Uint32Array(n)
      this.keysLo = new Uint32Array(n)
      this.slots = new Uint32Array(n)
      this.keysHi2 = new Uint32Array(n)
      this.keysLo2 = new Uint32Array(n)
      this.slots2 = new Uint32Array(n)
    }
    let hi = this.keysHi
    let lo = this.keysLo
    let sl = this.slots
    let hi2 = this.keysHi2
    let lo2 = this.keysLo2
    let sl2 = this.slots2
    const float = this.float
    const words = this.words
    const low = 1 - radixHigh
    for (let i = 0; i < n; i++) {
      const slot = slots[i] as number
      const v = values[slot] as number
      float[0] = v === 0 ? 0 : v
      const h = words[radixHigh] as number
      const l = words[low] as number
      if (h >= 0x80000000) {
        hi[i] = ~h >>> 0
        lo[i] = ~l >>> 0
      } else {
        hi[i] = (h | 0x80000000) >>> 0
        lo[i] = l
      }
      sl[i] = slot
    }
    const counts = this.counts
    for (let pass = 0; pass < 6; pass++) {
      const shift = (pass % 3) * 11
      const keys = pass < 3 ? lo : hi
      counts.fill(0)
      for (let i = 0; i < n; i++) {
        const digit = ((keys[i] as number) >>> shift) & 2047
        counts[digit] = (counts[digit] as number) + 1
      }
      // Every key has this digit: the pass would not move anything.
      if (counts[((keys[0] as number) >>> shift) & 2047] === n) continue
      let sum = 0
      for (let d = 0; d < 2048; d++) {
        const c = counts[d] as number
        counts[d] = sum
        sum += c
      }
      for (let i = 0; i < n; i++) {
        const digit = ((keys[i] as number) >>> shift) & 2047
        const at = counts[digit] as number
        counts[digit] = at + 1
        hi2[at] = hi[i] as number
        lo2[at] = lo[i] as number
        sl2[at] = sl[i] as number
      }
      const h = hi
      hi = hi2
      hi2 = h
      const l = lo
      lo = lo2
      lo2 = l
      const s = sl
      sl = sl2
      sl2 = s
    }
    for (let i = 0; i < n; i++) slots[i] = sl[i] as number
  }
}

/** `SlotSorter.sort` with a sorter of its own (one sort; a caller sorting many makes one sorter). */
export const sortSlotsByValue = (slots: Array<number>, values: Float64Array): void =>
  new SlotSorter().sort(slots, values)

/**
 * A trailing time window of samples taken on a fixed cadence (one per `cadenceMs` step; a step without a finite
 * value is a hole), kept sorted by value: what `SortedWindow` answers, in about a third of its memory. The samples
 * sit in a ring of float64 slots in time order, so their times are implied (the oldest slot's time plus the
 * cadence per slot), and the sorted view is an array of slot indices (two bytes each up to 65,536 slots) ordered
 * by value and, among equal values, by age: the sample leaving the window is the first of its run of equals, found
 * by one binary search. Both arrays are typed arrays sized to the window (1/32 plus 16 slots of headroom), so an
 * hourly 90-day window of 2,160 samples takes about 22 KB instead of the three JavaScript arrays (times, values,
 * sorted values) of about 22 KB each that `SortedWindow` grows.
 */
export class CadenceWindow {
  /** Values in time order from `head` (a ring); NaN marks a step without a sample. */
  private values: Float64Array = new Float64Array(0)
  /** The first `finite` entries: slots of `values` ascending by value, then by age. */
  private order: Uint16Array | Uint32Array = new Uint16Array(0)
  private head = 0
  /** Slots in use (steps from the oldest to the newest, holes included). */
  private count = 0
  private finite = 0
  /** Time of the oldest slot. */
  private firstT = 0

  readonly cadenceMs: number

  constructor(cadenceMs: number) {
    this.cadenceMs = cadenceMs
    if (!(cadenceMs > 0) || !Number.isFinite(cadenceMs)) throw new RangeError("CadenceWindow: cadence must be > 0")
  }

  /** Number of samples in the window (finite values). */
  get n(): number {
    return this.finite
  }

  /** Time of the newest step held (a hole included), or undefined when no sample is held. */
  get newestAt(): number | undefined {
    return this.count === 0 ? undefined : this.firstT + (this.count - 1) * this.cadenceMs
  }

  private valueAt(k: number): number {
    return this.values[this.order[k] as number] as number
  }

  /** First sorted position whose value is >= `value`. */
  private lower(value: number): number {
    let lo = 0
    let hi = this.finite
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.valueAt(mid) < value) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  /** First sorted position whose value is > `value`. */
  private upper(value: number): number {
    let lo = 0
    let hi = this.finite
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.valueAt(mid) <= value) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  /** Moves the ring to new arrays of `capacity` slots (>= `count`), the oldest slot first. */
  private relayout(capacity: number): void {
    const cap = this.values.length
    const values = new Float64Array(capacity)
    const order = slotIndices(capacity)
    for (let k = 0; k < this.count; k++) values[k] = this.values[(this.head + k) % cap] as number
    for (let i = 0; i < this.finite; i++) order[i] = ((this.order[i] as number) - this.head + cap) % cap
    this.values = values
    this.order = order
    this.head = 0
  }

  private static headroom(slots: number): number {
    return slots + (slots >> 5) + 16
  }

  /** The steps from the newest one held to `t` (>= 1), or a RangeError. */
  private stepsTo(t: number, newest: number): number {
    const steps = (t - newest) / this.cadenceMs
    if (!(steps >= 1) || !Number.isInteger(steps)) {
      throw new RangeError("CadenceWindow: samples must arrive in time order, on the cadence's steps")
    }
    return steps
  }

  /** Adds a sample taken at `t` (a whole number of steps after the newest one held); a non-finite value is a hole. */
  push(t: number, value: number): void {
    this.pushMany([t], [value])
  }

  /**
   * Adds samples (times ascending, each a whole number of steps after the one before): one sort of the new values
   * (by `sorter`: whoever fills many windows hands them one) and a merge into the sorted view from its end.
   */
  pushMany(times: ReadonlyArray<number>, values: ReadonlyArray<number>, sorter: SlotSorter = new SlotSorter()): void {
    if (times.length === 0) return
    let newest = this.newestAt
    for (const t of times) {
      if (newest !== undefined) this.stepsTo(t, newest)
      newest = t
    }
    const first = times[0] as number
    if (this.count === 0) this.firstT = first
    const oldNewest = this.count === 0 ? first - this.cadenceMs : (this.newestAt as number)
    const slots = this.count + ((newest as number) - oldNewest) / this.cadenceMs
    if (slots > this.values.length) this.relayout(CadenceWindow.headroom(slots))
    const cap = this.values.length
    const fresh: Array<number> = []
    let at = oldNewest
    for (let i = 0; i < times.length; i++) {
      const t = times[i] as number
      for (at += this.cadenceMs; at < t; at += this.cadenceMs) {
        this.values[(this.head + this.count) % cap] = Number.NaN
        this.count++
      }
      const slot = (this.head + this.count) % cap
      const v = values[i] as number
      this.count++
      if (Number.isFinite(v)) {
        this.values[slot] = v
        fresh.push(slot)
      } else this.values[slot] = Number.NaN
    }
    if (fresh.length === 0) {
      this.releaseHoles()
      return
    }
    // Stable: equal values keep their time order, so the sorted view stays ordered by age within a value.
    const vals = this.values
    sorter.sort(fresh, vals)
    const order = this.order
    let i = this.finite - 1
    let j = fresh.length - 1
    let k = this.finite + fresh.length - 1
    while (j >= 0) {
      if (i >= 0 && (vals[order[i] as number] as number) > (vals[fresh[j] as number] as number)) {
        order[k--] = order[i--] as number
      } else order[k--] = fresh[j--] as number
    }
    this.finite += fresh.length
  }

  /**
   * A window without a sample forgets its steps and frees its arrays (a measure an asset never has, such as a
   * venue's book depth where the venue gives none, would otherwise hold a window of holes); the next sample starts
   * a new ring.
   */
  private releaseHoles(): void {
    if (this.finite !== 0) return
    this.count = 0
    this.head = 0
    if (this.values.length > 0) {
      this.values = new Float64Array(0)
      this.order = new Uint16Array(0)
    }
  }

  /** Removes every step taken before `t`. */
  evictBefore(t: number): void {
    const cap = this.values.length
    while (this.count > 0 && this.firstT < t) {
      const v = this.values[this.head] as number
      if (!Number.isNaN(v)) {
        // The oldest sample of its value is the first of its run in the sorted view.
        const at = this.lower(v)
        this.order.copyWithin(at, at + 1, this.finite)
        this.finite--
      }
      this.head = (this.head + 1) % cap
      this.count--
      this.firstT += this.cadenceMs
    }
    if (this.count === 0) this.head = 0
    if (this.finite === 0) this.releaseHoles()
    else if (cap > 64 && CadenceWindow.headroom(this.count) * 2 < cap) {
      this.relayout(CadenceWindow.headroom(this.count))
    }
  }

  /** Mid-rank percentile of `value` in the window: `percentileRank` over `sortedValues`, without the copy. */
  rank(value: number, minN: number = MinBaselineN): number | undefined {
    const n = this.finite
    if (n < Math.max(1, minN) || !Number.isFinite(value)) return undefined
    const below = this.lower(value)
    const equal = this.upper(value) - below
    return roundPctl((100 * (below + equal / 2)) / n)
  }

  /** The samples ascending (a copy). */
  get sortedValues(): Float64Array {
    const out = new Float64Array(this.finite)
    for (let k = 0; k < this.finite; k++) out[k] = this.valueAt(k)
    return out
  }

  /** The samples oldest first, holes skipped (a copy). */
  valuesInTimeOrder(): Array<number> {
    const out: Array<number> = []
    const cap = this.values.length
    for (let k = 0; k < this.count; k++) {
      const v = this.values[(this.head + k) % cap] as number
      if (!Number.isNaN(v)) out.push(v)
    }
    return out
  }
}
