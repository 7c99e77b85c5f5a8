/**
 * The crypto plane serves a remembered per-asset result while the store is unchanged and the clock has not
 * reached a moment the result depends on. Proven by comparison: a plane over the same store without
 * `revision` (so it rebuilds every answer) must answer identically at every step of a timeline crossing bar
 * closes, cadence slots (live -> delayed -> stale), the hour, and a write of new data; and the remembering
 * plane must actually reuse its answers (same object) between those moments.
 */
import { assert, describe, it } from "@effect/vitest"
import { makeMemoryMarketStore } from "@market-data/memory"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { cryptoAsset } from "../../src/crypto/Assets.ts"
import { makeCryptoPlane } from "../../src/crypto/CryptoPlane.ts"
import { type AnySeriesInput, MarketStore, SeriesColumns, SeriesKinds } from "../../src/crypto/Market.ts"
import { makePlaneState, primaryVenue } from "../../src/crypto/plane/State.ts"
import { makeQuoteBoard, withQuoteBoard } from "../../src/crypto/QuoteBoard.ts"
import type { HandlerOutput } from "../../src/Pipeline.ts"
import { callPlanes, dataOf } from "../support/PlaneCall.ts"
import { buildFixture, writeFixture } from "./support/MarketFixture.ts"

const M = 60_000
const END = Date.UTC(2026, 10, 20, 12, 0)
const IDS = ["crypto:bitcoin", "crypto:sui", "crypto:tron"]
const assets = IDS.map((id) => cryptoAsset(id) as NonNullable<ReturnType<typeof cryptoAsset>>)

const CALLS: ReadonlyArray<readonly [string, ReadonlyArray<readonly [string, string]>]> = [
  ["price", []],
  ["funding", []],
  ["open_interest", []],
  ["orderflow", []],
  ["liquidations", []],
  ["liquidity", []],
  ["technicals", [["timeframe", "15m"]]],
  ["technicals", [["timeframe", "4h"]]],
  ["structure", []],
  ["read", []]
]

/**
 * New data, as a feed delivers it: every series' newest row again, `stepMs` later and 0.5 % higher, and every
 * source's status moved on by `stepMs`.
 */
const tick = (store: MarketStore["Service"], stepMs: number, ids = IDS, statuses = true) =>
  Effect.gen(function* () {
    const batch: Array<AnySeriesInput> = []
    for (const id of ids) {
      for (const kind of SeriesKinds) {
        for (const series of yield* store.latest(kind, { assetId: id, n: 1 })) {
          const row: Record<string, unknown> = {
            kind,
            assetId: id,
            venue: series.venue,
            t: [(series.t[0] as number) + stepMs]
          }
          const columns = series as unknown as Record<string, ArrayLike<number>>
          for (const name of SeriesColumns[kind]) row[name] = [(columns[name]?.[0] as number) * 1.005]
          batch.push(row as unknown as AnySeriesInput)
        }
      }
    }
    yield* store.write(batch)
    if (statuses) yield* store.putStatus((yield* store.status).map((s) => ({ ...s, newestMs: s.newestMs + stepMs })))
  })

const planeCaller = (store: MarketStore["Service"]) =>
  Effect.map(makeCryptoPlane.pipe(Effect.provideService(MarketStore, store)), (plane) => {
    const call = (name: string, params: ReadonlyArray<readonly [string, string]>, nowMs: number) =>
      Effect.map(callPlanes([plane], name, params, nowMs), dataOf)
    return Object.assign(call, { lookup: plane.lookup })
  })

