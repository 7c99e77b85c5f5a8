/**
 * The simulated market's sub-second stream (`Quotes.ts`) through the same ingest interface as the venue streams
 * (`QuoteBoard.ts`), and the crypto plane over it (`withSimulatedStream`), on the TestClock: `price` moves every
 * 250 ms, its `as_of` moves with the clock and its status is `live`; a stopped stream makes `books` stale after
 * three stream cadences. The intra-bar path is deterministic from the seed and the instant, ends exactly at the
 * next close, stays inside the bar written there, and agrees with the stored book of the same instant.
 */
import { assert, describe, it } from "@effect/vitest"
import {
  BAR_MS,
  cryptoAsset,
  freshnessOf,
  MarketStore,
  makeQuoteBoard,
  type SourceStatus,
  STREAM_CADENCE_MS
} from "@market-data/core"
import { makeMemoryMarketStore } from "@market-data/memory"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { makeCryptoPlane } from "../../../core/src/crypto/CryptoPlane.ts"
import { callPlanes, dataOf } from "../../../core/test/support/PlaneCall.ts"
import {
  ACTIVE_MS,
  FORMING_EVERY_MS,
  IDLE_TICK_MS,
  makeSimulatedStream,
  QUOTE_TICK_MS,
  startSimulatedCrypto,
  streamTick,
  withSimulatedStream
} from "../src/simulated/crypto/index.ts"

/** Mid-bar, off the quote grid. */
const START = Date.UTC(2026, 10, 23, 6, 7, 12, 345)
const ASSETS = ["bitcoin", "ethereum", "sui", "compound"].map((s) => cryptoAsset(`crypto:${s}`)!)

/** The feed started at `START` with a quote board, and the plane over the store it serves. */
const started = Effect.gen(function* () {
  yield* TestClock.setTime(START)
  const store = makeMemoryMarketStore()
  const board = makeQuoteBoard()
  const stream = makeSimulatedStream()
  const served = withSimulatedStream(store, board, stream)
  const crypto = yield* startSimulatedCrypto({
    seed: "5",
    assets: ASSETS,
    historyDays: 20,
    quotes: board,
    stream
  }).pipe(Effect.provideService(MarketStore, store))
  const plane = yield* makeCryptoPlane.pipe(Effect.provideService(MarketStore, served))
  const call = (op: string, id: string) =>
    Effect.gen(function* () {
      const now = yield* Effect.clockWith((c) => c.currentTimeMillis)
      return dataOf<Record<string, unknown>>(yield* callPlanes([plane], op, [["id", id]], now))
    })
  return { store, board, served, crypto, call }
})

const booksStatus = (statuses: ReadonlyArray<SourceStatus>, venue: string) =>
  statuses.find((s) => s.venue === venue && s.component === "books") as SourceStatus

