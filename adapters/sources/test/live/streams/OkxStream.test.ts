/**
 * OKX v5 public market stream (`venues/okx/Stream.ts`): the reader against the recorded real frames
 * (`../shared/data/crypto/streams/OKX.ws.1.0.txt`, read in place; skipped, saying so, where the folder is absent)
 * and against the hand-made frames of `./fixtures/OkxFrames.ts` (documented shapes), then the shared connection
 * manager (`stream/MarketStream.ts`) against a local fake OKX (the `ws` package) answering as OKX does (one answer
 * per arg, an error naming an unknown instrument, the text `pong`) on its public and business endpoints: quotes
 * in canonical units (contracts to coins), the funding state, the forming bar from `candle15m`, health up, a
 * refused swap named while the others stream.
 *
 * Real time with short limits; conditions are awaited, never slept on.
 */
import { existsSync, readFileSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import { makeQuoteBoard, type QuoteBoard } from "@market-data/core"
import { Effect, Fiber } from "effect"
import { Malformed } from "../../../src/live/Parse.ts"
import { runMarketStream } from "../../../src/live/stream/MarketStream.ts"
import type { FrameKind } from "../../../src/live/stream/Protocol.ts"
import { okxStreamProtocol, okxTopicUrl } from "../../../src/live/venues/okx/Stream.ts"
import { eventually } from "../FakeServer.ts"
import { fakeWsServer } from "../FakeWsServer.ts"
import * as F from "./fixtures/OkxFrames.ts"
import { instrument, recordingSink, startStream, testLimits } from "./StreamHarness.ts"

const RECORDED = new URL("../../../../../../shared/data/crypto/streams/OKX.ws.1.0.txt", import.meta.url)
const recordedPresent = existsSync(RECORDED)

/** The frames of a session file: every `<unix time>: <frame>` line (the `wss://...` lines are what was sent). */
const framesOf = (text: string): ReadonlyArray<string> =>
  text
    .split("\n")
    .filter((l) => l !== "" && !l.startsWith("wss://"))
    .map((l) => l.slice(l.indexOf(": ") + 2))

const T = 1_773_000_000_000

describe("OKX stream reader, recorded frames", () => {
  if (!recordedPresent)
    it.skip("../shared/data/crypto/streams/OKX.ws.1.0.txt is absent: the recorded OKX frames are not read", () => {})

  it.skipIf(!recordedPresent)("reads every recorded frame (real frames, 2022-05-13): acks, tickers, the rest", () => {
    const frames = framesOf(readFileSync(RECORDED, "utf8"))
    const { quotes, tickers, sink } = recordingSink()
    const reader = okxStreamProtocol.reader()
    const kinds = new Map<string, number>()
    for (const frame of frames) {
      const k = reader.read(frame, sink)
      kinds.set(k.kind, (kinds.get(k.kind) ?? 0) + 1)
    }
    // 18 per-arg subscribe answers; 28 tickers pushes; 74 trades and 290 books pushes (not channels of ours).
    assert.deepStrictEqual(Object.fromEntries(kinds), { ack: 18, data: 28, other: 364 })
    assert.strictEqual(quotes.length, 28)
    assert.strictEqual(tickers.length, 0)
    // The first: BTC-USD-220527 bid 30210.4 x 4, ask 30220.1 x 3 (contracts), ts 1652459223003.
    assert.deepStrictEqual(quotes[0], ["BTC-USD-220527", 1_652_459_223_003, 30210.4, 4, 30220.1, 3])
    // The swap: UNI-USD-SWAP bid 5.134 x 96, ask 5.142 x 25.
    assert.deepStrictEqual(
      quotes.find((q) => q[0] === "UNI-USD-SWAP"),
      ["UNI-USD-SWAP", 1_652_459_223_143, 5.134, 96, 5.142, 25]
    )
    for (const q of quotes) assert.isTrue(q[2] <= q[4], "bid at or below ask")
    // The answers name the topics in this protocol's form.
    const ack = reader.read(frames.find((f) => f.includes('"event":"subscribe"')) as string, sink)
    assert.deepStrictEqual(ack, { kind: "ack", topics: ["tickers:BTC-USD-220527"] })
  })
})

describe("OKX stream reader, documented shapes (hand-made)", () => {
  it("reads a session: per-arg acks, the ticker's quote in contracts, mark, funding, the text pong", () => {
    const { quotes, tickers, sink } = recordingSink()
    const reader = okxStreamProtocol.reader()
    const kinds = framesOf(F.session(T).join("\n")).map((f) => reader.read(f, sink))
    assert.deepStrictEqual(kinds, [
      { kind: "ack", topics: ["tickers:BTC-USDT-SWAP"] },
      { kind: "ack", topics: ["mark-price:BTC-USDT-SWAP"] },
      { kind: "ack", topics: ["funding-rate:BTC-USDT-SWAP"] },
      { kind: "data" },
      { kind: "data" },
      { kind: "data" },
      { kind: "pong" },
      { kind: "data" }
    ])
    assert.deepStrictEqual(quotes, [
      ["BTC-USDT-SWAP", T, 90010.1, 412, 90010.2, 37],
      ["BTC-USDT-SWAP", T + 100, 90010.3, 5, 90010.4, 120]
    ])
    assert.deepStrictEqual(tickers, [
      ["BTC-USDT-SWAP", T + 5, { mark: 90011.4 }],
      [
        "BTC-USDT-SWAP",
        T + 9,
        {
          fundingRate: 0.0000815,
          predictedRate: undefined,
          nextFundingMs: 1_773_014_400_000,
          intervalMs: 8 * 3_600_000
        }
      ]
    ])
  })

  it("a published prediction is the predicted rate; the interval is the gap between the two funding times", () => {
    const { tickers, sink } = recordingSink()
    okxStreamProtocol.reader().read(
      F.fundingRate("ETH-USDT-SWAP", T, {
        fundingRate: "-0.0001",
        nextFundingRate: "0.00002",
        fundingTime: 1_773_014_400_000,
        nextFundingTime: 1_773_028_800_000
      }),
      sink
    )
    assert.deepStrictEqual(tickers[0]?.[2], {
      fundingRate: -0.0001,
      predictedRate: 0.00002,
      nextFundingMs: 1_773_014_400_000,
      intervalMs: 4 * 3_600_000
    })
  })

  it("open interest (subscribed per swap): oiUsd where given, else contracts as the quantity", () => {
    const { tickers, sink } = recordingSink()
    const reader = okxStreamProtocol.reader()
    reader.read(F.openInterest("BTC-USDT-SWAP", T, "2500000", "2250000000"), sink)
    reader.read(F.openInterest("BTC-USDT-SWAP", T + 1, "2500000", undefined), sink)
    assert.deepStrictEqual(
      tickers.map((x) => x[2]),
      [{ oiUsd: 2_250_000_000 }, { oiQuantity: 2_500_000 }]
    )
    assert.include(okxStreamProtocol.symbolTopics("BTC-USDT-SWAP"), "open-interest:BTC-USDT-SWAP")
  })

  it("errors are refusals of the arg they name (arg field, or the message), else of nothing; notices are other", () => {
    const { sink } = recordingSink()
    const reader = okxStreamProtocol.reader()
    const refused = reader.read(F.unknownInstrument("mark-price", "NOPE-USDT-SWAP"), sink) as Extract<
      FrameKind,
      { kind: "refused" }
    >
    assert.strictEqual(refused.kind, "refused")
    assert.deepStrictEqual(refused.topics, ["mark-price:NOPE-USDT-SWAP"])
    assert.match(refused.message, /^code 60018: Wrong URL or channel:mark-price,instId:NOPE-USDT-SWAP doesn't exist/)
    const withArg = JSON.stringify({
      event: "error",
      code: "60018",
      msg: "Wrong URL or channel",
      arg: F.arg("tickers", "NOPE-USDT-SWAP"),
      connId: "5a2f07c1"
    })
    assert.deepStrictEqual(reader.read(withArg, sink), {
      kind: "refused",
      topics: ["tickers:NOPE-USDT-SWAP"],
      message: "code 60018: Wrong URL or channel"
    })
    const vague = reader.read(F.invalidRequest, sink)
    assert.strictEqual(vague.kind, "refused")
    assert.isUndefined((vague as Extract<FrameKind, { kind: "refused" }>).topics)
    assert.deepStrictEqual(reader.read(F.subscribed("tickers", "BTC-USDT-SWAP", "unsubscribe"), sink), {
      kind: "ack",
      topics: ["tickers:BTC-USDT-SWAP"]
    })
    assert.deepStrictEqual(reader.read(F.notice, sink), { kind: "other" })
  })

  it("an empty book side gives no quote", () => {
    const { quotes, sink } = recordingSink()
    okxStreamProtocol
      .reader()
      .read(F.tickers("NEW-USDT-SWAP", T, { bid: "", bidSz: "", ask: "0.51", askSz: "9" }), sink)
    assert.strictEqual(quotes.length, 0)
  })

  it("frames not in the documented format throw Malformed", () => {
    const { sink } = recordingSink()
    const reader = okxStreamProtocol.reader()
    const bad = (frame: unknown) => assert.throws(() => reader.read(JSON.stringify(frame), sink), Malformed)
    bad({ arg: F.arg("tickers", "BTC-USDT-SWAP"), data: { bidPx: "1" } })
    bad({ arg: F.arg("mark-price", "BTC-USDT-SWAP"), data: [{ instId: "BTC-USDT-SWAP", markPx: "n/a", ts: "1" }] })
    bad({ arg: F.arg("mark-price", "BTC-USDT-SWAP"), data: [{ instId: "BTC-USDT-SWAP", markPx: "1" }] })
    bad({
      arg: F.arg("funding-rate", "BTC-USDT-SWAP"),
      data: [{ instId: "BTC-USDT-SWAP", fundingRate: "0.1", ts: "1" }]
    })
    bad({ arg: { instId: "BTC-USDT-SWAP" }, data: [] })
    bad({ event: "subscribe", connId: "x" })
    bad([1, 2])
    assert.throws(
      () => reader.read(F.tickers("BTC-USDT-SWAP", T, { bid: "1O", bidSz: "1", ask: "2", askSz: "1" }), sink),
      Malformed
    )
    // Only `pong` is read as text; anything else not JSON is not the format (the client's own `ping` included).
    assert.throws(() => reader.read("ping", sink), SyntaxError)
    assert.throws(() => reader.read('{"arg":', sink))
  })

  it("subscribes `<channel>:<instId>` args (candles on /ws/v5/business); the keep-alive is the text ping", () => {
    const p = okxStreamProtocol
    assert.strictEqual(p.url("wss://ws.okx.com:8443", "tickers:BTC-USDT-SWAP"), "wss://ws.okx.com:8443/ws/v5/public")
    assert.strictEqual(
      p.url("wss://ws.okx.com:8443", "candle15m:BTC-USDT-SWAP"),
      "wss://ws.okx.com:8443/ws/v5/business"
    )
    // A business endpoint configured apart (MARKET_DATA_OKX_WS_BUSINESS_BASE_URL).
    const url = okxTopicUrl("ws://127.0.0.1:7", "ws://127.0.0.1:8")
    assert.strictEqual(url("candle15m:BTC-USDT-SWAP"), "ws://127.0.0.1:8/ws/v5/business")
    assert.strictEqual(url("mark-price:BTC-USDT-SWAP"), "ws://127.0.0.1:7/ws/v5/public")
    // `off`: candles not streamed.
    assert.isUndefined(okxTopicUrl("ws://127.0.0.1:7", "off")("candle15m:BTC-USDT-SWAP"))
    assert.strictEqual(okxTopicUrl("ws://127.0.0.1:7", "off")("tickers:BTC-USDT-SWAP"), "ws://127.0.0.1:7/ws/v5/public")
    assert.deepStrictEqual(p.symbolTopics("BTC-USDT-SWAP"), [
      "tickers:BTC-USDT-SWAP",
      "mark-price:BTC-USDT-SWAP",
      "funding-rate:BTC-USDT-SWAP",
      "open-interest:BTC-USDT-SWAP",
      "candle15m:BTC-USDT-SWAP"
    ])
    assert.strictEqual(p.symbolOfTopic("funding-rate:BTC-USDT-SWAP"), "BTC-USDT-SWAP")
    assert.deepStrictEqual(JSON.parse(p.subscribe(["tickers:BTC-USDT-SWAP", "mark-price:ETH-USDT-SWAP"], 100)), {
      op: "subscribe",
      args: [
        { channel: "tickers", instId: "BTC-USDT-SWAP" },
        { channel: "mark-price", instId: "ETH-USDT-SWAP" }
      ]
    })
    assert.deepStrictEqual(JSON.parse(p.unsubscribe(["funding-rate:BTC-USDT-SWAP"], 101)), {
      op: "unsubscribe",
      args: [{ channel: "funding-rate", instId: "BTC-USDT-SWAP" }]
    })
    assert.strictEqual(p.ping, "ping")
    // 100 args stay far inside the 64 KB a request may carry.
    const hundred = Array.from({ length: 100 }, (_, n) => `funding-rate:TOKEN${n}XYZ-USDT-SWAP`)
    assert.isBelow(p.subscribe(hundred, 100).length, (64 * 1024) / 8)
  })
})

interface OkxRequest {
  readonly op?: string
  readonly args?: ReadonlyArray<{ readonly channel: string; readonly instId: string }>
}

/** A fake OKX public endpoint: one answer per arg (an error for an unknown instrument), `pong` to `ping`. */
const okxVenue = (unknown: ReadonlySet<string> = new Set()) => {
  const state = { subscribed: new Set<string>() }
  const handler = (frame: unknown) => {
    if (frame === "ping") return "pong"
    const f = frame as OkxRequest
    if (f.op !== "subscribe" && f.op !== "unsubscribe") return undefined
    return (f.args ?? []).map((a) => {
      if (unknown.has(a.instId)) return F.unknownInstrument(a.channel, a.instId)
      const topic = `${a.channel}:${a.instId}`
      if (f.op === "subscribe") state.subscribed.add(topic)
      else state.subscribed.delete(topic)
      return F.subscribed(a.channel, a.instId, f.op as "subscribe" | "unsubscribe")
    })
  }
  return { state, handler }
}

// Concurrent: each test has its own fake venue, board and stream, and spends its time waiting on real timers.
describe.concurrent("OKX market stream against a fake venue", () => {
  it.live("quotes in coins (contracts x ctVal), funding, the forming bar, health up; pings answered", () =>
    Effect.gen(function* () {
      const venue = okxVenue(new Set(["NOPE-USDT-SWAP"]))
      const server = yield* fakeWsServer(venue.handler)
      const board = makeQuoteBoard()
      const instruments = new Map([
        ["BTC-USDT-SWAP", instrument("okx", "BTC-USDT-SWAP", "crypto:bitcoin", { tokensPerContract: 0.01 })],
        ["PEPE-USDT-SWAP", instrument("okx", "PEPE-USDT-SWAP", "crypto:pepe", { tokensPerContract: 10_000_000 })],
        ["NOPE-USDT-SWAP", instrument("okx", "NOPE-USDT-SWAP", "crypto:nope")]
      ])
      const stats = yield* startStream(okxStreamProtocol, server, board, () => instruments)
      assert.isTrue(yield* eventually(() => board.health("okx")?.up === true), "subscribed")
      assert.sameMembers(
        server.connections.map((c) => c.path),
        ["/ws/v5/public", "/ws/v5/business"]
      )
      assert.strictEqual(venue.state.subscribed.size, 10, "5 channels x 2 known swaps")
      assert.isTrue(
        yield* eventually(() => /refused: .*NOPE-USDT-SWAP \(code 60018/.test(board.health("okx")?.detail ?? ""))
      )

      const t = Date.now()
      server.broadcast(F.tickers("BTC-USDT-SWAP", t, { bid: "90010.1", bidSz: "412", ask: "90010.2", askSz: "37" }))
      server.broadcast(
        F.tickers("PEPE-USDT-SWAP", t, { bid: "0.00001050", bidSz: "25", ask: "0.00001051", askSz: "4" })
      )
      server.broadcast(F.markPrice("BTC-USDT-SWAP", t + 1, "90011.4"))
      server.broadcast(
        F.fundingRate("BTC-USDT-SWAP", t + 2, {
          fundingRate: "0.0000815",
          nextFundingRate: "0.0000500",
          fundingTime: 1_773_014_400_000,
          nextFundingTime: 1_773_028_800_000
        })
      )
      assert.isTrue(yield* eventually(() => board.ticker("crypto:bitcoin", "okx")?.fundingRate !== undefined))
      assert.deepStrictEqual(board.quote("crypto:bitcoin", "okx"), {
        t,
        bid: 90010.1,
        bidSize: 4.12,
        ask: 90010.2,
        askSize: 0.37
      })
      const pepe = board.quote("crypto:pepe", "okx")
      assert.strictEqual(pepe?.bidSize, 250_000_000, "25 contracts of 10,000,000 PEPE")
      assert.strictEqual(pepe?.askSize, 40_000_000)
      assert.strictEqual(pepe?.bid, 0.0000105)
      const btc = board.ticker("crypto:bitcoin", "okx")
      assert.strictEqual(btc?.mark, 90011.4)
      assert.strictEqual(btc?.fundingRate, 0.0000815)
      assert.strictEqual(btc?.predictedRate, 0.00005)
      assert.strictEqual(btc?.nextFundingMs, 1_773_014_400_000)
      assert.strictEqual(btc?.intervalMs, 4 * 3_600_000, "from the frame, not the instrument's 8 h")
      assert.isTrue(yield* eventually(() => board.health("okx")?.newestMs === t + 2))

      // The forming 15-minute bar from `candle15m`: prices per coin, volume in coins (contracts x 0.01 BTC).
      const slot = Math.floor(t / (15 * 60_000)) * 15 * 60_000
      server.broadcast(
        F.candle15m("BTC-USDT-SWAP", slot, {
          o: "90000.0",
          h: "90100.5",
          l: "89950.0",
          c: "90010.1",
          vol: "1234",
          volCcy: "12.34",
          volCcyQuote: "1110000"
        })
      )
      assert.isTrue(yield* eventually(() => board.bar("crypto:bitcoin", "okx") !== undefined))
      const bar = board.bar("crypto:bitcoin", "okx")
      assert.deepStrictEqual(
        [bar?.t, bar?.open, bar?.high, bar?.low, bar?.close],
        [slot, 90000, 90100.5, 89950, 90010.1]
      )
      assert.closeTo(bar?.volume ?? 0, 12.34, 1e-9)
      assert.isUndefined(bar?.takerBuyUsd, "OKX candles carry no taker split")

      // The text `ping` every 200 ms here; its `pong` alone keeps the link alive past the 1.5 s silence limit.
      assert.isTrue(yield* eventually(() => server.received.filter((f) => f === "ping").length >= 10))
      assert.isTrue(board.health("okx")?.up)
      assert.strictEqual(stats.connects, 2, "one public and one business connection")
      assert.strictEqual(stats.malformed, 0)
    }).pipe(Effect.scoped)
  )

  it.live("the business endpoint configured apart, or off: candles there, or not streamed at all", () =>
    Effect.gen(function* () {
      const publicVenue = okxVenue()
      const businessVenue = okxVenue()
      const pub = yield* fakeWsServer(publicVenue.handler)
      const business = yield* fakeWsServer(businessVenue.handler)
      const btc = instrument("okx", "BTC-USDT-SWAP", "crypto:bitcoin", { tokensPerContract: 0.01 })
      const run = (businessBaseUrl: string, board: QuoteBoard) =>
        Effect.forkScoped(
          runMarketStream(
            okxStreamProtocol,
            {
              baseUrl: pub.url,
              url: okxTopicUrl(pub.url, businessBaseUrl),
              instruments: () => new Map([["BTC-USDT-SWAP", btc]]),
              timeoutMs: 1_000,
              followEveryMs: 200,
              backoffBaseMs: 50,
              backoffCapMs: 200,
              limits: testLimits
            },
            board
          )
        )
      const apart = makeQuoteBoard()
      const fiber = yield* run(business.url, apart)
      assert.isTrue(yield* eventually(() => apart.health("okx")?.up === true))
      assert.deepStrictEqual(
        business.connections.map((c) => c.path),
        ["/ws/v5/business"]
      )
      assert.deepStrictEqual([...businessVenue.state.subscribed], ["candle15m:BTC-USDT-SWAP"])
      assert.strictEqual(publicVenue.state.subscribed.size, 4)
      yield* Fiber.interrupt(fiber)

      // Off: no business connection, no candle topic; the public channels stream as before.
      const off = makeQuoteBoard()
      const before = business.connections.length
      publicVenue.state.subscribed.clear()
      yield* run("off", off)
      assert.isTrue(yield* eventually(() => off.health("okx")?.up === true && publicVenue.state.subscribed.size === 4))
      assert.strictEqual(business.connections.length, before)
      assert.include(off.health("okx")?.detail ?? "", "streamed over 1 connections (4 topics)")
    }).pipe(Effect.scoped)
  )

  it.live("a delisted swap's five channels are unsubscribed and its state forgotten, without a restart", () =>
    Effect.gen(function* () {
      const venue = okxVenue()
      const server = yield* fakeWsServer(venue.handler)
      const board = makeQuoteBoard()
      const btc = instrument("okx", "BTC-USDT-SWAP", "crypto:bitcoin", { tokensPerContract: 0.01 })
      const eth = instrument("okx", "ETH-USDT-SWAP", "crypto:ethereum", { tokensPerContract: 0.1 })
      let current: ReadonlyMap<string, typeof btc> = new Map([
        ["BTC-USDT-SWAP", btc],
        ["ETH-USDT-SWAP", eth]
      ])
      const stats = yield* startStream(okxStreamProtocol, server, board, () => current)
      assert.isTrue(yield* eventually(() => board.health("okx")?.up === true && venue.state.subscribed.size === 10))
      server.broadcast(
        F.tickers("ETH-USDT-SWAP", Date.now(), { bid: "3000.1", bidSz: "10", ask: "3000.2", askSz: "20" })
      )
      assert.isTrue(yield* eventually(() => board.quote("crypto:ethereum", "okx")?.bidSize === 1))
      current = new Map([["BTC-USDT-SWAP", btc]])
      assert.isTrue(yield* eventually(() => venue.state.subscribed.size === 5), "unsubscribed by per-arg answers")
      assert.isTrue(yield* eventually(() => board.quote("crypto:ethereum", "okx") === undefined))
      assert.isTrue(board.health("okx")?.up)
      assert.strictEqual(stats.connects, 2)
    }).pipe(Effect.scoped)
  )
})
