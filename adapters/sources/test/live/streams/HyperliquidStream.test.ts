/**
 * Hyperliquid websocket market stream (`venues/hyperliquid/Stream.ts`): the reader against frames in the
 * documented shapes (Hyperliquid docs, "Websocket / Subscriptions": `WsBbo`, `WsActiveAssetCtx` with the perpetual
 * context, the `subscriptionResponse` answer; "Websocket / Timeouts and heartbeats": ping and pong; the `error`
 * channel's texts as the venue words them; values invented), then the shared connection manager
 * (`stream/MarketStream.ts`) against a local fake Hyperliquid (the `ws` package): one subscription per message,
 * answered by echo; quotes and open interest in canonical units (`kPEPE`: 1,000 PEPE a unit), health up, an unknown
 * coin refused by name while the others stream. Hyperliquid's streams are not in the recorded data.
 *
 * Real time with short limits; conditions are awaited, never slept on.
 */
import { assert, describe, it } from "@effect/vitest"
import { makeQuoteBoard, withQuoteBoard } from "@market-data/core"
import { makeMemoryMarketStore } from "@market-data/memory"
import { Effect } from "effect"
import { Malformed } from "../../../src/live/Parse.ts"
import {
  hyperliquidStreamProtocol,
  makeHyperliquidStreamProtocol
} from "../../../src/live/venues/hyperliquid/Stream.ts"
import { eventually } from "../FakeServer.ts"
import { fakeWsServer } from "../FakeWsServer.ts"
import { instrument, recordingSink, startStream } from "./StreamHarness.ts"

const HOUR = 3_600_000
const T = 1_773_001_234_567
const NEXT_HOUR = 1_773_003_600_000

/** `WsBbo` on the `bbo` channel: `[best bid, best ask]`, each `WsLevel` or null. */
const bbo = (coin: string, time: number, bid: [string, string] | null, ask: [string, string] | null) => ({
  channel: "bbo",
  data: {
    coin,
    time,
    bbo: [
      bid === null ? null : { px: bid[0], sz: bid[1], n: 4 },
      ask === null ? null : { px: ask[0], sz: ask[1], n: 2 }
    ]
  }
})

/** `WsActiveAssetCtx` on the `activeAssetCtx` channel, with a perpetual's context. */
const assetCtx = (coin: string, ctx: { markPx: string; oraclePx: string; funding: string; openInterest: string }) => ({
  channel: "activeAssetCtx",
  data: {
    coin,
    ctx: {
      dayNtlVlm: "1234567890.12",
      prevDayPx: ctx.markPx,
      markPx: ctx.markPx,
      midPx: ctx.markPx,
      impactPxs: [ctx.markPx, ctx.markPx],
      funding: ctx.funding,
      openInterest: ctx.openInterest,
      oraclePx: ctx.oraclePx,
      premium: "0.00012",
      dayBaseVlm: "13579.2"
    }
  }
})

const json = (v: unknown) => JSON.stringify(v)

