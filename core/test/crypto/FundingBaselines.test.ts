/**
 * Funding percentiles over the settlement history the store holds (issue 20): the aggregate of one venue is
 * that venue's rate exactly, so their percentiles agree even with a quarter of the settlements tied on the
 * 0.01 % default; `pctl_1y` ranks against a year of settlements although the bars cover only 90 days; every
 * percentile says how many samples it was computed over; venues that agree print a spread of 0. Percentiles
 * are checked against a brute-force recomputation from the raw settlements.
 */
import { assert, describe, it } from "@effect/vitest"
import { makeMemoryMarketStore } from "@market-data/memory"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { makeCryptoPlane } from "../../src/crypto/CryptoPlane.ts"
import { type AnySeriesInput, BAR_MS, MarketStore } from "../../src/crypto/Market.ts"
import { decodeParams, isApiError } from "../../src/Params.ts"
import type { Handler, HandlerInput } from "../../src/Pipeline.ts"
import { planeHandlers } from "../../src/Planes.ts"
import { operation } from "../../src/Registry.ts"
import { prng } from "./support/Fixture.ts"
import { hasHistory, readText } from "./support/SharedData.ts"

const H = 3_600_000
const DAY = 24 * H
const END = Date.UTC(2026, 10, 20, 12, 0)
const NOW = END + 60_000
const ID = "crypto:bitcoin"

/** 15 m bars of the primary venue (Binance) over the `days` before END. */
const bars = (days: number): AnySeriesInput => {
  const rnd = prng(7)
  const t: Array<number> = []
  const close: Array<number> = []
  let p = 60_000
  for (let x = END - days * DAY; x < END; x += BAR_MS) {
    p *= 1 + 0.002 * (rnd() - 0.5)
    t.push(x)
    close.push(p)
  }
  return {
    kind: "bars",
    assetId: ID,
    venue: "binance",
    t,
    open: close,
    high: close.map((c) => c * 1.001),
    low: close.map((c) => c * 0.999),
    close,
    volume: close.map(() => 10)
  }
}

/** Open interest every 15 minutes over `days`, in USD with cents (what weights the aggregate). */
const openInterest = (venue: string, days: number, seed: number): AnySeriesInput => {
  const rnd = prng(seed)
  const t: Array<number> = []
  const oiUsd: Array<number> = []
  for (let x = END - days * DAY; x < END; x += BAR_MS) {
    t.push(x)
    oiUsd.push(Math.round((4e9 + 3e9 * rnd()) * 100) / 100)
  }
  return { kind: "openInterest", assetId: ID, venue, t, oiUsd }
}

/**
 * Real-shaped 8 h settlements over `days` up to END (END included): a quarter exactly on the 0.01 % default,
 * the rest with eight decimals as Binance publishes them; the year before the last 90 days runs hotter.
 */
const settlements = (days: number) => {
  const rnd = prng(11)
  const t: Array<number> = []
  const rate: Array<number> = []
  for (let x = END - days * DAY; x <= END; x += 8 * H) {
    const recent = x > END - 90 * DAY
    const r =
      x === END || rnd() < 0.25
        ? 0.0001
        : Number(((recent ? -0.00006 : 0.00003) + (recent ? 0.00022 : 0.0003) * rnd()).toFixed(8))
    t.push(x)
    rate.push(r)
  }
  return { t, rate }
}

const fundingSeries = (venue: string, s: { t: Array<number>; rate: Array<number> }, intervalMs: number) =>
  ({
    kind: "funding",
    assetId: ID,
    venue,
    t: s.t,
    rate: s.rate,
    intervalMs: s.t.map(() => intervalMs)
  }) as AnySeriesInput

