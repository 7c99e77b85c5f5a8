import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  aggregateRate8hPct,
  aprPct,
  barsSinceSignFlip,
  FundingBandThresholds,
  fraction8hPct,
  fundingBand,
  hottestVenue,
  nextFundingAtMs,
  rate8hPct,
  venueSpread8hPct
} from "../../src/crypto/Funding.ts"
import { fundingAt, fundingMeasuresAt, fundingVenuesAt, MeasureMemo, venueData } from "../../src/crypto/Measures.ts"
import { prng } from "./support/Fixture.ts"
import { hasHistory, readText } from "./support/SharedData.ts"

/** Forward scan: index of the first nonzero sample of the current sign run, if the sign ever changed. */
const bruteBarsSinceFlip = (s: ReadonlyArray<number>): number | undefined => {
  let sign = 0
  let runStart = -1
  let flipped = false
  s.forEach((x, i) => {
    if (x === 0) return
    const sg = Math.sign(x)
    if (sg !== sign) {
      if (sign !== 0) flipped = true
      sign = sg
      runStart = i
    }
  })
  return flipped ? s.length - 1 - runStart : undefined
}

describe("funding normalization", () => {
  it("a 1 h venue and an 8 h venue charging the same economic rate give the same rate_8h_pct", () => {
    fc.assert(
      fc.property(fc.double({ min: -0.5, max: 0.5, noNaN: true }), (perHourPct) => {
        const hourly = rate8hPct(perHourPct, 1)
        const fourHourly = rate8hPct(perHourPct * 4, 4)
        const eightHourly = rate8hPct(perHourPct * 8, 8)
        expect(hourly).toBeCloseTo(eightHourly, 12)
        expect(fourHourly).toBeCloseTo(eightHourly, 12)
      })
    )
    // 0.00125 % per hour (Hyperliquid's default) is Binance's default 0.01 % per 8 h: 10.95 % a year.
    expect(rate8hPct(0.00125, 1)).toBeCloseTo(0.01, 15)
    expect(aprPct(rate8hPct(0.00125, 1))).toBeCloseTo(10.95, 12)
  })

  it("apr is simple: rate_8h_pct x 3 x 365", () => {
    expect(aprPct(0.01)).toBeCloseTo(10.95, 12)
    expect(aprPct(-0.03)).toBeCloseTo(-32.85, 12)
    expect(aprPct(0)).toBe(0)
  })

  it("aggregates by open-interest weight, or plainly when a weight is missing", () => {
    const v = (ratePct: number, intervalHours: number, oiUsd?: number) => ({
      venue: "x",
      ratePct,
      intervalHours,
      nextFundingAtMs: 0,
      ...(oiUsd === undefined ? {} : { oiUsd })
    })
    expect(aggregateRate8hPct([v(0.01, 8, 300), v(0.005, 1, 100)])).toBeCloseTo((0.01 * 300 + 0.04 * 100) / 400, 15)
    expect(aggregateRate8hPct([v(0.01, 8, 300), v(0.005, 1)])).toBeCloseTo((0.01 + 0.04) / 2, 15)
    expect(aggregateRate8hPct([v(0.01, 8, 0), v(0.03, 8, 0)])).toBeCloseTo(0.02, 15)
    expect(aggregateRate8hPct([])).toBeUndefined()
  })

  it("venue spread, hottest venue and next funding", () => {
    expect(venueSpread8hPct([0.01, -0.02, 0.005])).toBeCloseTo(0.03, 15)
    expect(hottestVenue([0.01, -0.02, 0.015])).toBe(1)
    expect(hottestVenue([])).toBeUndefined()
    const at = (ms: number) => ({ venue: "v", ratePct: 0, intervalHours: 8, nextFundingAtMs: ms })
    expect(nextFundingAtMs([at(3_600_000), at(1_800_000), at(28_800_000)])).toBe(1_800_000)
  })
})

