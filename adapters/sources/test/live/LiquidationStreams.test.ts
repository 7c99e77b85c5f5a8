/**
 * Live liquidations over websockets (Binance `!forceOrder@arr`, Bybit `allLiquidation.<symbol>`, OKX
 * `liquidation-orders`), run over the shared connection manager against local `ws` servers replaying messages in
 * the venues' documented formats (`../fixtures/liquidation_streams.ts`): events land in the store as USD sums per
 * one-minute bucket and side, through to the `liquidations` operation; messages that are not the documented format
 * are skipped whole; the manager's faults (a dropped connection, a silent one, a refused subscription) are typed,
 * recorded statuses, never a crash, and the stream resumes without counting anything twice; keep-alives are sent
 * and answered; the venues' own ping frames are answered.
 *
 * The stream runs on the TestClock (its flushes, keep-alives and reconnect delays are moved on by the test in small
 * steps while real I/O happens), over real local sockets. The stream tests run concurrently (`describe.concurrent`):
 * each has its own TestClock, server, store and stream, and spends its time waiting on real I/O.
 */
import { assert, describe, it } from "@effect/vitest"
import { CryptoAssets, freshnessOf, MarketStore, type SourceStatus } from "@market-data/core"
import { ConfigProvider, Effect } from "effect"
import { TestClock } from "effect/testing"
import { makeCryptoPlane } from "../../../../core/src/crypto/CryptoPlane.ts"
import { callPlanes } from "../../../../core/test/support/PlaneCall.ts"
import { makeMemoryMarketStore } from "../../../memory/src/MemoryMarketStore.ts"
import { liveConfig, loadLiveConfig, validateLiveConfig } from "../../src/live/LiveConfig.ts"
import { followInstruments, liquidationStreams } from "../../src/live/LiveFeeds.ts"
import {
  type LiquidationProtocol,
  type LiquidationStreamOptions,
  runLiquidationStream
} from "../../src/live/stream/Liquidation.ts"
import type { Instrument } from "../../src/live/Venue.ts"
import { binanceLiquidationProtocol as binanceProtocol } from "../../src/live/venues/binance/Liquidations.ts"
import { bybitLiquidationProtocol as bybitProtocol } from "../../src/live/venues/bybit/Liquidations.ts"
import { okxLiquidationProtocol as okxProtocol } from "../../src/live/venues/okx/Liquidations.ts"
import * as F from "../fixtures/liquidation_streams.ts"
import { eventually, realPause } from "./FakeServer.ts"
import { fakeWsServer } from "./FakeWsServer.ts"
import { instrument } from "./streams/StreamHarness.ts"

const T0 = F.T0
const MIN = 60_000

const bybitSymbols = new Map([
  ["BTCUSDT", "crypto:bitcoin"],
  ["ETHUSDT", "crypto:ethereum"],
  ["1000PEPEUSDT", "crypto:pepe"]
])

interface Frame {
  readonly op?: string
  readonly req_id?: string
  readonly args?: ReadonlyArray<string>
  readonly method?: string
  readonly params?: ReadonlyArray<string>
  readonly id?: number
}

/**
 * A Bybit public linear endpoint: subscriptions answered (a request naming a refused symbol is refused whole, as
 * Bybit refuses a request), pings answered while `pong.on`.
 */
const bybitVenue = (refuse: Set<string>, pong: { on: boolean }) => (frame: unknown) => {
  const f = frame as Frame
  if (f.op === "subscribe") {
    const refused = (f.args ?? []).find((topic) => refuse.has(topic.split(".")[1] ?? ""))
    return refused !== undefined ? F.bybitRefused(f.req_id ?? "", refused) : F.bybitSubscribed(f.req_id ?? "")
  }
  if (f.op === "ping") return pong.on ? F.bybitPong : undefined
  return undefined
}

/** A Binance combined-stream endpoint: `SUBSCRIBE` answered (or refused), `LIST_SUBSCRIPTIONS` answered. */
const binanceVenue = (refuse: { on: boolean }) => (frame: unknown) => {
  const f = frame as Frame
  if (f.method === "SUBSCRIBE") return { ...(refuse.on ? F.binanceRefused : F.binanceSubscribed), id: f.id }
  if (f.method === "LIST_SUBSCRIPTIONS") return { ...F.binanceSubscriptions, id: f.id }
  return undefined
}

/** The symbols as the stream follows them: instruments of one contract per unit (the same map while unchanged). */
const instrumentsOf = (
  venue: LiquidationProtocol["venue"],
  symbols: ReadonlyMap<string, string> | (() => ReadonlyMap<string, string>),
  units: Readonly<Record<string, number>> = {}
): (() => ReadonlyMap<string, Instrument>) => {
  let seen: ReadonlyMap<string, string> | undefined
  let map: ReadonlyMap<string, Instrument> = new Map()
  return () => {
    const now = typeof symbols === "function" ? symbols() : symbols
    if (now !== seen) {
      seen = now
      map = new Map(
        [...now].map(([symbol, assetId]) => [
          symbol,
          instrument(venue, symbol, assetId, { tokensPerContract: units[symbol] ?? 1 })
        ])
      )
    }
    return map
  }
}

