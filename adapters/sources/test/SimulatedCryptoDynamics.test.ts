/**
 * Plausibility of the simulated market over a year of 15-minute data: volatility clusters, funding follows
 * returns, liquidation bursts sit on sharp moves (on the side the move hurts), spreads widen and depth thins
 * with volatility, trends persist, and venues differ in basis and funding.
 */

import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { aggregateBars, cryptoAsset, DAY_MS, HOUR_MS, MarketStore, type Series } from "@market-data/core"
import { makeMemoryMarketStore } from "@market-data/memory"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { backfill, makeSimulation } from "../src/simulated/crypto/index.ts"

const NOW = Date.UTC(2026, 10, 23, 6, 0)
const SLUGS = ["bitcoin", "ethereum", "solana", "dogecoin", "sui", "pepe"]
const ASSETS = SLUGS.map((s) => cryptoAsset(`crypto:${s}`)!)

const store = makeMemoryMarketStore()
const report = await Effect.runPromise(
  backfill(makeSimulation({ seed: "2026", nowMs: NOW, assets: ASSETS }), NOW).pipe(
    Effect.provideService(MarketStore, store)
  )
)
const read = <K extends "bars" | "funding" | "liquidations" | "bookMetrics" | "markIndex">(
  kind: K,
  assetId: string,
  venue: string,
  fromMs = report.fromMs
) => Effect.runSync(store.read(kind, { assetId, venue, fromMs, toMs: report.toMs + 1 }))[0] as Series<K>

const mean = (xs: ArrayLike<number>) => {
  let sum = 0
  for (let i = 0; i < xs.length; i++) sum += xs[i] as number
  return sum / xs.length
}
const corr = (xs: ArrayLike<number>, ys: ArrayLike<number>) => {
  const mx = mean(xs)
  const my = mean(ys)
  let sxy = 0
  let sxx = 0
  let syy = 0
  for (let i = 0; i < xs.length; i++) {
    const dx = (xs[i] as number) - mx
    const dy = (ys[i] as number) - my
    sxy += dx * dy
    sxx += dx * dx
    syy += dy * dy
  }
  return sxy / Math.sqrt(sxx * syy)
}
const acf = (xs: ArrayLike<number>, lag: number) =>
  corr(Array.prototype.slice.call(xs, 0, xs.length - lag), Array.prototype.slice.call(xs, lag))
const returnsOf = (bars: Series<"bars">) => {
  const r = new Float64Array(bars.t.length - 1)
  for (let i = 1; i < bars.t.length; i++) r[i - 1] = Math.log((bars.close[i] as number) / (bars.close[i - 1] as number))
  return r
}
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number