describe("exact aggregation and scaling (equal inputs give equal outputs)", () => {
  const v = (ratePct: number, oiUsd?: number, intervalHours = 8) => ({
    venue: "x",
    ratePct,
    intervalHours,
    nextFundingAtMs: 0,
    ...(oiUsd === undefined ? {} : { oiUsd })
  })
  /** Open interest as venues report it: USD with cents, from thousands to tens of billions. */
  const weights = Array.from({ length: 4000 }, (_, i) => Math.round((1e3 + i ** 3 * 377.123) * 100) / 100)

  it("one venue, or several at one rate, aggregates to exactly that rate whatever the weights", () => {
    for (const r of [0.01, 0.0125, -0.0037, 0.00013, 0.3]) {
      // The naive weighted mean `(r x w) / w` misses `r` by one unit in the last place for some of these weights.
      expect(weights.filter((w) => (r * w) / w !== r).length, `naive misses for ${r}`).toBeGreaterThan(0)
      for (const w of weights) {
        expect(aggregateRate8hPct([v(r, w)])).toBe(r)
        expect(aggregateRate8hPct([v(r, w), v(r, w * 3 + 0.07), v(r)])).toBe(r)
        expect(aggregateRate8hPct([v(r, w), v(r, w / 7)])).toBe(r)
      }
    }
  })

  it("a mixed aggregate stays within the venues' rates and equals the weighted mean to 1e-15", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            r: fc.double({ min: -0.5, max: 0.5, noNaN: true }),
            // Weights are open interest in USD: zero, or a normal positive number (a subnormal weight such as
            // 5e-324 underflows the naive reference r x w to 0, which says nothing about the aggregate).
            w: fc.oneof(fc.constant(0), fc.double({ min: 1e-6, max: 1e11, noNaN: true }))
          }),
          { minLength: 1, maxLength: 6 }
        ),
        (rows) => {
          const agg = aggregateRate8hPct(rows.map((x) => v(x.r, x.w))) as number
          const rates = rows.map((x) => x.r)
          expect(agg).toBeGreaterThanOrEqual(Math.min(...rates))
          expect(agg).toBeLessThanOrEqual(Math.max(...rates))
          const total = rows.reduce((s, x) => s + x.w, 0)
          const ref =
            total > 0
              ? rows.reduce((s, x) => s + x.r * x.w, 0) / total
              : rows.reduce((s, x) => s + x.r, 0) / rows.length
          expect(Math.abs(agg - ref)).toBeLessThanOrEqual(1e-15 * Math.max(1, ...rates.map(Math.abs)))
        }
      )
    )
  })

  it("rates published as equal decimals scale to the same 8 h number on every interval, 3 h and 6 h included", () => {
    // Venue rates with up to nine decimals, per 8 h, and the same economic rate on 1..8 h intervals.
    let noisyBefore = 0
    for (let k = -3000; k <= 3000; k += 7) {
      const per8h = Number(`${k * 8}e-9`) // fraction per 8 h
      const pct8h = Number(`${k * 8}e-7`) // the same in percent: the exact answer
      for (const h of [1, 2, 3, 4, 6, 8]) {
        const fraction = Number(`${k * h}e-9`) // what a venue settling every h hours publishes
        expect(fraction8hPct(fraction, h * 3_600_000), `${fraction} per ${h} h`).toBe(pct8h)
        expect(rate8hPct(fraction * 100, h), `${fraction} per ${h} h`).toBe(pct8h)
        if ((fraction * 100 * 8) / h !== pct8h) noisyBefore++
      }
      expect(fraction8hPct(per8h, 8 * 3_600_000)).toBe(pct8h)
    }
    // Plain floating point missed some of them: the check above is not vacuous.
    expect(noisyBefore).toBeGreaterThan(0)
    // Venues that agree have a spread of exactly 0.
    expect(venueSpread8hPct([fraction8hPct(0.00003, 8 * 3_600_000), fraction8hPct(0.00001125, 3 * 3_600_000)])).toBe(0)
  })

  it.skipIf(!hasHistory("funding_supervik", "BTC-USDT_binance_2020-01-01_2024-01-01_funding_history.csv"))(
    "on real Binance and Bybit BTC settlements with real-shaped open interest, one venue aggregates to its own rate",
    () => {
      const rates = [
        "BTC-USDT_binance_2020-01-01_2024-01-01_funding_history.csv",
        "BTC-USDT_bybit_2021-01-01_2024-01-01_funding_history.csv"
      ]
        .filter((f) => hasHistory("funding_supervik", f))
        .flatMap((f) =>
          readText("funding_supervik", f)
            .trim()
            .split("\n")
            .slice(1)
            .map((l) => Number(l.split(",")[2]) * 100)
        )
      expect(rates.length).toBeGreaterThan(4000)
      let naiveMisses = 0
      rates.forEach((r, i) => {
        const w = weights[i % weights.length] as number
        if ((r * w) / w !== r) naiveMisses++
        expect(aggregateRate8hPct([v(r, w)])).toBe(r)
      })
      expect(naiveMisses).toBeGreaterThan(0)
    }
  )
})