const setup = (
  protocol: LiquidationProtocol,
  handler: (frame: unknown) => unknown,
  symbols: ReadonlyMap<string, string> | (() => ReadonlyMap<string, string>),
  extra: Partial<LiquidationStreamOptions> & { readonly units?: Readonly<Record<string, number>> } = {}
) =>
  Effect.gen(function* () {
    yield* TestClock.setTime(F.NOW_MS)
    const store = makeMemoryMarketStore()
    const server = yield* fakeWsServer(handler)
    const { units, ...options } = extra
    yield* Effect.forkScoped(
      runLiquidationStream(protocol, {
        baseUrl: server.url,
        instruments: instrumentsOf(protocol.venue, symbols, units),
        timeoutMs: 5_000,
        flushEveryMs: 1_000,
        ...options,
        stream: { backoffBaseMs: 1_000, followEveryMs: 1_000, ...options.stream }
      }).pipe(Effect.provideService(MarketStore, store))
    )
    const status = Effect.map(
      store.status,
      (all) => all.find((s) => s.venue === protocol.venue && s.component === "liquidations") as SourceStatus | undefined
    )
    /** The stored rows of an asset as `[t - T0 in minutes, longUsd, shortUsd]`. */
    const rows = (assetId: string) =>
      Effect.map(
        store.read("liquidations", { assetId, venue: protocol.venue, fromMs: 0, toMs: T0 + 86_400_000 }),
        (series) => {
          const s = series[0]
          if (s === undefined) return []
          return Array.from(s.t, (t, i) => [(t - T0) / MIN, s.longUsd[i] as number, s.shortUsd[i] as number])
        }
      )
    /** Moves the clock on in small steps while real I/O happens, until `condition` holds (about 8 s real at most). */
    const until = (condition: Effect.Effect<boolean>, stepMs = 200) =>
      Effect.gen(function* () {
        for (let i = 0; i < 400; i++) {
          if (yield* condition) return true
          yield* TestClock.adjust(stepMs)
          yield* realPause(20)
        }
        return false
      })
    const live = Effect.map(status, (s) => s !== undefined && !s.failing)
    const failing = Effect.map(status, (s) => s?.failing === true)
    /** Moves the clock on by `ms` in steps of `stepMs`, letting keep-alives and their answers travel meanwhile. */
    const advance = (ms: number, stepMs = 1_000) =>
      Effect.gen(function* () {
        for (let left = ms; left > 0; left -= stepMs) {
          yield* TestClock.adjust(Math.min(stepMs, left))
          yield* realPause(10)
        }
      })
    return { store, server, status, rows, until, live, failing, advance }
  })

const close = (actual: ReadonlyArray<ReadonlyArray<number>>, expected: ReadonlyArray<ReadonlyArray<number>>) => {
  assert.strictEqual(actual.length, expected.length, `rows ${JSON.stringify(actual)}`)
  actual.forEach((row, i) => {
    row.forEach((v, j) => {
      assert.closeTo(v, (expected[i] as ReadonlyArray<number>)[j] as number, 1e-6, `row ${i}`)
    })
  })
}

/** Ten days of flat 15-minute bars on the primary venue, and hourly Bybit liquidations until 25 hours before T0. */
const seedHistory = (store: MarketStore["Service"], assetId: string) =>
  Effect.gen(function* () {
    const venue = CryptoAssets.find((a) => a.id === assetId)?.listings[0]?.venue ?? "binance"
    const bars = Array.from({ length: 10 * 96 + 1 }, (_, i) => T0 - 10 * 86_400_000 + i * 15 * MIN)
    const hours = Array.from({ length: 9 * 24 - 1 }, (_, i) => T0 - 10 * 86_400_000 + i * 3_600_000)
    yield* store.write([
      {
        kind: "bars",
        assetId,
        venue,
        t: bars,
        open: bars.map(() => 91_000),
        high: bars.map(() => 91_100),
        low: bars.map(() => 90_900),
        close: bars.map(() => 91_000),
        volume: bars.map(() => 100)
      },
      {
        kind: "liquidations",
        assetId,
        venue: "bybit",
        t: hours,
        longUsd: hours.map((_, i) => 1_000 + (i % 7) * 100),
        shortUsd: hours.map((_, i) => 800 + (i % 5) * 100)
      }
    ])
  })

/** The `liquidations` operation's answer for one asset, as the HTTP and MCP transports would serve it. */
const liquidationsAnswer = (store: MarketStore["Service"], id: string, nowMs: number) =>
  Effect.gen(function* () {
    const plane = yield* makeCryptoPlane.pipe(Effect.provideService(MarketStore, store))
    return (yield* callPlanes([plane], "liquidations", [["id", id]], nowMs)) as { body: { data: unknown } }
  })

