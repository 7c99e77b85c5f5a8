/**
 * The simulated crypto history kept on disk (`History.ts`): a second start on the same folder reads it back
 * instead of generating it (the report's `generatedSteps` counts the steps generated), serves the same bytes and
 * ticks on the same way; a later start generates only the gap and then equals a start that generated everything;
 * a corrupt or foreign segment is regenerated, never served.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { BAR_MS, DAY_MS, HOUR_MS, MarketStore } from "@market-data/core"
import { makeMemoryMarketStore } from "@market-data/memory"
import { Effect, References } from "effect"
import { TestClock } from "effect/testing"
import { afterAll } from "vitest"
import { gridTimes, readInto } from "../src/simulated/crypto/History.ts"
import {
  decodeSegment,
  encodeSegment,
  genesisFor,
  KEPT_REWRITE_STEPS,
  makeSimulatedHistoryStore,
  SIMULATED_CRYPTO_VERSION,
  type SimulatedCryptoOptions,
  segmentName,
  startSimulatedCrypto
} from "../src/simulated/crypto/index.ts"
import { DENSE_DAYS, digestStore as digestSmall, HISTORY_DAYS, SMALL, tempFolders } from "./StoreDigest.ts"

/** An instant inside a bar whose genesis is also the genesis two days later (one 7-day grid cell). */
const NOW = (() => {
  let t = Date.UTC(2026, 10, 20, 6, 7, 12, 345)
  while (genesisFor(t, HISTORY_DAYS) !== genesisFor(t + 2 * DAY_MS + 6 * HOUR_MS, HISTORY_DAYS)) t += DAY_MS
  return t
})()

const { folder, removeAll } = tempFolders("md-simhistory-")
afterAll(removeAll)

const digestStore = (store: MarketStore["Service"]) => digestSmall(store, SMALL)

/**
 * A start at the TestClock's now (on `dir`'s kept history when given), then `tickFor` of ticks: the report and
 * the store's digest after the backfill and after the ticks.
 */
const start = (dir: string | undefined, options: { seed?: string; tickFor?: number } = {}) =>
  Effect.gen(function* () {
    const store = makeMemoryMarketStore()
    const simOptions: SimulatedCryptoOptions = {
      seed: options.seed ?? "42",
      assets: SMALL,
      historyDays: HISTORY_DAYS,
      denseHistoryDays: DENSE_DAYS,
      ...(dir === undefined ? {} : { history: makeSimulatedHistoryStore(dir) })
    }
    return yield* Effect.scoped(
      Effect.gen(function* () {
        const { report } = yield* startSimulatedCrypto(simOptions)
        const backfilled = yield* digestStore(store)
        yield* TestClock.adjust(options.tickFor ?? 0)
        return { report, backfilled, ticked: yield* digestStore(store) }
      })
    ).pipe(Effect.provideService(MarketStore, store))
  }).pipe(Effect.provideService(References.MinimumLogLevel, "None"))

const TICKS = 5 * HOUR_MS + 3 * 60_000

