/**
 * From the fake venue through the live feed into the store, then through the crypto plane's `price`
 * operation: the answer's freshness follows the live source (`live` after a good poll, `stale` once the
 * source fails), and it says the data came from the live source.
 */
import { assert, describe, it } from "@effect/vitest"
import { MarketStore } from "@market-data/core"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { makeCryptoPlane } from "../../../../core/src/crypto/CryptoPlane.ts"
import { callPlanes, dataOf } from "../../../../core/test/support/PlaneCall.ts"
import { makeMemoryMarketStore } from "../../../memory/src/MemoryMarketStore.ts"
import { makeCryptoFeed } from "../../src/live/CryptoFeed.ts"
import { makeBinance } from "../../src/live/venues/binance/Rest.ts"
import { type FakeRequest, fakeServer, type Reply } from "./FakeServer.ts"
import * as F from "./fixtures/Binance.ts"
import { binanceRoute } from "./fixtures/Binance.ts"

describe("live feed -> store -> crypto plane", () => {
  it.effect("price answers live after a good poll and stale once the source fails", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(F.NOW_MS)
      const store = makeMemoryMarketStore()
      let broken = false
      const server = yield* fakeServer(
        (r: FakeRequest): Reply =>
          broken && r.path === "/fapi/v1/klines" ? { status: 502, text: "Bad Gateway" } : binanceRoute(r)
      )
      const feed = yield* makeCryptoFeed(makeBinance({ baseUrl: server.url, timeoutMs: 5_000 }), {
        backfillDays: 1,
        fundingBackfillDays: 2,
        jitterMs: 0,
        assetIds: ["crypto:bitcoin"]
      }).pipe(Effect.provide(Layer.succeed(MarketStore)(store)))
      yield* feed.once.listings
      yield* feed.once.bars
      yield* feed.once.tickers
      yield* feed.once.books

      const plane = yield* makeCryptoPlane.pipe(Effect.provideService(MarketStore, store))
      const price = (nowMs: number) =>
        Effect.map(callPlanes([plane], "price", [["id", "crypto:bitcoin"]], nowMs), dataOf<Record<string, unknown>>)

      const live = yield* price(F.NOW_MS)
      assert.strictEqual(live.status, "live")
      // One moment: usd is the mid of the newest book, inside its spread (not the 11:45 bar's close, 90990.9).
      assert.strictEqual(live.usd, 91230.15, "the mid of the newest book")
      assert.deepStrictEqual([live.bid_usd, live.ask_usd], [91230.1, 91230.2])

      // The bar still forming (12:00) moves `as_of` with the clock; usd stays the newest book's.
      yield* feed.once.formingBar
      const forming = yield* price(F.NOW_MS)
      assert.strictEqual(forming.usd, 91230.15)
      assert.deepStrictEqual([live.as_of, forming.as_of], ["2026-11-20T12:00:00.000Z", "2026-11-20T12:07:00.000Z"])
      assert.strictEqual(forming.status, "live")

      // The venue starts failing (12:16, after the next close): the poll marks bars failing and the answer is stale
      // (from the flag: without it, data 9 minutes old would still read live).
      broken = true
      yield* TestClock.setTime(F.NOW_MS + 9 * 60_000)
      const e = yield* Effect.flip(feed.once.bars)
      assert.strictEqual(e.status, 502)
      const stale = yield* price(F.NOW_MS + 9 * 60_000)
      assert.strictEqual(stale.status, "stale")
    }).pipe(Effect.scoped)
  )
})
