import * as TI from "technicalindicators"
import { describe, expect, it } from "vitest"
import { aggregateBars, type Bars, intervalEndMs, intervalStartMs } from "../../src/crypto/Market.ts"
import { adx, atr, atrPct, averageGainLoss, ema, rsi, sma, trueRange } from "../../src/crypto/Technicals.ts"
import { type Columns, randomWalkBars } from "./support/Fixture.ts"
import { hasHistory, readCandles, skipReason } from "./support/SharedData.ts"

const raw = (v: number) => v

/** Relative difference, guarded for values near zero. */
const rel = (a: number, b: number) => Math.abs(a - b) / Math.max(1e-12, Math.abs(b))

/** Our series (NaN during warm-up) must end aligned with the reference (which omits warm-up values). */
const expectAligned = (
  ours: ReadonlyArray<number>,
  reference: ReadonlyArray<number>,
  skip: number,
  nanPrefix = true,
  tol = 1e-9
) => {
  const offset = ours.length - reference.length
  expect(offset).toBeGreaterThanOrEqual(0)
  if (nanPrefix) for (let i = 0; i < offset; i++) expect(Number.isNaN(ours[i])).toBe(true)
  let worst = 0
  for (let j = skip; j < reference.length; j++)
    worst = Math.max(worst, rel(ours[offset + j] as number, reference[j] as number))
  expect(worst).toBeLessThan(tol)
  expect(reference.length - skip).toBeGreaterThan(0)
}

const checkAgainstLibrary = (bars: Columns) => {
  const input = { high: bars.high, low: bars.low, close: bars.close, period: 14, format: raw }
  expectAligned(sma(bars.close, 20), TI.SMA.calculate({ values: bars.close, period: 20, format: raw }), 0)
  expectAligned(sma(bars.close, 200), TI.SMA.calculate({ values: bars.close, period: 200, format: raw }), 0)
  expectAligned(ema(bars.close, 50), TI.EMA.calculate({ values: bars.close, period: 50, format: raw }), 0)
  expectAligned(ema(bars.close, 200), TI.EMA.calculate({ values: bars.close, period: 200, format: raw }), 0)
  expectAligned(atr(bars), TI.ATR.calculate(input), 0)
  const { gain, loss } = averageGainLoss(bars.close)
  expectAligned(gain, TI.AverageGain.calculate({ values: bars.close, period: 14, format: raw }), 0)
  expectAligned(loss, TI.AverageLoss.calculate({ values: bars.close, period: 14, format: raw }), 0)
  // RSI from the library's own Wilder averages, exactly; its RSI output is rounded to two decimals.
  const refGain = TI.AverageGain.calculate({ values: bars.close, period: 14, format: raw })
  const refLoss = TI.AverageLoss.calculate({ values: bars.close, period: 14, format: raw })
  expectAligned(
    rsi(bars.close),
    refGain.map((g, j) => {
      const l = refLoss[j] as number
      return l === 0 ? (g === 0 ? 50 : 100) : 100 - 100 / (1 + g / l)
    }),
    0
  )
  const ours = rsi(bars.close)
  const ref = TI.RSI.calculate({ values: bars.close, period: 14 })
  expect(ours.length - ref.length).toBe(14)
  let worst = 0
  ref.forEach((r, j) => {
    worst = Math.max(worst, Math.abs((ours[14 + j] as number) - r))
  })
  expect(worst).toBeLessThanOrEqual(0.005 + 1e-9)
  const a = adx(bars)
  const refAdx = TI.ADX.calculate(input)
  // The library reports ADX from bar 27 and the DIs alongside it; ours has the DIs from bar 14.
  expectAligned(
    a.adx,
    refAdx.map((r) => r.adx),
    0
  )
  expect(a.adx.length - refAdx.length).toBe(27)
  expectAligned(
    a.plusDi,
    refAdx.map((r) => r.pdi),
    0,
    false
  )
  expectAligned(
    a.minusDi,
    refAdx.map((r) => r.mdi),
    0,
    false
  )
}

