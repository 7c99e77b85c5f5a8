/**
 * Bybit v5 linear market stream (`venues/bybit/Stream.ts`): the reader against frames in the documented shapes
 * (Bybit v5 "WebSocket Stream": "Public / Ticker" for `tickers.<symbol>` snapshot and delta messages, "Connect"
 * for the subscribe and ping answers; the values are invented), then the shared connection manager
 * (`stream/MarketStream.ts`) against a local fake Bybit (the `ws` package) answering as the venue does: quotes in
 * canonical units on the `QuoteBoard`, health up, a lost snapshot repaired by a resubscription, a refused symbol
 * named while the others stream. Bybit's streams are not in the recorded data (`../shared/data/README.md`).
 *
 * Real time with short limits; conditions are awaited, never slept on.
 */
import { assert, describe, it } from "@effect/vitest"
import { makeQuoteBoard, withQuoteBoard } from "@market-data/core"
import { makeMemoryMarketStore } from "@market-data/memory"
import { Effect } from "effect"
import { Malformed } from "../../../src/live/Parse.ts"
import type { VenueBar, VenueSink } from "../../../src/live/stream/Protocol.ts"
import { bybitStreamProtocol } from "../../../src/live/venues/bybit/Stream.ts"
import { eventually } from "../FakeServer.ts"
import { fakeWsServer } from "../FakeWsServer.ts"
import { instrument, recordingSink, startStream } from "./StreamHarness.ts"

const T = 1_773_000_000_000

/** A linear ticker snapshot ("Public / Ticker", Response Example, linear): every field, as strings. */
const snapshot = (symbol: string, t: number, over: Record<string, string> = {}) => ({
  topic: `tickers.${symbol}`,
  type: "snapshot",
  data: {
    symbol,
    tickDirection: "ZeroPlusTick",
    price24hPcnt: "0.0123",
    lastPrice: "90010.00",
    prevPrice24h: "88900.00",
    highPrice24h: "90500.00",
    lowPrice24h: "88500.00",
    prevPrice1h: "89950.00",
    markPrice: "90011.20",
    indexPrice: "90015.80",
    openInterest: "51000.125",
    openInterestValue: "4590571356.26",
    turnover24h: "3100000000.12",
    volume24h: "34500.456",
    nextFundingTime: "1773014400000",
    fundingRate: "0.000075",
    bid1Price: "90010.00",
    bid1Size: "3.210",
    ask1Price: "90010.10",
    ask1Size: "0.845",
    ...over
  },
  cs: 41_000_000_001,
  ts: t
})

/** A delta ("Public / Ticker": only the fields that changed, with the symbol). */
const delta = (symbol: string, t: number, changed: Record<string, string>, cs = 41_000_000_002) => ({
  topic: `tickers.${symbol}`,
  type: "delta",
  data: { symbol, ...changed },
  cs,
  ts: t
})

const json = (v: unknown) => JSON.stringify(v)