describe.concurrent("Bybit allLiquidation stream", () => {
  it.effect("sums prints into one-minute buckets per side, skips malformed messages whole, answers liquidations", () =>
    Effect.gen(function* () {
      const t = yield* setup(bybitProtocol, bybitVenue(new Set(), { on: true }), bybitSymbols)
      assert.isTrue(yield* t.until(t.live), "subscribed")
      assert.strictEqual(t.server.connections[0]?.path, "/v5/public/linear")
      const subs = t.server.received.filter((f) => (f as Frame).op === "subscribe") as Array<Frame>
      assert.strictEqual(subs.length, 1, "the symbols subscribed in one request")
      assert.sameMembers(
        [...(subs[0]?.args ?? [])],
        ["allLiquidation.BTCUSDT", "allLiquidation.ETHUSDT", "allLiquidation.1000PEPEUSDT"]
      )

      t.server.broadcast(F.bybitBtc)
      for (const bad of F.bybitBad) t.server.broadcast(bad)
      t.server.broadcast(F.bybitPepe)
      t.server.broadcast(F.bybitBtcNextMinute)
      assert.isTrue(yield* t.until(Effect.map(t.rows("crypto:bitcoin"), (r) => r.length === 2)))
      // 12:00: long 0.25 x 91,020, short 0.1 x 91,030; 12:01: long 0.05 x 90,800. Nothing of the bad messages.
      close(yield* t.rows("crypto:bitcoin"), [
        [0, 22_755, 9_103],
        [1, 4_540, 0]
      ])
      close(yield* t.rows("crypto:pepe"), [[0, 500.8, 0]])
      // A connected stream with nothing for ETH: a zero row at the 15-minute boundary ("no liquidations").
      close(yield* t.rows("crypto:ethereum"), [[0, 0, 0]])

      // Writing the buckets again (every flush) never counts twice.
      yield* t.advance(5_000)
      close(yield* t.rows("crypto:bitcoin"), [
        [0, 22_755, 9_103],
        [1, 4_540, 0]
      ])

      // The heartbeat keeps the component live and names the skipped messages.
      yield* t.advance(60_000)
      assert.isTrue(
        yield* eventually(() => Effect.map(t.status, (st) => (st?.detail ?? "").includes("malformed messages skipped")))
      )
      const s = (yield* t.status) as SourceStatus
      assert.isFalse(s.failing)
      assert.strictEqual(freshnessOf(s, F.NOW_MS + 70_000), "live")
      assert.include(s.detail ?? "", `${F.bybitBad.length} malformed messages skipped`)

      // Through the crypto plane: Bybit's is the only venue with liquidations here. The percentiles need a history:
      // ten days of bars on the asset's primary venue and hourly liquidation rows ending 25 hours before (outside
      // the 24 hours the answer sums, so the total is the stream's alone).
      yield* seedHistory(t.store, "crypto:bitcoin")
      const out = yield* liquidationsAnswer(t.store, "crypto:bitcoin", T0 + 5 * MIN)
      const text = JSON.stringify(out.body.data)
      const total = 22_755 + 9_103 + 4_540
      const data = out.body.data as {
        readonly status: string
        readonly total_24h_usd: { readonly value: number; readonly pctl: number } | null
        readonly liq_imbalance_24h: { readonly value: number } | null
      }
      assert.strictEqual(data.status, "live", text)
      assert.closeTo(data.total_24h_usd?.value ?? Number.NaN, total, 0.01, text)
      assert.closeTo(data.liq_imbalance_24h?.value ?? Number.NaN, (22_755 + 4_540 - 9_103) / total, 1e-6, text)
      assert.isNumber(data.total_24h_usd?.pctl, "ranked against its history")
    }).pipe(Effect.scoped)
  )

  it.effect("reconnects after the server drops it, resumes, and never double counts a bucket", () =>
    Effect.gen(function* () {
      const t = yield* setup(bybitProtocol, bybitVenue(new Set(), { on: true }), bybitSymbols)
      assert.isTrue(yield* t.until(t.live))
      t.server.broadcast(F.bybitBtc)
      assert.isTrue(yield* t.until(Effect.map(t.rows("crypto:bitcoin"), (r) => r.length === 1 && r[0]?.[1] !== 0)))

      t.server.dropAll()
      assert.isTrue(yield* t.until(t.failing, 10), "a dropped connection marks the component failing")
      const down = (yield* t.status) as SourceStatus
      assert.include(down.lastError ?? "", "connection closed")
      assert.strictEqual(freshnessOf(down, F.NOW_MS + 1_000), "stale")

      // Reconnect with backoff (1 s base here, with jitter), resubscribe, resume.
      assert.isTrue(yield* t.until(Effect.map(t.live, (l) => l && t.server.connections.length === 2)))
      assert.strictEqual(t.server.received.filter((f) => (f as Frame).op === "subscribe").length, 2)
      t.server.broadcast(F.bybitBtcAfterReconnect)
      assert.isTrue(
        yield* t.until(Effect.map(t.rows("crypto:bitcoin"), (r) => Math.abs((r[0]?.[2] ?? 0) - 10_923) < 1e-6))
      )
      close(yield* t.rows("crypto:bitcoin"), [[0, 22_755, 9_103 + 1_820]])
    }).pipe(Effect.scoped)
  )

  it.effect("sends a ping every 20 s; a connection silent for 30 s (pings unanswered) is reopened", () =>
    Effect.gen(function* () {
      const pong = { on: true }
      const t = yield* setup(bybitProtocol, bybitVenue(new Set(), pong), bybitSymbols)
      assert.isTrue(yield* t.until(t.live))
      const pings = () => t.server.received.filter((f) => (f as Frame).op === "ping").length
      // Each ping is answered; the answer travels back while the clock moves on in steps (real time).
      yield* t.advance(20_000)
      assert.isTrue(yield* eventually(() => pings() >= 1))
      yield* t.advance(20_000)
      assert.isTrue(yield* eventually(() => pings() >= 2))
      yield* t.advance(20_000)
      assert.isTrue(yield* t.live, "answered pings keep the stream up")
      assert.strictEqual(t.server.connections.length, 1)

      // Half-open: the venue stops answering (no frames, no close): dead after 30 s of silence, reopened.
      pong.on = false
      assert.isTrue(yield* t.until(t.failing, 500))
      assert.match((yield* t.status)?.lastError ?? "", /^timeout: .*no frame for 30000 ms \(half-open link\)/)
      pong.on = true
      assert.isTrue(yield* t.until(Effect.map(t.live, (l) => l && t.server.connections.length === 2)))
    }).pipe(Effect.scoped)
  )

  it.effect("a refused symbol is named while the others flow; every symbol refused is a recorded error", () =>
    Effect.gen(function* () {
      const refuse = new Set(["ETHUSDT"])
      const t = yield* setup(bybitProtocol, bybitVenue(refuse, { on: true }), bybitSymbols, {
        stream: { refusedRetryMs: 10_000 }
      })
      assert.isTrue(yield* t.until(t.live))
      assert.include(
        (yield* t.status)?.detail ?? "",
        "not subscribed: ETHUSDT (Invalid topic :[allLiquidation.ETHUSDT])"
      )
      t.server.broadcast(F.bybitBtc)
      assert.isTrue(yield* t.until(Effect.map(t.rows("crypto:bitcoin"), (r) => r.length === 1 && r[0]?.[1] !== 0)))
      // No presence row for a symbol that is not subscribed: its liquidations are unknown, not zero.
      assert.deepStrictEqual(yield* t.rows("crypto:ethereum"), [])

      // The venue refuses everything (after a reconnect): a typed error in the status, the stream keeps trying (each
      // refused topic again after the refusal retry, 10 s here), nothing crashes.
      for (const s of bybitSymbols.keys()) refuse.add(s)
      t.server.dropAll()
      assert.isTrue(
        yield* t.until(
          Effect.map(t.status, (s) => (s?.lastError ?? "").includes("subscription refused")),
          50
        )
      )
      const s = (yield* t.status) as SourceStatus
      assert.isTrue(s.failing)
      assert.match(s.lastError ?? "", /^status: subscribe: subscription refused: Invalid topic/)
      refuse.clear()
      assert.isTrue(yield* t.until(t.live))
      assert.isUndefined((yield* t.status)?.lastError)
      close(yield* t.rows("crypto:bitcoin"), [[0, 22_755, 9_103]])
    }).pipe(Effect.scoped)
  )
})