describe("simulated market dynamics (one year, seed 2026)", () => {
  it("clusters volatility: absolute returns autocorrelate, returns themselves hardly do", () => {
    for (const a of ASSETS) {
      const r = returnsOf(read("bars", a.id, "binance"))
      const abs = r.map(Math.abs)
      expect(acf(abs, 1), a.id).toBeGreaterThan(0.15)
      expect(acf(abs, 16), a.id).toBeGreaterThan(0.08)
      expect(Math.abs(acf(r, 1)), a.id).toBeLessThan(0.05)
    }
  })

  it("has fat tails: excess kurtosis of 15-minute returns well above a normal's", () => {
    for (const a of ASSETS) {
      const r = returnsOf(read("bars", a.id, "binance"))
      const m = mean(r)
      const v = mean(r.map((x) => (x - m) ** 2))
      const k = mean(r.map((x) => (x - m) ** 4)) / v ** 2 - 3
      expect(k, a.id).toBeGreaterThan(1)
    }
  })

  it("persists trends: multi-day variance exceeds the sum of 15-minute variances (variance ratio > 1)", () => {
    const ratios = ASSETS.map((a) => {
      const r = returnsOf(read("bars", a.id, "binance"))
      const q = 4 * 96
      const v1 = mean(r.map((x) => x * x))
      const sums: Array<number> = []
      for (let i = 0; i + q <= r.length; i += 24) {
        let s = 0
        for (let j = i; j < i + q; j++) s += r[j] as number
        sums.push(s * s)
      }
      return mean(sums) / (q * v1)
    })
    // 1.10 for this seed since prices stay in their ranges (the unbounded drift of the model before gave 1.20).
    expect(mean(ratios)).toBeGreaterThan(1.05)
  })

  it("ties funding to returns: settlements correlate with the trailing day's return on every venue", () => {
    for (const a of ASSETS) {
      for (const l of a.listings) {
        const funding = read("funding", a.id, l.venue)
        const bars = read("bars", a.id, l.venue)
        const closeAt = new Map(Array.from(bars.t, (t, i) => [t + 15 * 60_000, bars.close[i] as number]))
        const xs: Array<number> = []
        const ys: Array<number> = []
        funding.t.forEach((t, i) => {
          const now = closeAt.get(t)
          const before = closeAt.get(t - DAY_MS)
          if (now === undefined || before === undefined) return
          xs.push(Math.log(now / before))
          ys.push(((funding.rate[i] as number) * 8 * HOUR_MS) / (funding.intervalMs[i] as number))
        })
        expect(xs.length).toBeGreaterThan(300)
        expect(corr(xs, ys), `${a.id} ${l.venue}`).toBeGreaterThan(0.3)
      }
    }
  })

  it("liquidates in bursts on sharp moves, on the side the move hurts", () => {
    for (const a of ASSETS) {
      const bars = read("bars", a.id, "binance")
      const r = returnsOf(bars)
      const liq = read("liquidations", a.id, "binance")
      const byBar = new Map<number, { long: number; short: number }>()
      liq.t.forEach((t, i) => {
        const k = Math.floor((t - report.fromMs) / (15 * 60_000))
        const e = byBar.get(k) ?? { long: 0, short: 0 }
        e.long += liq.longUsd[i] as number
        e.short += liq.shortUsd[i] as number
        byBar.set(k, e)
      })
      const ranked = [...byBar.entries()]
        .filter(([k]) => k > 0)
        .sort((x, y) => y[1].long + y[1].short - (x[1].long + x[1].short))
      const top = ranked.slice(0, Math.max(10, Math.floor(ranked.length * 0.01)))
      const typical = median(Array.from(r, Math.abs))
      const moves = top.map(([k]) => Math.abs(r[k - 1] as number))
      expect(median(moves) / typical, a.id).toBeGreaterThan(5)
      const sided = top.filter(([k, e]) => ((r[k - 1] as number) < 0 ? e.long > e.short : e.short > e.long)).length
      expect(sided / top.length, a.id).toBeGreaterThan(0.9)
    }
  })

  it("widens spreads and thins depth as volatility rises", () => {
    for (const a of ASSETS) {
      const bars = read("bars", a.id, "okx", report.toMs - 100 * DAY_MS)
      const book = read("bookMetrics", a.id, "okx", report.toMs - 100 * DAY_MS + 15 * 60_000)
      const r = returnsOf(bars)
      // Realised volatility over the 8 bars up to each book snapshot (the snapshot at a bar's close).
      const vol: Array<number> = []
      const spread: Array<number> = []
      const depth: Array<number> = []
      for (let i = 8; i < r.length && i < book.t.length; i++) {
        let s = 0
        for (let j = i - 7; j <= i; j++) s += (r[j] as number) ** 2
        vol.push(Math.sqrt(s / 8))
        spread.push(book.spreadPct[i + 1] as number)
        depth.push((book.bidDepthUsd[i + 1] as number) + (book.askDepthUsd[i + 1] as number))
      }
      expect(corr(vol, spread), a.id).toBeGreaterThan(0.3)
      expect(corr(vol, depth), a.id).toBeLessThan(-0.15)
    }
  })

  it("differs by venue: standing basis offsets, and hyperliquid's funding swings widest", () => {
    const basis = (venue: string) => {
      const m = read("markIndex", "crypto:bitcoin", venue)
      return mean(Array.from(m.t, (_, i) => (m.mark[i] as number) / (m.index[i] as number) - 1))
    }
    expect(basis("bybit")).toBeGreaterThan(basis("binance"))
    expect(basis("binance")).toBeGreaterThan(basis("okx"))
    const f8hStd = (venue: string) => {
      const f = read("funding", "crypto:ethereum", venue)
      const xs = Array.from(f.rate, (x, i) => (x * 8 * HOUR_MS) / (f.intervalMs[i] as number))
      const m = mean(xs)
      return Math.sqrt(mean(xs.map((x) => (x - m) ** 2)))
    }
    expect(f8hStd("hyperliquid")).toBeGreaterThan(f8hStd("binance"))
    expect(f8hStd("hyperliquid")).toBeGreaterThan(f8hStd("okx"))
  })
})