describe("Bybit stream reader", () => {
  it("a snapshot gives the quote and the ticker in venue units (1000PEPEUSDT: per 1,000 PEPE)", () => {
    const { quotes, tickers, sink } = recordingSink()
    const reader = bybitStreamProtocol.reader()
    assert.deepStrictEqual(reader.read(json(snapshot("BTCUSDT", T)), sink), { kind: "data" })
    assert.deepStrictEqual(quotes, [["BTCUSDT", T, 90010, 3.21, 90010.1, 0.845]])
    assert.deepStrictEqual(tickers, [
      [
        "BTCUSDT",
        T,
        {
          mark: 90011.2,
          index: 90015.8,
          fundingRate: 0.000075,
          nextFundingMs: 1_773_014_400_000,
          intervalMs: undefined,
          oiUsd: 4_590_571_356.26 / 2
        }
      ]
    ])
    const pepe = snapshot("1000PEPEUSDT", T, {
      bid1Price: "0.010500",
      bid1Size: "2000",
      ask1Price: "0.010510",
      ask1Size: "1500",
      markPrice: "0.010505",
      fundingIntervalHour: "4"
    })
    reader.read(json(pepe), sink)
    // Venue units as sent: the manager converts (prices / 1,000, sizes x 1,000).
    assert.deepStrictEqual(quotes[1], ["1000PEPEUSDT", T, 0.0105, 2000, 0.01051, 1500])
    assert.strictEqual(tickers[1]?.[2].mark, 0.010505)
    assert.strictEqual(tickers[1]?.[2].intervalMs, 4 * 3_600_000)
  })

  it("deltas are merged into the topic's state: a changed bid keeps the sizes, a changed mark keeps the rest", () => {
    const { quotes, tickers, sink } = recordingSink()
    const reader = bybitStreamProtocol.reader()
    reader.read(json(snapshot("BTCUSDT", T)), sink)
    assert.deepStrictEqual(reader.read(json(delta("BTCUSDT", T + 100, { bid1Price: "90010.05" })), sink), {
      kind: "data"
    })
    assert.deepStrictEqual(quotes[1], ["BTCUSDT", T + 100, 90010.05, 3.21, 90010.1, 0.845])
    assert.strictEqual(tickers.length, 1, "no ticker field changed: no ticker")
    reader.read(json(delta("BTCUSDT", T + 200, { markPrice: "90012.00", openInterestValue: "4590600000" })), sink)
    assert.strictEqual(quotes.length, 2, "no quote field changed: no quote")
    assert.deepStrictEqual(tickers[1], [
      "BTCUSDT",
      T + 200,
      {
        mark: 90012,
        index: 90015.8,
        fundingRate: 0.000075,
        nextFundingMs: 1_773_014_400_000,
        intervalMs: undefined,
        oiUsd: 4_590_600_000 / 2
      }
    ])
    // A new snapshot replaces the state whole.
    reader.read(json(snapshot("BTCUSDT", T + 300, { bid1Price: "90000.00", ask1Price: "90000.10" })), sink)
    assert.deepStrictEqual(quotes[2], ["BTCUSDT", T + 300, 90000, 3.21, 90000.1, 0.845])
  })

  it("a delta without a snapshot is a gap, asked once; reset forgets the topic until its next snapshot", () => {
    const { quotes, sink } = recordingSink()
    const reader = bybitStreamProtocol.reader()
    assert.deepStrictEqual(reader.read(json(delta("ETHUSDT", T, { bid1Price: "3000.10" })), sink), {
      kind: "gap",
      topic: "tickers.ETHUSDT",
      message: "tickers.ETHUSDT: a delta without a snapshot"
    })
    // The manager resets the topic and resubscribes; deltas still in flight are ignored meanwhile.
    reader.reset?.("tickers.ETHUSDT")
    assert.deepStrictEqual(reader.read(json(delta("ETHUSDT", T + 100, { bid1Price: "3000.20" })), sink), {
      kind: "other"
    })
    assert.strictEqual(quotes.length, 0)
    reader.read(json(snapshot("ETHUSDT", T + 200, { bid1Price: "3000.00", ask1Price: "3000.05" })), sink)
    reader.read(json(delta("ETHUSDT", T + 300, { ask1Size: "7.5" })), sink)
    assert.deepStrictEqual(quotes, [
      ["ETHUSDT", T + 200, 3000, 3.21, 3000.05, 0.845],
      ["ETHUSDT", T + 300, 3000, 3.21, 3000.05, 7.5]
    ])
    // reset on a live topic: its deltas are not applied to stale state.
    reader.reset?.("tickers.ETHUSDT")
    assert.deepStrictEqual(reader.read(json(delta("ETHUSDT", T + 400, { bid1Price: "1.0" })), sink), { kind: "other" })
    assert.strictEqual(quotes.length, 2)
  })

  it("a one-sided book gives no quote; the ticker still comes", () => {
    const { quotes, tickers, sink } = recordingSink()
    const reader = bybitStreamProtocol.reader()
    reader.read(json(snapshot("NEWUSDT", T, { ask1Price: "", ask1Size: "" })), sink)
    assert.strictEqual(quotes.length, 0)
    assert.strictEqual(tickers.length, 1)
  })

  it("reads the subscribe answers ('Connect': success true or false, by req_id) and both pong shapes", () => {
    const { sink } = recordingSink()
    const reader = bybitStreamProtocol.reader()
    assert.deepStrictEqual(
      reader.read('{"success":true,"ret_msg":"","conn_id":"cq2x4a-1","req_id":"100","op":"subscribe"}', sink),
      { kind: "ack", id: "100" }
    )
    assert.deepStrictEqual(
      reader.read('{"success":true,"ret_msg":"","conn_id":"cq2x4a-1","req_id":"103","op":"unsubscribe"}', sink),
      { kind: "ack", id: "103" }
    )
    assert.deepStrictEqual(
      reader.read(
        '{"success":false,"ret_msg":"error:handler not found,topic:tickers.NOPEUSDT","conn_id":"cq2x4a-1","req_id":"101","op":"subscribe"}',
        sink
      ),
      { kind: "refused", id: "101", message: "error:handler not found,topic:tickers.NOPEUSDT" }
    )
    assert.deepStrictEqual(
      reader.read('{"success":true,"ret_msg":"pong","conn_id":"cq2x4a-1","req_id":"","op":"ping"}', sink),
      { kind: "pong" }
    )
    assert.deepStrictEqual(reader.read('{"req_id":"","op":"pong","args":["1773000000000"],"conn_id":"c"}', sink), {
      kind: "pong"
    })
    assert.deepStrictEqual(reader.read('{"topic":"publicTrade.BTCUSDT","type":"snapshot","data":[]}', sink), {
      kind: "other"
    })
  })

  it("frames not in the documented format throw Malformed; a delta that cannot be read asks for a fresh snapshot", () => {
    const { quotes, sink } = recordingSink()
    const reader = bybitStreamProtocol.reader()
    reader.read(json(snapshot("BTCUSDT", T)), sink)
    assert.throws(() => reader.read(json(delta("BTCUSDT", T + 1, { bid1Price: "9O010" })), sink), Malformed)
    assert.throws(() => reader.read(json({ ...delta("BTCUSDT", T + 1, {}), type: "update" }), sink), Malformed)
    assert.throws(() => reader.read(json({ ...snapshot("ETHUSDT", T), ts: undefined }), sink), Malformed)
    assert.throws(() => reader.read(json({ ...snapshot("ETHUSDT", T), data: [] }), sink), Malformed)
    assert.throws(() => reader.read(json(snapshot("ETHUSDT", T, { symbol: "BTCUSDT" })), sink), Malformed)
    assert.throws(() => reader.read('{"success":"yes","req_id":"100","op":"subscribe"}', sink), Malformed)
    assert.throws(() => reader.read('{"success":true,"op":"subscribe"}', sink), Malformed)
    assert.throws(() => reader.read("{truncated", sink))
    // The unreadable delta lost a change: the next delta is a gap (the manager resubscribes).
    assert.strictEqual(reader.read(json(delta("BTCUSDT", T + 2, { ask1Size: "1" })), sink).kind, "gap")
    assert.strictEqual(quotes.length, 1)
  })

  it("reads the forming 15-minute bar of `kline.15.<symbol>` (venue units)", () => {
    const bars: Array<[string, number, VenueBar]> = []
    const sink: VenueSink = { quote: () => undefined, ticker: () => undefined, bar: (s, t, b) => bars.push([s, t, b]) }
    // "Public / Kline" push shape (values made up).
    const frame = {
      topic: "kline.15.BTCUSDT",
      data: [
        {
          start: 1_700_000_100_000 - (1_700_000_100_000 % 900_000),
          end: 1_700_000_100_000 - (1_700_000_100_000 % 900_000) + 899_999,
          interval: "15",
          open: "37000.5",
          close: "37010",
          high: "37020",
          low: "36990",
          volume: "12.5",
          turnover: "462500",
          confirm: false,
          timestamp: 1_700_000_100_000
        }
      ],
      ts: 1_700_000_100_000,
      type: "snapshot"
    }
    assert.deepStrictEqual(bybitStreamProtocol.reader().read(JSON.stringify(frame), sink), { kind: "data" })
    assert.deepStrictEqual(bars, [
      [
        "BTCUSDT",
        1_700_000_100_000,
        {
          openMs: frame.data[0]?.start as number,
          open: 37000.5,
          high: 37020,
          low: 36990,
          close: 37010,
          volume: 12.5,
          closed: false
        }
      ]
    ])
    // The bar's last push (`confirm: true`) is the closed bar, stored from the stream at the close.
    const last = { ...frame, data: [{ ...frame.data[0], confirm: true }] }
    bybitStreamProtocol.reader().read(JSON.stringify(last), sink)
    assert.strictEqual(bars[1]?.[2].closed, true)
    assert.isTrue(bybitStreamProtocol.closedBars)
  })

  it("subscribes `tickers.<symbol>` on /v5/public/linear with the request id as req_id", () => {
    const p = bybitStreamProtocol
    assert.strictEqual(p.url("wss://stream.bybit.com", "tickers.BTCUSDT"), "wss://stream.bybit.com/v5/public/linear")
    assert.deepStrictEqual(p.symbolTopics("1000PEPEUSDT"), ["tickers.1000PEPEUSDT", "kline.15.1000PEPEUSDT"])
    assert.strictEqual(p.symbolOfTopic("tickers.1000PEPEUSDT"), "1000PEPEUSDT")
    assert.strictEqual(p.symbolOfTopic("kline.15.1000PEPEUSDT"), "1000PEPEUSDT")
    assert.deepStrictEqual(JSON.parse(p.subscribe(["tickers.BTCUSDT", "tickers.ETHUSDT"], 100)), {
      op: "subscribe",
      args: ["tickers.BTCUSDT", "tickers.ETHUSDT"],
      req_id: "100"
    })
    assert.deepStrictEqual(JSON.parse(p.unsubscribe(["tickers.BTCUSDT"], 101)), {
      op: "unsubscribe",
      args: ["tickers.BTCUSDT"],
      req_id: "101"
    })
    assert.deepStrictEqual(JSON.parse(p.ping ?? ""), { op: "ping" })
    assert.strictEqual(p.limits.pingEveryMs, 20_000)
    assert.deepStrictEqual(p.components, ["books", "fundingState"])
  })
})

