import { describe, expect, it } from "vitest"
import { barsPerYear, rangeStartMs, summarize } from "../../src/crypto/SeriesSummary.ts"

const at = Date.UTC(2024, 2, 31, 15, 30) // 31 March 2024, a leap year

describe("series ranges", () => {
  it("are calendar spans back from now, in UTC", () => {
    expect(rangeStartMs("1w", at)).toBe(at - 7 * 86_400_000)
    // One month before 31 March is the last day of February (29 in 2024), not a rolled-over 2 March.
    expect(rangeStartMs("1mo", at)).toBe(Date.UTC(2024, 1, 29, 15, 30))
    expect(rangeStartMs("1mo", Date.UTC(2023, 2, 31))).toBe(Date.UTC(2023, 1, 28))
    expect(rangeStartMs("6mo", at)).toBe(Date.UTC(2023, 8, 30, 15, 30))
    expect(rangeStartMs("3mo", at)).toBe(Date.UTC(2023, 11, 31, 15, 30))
    expect(rangeStartMs("ytd", at)).toBe(Date.UTC(2024, 0, 1))
    expect(rangeStartMs("1y", at)).toBe(Date.UTC(2023, 2, 31, 15, 30))
    expect(rangeStartMs("5y", at)).toBe(Date.UTC(2019, 2, 31, 15, 30))
    expect(rangeStartMs("max", at)).toBe(0)
  })
  it("annualize by bars in 365 days", () => {
    expect(barsPerYear("1d")).toBe(365)
    expect(barsPerYear("1h")).toBe(8760)
    expect(barsPerYear("1mo")).toBe(12)
  })
})

describe("summary", () => {
  it("by hand: drawdown from the running peak, volatility of log returns", () => {
    const close = [100, 110, 99, 121]
    const s = summarize({ high: [101, 111, 105, 122], low: [99, 100, 98, 110], close }, "1d")
    expect(s?.first_close).toBe(100)
    expect(s?.last_close).toBe(121)
    expect(s?.return_pct).toBeCloseTo(21, 12)
    expect(s?.high).toBe(122)
    expect(s?.low).toBe(98)
    expect(s?.max_drawdown_pct).toBeCloseTo((99 / 110 - 1) * 100, 12)
    const r = [Math.log(1.1), Math.log(0.9), Math.log(121 / 99)]
    const mean = r.reduce((a, x) => a + x, 0) / 3
    const sd = Math.sqrt(r.reduce((a, x) => a + (x - mean) ** 2, 0) / 2)
    expect(s?.realized_volatility_pct).toBeCloseTo(sd * Math.sqrt(365) * 100, 9)
    expect(s?.bar_count).toBe(4)
  })
  it("has no volatility under three bars, and nothing without bars", () => {
    expect(summarize({ high: [1, 2], low: [1, 2], close: [1, 2] }, "1h")?.realized_volatility_pct).toBeNull()
    expect(summarize({ high: [], low: [], close: [] }, "1h")).toBeUndefined()
    expect(summarize({ high: [3, 2, 1], low: [3, 2, 1], close: [3, 2, 1] }, "1h")?.max_drawdown_pct).toBeCloseTo(
      (1 / 3 - 1) * 100,
      12
    )
  })
})
