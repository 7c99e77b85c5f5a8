/**
 * Freshness of streamed components per asset (issue #29): a symbol a venue's stream does not serve while it serves
 * the others (silent or refused) reads its own REST book's time and the REST job's cadence, not the stream's health; and `price`, which quotes the
 * primary venue's book, is judged by that venue alone, so another venue's outage leaves it `live` (what reads every
 * venue, such as `liquidity`, says `stale`). Open interest a venue streams is answered from the stream (its row,
 * the total, `as_of`), the 24 h change from the stored snapshots.
 */
import { assert, describe, it } from "@effect/vitest"
import { makeMemoryMarketStore } from "@market-data/memory"
import { Effect } from "effect"
import { cryptoAsset } from "../../src/crypto/Assets.ts"
import { makeCryptoPlane } from "../../src/crypto/CryptoPlane.ts"
import { type BookSnapshot, MarketStore, type SourceStatus } from "../../src/crypto/Market.ts"
import { assetStatusesOf, makeQuoteBoard, STREAM_CADENCE_MS, withQuoteBoard } from "../../src/crypto/QuoteBoard.ts"
import { callPlanes, dataOf } from "../support/PlaneCall.ts"
import { buildFixture, writeFixture } from "./support/MarketFixture.ts"

const END = Date.UTC(2026, 10, 20, 12, 0)
const BTC = "crypto:bitcoin"
const asset = cryptoAsset(BTC) as NonNullable<ReturnType<typeof cryptoAsset>>
const primary = asset.listings[0]?.venue as string
const other = asset.listings.find((l) => l.venue !== primary)?.venue as string

const up = (t: number) => ({
  components: ["books", "fundingState"] as const,
  up: true,
  newestMs: t,
  lastFrameMs: t,
  sinceMs: t - 60_000
})