describe("Hyperliquid stream reader", () => {
  it("bbo gives the quote at the block time in venue units; a null side gives none", () => {
    const { quotes, sink } = recordingSink()
    const reader = hyperliquidStreamProtocol.reader()
    assert.deepStrictEqual(reader.read(json(bbo("BTC", T, ["90010.0", "1.25"], ["90011.0", "0.5"])), sink), {
      kind: "data"
    })
    // kPEPE quotes 1,000 PEPE a unit: passed as sent (the manager converts).
    reader.read(json(bbo("kPEPE", T + 1, ["0.010500", "120000"], ["0.010510", "90000"])), sink)
    assert.deepStrictEqual(quotes, [
      ["BTC", T, 90010, 1.25, 90011, 0.5],
      ["kPEPE", T + 1, 0.0105, 120000, 0.01051, 90000]
    ])
    assert.deepStrictEqual(reader.read(json(bbo("THIN", T, null, ["1.5", "10"])), sink), { kind: "data" })
    assert.strictEqual(quotes.length, 2)
  })

  it("activeAssetCtx gives mark, oracle (index), the hourly funding settling on the hour, and open interest in coins", () => {
    const { tickers, sink } = recordingSink()
    const reader = makeHyperliquidStreamProtocol(() => T).reader()
    reader.read(
      json(assetCtx("BTC", { markPx: "90012.0", oraclePx: "90020.0", funding: "0.0000125", openInterest: "25000.5" })),
      sink
    )
    assert.deepStrictEqual(tickers, [
      [
        "BTC",
        T,
        {
          mark: 90012,
          index: 90020,
          fundingRate: 0.0000125,
          nextFundingMs: NEXT_HOUR,
          intervalMs: HOUR,
          oiQuantity: 25000.5 / 2
        }
      ]
    ])
    // The documented types are numbers; the venue sends strings: both read.
    const numeric = assetCtx("ETH", { markPx: "0", oraclePx: "0", funding: "0", openInterest: "0" })
    Object.assign(numeric.data.ctx, { markPx: 3000.5, oraclePx: 3001, funding: -0.00001, openInterest: 120000 })
    reader.read(json(numeric), sink)
    assert.deepStrictEqual(tickers[1]?.[2], {
      mark: 3000.5,
      index: 3001,
      fundingRate: -0.00001,
      nextFundingMs: NEXT_HOUR,
      intervalMs: HOUR,
      oiQuantity: 120000 / 2
    })
  })

  it("subscription responses acknowledge by topic; errors refuse the subscription they name; pong", () => {
    const { sink } = recordingSink()
    const reader = hyperliquidStreamProtocol.reader()
    const response = (method: string, subscription: unknown) =>
      json({ channel: "subscriptionResponse", data: { method, subscription } })
    assert.deepStrictEqual(reader.read(response("subscribe", { type: "bbo", coin: "BTC" }), sink), {
      kind: "ack",
      topics: ["bbo:BTC"]
    })
    assert.deepStrictEqual(reader.read(response("unsubscribe", { type: "activeAssetCtx", coin: "kPEPE" }), sink), {
      kind: "ack",
      topics: ["activeAssetCtx:kPEPE"]
    })
    const error = (data: string) => json({ channel: "error", data })
    assert.deepStrictEqual(reader.read(error('Invalid subscription {"type":"bbo","coin":"NOPE"}'), sink), {
      kind: "refused",
      topics: ["bbo:NOPE"],
      message: 'Invalid subscription {"type":"bbo","coin":"NOPE"}'
    })
    const parse =
      'Error parsing JSON into valid websocket request: {"method":"subscribe","subscription":{"type":"activeAssetCtx","coin":"X"}}'
    assert.deepStrictEqual(reader.read(error(parse), sink), {
      kind: "refused",
      topics: ["activeAssetCtx:X"],
      message: parse
    })
    // The wanted state holds: an acknowledgement.
    assert.deepStrictEqual(reader.read(error('Already subscribed: {"type":"bbo","coin":"BTC"}'), sink), {
      kind: "ack",
      topics: ["bbo:BTC"]
    })
    // The per-IP caps' errors name no subscription: refusals of nothing.
    for (const capped of [
      "Cannot subscribe to more than 1000 channels.",
      "Cannot send more than 2000 messages per minute."
    ])
      assert.deepStrictEqual(reader.read(error(capped), sink), { kind: "refused", topics: undefined, message: capped })
    assert.deepStrictEqual(reader.read('{"channel":"pong"}', sink), { kind: "pong" })
    assert.deepStrictEqual(reader.read('{"channel":"trades","data":[]}', sink), { kind: "other" })
  })

  it("frames not in the documented format throw Malformed", () => {
    const { sink } = recordingSink()
    const reader = hyperliquidStreamProtocol.reader()
    const bad = (frame: unknown) => assert.throws(() => reader.read(json(frame), sink), Malformed)
    bad({ channel: "bbo", data: { coin: "BTC", time: T, bbo: [{ px: "1", sz: "1", n: 1 }] } })
    bad(bbo("BTC", T, ["90010.0", "lots"], ["90011.0", "0.5"]))
    bad({ ...bbo("BTC", T, ["1", "1"], ["2", "1"]), data: { coin: "BTC", bbo: [null, null] } })
    const noFunding = assetCtx("BTC", { markPx: "1", oraclePx: "1", funding: "1", openInterest: "1" })
    bad({ ...noFunding, data: { ...noFunding.data, ctx: { ...noFunding.data.ctx, funding: undefined } } })
    bad({ channel: "subscriptionResponse", data: { method: "subscribe" } })
    bad({ data: {} })
    assert.throws(() => reader.read("Websocket connection", sink))
    // The plain-text greeting on connect is nothing, not a malformed frame.
    assert.deepStrictEqual(reader.read("Websocket connection established.", sink), { kind: "other" })
  })

  it("one subscription per message on /ws, `<type>:<coin>` topics; ping is {method: ping}", () => {
    const p = hyperliquidStreamProtocol
    assert.strictEqual(p.url("wss://api.hyperliquid.xyz", "bbo:BTC"), "wss://api.hyperliquid.xyz/ws")
    assert.deepStrictEqual(p.symbolTopics("kPEPE"), ["bbo:kPEPE", "activeAssetCtx:kPEPE"])
    assert.strictEqual(p.symbolOfTopic("activeAssetCtx:kPEPE"), "kPEPE")
    assert.strictEqual(p.symbolOfTopic("bbo:xyz:TSLA"), "xyz:TSLA", "a HIP-3 coin keeps its dex prefix")
    assert.deepStrictEqual(JSON.parse(p.subscribe(["bbo:BTC"], 100)), {
      method: "subscribe",
      subscription: { type: "bbo", coin: "BTC" }
    })
    assert.deepStrictEqual(JSON.parse(p.unsubscribe(["activeAssetCtx:xyz:TSLA"], 101)), {
      method: "unsubscribe",
      subscription: { type: "activeAssetCtx", coin: "xyz:TSLA" }
    })
    assert.throws(() => p.subscribe(["bbo:BTC", "bbo:ETH"], 102), /one subscription per message/)
    assert.strictEqual(p.limits.topicsPerMessage, 1)
    assert.deepStrictEqual(JSON.parse(p.ping ?? ""), { method: "ping" })
  })

  it("the 15-minute candle only for the coins Hyperliquid is the primary of; its pushes are the forming bar", () => {
    const p = hyperliquidStreamProtocol
    const primary = { ...instrument("hyperliquid", "HYPE", "crypto:hyperliquid"), primary: true }
    const other = { ...instrument("hyperliquid", "BTC", "crypto:bitcoin"), primary: false }
    assert.deepStrictEqual(p.symbolTopics("HYPE", primary), ["bbo:HYPE", "activeAssetCtx:HYPE", "candle:HYPE"])
    assert.deepStrictEqual(p.symbolTopics("BTC", other), ["bbo:BTC", "activeAssetCtx:BTC"])
    assert.deepStrictEqual(JSON.parse(p.subscribe(["candle:HYPE"], 103)), {
      method: "subscribe",
      subscription: { type: "candle", coin: "HYPE", interval: "15m" }
    })
    // The venue echoes the subscription with its interval: acknowledged by topic.
    const reader = p.reader()
    const { sink } = recordingSink()
    assert.deepStrictEqual(
      reader.read(
        json({
          channel: "subscriptionResponse",
          data: { method: "subscribe", subscription: { type: "candle", coin: "HYPE", interval: "15m" } }
        }),
        sink
      ),
      { kind: "ack", topics: ["candle:HYPE"] }
    )
    const bars: Array<readonly [string, number, unknown]> = []
    const barSink = { ...sink, bar: (s: string, t: number, b: unknown) => void bars.push([s, t, b]) }
    const open = 1_773_000_900_000
    const candle = { t: open, T: open + 899_999, s: "HYPE", i: "15m", o: "41.2", c: "41.5", h: "41.9", l: "41.0" }
    assert.deepStrictEqual(
      reader.read(json({ channel: "candle", data: { ...candle, v: "1234.5", n: 321 } }), barSink),
      {
        kind: "data"
      }
    )
    // An array of candles (as some revisions of the page show the data) is read candle by candle.
    reader.read(json({ channel: "candle", data: [{ ...candle, c: "41.6", v: "1300", n: 330 }] }), barSink)
    assert.deepStrictEqual(bars, [
      ["HYPE", open, { openMs: open, open: 41.2, high: 41.9, low: 41, close: 41.5, volume: 1234.5 }],
      ["HYPE", open, { openMs: open, open: 41.2, high: 41.9, low: 41, close: 41.6, volume: 1300 }]
    ])
    // The next bar's first push closes this one as last pushed (pushes come in trade order); an older push is
    // ignored.
    const next = { ...candle, t: open + 900_000, T: open + 1_799_999, o: "41.6", h: "41.7", l: "41.6", c: "41.7" }
    reader.read(json({ channel: "candle", data: { ...next, v: "5", n: 2 } }), barSink)
    reader.read(json({ channel: "candle", data: { ...candle, v: "1", n: 1 } }), barSink)
    assert.deepStrictEqual(bars.slice(2), [
      ["HYPE", open, { openMs: open, open: 41.2, high: 41.9, low: 41, close: 41.6, volume: 1300, closed: true }],
      ["HYPE", open + 900_000, { openMs: open + 900_000, open: 41.6, high: 41.7, low: 41.6, close: 41.7, volume: 5 }]
    ])
    assert.isTrue(p.closedBars)
    assert.throws(
      () => reader.read(json({ channel: "candle", data: { ...candle, t: open + 1_800_000, o: "x", v: "1" } }), barSink),
      Malformed
    )
  })
})

