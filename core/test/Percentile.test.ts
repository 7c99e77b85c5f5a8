import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  CadenceWindow,
  lowerBound,
  MinBaselineN,
  percentileRank,
  SortedWindow,
  sortedFinite,
  sortSlotsByValue,
  upperBound
} from "../src/Percentile.ts"
import { hasHistory, readText } from "./crypto/support/SharedData.ts"

/** Brute force: count below and equal by scanning, no sorting, no binary search. */
const bruteForce = (value: number, samples: ReadonlyArray<number>): number => {
  let below = 0
  let equal = 0
  for (const s of samples) {
    if (s < value) below++
    else if (s === value) equal++
  }
  return Math.round(((100 * (below + equal / 2)) / samples.length) * 10) / 10
}

// Few distinct values so ties are frequent.
const tied = fc.integer({ min: -20, max: 20 }).map((x) => x / 4)

describe("percentileRank", () => {
  it("equals a brute-force mid-rank on random data with ties", () => {
    fc.assert(
      fc.property(fc.array(tied, { minLength: MinBaselineN, maxLength: 400 }), tied, (samples, value) => {
        expect(percentileRank(value, sortedFinite(samples))).toBe(bruteForce(value, samples))
      })
    )
  })

  it("equals a brute-force mid-rank on random doubles", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { minLength: MinBaselineN, maxLength: 300 }),
        fc.double({ min: -1e6, max: 1e6, noNaN: true }),
        (samples, value) => {
          expect(percentileRank(value, sortedFinite(samples))).toBe(bruteForce(value, samples))
        }
      )
    )
  })

  it("ranks an existing sample at the middle of its tie run", () => {
    const samples = Array.from({ length: 40 }, (_, i) => (i < 10 ? 1 : i < 30 ? 2 : 3))
    // 10 below, 20 equal: (10 + 10) / 40 = 50 %.
    expect(percentileRank(2, samples)).toBe(50)
    expect(percentileRank(0, samples)).toBe(0)
    expect(percentileRank(4, samples)).toBe(100)
  })

  it("refuses fewer samples than the documented minimum, and non-finite values", () => {
    const samples = Array.from({ length: MinBaselineN - 1 }, (_, i) => i)
    expect(percentileRank(3, samples)).toBeUndefined()
    expect(percentileRank(3, [...samples, 100])).toBeDefined()
    expect(percentileRank(Number.NaN, [...samples, 100])).toBeUndefined()
  })

  it("binary searches agree with linear scans", () => {
    fc.assert(
      fc.property(fc.array(tied, { maxLength: 100 }), tied, (xs, v) => {
        const s = sortedFinite(xs)
        expect(lowerBound(s, v)).toBe(s.filter((x) => x < v).length)
        expect(upperBound(s, v)).toBe(s.filter((x) => x <= v).length)
      })
    )
  })
})

describe("SortedWindow", () => {
  it("keeps exactly the samples of its trailing window, in sorted order, as samples arrive and age out", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), tied), { minLength: 1, maxLength: 300 }),
        fc.integer({ min: 1, max: 40 }),
        (steps, window) => {
          const w = new SortedWindow()
          const all: Array<{ t: number; v: number }> = []
          let t = 0
          for (const [dt, v] of steps) {
            t += dt
            w.push(t, v)
            all.push({ t, v })
            w.evictBefore(t - window)
            const expected = all
              .filter((s) => s.t >= t - window)
              .map((s) => s.v)
              .sort((a, b) => a - b)
            expect([...w.sortedValues]).toEqual(expected)
            expect(w.rank(v, 1)).toBe(bruteForce(v, expected))
          }
        }
      )
    )
  })

  it("pushMany equals pushing one by one", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.oneof(tied, fc.constant(Number.NaN))), { maxLength: 200 }),
        fc.integer({ min: 0, max: 200 }),
        (steps, split) => {
          const one = new SortedWindow()
          const many = new SortedWindow()
          const ts: Array<number> = []
          const vs: Array<number> = []
          let t = 0
          for (const [dt, v] of steps) {
            t += dt
            ts.push(t)
            vs.push(v)
            one.push(t, v)
          }
          many.pushMany(ts.slice(0, split), vs.slice(0, split))
          many.pushMany(ts.slice(split), vs.slice(split))
          expect([...many.sortedValues]).toEqual([...one.sortedValues])
          many.evictBefore(t - 5)
          one.evictBefore(t - 5)
          expect([...many.sortedValues]).toEqual([...one.sortedValues])
        }
      )
    )
  })

  it("windows a year exactly: a sample exactly one window old stays, an older one leaves", () => {
    const year = 365 * 24 * 3_600_000
    const w = new SortedWindow()
    w.push(0, 1)
    w.push(1, 2)
    w.push(year, 3)
    w.evictBefore(year - year)
    expect(w.n).toBe(3)
    w.evictBefore(year + 1 - year)
    expect([...w.sortedValues]).toEqual([2, 3])
  })

  it("refuses samples out of time order and skips non-finite values", () => {
    const w = new SortedWindow()
    w.push(10, 1)
    w.push(11, Number.NaN)
    expect(w.n).toBe(1)
    expect(() => w.push(5, 2)).toThrow(RangeError)
  })
})

