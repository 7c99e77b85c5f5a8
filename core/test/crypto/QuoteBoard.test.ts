/**
 * The streamed state (`QuoteBoard.ts`) in front of a store: the streamed top of book before the stored depth,
 * streamed funding states, statuses from the stream's health (live on its cadence, stale at once when it is down,
 * the REST status once the fallback delivered), silent symbols left to the stored book, and the revisions.
 */
import { assert, describe, it } from "@effect/vitest"
import {
  type BookSnapshot,
  composeBook,
  freshnessOf,
  makeQuoteBoard,
  type SourceStatus,
  STREAM_CADENCE_MS,
  STREAM_UPDATE_EVERY_MS,
  streamedStatus,
  withQuoteBoard
} from "@market-data/core"
import { makeMemoryMarketStore } from "@market-data/memory"
import { Effect } from "effect"
import { nextUpdateAtMs } from "../../src/crypto/Freshness.ts"

const T = 1_790_000_000_000
const stored: BookSnapshot = {
  assetId: "crypto:bitcoin",
  venue: "binance",
  t: T - 60_000,
  bids: [
    [100, 1],
    [99.5, 2],
    [99, 3]
  ],
  asks: [
    [100.5, 1],
    [101, 2],
    [101.5, 3]
  ]
}

describe("QuoteBoard", () => {
  it("puts the streamed top in front of the stored depth, never crossing it", () => {
    const b = composeBook(
      "crypto:bitcoin",
      "binance",
      stored,
      { t: T, bid: 100.2, bidSize: 4, ask: 101.2, askSize: 5 },
      T + 5
    )
    assert.deepStrictEqual(b.bids, [
      [100.2, 4],
      [100, 1],
      [99.5, 2],
      [99, 3]
    ])
    assert.deepStrictEqual(b.asks, [
      [101.2, 5],
      [101.5, 3]
    ])
    assert.strictEqual(b.t, T)
    assert.strictEqual(b.depthMs, stored.t)
    assert.strictEqual(b.confirmedMs, T + 5)
    // A stored book newer than the quote (the REST fallback) is served as it is.
    const older = composeBook(
      "crypto:bitcoin",
      "binance",
      stored,
      { t: T - 120_000, bid: 1, bidSize: 1, ask: 2, askSize: 1 },
      T
    )
    assert.strictEqual(older, stored)
  })

  it("keeps the newer event and merges ticker fields", () => {
    const board = makeQuoteBoard()
    board.applyQuote("a", "v", { t: 10, bid: 1, bidSize: 1, ask: 2, askSize: 1 })
    board.applyQuote("a", "v", { t: 9, bid: 5, bidSize: 1, ask: 6, askSize: 1 })
    assert.strictEqual(board.quote("a", "v")?.bid, 1)
    board.applyTicker("a", "v", { t: 10, mark: 1.5, fundingRate: 0.0001 })
    board.applyTicker("a", "v", { t: 11, index: 1.4 })
    assert.deepInclude(board.ticker("a", "v"), { t: 11, mark: 1.5, index: 1.4, fundingRate: 0.0001 })
    board.forget("a", "v")
    assert.isUndefined(board.quote("a", "v"))
    assert.deepStrictEqual(board.venuesOf("a"), [])
  })

  it("gives a streamed component's status from the stream's health", () => {
    const health = { components: ["books"] as const, up: true, newestMs: T, lastFrameMs: T + 10, sinceMs: T - 1_000 }
    const up = streamedStatus("binance", "books", health, undefined)
    assert.strictEqual(up.cadenceMs, STREAM_CADENCE_MS)
    assert.strictEqual(freshnessOf(up, T + 1_000), "live")
    assert.strictEqual(freshnessOf(up, T + 3 * STREAM_CADENCE_MS + 1), "stale")
    // The next update can come within a second (the stream pushes), whatever the freshness yardstick.
    assert.strictEqual(nextUpdateAtMs(up, T + 10), T + STREAM_UPDATE_EVERY_MS)
    // Down, and the REST fallback has not delivered since: failing at once, with the reason.
    const restBefore: SourceStatus = {
      source: "live",
      venue: "binance",
      component: "books",
      newestMs: T - 600_000,
      cadenceMs: 15 * 60_000,
      checkedMs: T - 600_000,
      failing: false
    }
    const down = { ...health, up: false, sinceMs: T + 20, reason: "connection closed (code 1006)" }
    const s = streamedStatus("binance", "books", down, restBefore)
    assert.isTrue(s.failing)
    assert.strictEqual(freshnessOf(s, T + 21), "stale")
    assert.match(s.lastError ?? "", /stream down since .*connection closed/)
    // Once REST delivered after the stream went down, its status is served (named as the fallback).
    const restAfter = { ...restBefore, newestMs: T + 30_000, cadenceMs: 60_000 }
    const f = streamedStatus("binance", "books", down, restAfter)
    assert.isFalse(f.failing)
    assert.strictEqual(f.newestMs, T + 30_000)
    assert.match(f.detail ?? "", /served from REST polling/)
  })

  it.effect("serves books, funding states and statuses through the decorator; silent symbols from the store", () =>
    Effect.gen(function* () {
      const store = makeMemoryMarketStore()
      yield* store.putBooks([stored])
      yield* store.putFundingStates([
        {
          assetId: "crypto:bitcoin",
          venue: "binance",
          t: T - 60_000,
          intervalMs: 8 * 3_600_000,
          nextFundingMs: T + 3_600_000,
          currentRate: 0.0001,
          predictedRate: 0.0001
        }
      ])
      const board = makeQuoteBoard()
      const served = withQuoteBoard(store, board)
      board.applyQuote("crypto:bitcoin", "binance", { t: T, bid: 100.2, bidSize: 4, ask: 100.4, askSize: 5 })
      board.applyTicker("crypto:bitcoin", "binance", { t: T, fundingRate: 0.0003, nextFundingMs: T + 3_600_000 })
      // No health yet: the stream is not serving; the stored book is answered.
      assert.strictEqual((yield* served.books("crypto:bitcoin"))[0]?.bids[0]?.[0], 100)
      const q0 = served.quotesRevision?.()
      board.setHealth("binance", {
        components: ["books", "fundingState"],
        up: true,
        newestMs: T,
        lastFrameMs: T,
        sinceMs: T
      })
      assert.notStrictEqual(served.quotesRevision?.(), q0)
      assert.strictEqual((yield* served.books("crypto:bitcoin"))[0]?.bids[0]?.[0], 100.2)
      assert.strictEqual((yield* served.fundingStates("crypto:bitcoin", "binance"))[0]?.currentRate, 0.0003)
      const statuses = yield* served.status
      assert.deepInclude(
        statuses.find((s) => s.component === "books"),
        { newestMs: T, cadenceMs: STREAM_CADENCE_MS }
      )
      // The store's revision does not move with quotes (series, rank and directory memos stay valid).
      const r = served.revision?.()
      board.applyQuote("crypto:bitcoin", "binance", { t: T + 1, bid: 100.3, bidSize: 4, ask: 100.4, askSize: 5 })
      assert.strictEqual(served.revision?.(), r)
      // A silent symbol is served from the stored book.
      board.setSilent("binance", new Set(["crypto:bitcoin"]))
      assert.strictEqual((yield* served.books("crypto:bitcoin"))[0]?.bids[0]?.[0], 100)
    })
  )
})
