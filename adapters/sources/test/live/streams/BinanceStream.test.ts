/**
 * Binance USD-M market streams (`venues/binance/Stream.ts`) through the shared connection manager
 * (`stream/MarketStream.ts`) into a `QuoteBoard`: the reader against recorded real frames (`../shared/data`) and
 * the documented shapes, then a local fake venue (the `ws` package) speaking Binance's protocol: SUBSCRIBE answered
 * `{"result":null,"id"}`, `LIST_SUBSCRIPTIONS` answered, combined-stream frames pushed. Covered: quotes in canonical
 * units, health up with the venue's event time, a dropped connection reconnecting, a half-open one (no frames, no
 * close) replaced, a refused symbol served from REST and named while the rest stream, the 24 h rotation with no
 * gap, new listings followed and delistings dropped without a restart, malformed and oversized frames skipped.
 *
 * Real time with short limits (the manager's clock is the wall clock); conditions are awaited, never slept on.
 */
import { existsSync, readFileSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import { makeQuoteBoard, type QuoteBoard } from "@market-data/core"
import { Effect, Fiber } from "effect"
import { Malformed } from "../../../src/live/Parse.ts"
import { type MarketStreamStats, runMarketStream } from "../../../src/live/stream/MarketStream.ts"
import type { VenueSink, VenueTickerFields } from "../../../src/live/stream/Protocol.ts"
import type { Instrument } from "../../../src/live/Venue.ts"
import { binanceStreamProtocol } from "../../../src/live/venues/binance/Stream.ts"
import { eventually } from "../FakeServer.ts"
import { type FakeWsServer, fakeWsServer } from "../FakeWsServer.ts"
import { binanceStreamVenue, bookTickerFrame } from "../fixtures/BinanceStream.ts"

const RECORDED = new URL("../../../../../../shared/data/crypto/streams/BINANCE_FUTURES.ws.1.0.txt", import.meta.url)

const collect = () => {
  const quotes: Array<[string, number, number, number, number, number]> = []
  const tickers: Array<[string, number, VenueTickerFields]> = []
  const sink: VenueSink = {
    quote: (s, t, b, bs, a, as) => quotes.push([s, t, b, bs, a, as]),
    ticker: (s, t, f) => tickers.push([s, t, f])
  }
  return { quotes, tickers, sink }
}

describe("Binance stream reader", () => {
  it.skipIf(!existsSync(RECORDED))("reads every recorded bookTicker frame (real frames, 2021-07-22)", () => {
    const lines = readFileSync(RECORDED, "utf8")
      .split("\n")
      .slice(1)
      .filter((l) => l.includes("@bookTicker"))
    const { quotes, sink } = collect()
    const reader = binanceStreamProtocol.reader()
    for (const line of lines) {
      const frame = line.slice(line.indexOf(": ") + 2)
      assert.deepStrictEqual(reader.read(frame, sink), { kind: "data" })
    }
    assert.strictEqual(quotes.length, 613)
    // The first recorded frame: SUSHIUSDT b 7.6110 x 2, a 7.6120 x 297 at E 1626992741017.
    assert.deepStrictEqual(quotes[0], ["SUSHIUSDT", 1626992741017, 7.611, 2, 7.612, 297])
    for (const q of quotes) assert.isTrue(q[2] <= q[4], "bid at or below ask")
  })

  it("reads the documented mark-price array, answers, errors and keep-alive answers", () => {
    const { tickers, sink } = collect()
    const reader = binanceStreamProtocol.reader()
    // "Mark Price Stream for All market" payload shape (USDⓈ-M futures, Websocket Market Streams).
    const mark = {
      stream: "!markPrice@arr@1s",
      data: [
        {
          e: "markPriceUpdate",
          E: 1_700_000_000_000,
          s: "BTCUSDT",
          p: "37000.10",
          i: "36990.5",
          P: "37001",
          r: "0.00010000",
          T: 1_700_006_400_000
        }
      ]
    }
    assert.deepStrictEqual(reader.read(JSON.stringify(mark), sink), { kind: "data" })
    assert.deepStrictEqual(tickers[0], [
      "BTCUSDT",
      1_700_000_000_000,
      { mark: 37000.1, index: 36990.5, fundingRate: 0.0001, nextFundingMs: 1_700_006_400_000 }
    ])
    assert.deepStrictEqual(reader.read('{"result":null,"id":100}', sink), { kind: "ack", id: "100" })
    assert.deepStrictEqual(reader.read('{"result":["btcusdt@bookTicker"],"id":1}', sink), { kind: "pong" })
    assert.deepStrictEqual(reader.read('{"error":{"code":2,"msg":"Invalid request"},"id":101}', sink), {
      kind: "refused",
      id: "101",
      message: "code 2: Invalid request"
    })
    assert.throws(
      () => reader.read('{"stream":"x@bookTicker","data":{"e":"bookTicker","s":"X","b":"oops"}}', sink),
      Malformed
    )
    assert.throws(() => reader.read("{not json", sink))
  })

  it("reads the forming 15-minute bar of `<symbol>@kline_15m` with its quote and taker buy volumes", () => {
    const bars: Array<unknown> = []
    const sink: VenueSink = { quote: () => undefined, ticker: () => undefined, bar: (s, t, b) => bars.push([s, t, b]) }
    // "Kline/Candlestick Streams" payload shape (USDⓈ-M futures), values made up.
    const frame = {
      stream: "btcusdt@kline_15m",
      data: {
        e: "kline",
        E: 1_700_000_100_500,
        s: "BTCUSDT",
        k: {
          t: 1_699_999_200_000,
          T: 1_700_000_099_999,
          s: "BTCUSDT",
          i: "15m",
          o: "37000",
          c: "37010",
          h: "37020",
          l: "36990",
          v: "10",
          n: 40,
          x: false,
          q: "370100",
          V: "6",
          Q: "222060",
          B: "0"
        }
      }
    }
    assert.deepStrictEqual(binanceStreamProtocol.reader().read(JSON.stringify(frame), sink), { kind: "data" })
    assert.deepStrictEqual(bars, [
      [
        "BTCUSDT",
        1_700_000_100_500,
        {
          openMs: 1_699_999_200_000,
          open: 37000,
          high: 37020,
          low: 36990,
          close: 37010,
          volume: 10,
          quoteVolume: 370100,
          takerBuyQuote: 222060,
          closed: false
        }
      ]
    ])
    // The bar's closing push (`x: true`) is the closed bar, stored from the stream at the close.
    const closing = { ...frame, data: { ...frame.data, k: { ...frame.data.k, x: true } } }
    binanceStreamProtocol.reader().read(JSON.stringify(closing), sink)
    assert.strictEqual((bars[1] as [string, number, { closed: boolean }])[2].closed, true)
    assert.isTrue(binanceStreamProtocol.closedBars)
    assert.strictEqual(binanceStreamProtocol.url("wss://x", "btcusdt@kline_15m"), "wss://x/market/stream")
    assert.strictEqual(binanceStreamProtocol.symbolOfTopic("btcusdt@kline_15m"), "BTCUSDT")
  })

  it("routes book tickers to the public endpoint and the rest to the market endpoint", () => {
    assert.strictEqual(
      binanceStreamProtocol.url("wss://fstream.binance.com", "btcusdt@bookTicker"),
      "wss://fstream.binance.com/public/stream"
    )
    assert.strictEqual(
      binanceStreamProtocol.url("wss://fstream.binance.com", "!markPrice@arr@1s"),
      "wss://fstream.binance.com/market/stream"
    )
    assert.strictEqual(binanceStreamProtocol.symbolOfTopic("1000pepeusdt@bookTicker"), "1000PEPEUSDT")
  })
})

const inst = (symbol: string, assetId: string, tokensPerUnit = 1): Instrument => ({
  assetId,
  venue: "binance",
  symbol,
  tokensPerUnit,
  tokensPerContract: 1,
  fundingIntervalMs: 8 * 3_600_000
})

const limits = { silenceMs: 1_500, pingEveryMs: 300, symbolSilenceMs: 60_000 }

const start = (
  server: FakeWsServer,
  board: QuoteBoard,
  instruments: () => ReadonlyMap<string, Instrument>,
  extra: { readonly maxLifetimeMs?: number; readonly rotateBeforeMs?: number } = {}
) =>
  Effect.gen(function* () {
    const stats: MarketStreamStats = { frames: 0, malformed: 0, connects: 0, rotations: 0, gaps: 0, lastMalformed: "" }
    const fiber = yield* Effect.forkScoped(
      runMarketStream(
        binanceStreamProtocol,
        {
          baseUrl: server.url,
          instruments,
          timeoutMs: 1_000,
          followEveryMs: 200,
          backoffBaseMs: 50,
          backoffCapMs: 200,
          limits: { ...limits, ...(extra.maxLifetimeMs === undefined ? {} : { maxLifetimeMs: extra.maxLifetimeMs }) },
          ...(extra.rotateBeforeMs === undefined ? {} : { rotateBeforeMs: extra.rotateBeforeMs })
        },
        board,
        stats
      )
    )
    return { stats, fiber }
  })

const two = new Map([
  ["BTCUSDT", inst("BTCUSDT", "crypto:bitcoin")],
  ["1000PEPEUSDT", inst("1000PEPEUSDT", "crypto:pepe", 1000)]
])

// Concurrent: each test has its own fake venue, board and stream, and spends its time waiting on real timers.
describe.concurrent("Binance market stream against a fake venue", () => {
  it.live("streams quotes in canonical units, and the health follows the venue's event time", () =>
    Effect.gen(function* () {
      const venue = binanceStreamVenue()
      const server = yield* fakeWsServer(venue.handler)
      const board = makeQuoteBoard()
      yield* start(server, board, () => two)
      assert.isTrue(yield* eventually(() => board.health("binance")?.up === true), "subscribed")
      assert.isTrue(yield* eventually(() => venue.state.subscribed.has("btcusdt@bookTicker")))
      assert.isTrue(venue.state.subscribed.has("!markPrice@arr@1s"))
      const paths = server.connections.map((c) => c.path).sort()
      assert.deepStrictEqual(paths, ["/market/stream", "/public/stream"])
      const t = Date.now()
      server.broadcast(bookTickerFrame("1000PEPEUSDT", t, 0.0105, 0.0106))
      server.broadcast(bookTickerFrame("BTCUSDT", t + 1, 90_000, 90_000.5))
      assert.isTrue(yield* eventually(() => board.quote("crypto:bitcoin", "binance") !== undefined))
      assert.isTrue(yield* eventually(() => board.quote("crypto:pepe", "binance") !== undefined))
      const pepe = board.quote("crypto:pepe", "binance")
      assert.closeTo(pepe?.bid ?? 0, 0.0000105, 1e-12)
      assert.strictEqual(pepe?.bidSize, 3000)
      assert.isTrue(yield* eventually(() => (board.health("binance")?.newestMs ?? 0) === t + 1))
      // Keep-alives go out and are answered.
      assert.isTrue(
        yield* eventually(() => server.received.some((f) => (f as { method?: string }).method === "LIST_SUBSCRIPTIONS"))
      )
    }).pipe(Effect.scoped)
  )

  it.live("a dropped connection is down at once and streams again after the reconnect", () =>
    Effect.gen(function* () {
      const venue = binanceStreamVenue()
      const server = yield* fakeWsServer(venue.handler)
      const board = makeQuoteBoard()
      const { stats } = yield* start(server, board, () => two)
      assert.isTrue(yield* eventually(() => board.health("binance")?.up === true))
      assert.isTrue(yield* eventually(() => server.open() === 2 && venue.state.subscribed.has("btcusdt@bookTicker")))
      server.dropAll()
      assert.isTrue(yield* eventually(() => board.health("binance")?.up === false), "down after the drop")
      assert.match(board.health("binance")?.reason ?? "", /connection closed/)
      assert.isTrue(yield* eventually(() => board.health("binance")?.up === true), "up again")
      const back = yield* eventually(() => server.open() === 2 && stats.connects >= 4)
      assert.isTrue(
        back,
        `both connections back: ${server.open()} open, ${stats.connects} connects, ${JSON.stringify(board.health("binance"))}`
      )
      const t = Date.now()
      server.broadcast(bookTickerFrame("BTCUSDT", t, 91_000, 91_001))
      assert.isTrue(yield* eventually(() => board.quote("crypto:bitcoin", "binance")?.t === t))
    }).pipe(Effect.scoped)
  )

  it.live("a half-open connection (no frames, no close) is declared dead and replaced", () =>
    Effect.gen(function* () {
      const venue = binanceStreamVenue()
      const server = yield* fakeWsServer(venue.handler)
      const board = makeQuoteBoard()
      yield* start(server, board, () => two)
      assert.isTrue(yield* eventually(() => board.health("binance")?.up === true))
      venue.state.answering = false
      assert.isTrue(yield* eventually(() => board.health("binance")?.up === false), "silence detected")
      assert.match(board.health("binance")?.reason ?? "", /no frame for|no answer/)
      venue.state.answering = true
      assert.isTrue(yield* eventually(() => board.health("binance")?.up === true), "replaced")
    }).pipe(Effect.scoped)
  )

  it.live("a refused symbol is named and served from REST while the others stream", () =>
    Effect.gen(function* () {
      const venue = binanceStreamVenue(new Set(["1000pepeusdt@bookTicker"]))
      const server = yield* fakeWsServer(venue.handler)
      const board = makeQuoteBoard()
      yield* start(server, board, () => two)
      assert.isTrue(yield* eventually(() => board.health("binance")?.up === true))
      assert.isTrue(
        yield* eventually(() => venue.state.subscribed.has("btcusdt@bookTicker")),
        "the batch was asked again topic by topic"
      )
      const t = Date.now()
      server.broadcast(bookTickerFrame("BTCUSDT", t, 90_000, 90_001))
      server.broadcast(bookTickerFrame("1000PEPEUSDT", t, 0.01, 0.0101))
      assert.isTrue(yield* eventually(() => board.quote("crypto:bitcoin", "binance") !== undefined))
      assert.isTrue(yield* eventually(() => board.isSilent("crypto:pepe", "binance")))
      assert.isFalse(board.isSilent("crypto:bitcoin", "binance"))
      assert.match(board.health("binance")?.detail ?? "", /refused: 1000pepeusdt@bookTicker/)
    }).pipe(Effect.scoped)
  )

  it.live("rotates a connection before the venue's age limit, with no moment down", () =>
    Effect.gen(function* () {
      const venue = binanceStreamVenue()
      const server = yield* fakeWsServer(venue.handler)
      const board = makeQuoteBoard()
      const { stats } = yield* start(server, board, () => two, { maxLifetimeMs: 1_200, rotateBeforeMs: 400 })
      assert.isTrue(yield* eventually(() => board.health("binance")?.up === true))
      let downSeen = false
      const watch = yield* Effect.forkScoped(
        Effect.forever(
          Effect.andThen(
            Effect.sync(() => {
              if (board.health("binance")?.up !== true) downSeen = true
            }),
            Effect.sleep(20)
          )
        )
      )
      assert.isTrue(yield* eventually(() => stats.rotations >= 2), "rotated")
      yield* Fiber.interrupt(watch)
      assert.isFalse(downSeen, "never down during the rotations")
    }).pipe(Effect.scoped)
  )

  it.live("follows new listings and delistings without a restart", () =>
    Effect.gen(function* () {
      const venue = binanceStreamVenue()
      const server = yield* fakeWsServer(venue.handler)
      const board = makeQuoteBoard()
      let current: ReadonlyMap<string, Instrument> = new Map([["BTCUSDT", inst("BTCUSDT", "crypto:bitcoin")]])
      yield* start(server, board, () => current)
      assert.isTrue(yield* eventually(() => board.health("binance")?.up === true))
      current = two
      assert.isTrue(
        yield* eventually(() => venue.state.subscribed.has("1000pepeusdt@bookTicker")),
        "new listing subscribed"
      )
      const t = Date.now()
      server.broadcast(bookTickerFrame("1000PEPEUSDT", t, 0.01, 0.0101))
      assert.isTrue(yield* eventually(() => board.quote("crypto:pepe", "binance") !== undefined))
      current = new Map([["BTCUSDT", inst("BTCUSDT", "crypto:bitcoin")]])
      assert.isTrue(
        yield* eventually(() => !venue.state.subscribed.has("1000pepeusdt@bookTicker")),
        "delisting unsubscribed"
      )
      assert.isTrue(yield* eventually(() => board.quote("crypto:pepe", "binance") === undefined), "its state forgotten")
    }).pipe(Effect.scoped)
  )

  it.live("skips malformed, oversized and not-live frames whole, counting them", () =>
    Effect.gen(function* () {
      const venue = binanceStreamVenue()
      const server = yield* fakeWsServer(venue.handler)
      const board = makeQuoteBoard()
      const { stats } = yield* start(server, board, () => two)
      assert.isTrue(yield* eventually(() => board.health("binance")?.up === true))
      server.broadcast("{truncated")
      server.broadcast(`{"stream":"x","data":"${"x".repeat(4_100_000)}"}`)
      server.broadcast(bookTickerFrame("BTCUSDT", Date.now() - 3 * 86_400_000, 1, 2))
      assert.isTrue(yield* eventually(() => stats.malformed >= 3))
      assert.isUndefined(board.quote("crypto:bitcoin", "binance"))
      assert.isTrue(
        yield* eventually(() => /[1-9][0-9]* malformed frames skipped/.test(board.health("binance")?.detail ?? ""))
      )
      // The oversized frame may cost its connection (the websocket refuses a message that large): up again after.
      assert.isTrue(yield* eventually(() => board.health("binance")?.up === true), "up")
    }).pipe(Effect.scoped)
  )
})