interface BybitRequest {
  readonly op?: string
  readonly args?: ReadonlyArray<string>
  readonly req_id?: string
}

/**
 * A fake Bybit linear endpoint ("Connect"): answers `subscribe`/`unsubscribe` by req_id (refusing a request naming
 * a symbol in `refuse`), then pushes each subscribed topic's snapshot (except for `withhold`'s first subscription);
 * answers `ping`.
 */
const bybitVenue = (opts: { readonly refuse?: ReadonlySet<string>; readonly withhold?: ReadonlySet<string> } = {}) => {
  const state = { subscribed: new Set<string>(), subscribes: new Map<string, number>(), unsubscribed: [] as string[] }
  const ack = (f: BybitRequest, success: boolean, msg = "") => ({
    success,
    ret_msg: msg,
    conn_id: "fake-conn",
    req_id: f.req_id,
    op: f.op
  })
  const handler = (frame: unknown) => {
    const f = frame as BybitRequest
    if (f.op === "ping") return { success: true, ret_msg: "pong", conn_id: "fake-conn", req_id: "", op: "ping" }
    if (f.op === "unsubscribe") {
      for (const t of f.args ?? []) {
        state.subscribed.delete(t)
        state.unsubscribed.push(t)
      }
      return ack(f, true)
    }
    if (f.op !== "subscribe") return undefined
    const bad = (f.args ?? []).find((t) => opts.refuse?.has(t))
    if (bad !== undefined) return ack(f, false, `error:handler not found,topic:${bad}`)
    const out: Array<unknown> = [ack(f, true)]
    for (const t of f.args ?? []) {
      state.subscribed.add(t)
      const n = (state.subscribes.get(t) ?? 0) + 1
      state.subscribes.set(t, n)
      if (opts.withhold?.has(t) && n === 1) continue
      const symbol = t.slice("tickers.".length)
      out.push(
        symbol === "1000PEPEUSDT"
          ? snapshot(symbol, Date.now(), {
              bid1Price: "0.010500",
              bid1Size: "2000",
              ask1Price: "0.010510",
              ask1Size: "1500",
              markPrice: "0.010505",
              indexPrice: "0.010506",
              openInterestValue: "12000000"
            })
          : snapshot(symbol, Date.now())
      )
    }
    return out
  }
  return { state, handler }
}