const setup = (batch: ReadonlyArray<AnySeriesInput>) =>
  Effect.gen(function* () {
    const store = makeMemoryMarketStore()
    yield* store.write(batch)
    yield* TestClock.setTime(NOW)
    const plane = yield* makeCryptoPlane.pipe(Effect.provideService(MarketStore, store))
    const handlers = planeHandlers([plane])
    return (name: string) =>
      Effect.gen(function* () {
        const op = operation(name) as NonNullable<ReturnType<typeof operation>>
        const params = decodeParams(op, [["id", ID]])
        if (isApiError(params)) return assert.fail(params.message)
        const input: HandlerInput = {
          op,
          params,
          principal: { _tag: "Anonymous", client: "test", rateLimitPerMinute: 60 },
          rate: { limit: 60, remaining: 59, resetAtMs: NOW, allowed: true },
          nowMs: NOW
        }
        const out = yield* (handlers.get(name) as Handler)(input)
        if (out._tag !== "Json") return assert.fail(`${name}: not JSON`)
        return { data: (out.body as { data: any }).data, text: JSON.stringify(out.body) }
      })
  })

/** The venue's rate (percent per 8 h) at each hour in (END - window, END], from the newest settlement. */
const hourlyRates = (s: { t: Array<number>; rate: Array<number> }, windowMs: number) => {
  const out: Array<number> = []
  let i = 0
  for (let h = END - windowMs + H; h <= END; h += H) {
    while (i + 1 < s.t.length && (s.t[i + 1] as number) <= h) i++
    if ((s.t[i] as number) <= h) out.push((s.rate[i] as number) * 100)
  }
  return out
}
/** Brute-force mid-rank percentile with one decimal, ties compared exactly. */
const pctl = (value: number, samples: ReadonlyArray<number>) => {
  const below = samples.filter((x) => x < value).length
  const equal = samples.filter((x) => x === value).length
  return Math.round(((100 * (below + equal / 2)) / samples.length) * 10) / 10
}

