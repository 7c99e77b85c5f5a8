import { describe, expect, it } from "vitest"
import {
  aggregateBars,
  allocSeries,
  BAR_MS,
  bookMetricsOf,
  DAY_MS,
  freshnessOf,
  intervalEndMs,
  intervalStartMs,
  liquidationEvents,
  lowerBound,
  rangeOf
} from "../../src/crypto/Market.ts"

const T0 = Date.UTC(2026, 0, 31, 22, 0) // a Saturday evening, month end

const bars15m = (n: number) => {
  const b = allocSeries("bars", "crypto:bitcoin", "binance", n)
  for (let i = 0; i < n; i++) {
    b.t[i] = T0 + i * BAR_MS
    b.open[i] = 100 + i
    b.high[i] = 100 + i + 2 + (i % 3)
    b.low[i] = 100 - 1 - (i % 5) * 2
    b.close[i] = 100 + i + 1
    b.volume[i] = 1 + i
  }
  return b
}

describe("market series helpers", () => {
  it("lowerBound finds the first index at or after a time", () => {
    const t = [10, 20, 20, 30]
    expect([5, 10, 15, 20, 25, 30, 35].map((x) => lowerBound(t, x))).toEqual([0, 0, 1, 1, 3, 3, 4])
  })

  it("rangeOf keeps rows with from <= t < to and copies them", () => {
    const b = bars15m(10)
    const r = rangeOf(b, T0 + 2 * BAR_MS, T0 + 5 * BAR_MS)
    expect([...r.t]).toEqual([T0 + 2 * BAR_MS, T0 + 3 * BAR_MS, T0 + 4 * BAR_MS])
    r.close[0] = -1
    expect(b.close[2]).toBe(103)
  })

  it("aggregates 15m bars to hours: first open, max high, min low, last close, summed volume", () => {
    const b = bars15m(12) // 22:00 .. 00:45
    const h = aggregateBars(b, "1h")
    expect([...h.t]).toEqual([T0, T0 + 3_600_000, T0 + 7_200_000])
    expect(h.open[0]).toBe(100)
    expect(h.close[0]).toBe(104)
    expect(h.high[0]).toBe(Math.max(102, 104, 106, 105))
    expect(h.low[0]).toBe(Math.min(99, 97, 95, 93))
    expect(h.volume[0]).toBe(1 + 2 + 3 + 4)
  })

  it("starts days at UTC midnight, weeks on Monday and months on the first", () => {
    expect(new Date(intervalStartMs(T0, "1d")).toISOString()).toBe("2026-01-31T00:00:00.000Z")
    expect(new Date(intervalStartMs(T0, "1w")).toISOString()).toBe("2026-01-26T00:00:00.000Z")
    expect(new Date(intervalStartMs(T0, "1mo")).toISOString()).toBe("2026-01-01T00:00:00.000Z")
    expect(new Date(intervalEndMs(Date.UTC(2026, 1, 1), "1mo")).toISOString()).toBe("2026-03-01T00:00:00.000Z")
    const m = aggregateBars(bars15m(12), "1mo")
    expect(m.t.length).toBe(2)
    expect(m.t[1]).toBe(Date.UTC(2026, 1, 1))
    expect(intervalEndMs(T0, "1d") - T0).toBe(DAY_MS)
  })

  it("measures spread, depth within 1 % and imbalance of a book", () => {
    const m = bookMetricsOf({
      bids: [
        [99.9, 10],
        [99.5, 10],
        [98, 100]
      ],
      asks: [
        [100.1, 5],
        [101.5, 100]
      ]
    })
    expect(m?.mid).toBeCloseTo(100, 12)
    expect(m?.spreadPct).toBeCloseTo(0.2, 12)
    expect(m?.bidDepthUsd).toBeCloseTo(999 + 995, 9)
    expect(m?.askDepthUsd).toBeCloseTo(500.5, 9)
    expect(m?.imbalance).toBeCloseTo((1994 - 500.5) / (1994 + 500.5), 12)
    expect(bookMetricsOf({ bids: [], asks: [[1, 1]] })).toBeUndefined()
  })

  it("turns liquidation rows into side events", () => {
    const l = allocSeries("liquidations", "crypto:bitcoin", "okx", 2)
    l.t.set([1, 2])
    l.longUsd.set([5, 0])
    l.shortUsd.set([3, 7])
    expect(liquidationEvents(l)).toEqual([
      { t: 1, side: "long", usd: 5 },
      { t: 1, side: "short", usd: 3 },
      { t: 2, side: "short", usd: 7 }
    ])
  })

  it("is live within one cadence, delayed up to three, stale beyond or when failing", () => {
    const s = { newestMs: 1_000, cadenceMs: 100, failing: false }
    expect(freshnessOf(s, 1_100)).toBe("live")
    expect(freshnessOf(s, 1_300)).toBe("delayed")
    expect(freshnessOf(s, 1_301)).toBe("stale")
    expect(freshnessOf({ ...s, failing: true }, 1_000)).toBe("stale")
  })
})