describe.concurrent("streams follow the directory's symbols (live mode)", () => {
  const newPrint = (symbol: string, tMs: number) => ({
    topic: `allLiquidation.${symbol}`,
    type: "snapshot",
    ts: tMs + 200,
    data: [{ T: tMs, s: symbol, S: "Buy", v: "100", p: "2.5" }]
  })

  it.effect("Bybit: a symbol the directory adds is subscribed on the open connection and counted", () =>
    Effect.gen(function* () {
      let current: ReadonlyMap<string, string> = new Map([["BTCUSDT", "crypto:bitcoin"]])
      const t = yield* setup(bybitProtocol, bybitVenue(new Set(["GONEUSDT"]), { on: true }), () => current)
      assert.isTrue(yield* t.until(t.live))
      const topics = () => [
        ...new Set(
          t.server.received.filter((f) => (f as Frame).op === "subscribe").flatMap((f) => (f as Frame).args ?? [])
        )
      ]
      assert.deepStrictEqual(topics(), ["allLiquidation.BTCUSDT"])

      // A refresh adds two listings (one the venue refuses, which refuses their request whole: each is then asked
      // alone): subscribed within the next follow (1 s here), on the same connection.
      current = new Map([...current, ["NEWCUSDT", "crypto:newcoin-protocol"], ["GONEUSDT", "crypto:gone"]])
      assert.isTrue(yield* t.until(Effect.sync(() => topics().length === 3)))
      assert.sameMembers(topics(), ["allLiquidation.BTCUSDT", "allLiquidation.NEWCUSDT", "allLiquidation.GONEUSDT"])
      assert.strictEqual(t.server.connections.length, 1)
      yield* realPause(100)
      t.server.broadcast(newPrint("NEWCUSDT", T0 + 20_000))
      assert.isTrue(yield* t.until(Effect.map(t.rows("crypto:newcoin-protocol"), (r) => r.some((x) => x[1] === 250))))
      // The refused one is named, and gets no "no liquidations" row.
      yield* t.advance(60_000)
      assert.isTrue(
        yield* eventually(() => Effect.map(t.status, (st) => (st?.detail ?? "").includes("not subscribed: GONEUSDT")))
      )
      assert.deepStrictEqual(yield* t.rows("crypto:gone"), [])
      assert.isFalse(yield* t.failing)
    }).pipe(Effect.scoped)
  )

  it.effect("Binance: the all-market stream counts a symbol the directory adds, with no new request", () =>
    Effect.gen(function* () {
      let current: ReadonlyMap<string, string> = new Map([["BTCUSDT", "crypto:bitcoin"]])
      const t = yield* setup(binanceProtocol, binanceVenue({ on: false }), () => current)
      assert.isTrue(yield* t.until(t.live))
      t.server.broadcast(F.binanceUncovered)
      t.server.broadcast(F.binanceLongBtc)
      assert.isTrue(yield* t.until(Effect.map(t.rows("crypto:bitcoin"), (r) => r.some((x) => (x[1] ?? 0) > 0))))
      assert.deepStrictEqual(yield* t.rows("crypto:foo"), [])

      current = new Map([...current, ["FOOUSDT", "crypto:foo"]])
      yield* t.advance(2_000, 200)
      t.server.broadcast(F.binanceUncovered)
      assert.isTrue(yield* t.until(Effect.map(t.rows("crypto:foo"), (r) => r.some((x) => (x[1] ?? 0) === 100))))
      assert.strictEqual(t.server.received.filter((f) => (f as Frame).method === "SUBSCRIBE").length, 1)
      assert.strictEqual(t.server.connections.length, 1)
    }).pipe(Effect.scoped)
  )

  it("followInstruments: the universe's perpetuals, one map object until they change; provisional until listed", () => {
    const btc = CryptoAssets.find((a) => a.id === "crypto:bitcoin")
    assert.isDefined(btc)
    let universe = [btc as (typeof CryptoAssets)[number]]
    const config = liveConfig({ secUserAgent: "Market Data Tests tests@example.com" })
    // Bybit's quantities are coins: before its instrument list arrives the universe's listings stand in.
    const followed = followInstruments("bybit", config, () => universe, "liquidations", true)
    const first = followed.instruments()
    assert.deepStrictEqual(
      [...first].map(([s, i]) => [s, i.assetId, i.tokensPerContract]),
      [["BTCUSDT", "crypto:bitcoin", 1]]
    )
    assert.strictEqual(followed.instruments(), first, "unchanged: the same map")
    universe = [
      ...universe,
      {
        ...(btc as (typeof CryptoAssets)[number]),
        id: "crypto:newcoin-protocol",
        symbol: "NEWC",
        listings: [
          { venue: "bybit", market: "perp", symbol: "NEWCUSDT" },
          { venue: "bybit", market: "spot", symbol: "NEWCUSDT" }
        ]
      }
    ]
    const second = followed.instruments()
    assert.notStrictEqual(second, first)
    assert.deepStrictEqual([...second.keys()], ["BTCUSDT", "NEWCUSDT"])
    // OKX's quantities are contracts: nothing is followed until its instrument list gives their sizes.
    assert.strictEqual(followInstruments("okx", config, () => universe, "liquidations").instruments().size, 0)
  })
})

