/**
 * The market streams on their worker thread (`WorkerStreams.ts`, `StreamWorker.ts`, `BoardWire.ts`):
 * - the wire: any sequence of board changes written on one side and applied on the other leaves the receiving
 *   board as the same changes applied directly would (quotes, tickers, bars, closed bars, silence, health, order);
 * - the worker: against the replay Binance venue (its documented streams), the answering thread's board gets the
 *   venue's current books with no frame read on this thread, follows a change of the instrument set, carries the
 *   stream's counters, and a stop leaves the venue's health down with the stopped reason; a worker that fails turns
 *   its venue down with the reason at once, and a new worker streams it again.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import {
  makeQuoteBoard,
  type QuoteBoard,
  type StreamedBar,
  type StreamedTicker,
  type StreamHealth
} from "@market-data/core"
import { ConfigProvider, Effect, Fiber } from "effect"
import fc from "fast-check"
import { type ReplayVenue, startBinanceReplay } from "../../../../../test/support/replay/binance-venue.ts"
import { loadLiveConfig } from "../../../src/live/LiveConfig.ts"
import { type BoardMessage, makeBoardReader, makeBoardWriter } from "../../../src/live/stream/BoardWire.ts"
import { emptyStats, type MarketStreamStats } from "../../../src/live/stream/MarketStream.ts"
import { runMarketStreamsOnWorker } from "../../../src/live/stream/WorkerStreams.ts"
import type { Instrument } from "../../../src/live/Venue.ts"
import { eventually } from "../FakeServer.ts"

const ASSETS = ["crypto:a", "crypto:b", "crypto:c"] as const
const VENUES = ["binance", "okx"] as const

type Op =
  | { readonly k: "quote"; readonly a: number; readonly v: number; readonly t: number; readonly p: number }
  | {
      readonly k: "ticker"
      readonly a: number
      readonly v: number
      readonly t: number
      readonly mark: number | undefined
      readonly rate: number | undefined
      readonly oi: number | undefined
    }
  | {
      readonly k: "bar"
      readonly a: number
      readonly v: number
      readonly slot: number
      readonly e: number
      readonly closed: boolean | undefined
      readonly taker: boolean
    }
  | { readonly k: "forget"; readonly a: number; readonly v: number }
  | { readonly k: "silent"; readonly v: number; readonly mask: number; readonly t: number }
  | { readonly k: "health"; readonly v: number; readonly up: boolean; readonly t: number }
  | { readonly k: "flush" }

const idx = (n: number) => fc.integer({ min: 0, max: n - 1 })
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    k: fc.constant("quote" as const),
    a: idx(3),
    v: idx(2),
    t: fc.integer({ min: 0, max: 50 }),
    p: fc.double({ min: 1, max: 1e5, noNaN: true })
  }),
  fc.record({
    k: fc.constant("ticker" as const),
    a: idx(3),
    v: idx(2),
    t: fc.integer({ min: 0, max: 50 }),
    mark: fc.option(fc.double({ min: 1, max: 1e5, noNaN: true }), { nil: undefined }),
    rate: fc.option(fc.double({ min: -0.01, max: 0.01, noNaN: true }), { nil: undefined }),
    oi: fc.option(fc.double({ min: 0, max: 1e9, noNaN: true }), { nil: undefined })
  }),
  fc.record({
    k: fc.constant("bar" as const),
    a: idx(3),
    v: idx(2),
    slot: fc.integer({ min: 0, max: 3 }),
    e: fc.integer({ min: 0, max: 50 }),
    closed: fc.option(fc.boolean(), { nil: undefined }),
    taker: fc.boolean()
  }),
  fc.record({ k: fc.constant("forget" as const), a: idx(3), v: idx(2) }),
  fc.record({
    k: fc.constant("silent" as const),
    v: idx(2),
    mask: fc.integer({ min: 0, max: 7 }),
    t: fc.integer({ min: 0, max: 50 })
  }),
  fc.record({ k: fc.constant("health" as const), v: idx(2), up: fc.boolean(), t: fc.integer({ min: 0, max: 50 }) }),
  fc.constant({ k: "flush" as const })
)

const apply = (board: QuoteBoard, op: Op) => {
  const asset = "a" in op ? (ASSETS[op.a] as string) : ""
  const venue = "v" in op ? (VENUES[op.v] as string) : ""
  switch (op.k) {
    case "quote":
      board.applyQuote(asset, venue, { t: op.t, bid: op.p, bidSize: 2, ask: op.p * 1.001, askSize: 3 })
      return
    case "ticker": {
      const ticker: StreamedTicker = {
        t: op.t,
        mark: op.mark,
        fundingRate: op.rate,
        oiUsd: op.oi,
        intervalMs: 28_800_000
      }
      board.applyTicker(asset, venue, ticker)
      return
    }
    case "bar": {
      const bar: StreamedBar = {
        t: op.slot * 900_000,
        eventMs: op.e,
        open: 10,
        high: 12 + op.e,
        low: 9,
        close: 11 + op.e / 100,
        volume: op.e * 3,
        ...(op.closed === undefined ? {} : { closed: op.closed }),
        ...(op.taker ? { takerBuyUsd: op.e, takerSellUsd: op.e / 2 } : {})
      }
      board.applyBar(asset, venue, bar)
      return
    }
    case "forget":
      board.forget(asset, venue)
      return
    case "silent":
      board.setSilent(venue, new Set(ASSETS.filter((_, i) => (op.mask & (1 << i)) !== 0)), op.t)
      return
    case "health": {
      const health: StreamHealth = {
        components: ["books"],
        up: op.up,
        newestMs: op.t,
        lastFrameMs: op.t,
        sinceMs: op.t,
        ...(op.up ? {} : { reason: "down" })
      }
      board.setHealth(venue, health)
      return
    }
    case "flush":
      return
  }
}

/** What a reader of the board sees, for every asset and venue (bars with an absent optional field normalized). */
const snapshot = (board: QuoteBoard) => {
  const bar = (b: StreamedBar | undefined) =>
    b === undefined ? undefined : JSON.parse(JSON.stringify({ ...b, closed: b.closed ?? null }))
  return ASSETS.flatMap((a) =>
    VENUES.map((v) => ({
      a,
      v,
      quote: board.quote(a, v),
      ticker: board.ticker(a, v) === undefined ? undefined : JSON.parse(JSON.stringify(board.ticker(a, v))),
      bar: bar(board.bar(a, v)),
      closedBar: bar(board.closedBar(a, v)),
      silent: board.isSilent(a, v),
      silentSince: board.silentSince(a, v),
      servedSince: board.servedSince(a, v),
      venues: board.venuesOf(a),
      health: board.health(v)
    }))
  )
}