describe("remembered crypto results", () => {
  it.effect("equal a rebuild at every step of a timeline, and are reused between its moments", () =>
    Effect.gen(function* () {
      const store = makeMemoryMarketStore()
      assert.isFunction(store.revision)
      yield* writeFixture(store, buildFixture(assets, END, 60, 7), END)
      const { revision: _revision, seriesRevision: _seriesRevision, ...withoutRevision } = store
      const remembering = yield* planeCaller(store)
      const rebuilding = yield* planeCaller(withoutRevision)

      // Bar closes every 15 min; statuses turn delayed after one cadence and stale after three; the hour
      // changes at 13:00; at +20 min new data arrives (a write), so everything before it is superseded.
      const steps = [1, 2, 30 * 1000, 59 * 1000, 60 * 1000, 14 * M, 15 * M - 1, 15 * M, 15 * M + 1, 16 * M]
        .map((d) => END + d)
        .concat([END + 20 * M, END + 31 * M, END + 46 * M, END + 59 * M, END + 60 * M, END + 61 * M, END + 3 * 60 * M])
      let reused = 0
      for (const [i, now] of steps.entries()) {
        if (now === END + 20 * M) yield* tick(store, 15 * M)
        yield* TestClock.setTime(now)
        for (const id of IDS) {
          // Directory entries (their `alive` flag) are remembered the same way.
          assert.deepStrictEqual(yield* remembering.lookup(id), yield* rebuilding.lookup(id), `lookup ${id} at ${i}`)
          for (const [name, extra] of CALLS) {
            const params = [["id", id] as const, ...extra]
            const first = yield* remembering(name, params, now)
            const again = yield* remembering(name, params, now)
            const fresh = yield* rebuilding(name, params, now)
            assert.deepStrictEqual(first, fresh, `${name} ${JSON.stringify(extra)} of ${id} at step ${i}`)
            assert.deepStrictEqual(again, fresh)
            if (again === first) reused++
          }
        }
      }
      // Every repeated call at the same instant is served from memory.
      assert.strictEqual(reused, steps.length * IDS.length * CALLS.length)
    })
  )

  it.effect("an asset's state outlives other assets' writes and book ticks, not its own series' writes", () =>
    Effect.gen(function* () {
      const store = makeMemoryMarketStore()
      yield* writeFixture(store, buildFixture(assets, END, 60, 7), END)
      const { revision: _revision, seriesRevision: _seriesRevision, ...withoutRevision } = store
      const rebuilding = yield* planeCaller(withoutRevision)
      const st = makePlaneState(store)
      const btc = assets[0] as (typeof assets)[number]
      const now = END + 5 * 1000
      yield* TestClock.setTime(now)
      const stateNow = Effect.flatMap(st.statusesOf(btc), (statuses) => st.stateOf(btc, now, statuses))
      const first = yield* stateNow
      // Sui's and Tron's rows (every kind), and books, funding states and a book status for every asset.
      yield* tick(store, 15 * M, ["crypto:sui", "crypto:tron"], false)
      const books = yield* store.books(btc.id)
      yield* store.putBooks(books.map((b) => ({ ...b, t: b.t + 1 })))
      yield* store.putFundingStates((yield* store.fundingStates(btc.id)).map((f) => ({ ...f, t: f.t + 1 })))
      assert.strictEqual(yield* stateNow, first)
      // Bitcoin's own rows (and the statuses moving on): rebuilt, and the plane over the tracked state answers as a rebuild does.
      yield* tick(store, 15 * M)
      const after = yield* stateNow
      assert.notStrictEqual(after, first)
      const remembering = yield* planeCaller(store)
      assert.deepStrictEqual(
        yield* remembering("read", [["id", btc.id]], now),
        yield* rebuilding("read", [["id", btc.id]], now)
      )
    })
  )

  it.effect("a streamed quote of one asset rebuilds that asset's price, not another's", () =>
    Effect.gen(function* () {
      const store = makeMemoryMarketStore()
      yield* writeFixture(store, buildFixture(assets, END, 60, 7), END)
      const board = makeQuoteBoard()
      const now = END + 5 * 1000
      for (const a of assets) {
        const venue = primaryVenue(a) as string
        board.setHealth(venue, { components: ["books"], up: true, newestMs: now, lastFrameMs: now, sinceMs: END })
      }
      const served = withQuoteBoard(store, board)
      // Each `price` build reads its asset's books once: the count of reads is the count of rebuilds.
      const builds = new Map<string, number>()
      const counting: MarketStore["Service"] = {
        ...served,
        books: (assetId, venue) => {
          builds.set(assetId, (builds.get(assetId) ?? 0) + 1)
          return served.books(assetId, venue)
        }
      }
      const remembering = yield* planeCaller(counting)
      const { revision: _r, seriesRevision: _s, quotesRevision: _q, quotesRevisionOf: _o, ...withoutRevision } = served
      const rebuilding = yield* planeCaller(withoutRevision)
      yield* TestClock.setTime(now)
      const [a, b] = IDS as [string, string]
      const venueA = primaryVenue(assets[0] as (typeof assets)[number]) as string
      const price = (id: string) => remembering("price", [["id", id]], now)
      const a0 = yield* price(a)
      const b0 = yield* price(b)
      assert.deepStrictEqual(builds.get(a), 1)
      assert.deepStrictEqual(builds.get(b), 1)
      // A's top of book moves on the stream.
      board.applyQuote(a, venueA, { t: now - 100, bid: 123_456, bidSize: 1, ask: 123_458, askSize: 1 })
      const a1 = yield* price(a)
      const b1 = yield* price(b)
      // B's answer is the remembered one, not rebuilt; A's is rebuilt and carries the new quote.
      assert.strictEqual(b1, b0)
      assert.strictEqual(builds.get(b), 1)
      assert.strictEqual(builds.get(a), 2)
      assert.notDeepEqual(a1, a0)
      assert.deepInclude(a1 as object, { bid_usd: 123_456, ask_usd: 123_458, usd: 123_457 })
      // Both equal a rebuild from scratch.
      assert.deepStrictEqual(a1, yield* rebuilding("price", [["id", a]], now))
      assert.deepStrictEqual(b1, yield* rebuilding("price", [["id", b]], now))
      // A stream's health changes every answer's freshness: both are rebuilt.
      board.setHealth(venueA, { components: ["books"], up: true, newestMs: now, lastFrameMs: now, sinceMs: END })
      yield* price(a)
      yield* price(b)
      assert.strictEqual(builds.get(a), 3)
      assert.strictEqual(builds.get(b), 2)
    })
  )

  it.effect("rank's remembered pages equal a rebuild, their text is their body's JSON, cursors resume alike", () =>
    Effect.gen(function* () {
      const store = makeMemoryMarketStore()
      yield* writeFixture(store, buildFixture(assets, END, 60, 7), END)
      const { revision: _revision, seriesRevision: _seriesRevision, ...withoutRevision } = store
      const planeOf = (s: MarketStore["Service"]) => makeCryptoPlane.pipe(Effect.provideService(MarketStore, s))
      const remembering = yield* planeOf(store)
      const rebuilding = yield* planeOf(withoutRevision)
      const textOf = (out: HandlerOutput) => {
        const json = out as Extract<HandlerOutput, { readonly _tag: "Json" }>
        // Where a handler gives the serialized body, it is exactly the body's JSON.
        if (json.text !== undefined) assert.strictEqual(json.text, JSON.stringify(json.body))
        return { body: JSON.stringify(json.body), credits: json.creditsCharged, next: json.nextUpdateAtMs }
      }
      let texts = 0
      for (const now of [END + 1000, END + 2000, END + 20 * M, END + 61 * M]) {
        if (now === END + 20 * M) yield* tick(store, 15 * M)
        yield* TestClock.setTime(now)
        for (const metric of ["extreme_count", "return_24h_pct"])
          for (const direction of ["top", "bottom"]) {
            let cursor: string | null = null
            do {
              const params: Array<readonly [string, string]> = [
                ["metric", metric],
                ["direction", direction],
                ["limit", "1"],
                ...(cursor === null ? [] : [["cursor", cursor] as const])
              ]
              const first = yield* callPlanes([remembering], "rank", params, now)
              const again = yield* callPlanes([remembering], "rank", params, now)
              const fresh = yield* callPlanes([rebuilding], "rank", params, now)
              assert.deepStrictEqual(textOf(first), textOf(fresh))
              assert.deepStrictEqual(textOf(again), textOf(fresh))
              if ((again as { text?: string }).text !== undefined) texts++
              cursor = (dataOf(fresh) as { next_cursor: string | null }).next_cursor
            } while (cursor !== null)
          }
      }
      // The pages were served serialized (a clock-free body), not rebuilt each time.
      assert.isAbove(texts, 0)
    })
  )

  it.effect("concurrent rank calls while the tier is scanned share one scan", () =>
    Effect.gen(function* () {
      const store = makeMemoryMarketStore()
      yield* writeFixture(store, buildFixture(assets, END, 60, 7), END)
      let scans = 0
      // Every asset's extent lets other fibers run, as a long scan does; each scan reads the statuses once.
      const yielding: MarketStore["Service"] = {
        ...store,
        status: Effect.suspend(() => {
          scans++
          return store.status
        }),
        extent: (kind, assetId) => Effect.andThen(Effect.yieldNow, store.extent(kind, assetId))
      }
      const plane = yield* makeCryptoPlane.pipe(Effect.provideService(MarketStore, yielding))
      const { revision: _revision, seriesRevision: _seriesRevision, ...withoutRevision } = store
      const rebuilding = yield* makeCryptoPlane.pipe(Effect.provideService(MarketStore, withoutRevision))
      const now = END + 1000
      yield* TestClock.setTime(now)
      const params = [["limit", "50"] as const]
      const answers = yield* Effect.all(
        Array.from({ length: 6 }, () => callPlanes([plane], "rank", params, now)),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(scans, 1)
      const fresh = dataOf(yield* callPlanes([rebuilding], "rank", params, now))
      for (const a of answers) assert.deepStrictEqual(dataOf(a), fresh)
    })
  )

  it.effect("a write, however small, is never hidden by a remembered answer", () =>
    Effect.gen(function* () {
      const store = makeMemoryMarketStore()
      yield* writeFixture(store, buildFixture(assets, END, 60, 7), END)
      const call = yield* planeCaller(store)
      const now = END + 5 * 1000
      yield* TestClock.setTime(now)
      const before = (yield* call("price", [["id", "crypto:bitcoin"]], now)) as { usd: { value?: number } | number }
      // The newest bar's close moves by 1 %: nothing else changes, not even the statuses.
      const bars = (yield* store.latest("bars", { assetId: "crypto:bitcoin", n: 1 }))[0]
      assert.isDefined(bars)
      const b = bars as NonNullable<typeof bars>
      const close = (b.close[0] as number) * 1.01
      yield* store.write([
        {
          kind: "bars",
          assetId: "crypto:bitcoin",
          venue: b.venue,
          t: [b.t[0] as number],
          open: [b.open[0] as number],
          high: [Math.max(b.high[0] as number, close)],
          low: [b.low[0] as number],
          close: [close],
          volume: [b.volume[0] as number]
        }
      ])
      const after = yield* call("price", [["id", "crypto:bitcoin"]], now)
      assert.notDeepEqual(after, before)
    })
  )
})
