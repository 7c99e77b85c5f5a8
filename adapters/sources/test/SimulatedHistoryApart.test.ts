/**
 * A new kept history generated in a child process (`Apart.ts`): the folder it makes is byte for byte the one
 * the in-process backfill makes, and the store it fills holds the same; a child that cannot be run, or that
 * dies midway, leaves the backfill to generate what is missing here (with a log line), to the same bytes; and
 * the child ends with the start's scope.
 */
import { createHash } from "node:crypto"
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { MarketStore } from "@market-data/core"
import { makeMemoryMarketStore } from "@market-data/memory"
import { Effect, Logger, References } from "effect"
import { TestClock } from "effect/testing"
import { afterAll } from "vitest"
import {
  type ApartSpawn,
  makeSimulatedHistoryStore,
  type SimulatedCryptoOptions,
  startHistoryApart,
  startSimulatedCrypto
} from "../src/simulated/crypto/index.ts"
import { DENSE_DAYS, digestStore as digestSmall, HISTORY_DAYS, SMALL, tempFolders } from "./StoreDigest.ts"

const NOW = Date.UTC(2026, 10, 20, 6, 7, 12, 345)

const { folder, removeAll } = tempFolders("md-simapart-")
afterAll(removeAll)

const digestStore = (store: MarketStore["Service"]) => digestSmall(store, SMALL)

/** Every file of `dir` by name, with its bytes' SHA-256. */
const files = (dir: string) =>
  Object.fromEntries(
    readdirSync(dir)
      .sort()
      .map((name) => [
        name,
        createHash("sha256")
          .update(readFileSync(join(dir, name)))
          .digest("hex")
      ])
  )

/**
 * A start at the TestClock's now on `dir`'s kept history, its missing segments written by a child process
 * (`apart`, run as `spawnWith` says) or in process: the report, the store's digest, the log lines and the child.
 */
const start = (dir: string, apart: false | ApartSpawn) =>
  Effect.gen(function* () {
    const store = makeMemoryMarketStore()
    const logs: Array<string> = []
    const history = makeSimulatedHistoryStore(dir)
    const options: SimulatedCryptoOptions = {
      seed: "42",
      assets: SMALL,
      historyDays: HISTORY_DAYS,
      denseHistoryDays: DENSE_DAYS,
      history
    }
    return yield* Effect.scoped(
      Effect.gen(function* () {
        const child = apart === false ? undefined : yield* startHistoryApart(history, options, apart)
        const { report } = yield* startSimulatedCrypto({ ...options, ...(child === undefined ? {} : { apart: child }) })
        return { report, digest: yield* digestStore(store), logs, child }
      })
    ).pipe(
      Effect.provideService(MarketStore, store),
      Effect.provide(Logger.layer([Logger.make((o) => logs.push(String(o.message)))]))
    )
  }).pipe(Effect.provideService(References.MinimumLogLevel, "Info"))