describe("technicals against the technicalindicators package", () => {
  it("agree to 1e-9 relative on the hand-made fixture (15m random walk with regimes)", () => {
    checkAgainstLibrary(randomWalkBars(3000, 7))
  })

  it.skipIf(!hasHistory("binance_freqtrade_moon", "futures", "BTC_USDT-1h-futures.json"))(
    "agree to 1e-9 relative on real Binance BTCUSDT perpetual hourly candles (2020-2022)",
    () => {
      checkAgainstLibrary(readCandles("binance_freqtrade_moon", "futures", "BTC_USDT-1h-futures.json"))
    }
  )
  if (!hasHistory("binance_freqtrade_moon", "futures", "BTC_USDT-1h-futures.json")) {
    console.warn(skipReason("binance_freqtrade_moon", "futures", "BTC_USDT-1h-futures.json"))
  }
})

describe("technicals by hand", () => {
  it("RSI(14) matches the classic worked example (Wilder's first value 70.46 on unrounded averages)", () => {
    const closes = [
      44.34, 44.09, 44.15, 43.61, 44.33, 44.83, 45.1, 45.42, 45.84, 46.08, 45.89, 46.03, 45.61, 46.28, 46.28, 46.0
    ]
    const r = rsi(closes)
    expect(Number.isNaN(r[13] as number)).toBe(true)
    // By hand: gains 3.34 and losses 1.40 over the first 14 changes.
    expect(r[14]).toBeCloseTo(70.46, 2)
    const { gain, loss } = averageGainLoss(closes)
    expect(gain[14]).toBeCloseTo(3.34 / 14, 12)
    expect(loss[14]).toBeCloseTo(1.4 / 14, 12)
  })

  it("true range uses the previous close; ATR seeds with the mean of the first 14 ranges", () => {
    const bars = { high: [10, 12, 11], low: [9, 10, 8], close: [9.5, 11, 9] }
    expect(trueRange(bars).slice(1)).toEqual([2.5, 3])
    const n = 16
    const flat = { high: Array(n).fill(11), low: Array(n).fill(9), close: Array(n).fill(10) }
    const a = atr(flat)
    expect(Number.isNaN(a[13] as number)).toBe(true)
    expect(a[14]).toBe(2)
    expect(atrPct(flat)[15]).toBe(20)
  })

  it("RSI is 100 with only gains, 0 with only losses, 50 when flat", () => {
    const up = Array.from({ length: 20 }, (_, i) => 100 + i)
    expect(rsi(up)[19]).toBe(100)
    expect(rsi(up.slice().reverse())[19]).toBe(0)
    expect(rsi(Array(20).fill(5))[19]).toBe(50)
  })

  it("ADX is 100 in a steady one-way trend and its first value is at bar 27", () => {
    const n = 40
    const bars = {
      high: Array.from({ length: n }, (_, i) => 101 + i),
      low: Array.from({ length: n }, (_, i) => 99 + i),
      close: Array.from({ length: n }, (_, i) => 100 + i)
    }
    const a = adx(bars)
    expect(Number.isNaN(a.adx[26] as number)).toBe(true)
    expect(a.adx[27]).toBeCloseTo(100, 9)
    expect(a.minusDi[39]).toBe(0)
  })
})

const asBars = (c: Columns): Bars => ({
  kind: "bars",
  assetId: "crypto:test",
  venue: "test",
  t: Float64Array.from(c.t),
  open: Float64Array.from(c.open),
  high: Float64Array.from(c.high),
  low: Float64Array.from(c.low),
  close: Float64Array.from(c.close),
  volume: Float64Array.from(c.volume)
})

/** Brute-force aggregation: group by calendar fields computed with Date, no interval arithmetic. */
const bruteAggregate = (c: Columns, key: (t: number) => string) => {
  const groups = new Map<string, Array<number>>()
  c.t.forEach((t, i) => {
    const k = key(t)
    const g = groups.get(k) ?? []
    g.push(i)
    groups.set(k, g)
  })
  return [...groups.values()].map((idx) => ({
    open: c.open[idx[0] as number] as number,
    high: Math.max(...idx.map((i) => c.high[i] as number)),
    low: Math.min(...idx.map((i) => c.low[i] as number)),
    close: c.close[idx[idx.length - 1] as number] as number,
    volume: idx.reduce((s, i) => s + (c.volume[i] as number), 0)
  }))
}