describe("funding percentiles over the settlement history", () => {
  it.effect("one venue, a quarter of settlements on 0.01 %: the aggregate's pctl is the venue's rate_pctl", () =>
    Effect.gen(function* () {
      const s = settlements(365)
      const call = yield* setup([bars(90), openInterest("binance", 365, 3), fundingSeries("binance", s, 8 * H)])
      const f = (yield* call("funding")).data.funding
      assert.strictEqual(f.venues, 1)
      const venue = f.by_venue[0]
      assert.strictEqual(f.rate_8h_pct.value, 0.01)
      assert.strictEqual(venue.rate_8h_pct, 0.01)
      // A quarter of the samples tie with the value: split ties would move the percentile.
      const ninety = hourlyRates(s, 90 * DAY)
      assert.isAbove(ninety.filter((r) => r === 0.01).length, ninety.length / 5)
      assert.strictEqual(f.rate_8h_pct.pctl, pctl(0.01, ninety))
      assert.strictEqual(f.rate_8h_pct.pctl, venue.rate_pctl)
      assert.strictEqual(f.rate_8h_pct.n, 2160)
      assert.strictEqual(venue.rate_pctl_n, 2160)
    })
  )

  const REAL = ["funding_supervik", "BTC-USDT_binance_2020-01-01_2024-01-01_funding_history.csv"] as const
  it.effect.skipIf(!hasHistory(...REAL))(
    "real Binance BTC settlements (2023, a third on 0.01 %): one venue's pctl and pctl_1y equal brute force",
    () =>
      Effect.gen(function* () {
        // The year's 1,095 settlements, moved so the newest settles at END (their order and values kept).
        const rates = readText(...REAL)
          .trim()
          .split("\n")
          .slice(1)
          .map((l) => Number(l.split(",")[2]))
          .slice(-1096)
        const s = { t: rates.map((_, i) => END - (rates.length - 1 - i) * 8 * H), rate: rates }
        const call = yield* setup([bars(90), openInterest("binance", 366, 5), fundingSeries("binance", s, 8 * H)])
        const f = (yield* call("funding")).data.funding
        const value = (rates.at(-1) as number) * 100
        assert.strictEqual(f.rate_8h_pct.value, value)
        const ninety = hourlyRates(s, 90 * DAY)
        const year = hourlyRates(s, 365 * DAY)
        assert.isAbove(year.filter((r) => r === 0.01).length, year.length / 5)
        assert.strictEqual(f.rate_8h_pct.pctl, pctl(value, ninety))
        assert.strictEqual(f.rate_8h_pct.pctl, f.by_venue[0].rate_pctl)
        assert.strictEqual(f.rate_8h_pct.pctl_1y, pctl(value, year))
        assert.strictEqual(f.rate_8h_pct.n_1y, 8760)
      })
  )

  it.effect("90 days of bars and a year of settlements: pctl_1y ranks against the year, pctl the 90 days", () =>
    Effect.gen(function* () {
      const s = settlements(365)
      const call = yield* setup([bars(90), openInterest("binance", 365, 3), fundingSeries("binance", s, 8 * H)])
      const f = (yield* call("funding")).data.funding
      const year = hourlyRates(s, 365 * DAY)
      assert.strictEqual(year.length, 8760)
      assert.strictEqual(f.rate_8h_pct.n_1y, 8760)
      assert.strictEqual(f.rate_8h_pct.pctl_1y, pctl(0.01, year))
      assert.strictEqual(f.rate_8h_pct.pctl, pctl(0.01, hourlyRates(s, 90 * DAY)))
      // The older nine months ran hotter: against the year, 0.01 % ranks lower than against the last 90 days.
      assert.isBelow(f.rate_8h_pct.pctl_1y, f.rate_8h_pct.pctl - 10)
      // The bar-derived measures still start a week into the bars (their 7-day look-back).
      const read = (yield* call("read")).data
      assert.strictEqual(read.baseline.n, (90 - 7) * 24 + 1)
      assert.strictEqual(read.headline.funding_rate_8h_pct.n, 2160)
    })
  )

  it.effect("a short settlement history says so: n and n_1y count the hours it covers", () =>
    Effect.gen(function* () {
      const s = settlements(30)
      const call = yield* setup([bars(90), openInterest("binance", 90, 3), fundingSeries("binance", s, 8 * H)])
      const f = (yield* call("funding")).data.funding
      const all = hourlyRates(s, 365 * DAY)
      assert.strictEqual(all.length, 30 * 24 + 1)
      assert.strictEqual(f.rate_8h_pct.n, all.length)
      assert.strictEqual(f.rate_8h_pct.n_1y, all.length)
      assert.strictEqual(f.rate_8h_pct.pctl_1y, f.rate_8h_pct.pctl)
      assert.strictEqual(f.rate_8h_pct.pctl, pctl(0.01, all))
    })
  )

  it.effect("venues that agree print a spread of exactly 0, and no figure carries float residue", () =>
    Effect.gen(function* () {
      // Binance at 0.003 % per 8 h; a venue whose settlements come 3 h apart at the same rate per 8 h.
      const bn = { t: [] as Array<number>, rate: [] as Array<number> }
      for (let x = END - 20 * DAY; x <= END; x += 8 * H) bn.t.push(x) && bn.rate.push(0.00003)
      const ok = { t: [] as Array<number>, rate: [] as Array<number> }
      for (let x = END - 20 * DAY; x <= END; x += 3 * H) ok.t.push(x) && ok.rate.push(0.00001125)
      const call = yield* setup([
        bars(20),
        openInterest("binance", 20, 3),
        openInterest("okx", 20, 4),
        fundingSeries("binance", bn, 8 * H),
        fundingSeries("okx", ok, 3 * H)
      ])
      const { data, text } = yield* call("funding")
      const f = data.funding
      assert.strictEqual(f.venues, 2)
      assert.deepStrictEqual(
        f.by_venue.map((v: any) => v.rate_8h_pct),
        [0.003, 0.003]
      )
      assert.strictEqual(f.venue_spread_8h_pct, 0)
      assert.strictEqual(f.rate_8h_pct.value, 0.003)
      assert.strictEqual(f.apr_pct, 3.285)
      // Equal rates on both venues at every hour: the percentiles agree too.
      assert.strictEqual(f.by_venue[0].rate_pctl, f.by_venue[1].rate_pctl)
      assert.notMatch(text, /\de-\d/)
    })
  )
})
