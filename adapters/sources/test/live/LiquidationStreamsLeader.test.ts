/**
 * The liquidation streams run with the other ingestion jobs, on the leader only: of two instances sharing one
 * leader lock, only the leader connects to the venue's websocket and records the stream's health; when it steps
 * down (its scope closes) the other connects. `coverage` reports the stream as one of the asset's sources: live
 * while subscribed, stale with the error once the connection drops.
 */
import { assert, describe, it } from "@effect/vitest"
import { coverageSource, sourcesOf } from "@market-data/core"
import { Effect, Exit, Scope } from "effect"
import { makeMemoryEquityStore } from "../../../memory/src/MemoryEquityStore.ts"
import { makeMemoryLeaderLock } from "../../../memory/src/MemoryLeaderLock.ts"
import { makeMemoryMarketStore } from "../../../memory/src/MemoryMarketStore.ts"
import { type LiveConfig, liveConfig } from "../../src/live/LiveConfig.ts"
import { startLiveFeeds } from "../../src/live/LiveFeeds.ts"
import * as F from "../fixtures/liquidation_streams.ts"
import { eventually, fakeServer } from "./FakeServer.ts"
import { fakeWsServer } from "./FakeWsServer.ts"

describe("liquidation streams under the leader lock", () => {
  it.live("only the leader streams; the other instance takes over when it stops; coverage reports the stream", () =>
    Effect.gen(function* () {
      // REST answers 503 to everything (those components fail); the websocket is a Bybit that accepts everything.
      const rest = yield* fakeServer(() => ({ status: 503, text: "down" }))
      const ws = yield* fakeWsServer((frame) => {
        const f = frame as { op?: string; req_id?: string }
        if (f.op === "subscribe") return F.bybitSubscribed(f.req_id ?? "")
        if (f.op === "ping") return F.bybitPong
        return undefined
      })
      const u = rest.url
      const config = (instanceId: string): LiveConfig =>
        liveConfig({
          secUserAgent: "Market Data Tests tests@example.com",
          venues: ["bybit"],
          baseUrls: { binance: u, bybit: u, okx: u, hyperliquid: u, secData: u, secArchives: u, prices: u },
          wsBaseUrls: { bybit: ws.url },
          secCiks: [],
          sec13fFilers: [],
          backfillDays: 1,
          requestTimeoutMs: 1_000,
          jitterMs: 0,
          // Long enough that a stall of the loaded test machine (renewals every lease / 3) does not lapse the
          // leader's lease and let the other instance stream too; short enough that the takeover after the
          // leader's release (at the other's next attempt, lease / 3) stays well within `eventually`.
          leaderLeaseMs: 3_000,
          instanceId
        })
      const lock = makeMemoryLeaderLock()
      const instance = (id: string) =>
        Effect.gen(function* () {
          const market = makeMemoryMarketStore()
          const scope = yield* Scope.make()
          yield* startLiveFeeds({ market, equity: makeMemoryEquityStore(), config: config(id), leader: lock }).pipe(
            Scope.provide(scope)
          )
          const liquidations = Effect.map(market.status, (all) =>
            all.find((s) => s.venue === "bybit" && s.component === "liquidations")
          )
          return { market, scope, liquidations }
        })

      const a = yield* instance("a")
      const b = yield* instance("b")
      assert.isTrue(yield* eventually(() => Effect.map(a.liquidations, (s) => s !== undefined && !s.failing)))
      assert.strictEqual(ws.connections.length, 1, "one stream: the leader's")
      assert.strictEqual(ws.connections[0]?.path, "/v5/public/linear")
      assert.isUndefined(yield* b.liquidations, "the other instance does not stream")

      // coverage?id=crypto:bitcoin lists the stream among the asset's sources, live.
      const nowMs = Date.now()
      const rows = sourcesOf({ asset_id: "crypto:bitcoin", plane: "crypto" }, yield* a.market.status, nowMs)
      const row = rows.find((r) => r.venue === "bybit" && r.component === "liquidations")
      assert.deepInclude(row, { source: "live", status: "live" })
      assert.isUndefined(row?.error)

      // The venue drops the connection: the stream's component turns stale with the error, until it reconnects.
      const dropped = Date.now()
      ws.dropAll()
      assert.isTrue(yield* eventually(() => Effect.map(a.liquidations, (s) => s?.failing === true)))
      const down = coverageSource(
        (yield* a.liquidations) as NonNullable<Effect.Success<typeof a.liquidations>>,
        dropped
      )
      assert.strictEqual(down.status, "stale")
      assert.include(down.error ?? "", "connection closed")
      assert.isTrue(yield* eventually(() => Effect.map(a.liquidations, (s) => s?.failing === false)))
      assert.strictEqual(ws.connections.length, 2, "the leader reconnected")

      // The leader stops: its stream closes, and the other instance connects and streams.
      yield* Scope.close(a.scope, Exit.void)
      assert.isTrue(yield* eventually(() => Effect.map(b.liquidations, (s) => s !== undefined && !s.failing)))
      assert.strictEqual(ws.open(), 1, "only the new leader's stream is open")
      yield* Scope.close(b.scope, Exit.void)
    }).pipe(Effect.scoped)
  )
})
