/**
 * The simulated default at production scale (`MARKET_DATA_SIM_UNIVERSE=market`, opt-in until its memory target is met): the planes serve
 * the simulated venues' 400-odd assets (`makeSimulatedUniverse`), not the 35 of the hand-written registry, and
 * the market generated for them is the one served.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, References } from "effect"
import { TestClock } from "effect/testing"
import { callPlanes } from "../../core/test/support/PlaneCall.ts"
import { testConfig } from "../../test/support/server.ts"
import { loadConfig } from "../src/AppConfig.ts"
import { openPlanes } from "../src/Planes.ts"
import { openStores } from "../src/Stores.ts"

const NOW = Date.UTC(2026, 10, 23, 8, 7, 30)

describe("the simulated market at production scale", () => {
  it.effect("is opt-in: the default is the registry's; MARKET_DATA_SIM_UNIVERSE=market picks the market", () =>
    Effect.gen(function* () {
      const read = (env: Record<string, string>) =>
        loadConfig.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env))))
      assert.strictEqual((yield* read({})).simulatedUniverse, "registry")
      assert.strictEqual((yield* read({ MARKET_DATA_SIM_UNIVERSE: "market" })).simulatedUniverse, "market")
      assert.strictEqual((yield* read({ MARKET_DATA_SIM_UNIVERSE: "registry" })).simulatedUniverse, "registry")
      const bad = yield* Effect.exit(read({ MARKET_DATA_SIM_UNIVERSE: "everything" }))
      assert.isTrue(Exit.isFailure(bad))
    })
  )

  it.effect(
    "lists over 400 crypto assets, over 200 core, with collisions, and answers as each asset is generated",
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
