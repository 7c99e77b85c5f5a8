/**
 * Venue stream faults with the REST path beside them (issue #29, point 8): a fake Binance speaking its REST API
 * (the connector's recorded-format fixtures) and its market streams (`bookTicker`, `!markPrice@arr@1s`), the real
 * feed's books job on its schedule, the real stream manager, and the crypto plane reading the store through the
 * process's `QuoteBoard` — on the test clock, over local sockets.
 *
 * Each fault: the answer's status is typed while it lasts, nothing is served as fresh that is not, and the quote is
 * fresh again within 10 s of the venue recovering:
 * - the venue stops sending one symbol: that symbol is served from REST (only its book is polled), the rest stream;
 * - REST answers 429 and 418 while the streams run: quotes stay live from the streams;
 * - the streams are down for five minutes while REST answers: `price` reads stale at once with the reason, then
 *   live again from the REST books (every book polled each minute), then from the stream within seconds of it
 *   returning.
 */
import { assert, describe, it } from "@effect/vitest"
import { MarketStore, makeQuoteBoard, type QuoteBoard, withQuoteBoard } from "@market-data/core"
import { Clock, Effect } from "effect"
import { TestClock } from "effect/testing"
import { makeMemoryMarketStore } from "../../adapters/memory/src/MemoryMarketStore.ts"
import { makeCryptoFeed } from "../../adapters/sources/src/live/CryptoFeed.ts"
import { streamedOn } from "../../adapters/sources/src/live/LiveFeeds.ts"
import { runMarketStream } from "../../adapters/sources/src/live/stream/MarketStream.ts"
import type { Instrument } from "../../adapters/sources/src/live/Venue.ts"
import { makeBinance } from "../../adapters/sources/src/live/venues/binance/Rest.ts"
import { binanceStreamProtocol } from "../../adapters/sources/src/live/venues/binance/Stream.ts"
import {
  eventually,
  type FakeRequest,
  fakeServer,
  pumpClock,
  type Reply
} from "../../adapters/sources/test/live/FakeServer.ts"
import { fakeWsServer } from "../../adapters/sources/test/live/FakeWsServer.ts"
import * as F from "../../adapters/sources/test/live/fixtures/Binance.ts"
import {
  binanceStreamVenue,
  bookTickerFrame,
  markPriceFrame
} from "../../adapters/sources/test/live/fixtures/BinanceStream.ts"
import { makeCryptoPlane } from "../../core/src/crypto/CryptoPlane.ts"
import { callPlanes, dataOf } from "../../core/test/support/PlaneCall.ts"

const instruments: ReadonlyMap<string, Instrument> = new Map(
  (
    [
      ["BTCUSDT", "crypto:bitcoin", 1],
      ["1000PEPEUSDT", "crypto:pepe", 1000]
    ] as const
  ).map(([symbol, assetId, tokensPerUnit]) => [
    symbol,
    { assetId, venue: "binance", symbol, tokensPerUnit, tokensPerContract: 1, fundingIntervalMs: 8 * 3_600_000 }
  ])
)

