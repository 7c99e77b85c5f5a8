/**
 * Liquidation stream faults (issue #29, points 2 and 8), on the shared connection manager: a fake Bybit public
 * linear endpoint (`allLiquidation.<symbol>`, answered as Bybit documents it) and the leader's liquidation stream
 * writing to a store, on the test clock over local sockets. Each fault: the `liquidations` status is typed while it
 * lasts (freshness `stale` with `last_error`), nothing is counted twice or in part, nothing crashes, and the status is
 * live again within 10 s of the venue recovering:
 * - the venue drops the connection;
 * - a half-open connection (no frames, no close);
 * - a subscription refused (one symbol: named while the others flow; every symbol: a typed `status` error);
 * - malformed and oversized frames (skipped whole, counted);
 * - the venue down for five minutes (every connection cut at once).
 */
import { assert, describe, it } from "@effect/vitest"
import { freshnessOf, MarketStore, type SourceStatus } from "@market-data/core"
import { Clock, Effect } from "effect"
import { TestClock } from "effect/testing"
import { makeMemoryMarketStore } from "../../adapters/memory/src/MemoryMarketStore.ts"
import { runLiquidationStream } from "../../adapters/sources/src/live/stream/Liquidation.ts"
import { emptyStats } from "../../adapters/sources/src/live/stream/MarketStream.ts"
import type { Instrument } from "../../adapters/sources/src/live/Venue.ts"
import { bybitLiquidationProtocol } from "../../adapters/sources/src/live/venues/bybit/Liquidations.ts"
import * as F from "../../adapters/sources/test/fixtures/liquidation_streams.ts"
import { realPause } from "../../adapters/sources/test/live/FakeServer.ts"
import { fakeWsServer } from "../../adapters/sources/test/live/FakeWsServer.ts"

const T0 = F.T0
const instruments: ReadonlyMap<string, Instrument> = new Map(
  (
    [
      ["BTCUSDT", "crypto:bitcoin"],
      ["ETHUSDT", "crypto:ethereum"]
    ] as const
  ).map(([symbol, assetId]) => [
    symbol,
    { assetId, venue: "bybit", symbol, tokensPerUnit: 1, tokensPerContract: 1, fundingIntervalMs: 8 * 3_600_000 }
  ])
)

/** A Bybit print frame: one long liquidated on `symbol` at `t`. */
const print = (symbol: string, t: number, v: string, p: string) => ({
  topic: `allLiquidation.${symbol}`,
  type: "snapshot",
  ts: t + 200,
  data: [{ T: t, s: symbol, S: "Buy", v, p }]
})