describe("bars since the sign flipped", () => {
  it("equals a forward scan on random series with zeros", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -2, max: 2 }), { maxLength: 60 }), (s) => {
        expect(barsSinceSignFlip(s)).toBe(bruteBarsSinceFlip(s))
      })
    )
  })

  it("counts samples after the first one of the current sign", () => {
    expect(barsSinceSignFlip([1, 1, -1])).toBe(0)
    expect(barsSinceSignFlip([1, -1, -2, -3])).toBe(2)
    expect(barsSinceSignFlip([1, 0, -1, 0, -2])).toBe(2)
    expect(barsSinceSignFlip([1, 2, 3])).toBeUndefined()
    expect(barsSinceSignFlip([0, 0])).toBeUndefined()
  })

  it.skipIf(!hasHistory("binance_freqtrade_moon", "futures", "BTC_USDT-8h-funding_rate.json"))(
    "on real Binance BTCUSDT settlements (2022-02 to 2023-01): every prefix agrees with the forward scan",
    () => {
      const rows: Array<[number, number]> = JSON.parse(
        readText("binance_freqtrade_moon", "futures", "BTC_USDT-8h-funding_rate.json")
      )
      const rates = rows.map((r) => r[1] * 100)
      // The first settlement: -0.001533 % per 8 h is -1.678635 % a year.
      expect(aprPct(rate8hPct(rates[0] as number, 8))).toBeCloseTo(-0.001533 * 3 * 365, 12)
      // The second settlement flipped the sign: one sample after the flip is 0.
      expect(barsSinceSignFlip(rates.slice(0, 2))).toBe(0)
      let flips = 0
      for (let n = 1; n <= rates.length; n++) {
        const prefix = rates.slice(0, n)
        const ours = barsSinceSignFlip(prefix)
        expect(ours).toBe(bruteBarsSinceFlip(prefix))
        if (ours === 0) flips++
      }
      expect(flips).toBeGreaterThan(10)
    }
  )

  it.skipIf(!hasHistory("funding_supervik", "BTC-USDT_binance_2020-01-01_2024-01-01_funding_history.csv"))(
    "on real Binance BTC funding 2020-2023 the default 0.01 % settlement annualizes to 10.95 %",
    () => {
      const lines = readText("funding_supervik", "BTC-USDT_binance_2020-01-01_2024-01-01_funding_history.csv")
        .trim()
        .split("\n")
        .slice(1)
      const rates = lines.map((l) => Number(l.split(",")[2]) * 100)
      const defaults = rates.filter((r) => Math.abs(r - 0.01) < 1e-12)
      expect(defaults.length).toBeGreaterThan(500)
      expect(aprPct(rate8hPct(defaults[0] as number, 8))).toBeCloseTo(10.95, 10)
      expect(fundingBand(defaults[0] as number)).toBe("neutral")
    }
  )
})