describe.concurrent("Binance !forceOrder@arr stream", () => {
  const symbols = new Map([
    ["BTCUSDT", "crypto:bitcoin"],
    ["ETHUSDT", "crypto:ethereum"],
    ["1000PEPEUSDT", "crypto:pepe"]
  ])

  it.effect("counts terminal liquidation orders as z x ap per bucket and side; uncovered symbols are ignored", () =>
    Effect.gen(function* () {
      const t = yield* setup(binanceProtocol, binanceVenue({ on: false }), symbols)
      assert.isTrue(yield* t.until(t.live))
      assert.strictEqual(t.server.connections[0]?.path, "/market/stream")
      const subscribe = t.server.received[0] as Frame
      assert.deepStrictEqual([subscribe.method, subscribe.params], ["SUBSCRIBE", ["!forceOrder@arr"]])

      for (const m of [
        F.binanceLongBtc,
        F.binanceShortBtc,
        F.binanceUncovered,
        F.binancePartialEth,
        F.binanceFilledEth,
        F.binanceExpiredPepe
      ])
        t.server.broadcast(m)
      t.server.broadcast('{"stream":"!forceOrder@arr","data":{"e":"forceOrder","E":1,"o":{"s":"BTCUSDT","S":"SE')
      t.server.broadcast({
        ...F.binanceLongBtc,
        data: { ...F.binanceLongBtc.data, o: { ...F.binanceLongBtc.data.o, ap: "" } }
      })
      assert.isTrue(yield* t.until(Effect.map(t.rows("crypto:pepe"), (r) => r.length === 2)))
      close(yield* t.rows("crypto:bitcoin"), [[0, 0.014 * 91_000, 0.5 * 91_010]])
      close(yield* t.rows("crypto:ethereum"), [[0, 3 * 3_020, 0]])
      close(yield* t.rows("crypto:pepe"), [
        [0, 0, 0],
        [1, 0, 2_000 * 0.0125]
      ])

      // The venue's ping frames are answered (by the WebSocket itself), and the client's own keep-alive
      // (LIST_SUBSCRIPTIONS, every 10 s) is sent and its answer keeps a quiet connection alive past the 30 s silence
      // limit, through the heartbeat (every minute) that names the skipped messages.
      t.server.pingAll()
      assert.isTrue(
        yield* t.until(
          Effect.sync(() => t.server.pongs.count >= 1),
          1
        )
      )
      yield* t.advance(70_000)
      const keepAlives = t.server.received.filter((f) => (f as Frame).method === "LIST_SUBSCRIPTIONS").length
      assert.isAtLeast(keepAlives, 6)
      assert.isTrue(yield* t.live, "an answered keep-alive keeps the stream up")
      assert.strictEqual(t.server.connections.length, 1)
      assert.include((yield* t.status)?.detail ?? "", "2 malformed messages skipped")

      // Dropped, reconnected, resumed: the 12:00 bucket keeps what it had and adds the new print once.
      t.server.dropAll()
      assert.isTrue(yield* t.until(t.failing, 10))
      assert.isTrue(yield* t.until(Effect.map(t.live, (l) => l && t.server.connections.length === 2)))
      t.server.broadcast(F.binanceLongBtcLater)
      assert.isTrue(yield* t.until(Effect.map(t.rows("crypto:bitcoin"), (r) => (r[0]?.[1] ?? 0) > 2_000)))
      close(yield* t.rows("crypto:bitcoin"), [[0, 0.014 * 91_000 + 0.2 * 90_900, 0.5 * 91_010]])
    }).pipe(Effect.scoped)
  )

  it.effect("a refused SUBSCRIBE is a typed error in the status; the stream retries and recovers", () =>
    Effect.gen(function* () {
      const refuse = { on: true }
      const t = yield* setup(binanceProtocol, binanceVenue(refuse), symbols, { stream: { refusedRetryMs: 10_000 } })
      assert.isTrue(yield* t.until(t.failing, 10))
      const s = (yield* t.status) as SourceStatus
      assert.strictEqual(
        s.lastError,
        "status: subscribe: subscription refused: code 2: Invalid request: unknown stream"
      )
      assert.strictEqual(s.lastSuccessMs, undefined)
      // Asked again after the refusal retry (10 s here), on the same connection.
      refuse.on = false
      assert.isTrue(yield* t.until(t.live))
      assert.strictEqual(t.server.received.filter((f) => (f as Frame).method === "SUBSCRIBE").length, 2)
      assert.isUndefined((yield* t.status)?.lastError)
    }).pipe(Effect.scoped)
  )

  it.effect("no server: a connect failure is recorded and retried with backoff, never a crash", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(F.NOW_MS)
      const store = makeMemoryMarketStore()
      yield* Effect.forkScoped(
        runLiquidationStream(binanceProtocol, {
          baseUrl: "ws://127.0.0.1:9",
          instruments: instrumentsOf("binance", symbols),
          timeoutMs: 2_000,
          stream: { backoffBaseMs: 1_000 }
        }).pipe(Effect.provideService(MarketStore, store))
      )
      let s: SourceStatus | undefined
      for (let i = 0; i < 100 && s === undefined; i++) {
        yield* TestClock.adjust(100)
        yield* realPause(20)
        s = (yield* store.status)[0]
      }
      assert.isTrue(s?.failing)
      assert.match(s?.lastError ?? "", /^(network|timeout): /)
    }).pipe(Effect.scoped)
  )
})

