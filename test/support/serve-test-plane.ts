/**
 * The real `market-data serve` (configuration from the environment, real stores, real HTTP transport) with
 * the deterministic test plane answering `read`, `price` and `funding`, for tests that need paid operations
 * in separate server processes. `crypto:slow` sleeps TEST_SLOW_MS (default 500 ms).
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { loadConfig, serve } from "@market-data/infra"
import { Cause, Effect, Exit } from "effect"
import { makeTestPlane } from "../../core/test/support/TestPlane.ts"

const program = Effect.gen(function* () {
  const config = yield* loadConfig
  const plane = yield* makeTestPlane({ slowMs: Number(process.env.TEST_SLOW_MS ?? 500) })
  // The deterministic test plane alone: no simulated market to generate at every (re)start.
  return yield* serve(config, [plane.handlers], { withPlanes: false })
})

NodeRuntime.runMain(
  program.pipe(
    Effect.catch((e) =>
      Effect.sync(() => {
        process.stderr.write(`serve-test-plane: ${e.message}\n`)
        process.exitCode = 2
      })
    )
  ),
  {
    teardown: (exit, onExit) => {
      if (Exit.isSuccess(exit)) return onExit(typeof process.exitCode === "number" ? process.exitCode : 0)
      if (Cause.hasInterruptsOnly(exit.cause)) return onExit(0)
      process.stderr.write(`${Cause.pretty(exit.cause)}\n`)
      return onExit(1)
    }
  }
)
