import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { lastBreakOfStructure, sessionLevels, swings, trendState } from "../../src/crypto/Structure.ts"
import { randomWalkBars } from "./support/Fixture.ts"

const H = 3_600_000
/** Bars from a list of closes; highs and lows a fixed distance around the close. */
const fromCloses = (closes: ReadonlyArray<number>, startMs = 0, stepMs = 4 * H) => ({
  t: closes.map((_, i) => startMs + i * stepMs),
  high: closes.map((c) => c + 1),
  low: closes.map((c) => c - 1),
  close: [...closes]
})

describe("swings", () => {
  it("mark bars strictly above (below) two bars on each side", () => {
    const b = fromCloses([1, 2, 5, 2, 1, 0, -3, 0, 1, 1])
    expect(swings(b).map((s) => [s.kind, s.index, s.level])).toEqual([
      ["high", 2, 6],
      ["low", 6, -4]
    ])
    // A tie on either side is not a swing.
    expect(swings(fromCloses([1, 2, 5, 5, 1, 0]))).toEqual([])
  })

  it("equal a brute-force definition on random walks", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000 }), (seed) => {
        const b = randomWalkBars(120, seed)
        const brute: Array<string> = []
        for (let i = 2; i < 118; i++) {
          const around = [i - 2, i - 1, i + 1, i + 2]
          if (around.every((j) => (b.high[i] as number) > (b.high[j] as number))) brute.push(`high${i}`)
          if (around.every((j) => (b.low[i] as number) < (b.low[j] as number))) brute.push(`low${i}`)
        }
        expect(swings(b).map((s) => `${s.kind}${s.index}`)).toEqual(brute)
      }),
      { numRuns: 30 }
    )
  })
})

describe("trend state", () => {
  it("uptrend on higher highs and higher lows", () => {
    const b = fromCloses([10, 12, 15, 12, 11, 13, 18, 14, 13, 15, 17, 16])
    expect(trendState(b)).toBe("uptrend")
  })
  it("downtrend on lower highs and lower lows", () => {
    const b = fromCloses([20, 18, 15, 18, 19, 17, 12, 16, 17, 15, 13, 14])
    expect(trendState(b)).toBe("downtrend")
  })
  it("range on mixed swings, and on an uptrend whose last swing low has been lost", () => {
    expect(trendState(fromCloses([10, 12, 15, 12, 11, 13, 18, 14, 9, 11, 12, 11]))).toBe("range")
    expect(trendState(fromCloses([10, 12, 15, 12, 11, 13, 18, 14, 13, 15, 17, 16, 10]))).toBe("range")
  })
  it("cannot be assessed with fewer than two swings of each kind", () => {
    expect(trendState(fromCloses([1, 2, 3, 4, 5, 6]))).toBeUndefined()
  })
})

describe("break of structure", () => {
  it("a close above the last confirmed swing high is a bullish BOS at that level", () => {
    // Swing high at index 2 (level 16), confirmed at index 4; index 6 closes at 17 > 16.
    const b = fromCloses([10, 12, 15, 12, 11, 13, 17])
    expect(lastBreakOfStructure(b)).toEqual({ direction: "bullish", level: 16, at: 6 * 4 * H, swing_at: 2 * 4 * H })
  })
  it("a swing cannot break before it is confirmed, and each level breaks once", () => {
    // Index 3 would exceed the swing high at 2 but the swing is not confirmed until index 4.
    expect(lastBreakOfStructure(fromCloses([10, 12, 15, 12, 11]))).toBeUndefined()
    const b = fromCloses([20, 18, 15, 18, 19, 17, 12, 13, 11])
    // Swing low at 2 (level 14) confirmed at 4; index 6 closes at 12 < 14: bearish.
    expect(lastBreakOfStructure(b)).toMatchObject({ direction: "bearish", level: 14, at: 6 * 4 * H })
  })
})

describe("session levels", () => {
  it("take each session's latest started occurrence and the prior UTC day", () => {
    const day = Date.UTC(2025, 5, 10)
    // 15m bars over two days, close = hour of day + day offset, so highs identify the bars.
    const t: Array<number> = []
    const close: Array<number> = []
    for (let i = 0; i < 2 * 96; i++) {
      t.push(day - 86_400_000 + i * 900_000)
      close.push(1000 + i)
    }
    const bars = { t, high: close.map((c) => c + 0.5), low: close.map((c) => c - 0.5), close }
    const now = day + 10 * H // 10:00 UTC on the second day
    const s = sessionLevels(bars, now)
    const idx = (ms: number) => (ms - (day - 86_400_000)) / 900_000
    // Asia today 00:00-08:00, complete.
    expect(s.sessions.asia).toEqual({
      high: 1000 + idx(day + 8 * H - 900_000) + 0.5,
      low: 1000 + idx(day) - 0.5,
      start: day,
      end: day + 8 * H,
      complete: true
    })
    // Europe today from 07:00, running.
    expect(s.sessions.europe?.complete).toBe(false)
    expect(s.sessions.europe?.low).toBe(1000 + idx(day + 7 * H) - 0.5)
    expect(s.sessions.europe?.high).toBe(1000 + idx(day + 10 * H - 900_000) + 0.5)
    // US has not started today: yesterday's 13:00-21:00.
    expect(s.sessions.us).toMatchObject({ start: day - 11 * H, end: day - 3 * H, complete: true })
    expect(s.prior_day).toEqual({ high: 1000 + 95 + 0.5, low: 1000 - 0.5, date: day - 86_400_000 })
  })
})