describe("liquidation streams under faults", () => {
  it.effect("drop, half-open, refusals, bad frames, five minutes down: typed while it lasts, live within 10 s", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(F.NOW_MS)
      const venue = { answer: true, refuse: new Set<string>() }
      const server = yield* fakeWsServer((frame) => {
        const f = frame as { op?: string; req_id?: string; args?: ReadonlyArray<string> }
        if (f.op === "ping") return venue.answer ? F.bybitPong : undefined
        if (f.op !== "subscribe") return undefined
        const refused = (f.args ?? []).find((t) => venue.refuse.has(t.split(".")[1] ?? ""))
        return refused === undefined ? F.bybitSubscribed(f.req_id ?? "") : F.bybitRefused(f.req_id ?? "", refused)
      })
      const store = makeMemoryMarketStore()
      const stats = emptyStats()
      yield* Effect.forkScoped(
        runLiquidationStream(bybitLiquidationProtocol, {
          baseUrl: server.url,
          instruments: () => instruments,
          timeoutMs: 5_000,
          flushEveryMs: 1_000,
          stats,
          stream: { refusedRetryMs: 20_000 }
        }).pipe(Effect.provideService(MarketStore, store))
      )
      const status = Effect.map(store.status, (all) => all.find((s) => s.component === "liquidations"))
      const btcRows = Effect.map(
        store.read("liquidations", { assetId: "crypto:bitcoin", venue: "bybit", fromMs: 0, toMs: T0 + 86_400_000 }),
        (series) => Array.from(series[0]?.longUsd ?? [])
      )
      /** Moves the clock in steps (real I/O between them) until `condition` holds; the test-clock time it took. */
      const until = (condition: Effect.Effect<boolean>, stepMs = 200, maxMs = 120_000) =>
        Effect.gen(function* () {
          const start = yield* Clock.currentTimeMillis
          for (let waited = 0; waited <= maxMs; waited += stepMs) {
            if (yield* condition) return (yield* Clock.currentTimeMillis) - start
            yield* TestClock.adjust(stepMs)
            yield* realPause(5)
          }
          return Number.POSITIVE_INFINITY
        })
      const live = Effect.map(status, (s) => s !== undefined && !s.failing)
      const failing = Effect.map(status, (s) => s?.failing === true)
      /** Typed while it lasts: failing, stale at once, with the reason's kind. */
      const typed = (kind: RegExp) =>
        Effect.gen(function* () {
          const s = (yield* status) as SourceStatus
          const nowMs = yield* Clock.currentTimeMillis
          assert.isTrue(s.failing)
          assert.strictEqual(freshnessOf(s, nowMs), "stale")
          assert.match(s.lastError ?? "", kind)
        })

      assert.isAtMost(yield* until(live), 10_000, "subscribed")
      server.broadcast(print("BTCUSDT", T0 + 1_000, "1", "90000"))
      assert.isAtMost(yield* until(Effect.map(btcRows, (r) => r[0] === 90_000)), 10_000)

      // 1. The venue drops the connection: failing at once (network), live again within 10 s of reconnecting.
      server.dropAll()
      assert.isAtMost(yield* until(failing, 50), 1_000)
      yield* typed(/^network: .*connection closed/)
      assert.isAtMost(yield* until(live), 10_000, "live again within 10 s")

      // 2. Half-open: the venue stops answering (no frames, no close): dead after its 30 s silence, replaced.
      venue.answer = false
      assert.isAtMost(yield* until(failing, 500), 45_000)
      yield* typed(/^timeout: .*half-open link/)
      venue.answer = true
      assert.isAtMost(yield* until(live), 10_000, "live again within 10 s")

      // 3. One symbol refused (after a reconnect): named in the detail, the others flow; then every symbol refused:
      // a typed refusal; live again within 10 s of the venue accepting (its next ask, every 20 s here).
      venue.refuse.add("ETHUSDT")
      server.dropAll()
      assert.isAtMost(yield* until(failing, 50), 1_000)
      assert.isAtMost(
        yield* until(Effect.map(status, (s) => s?.failing === false && (s.detail ?? "").includes("ETHUSDT"))),
        10_000
      )
      venue.refuse.add("BTCUSDT")
      server.dropAll()
      assert.isAtMost(
        yield* until(Effect.map(status, (s) => (s?.lastError ?? "").includes("subscription refused"))),
        10_000
      )
      yield* typed(/^status: subscribe: subscription refused: Invalid topic/)
      venue.refuse.clear()
      assert.isAtMost(yield* until(live), 30_000, "asked again at the refusal retry")

      // 4. Malformed and oversized frames are skipped whole and counted; a good frame after them counts once.
      const malformedBefore = stats.malformed
      server.broadcast('{"topic":"allLiquidation.BTCUSDT","data":[{"T":1')
      server.broadcast({ ...print("BTCUSDT", T0 + 2_000, "x", "90000") })
      server.broadcast(`{"pad":"${"x".repeat(4_100_000)}"}`)
      server.broadcast(print("BTCUSDT", T0 + 3_000, "1", "91000"))
      assert.isAtMost(yield* until(Effect.map(btcRows, (r) => r[0] === 90_000 + 91_000)), 10_000)
      assert.strictEqual(stats.malformed - malformedBefore, 3)

      // 5. The venue down for five minutes (every connection cut as it is accepted): failing the whole time, never a
      // storm (backoff capped at 8 s with jitter: far fewer connects than the 300 seconds), then live within 10 s.
      const connectsBefore = stats.connects
      server.setDown(true)
      server.dropAll()
      for (let k = 0; k < 300; k++) {
        yield* TestClock.adjust(1_000)
        yield* realPause(5)
        if (k > 2) assert.isTrue(yield* failing, `failing at ${k} s`)
      }
      server.setDown(false)
      assert.isAtMost(stats.connects - connectsBefore, 80, "reconnects paced by the backoff")
      assert.isAtMost(yield* until(live), 10_000, "live within 10 s of the venue's return")
      // Nothing counted twice across all of it.
      assert.deepStrictEqual(yield* btcRows, [90_000 + 91_000])
    }).pipe(Effect.scoped)
  )
})
