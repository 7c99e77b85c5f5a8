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

describe("RangeExtremes", () => {
  it("answers every run as a scan does, whatever order its levels are first needed in", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(fc.double({ noNaN: true, min: -1e6, max: 1e6 }), fc.double({ noNaN: true, min: 0, max: 10 })),
          {
            minLength: 1,
            maxLength: 700
          }
        ),
        fc.array(fc.tuple(fc.nat(), fc.nat()), { minLength: 1, maxLength: 40 }),
        (bars, runs) => {
          const high = Float64Array.from(bars, ([mid, spread]) => mid + spread)
          const low = Float64Array.from(bars, ([mid, spread]) => mid - spread)
          const e = new RangeExtremes(high, low)
          for (const [a, b] of runs) {
            const from = a % (high.length + 1)
            const to = b % (high.length + 1)
            if (to <= from) expect(e.query(from, to)).toBeUndefined()
            else expect(e.query(from, to)).toEqual(scan(high, low, from, to))
          }
          // Then every run from every start (the levels built so far, and the rest on demand).
          for (let from = 0; from < high.length; from += 7) {
            for (let to = from + 1; to <= high.length; to += 13)
              expect(e.query(from, to)).toEqual(scan(high, low, from, to))
          }
        }
      ),
      { numRuns: 60 }
    )
  })
})
