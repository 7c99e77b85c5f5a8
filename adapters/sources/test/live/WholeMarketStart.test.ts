/**
 * A first start in live mode on an empty store, at the whole market's size (DECISIONS, "Whole-market start-up and
 * growth"): 550 perpetuals on one venue with Binance's request weights (klines by their limit, the all-symbol
 * premium index 10, open interest and its history 1, depth 5) behind the real feed and the real limiter, on the
 * test clock. Every perpetual has its quote and its last day of bars within a minute (those this venue prices first,
 * the busiest first); the 90-day history fills in behind them, the busiest (by open interest) first; the books come
 * in cycles the budget allows, and their status reads live at the cadence the cycles measure; no minute spends more
 * weight than the bucket allows.
 *
 * The venue is a stub connector (no HTTP: the test is about what the feed asks for and when, and runs 70 minutes
 * of the clock); the HTTP connectors' own requests and parsing have their suites (Binance.test.ts, ...).
 */
import { assert, describe, it } from "@effect/vitest"
import { BAR_MS, type CryptoAsset, freshnessOf, MarketStore } from "@market-data/core"
import { Clock, Effect, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import { makeMemoryMarketStore } from "../../../memory/src/MemoryMarketStore.ts"
import { makeCryptoFeed } from "../../src/live/CryptoFeed.ts"
import { makeLimiter } from "../../src/live/Limiter.ts"
import { type BarRow, pageOf, type VenueConnector, type VenueListing } from "../../src/live/Venue.ts"
import { klinesWeight } from "../../src/live/venues/binance/Rest.ts"

const N = 550
const DAY = 86_400_000
const START = Date.parse("2026-11-20T12:07:00.000Z")
const SLOT = Math.floor(START / BAR_MS) * BAR_MS
const BACKFILL_DAYS = 90

const symbols = Array.from({ length: N }, (_, k) => `C${k}USDT`)
const pricedElsewhere = (k: number) => k % 3 === 0
const idOf = (k: number) => `crypto:c${k}`
const universe = symbols.map((symbol, k) => ({
  id: idOf(k),
  symbol: `C${k}`,
  name: `Coin ${k}`,
  tier: "core",
  fundingIntervalMs: undefined,
  networks: [],
  contracts: {},
  aliases: [],
  circulatingSupply: undefined,
  // A third of them priced on another venue first (their primary), this one second.
  listings: [
    ...(pricedElsewhere(k) ? [{ venue: "bybit", market: "perp", symbol }] : []),
    { venue: "binance", market: "perp", symbol }
  ]
})) as unknown as ReadonlyArray<CryptoAsset>
/** Open interest (USD) by listing position, in an order unrelated to it: a distinct value each. */
const oiOf = (k: number) => (((k * 7919) % N) + 1) * 1e6

interface Spent {
  readonly t: number
  readonly weight: number
}

const makeVenue = () => {
  const spent: Array<Spent> = []
  /** Each instrument's first request for bars older than the start's day, in order: the backfill's order. */
  const deepOrder: Array<string> = []
  /** The instruments whose last day of bars the start asked for, in order. */
  const recentOrder: Array<string> = []
  const limiter = makeLimiter({ capacity: 1000, windowMs: 60_000 })
  const take = (weight: number) =>
    Effect.andThen(
      limiter.take(weight),
      Effect.flatMap(Clock.currentTimeMillis, (t) => Effect.sync(() => spent.push({ t, weight })))
    )
  const onGrid = (fromMs: number, toMs: number, stepMs: number, limit: number) => {
    const out: Array<number> = []
    for (let t = Math.ceil(fromMs / stepMs) * stepMs; t < toMs && out.length < limit; t += stepMs) out.push(t)
    return out
  }
  const bar = (t: number): BarRow => ({
    t,
    open: 1,
    high: 1.01,
    low: 0.99,
    close: 1,
    volume: 10,
    takerBuyUsd: 5,
    takerSellUsd: 5
  })
  const connector: VenueConnector = {
    venue: "binance",
    limiter,
    listings: Effect.as(take(1), new Map<string, VenueListing>(symbols.map((s) => [s, { symbol: s }]))),
    bars: (i, fromMs, toMs) => {
      const limit = Math.max(1, Math.min(1000, Math.ceil((toMs - fromMs) / BAR_MS)))
      return Effect.map(take(klinesWeight(limit)), () => {
        if (fromMs < SLOT - DAY && !deepOrder.includes(i.assetId)) deepOrder.push(i.assetId)
        if (fromMs === SLOT - DAY && toMs === SLOT) recentOrder.push(i.assetId)
        const ts = onGrid(fromMs, toMs, BAR_MS, limit)
        return pageOf(ts.map(bar), ts.length, limit, toMs, BAR_MS)
      })
    },
    fundingHistory: (_i, fromMs, toMs) =>
      Effect.map(take(1), () => {
        const ts = onGrid(fromMs, toMs, 8 * 3_600_000, 1000)
        return pageOf(
          ts.map((t) => ({ t, rate: 0.0001, intervalMs: 8 * 3_600_000 })),
          ts.length,
          1000,
          toMs,
          8 * 3_600_000
        )
      }),
    // Binance: the all-symbol premium index (10), then open interest one symbol at a time (1 each).
    tickers: (is) =>
      Effect.gen(function* () {
        yield* take(10)
        for (const _ of is) yield* take(1)
        return is.map((i) => ({
          assetId: i.assetId,
          mark: 1,
          index: 1,
          oiUsd: oiOf(Number(i.assetId.slice("crypto:c".length))),
          funding: {
            currentRate: 0.0001,
            predictedRate: 0.0001,
            intervalMs: 8 * 3_600_000,
            nextFundingMs: SLOT + 3_600_000
          }
        }))
      }),
    book: (i, nowMs) =>
      Effect.as(take(5), {
        assetId: i.assetId,
        venue: "binance",
        t: nowMs,
        bids: [[0.999, 100]],
        asks: [[1.001, 100]]
      }),
    openInterestHistory: (_i, fromMs, toMs) =>
      Effect.map(take(1), () => {
        const ts = onGrid(fromMs, toMs, BAR_MS, 500)
        return pageOf(
          ts.map((t) => ({ t, oiUsd: 1e6 })),
          ts.length,
          500,
          toMs,
          BAR_MS
        )
      }),
    bookWeight: 5,
    klinesCarryTakerFlow: true,
    formingBar: (_i, slotMs) => Effect.as(take(1), bar(slotMs)),
    formingEveryMs: 60_000
  }
  return { connector, spent, deepOrder, recentOrder }
}

/** Lets the feed's fiber run until it waits on the clock again (the stub never waits on anything else). */
const settle = Effect.gen(function* () {
  for (let k = 0; k < 300; k++) yield* Effect.yieldNow
})

describe("a first live start at the whole market's size", () => {
  it.effect(
    "every perpetual has its quote and its last day within a minute; the history fills in behind, busiest first, inside the weight limit",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(START)
        const store = makeMemoryMarketStore()
        const venue = makeVenue()
        const feed = yield* makeCryptoFeed(venue.connector, {
          backfillDays: BACKFILL_DAYS,
          fundingBackfillDays: 365,
          jitterMs: 0,
          universe: () => universe
        }).pipe(Effect.provide(Layer.succeed(MarketStore)(store)))
        const fiber = yield* Effect.forkChild(feed.run)
        const advance = (seconds: number) =>
          Effect.gen(function* () {
            for (let s = 0; s < seconds; s++) {
              yield* TestClock.adjust(1_000)
              yield* settle
            }
          })
        const extentOf = (kind: "bars" | "markIndex" | "openInterest", k: number) =>
          Effect.map(store.extent(kind, idOf(k)), (es) => es.find((e) => e.venue === "binance"))

        // One minute after the start: every perpetual's quote (mark price, from the bulk endpoint) and its bars up to
        // the last closed one, a day of them.
        yield* advance(60)
        for (let k = 0; k < N; k++) {
          const mark = yield* extentOf("markIndex", k)
          assert.isDefined(mark, `${symbols[k]}: no quote a minute after the start`)
          const bars = yield* extentOf("bars", k)
          assert.isDefined(bars, `${symbols[k]}: no bars a minute after the start`)
          assert.isAtLeast(bars?.lastMs ?? 0, SLOT - BAR_MS, symbols[k])
          assert.isAtMost(bars?.firstMs ?? 0, SLOT - DAY + BAR_MS, symbols[k])
        }
        // The start asked for them the assets it is the primary venue of first, each group the busiest first.
        const byOi = (ks: ReadonlyArray<number>) => [...ks].sort((a, b) => oiOf(b) - oiOf(a)).map(idOf)
        const all = Array.from({ length: N }, (_, k) => k)
        assert.deepStrictEqual(venue.recentOrder, [
          ...byOi(all.filter((k) => !pricedElsewhere(k))),
          ...byOi(all.filter(pricedElsewhere))
        ])
        const status = yield* store.status
        assert.isFalse(status.find((s) => s.component === "bars")?.failing ?? true)

        // The history behind, busiest first: the first instruments whose 90 days were asked for are those with the
        // most open interest.
        yield* advance(9 * 60)
        const started = venue.deepOrder.slice(0, 60)
        assert.lengthOf(started, 60)
        const busiest = Array.from({ length: N }, (_, k) => k)
          .sort((a, b) => oiOf(b) - oiOf(a))
          .slice(0, 60)
          .map(idOf)
        assert.deepStrictEqual(started, busiest)

        // Within about an hour (the weight the 90 days cost, at 1,000 a minute), every perpetual's history reaches
        // back the whole window, and its open interest back the 29 days the venue keeps. Meanwhile the books come in
        // cycles the budget allows (550 books at weight 5 in half of 1,000 a minute: every 6 minutes, longer while
        // the backfill shares the limiter), and their status says so: live at every minute of the last half hour,
        // at the cadence the runs measure (measured 11 to 20 minutes here), and no book older than it.
        yield* advance(30 * 60)
        for (let m = 0; m < 30; m++) {
          yield* advance(60)
          const books = (yield* store.status).find((s) => s.venue === "binance" && s.component === "books")
          assert.isDefined(books)
          const nowMs = yield* Clock.currentTimeMillis
          const cadenceMs = books?.cadenceMs ?? 0
          assert.isAtLeast(cadenceMs, 6 * 60_000)
          assert.strictEqual(freshnessOf(books as NonNullable<typeof books>, nowMs), "live", `minute ${40 + m}`)
          for (let k = 0; k < N; k += 50) {
            const [book] = yield* store.books(idOf(k), "binance")
            assert.isAtLeast(book?.t ?? 0, nowMs - cadenceMs, `${symbols[k]} at minute ${40 + m}`)
          }
        }
        // The window is the bars job's run's (its history pass gives way at each close and resumes in the next run,
        // whose 90 days end at a later close): back to 90 days before the newest close at least.
        const newestClose = Math.floor((yield* Clock.currentTimeMillis) / BAR_MS) * BAR_MS
        for (let k = 0; k < N; k++) {
          const bars = yield* extentOf("bars", k)
          assert.isAtMost(
            bars?.firstMs ?? Number.POSITIVE_INFINITY,
            newestClose - BACKFILL_DAYS * DAY + BAR_MS,
            symbols[k]
          )
          const oi = yield* extentOf("openInterest", k)
          assert.isAtMost(oi?.firstMs ?? Number.POSITIVE_INFINITY, SLOT - 29 * DAY + BAR_MS, symbols[k])
        }

        // Inside the limit all along: no 60 s window spent more than the bucket allows (its 1,000 plus a minute's
        // refill), under Binance's published 2,400.
        let worst = 0
        let from = 0
        let sum = 0
        for (let to = 0; to < venue.spent.length; to++) {
          sum += (venue.spent[to] as Spent).weight
          while ((venue.spent[from] as Spent).t <= (venue.spent[to] as Spent).t - 60_000) {
            sum -= (venue.spent[from] as Spent).weight
            from++
          }
          worst = Math.max(worst, sum)
        }
        assert.isAtMost(worst, 2_000)
        yield* Fiber.interrupt(fiber)
      }),
    180_000
  )
})