describe("the board wire", () => {
  it("applies on the receiving side what the writing side was given, in the same order", () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 200 }), (ops) => {
        const direct = makeQuoteBoard()
        const received = makeQuoteBoard()
        const stats: Array<readonly [string, MarketStreamStats]> = []
        const reader = makeBoardReader(received, (v, s) => stats.push([v, s]))
        const sent: Array<BoardMessage> = []
        const counters = { ...emptyStats(), frames: 7 }
        let pending: (() => void) | undefined
        const writer = makeBoardWriter(makeQuoteBoard(), (m) => sent.push(m), {
          statsOf: () => counters,
          schedule: (flush) => {
            pending = flush
          }
        })
        for (const op of ops) {
          apply(direct, op)
          apply(writer.board, op)
          if (op.k === "flush") pending?.()
        }
        writer.flush()
        // A message crosses the thread boundary by structured clone.
        for (const m of sent) reader.apply(structuredClone(m))
        assert.deepStrictEqual(snapshot(received), snapshot(direct))
        // Every health carried the counters.
        assert.strictEqual(stats.length, ops.filter((o) => o.k === "health").length)
        for (const [, s] of stats) assert.strictEqual(s.frames, 7)
      }),
      { numRuns: 300 }
    )
  })

  it("sends numeric records in few messages, and the names once", () => {
    const sent: Array<BoardMessage> = []
    const writer = makeBoardWriter(makeQuoteBoard(), (m) => sent.push(m), { schedule: () => {} })
    for (let i = 0; i < 1_000; i++)
      writer.board.applyQuote(`crypto:${i % 10}`, "binance", { t: i, bid: 1, bidSize: 1, ask: 2, askSize: 1 })
    writer.flush()
    const updates = sent.filter((m) => m.type === "updates")
    // 8 doubles a quote, 4,096 a message: 2 messages for 1,000 quotes.
    assert.strictEqual(updates.length, 2)
    assert.deepStrictEqual(
      updates.flatMap((m) => m.names),
      ["crypto:0", "binance", ...Array.from({ length: 9 }, (_, i) => `crypto:${i + 1}`)]
    )
  })
})