describe("venue streams and REST together, under faults", () => {
  it.effect("one symbol silent, REST limited, streams down for five minutes: typed, then fresh again", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(F.NOW_MS)
      yield* pumpClock(50)
      const now = () => Clock.currentTimeMillis
      let restLimited: 429 | 418 | undefined
      const rest = yield* fakeServer(
        (r: FakeRequest): Reply =>
          restLimited !== undefined
            ? { status: restLimited, json: { code: -1003, msg: "Too many requests" } }
            : F.binanceRoute(r)
      )
      const venue = binanceStreamVenue()
      const ws = yield* fakeWsServer(venue.handler)
      const store = makeMemoryMarketStore()
      const board: QuoteBoard = makeQuoteBoard()
      const feed = yield* makeCryptoFeed(makeBinance({ baseUrl: rest.url, timeoutMs: 5_000 }), {
        backfillDays: 1,
        fundingBackfillDays: 2,
        jitterMs: 0,
        assetIds: ["crypto:bitcoin", "crypto:pepe"],
        streamed: streamedOn(board, "binance")
      }).pipe(Effect.provideService(MarketStore, store))
      yield* feed.once.listings
      yield* feed.once.bars
      yield* feed.once.tickers
      yield* Effect.forkScoped(
        runMarketStream(
          binanceStreamProtocol,
          {
            baseUrl: ws.url,
            instruments: () => instruments,
            timeoutMs: 2_000,
            limits: { silenceMs: 5_000, pingEveryMs: 2_000, symbolSilenceMs: 10_000 }
          },
          board
        )
      )
      // The venue: both symbols' books move every 500 ms, the mark-price array every second.
      const sending = { btc: true, pepe: true, on: true }
      let tick = 0
      yield* Effect.forkScoped(
        Effect.forever(
          Effect.gen(function* () {
            const t = yield* Clock.currentTimeMillis
            tick++
            if (sending.on) {
              if (sending.btc) ws.broadcast(bookTickerFrame("BTCUSDT", t, 91_000 + tick, 91_000.5 + tick))
              if (sending.pepe) ws.broadcast(bookTickerFrame("1000PEPEUSDT", t, 0.0123, 0.0124))
              if (tick % 2 === 0)
                ws.broadcast(
                  markPriceFrame(t, [
                    { symbol: "BTCUSDT", mark: 91_000 + tick, rate: 0.0001, nextMs: F.NOW_MS + 3_600_000 },
                    ...(sending.pepe
                      ? [{ symbol: "1000PEPEUSDT", mark: 0.01235, rate: 0.0002, nextMs: F.NOW_MS + 3_600_000 }]
                      : [])
                  ])
                )
            }
            yield* Effect.sleep(500)
          })
        )
      )
      yield* Effect.forkScoped(feed.scheduled.books.pipe(Effect.provideService(MarketStore, store)))
      const served = withQuoteBoard(store, board)
      const plane = yield* makeCryptoPlane.pipe(Effect.provideService(MarketStore, served))
      const price = Effect.gen(function* () {
        const out = yield* callPlanes([plane], "price", [["id", "crypto:bitcoin"]], yield* now())
        return dataOf<Record<string, unknown>>(out)
      }).pipe(Effect.orDie)
      const bookOf = (assetId: string) => Effect.map(served.books(assetId, "binance"), (b) => b[0])
      const depthRequests = (symbol: string) =>
        rest.requests.filter((r) => r.path === "/fapi/v1/depth" && r.query.get("symbol") === symbol).length

      // Streaming: the quote is the venue's newest, live.
      const streamedBid = () => board.quote("crypto:bitcoin", "binance")?.bid
      assert.isTrue(
        yield* eventually(() => board.health("binance")?.up === true && !board.isSilent("crypto:bitcoin", "binance")),
        "stream up"
      )
      assert.isTrue(
        yield* eventually(() =>
          Effect.map(price, (p) => p.bid_usd === streamedBid() && p.bid_usd !== 91_230.1 && p.status === "live")
        ),
        "the streamed quote"
      )

      // 1. The venue stops sending one symbol: it is served from REST (its book alone is polled), BTC streams on.
      sending.pepe = false
      assert.isTrue(yield* eventually(() => board.isSilent("crypto:pepe", "binance")), "pepe silent")
      assert.isFalse(board.isSilent("crypto:bitcoin", "binance"), JSON.stringify(board.health("binance")))
      const btcDepth = depthRequests("BTCUSDT")
      assert.isTrue(yield* eventually(() => depthRequests("1000PEPEUSDT") >= 1), "pepe's book polled over REST")
      assert.isTrue(yield* eventually(() => Effect.map(bookOf("crypto:pepe"), (b) => b?.confirmedMs === undefined)))
      assert.strictEqual(depthRequests("BTCUSDT"), btcDepth, "the streamed book is not polled between depth runs")
      sending.pepe = true
      assert.isTrue(yield* eventually(() => !board.isSilent("crypto:pepe", "binance")), "pepe streams again")

      // 2. REST limited (429, then Binance's 418 ban) while the streams run: quotes stay live.
      restLimited = 429
      yield* TestClock.adjust(61_000)
      const limited = yield* price
      assert.strictEqual(limited.status, "live")
      assert.notStrictEqual(limited.bid_usd, 91_230.1, "not the REST book")
      restLimited = 418
      yield* TestClock.adjust(61_000)
      assert.strictEqual((yield* price).status, "live")
      restLimited = undefined

      // 3. The streams down for five minutes while REST answers.
      venue.state.answering = false
      sending.on = false
      ws.dropAll()
      assert.isTrue(yield* eventually(() => board.health("binance")?.up === false), "down within seconds")
      const down = yield* price
      assert.strictEqual(down.status, "stale", "not served as fresh")
      // The REST fallback polls every book each minute; the answer is live again from it.
      assert.isTrue(
        yield* eventually(() => Effect.map(price, (p) => p.status === "live" && p.bid_usd === 91_230.1)),
        "served from REST polling"
      )
      yield* TestClock.adjust(5 * 60_000)
      // Back: streamed again within 10 s of the venue's recovery.
      const backAt = yield* now()
      venue.state.answering = true
      sending.on = true
      assert.isTrue(yield* eventually(() => board.health("binance")?.up === true), "stream back")
      assert.isAtMost((yield* now()) - backAt, 10_000)
      assert.isTrue(
        yield* eventually(() =>
          Effect.map(price, (p) => p.bid_usd === streamedBid() && p.bid_usd !== 91_230.1 && p.status === "live")
        ),
        "streamed again"
      )
    }).pipe(Effect.scoped)
  )
})
