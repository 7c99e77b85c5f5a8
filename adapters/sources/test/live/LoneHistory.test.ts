/**
 * The history of a lone perpetual arrives within a minute of its quote (issue 29, point 11): a first live start on
 * an empty store with one instrument (a venue, or a replay, that lists one perpetual) stores its quote and its last
 * day of bars, and the bars job's first run, right after that start, fills the 90 days behind them, without waiting
 * for the next 15-minute slot. The crypto plane over that store answers the whole history's moving averages a minute
 * after the start, and while the history was still arriving it answered none across the hole. Nor does an outage
 * leave a hole for good: the bar forming after it is written only next to the bars behind it, which the bars job
 * fetches first (it resumes from the newest stored bar).
 *
 * The venue is a stub connector on the test clock (the test is about when the feed asks for what); the HTTP
 * connectors' own requests have their suites (Binance.test.ts, ...).
 */
import { assert, describe, it } from "@effect/vitest"
import { BAR_MS, MarketStore } from "@market-data/core"
import { Clock, Deferred, Effect, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import { makeCryptoPlane } from "../../../../core/src/crypto/CryptoPlane.ts"
import { callPlanes, dataOf } from "../../../../core/test/support/PlaneCall.ts"
import { makeMemoryMarketStore } from "../../../memory/src/MemoryMarketStore.ts"
import { makeCryptoFeed } from "../../src/live/CryptoFeed.ts"
import { SourceError } from "../../src/live/Http.ts"
import { makeLimiter } from "../../src/live/Limiter.ts"
import { type BarRow, pageOf, type VenueConnector, type VenueListing } from "../../src/live/Venue.ts"
import { klinesWeight } from "../../src/live/venues/binance/Rest.ts"

const H = 3_600_000
const DAY = 24 * H
const START = Date.parse("2026-11-20T12:07:00.000Z")
const SLOT = Math.floor(START / BAR_MS) * BAR_MS
const BACKFILL_DAYS = 90
const ID = "crypto:ethereum"

/** A price that differs at every bar (so an average across a hole is not the true one). */
const closeAt = (t: number) => 2_000 + 400 * Math.sin(t / (5 * DAY)) + ((t / BAR_MS) % 7)
const bar = (t: number): BarRow => {
  const close = closeAt(t)
  const open = closeAt(t - BAR_MS)
  return {
    t,
    open,
    high: Math.max(open, close) + 1,
    low: Math.min(open, close) - 1,
    close,
    volume: 10,
    takerBuyUsd: 5,
    takerSellUsd: 5
  }
}

const onGrid = (fromMs: number, toMs: number, stepMs: number, limit: number) => {
  const out: Array<number> = []
  for (let t = Math.ceil(fromMs / stepMs) * stepMs; t < toMs && out.length < limit; t += stepMs) out.push(t)
  return out
}

/**
 * One perpetual (ETHUSDT) with Binance's page sizes and weights; `pageTaken` hears of each page of bars served. While
 * `down()` every request fails (a 502).
 */
const lonePerpetual = (
  pageTaken: (fromMs: number) => Effect.Effect<void>,
  down: () => boolean = () => false
): VenueConnector => {
  const base = makeLimiter({ capacity: 1000, windowMs: 60_000 })
  const limiter = {
    ...base,
    take: (weight: number) =>
      down()
        ? Effect.fail(new SourceError({ source: "binance", kind: "status", status: 502, what: "GET", message: "down" }))
        : base.take(weight)
  }
  return {
    venue: "binance",
    limiter: base,
    listings: Effect.as(limiter.take(1), new Map<string, VenueListing>([["ETHUSDT", { symbol: "ETHUSDT" }]])),
    bars: (_i, fromMs, toMs) => {
      const limit = Math.max(1, Math.min(1000, Math.ceil((toMs - fromMs) / BAR_MS)))
      return Effect.gen(function* () {
        yield* limiter.take(klinesWeight(limit))
        yield* pageTaken(fromMs)
        const ts = onGrid(fromMs, toMs, BAR_MS, limit)
        return pageOf(ts.map(bar), ts.length, limit, toMs, BAR_MS)
      })
    },
    fundingHistory: (_i, fromMs, toMs) =>
      Effect.map(limiter.take(1), () => {
        const ts = onGrid(fromMs, toMs, 8 * H, 1000)
        return pageOf(
          ts.map((t) => ({ t, rate: 0.0001, intervalMs: 8 * H })),
          ts.length,
          1000,
          toMs,
          8 * H
        )
      }),
    tickers: (is) =>
      Effect.map(limiter.take(11), () =>
        is.map((i) => ({
          assetId: i.assetId,
          mark: closeAt(SLOT),
          index: closeAt(SLOT),
          oiUsd: 1e9,
          funding: { currentRate: 0.0001, predictedRate: 0.0001, intervalMs: 8 * H, nextFundingMs: SLOT + 4 * H }
        }))
      ),
    book: (i, nowMs) =>
      Effect.as(limiter.take(5), {
        assetId: i.assetId,
        venue: "binance",
        t: nowMs,
        bids: [[closeAt(SLOT) - 0.5, 10]],
        asks: [[closeAt(SLOT) + 0.5, 10]]
      }),
    openInterestHistory: (_i, fromMs, toMs) =>
      Effect.map(limiter.take(1), () => {
        const ts = onGrid(fromMs, toMs, BAR_MS, 500)
        return pageOf(
          ts.map((t) => ({ t, oiUsd: 1e9 })),
          ts.length,
          500,
          toMs,
          BAR_MS
        )
      }),
    bookWeight: 5,
    klinesCarryTakerFlow: true,
    formingBar: (_i, slotMs) => Effect.as(limiter.take(1), bar(slotMs)),
    formingEveryMs: 60_000
  }
}

/** Lets the feed's fiber run until it waits on the clock again (the stub never waits on anything else). */
const settle = Effect.gen(function* () {
  for (let k = 0; k < 300; k++) yield* Effect.yieldNow
})

/** The mean of the `n` hourly closes before `endMs` (each hour's close is its last 15 m bar's). */
const hourlySma = (endMs: number, n: number) => {
  let sum = 0
  for (let k = 1; k <= n; k++) sum += closeAt(endMs - (k - 1) * H - BAR_MS)
  return sum / n
}

describe("a first live start with one perpetual", () => {
  it.effect("stores its 90 days of history within a minute of its quote; no average across the hole meanwhile", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(START)
      const store = makeMemoryMarketStore()
      const plane = yield* makeCryptoPlane.pipe(Effect.provideService(MarketStore, store))
      const technicals = Effect.gen(function* () {
        const nowMs = yield* Clock.currentTimeMillis
        return dataOf<any>(
          yield* callPlanes(
            [plane],
            "technicals",
            [
              ["id", ID],
              ["timeframe", "1h"]
            ],
            nowMs
          )
        )
      })
      // The plane's answer just after the backfill's first page is stored (the hole still open behind the day).
      const midway = yield* Deferred.make<any>()
      let deepPages = 0
      const feed = yield* makeCryptoFeed(
        lonePerpetual((fromMs) =>
          fromMs < SLOT - DAY && ++deepPages === 2
            ? technicals.pipe(
                Effect.flatMap((t) => Deferred.succeed(midway, t)),
                Effect.orDie,
                Effect.asVoid
              )
            : Effect.void
        ),
        { backfillDays: BACKFILL_DAYS, fundingBackfillDays: 365, jitterMs: 0, assetIds: [ID] }
      ).pipe(Effect.provide(Layer.succeed(MarketStore)(store)))
      const fiber = yield* Effect.forkChild(feed.run)
      yield* settle
      for (let s = 0; s < 60; s++) {
        yield* TestClock.adjust(1_000)
        yield* settle
      }

      const quote = (yield* store.extent("markIndex", ID))[0]
      assert.isDefined(quote, "the quote")
      const bars = (yield* store.extent("bars", ID)).find((e) => e.venue === "binance")
      // Every bar of the 90 days up to the last closed one, and the one forming.
      assert.strictEqual(bars?.firstMs, SLOT - BACKFILL_DAYS * DAY)
      assert.strictEqual(bars?.lastMs, SLOT)
      assert.strictEqual(bars?.count, BACKFILL_DAYS * 96 + 1)

      const during = yield* Deferred.await(midway)
      assert.isNull(during.moving_averages.sma_50)
      assert.strictEqual(during.unavailable["moving_averages.sma_50"].reason, "insufficient_history")

      const after = yield* technicals
      const near = (got: number, want: number) => assert.isAtMost(Math.abs(got - want), 1e-9 * want)
      near(after.moving_averages.sma_50, hourlySma(SLOT, 50))
      near(after.moving_averages.sma_200, hourlySma(SLOT, 200))
      yield* Fiber.interrupt(fiber)
    })
  )
})

