/**
 * Technicals do not depend on the minute the stored history began (issue 20): a backfill that starts mid-way
 * through a 4 h or 1 d period must not count that period's remainder as a whole bar. Stores holding the same
 * price path from different starting minutes give equal 4 h and 1 d technicals, and the 1 d moving averages
 * equal an independent computation over the complete days only.
 */
import { assert, describe, it } from "@effect/vitest"
import { makeMemoryMarketStore } from "@market-data/memory"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { makeCryptoPlane } from "../../src/crypto/CryptoPlane.ts"
import { BAR_MS, MarketStore } from "../../src/crypto/Market.ts"
import { decodeParams, isApiError } from "../../src/Params.ts"
import type { Handler, HandlerInput } from "../../src/Pipeline.ts"
import { planeHandlers } from "../../src/Planes.ts"
import { operation } from "../../src/Registry.ts"
import { prng } from "./support/Fixture.ts"

const H = 3_600_000
const DAY = 24 * H
const END = Date.UTC(2026, 10, 20) // a UTC midnight: the newest 1 d bar is closed
const NOW = END + 60_000
const ORIGIN = END - 240 * DAY
const ID = "crypto:bitcoin"

/** One 15 m price path from ORIGIN to END (every store below holds a suffix of it). */
const path = (() => {
  const rnd = prng(20)
  const t: Array<number> = []
  const open: Array<number> = []
  const high: Array<number> = []
  const low: Array<number> = []
  const close: Array<number> = []
  let p = 2_000
  for (let x = ORIGIN; x < END; x += BAR_MS) {
    const o = p
    p *= 1 + 0.004 * (rnd() - 0.5) + 0.0003 * Math.sin(x / (9 * DAY))
    t.push(x)
    open.push(o)
    high.push(Math.max(o, p) * (1 + 0.002 * rnd()))
    low.push(Math.min(o, p) * (1 - 0.002 * rnd()))
    close.push(p)
  }
  return { t, open, high, low, close }
})()

/** `name` answered over a store holding the path from `startMs` on (a backfill that began then). */
const callFrom = (startMs: number, name: string, extra: ReadonlyArray<readonly [string, unknown]>) =>
  Effect.gen(function* () {
    const store = makeMemoryMarketStore()
    const from = path.t.indexOf(startMs)
    assert.isAtLeast(from, 0)
    const cut = (c: Array<number>) => c.slice(from)
    yield* store.write([
      {
        kind: "bars",
        assetId: ID,
        venue: "binance",
        t: cut(path.t),
        open: cut(path.open),
        high: cut(path.high),
        low: cut(path.low),
        close: cut(path.close),
        volume: cut(path.t).map(() => 5)
      }
    ])
    yield* TestClock.setTime(NOW)
    const plane = yield* makeCryptoPlane.pipe(Effect.provideService(MarketStore, store))
    const op = operation(name) as NonNullable<ReturnType<typeof operation>>
    const params = decodeParams(op, [["id", ID], ...extra])
    if (isApiError(params)) return assert.fail(params.message)
    const input: HandlerInput = {
      op,
      params,
      principal: { _tag: "Anonymous", client: "test", rateLimitPerMinute: 60 },
      rate: { limit: 60, remaining: 59, resetAtMs: NOW, allowed: true },
      nowMs: NOW
    }
    const out = yield* (planeHandlers([plane]).get(name) as Handler)(input)
    if (out._tag !== "Json") return assert.fail(`${name}: not JSON`)
    return (out.body as { data: any }).data
  })

const technicalsFrom = (startMs: number, timeframe: "4h" | "1d") =>
  callFrom(startMs, "technicals", [["timeframe", timeframe]])

/** EMA seeded with the SMA of the first `n` values (the documented definition), last value. */
const emaLast = (values: ReadonlyArray<number>, n: number) => {
  let e = values.slice(0, n).reduce((s, x) => s + x, 0) / n
  for (let i = n; i < values.length; i++) e = ((values[i] as number) - e) * (2 / (n + 1)) + e
  return e
}

describe("technicals whatever minute the history began", () => {
  // Starts inside one 4 h period (08:00-12:00 of the first day), and that period's end.
  const day0 = ORIGIN
  const starts = [day0 + 8 * H + BAR_MS, day0 + 9 * H + 45 * 60_000, day0 + 11 * H + 45 * 60_000]

  it.effect("4 h: backfills started at 08:15, 09:45, 11:45 and 12:00 give equal technicals", () =>
    Effect.gen(function* () {
      const reference = yield* technicalsFrom(day0 + 12 * H, "4h")
      assert.isNumber(reference.moving_averages.ema_200)
      assert.isNumber(reference.moving_averages.ema_50)
      assert.isNumber(reference.adx_14.value)
      for (const start of starts) {
        const got = yield* technicalsFrom(start, "4h")
        assert.deepStrictEqual(got, reference, `history from ${new Date(start).toISOString()}`)
      }
    })
  )

  it.effect("1 d: backfills started during the first day give the technicals of complete days only", () =>
    Effect.gen(function* () {
      const reference = yield* technicalsFrom(day0 + DAY, "1d")
      for (const start of [...starts, day0 + 12 * H, day0 + 23 * H + 45 * 60_000]) {
        const got = yield* technicalsFrom(start, "1d")
        assert.deepStrictEqual(got, reference, `history from ${new Date(start).toISOString()}`)
      }
      // Independently: the daily closes of the 239 complete days, their 50- and 200-day EMAs.
      const closes: Array<number> = []
      path.t.forEach((t, i) => {
        if (t >= day0 + DAY && (t + BAR_MS) % DAY === 0) closes.push(path.close[i] as number)
      })
      assert.strictEqual(closes.length, 239)
      const near = (a: number, b: number) => assert.isAtMost(Math.abs(a - b), 1e-9 * Math.abs(b))
      near(reference.moving_averages.ema_200, emaLast(closes, 200))
      near(reference.moving_averages.ema_50, emaLast(closes, 50))
      assert.isNumber(reference.adx_14.value)
    })
  )

  it.effect("series: the first bar of a history that began mid-day is the first complete day", () =>
    Effect.gen(function* () {
      const s = yield* callFrom(day0 + 8 * H + BAR_MS, "series", [
        ["interval", "1d"],
        ["range", "max"],
        ["limit", 500]
      ])
      assert.strictEqual(s.bars.length, 239)
      assert.strictEqual(s.bars[0].t, new Date(day0 + DAY).toISOString())
      assert.strictEqual(s.bars[0].o, Number((path.open[path.t.indexOf(day0 + DAY)] as number).toPrecision(10)))
    })
  )
})