describe("a new kept history generated in a child process", () => {
  it.effect(
    "makes the folder the in-process backfill makes, byte for byte, and the same store",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const here = folder()
        const inProcess = yield* start(here, false)
        assert.strictEqual(inProcess.report.keptAssets, 0)

        yield* TestClock.setTime(NOW)
        const there = folder()
        const viaChild = yield* start(there, {})
        assert.isDefined(viaChild.child)
        assert.deepStrictEqual([...(viaChild.child?.indexes ?? [])], [0, 1, 2, 3, 4])
        // Every asset came from the child, read back as a reopen reads it: nothing generated in this process.
        assert.strictEqual(viaChild.report.apartAssets, SMALL.length)
        assert.strictEqual(viaChild.report.keptAssets, SMALL.length)
        assert.strictEqual(viaChild.report.generatedSteps, 0)
        assert.strictEqual(viaChild.report.rows, inProcess.report.rows)
        assert.deepStrictEqual(files(there), files(here))
        assert.strictEqual(Object.keys(files(there)).length, SMALL.length + 1)
        assert.strictEqual(viaChild.digest, inProcess.digest)
        assert.isTrue(viaChild.logs.some((l) => l.includes("in a child process")))

        // A reopen of the folder the child made starts no child and serves the same.
        yield* TestClock.setTime(NOW)
        const reopened = yield* start(there, {})
        assert.isUndefined(reopened.child)
        assert.strictEqual(reopened.report.keptAssets, SMALL.length)
        assert.strictEqual(reopened.digest, inProcess.digest)
      }),
    60_000
  )

  it.effect(
    "only the missing segments go to the child, with their whole peg group",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const reference = folder()
        const inProcess = yield* start(reference, false)
        const dir = folder()
        yield* TestClock.setTime(NOW)
        yield* start(dir, false)
        // wrapped-bitcoin's segment lost: it and bitcoin, which it tracks, are written again by the child.
        const names = readdirSync(dir).filter((n) => n.startsWith("crypto_wrapped-bitcoin-"))
        assert.strictEqual(names.length, 1)
        rmSync(join(dir, names[0] as string))
        yield* TestClock.setTime(NOW)
        const again = yield* start(dir, {})
        assert.deepStrictEqual([...(again.child?.indexes ?? [])], [0, 4])
        assert.strictEqual(again.report.apartAssets, 2)
        assert.strictEqual(again.report.keptAssets, SMALL.length)
        assert.deepStrictEqual(files(dir), files(reference))
        assert.strictEqual(again.digest, inProcess.digest)
      }),
    60_000
  )

  it.effect(
    "a child that cannot be run, or that dies midway, leaves the rest to this process: the same bytes, a log line",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const reference = folder()
        const inProcess = yield* start(reference, false)

        yield* TestClock.setTime(NOW)
        const unrunnable = folder()
        const none = yield* start(unrunnable, { execPath: join(unrunnable, "no-such-node") })
        assert.strictEqual(none.report.apartAssets, 0)
        assert.strictEqual(none.report.keptAssets, 0)
        assert.isTrue(
          none.logs.some((l) => l.includes("child process generating the kept history failed")),
          none.logs.join("\n")
        )
        assert.deepStrictEqual(files(unrunnable), files(reference))
        assert.strictEqual(none.digest, inProcess.digest)

        // The child dies after two segments (bitcoin, sui): bitcoin's group (with wrapped-bitcoin) and the
        // rest are generated here; sui is read back.
        yield* TestClock.setTime(NOW)
        const midway = folder()
        const died = yield* start(midway, { failAfter: 2 })
        assert.strictEqual(died.report.apartAssets, 1)
        assert.isTrue(
          died.logs.some((l) => l.includes("exited with code 3")),
          died.logs.join("\n")
        )
        assert.deepStrictEqual(files(midway), files(reference))
        assert.strictEqual(died.digest, inProcess.digest)

        // A child that exits at once, having written nothing.
        yield* TestClock.setTime(NOW)
        const wrong = folder()
        const script = join(wrong, "exits.mjs")
        writeFileSync(script, "process.exit(7)\n")
        const exits = yield* start(wrong, { script })
        assert.isTrue(
          exits.logs.some((l) => l.includes("exited with code 7")),
          exits.logs.join("\n")
        )
        rmSync(script)
        assert.deepStrictEqual(files(wrong), files(reference))
      }),
    90_000
  )

  it.effect(
    "the child ends with the start's scope, and leaves no temporary file",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        const dir = folder()
        const history = makeSimulatedHistoryStore(dir)
        // A long history, so the child is still generating when the scope closes.
        const options: SimulatedCryptoOptions = { seed: "42", assets: SMALL, historyDays: 366, history }
        const pid = yield* Effect.scoped(
          Effect.gen(function* () {
            const child = yield* startHistoryApart(history, options)
            assert.isDefined(child?.pid)
            process.kill(child?.pid as number, 0)
            return child?.pid as number
          })
        ).pipe(Effect.provideService(References.MinimumLogLevel, "None"))
        assert.throws(() => process.kill(pid, 0), /ESRCH/)
        assert.deepStrictEqual(
          readdirSync(dir).filter((n) => n.endsWith(".tmp")),
          []
        )
      }),
    60_000
  )
})
