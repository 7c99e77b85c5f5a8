import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { RangeExtremes } from "../../src/crypto/Measures.ts"

/** The model: the extremes of a run by scanning it. */
const scan = (high: Float64Array, low: Float64Array, from: number, to: number) => {
  let h = Number.NEGATIVE_INFINITY
  let l = Number.POSITIVE_INFINITY
  for (let i = from; i < to; i++) {
    h = Math.max(h, high[i] as number)
    l = Math.min(l, low[i] as number)
  }
  return { high: h, low: l }
}

// Prices, with the values whose extremes depend on how they are compared: 0 beside -0, and NaN.
const value = fc.oneof(
  { arbitrary: fc.double({ noNaN: true, min: -1e6, max: 1e6 }), weight: 8 },
  { arbitrary: fc.constantFrom(0, -0, Number.NaN), weight: 1 }
)

/** The same numbers, -0 told from 0 (`Object.is`). */
const expectSame = (got: { high: number; low: number } | undefined, want: { high: number; low: number }) => {
  expect([Object.is(got?.high, want.high), Object.is(got?.low, want.low)]).toEqual([true, true])
}

describe("RangeExtremes", () => {
  it("answers every run as a scan does, NaN, 0 and -0 included", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(value, value), { minLength: 1, maxLength: 700, size: "max" }),
        fc.array(fc.tuple(fc.nat(), fc.nat()), { minLength: 1, maxLength: 40 }),
        (bars, runs) => {
          const high = Float64Array.from(bars, ([h]) => h)
          const low = Float64Array.from(bars, ([, l]) => l)
          const e = new RangeExtremes(high, low)
          for (const [a, b] of runs) {
            const from = a % (high.length + 1)
            const to = b % (high.length + 1)
            if (to <= from) expect(e.query(from, to)).toBeUndefined()
            else expectSame(e.query(from, to), scan(high, low, from, to))
          }
          // Then runs from every seventh start to every thirteenth end.
          for (let from = 0; from < high.length; from += 7) {
            for (let to = from + 1; to <= high.length; to += 13)
              expectSame(e.query(from, to), scan(high, low, from, to))
          }
        }
      ),
      { numRuns: 60 }
    )
  })
})