describe("the simulated stream", () => {
  it.effect("moves price every 250 ms: quotes and as_of follow the stream, status live, source simulated", () =>
    Effect.gen(function* () {
      const { served, call } = yield* started
      const quotes: Array<string> = []
      let before = 0
      for (let i = 0; i < 12; i++) {
        yield* TestClock.adjust(QUOTE_TICK_MS)
        const now = START + (i + 1) * QUOTE_TICK_MS
        const tick = Math.floor(now / QUOTE_TICK_MS) * QUOTE_TICK_MS
        const price = yield* call("price", "crypto:bitcoin")
        assert.strictEqual(price.status, "live")
        // The books it quotes are the stream's, as of the newest tick.
        assert.strictEqual(booksStatus(yield* served.status, "binance").newestMs, tick)
        // `as_of` is the stream's newest tick: the bar still forming ends the data at now (as in live mode).
        const asOf = Date.parse(price.as_of as string)
        assert.strictEqual(asOf, tick)
        assert.isAtLeast(asOf, before)
        before = asOf
        const bid = price.bid_usd as number
        const ask = price.ask_usd as number
        assert.isBelow(bid, ask)
        assert.isAtLeast(price.usd as number, bid)
        assert.isAtMost(price.usd as number, ask)
        quotes.push(`${bid}/${ask}`)
      }
      // Sub-second moves: nearly every tick quotes another bid or ask.
      assert.isAtLeast(new Set(quotes).size, 10)
      const statuses = yield* served.status
      const books = booksStatus(statuses, "binance")
      assert.strictEqual(books.source, "simulated")
      assert.strictEqual(books.cadenceMs, STREAM_CADENCE_MS)
      assert.isTrue(statuses.every((s) => s.source === "simulated"))
      // liquidity and funding read the streamed state too.
      const liquidity = yield* call("liquidity", "crypto:bitcoin")
      assert.strictEqual(liquidity.status, "live")
      const funding = yield* call("funding", "crypto:bitcoin")
      assert.strictEqual(funding.status, "live")
      assert.isAtMost(START + 12 * QUOTE_TICK_MS - Date.parse(funding.as_of as string), QUOTE_TICK_MS)
      const fundingState = statuses.find((s) => s.venue === "binance" && s.component === "fundingState")
      assert.strictEqual(
        fundingState?.newestMs,
        Math.floor((START + 12 * QUOTE_TICK_MS) / QUOTE_TICK_MS) * QUOTE_TICK_MS
      )
    }).pipe(Effect.scoped)
  )

  it.effect("a stopped quote ticker leaves books delayed after one stream cadence and stale after three", () =>
    Effect.gen(function* () {
      const { served, crypto, call } = yield* started
      yield* TestClock.adjust(2_000)
      assert.strictEqual(freshnessOf(booksStatus(yield* served.status, "binance"), START + 2_000), "live")
      yield* Fiber.interrupt(crypto.quoteTicker as Fiber.Fiber<never>)
      const stoppedAt = Math.floor((START + 2_000) / QUOTE_TICK_MS) * QUOTE_TICK_MS
      yield* TestClock.setTime(stoppedAt + STREAM_CADENCE_MS - 1)
      assert.strictEqual(
        freshnessOf(booksStatus(yield* served.status, "binance"), stoppedAt + STREAM_CADENCE_MS - 1),
        "live"
      )
      yield* TestClock.setTime(stoppedAt + STREAM_CADENCE_MS + 1)
      assert.strictEqual(
        freshnessOf(booksStatus(yield* served.status, "binance"), stoppedAt + STREAM_CADENCE_MS + 1),
        "delayed"
      )
      const staleAt = stoppedAt + 3 * STREAM_CADENCE_MS + 1
      yield* TestClock.setTime(staleAt)
      for (const venue of ["binance", "bybit", "okx", "hyperliquid"]) {
        assert.strictEqual(freshnessOf(booksStatus(yield* served.status, venue), staleAt), "stale", venue)
      }
      // The feed's own ticker still stores books at each venue's cadence; the stream's status is what is served.
      const price = yield* call("price", "crypto:bitcoin")
      assert.strictEqual(price.status, "stale")
    }).pipe(Effect.scoped)
  )

  it.effect("quotes an instant the same whichever ticks ran before, from the seed and the time", () =>
    Effect.gen(function* () {
      const a = yield* started
      yield* TestClock.adjust(10_000)
      const at = Math.floor((START + 10_000) / QUOTE_TICK_MS) * QUOTE_TICK_MS
      // Another board, one tick straight at the same instant.
      const other = makeQuoteBoard()
      streamTick(a.crypto.simulation, other, at, at)
      for (const asset of ASSETS) {
        for (const l of asset.listings) {
          assert.deepStrictEqual(other.quote(asset.id, l.venue), a.board.quote(asset.id, l.venue))
          assert.deepStrictEqual(other.ticker(asset.id, l.venue), a.board.ticker(asset.id, l.venue))
        }
      }
      // The stored book of a venue's cadence tick has the streamed top of that instant in front.
      const stored = (yield* a.store.books("crypto:bitcoin", "hyperliquid"))[0]
      const board = makeQuoteBoard()
      streamTick(a.crypto.simulation, board, stored?.t as number, stored?.t as number)
      const top = board.quote("crypto:bitcoin", "hyperliquid")
      assert.deepStrictEqual([stored?.bids[0]?.[0], stored?.asks[0]?.[0]], [top?.bid, top?.ask])
      assert.approximately((stored?.bids[0]?.[1] as number) / (top?.bidSize as number), 1, 1e-12)
    }).pipe(Effect.scoped)
  )

  it.effect("moves inside each bar written at the close, and reaches that close exactly at it", () =>
    Effect.gen(function* () {
      const { store, board, served, call } = yield* started
      const closeMs = Math.ceil(START / BAR_MS) * BAR_MS
      const seen = new Map<string, { low: number; high: number }>()
      let now = START
      while (now + 1_000 < closeMs) {
        yield* TestClock.adjust(1_000)
        now += 1_000
        for (const asset of ASSETS) {
          // The books served: the streamed top of book in front of the stored depth.
          for (const b of yield* served.books(asset.id)) {
            assert.strictEqual(b.t, Math.floor(now / QUOTE_TICK_MS) * QUOTE_TICK_MS)
            const mid = ((b.bids[0]?.[0] as number) + (b.asks[0]?.[0] as number)) / 2
            const k = `${asset.id} ${b.venue}`
            const s = seen.get(k) ?? { low: mid, high: mid }
            seen.set(k, { low: Math.min(s.low, mid), high: Math.max(s.high, mid) })
          }
        }
      }
      // Between closes the bar still forming ends the data at now: the first answer in a minute is as of the tick.
      const read = yield* call("price", "crypto:ethereum")
      assert.isAtMost(now - Date.parse(read.as_of as string), QUOTE_TICK_MS)
      yield* TestClock.setTime(closeMs)
      for (const asset of ASSETS) {
        for (const l of asset.listings) {
          const [bar] = yield* store.latest("bars", { assetId: asset.id, venue: l.venue, n: 1 })
          assert.strictEqual(bar?.t[0], closeMs - BAR_MS)
          const s = seen.get(`${asset.id} ${l.venue}`) as { low: number; high: number }
          const slack = 1.000_001
          assert.isAtLeast(s.low * slack, bar?.low[0] as number, `${asset.id} ${l.venue} low`)
          assert.isAtMost(s.high / slack, bar?.high[0] as number, `${asset.id} ${l.venue} high`)
          // At the close the streamed mark (perpetuals) or price (spot) is the bar's close.
          const q = board.quote(asset.id, l.venue)
          const price = board.ticker(asset.id, l.venue)?.mark ?? ((q?.bid as number) + (q?.ask as number)) / 2
          assert.strictEqual(q?.t, closeMs)
          assert.approximately(price / (bar?.close[0] as number), 1, 1e-6, `${asset.id} ${l.venue} close`)
        }
      }
    }).pipe(Effect.scoped)
  )

  it.effect("serves the bar still forming in front of the stored bars, refreshed each minute, without storing it", () =>
    Effect.gen(function* () {
      const { store, served } = yield* started
      const slot = Math.floor(START / BAR_MS) * BAR_MS
      const venue = "binance"
      const latest = (s: MarketStore["Service"]) =>
        Effect.map(s.latest("bars", { assetId: "crypto:bitcoin", venue, n: 2 }), (x) => x[0])
      yield* TestClock.adjust(QUOTE_TICK_MS)
      const minute = Math.floor(START / FORMING_EVERY_MS) * FORMING_EVERY_MS
      const stored = yield* latest(store)
      const shown = yield* latest(served)
      assert.deepStrictEqual([...(stored?.t ?? [])], [slot - 2 * BAR_MS, slot - BAR_MS])
      assert.deepStrictEqual([...(shown?.t ?? [])], [slot - BAR_MS, slot])
      const last = (x: Float64Array | undefined) => x?.[x.length - 1] as number
      // It opens at the latest close and holds its path so far.
      assert.strictEqual(last(shown?.open), last(stored?.close))
      assert.isAtLeast(last(shown?.high), Math.max(last(shown?.open), last(shown?.close)))
      assert.isAtMost(last(shown?.low), Math.min(last(shown?.open), last(shown?.close)))
      const extent = (yield* served.extent("bars", "crypto:bitcoin")).find((e) => e.venue === venue)
      assert.strictEqual(extent?.lastMs, slot)
      const inRange = yield* served.read("bars", { assetId: "crypto:bitcoin", venue, fromMs: slot, toMs: slot + 1 })
      assert.strictEqual(inRange[0]?.t.length, 1)
      // The same within the minute; the next minute's differs (the path moved).
      const revision = served.seriesRevision?.("crypto:bitcoin")
      yield* TestClock.setTime(minute + FORMING_EVERY_MS - 1)
      assert.strictEqual(served.seriesRevision?.("crypto:bitcoin"), revision)
      assert.strictEqual(last((yield* latest(served))?.close), last(shown?.close))
      yield* TestClock.setTime(minute + FORMING_EVERY_MS)
      assert.notStrictEqual(served.seriesRevision?.("crypto:bitcoin"), revision)
      assert.notStrictEqual(last((yield* latest(served))?.close), last(shown?.close))
      // At the close the stored bar takes its place, and the next slot's forming bar opens at its close.
      yield* TestClock.setTime(slot + BAR_MS + 30_000)
      const after = yield* latest(served)
      assert.deepStrictEqual([...(after?.t ?? [])], [slot, slot + BAR_MS])
      assert.strictEqual(last(after?.open), after?.close[0] as number)
    }).pipe(Effect.scoped)
  )

  it.effect(
    "idles at a tick per 2.5 s while nobody reads the stream (statuses stay live), at 250 ms again after a read",
    () =>
      Effect.gen(function* () {
        const { board, served } = yield* started
        const newest = () => board.health("binance")?.newestMs as number
        yield* TestClock.adjust(ACTIVE_MS + 10_000)
        const idle = newest()
        assert.strictEqual(idle % IDLE_TICK_MS, 0)
        yield* TestClock.setTime(idle + IDLE_TICK_MS - 1)
        assert.strictEqual(newest(), idle)
        // Still live: the idle pace is inside the stream's status cadence.
        assert.strictEqual(freshnessOf(booksStatus(yield* served.status, "binance"), idle + IDLE_TICK_MS - 1), "live")
        // That read wakes it: the next idle tick, then every 250 ms.
        yield* TestClock.setTime(idle + IDLE_TICK_MS)
        assert.strictEqual(newest(), idle + IDLE_TICK_MS)
        yield* TestClock.adjust(QUOTE_TICK_MS)
        assert.strictEqual(newest(), idle + IDLE_TICK_MS + QUOTE_TICK_MS)
      }).pipe(Effect.scoped)
  )
})