describe("CadenceWindow", () => {
  const C = 3_600_000
  // -0 beside 0: equal values whose order in the sorted view is their age (what a stable sort gives).
  const maybeMissing = fc.oneof(
    { arbitrary: tied, weight: 5 },
    { arbitrary: fc.constant(-0), weight: 1 },
    { arbitrary: fc.constant(Number.NaN), weight: 1 }
  )

  it("keeps exactly the finite samples of its trailing window: sorted, ranked and in time order like brute force", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 4 }), maybeMissing, fc.integer({ min: 1, max: 6 })), {
          minLength: 1,
          maxLength: 300
        }),
        fc.integer({ min: 1, max: 40 }),
        (steps, window) => {
          const w = new CadenceWindow(C)
          const all: Array<{ t: number; v: number }> = []
          let t = 1_700_000_000_000
          const pending: Array<{ t: number; v: number }> = []
          const flush = () => {
            w.pushMany(
              pending.map((p) => p.t),
              pending.map((p) => p.v)
            )
            pending.length = 0
          }
          for (const [dt, v, batch] of steps) {
            t += dt * C
            pending.push({ t, v })
            all.push({ t, v })
            // Samples arrive one by one or in batches, as the baselines advance them.
            if (pending.length < batch) continue
            flush()
            w.evictBefore(t - window * C)
            const held = all.filter((s) => s.t >= t - window * C && Number.isFinite(s.v)).map((s) => s.v)
            const expected = [...held].sort((a, b) => a - b)
            expect([...w.sortedValues]).toEqual(expected)
            expect(w.valuesInTimeOrder()).toEqual(held)
            expect(w.n).toBe(held.length)
            expect(w.newestAt).toBe(held.length === 0 ? undefined : t)
            for (const probe of [v, -5.25, 0, 5.25, expected[0] ?? 0]) {
              expect(w.rank(probe, 1)).toBe(
                Number.isFinite(probe) && held.length > 0 ? bruteForce(probe, held) : undefined
              )
              expect(w.rank(probe)).toBe(percentileRank(probe, expected))
            }
          }
        }
      )
    )
  })

  it("answers what SortedWindow answers over a year of hourly samples with long runs of equal values", () => {
    const year = 365 * 24 * C
    const cadence = new CadenceWindow(C)
    const sorted = new SortedWindow()
    let seed = 7
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
      return seed / 2_147_483_648
    }
    const start = Date.UTC(2025, 0, 1)
    for (let h = 0; h < 2 * 8_760; h += 24) {
      const ts: Array<number> = []
      const vs: Array<number> = []
      for (let k = 0; k < 24; k++) {
        const r = next()
        ts.push(start + (h + k) * C)
        vs.push(r < 0.6 ? 0.01 : r < 0.65 ? Number.NaN : Math.round((r - 0.6) * 1e4) / 1e3)
      }
      cadence.pushMany(ts, vs)
      sorted.pushMany(ts, vs)
      const edge = (ts[23] as number) - year + C
      cadence.evictBefore(edge)
      sorted.evictBefore(edge)
      expect(cadence.n).toBe(sorted.n)
      for (const probe of [0.01, 0.005, vs[0] as number, 1]) expect(cadence.rank(probe)).toBe(sorted.rank(probe))
    }
    expect([...cadence.sortedValues]).toEqual([...sorted.sortedValues])
    expect(cadence.n).toBeGreaterThan(8_000)
  })

  it("holds more than 65,536 slots (four-byte slot indices) and shrinks back when they leave", () => {
    const w = new CadenceWindow(1)
    const n = 70_000
    w.pushMany(
      Array.from({ length: n }, (_, i) => i),
      Array.from({ length: n }, (_, i) => (i * 7_919) % 1_000)
    )
    expect(w.n).toBe(n)
    expect(w.rank(500, 1)).toBe(
      bruteForce(
        500,
        Array.from({ length: n }, (_, i) => (i * 7_919) % 1_000)
      )
    )
    w.evictBefore(n - 100)
    expect(w.valuesInTimeOrder()).toEqual(Array.from({ length: 100 }, (_, i) => ((n - 100 + i) * 7_919) % 1_000))
    w.push(n, 3)
    expect(w.n).toBe(101)
  })

  it("refuses samples out of time order or off the cadence's steps, and lets a window of holes restart", () => {
    const w = new CadenceWindow(C)
    w.push(10 * C, 1)
    expect(() => w.push(10 * C, 2)).toThrow(RangeError)
    expect(() => w.push(9 * C, 2)).toThrow(RangeError)
    expect(() => w.push(11.5 * C, 2)).toThrow(RangeError)
    expect(() => w.pushMany([12 * C, 12 * C], [1, 2])).toThrow(RangeError)
    expect(w.n).toBe(1)
    w.push(11 * C, Number.POSITIVE_INFINITY)
    expect(w.n).toBe(1)
    expect(w.newestAt).toBe(11 * C)
    w.evictBefore(11 * C)
    expect(w.n).toBe(0)
    // Only a hole was left: the window forgets it, and a sample a year later starts a new ring instead of filling
    // a year of holes.
    expect(w.newestAt).toBeUndefined()
    w.pushMany([12 * C, 13 * C], [Number.NaN, Number.NaN])
    expect(w.newestAt).toBeUndefined()
    w.push(11 * C + 8_760 * C, 4)
    expect([...w.sortedValues]).toEqual([4])
    expect(w.newestAt).toBe(11 * C + 8_760 * C)
  })
})