describe.concurrent("OKX liquidation-orders stream (beside the REST poll)", () => {
  const okxSymbols = new Map([
    ["BTC-USDT-SWAP", "crypto:bitcoin"],
    ["ETH-USDT-SWAP", "crypto:ethereum"]
  ])
  /** Contract sizes (ctVal x ctMult): 0.01 BTC, 0.1 ETH. */
  const units = { "BTC-USDT-SWAP": 0.01, "ETH-USDT-SWAP": 0.1 }
  /** A fake OKX public endpoint: each arg answered (or refused while `refuse.on`), `pong` to `ping`. */
  const okxVenue = (refuse: { on: boolean }) => (frame: unknown) => {
    if (frame === "ping") return "pong"
    const f = frame as { readonly op?: string; readonly args?: ReadonlyArray<unknown> }
    if (f.op !== "subscribe") return undefined
    return (f.args ?? []).map((a) => (refuse.on ? F.okxRefused : { ...F.okxSubscribed, arg: a }))
  }

  it.effect("counts sz x ctVal x bkPx per bucket, each side the larger of its count and the REST poll's", () =>
    Effect.gen(function* () {
      const t = yield* setup(okxProtocol, okxVenue({ on: false }), okxSymbols, { units })
      // The REST poll already wrote the 12:00 bucket of BTC from its list (a part of the minute's liquidations).
      yield* t.store.write([
        { kind: "liquidations", assetId: "crypto:bitcoin", venue: "okx", t: [T0], longUsd: [50_000], shortUsd: [0] }
      ])
      assert.isTrue(yield* t.until(t.live))
      assert.strictEqual(t.server.connections[0]?.path, "/ws/v5/public")
      assert.deepStrictEqual(t.server.received[0], { op: "subscribe", args: [F.okxArg] })

      t.server.broadcast(
        F.okxLiquidations("BTC-USDT-SWAP", [
          { side: "sell", sz: "100", bkPx: "90000", ts: T0 + 5_000 },
          { side: "buy", sz: "20", bkPx: "91500", ts: T0 + 10_000 }
        ])
      )
      t.server.broadcast(
        F.okxLiquidations("ETH-USDT-SWAP", [{ side: "sell", sz: "30", bkPx: "3000", ts: T0 + 12_000 }])
      )
      t.server.broadcast(F.okxLiquidations("DOGE-USDT-SWAP", [{ side: "sell", sz: "5", bkPx: "0.2", ts: T0 + 13_000 }]))
      // A push with one bad detail is skipped whole.
      t.server.broadcast(
        F.okxLiquidations("ETH-USDT-SWAP", [
          { side: "sell", sz: "1", bkPx: "3000", ts: T0 + 14_000 },
          { side: "sell", sz: "x", bkPx: "3000", ts: T0 + 14_000 }
        ])
      )
      assert.isTrue(yield* t.until(Effect.map(t.rows("crypto:ethereum"), (r) => r.length === 1 && r[0]?.[1] !== 0)))
      // BTC: long 100 x 0.01 x 90,000 = 90,000 (above the poll's 50,000), short 20 x 0.01 x 91,500 = 18,300.
      close(yield* t.rows("crypto:bitcoin"), [[0, 90_000, 18_300]])
      close(yield* t.rows("crypto:ethereum"), [[0, 30 * 0.1 * 3_000, 0]])

      // The poll writes the bucket again from a longer list (120,000 long); a later print the stream counts (9,000
      // more, 99,000 in all) does not add to it: both are counts of the same minute, never summed.
      yield* t.store.write([
        {
          kind: "liquidations",
          assetId: "crypto:bitcoin",
          venue: "okx",
          t: [T0],
          longUsd: [120_000],
          shortUsd: [18_300]
        }
      ])
      t.server.broadcast(
        F.okxLiquidations("BTC-USDT-SWAP", [{ side: "sell", sz: "10", bkPx: "90000", ts: T0 + 20_000 }])
      )
      yield* t.advance(3_000, 200)
      close(yield* t.rows("crypto:bitcoin"), [[0, 120_000, 18_300]])
      t.server.broadcast(
        F.okxLiquidations("BTC-USDT-SWAP", [{ side: "sell", sz: "50", bkPx: "90000", ts: T0 + 25_000 }])
      )
      assert.isTrue(yield* t.until(Effect.map(t.rows("crypto:bitcoin"), (r) => (r[0]?.[1] ?? 0) > 120_000)))
      close(yield* t.rows("crypto:bitcoin"), [[0, 144_000, 18_300]])

      // A dropped stream leaves the status to the REST poll (no failure recorded by the stream), and reconnects.
      const before = (yield* t.status) as SourceStatus
      t.server.dropAll()
      yield* t.advance(500, 100)
      assert.isFalse((yield* t.status)?.failing, "the REST poll is the fallback: its outcome is the status")
      assert.isTrue(yield* t.until(Effect.sync(() => t.server.connections.length === 2)))
      assert.isAtLeast((yield* t.status)?.lastSuccessMs ?? 0, before.lastSuccessMs ?? 0)
    }).pipe(Effect.scoped)
  )

  it.effect("a refused subscription is named in the log and retried; nothing is recorded as failing", () =>
    Effect.gen(function* () {
      const refuse = { on: true }
      const t = yield* setup(okxProtocol, okxVenue(refuse), okxSymbols, { units, stream: { refusedRetryMs: 5_000 } })
      yield* t.advance(3_000, 200)
      assert.isUndefined(yield* t.status, "no success while refused, and no failure over the REST poll's status")
      refuse.on = false
      assert.isTrue(yield* t.until(t.live))
      assert.strictEqual(t.server.received.filter((f) => (f as Frame).op === "subscribe").length, 2)
    }).pipe(Effect.scoped)
  )
})