describe("funding bands", () => {
  const eps = 1e-9
  it("sit on both sides of every threshold", () => {
    expect(fundingBand(FundingBandThresholds.subdued - eps)).toBe("negative")
    expect(fundingBand(FundingBandThresholds.subdued)).toBe("subdued")
    expect(fundingBand(FundingBandThresholds.neutral - eps)).toBe("subdued")
    expect(fundingBand(FundingBandThresholds.neutral)).toBe("neutral")
    expect(fundingBand(FundingBandThresholds.elevated - eps)).toBe("neutral")
    expect(fundingBand(FundingBandThresholds.elevated)).toBe("elevated")
    expect(fundingBand(FundingBandThresholds.stretched - eps)).toBe("elevated")
    expect(fundingBand(FundingBandThresholds.stretched)).toBe("stretched")
    expect(fundingBand(-0.05)).toBe("negative")
    expect(fundingBand(0)).toBe("subdued")
    expect(fundingBand(0.01)).toBe("neutral")
  })
})

describe("fundingAt: the aggregate without the per-venue objects", () => {
  const H = 3_600_000
  /** One venue's settlements every `every` hours with rates from a few values (ties, equal venues), some OI. */
  const venue = (name: string, rnd: () => number, every: number, withOi: boolean, negativeOi: boolean) => {
    const t: Array<number> = []
    const rate: Array<number> = []
    const intervalMs: Array<number> = []
    for (let x = 0; x < 200 * H; x += every * H) {
      if (rnd() < 0.1) continue
      t.push(x)
      rate.push([0.0001, -0.0002, 0.00005, 0.0001, 0.0003 * rnd()][Math.floor(rnd() * 5)] as number)
      intervalMs.push(every * H)
    }
    const ot: Array<number> = []
    const oiUsd: Array<number> = []
    if (withOi) {
      for (let x = 0; x < 200 * H; x += H / 4) {
        if (rnd() < 0.05) continue
        ot.push(x)
        oiUsd.push(negativeOi && rnd() < 0.2 ? -1 : rnd() < 0.05 ? 0 : 1e6 * rnd())
      }
    }
    return venueData(name, {
      funding: {
        kind: "funding",
        assetId: "a",
        venue: name,
        t: Float64Array.from(t),
        rate: Float64Array.from(rate),
        intervalMs: Float64Array.from(intervalMs)
      },
      ...(withOi
        ? {
            oi: {
              kind: "openInterest",
              assetId: "a",
              venue: name,
              t: Float64Array.from(ot),
              oiUsd: Float64Array.from(oiUsd)
            }
          }
        : {})
    })
  }

  it("is aggregateRate8hPct(fundingVenuesAt) bit for bit at every hour, weighted or not", () => {
    fc.assert(
      fc.property(fc.integer(), fc.integer({ min: 0, max: 4 }), (seed, count) => {
        const rnd = prng(seed)
        const memo = new MeasureMemo()
        const d = {
          assetId: "a",
          primary: undefined,
          venues: Array.from({ length: count }, (_, i) =>
            venue(`v${i}`, rnd, [1, 4, 8][i % 3] as number, rnd() < 0.8, rnd() < 0.2)
          )
        }
        for (let T = -H; T <= 210 * H; T += H / 2) {
          const expected = aggregateRate8hPct(fundingVenuesAt(d, T, memo)) ?? Number.NaN
          expect(Object.is(fundingAt(d, T, memo), expected)).toBe(true)
        }
      }),
      { numRuns: 60 }
    )
  })

  it("fundingMeasuresAt is the aggregate and the venues' rates of fundingVenuesAt, bit for bit, at every hour", () => {
    fc.assert(
      fc.property(fc.integer(), fc.integer({ min: 0, max: 4 }), (seed, count) => {
        const rnd = prng(seed)
        const memo = new MeasureMemo()
        const d = {
          assetId: "a",
          primary: undefined,
          venues: Array.from({ length: count }, (_, i) =>
            venue(`v${i}`, rnd, [1, 4, 8][i % 3] as number, rnd() < 0.8, rnd() < 0.2)
          )
        }
        for (let T = -H; T <= 210 * H; T += H / 2) {
          const venues = fundingVenuesAt(d, T, memo)
          const got = fundingMeasuresAt(d, T, memo)
          expect(Object.is(got.aggregate, aggregateRate8hPct(venues) ?? Number.NaN)).toBe(true)
          expect([...got.byVenue]).toEqual(venues.map((v) => [v.venue, v.ratePct]))
        }
      }),
      { numRuns: 60 }
    )
  })
})
