/**
 * The simulated default at production scale (`MARKET_DATA_SIM_UNIVERSE=market`, the default of `serve`): the planes serve
 * the simulated venues' 400-odd assets (`makeSimulatedUniverse`), not the 35 of the hand-written registry, and
 * the market generated for them is the one served.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, References } from "effect"
import { TestClock } from "effect/testing"
import { directoryHandlers } from "../../core/src/Discovery.ts"
import { decodeParams, isApiError } from "../../core/src/Params.ts"
import type { Handler } from "../../core/src/Pipeline.ts"
import { operation } from "../../core/src/Registry.ts"
import { callPlanes, dataOf } from "../../core/test/support/PlaneCall.ts"
import { testConfig } from "../../test/support/server.ts"
import { loadConfig } from "../src/AppConfig.ts"
import { openPlanes } from "../src/Planes.ts"
import { openStores } from "../src/Stores.ts"

const NOW = Date.UTC(2026, 10, 23, 8, 7, 30)

/** Calls `resolve` or `coverage` as the pipeline would after authentication. */
const callDirectory = (handlers: ReadonlyMap<string, Handler>, name: string, params: ReadonlyArray<[string, string]>) =>
  Effect.suspend(() => {
    const op = operation(name)
    if (op === undefined) return assert.fail(`no operation ${name}`)
    const decoded = decodeParams(op, params)
    if (isApiError(decoded)) return assert.fail(decoded.message)
    const handler = handlers.get(name)
    if (handler === undefined) return assert.fail(`no handler for ${name}`)
    return Effect.map(
      handler({
        op,
        params: decoded,
        principal: { _tag: "Anonymous", client: "test", rateLimitPerMinute: 60 },
        rate: { limit: 60, remaining: 59, resetAtMs: NOW, allowed: true },
        nowMs: NOW
      }),
      dataOf
    )
  })

describe("the simulated market at production scale", () => {
  it.effect("is the default of serve; MARKET_DATA_SIM_UNIVERSE=registry picks the 35-asset registry", () =>
    Effect.gen(function* () {
      const read = (env: Record<string, string>) =>
        loadConfig.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env))))
      assert.strictEqual((yield* read({})).simulatedUniverse, "market")
      assert.strictEqual((yield* read({ MARKET_DATA_SIM_UNIVERSE: "market" })).simulatedUniverse, "market")
      assert.strictEqual((yield* read({ MARKET_DATA_SIM_UNIVERSE: "registry" })).simulatedUniverse, "registry")
      const bad = yield* Effect.exit(read({ MARKET_DATA_SIM_UNIVERSE: "everything" }))
      assert.isTrue(Exit.isFailure(bad))
    })
  )

  it.effect(
    "coverage lists over 400 crypto assets, over 200 core; resolve finds bundle symbols and contests collisions; answers as each asset is generated",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const config = testConfig({ seed: 20261123, simulatedUniverse: "market" })
        yield* Effect.scoped(
          Effect.gen(function* () {
            const opened = yield* openPlanes(config, yield* openStores(config), { progressive: true })
            const crypto = opened.planes.find((p) => p.plane === "crypto")
            const directory = yield* crypto?.directory ?? Effect.succeed([])
            assert.isAtLeast(directory.length, 400)
            assert.isAtLeast(directory.filter((e) => e.tier === "core").length, 200)
            const gmx = directory.filter((e) => e.symbol === "GMX")
            assert.strictEqual(gmx.length, 2)
            // What clients see, through `coverage` (every page of the crypto browse) and `resolve`.
            const discovery = directoryHandlers(opened.planes)
            const ids: Array<string> = []
            let cursor: string | null = null
            do {
              const page = (yield* callDirectory(discovery, "coverage", [
                ["plane", "crypto"],
                ["limit", "500"],
                ...(cursor === null ? [] : [["cursor", cursor] as [string, string]])
              ])) as { rows: ReadonlyArray<{ asset_id: string }>; next_cursor: string | null }
              ids.push(...page.rows.map((r) => r.asset_id))
              cursor = page.next_cursor
            } while (cursor !== null)
            assert.isAtLeast(new Set(ids).size, 400)
            type Resolved = {
              best: { asset_id: string } | null
              matches: ReadonlyArray<{ asset_id: string; warnings: ReadonlyArray<{ code: string }> }>
            }
            const resolve = (q: string) =>
              Effect.map(callDirectory(discovery, "resolve", [["q", q]]), (d) => d as Resolved)
            for (const q of ["1000PEPEUSDT", "kPEPE"])
              assert.strictEqual((yield* resolve(q)).best?.asset_id, "crypto:pepe", q)
            const contested = yield* resolve("GMX")
            assert.isNull(contested.best)
            assert.includeMembers(
              contested.matches.map((m) => m.asset_id),
              gmx.map((e) => e.asset_id)
            )
            for (const m of contested.matches.filter((x) => gmx.some((e) => e.asset_id === x.asset_id)))
              assert.include(
                m.warnings.map((w) => w.code),
                "symbol_collision"
              )
            // Bitcoin is generated first and answers at its simulated late-2025 level.
            let price: unknown
            for (let i = 0; i < 100_000 && price === undefined; i++) {
              const exit = yield* Effect.exit(callPlanes(opened.planes, "price", [["id", "crypto:bitcoin"]], NOW))
              if (Exit.isSuccess(exit)) price = exit.value
              else yield* Effect.yieldNow
            }
            const usd = Number((price as { body?: { data?: { usd?: number } } } | undefined)?.body?.data?.usd)
            assert.isTrue(usd > 50_000 && usd < 200_000, `bitcoin at ${JSON.stringify(price).slice(0, 300)}`)
          })
        ).pipe(Effect.provideService(References.MinimumLogLevel, "None"))
      }),
    120_000
  )
})
