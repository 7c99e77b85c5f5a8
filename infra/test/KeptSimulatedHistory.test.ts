/**
 * On the embedded default the simulated crypto history is kept in the data folder (`simulated-market/`): a
 * reopened folder reads it back (the backfill report counts no generated step) and every answer is the one the
 * first start gave. The database itself is not what is tested here, so the account and equity stores are the
 * in-memory ones; the configuration names the embedded store and its folder, which is what picks the kept history.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, References } from "effect"
import { TestClock } from "effect/testing"
import { afterAll } from "vitest"
import { callPlanes } from "../../core/test/support/PlaneCall.ts"
import { testConfig } from "../../test/support/server.ts"
import { openPlanes, SIMULATED_HISTORY_FOLDER } from "../src/Planes.ts"
import { openStores } from "../src/Stores.ts"

/** Inside a 15-minute bar, so no ticker step runs during the test. */
const NOW = Date.UTC(2026, 10, 24, 9, 7, 30)

const CALLS: ReadonlyArray<readonly [string, ReadonlyArray<readonly [string, string]>]> = [
  ["price", [["id", "crypto:bitcoin"]]],
  ["read", [["ids", "crypto:bitcoin,crypto:ethereum,crypto:monero"]]],
  ["price", [["id", "crypto:wrapped-bitcoin"]]],
  ["funding", [["id", "crypto:solana"]]],
  ["open_interest", [["id", "crypto:xrp"]]],
  ["liquidity", [["id", "crypto:bnb"]]],
  ["technicals", [["id", "crypto:cardano"]]],
  [
    "series",
    [
      ["id", "crypto:bitcoin"],
      ["interval", "1d"],
      ["range", "1y"]
    ]
  ],
  ["rank", [["limit", "50"]]]
]

const dir = mkdtempSync(join(tmpdir(), "md-kept-history-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A progressive start on the embedded configuration of `dir`, until every asset is ready: report and answers. */
const openAndAnswer = Effect.scoped(
  Effect.gen(function* () {
    const config = testConfig({ seed: 20261124, store: { _tag: "Embedded", dir }, dataDir: dir })
    const opened = yield* openPlanes(config, yield* openStores(testConfig()), { progressive: true })
    while (opened.simulatedReport?.() === undefined) yield* Effect.yieldNow
    const answers = yield* Effect.forEach(CALLS, ([name, params]) =>
      Effect.map(Effect.exit(callPlanes(opened.planes, name, params, NOW)), (exit) =>
        Exit.isSuccess(exit) ? JSON.stringify(exit.value) : assert.fail(`${name} failed: ${String(exit.cause)}`)
      )
    )
    return { report: opened.simulatedReport?.(), answers }
  })
).pipe(Effect.provideService(References.MinimumLogLevel, "None"))

describe("the simulated history kept in the embedded data folder", () => {
  it.effect(
    "a reopened folder generates nothing and answers what the first start answered",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const first = yield* openAndAnswer
        assert.isAbove(first.report?.generatedSteps ?? 0, 0)
        assert.strictEqual(first.report?.keptAssets, 0)
        const kept = join(dir, SIMULATED_HISTORY_FOLDER)
        assert.isTrue(existsSync(join(kept, "history.json")))
        assert.strictEqual(readdirSync(kept).filter((f) => f.endsWith(".seg")).length, first.report?.assets)

        yield* TestClock.setTime(NOW)
        const second = yield* openAndAnswer
        assert.strictEqual(second.report?.generatedSteps, 0)
        assert.strictEqual(second.report?.keptAssets, first.report?.assets)
        assert.strictEqual(second.report?.rows, first.report?.rows)
        CALLS.forEach(([name], i) => {
          assert.strictEqual(second.answers[i], first.answers[i], `${name} differs after the reopen`)
        })
      }),
    120_000
  )
})