describe("simulated crypto history kept on disk", () => {
  it.effect("a reopened folder reads the history back: nothing generated, the same bytes, the same ticks", () =>
    Effect.gen(function* () {
      const dir = folder()
      yield* TestClock.setTime(NOW)
      const first = yield* start(dir, { tickFor: TICKS })
      assert.strictEqual(first.report.keptAssets, 0)
      assert.strictEqual(first.report.generatedSteps, first.report.steps * SMALL.length)
      assert.isAbove(first.report.historyBytesWritten, 0)
      assert.deepStrictEqual(readdirSync(dir).sort(), ["history.json", ...SMALL.map((a) => segmentName(a.id))].sort())

      yield* TestClock.setTime(NOW)
      const second = yield* start(dir, { tickFor: TICKS })
      assert.strictEqual(second.report.keptAssets, SMALL.length)
      assert.strictEqual(second.report.generatedSteps, 0)
      assert.strictEqual(second.report.historyBytesWritten, 0)
      assert.strictEqual(second.report.historyBytesRead, first.report.historyBytesWritten)
      assert.strictEqual(second.report.rows, first.report.rows)
      assert.strictEqual(second.backfilled, first.backfilled)
      // The model state came back too: the ticks after the reopen are the ticks after the first start.
      assert.strictEqual(second.ticked, first.ticked)
      assert.notStrictEqual(first.ticked, first.backfilled)
      // And both are what a start without a kept history serves.
      yield* TestClock.setTime(NOW)
      const plain = yield* start(undefined, { tickFor: TICKS })
      assert.strictEqual(plain.backfilled, first.backfilled)
      assert.strictEqual(plain.ticked, first.ticked)
    })
  )

  it.effect(
    "a reopen less than a day later generates the gap without rewriting the segments, and serves the same",
    () =>
      Effect.gen(function* () {
        const dir = folder()
        yield* TestClock.setTime(NOW)
        const first = yield* start(dir)
        const later = NOW + (KEPT_REWRITE_STEPS - 1) * BAR_MS
        yield* TestClock.setTime(later)
        const second = yield* start(dir, { tickFor: TICKS })
        const gap = second.report.steps - first.report.steps
        assert.strictEqual(gap, KEPT_REWRITE_STEPS - 1)
        assert.strictEqual(second.report.keptAssets, SMALL.length)
        assert.strictEqual(second.report.generatedSteps, gap * SMALL.length)
        assert.strictEqual(second.report.historyBytesWritten, 0)
        yield* TestClock.setTime(later)
        const plain = yield* start(undefined, { tickFor: TICKS })
        assert.strictEqual(second.backfilled, plain.backfilled)
        assert.strictEqual(second.ticked, plain.ticked)
        // The segments still end where the first start left them: the next start generates the gap again.
        yield* TestClock.setTime(later)
        const third = yield* start(dir, { tickFor: TICKS })
        assert.strictEqual(third.report.generatedSteps, gap * SMALL.length)
        assert.strictEqual(third.ticked, plain.ticked)
        // A day's lag rewrites them.
        yield* TestClock.setTime(NOW + KEPT_REWRITE_STEPS * BAR_MS)
        const fourth = yield* start(dir)
        assert.isAbove(fourth.report.historyBytesWritten, 0)
        const fifth = yield* start(dir)
        assert.strictEqual(fifth.report.generatedSteps, 0)
      })
  )

  it.effect("a later reopen generates only the gap, and equals a start that generated all of it", () =>
    Effect.gen(function* () {
      const dir = folder()
      yield* TestClock.setTime(NOW)
      const first = yield* start(dir)
      const later = NOW + 2 * DAY_MS + 6 * HOUR_MS
      yield* TestClock.setTime(later)
      const second = yield* start(dir, { tickFor: TICKS })
      const gap = second.report.steps - first.report.steps
      assert.strictEqual(gap, (2 * DAY_MS + 6 * HOUR_MS) / BAR_MS)
      assert.strictEqual(second.report.keptAssets, SMALL.length)
      assert.strictEqual(second.report.generatedSteps, gap * SMALL.length)
      yield* TestClock.setTime(later)
      const plain = yield* start(undefined, { tickFor: TICKS })
      assert.strictEqual(second.backfilled, plain.backfilled)
      assert.strictEqual(second.ticked, plain.ticked)
      // The files now hold the longer history: a third start generates nothing.
      yield* TestClock.setTime(later)
      const third = yield* start(dir)
      assert.strictEqual(third.report.generatedSteps, 0)
      assert.strictEqual(third.backfilled, plain.backfilled)
    })
  )

  it.effect(
    "a corrupt, truncated or foreign segment is regenerated (a tracked asset with its tracker), never served",
    () =>
      Effect.gen(function* () {
        const dir = folder()
        yield* TestClock.setTime(NOW)
        const first = yield* start(dir)
        // One flipped bit in Bitcoin's data (Wrapped Bitcoin tracks it), a truncated SUI, MOG's file in COMP's place.
        const btc = join(dir, segmentName("crypto:bitcoin"))
        const bytes = readFileSync(btc)
        bytes[Math.floor(bytes.length / 2)] = (bytes[Math.floor(bytes.length / 2)] as number) ^ 1
        writeFileSync(btc, bytes)
        const sui = join(dir, segmentName("crypto:sui"))
        writeFileSync(sui, readFileSync(sui).subarray(0, 5000))
        writeFileSync(
          join(dir, segmentName("crypto:compound")),
          readFileSync(join(dir, segmentName("crypto:mog-coin")))
        )
        yield* TestClock.setTime(NOW)
        const second = yield* start(dir)
        assert.strictEqual(second.report.keptAssets, 1)
        assert.strictEqual(second.report.generatedSteps, 4 * second.report.steps)
        assert.strictEqual(second.backfilled, first.backfilled)
        // Written anew: the next start reads all of them.
        yield* TestClock.setTime(NOW)
        const third = yield* start(dir)
        assert.strictEqual(third.report.keptAssets, SMALL.length)
        assert.strictEqual(third.backfilled, first.backfilled)
      })
  )

  it.effect("another seed starts a new history in the folder; so does a history too old to extend", () =>
    Effect.gen(function* () {
      const dir = folder()
      yield* TestClock.setTime(NOW)
      yield* start(dir)
      yield* TestClock.setTime(NOW)
      const other = yield* start(dir, { seed: "43" })
      assert.strictEqual(other.report.keptAssets, 0)
      yield* TestClock.setTime(NOW)
      const plain = yield* start(undefined, { seed: "43" })
      assert.strictEqual(other.backfilled, plain.backfilled)
      assert.strictEqual(JSON.parse(readFileSync(join(dir, "history.json"), "utf8")).seed, "43")
      // Two history spans later the kept genesis is dropped for a fresh one.
      yield* TestClock.setTime(NOW + 2 * HISTORY_DAYS * DAY_MS + 8 * DAY_MS)
      const old = yield* start(dir, { seed: "43" })
      assert.strictEqual(old.report.keptAssets, 0)
      assert.strictEqual(old.report.fromMs, genesisFor(NOW + 2 * HISTORY_DAYS * DAY_MS + 8 * DAY_MS, HISTORY_DAYS))
    })
  )

  it("a segment decodes to what was encoded, and names what is wrong with a foreign or damaged one", () => {
    const identity = { generator: SIMULATED_CRYPTO_VERSION, seed: "1", universe: "u" }
    const t = Float64Array.from({ length: 5 }, (_, i) => 900 * 1000 * (100 + i))
    const asset = {
      assetId: "crypto:x",
      step: 5,
      state: Float64Array.of(1, -2, Number.NaN, 0.5),
      series: [
        { kind: "bars", assetId: "crypto:x", venue: "v", t, open: t, high: t, low: t, close: t, volume: t },
        {
          kind: "funding",
          assetId: "crypto:x",
          venue: "v",
          t: Float64Array.of(1, 7, 9),
          rate: Float64Array.of(0.1, 0.2, 0.3),
          intervalMs: Float64Array.of(8, 8, 8)
        }
      ] as const
    }
    const bytes = encodeSegment(identity, 0, asset)
    const expected = { ...identity, genesisMs: 0, assetId: "crypto:x" }
    const decoded = decodeSegment(bytes, expected)
    assert.isTrue("asset" in decoded)
    if ("asset" in decoded) {
      assert.deepStrictEqual(Array.from(decoded.asset.state), [1, -2, Number.NaN, 0.5])
      assert.deepStrictEqual(
        decoded.asset.series.map((s) => [s.kind, Array.from(s.t)]),
        [
          ["bars", Array.from(t)],
          ["funding", [1, 7, 9]]
        ]
      )
      // Float32-exact columns are kept in four bytes a value, the others in eight; no value changes.
      const [bars, funding] = decoded.asset.series as unknown as Array<Record<string, ArrayLike<number>>>
      assert.instanceOf(bars?.close, Float32Array)
      assert.deepStrictEqual(Array.from(bars?.close ?? []), Array.from(t))
      assert.instanceOf(funding?.rate, Float64Array)
      assert.deepStrictEqual(Array.from(funding?.rate ?? []), [0.1, 0.2, 0.3])
    }
    const reason = (b: Uint8Array, e = expected) => {
      const d = decodeSegment(b, e)
      return "reason" in d ? d.reason : "decoded"
    }
    assert.strictEqual(
      reason(bytes, { ...expected, generator: SIMULATED_CRYPTO_VERSION + 1 }),
      "another generator version, seed or universe"
    )
    assert.strictEqual(reason(bytes, { ...expected, genesisMs: 1 }), "another genesis")
    assert.strictEqual(reason(bytes, { ...expected, assetId: "crypto:y" }), "holds crypto:x")
    assert.strictEqual(reason(bytes.subarray(0, bytes.length - 3)), "truncated (no trailer)")
    const flipped = bytes.slice()
    flipped[40] = (flipped[40] as number) ^ 0x10
    assert.strictEqual(reason(flipped), "checksum mismatch")
    assert.strictEqual(reason(new Uint8Array(3)), "not a segment")
  })
})

