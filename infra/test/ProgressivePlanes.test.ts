/**
 * The progressive start `serve` uses (`openPlanes(..., { progressive: true })`): the simulated market is generated
 * in the background, asset by asset. Before an asset is ready its crypto operations answer `503
 * source_unavailable` with `Retry-After: 1` (and `rank` until every asset is); once ready, every answer is the
 * one the blocking start gives at the same instant (same seed, same clock), although the progressive start drops
 * the dense series the plane no longer reads once an asset is sampled.
 */
import { assert, describe, it } from "@effect/vitest"
import type { PlaneOperations } from "@market-data/core"
import { Effect, Exit, References } from "effect"
import { TestClock } from "effect/testing"
import { callPlanes } from "../../core/test/support/PlaneCall.ts"
import { testConfig } from "../../test/support/server.ts"
import { openPlanes } from "../src/Planes.ts"
import { openStores } from "../src/Stores.ts"

/** A fixed instant inside a 15-minute bar, so neither start's ticker steps during the test. */
const NOW = Date.UTC(2026, 10, 23, 8, 7, 30)

const LATER = "26 hours"
const LATER_MS = 26 * 3_600_000

const call = (
  planes: ReadonlyArray<PlaneOperations>,
  name: string,
  params: ReadonlyArray<readonly [string, string]>,
  nowMs = NOW
) => Effect.exit(callPlanes(planes, name, params, nowMs))

/** Calls a user might make first, across the operations and assets (a pegged one, a token without perps). */
const CALLS: ReadonlyArray<readonly [string, ReadonlyArray<readonly [string, string]>]> = [
  ["price", [["id", "crypto:bitcoin"]]],
  ["read", [["ids", "crypto:bitcoin,crypto:ethereum,crypto:monero"]]],
  ["price", [["id", "crypto:wrapped-bitcoin"]]],
  ["funding", [["id", "crypto:solana"]]],
  ["open_interest", [["id", "crypto:xrp"]]],
  ["orderflow", [["id", "crypto:dogecoin"]]],
  ["liquidations", [["id", "crypto:ethereum"]]],
  ["liquidity", [["id", "crypto:bnb"]]],
  ["technicals", [["id", "crypto:cardano"]]],
  ["structure", [["id", "crypto:hyperliquid"]]],
  [
    "series",
    [
      ["id", "crypto:bitcoin"],
      ["interval", "1h"],
      ["range", "1mo"]
    ]
  ],
  ["rank", [["limit", "50"]]]
]

const answers = (planes: ReadonlyArray<PlaneOperations>, nowMs = NOW) =>
  Effect.forEach(CALLS, ([name, params]) =>
    Effect.map(call(planes, name, params, nowMs), (exit) =>
      Exit.isSuccess(exit) ? JSON.stringify(exit.value) : assert.fail(`${name} failed: ${String(exit.cause)}`)
    )
  )

const quiet = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, References.MinimumLogLevel, "None")

describe("progressive start of the simulated planes", () => {
  it.effect(
    "answers 503 source_unavailable (Retry-After 1) until an asset is generated, then what the blocking start answers, also a day on",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const config = testConfig({ seed: 20261123 })
        const blocking = yield* Effect.scoped(
          Effect.gen(function* () {
            const planes = yield* openPlanes(config, yield* openStores(config))
            const first = yield* answers(planes.planes)
            yield* TestClock.adjust(LATER)
            return [first, yield* answers(planes.planes, NOW + LATER_MS)] as const
          })
        ).pipe(quiet)

        yield* TestClock.setTime(NOW)
        const progressive = yield* Effect.scoped(
          Effect.gen(function* () {
            const opened = yield* openPlanes(config, yield* openStores(config), { progressive: true })
            // Nothing generated yet: the background fiber has not run.
            for (const [name, params] of [
              ["price", [["id", "crypto:bitcoin"]]],
              ["rank", [["limit", "5"]]],
              ["series", [["id", "crypto:monero"]]]
            ] as const) {
              const exit = yield* call(opened.planes, name, params)
              assert.isTrue(Exit.isFailure(exit), `${name} answered before the market was generated`)
              const error = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
              const e = (error as { error?: { code?: string; retryAfterSeconds?: number } } | undefined)?.error
              assert.strictEqual(e?.code, "source_unavailable")
              assert.strictEqual(e?.retryAfterSeconds, 1)
            }
            // Free discovery answers at once: the directory knows every asset.
            assert.isTrue((yield* opened.planes[0]?.directory ?? Effect.succeed([])).length > 30)
            // Bitcoin comes first: it answers while later assets are still being generated.
            let sawPartial = false
            for (let i = 0; i < 100_000; i++) {
              const btc = yield* call(opened.planes, "price", [["id", "crypto:bitcoin"]])
              const rank = yield* call(opened.planes, "rank", [["limit", "5"]])
              if (Exit.isSuccess(btc) && Exit.isFailure(rank)) sawPartial = true
              if (Exit.isSuccess(rank)) break
              yield* Effect.yieldNow
            }
            assert.isTrue(sawPartial, "bitcoin never answered before the whole market was ready")
            // What the plane no longer reads was dropped (the blocking start keeps 120 days).
            for (const kind of ["markIndex", "openInterest", "takerFlow", "bookMetrics"] as const) {
              const extent = yield* opened.market.extent(kind, "crypto:bitcoin")
              assert.isAbove(extent.length, 0)
              for (const e of extent) assert.isAtLeast(e.firstMs, NOW - 10 * 86_400_000)
            }
            const first = yield* answers(opened.planes)
            // A day and two hours on: the baselines advance over the kept rows and the ticker's new ones, and the
            // daily trim has run.
            yield* TestClock.adjust(LATER)
            const later = yield* answers(opened.planes, NOW + LATER_MS)
            for (const e of yield* opened.market.extent("takerFlow", "crypto:ethereum")) {
              assert.isAtLeast(e.firstMs, NOW + 86_400_000 - 10 * 86_400_000)
              assert.isAtLeast(e.lastMs, NOW + LATER_MS - 30 * 60_000)
            }
            return [first, later] as const
          })
        ).pipe(quiet)

        for (const at of [0, 1] as const) {
          const [mine, theirs] = [progressive[at], blocking[at]]
          assert.strictEqual(mine.length, CALLS.length)
          CALLS.forEach(([name], i) => {
            assert.strictEqual(
              mine[i],
              theirs[i],
              `${name} differs between the progressive and blocking starts${at === 1 ? " a day and two hours on" : ""}`
            )
          })
        }
        // The answers did move in those hours (the comparison is not of frozen results).
        assert.notStrictEqual(blocking[1][0], blocking[0][0])
      }),
    120_000
  )
})
