/**
 * Closed bars from the kline stream (Binance `x: true`, Bybit `confirm: true`): at a close the feed's closed-bars
 * job stores the closed bar as the stream sent it, next to the bars stored before it, and the bars job then asks
 * REST for nothing; a closed bar the stream did not deliver within the wait is fetched over REST (from the first
 * bar not known final), and one past a hole is left to REST.
 */
import { assert, describe, it } from "@effect/vitest"
import { BAR_MS, MarketStore, makeQuoteBoard, type StreamedBar } from "@market-data/core"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { makeMemoryMarketStore } from "../../../../memory/src/MemoryMarketStore.ts"
import { CLOSED_BAR_WAIT_MS, makeCryptoFeed } from "../../../src/live/CryptoFeed.ts"
import { streamedBarOn, streamedClosedBarOn, streamedOn } from "../../../src/live/LiveFeeds.ts"
import { makeBinance } from "../../../src/live/venues/binance/Rest.ts"
import { fakeServer } from "../FakeServer.ts"
import * as F from "../fixtures/Binance.ts"

const BTC = "crypto:bitcoin"

describe("closed bars from the kline stream", () => {
  it.effect("are stored at the close without REST; what the stream missed is fetched over REST", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(F.NOW_MS)
      const rest = yield* fakeServer(F.binanceRoute)
      const store = makeMemoryMarketStore()
      const board = makeQuoteBoard()
      const feed = yield* makeCryptoFeed(makeBinance({ baseUrl: rest.url, timeoutMs: 5_000 }), {
        backfillDays: 1,
        fundingBackfillDays: 2,
        jitterMs: 0,
        assetIds: [BTC],
        streamed: streamedOn(board, "binance"),
        streamedBar: streamedBarOn(board, "binance"),
        streamedClosedBar: streamedClosedBarOn(board, "binance")
      }).pipe(Effect.provideService(MarketStore, store))
      assert.isDefined(feed.once.closedBars)
      const closedBars = feed.once.closedBars as NonNullable<typeof feed.once.closedBars>
      yield* feed.once.listings
      // The history: closed bars through 11:45 (the fixture's 12:00 bar is still open at 12:07).
      yield* feed.once.bars
      const slot = Math.floor(F.NOW_MS / BAR_MS) * BAR_MS
      board.setHealth("binance", {
        components: ["books", "fundingState"],
        up: true,
        newestMs: F.NOW_MS,
        lastFrameMs: F.NOW_MS,
        sinceMs: F.NOW_MS
      })
      board.applyQuote(BTC, "binance", { t: F.NOW_MS, bid: 91_000, bidSize: 1, ask: 91_001, askSize: 1 })
      const bar = (t: number, close: number, closed: boolean): StreamedBar => ({
        t,
        eventMs: t + BAR_MS,
        open: 91_000,
        high: 91_100,
        low: 90_900,
        close,
        volume: 10,
        takerBuyUsd: 500_000,
        takerSellUsd: 400_000,
        closed
      })
      const klineRequests = () => rest.requests.filter((r) => r.path === "/fapi/v1/klines").length
      const storedBar = (t: number) =>
        Effect.map(store.read("bars", { assetId: BTC, venue: "binance", fromMs: t, toMs: t + 1 }), (x) => x[0])

      // 1. The 12:00 bar closes; the stream sends it closed (after a forming update).
      board.applyBar(BTC, "binance", bar(slot, 91_040, false))
      board.applyBar(BTC, "binance", bar(slot, 91_055.5, true))
      board.applyBar(BTC, "binance", bar(slot + BAR_MS, 91_056, false))
      yield* TestClock.setTime(slot + BAR_MS + 1_000)
      const before = klineRequests()
      yield* closedBars
      assert.deepStrictEqual((yield* storedBar(slot))?.close[0], 91_055.5)
      const flow = (yield* store.read("takerFlow", { assetId: BTC, venue: "binance", fromMs: slot, toMs: slot + 1 }))[0]
      assert.deepStrictEqual([flow?.buyUsd[0], flow?.sellUsd[0]], [500_000, 400_000])
      yield* TestClock.setTime(slot + BAR_MS + CLOSED_BAR_WAIT_MS + 2_000)
      yield* feed.once.bars
      assert.strictEqual(klineRequests(), before, "no REST kline request for a bar the stream closed")

      // 2. The 12:15 bar closes and the stream does not send it: the job waits, then the bars job asks REST.
      yield* TestClock.setTime(slot + 2 * BAR_MS + 1_000)
      const waiting = yield* Effect.forkChild(closedBars)
      yield* TestClock.adjust(CLOSED_BAR_WAIT_MS)
      yield* Fiber.join(waiting)
      assert.isUndefined(yield* storedBar(slot + BAR_MS))
      yield* feed.once.bars
      assert.strictEqual(klineRequests(), before + 1, "the missed bar is fetched over REST")

      // 3. A closed bar past a hole (the 12:30 bar never stored): not written, left to REST.
      board.applyBar(BTC, "binance", bar(slot + 3 * BAR_MS, 91_070, true))
      yield* TestClock.setTime(slot + 4 * BAR_MS + 1_000)
      yield* closedBars
      assert.isUndefined(yield* storedBar(slot + 3 * BAR_MS))
    }).pipe(Effect.scoped)
  )
})