describe("streamed freshness per asset and per quoted venue", () => {
  it.effect("price follows the primary venue's stream; a silent symbol reads its REST book's time", () =>
    Effect.gen(function* () {
      assert.isDefined(other, "bitcoin is listed on more than one venue")
      const store = makeMemoryMarketStore()
      yield* writeFixture(store, buildFixture([asset], END, 10, 3), END)
      // The REST books job: every minute.
      yield* store.putStatus(
        (yield* store.status)
          .filter((s) => s.component === "books")
          .map((s) => ({ ...s, cadenceMs: 60_000, newestMs: END - 1 }))
      )
      const board = makeQuoteBoard()
      const served = withQuoteBoard(store, board)
      const plane = yield* makeCryptoPlane.pipe(Effect.provideService(MarketStore, served))
      const call = (name: string, nowMs: number) =>
        Effect.map(callPlanes([plane], name, [["id", BTC]], nowMs), (o) =>
          dataOf<{ status: string; as_of: string; bid_usd: number | null }>(o)
        )
      const now = END + 30_000
      board.setHealth(primary, up(now - 100))
      board.applyQuote(BTC, primary, { t: now - 100, bid: 99, bidSize: 1, ask: 101, askSize: 1 })
      // Another venue's stream is down, and its REST fallback has not delivered since.
      board.setHealth(other, {
        ...up(now - 40_000),
        up: false,
        sinceMs: now - 20_000,
        reason: "connection closed (code 1006)"
      })
      const price = yield* call("price", now)
      assert.strictEqual(price.status, "live", "the other venue's outage does not touch price")
      assert.strictEqual(price.bid_usd, 99)
      assert.strictEqual((yield* call("liquidity", now)).status, "stale", "liquidity reads every venue's books")

      // The primary's stream goes silent on bitcoin: its book is polled over REST, and price reads that poll (the
      // fixture's, at END - 1), not the stream.
      // Silent since just before the fixture's REST poll (END - 1): that poll is the REST fallback's.
      board.setSilent(primary, new Set([BTC]), END - 10_000)
      const later = END - 1 + 150_000
      const silent = yield* call("price", later)
      assert.strictEqual(silent.status, "delayed", "a REST book 2.5 minutes old on a 1-minute cadence")
      const restBook = (yield* store.books(BTC, primary))[0] as BookSnapshot
      yield* store.putBooks([{ ...restBook, t: later - 10_000 }])
      assert.strictEqual((yield* call("price", later)).status, "live")
      const statuses = yield* Effect.flatMap(served.status, (all) =>
        (served.assetStatuses as NonNullable<typeof served.assetStatuses>)(BTC, all)
      )
      const books = statuses.find((s) => s.venue === primary && s.component === "books")
      assert.deepInclude(books, { newestMs: later - 10_000, cadenceMs: 60_000, failing: false })
      assert.match(books?.detail ?? "", /not served this symbol since .*; served from REST polling/)
      // Silent again from a moment after the last REST poll: nothing fresh is held for it until the next.
      board.setSilent(primary, new Set())
      board.setSilent(primary, new Set([BTC]), later - 5_000)
      assert.strictEqual((yield* call("price", later)).status, "stale")
      // Every other asset on the venue still reads the stream.
      const venueWide = (yield* served.status).find((s) => s.venue === primary && s.component === "books")
      assert.strictEqual(venueWide?.cadenceMs, STREAM_CADENCE_MS)
    })
  )

  it.effect("only the primary venue's bars are read: technicals, structure, series and read are judged by them", () =>
    Effect.gen(function* () {
      const store = makeMemoryMarketStore()
      yield* writeFixture(store, buildFixture([asset], END, 10, 3), END)
      const plane = yield* makeCryptoPlane.pipe(Effect.provideService(MarketStore, store))
      type Judged = { status: string; unavailable?: Readonly<Record<string, { reason: string }>> }
      const call = (name: string, params: ReadonlyArray<readonly [string, string]>, nowMs: number) =>
        Effect.map(callPlanes([plane], name, [["id", BTC], ...params], nowMs), (o) => dataOf<Judged>(o))
      const ops = [
        ["technicals", [["timeframe", "1h"]]],
        ["structure", []],
        [
          "series",
          [
            ["interval", "1h"],
            ["range", "1w"]
          ]
        ]
      ] as const
      const now = END + 30_000
      const before = new Map<string, Judged>()
      for (const [op, params] of ops) before.set(op, yield* call(op, params, now))
      const readBefore = yield* call("read", [], now)
      assert.notStrictEqual(readBefore.status, "stale")
      // The other venue's bars fail (its REST kline job errs since before `now`).
      const all = yield* store.status
      yield* store.putStatus(
        all
          .filter((s) => s.venue === other && s.component === "bars")
          .map((s) => ({ ...s, failing: true, checkedMs: now - 1_000, detail: "HTTP 503", lastError: "HTTP 503" }))
      )
      assert.isTrue((yield* store.status).some((s) => s.venue === other && s.component === "bars" && s.failing))
      for (const [op, params] of ops) {
        const after = yield* call(op, params, now + 1)
        assert.strictEqual(after.status, before.get(op)?.status, `${op}: another venue's bars do not touch it`)
        assert.notStrictEqual(after.status, "stale", op)
        assert.isFalse(
          Object.values(after.unavailable ?? {}).some((u) => u.reason === "source_down"),
          `${op}: no failing source blamed`
        )
      }
      // No answer reads another venue's bars: `read` (which reads every venue's funding and open interest) neither.
      assert.strictEqual((yield* call("read", [], now + 1)).status, readBefore.status, "read reads the primary's bars")
      // But it reads every venue's funding: the other venue's failing funding job shows there.
      yield* store.putStatus(
        (yield* store.status)
          .filter((s) => s.venue === other && s.component === "funding")
          .map((s) => ({ ...s, failing: true, checkedMs: now - 1_000, detail: "HTTP 503", lastError: "HTTP 503" }))
      )
      assert.strictEqual((yield* call("read", [], now + 2)).status, "stale", "read reads every venue's funding")
    })
  )

  it.effect("open interest: a streaming venue's row is its streamed value, as of the stream's event time", () =>
    Effect.gen(function* () {
      const store = makeMemoryMarketStore()
      yield* writeFixture(store, buildFixture([asset], END, 10, 3), END)
      const board = makeQuoteBoard()
      const plane = yield* makeCryptoPlane.pipe(Effect.provideService(MarketStore, withQuoteBoard(store, board)))
      type Oi = {
        as_of: string
        status: string
        usd: number
        change_24h_pct: unknown
        by_venue: Array<{ venue: string; usd: number; venue_counts?: string }>
      }
      const call = (nowMs: number) =>
        Effect.map(callPlanes([plane], "open_interest", [["id", BTC]], nowMs), (o) => dataOf<Oi>(o))
      // The bar forming since END (as the live feeds write it), so the data runs to now.
      const last = (yield* store.latest("bars", { assetId: BTC, venue: primary, n: 1 }))[0]
      const close = last?.close[0] as number
      yield* store.write([
        {
          kind: "bars",
          assetId: BTC,
          venue: primary,
          t: [END],
          open: [close],
          high: [close],
          low: [close],
          close: [close],
          volume: [1]
        }
      ])
      const now = END + 40_000
      const before = yield* call(now)
      assert.strictEqual(before.as_of, new Date(END - 1).toISOString(), "the snapshots' time")
      const stored = before.by_venue.find((r) => r.venue === other)
      assert.isDefined(stored, "the fixture has a snapshot on the other venue")
      // The other venue streams open interest (one side, normalized by its parser); its stream is up.
      board.setHealth(other, up(now - 200))
      board.applyQuote(BTC, other, { t: now - 200, bid: 99, bidSize: 1, ask: 101, askSize: 1 })
      board.applyTicker(BTC, other, { t: now - 300, mark: 100, oiUsd: 1_234_567_800 })
      const after = yield* call(now)
      const row = after.by_venue.find((r) => r.venue === other)
      assert.strictEqual(row?.usd, 1_234_567_800)
      assert.deepStrictEqual(
        after.by_venue.map((r) => r.venue),
        before.by_venue.map((r) => r.venue)
      )
      const others = before.by_venue.filter((r) => r.venue !== other).reduce((sum, r) => sum + r.usd, 0)
      assert.approximately(after.usd, others + 1_234_567_800, 1)
      // As of the stream's newest event, live on its cadence; the 24 h change stays the snapshots'.
      assert.strictEqual(after.as_of, new Date(now - 200).toISOString())
      assert.strictEqual(after.status, "live")
      assert.deepStrictEqual(after.change_24h_pct, before.change_24h_pct)
      // The stream goes down: the row is the stored snapshot again.
      board.setHealth(other, { ...up(now - 200), up: false, sinceMs: now - 100, reason: "closed" })
      assert.deepStrictEqual((yield* call(now)).by_venue, before.by_venue)
    })
  )

  it("a refused or silent symbol reads its REST book; a venue without the asset, or a stream down, keeps the venue's", () => {
    const board = makeQuoteBoard()
    const T = END
    const overlaid: SourceStatus = {
      source: "live",
      venue: "binance",
      component: "books",
      newestMs: T + 20_000,
      cadenceMs: 60_000,
      checkedMs: T + 20_000,
      failing: false,
      detail: "stream down; served from REST polling"
    }
    const { detail: _detail, ...rest0 } = overlaid
    const rest: ReadonlyArray<SourceStatus> = [rest0]
    const book = (t: number) => [{ assetId: "a", venue: "binance", t, bids: [], asks: [] }]
    // Served by the stream, but the REST book fetched while it was down is newer than the last quote: that book's
    // time, on the stream's cadence, until the next quote.
    board.setHealth("binance", up(T + 30_000))
    board.applyQuote("a", "binance", { t: T, bid: 1, bidSize: 1, ask: 2, askSize: 1 })
    const streamed: SourceStatus = { ...overlaid, newestMs: T + 30_000, cadenceMs: 5_000 }
    const behind = assetStatusesOf(board, "a", [streamed], rest, book(T + 20_000), undefined)[0]
    assert.deepInclude(behind, { newestMs: T + 20_000, cadenceMs: 5_000, failing: false })
    assert.strictEqual(assetStatusesOf(board, "a", [streamed], rest, book(T - 1), undefined)[0], streamed)
    // Served again after a reconnect (silent from T + 1 s to T + 25 s) with no quote since: the old quote's time.
    board.setSilent("binance", new Set(["a"]), T + 1_000)
    board.setSilent("binance", new Set(), T + 25_000)
    assert.deepInclude(assetStatusesOf(board, "a", [streamed], rest, book(T - 1), undefined)[0], { newestMs: T })
    board.applyQuote("a", "binance", { t: T + 26_000, bid: 1, bidSize: 1, ask: 2, askSize: 1 })
    assert.strictEqual(assetStatusesOf(board, "a", [streamed], rest, book(T - 1), undefined)[0], streamed)
    board.forget("a", "binance")
    // Down: every book of the venue is polled, and the venue's status says so.
    board.setHealth("binance", { ...up(T), up: false, sinceMs: T + 1_000, reason: "silent for 30 s" })
    assert.strictEqual(assetStatusesOf(board, "a", [overlaid], rest, book(T - 60_000), undefined)[0], overlaid)
    // A refused symbol (the stream is up, no quote for it): its REST book's time.
    board.setHealth("binance", up(T))
    const refused = assetStatusesOf(board, "a", [overlaid], rest, book(T - 30_000), undefined)[0]
    assert.deepInclude(refused, { newestMs: T - 30_000, cadenceMs: 60_000, failing: false })
    assert.match(refused?.detail ?? "", /does not serve this symbol/)
    // Nothing of the asset on the venue, streamed or polled (a spot listing): the venue's status stands.
    assert.strictEqual(assetStatusesOf(board, "a", [overlaid], rest, [], undefined)[0], overlaid)
    // Known to the stream, silent since T - 10 s, and not polled over REST since: stale, saying so; then polled.
    board.applyQuote("a", "binance", { t: T - 90_000, bid: 1, bidSize: 1, ask: 2, askSize: 1 })
    board.setSilent("binance", new Set(["a"]), T - 10_000)
    const silent = assetStatusesOf(board, "a", [overlaid], rest, book(T - 60_000), undefined)[0]
    assert.deepInclude(silent, { newestMs: T - 60_000, failing: true })
    assert.match(silent?.lastError ?? "", /not served this symbol since .*; not fetched over REST since/)
    const polled = assetStatusesOf(board, "a", [overlaid], rest, book(T - 2_000), undefined)[0]
    assert.deepInclude(polled, { newestMs: T - 2_000, failing: false })
  })
})