describe("the live feed through an outage", () => {
  it.effect("leaves no hole: the bar forming after it waits for the bars behind it", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(START)
      const store = makeMemoryMarketStore()
      let down = false
      const feed = yield* makeCryptoFeed(
        lonePerpetual(
          () => Effect.void,
          () => down
        ),
        { backfillDays: 2, fundingBackfillDays: 2, jitterMs: 0, assetIds: [ID] }
      ).pipe(Effect.provide(Layer.succeed(MarketStore)(store)))
      const fiber = yield* Effect.forkChild(feed.run)
      const advance = (seconds: number) =>
        Effect.gen(function* () {
          for (let s = 0; s < seconds; s++) {
            yield* TestClock.adjust(1_000)
            yield* settle
          }
        })
      yield* settle
      yield* advance(10 * 60)
      // Down from 12:17 to 12:50: every job fails and backs off (the bars job up to 5 minutes, the forming bar's 1).
      down = true
      yield* advance(33 * 60)
      down = false
      yield* advance(20 * 60)
      const nowMs = yield* Clock.currentTimeMillis
      const held = (yield* store.read("bars", { assetId: ID, venue: "binance", fromMs: 0, toMs: nowMs }))[0]
      assert.strictEqual(held?.t[held.t.length - 1], Math.floor(nowMs / BAR_MS) * BAR_MS)
      const ts = Array.from(held?.t ?? [])
      const missing = ts.flatMap((t, k) =>
        k > 0 && t - (ts[k - 1] as number) !== BAR_MS ? [new Date(t).toISOString()] : []
      )
      assert.deepStrictEqual(missing, [], "bars held end to end")
      yield* Fiber.interrupt(fiber)
    })
  )
})