describe("gridTimes", () => {
  it("answers rows 15 minutes apart from the first time, whatever was asked before (shared arrays, read-only)", () => {
    const model = (from: number, rows: number) => Float64Array.from({ length: rows }, (_, i) => from + i * BAR_MS)
    const firsts = Array.from({ length: 11 }, (_, i) => Date.UTC(2025, 0, 1) + (i % 10) * DAY_MS)
    const asked: Array<[number, number, Float64Array]> = []
    let x = 7
    for (let k = 0; k < 200; k++) {
      x = (x * 48271) % 2147483647
      const from = firsts[x % firsts.length] as number
      const rows = x % 3 === 0 ? 0 : (x >> 3) % 5_000
      const t = gridTimes(from, rows)
      assert.deepStrictEqual(t, model(from, rows))
      asked.push([from, rows, t])
    }
    // Every array answered earlier still holds its times (a longer grid made later did not change them).
    for (const [from, rows, t] of asked) assert.deepStrictEqual(t, model(from, rows))
  })
})

describe("readInto", () => {
  it("reads a file exactly, into the buffer given while it is large enough, else into a new one kept for the next", () => {
    const dir = folder()
    const sizes = [0, 1, 7, 70_000, 20, 300_001, 65_536, 300_001, 5]
    let buffer: Uint8Array = new Uint8Array(0)
    let grown = 0
    sizes.forEach((size, k) => {
      const path = join(dir, `f${k}`)
      const content = Uint8Array.from({ length: size }, (_, i) => (i * 31 + k * 7) & 255)
      writeFileSync(path, content)
      const before = buffer
      const read = readInto(path, buffer)
      assert.deepStrictEqual(read.bytes, new Uint8Array(readFileSync(path)))
      if (before.length >= size) assert.strictEqual(read.buffer, before)
      else grown++
      buffer = read.buffer
    })
    // New buffers only for a file larger than every one before.
    assert.strictEqual(grown, 4)
  })

  it("a scratch load answers what a load of its own does, asset after asset from one reused buffer", () => {
    const history = makeSimulatedHistoryStore(folder())
    history.begin({ generator: SIMULATED_CRYPTO_VERSION, seed: "1", universe: "u" }, 0, () => true)
    const assetOf = (id: string, rows: number) => {
      const t = Float64Array.from({ length: rows }, (_, i) => 900_000 * (100 + i) + (i % 3))
      const v = Float64Array.from(t, (x) => x / 7)
      const bars = { kind: "bars" as const, assetId: id, venue: "v", t, open: v, high: v, low: v, close: v, volume: v }
      return { assetId: id, step: rows, state: Float64Array.of(rows, 1), series: [bars] }
    }
    const assets = [assetOf("crypto:a", 5_000), assetOf("crypto:b", 40), assetOf("crypto:c", 9_000)]
    for (const a of assets) history.save(a)
    for (const a of [...assets, ...assets.slice().reverse()]) {
      const scratch = history.load(a.assetId, true)
      const own = history.load(a.assetId)
      assert.strictEqual(scratch._tag, "Loaded")
      assert.deepStrictEqual(scratch, own)
    }
  })
})