const HISTORY = join(
  import.meta.dirname,
  "..",
  "..",
  "..",
  "..",
  "shared",
  "data",
  "history",
  "binance_freqtrade_moon",
  "futures"
)
const hasHistory = existsSync(join(HISTORY, "BTC_USDT-1h-futures.json"))
if (!hasHistory) console.warn(`real-data comparison SKIPPED: ${HISTORY} is absent (CI has it)`)

describe.skipIf(!hasHistory)("simulated market against real Binance BTC data (../shared/data/history)", () => {
  const hourlyStats = (closes: ReadonlyArray<number>) => {
    const r = closes.slice(1).map((c, i) => Math.log(c / (closes[i] as number)))
    const abs = r.map(Math.abs)
    return { absAcf1: acf(abs, 1), absAcf24: acf(abs, 24), acf1: acf(r, 1) }
  }

  it("has the stylized facts of real BTC hourly returns: clustered volatility of a similar strength, no linear memory", () => {
    const real = JSON.parse(readFileSync(join(HISTORY, "BTC_USDT-1h-futures.json"), "utf8")) as Array<Array<number>>
    const realStats = hourlyStats(real.map((k) => k[4] as number))
    const sim = hourlyStats([...aggregateBars(read("bars", "crypto:bitcoin", "binance"), "1h").close])
    expect(sim.absAcf1).toBeGreaterThan(realStats.absAcf1 * 0.6)
    expect(sim.absAcf1).toBeLessThan(realStats.absAcf1 * 1.6)
    expect(sim.absAcf24).toBeGreaterThan(realStats.absAcf24 * 0.6)
    expect(sim.absAcf24).toBeLessThan(realStats.absAcf24 * 1.6)
    expect(Math.abs(sim.acf1)).toBeLessThan(0.05)
    expect(Math.abs(realStats.acf1)).toBeLessThan(0.05)
  })

  it("settles 8-hour funding like the real venue: often exactly the 0.01 % interest rate, within the real range", () => {
    const real = (
      JSON.parse(readFileSync(join(HISTORY, "BTC_USDT-8h-funding_rate.json"), "utf8")) as Array<Array<number>>
    ).map((x) => x[1] as number)
    const sim = [...read("funding", "crypto:bitcoin", "binance").rate]
    const atInterest = (xs: ReadonlyArray<number>) => xs.filter((x) => Math.abs(x - 0.0001) < 1e-12).length / xs.length
    expect(atInterest(real)).toBeGreaterThan(0.2)
    expect(atInterest(sim)).toBeGreaterThan(0.2)
    expect(atInterest(sim)).toBeLessThan(0.8)
    const realMaxAbs = Math.max(...real.map(Math.abs))
    expect(Math.max(...sim.map(Math.abs))).toBeLessThan(realMaxAbs * 3)
    expect(Math.max(...sim.map(Math.abs))).toBeGreaterThan(0.0003)
  })
})