/** The replay venue started for a test (closed with its scope). */
const replayVenue = (symbols: number) =>
  Effect.acquireRelease(
    Effect.promise(() => startBinanceReplay({ symbols, syntheticOnly: true, meanIntervalMs: 100 })),
    (v) => Effect.promise(() => v.close())
  )

/** The replay venue's `i`th symbol as the stream follows it, as asset `crypto:replay-<i>`. */
const instrumentOf = (venue: ReplayVenue, i: number): Instrument => {
  const s = venue.symbols[i]
  if (s === undefined) throw new Error(`no symbol ${i}`)
  return {
    assetId: `crypto:replay-${i}`,
    venue: "binance",
    symbol: s.symbol,
    tokensPerUnit: s.tokensPerUnit,
    tokensPerContract: 1,
    fundingIntervalMs: s.fundingIntervalHours * 3_600_000
  }
}

describe("the market streams on a worker thread", () => {
  it.live(
    "fill this thread's board with the venue's current books, follow the instruments, and stop down",
    () =>
      Effect.gen(function* () {
        const venue: ReplayVenue = yield* replayVenue(30)
        const instrument = (i: number) => instrumentOf(venue, i)
        let followed: ReadonlyMap<string, Instrument> = new Map(
          Array.from({ length: 20 }, (_, i) => [instrument(i).symbol, instrument(i)] as const)
        )
        const board = makeQuoteBoard()
        const stats = { binance: emptyStats() }
        const fiber = yield* Effect.forkScoped(
          runMarketStreamsOnWorker(
            [
              {
                venue: "binance",
                baseUrl: venue.wsUrl,
                timeoutMs: 5_000,
                followEveryMs: 200,
                instruments: () => followed
              }
            ],
            board,
            stats,
            { nice: 7 }
          )
        )
        /** Instruments whose book on the board is one the venue published within the last 5 s (in venue units). */
        const current = (ids: ReadonlyArray<number>) =>
          ids.filter((i) => {
            const ins = instrument(i)
            const q = board.quote(ins.assetId, "binance")
            if (q === undefined) return false
            const age = venue.stalenessOf(ins.symbol, q.bid * ins.tokensPerUnit, q.ask * ins.tokensPerUnit, Date.now())
            return age !== undefined && age < 5_000
          }).length
        const first20 = Array.from({ length: 20 }, (_, i) => i)
        assert.isTrue(
          yield* eventually(() => board.health("binance")?.up === true && current(first20) === 20),
          `books on the board: ${current(first20)} of 20 current; health ${JSON.stringify(board.health("binance"))}`
        )
        // Funding and mark from the mark-price array, for the followed symbols only.
        assert.isTrue(yield* eventually(() => board.ticker("crypto:replay-0", "binance")?.mark !== undefined))
        assert.isUndefined(board.quote("crypto:replay-25", "binance"))
        assert.isTrue(stats.binance.frames > 0 && stats.binance.connects > 0, JSON.stringify(stats.binance))
        if (process.platform === "linux") {
          // The worker thread alone runs at the niceness asked; this thread keeps the process's.
          const niceOf = (stat: string) => Number(readFileSync(stat, "utf8").split(") ")[1]?.split(" ")[16])
          const tasks = readdirSync("/proc/self/task").map((t) => niceOf(`/proc/self/task/${t}/stat`))
          assert.strictEqual(tasks.filter((n) => n === 7).length, 1, `one thread at niceness 7: ${tasks.join(" ")}`)
          assert.notStrictEqual(niceOf("/proc/thread-self/stat"), 7)
        }

        // Ten more listed: subscribed without a restart; one delisted: its streamed state forgotten.
        followed = new Map(
          Array.from({ length: 30 }, (_, i) => i)
            .filter((i) => i !== 3)
            .map((i) => [instrument(i).symbol, instrument(i)] as const)
        )
        const added = Array.from({ length: 10 }, (_, i) => 20 + i)
        assert.isTrue(
          yield* eventually(() => current(added) === 10 && board.quote("crypto:replay-3", "binance") === undefined),
          `the new listings: ${current(added)} of 10 current`
        )

        yield* Fiber.interrupt(fiber)
        const health = board.health("binance")
        assert.isFalse(health?.up)
        assert.strictEqual(health?.reason, "stream stopped (not ingesting)")
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "a worker that fails: its venue down with the reason, then streamed again by a new worker",
    () =>
      Effect.gen(function* () {
        const venue: ReplayVenue = yield* replayVenue(10)
        const dir = mkdtempSync(join(tmpdir(), "stream-worker-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
        const followed: ReadonlyMap<string, Instrument> = new Map(
          venue.symbols.map((s, i) => [s.symbol, instrumentOf(venue, i)] as const)
        )
        const board = makeQuoteBoard()
        // The worker copies the environment when it starts: the first one fails, the next finds the marker.
        process.env.CRASH_MARKER = join(dir, "crashed")
        process.env.CRASH_AFTER_MS = "1500"
        yield* Effect.forkScoped(
          runMarketStreamsOnWorker(
            [{ venue: "binance", baseUrl: venue.wsUrl, timeoutMs: 5_000, instruments: () => followed }],
            board,
            undefined,
            { workerUrl: new URL("./CrashOnceStreamWorker.ts", import.meta.url) }
          )
        )
        assert.isTrue(
          yield* eventually(
            () => board.health("binance")?.reason?.includes("the stream worker failed (test)") === true
          ),
          JSON.stringify(board.health("binance"))
        )
        delete process.env.CRASH_MARKER
        delete process.env.CRASH_AFTER_MS
        assert.isFalse(board.health("binance")?.up)
        const before = board.quote("crypto:replay-0", "binance")?.t ?? 0
        assert.isTrue(
          yield* eventually(
            () => board.health("binance")?.up === true && (board.quote("crypto:replay-0", "binance")?.t ?? 0) > before
          ),
          JSON.stringify(board.health("binance"))
        )
      }).pipe(Effect.scoped),
    60_000
  )
})

/** The live configuration read from `env` (with the SEC User-Agent it requires). */
const load = (env: Record<string, string>) =>
  loadLiveConfig.pipe(
    Effect.provide(
      ConfigProvider.layer(
        ConfigProvider.fromEnvRecord({ MARKET_DATA_SEC_USER_AGENT: "Example Corp ops@example.com", ...env })
      )
    )
  )

describe("MARKET_DATA_STREAM_THREAD", () => {
  it.effect("is on unless set to off; another value is refused naming the variable", () =>
    Effect.gen(function* () {
      assert.isTrue((yield* load({})).streamThread)
      assert.isTrue((yield* load({ MARKET_DATA_STREAM_THREAD: "on" })).streamThread)
      assert.isFalse((yield* load({ MARKET_DATA_STREAM_THREAD: "OFF" })).streamThread)
      const refused = yield* Effect.flip(load({ MARKET_DATA_STREAM_THREAD: "yes" }))
      assert.strictEqual(refused.variable, "MARKET_DATA_STREAM_THREAD")
      assert.include(refused.message, "`on` or `off`")
    })
  )

  it.effect("MARKET_DATA_STREAM_THREAD_NICE: 10 unless set, 0 to 19, anything else refused naming the variable", () =>
    Effect.gen(function* () {
      assert.strictEqual((yield* load({})).streamThreadNice, 10)
      assert.strictEqual((yield* load({ MARKET_DATA_STREAM_THREAD_NICE: "0" })).streamThreadNice, 0)
      assert.strictEqual((yield* load({ MARKET_DATA_STREAM_THREAD_NICE: " 19 " })).streamThreadNice, 19)
      for (const bad of ["20", "-1", "5.5", "high", "1e1"]) {
        const refused = yield* Effect.flip(load({ MARKET_DATA_STREAM_THREAD_NICE: bad }))
        assert.strictEqual(refused.variable, "MARKET_DATA_STREAM_THREAD_NICE")
        assert.include(refused.message, JSON.stringify(bad))
      }
    })
  )
})