const btcAndPepe = new Map([
  ["BTCUSDT", instrument("bybit", "BTCUSDT", "crypto:bitcoin")],
  ["1000PEPEUSDT", instrument("bybit", "1000PEPEUSDT", "crypto:pepe", { tokensPerUnit: 1000 })]
])

// Concurrent: each test has its own fake venue, board and stream, and spends its time waiting on real timers.
describe.concurrent("Bybit market stream against a fake venue", () => {
  it.live("streams the snapshot and deltas into the board in canonical units; health up; pings answered", () =>
    Effect.gen(function* () {
      const venue = bybitVenue()
      const server = yield* fakeWsServer(venue.handler)
      const board = makeQuoteBoard()
      const stats = yield* startStream(bybitStreamProtocol, server, board, () => btcAndPepe)
      assert.isTrue(yield* eventually(() => board.health("bybit")?.up === true), "subscribed")
      assert.deepStrictEqual(
        server.connections.map((c) => c.path),
        ["/v5/public/linear"]
      )
      assert.isTrue(yield* eventually(() => board.quote("crypto:pepe", "bybit") !== undefined))
      const pepe = board.quote("crypto:pepe", "bybit")
      // 0.0105 USDT per 1,000 PEPE x 2,000 units -> 0.0000105 USDT per PEPE x 2,000,000 PEPE.
      assert.closeTo(pepe?.bid ?? 0, 0.0000105, 1e-15)
      assert.closeTo(pepe?.ask ?? 0, 0.00001051, 1e-15)
      assert.strictEqual(pepe?.bidSize, 2_000_000)
      assert.strictEqual(pepe?.askSize, 1_500_000)
      const pepeTicker = board.ticker("crypto:pepe", "bybit")
      assert.closeTo(pepeTicker?.mark ?? 0, 0.000010505, 1e-15)
      // openInterestValue counts both sides: one side is half of it.
      assert.strictEqual(pepeTicker?.oiUsd, 6_000_000)
      // What `open_interest` answers for the venue (`withQuoteBoard`): that one side, as of the venue's event time.
      const answered = withQuoteBoard(makeMemoryMarketStore(), board).streamedOpenInterest?.("crypto:pepe")
      assert.deepStrictEqual(
        answered?.map((x) => [x.venue, x.usd, x.t, x.status.component, x.status.failing]),
        [["bybit", 6_000_000, pepeTicker?.t, "openInterest", false]]
      )
      const btc = board.ticker("crypto:bitcoin", "bybit")
      assert.strictEqual(btc?.fundingRate, 0.000075)
      assert.strictEqual(btc?.nextFundingMs, 1_773_014_400_000)
      assert.strictEqual(btc?.intervalMs, 8 * 3_600_000, "the instrument's interval where the frame has none")

      // A delta changes the bid alone: the board's quote keeps the snapshot's sizes.
      const t = Date.now()
      server.broadcast(delta("BTCUSDT", t, { bid1Price: "90010.05" }))
      assert.isTrue(yield* eventually(() => board.quote("crypto:bitcoin", "bybit")?.t === t))
      assert.deepStrictEqual(board.quote("crypto:bitcoin", "bybit"), {
        t,
        bid: 90010.05,
        bidSize: 3.21,
        ask: 90010.1,
        askSize: 0.845
      })
      assert.isTrue(yield* eventually(() => board.health("bybit")?.newestMs === t))
      // Keep-alives go out as `{"op":"ping"}` every 200 ms here; with no data pushed, their answers alone keep the
      // link alive past the 1.5 s silence limit (ten pings: two seconds), on the same connection.
      assert.isTrue(
        yield* eventually(() => server.received.filter((f) => (f as BybitRequest).op === "ping").length >= 10)
      )
      assert.isTrue(board.health("bybit")?.up)
      assert.strictEqual(stats.connects, 1)
    }).pipe(Effect.scoped)
  )

  it.live("a delta for a topic whose snapshot was lost resubscribes it, and the new snapshot repairs it", () =>
    Effect.gen(function* () {
      const venue = bybitVenue({ withhold: new Set(["tickers.ETHUSDT"]) })
      const server = yield* fakeWsServer(venue.handler)
      const board = makeQuoteBoard()
      const instruments = new Map([
        ["BTCUSDT", instrument("bybit", "BTCUSDT", "crypto:bitcoin")],
        ["ETHUSDT", instrument("bybit", "ETHUSDT", "crypto:ethereum")]
      ])
      const stats = yield* startStream(bybitStreamProtocol, server, board, () => instruments)
      assert.isTrue(yield* eventually(() => board.health("bybit")?.up === true))
      assert.isTrue(yield* eventually(() => board.quote("crypto:bitcoin", "bybit") !== undefined))
      assert.isUndefined(board.quote("crypto:ethereum", "bybit"), "its snapshot never came")
      server.broadcast(delta("ETHUSDT", Date.now(), { bid1Price: "3000.10" }))
      assert.isTrue(yield* eventually(() => board.quote("crypto:ethereum", "bybit") !== undefined), "repaired")
      assert.isAtLeast(stats.gaps, 1)
      assert.include(venue.state.unsubscribed, "tickers.ETHUSDT")
      assert.strictEqual(venue.state.subscribes.get("tickers.ETHUSDT"), 2, "subscribed again once")
      assert.strictEqual(venue.state.subscribes.get("tickers.BTCUSDT"), 1, "the other topic untouched")
      assert.isTrue(board.health("bybit")?.up)
    }).pipe(Effect.scoped)
  )

  it.live("a refused symbol (its batch asked again topic by topic) is named and served from REST", () =>
    Effect.gen(function* () {
      const venue = bybitVenue({ refuse: new Set(["tickers.NOPEUSDT"]) })
      const server = yield* fakeWsServer(venue.handler)
      const board = makeQuoteBoard()
      const instruments = new Map([...btcAndPepe, ["NOPEUSDT", instrument("bybit", "NOPEUSDT", "crypto:nope")]])
      yield* startStream(bybitStreamProtocol, server, board, () => instruments)
      assert.isTrue(yield* eventually(() => board.health("bybit")?.up === true))
      assert.isTrue(yield* eventually(() => venue.state.subscribed.has("tickers.BTCUSDT")))
      assert.isTrue(venue.state.subscribed.has("tickers.1000PEPEUSDT"))
      assert.isTrue(yield* eventually(() => /refused: tickers\.NOPEUSDT/.test(board.health("bybit")?.detail ?? "")))
      assert.isTrue(yield* eventually(() => board.quote("crypto:bitcoin", "bybit") !== undefined))
    }).pipe(Effect.scoped)
  )
})