const BINANCE_FUNDING = ["funding_supervik", "BTC-USDT_binance_2020-01-01_2024-01-01_funding_history.csv"] as const

describe("percentiles on real funding", () => {
  it.skipIf(!hasHistory(...BINANCE_FUNDING))(
    "a rolling 90-day window over Binance BTC settlements 2020-2023 (many exact ties at 0.01 %) equals brute force",
    () => {
      const rows = readText(...BINANCE_FUNDING)
        .trim()
        .split("\n")
        .slice(1)
        .map((line) => {
          const [, date, rate] = line.split(",") as [string, string, string]
          // The file's dates are UTC+3 local time.
          return { t: Date.parse(`${date.replace(" ", "T")}Z`) - 3 * 3_600_000, pct: Number(rate) * 100 }
        })
      expect(rows.length).toBeGreaterThan(4000)
      const window = 90 * 86_400_000
      const w = new SortedWindow()
      let checked = 0
      rows.forEach((r, i) => {
        w.push(r.t, r.pct)
        w.evictBefore(r.t - window + 1)
        if (i % 7 !== 0) return
        const inWindow = rows.slice(0, i + 1).filter((x) => x.t > r.t - window)
        expect(w.n).toBe(inWindow.length)
        const expected =
          inWindow.length < MinBaselineN
            ? undefined
            : bruteForce(
                r.pct,
                inWindow.map((x) => x.pct)
              )
        expect(w.rank(r.pct)).toBe(expected)
        checked++
      })
      expect(checked).toBeGreaterThan(600)
      // The default rate is the most common value: its rank sits inside its tie run.
      const ties = w.sortedValues.filter((v) => Math.abs(v - 0.01) < 1e-12).length
      expect(ties).toBeGreaterThan(10)
    }
  )
})

describe("sortSlotsByValue", () => {
  /** What it replaces: a stable comparator sort of the slots by value. */
  const comparatorSort = (slots: ReadonlyArray<number>, values: Float64Array) =>
    slots.slice().sort((a, b) => (values[a] as number) - (values[b] as number))
  // Finite doubles of every kind: ties, -0 beside 0, subnormals, extremes, negative and positive.
  const finite = fc.oneof(
    { arbitrary: tied, weight: 3 },
    { arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }), weight: 3 },
    {
      arbitrary: fc.constantFrom(0, -0, Number.MIN_VALUE, -Number.MIN_VALUE, Number.MAX_VALUE, -Number.MAX_VALUE),
      weight: 1
    },
    { arbitrary: fc.float({ noNaN: true, noDefaultInfinity: true }).map(Math.fround), weight: 2 }
  )

  it("orders slots exactly as a stable comparator sort by value does (ties and -0 in age order)", () => {
    fc.assert(
      fc.property(fc.array(finite, { maxLength: 400, size: "max" }), fc.integer({ min: 0, max: 50 }), (vs, offset) => {
        const values = new Float64Array(vs.length + offset + 3).fill(Number.NaN)
        // Slots of a ring that wrapped: oldest first, neither starting at 0 nor in value order.
        const slots = vs.map((v, i) => {
          const slot = (i + offset) % values.length
          values[slot] = v
          return slot
        })
        const expected = comparatorSort(slots, values)
        const got = slots.slice()
        sortSlotsByValue(got, values)
        expect(got).toEqual(expected)
      }),
      { numRuns: 300 }
    )
  })

  it("agrees on long runs (the scratch arrays grow and are reused)", () => {
    for (const n of [2_160, 8_760, 100, 5_000]) {
      const values = new Float64Array(n)
      let x = 12345
      for (let i = 0; i < n; i++) {
        x = (x * 1103515245 + 12345) % 2147483648
        const v = (x / 2147483648 - 0.5) * 10 ** ((x % 13) - 6)
        // Every fifth -0, every third rounded (runs of ties), the rest doubles of many magnitudes.
        values[i] = i % 5 === 0 ? -0 : i % 3 === 0 ? Math.round(v) : v
      }
      const slots = Array.from({ length: n }, (_, i) => i)
      const got = slots.slice()
      sortSlotsByValue(got, values)
      expect(got).toEqual(comparatorSort(slots, values))
    }
  })
})