describe("liquidation stream configuration", () => {
  it("streams Binance, Bybit and OKX from their public websockets by default; none behind a replay REST server", () => {
    const UA = "Market Data Tests tests@example.com"
    const defaults = liveConfig({ secUserAgent: UA })
    assert.deepStrictEqual(defaults.wsBaseUrls, {
      binance: "wss://fstream.binance.com",
      bybit: "wss://stream.bybit.com",
      okx: "wss://ws.okx.com:8443",
      hyperliquid: "wss://api.hyperliquid.xyz"
    })
    assert.strictEqual(liquidationStreams(defaults).length, 3)
    assert.strictEqual(liquidationStreams({ ...defaults, venues: ["okx", "hyperliquid"] }).length, 1)
    assert.strictEqual(liquidationStreams({ ...defaults, venues: ["hyperliquid"] }).length, 0)
    const u = "http://127.0.0.1:9"
    const replay = liveConfig({
      secUserAgent: UA,
      baseUrls: { binance: u, bybit: u, okx: u, hyperliquid: u, secData: u, secArchives: u, prices: u }
    })
    assert.deepStrictEqual(replay.wsBaseUrls, {})
    assert.strictEqual(liquidationStreams(replay).length, 0)
    assert.strictEqual(liquidationStreams({ ...replay, wsBaseUrls: { bybit: "ws://127.0.0.1:9" } }).length, 1)
  })

  it.effect("refuses a websocket base URL that is not ws(s)", () =>
    Effect.gen(function* () {
      const e = yield* Effect.flip(
        validateLiveConfig({
          ...liveConfig({ secUserAgent: "Market Data Tests tests@example.com" }),
          wsBaseUrls: { binance: "https://fstream.binance.com" }
        })
      )
      assert.strictEqual(e.variable, "MARKET_DATA_BINANCE_WS_BASE_URL")
    })
  )

  it.effect("reads the websocket base URLs from the environment: set, off, or following the REST base URL", () =>
    Effect.gen(function* () {
      const load = (env: Record<string, string>) =>
        loadLiveConfig.pipe(
          Effect.provide(
            ConfigProvider.layer(
              ConfigProvider.fromEnvRecord({
                MARKET_DATA_SEC_USER_AGENT: "Market Data Tests tests@example.com",
                ...env
              })
            )
          )
        )
      const others = { okx: "wss://ws.okx.com:8443", hyperliquid: "wss://api.hyperliquid.xyz" }
      assert.deepStrictEqual((yield* load({})).wsBaseUrls, {
        binance: "wss://fstream.binance.com",
        bybit: "wss://stream.bybit.com",
        ...others
      })
      assert.deepStrictEqual(
        (yield* load({ MARKET_DATA_BINANCE_WS_BASE_URL: "off", MARKET_DATA_BYBIT_WS_BASE_URL: "ws://127.0.0.1:7/" }))
          .wsBaseUrls,
        { bybit: "ws://127.0.0.1:7", ...others }
      )
      assert.deepStrictEqual((yield* load({ MARKET_DATA_BYBIT_BASE_URL: "http://127.0.0.1:8" })).wsBaseUrls, {
        binance: "wss://fstream.binance.com",
        ...others
      })
      const e = yield* Effect.flip(load({ MARKET_DATA_BYBIT_WS_BASE_URL: "stream.bybit.com" }))
      assert.strictEqual(e.variable, "MARKET_DATA_BYBIT_WS_BASE_URL")
      // OKX's business endpoint (its candles): the OKX websocket base URL's unless set apart, or off.
      assert.isUndefined((yield* load({})).okxWsBusinessBaseUrl)
      assert.strictEqual(
        (yield* load({ MARKET_DATA_OKX_WS_BUSINESS_BASE_URL: "wss://wsaws.okx.com:8443/" })).okxWsBusinessBaseUrl,
        "wss://wsaws.okx.com:8443"
      )
      assert.strictEqual((yield* load({ MARKET_DATA_OKX_WS_BUSINESS_BASE_URL: "OFF" })).okxWsBusinessBaseUrl, "off")
      const b = yield* Effect.flip(load({ MARKET_DATA_OKX_WS_BUSINESS_BASE_URL: "https://ws.okx.com" }))
      assert.strictEqual(b.variable, "MARKET_DATA_OKX_WS_BUSINESS_BASE_URL")
    })
  )
})
