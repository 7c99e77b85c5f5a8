/**
 * The group-commit settings (`DATABASE_BATCH_MAX`, `DATABASE_BATCH_WINDOW_MS`): their defaults, and every bad
 * value refused at start with a message naming the variable.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit } from "effect"
import { loadConfig } from "../src/AppConfig.ts"

const read = (env: Record<string, string>) =>
  loadConfig.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env))))

describe("group commit configuration", () => {
  it.effect("defaults to 64 calls and a 1 ms window; 1 turns it off; both are read", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual((yield* read({})).batch, { maxBatch: 64, windowMs: 1 })
      assert.deepStrictEqual((yield* read({ DATABASE_BATCH_MAX: "1", DATABASE_BATCH_WINDOW_MS: "0" })).batch, {
        maxBatch: 1,
        windowMs: 0
      })
      assert.deepStrictEqual((yield* read({ DATABASE_BATCH_MAX: "16", DATABASE_BATCH_WINDOW_MS: "5" })).batch, {
        maxBatch: 16,
        windowMs: 5
      })
    })
  )

  it.effect("refuses values out of range or not whole numbers, naming the variable", () =>
    Effect.gen(function* () {
      for (const [name, value] of [
        ["DATABASE_BATCH_MAX", "0"],
        ["DATABASE_BATCH_MAX", "65"],
        ["DATABASE_BATCH_MAX", "many"],
        ["DATABASE_BATCH_WINDOW_MS", "-1"],
        ["DATABASE_BATCH_WINDOW_MS", "101"],
        ["DATABASE_BATCH_WINDOW_MS", "1.5"]
      ] as const) {
        const exit = yield* Effect.exit(read({ [name]: value }))
        assert.isTrue(Exit.isFailure(exit), `${name}=${value}`)
        if (Exit.isFailure(exit)) assert.include(String(exit.cause), name)
      }
    })
  )

  it.effect("DATABASE_PGLITE_WORKER: off by default, on read, anything else refused naming the variable", () =>
    Effect.gen(function* () {
      assert.strictEqual((yield* read({})).pgliteWorker, false)
      assert.strictEqual((yield* read({ DATABASE_PGLITE_WORKER: "off" })).pgliteWorker, false)
      assert.strictEqual((yield* read({ DATABASE_PGLITE_WORKER: "on" })).pgliteWorker, true)
      const exit = yield* Effect.exit(read({ DATABASE_PGLITE_WORKER: "yes" }))
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) assert.include(String(exit.cause), "DATABASE_PGLITE_WORKER")
    })
  )
})
