/**
 * The forming bar from a kline stream: while the venue's stream serves an asset, the feed's forming-bar job writes
 * the bar the stream last sent (with Binance's taker flow) and asks REST for nothing; an asset the stream does not
 * serve (here: its symbol silent) is still asked over REST. Binance (`kline_15m`) and OKX (`candle15m`).
 */
import { assert, describe, it } from "@effect/vitest"
import { BAR_MS, MarketStore, makeQuoteBoard } from "@market-data/core"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { makeMemoryMarketStore } from "../../../../memory/src/MemoryMarketStore.ts"
import { makeCryptoFeed, reconcileBook } from "../../../src/live/CryptoFeed.ts"
import { streamedBarOn, streamedOn } from "../../../src/live/LiveFeeds.ts"
import { makeBinance } from "../../../src/live/venues/binance/Rest.ts"
import { makeOkx } from "../../../src/live/venues/okx/Rest.ts"
import { fakeServer, pumpClock } from "../FakeServer.ts"
import * as F from "../fixtures/Binance.ts"
import * as O from "../fixtures/Okx.ts"

describe("the forming bar from the kline stream", () => {
  it.effect("is written from the stream while it serves the asset, and fetched over REST otherwise", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(F.NOW_MS)
      const rest = yield* fakeServer(F.binanceRoute)
      const store = makeMemoryMarketStore()
      const board = makeQuoteBoard()
      const feed = yield* makeCryptoFeed(makeBinance({ baseUrl: rest.url, timeoutMs: 5_000 }), {
        backfillDays: 1,
        fundingBackfillDays: 2,
        jitterMs: 0,
        assetIds: ["crypto:bitcoin"],
        streamed: streamedOn(board, "binance"),
        streamedBar: streamedBarOn(board, "binance")
      }).pipe(Effect.provideService(MarketStore, store))
      yield* feed.once.listings
      yield* feed.once.bars
      const slot = Math.floor(F.NOW_MS / BAR_MS) * BAR_MS
      board.setHealth("binance", {
        components: ["books", "fundingState"],
        up: true,
        newestMs: F.NOW_MS,
        lastFrameMs: F.NOW_MS,
        sinceMs: F.NOW_MS
      })
      board.applyQuote("crypto:bitcoin", "binance", { t: F.NOW_MS, bid: 91_000, bidSize: 1, ask: 91_001, askSize: 1 })
      board.applyBar("crypto:bitcoin", "binance", {
        t: slot,
        eventMs: F.NOW_MS,
        open: 90_990,
        high: 91_050,
        low: 90_950,
        close: 91_000.5,
        volume: 12,
        takerBuyUsd: 700_000,
        takerSellUsd: 390_000
      })
      const klineRequests = () => rest.requests.filter((r) => r.path === "/fapi/v1/klines").length
      const before = klineRequests()
      yield* feed.once.formingBar
      assert.strictEqual(klineRequests(), before, "no REST request for a streamed forming bar")
      const bar = (yield* store.read("bars", {
        assetId: "crypto:bitcoin",
        venue: "binance",
        fromMs: slot,
        toMs: slot + 1
      }))[0]
      assert.deepStrictEqual([bar?.close[0], bar?.volume[0]], [91_000.5, 12])
      const flow = (yield* store.read("takerFlow", {
        assetId: "crypto:bitcoin",
        venue: "binance",
        fromMs: slot,
        toMs: slot + 1
      }))[0]
      assert.deepStrictEqual([flow?.buyUsd[0], flow?.sellUsd[0]], [700_000, 390_000])

      // Not served by the stream (silent): the forming bar comes over REST again.
      board.setSilent("binance", new Set(["crypto:bitcoin"]))
      yield* feed.once.formingBar
      assert.strictEqual(klineRequests(), before + 1)
    }).pipe(Effect.scoped)
  )
})

describe("OKX's forming bar from candle15m (business endpoint)", () => {
  it.effect("is written from the stream while it serves the swap, with no market/candles request", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(O.NOW_MS)
      // OKX's limiter sleeps on the Clock: keep it moving.
      yield* pumpClock()
      const rest = yield* fakeServer(O.okxRoute)
      const store = makeMemoryMarketStore()
      const board = makeQuoteBoard()
      const feed = yield* makeCryptoFeed(makeOkx({ baseUrl: rest.url, timeoutMs: 5_000 }), {
        backfillDays: 1,
        fundingBackfillDays: 2,
        jitterMs: 0,
        assetIds: ["crypto:bitcoin"],
        streamed: streamedOn(board, "okx"),
        streamedBar: streamedBarOn(board, "okx")
      }).pipe(Effect.provideService(MarketStore, store))
      yield* feed.once.listings
      yield* feed.once.bars
      const slot = Math.floor(O.NOW_MS / BAR_MS) * BAR_MS
      board.setHealth("okx", {
        components: ["books", "fundingState"],
        up: true,
        newestMs: O.NOW_MS,
        lastFrameMs: O.NOW_MS,
        sinceMs: O.NOW_MS
      })
      board.applyQuote("crypto:bitcoin", "okx", { t: O.NOW_MS, bid: 91_000, bidSize: 1, ask: 91_001, askSize: 1 })
      // As the stream applies a candle15m push (its open time orders pushes; volume in coins).
      board.applyBar("crypto:bitcoin", "okx", {
        t: slot,
        eventMs: slot,
        open: 90_990,
        high: 91_050,
        low: 90_950,
        close: 91_000.5,
        volume: 12.34
      })
      const candleRequests = () => rest.requests.filter((r) => r.path === "/api/v5/market/candles").length
      const before = candleRequests()
      yield* feed.once.formingBar
      assert.strictEqual(candleRequests(), before, "no REST request for a streamed forming bar")
      const bar = (yield* store.read("bars", {
        assetId: "crypto:bitcoin",
        venue: "okx",
        fromMs: slot,
        toMs: slot + 1
      }))[0]
      assert.deepStrictEqual([bar?.close[0], bar?.volume[0]], [91_000.5, 12.34])

      // Not served by the stream (silent): the forming bar comes over REST again.
      board.setSilent("okx", new Set(["crypto:bitcoin"]))
      yield* feed.once.formingBar
      assert.strictEqual(candleRequests(), before + 1)
    }).pipe(Effect.scoped)
  )
})

describe("REST books reconciled against the streamed top of book", () => {
  const book = (bid: number, ask: number) => ({
    assetId: "crypto:bitcoin",
    venue: "binance",
    t: F.NOW_MS,
    bids: [[bid, 1] as const],
    asks: [[ask, 1] as const]
  })
  it("agrees within five streamed spreads or 0.5 %, and says so when it does not", () => {
    assert.strictEqual(reconcileBook(book(91_000, 91_001), { bid: 91_002, ask: 91_003 }), "match")
    // 400 USD apart on 91,000: within 0.5 % (455 USD).
    assert.strictEqual(reconcileBook(book(91_400, 91_401), { bid: 91_000, ask: 91_001 }), "match")
    // A frozen stream (or another instrument's quote): 1 % apart.
    assert.strictEqual(reconcileBook(book(91_910, 91_911), { bid: 91_000, ask: 91_001 }), "mismatch")
    assert.isUndefined(reconcileBook(book(91_000, 91_001), undefined))
    assert.isUndefined(reconcileBook({ ...book(1, 2), bids: [] }, { bid: 1, ask: 2 }))
  })
})