interface HlRequest {
  readonly method?: string
  readonly subscription?: { readonly type: string; readonly coin: string }
}

/** A fake Hyperliquid `/ws`: echoes each (un)subscription, refuses unknown coins, answers `ping`. */
const hyperliquidVenue = (unknown: ReadonlySet<string> = new Set()) => {
  const state = { subscribed: new Set<string>(), requests: [] as HlRequest[] }
  const handler = (frame: unknown) => {
    const f = frame as HlRequest
    if (f.method === "ping") return { channel: "pong" }
    if (f.method !== "subscribe" && f.method !== "unsubscribe") return undefined
    state.requests.push(f)
    const s = f.subscription
    if (s === undefined)
      return { channel: "error", data: `Error parsing JSON into valid websocket request: ${json(f)}` }
    if (unknown.has(s.coin)) return { channel: "error", data: `Invalid subscription ${json(s)}` }
    if (f.method === "subscribe") state.subscribed.add(`${s.type}:${s.coin}`)
    else state.subscribed.delete(`${s.type}:${s.coin}`)
    return { channel: "subscriptionResponse", data: { method: f.method, subscription: s } }
  }
  return { state, handler }
}

// Concurrent: each test has its own fake venue, board and stream, and spends its time waiting on real timers.
describe.concurrent("Hyperliquid market stream against a fake venue", () => {
  it.live("subscribes one by one, streams quotes and open interest in canonical units, health up, pings answered", () =>
    Effect.gen(function* () {
      const venue = hyperliquidVenue(new Set(["NOPE"]))
      const server = yield* fakeWsServer(venue.handler)
      const board = makeQuoteBoard()
      const instruments = new Map([
        ["BTC", instrument("hyperliquid", "BTC", "crypto:bitcoin", { fundingIntervalMs: HOUR })],
        ["kPEPE", instrument("hyperliquid", "kPEPE", "crypto:pepe", { tokensPerUnit: 1000, fundingIntervalMs: HOUR })],
        ["NOPE", instrument("hyperliquid", "NOPE", "crypto:nope", { fundingIntervalMs: HOUR })]
      ])
      const stats = yield* startStream(hyperliquidStreamProtocol, server, board, () => instruments)
      assert.isTrue(yield* eventually(() => board.health("hyperliquid")?.up === true), "subscribed")
      assert.deepStrictEqual(
        server.connections.map((c) => c.path),
        ["/ws"]
      )
      assert.strictEqual(venue.state.requests.length, 6, "one message per subscription")
      assert.sameMembers(
        [...venue.state.subscribed],
        ["bbo:BTC", "activeAssetCtx:BTC", "bbo:kPEPE", "activeAssetCtx:kPEPE"]
      )
      assert.isTrue(
        yield* eventually(() =>
          /refused: .*bbo:NOPE \(Invalid subscription/.test(board.health("hyperliquid")?.detail ?? "")
        )
      )

      const t = Date.now()
      server.broadcast(bbo("BTC", t, ["90010.0", "1.25"], ["90011.0", "0.5"]))
      server.broadcast(bbo("kPEPE", t, ["0.010500", "120000"], ["0.010510", "90000"]))
      server.broadcast(
        assetCtx("kPEPE", { markPx: "0.010505", oraclePx: "0.010507", funding: "0.0000125", openInterest: "4000000" })
      )
      assert.isTrue(yield* eventually(() => board.ticker("crypto:pepe", "hyperliquid") !== undefined))
      assert.isTrue(yield* eventually(() => board.quote("crypto:pepe", "hyperliquid") !== undefined))
      assert.deepStrictEqual(board.quote("crypto:bitcoin", "hyperliquid"), {
        t,
        bid: 90010,
        bidSize: 1.25,
        ask: 90011,
        askSize: 0.5
      })
      const pepe = board.quote("crypto:pepe", "hyperliquid")
      assert.closeTo(pepe?.bid ?? 0, 0.0000105, 1e-15)
      assert.strictEqual(pepe?.bidSize, 120_000_000, "120,000 kPEPE = 120,000,000 PEPE")
      const ctx = board.ticker("crypto:pepe", "hyperliquid")
      assert.closeTo(ctx?.mark ?? 0, 0.000010505, 1e-15)
      assert.closeTo(ctx?.index ?? 0, 0.000010507, 1e-15)
      // 4,000,000 kPEPE x 0.010505 USDC a kPEPE.
      // openInterest counts both sides (Rest.ts, HYPERLIQUID_OI_SIDES): one side is half of it.
      assert.closeTo(ctx?.oiUsd ?? 0, 21_010, 1e-6)
      // What `open_interest` answers for the venue (`withQuoteBoard`): that one side, as of the venue's event time.
      const answered = withQuoteBoard(makeMemoryMarketStore(), board).streamedOpenInterest?.("crypto:pepe")
      assert.strictEqual(answered?.length, 1)
      assert.closeTo(answered?.[0]?.usd ?? 0, 21_010, 1e-6)
      assert.deepStrictEqual(
        [
          answered?.[0]?.venue,
          answered?.[0]?.t,
          answered?.[0]?.status.newestMs === board.health("hyperliquid")?.newestMs
        ],
        ["hyperliquid", ctx?.t, true]
      )
      assert.strictEqual(ctx?.fundingRate, 0.0000125)
      assert.strictEqual(ctx?.intervalMs, HOUR)
      assert.strictEqual((ctx?.nextFundingMs ?? 0) % HOUR, 0, "settles on the hour")
      assert.isAbove(ctx?.nextFundingMs ?? 0, t)

      // `{"method":"ping"}` every 200 ms here; `{"channel":"pong"}` alone keeps the link past the 1.5 s limit.
      assert.isTrue(
        yield* eventually(() => server.received.filter((f) => (f as HlRequest).method === "ping").length >= 10)
      )
      assert.isTrue(board.health("hyperliquid")?.up)
      assert.strictEqual(stats.connects, 1)
      assert.strictEqual(stats.malformed, 0)
    }).pipe(Effect.scoped)
  )

  it.live("a dropped connection resubscribes every topic, one message each, and streams again", () =>
    Effect.gen(function* () {
      const venue = hyperliquidVenue()
      const server = yield* fakeWsServer(venue.handler)
      const board = makeQuoteBoard()
      const instruments = new Map([
        ["BTC", instrument("hyperliquid", "BTC", "crypto:bitcoin", { fundingIntervalMs: HOUR })]
      ])
      // The venue's pace is a connect every 5 s (`connectsPerSecond` 0.2, inside 30 a minute per IP): faster here.
      assert.strictEqual(hyperliquidStreamProtocol.limits.connectsPerSecond, 0.2)
      yield* startStream(hyperliquidStreamProtocol, server, board, () => instruments, { connectsPerSecond: 20 })
      assert.isTrue(yield* eventually(() => board.health("hyperliquid")?.up === true))
      server.dropAll()
      assert.isTrue(yield* eventually(() => board.health("hyperliquid")?.up === false), "down after the drop")
      assert.isTrue(yield* eventually(() => board.health("hyperliquid")?.up === true), "up again")
      assert.strictEqual(venue.state.requests.filter((r) => r.method === "subscribe").length, 4)
      const t = Date.now()
      server.broadcast(bbo("BTC", t, ["91000.0", "2"], ["91001.0", "3"]))
      assert.isTrue(yield* eventually(() => board.quote("crypto:bitcoin", "hyperliquid")?.t === t))
    }).pipe(Effect.scoped)
  )
})