describe("aggregation of 15m bars (UTC boundaries, calendar months)", () => {
  // 15m bars across a year boundary, February of a leap year and a DST date (irrelevant in UTC).
  const bars = randomWalkBars(4 * 24 * 140, 11, Date.UTC(2023, 11, 1), 900_000)
  const series = asBars(bars)
  const cases: ReadonlyArray<[Parameters<typeof aggregateBars>[1], (t: number) => string]> = [
    ["1h", (t) => new Date(t).toISOString().slice(0, 13)],
    ["4h", (t) => `${new Date(t).toISOString().slice(0, 10)}/${Math.floor(new Date(t).getUTCHours() / 4)}`],
    ["1d", (t) => new Date(t).toISOString().slice(0, 10)],
    [
      "1w",
      (t) => {
        const d = new Date(t)
        const monday = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - ((d.getUTCDay() + 6) % 7))
        return new Date(monday).toISOString().slice(0, 10)
      }
    ],
    ["1mo", (t) => new Date(t).toISOString().slice(0, 7)]
  ]
  for (const [interval, key] of cases) {
    it(`${interval} equals grouping by calendar fields`, () => {
      const ours = aggregateBars(series, interval)
      const expected = bruteAggregate(bars, key)
      expect(ours.t.length).toBe(expected.length)
      expected.forEach((e, i) => {
        expect(ours.open[i]).toBe(e.open)
        expect(ours.high[i]).toBe(e.high)
        expect(ours.low[i]).toBe(e.low)
        expect(ours.close[i]).toBe(e.close)
        expect(ours.volume[i]).toBeCloseTo(e.volume, 6)
        const t = ours.t[i] as number
        expect(intervalStartMs(t, interval)).toBe(t)
      })
    })
  }

  it("months end on the real calendar: February 2024 has 29 days, weeks start on Monday", () => {
    expect(intervalEndMs(Date.UTC(2024, 1, 1), "1mo") - Date.UTC(2024, 1, 1)).toBe(29 * 86_400_000)
    expect(new Date(intervalStartMs(Date.UTC(2024, 0, 3, 12), "1w")).getUTCDay()).toBe(1)
    expect(intervalStartMs(Date.UTC(2024, 11, 31, 23, 59), "1mo")).toBe(Date.UTC(2024, 11, 1))
  })

  it.skipIf(!hasHistory("binance_freqtrade_moon", "futures", "BTC_USDT-1d-futures.json"))(
    "real BTCUSDT hourly candles aggregate to the venue's own daily candles",
    () => {
      const hourly = readCandles("binance_freqtrade_moon", "futures", "BTC_USDT-1h-futures.json")
      const daily = readCandles("binance_freqtrade_moon", "futures", "BTC_USDT-1d-futures.json")
      const ours = aggregateBars(asBars(hourly), "1d")
      const byT = new Map<number, number>()
      ours.t.forEach((t, i) => {
        byT.set(t, i)
      })
      let compared = 0
      daily.t.forEach((t, j) => {
        const i = byT.get(t)
        if (i === undefined) return
        // Only days with all 24 hourly candles present.
        const count = hourly.t.filter((h) => h >= t && h < t + 86_400_000).length
        if (count !== 24) return
        expect(ours.open[i]).toBe(daily.open[j])
        expect(ours.high[i]).toBe(daily.high[j])
        expect(ours.low[i]).toBe(daily.low[j])
        expect(ours.close[i]).toBe(daily.close[j])
        expect(rel(ours.volume[i] as number, daily.volume[j] as number)).toBeLessThan(1e-6)
        compared++
      })
      expect(compared).toBeGreaterThan(800)
    }
  )
})
