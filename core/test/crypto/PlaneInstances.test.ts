/**
 * Two crypto planes in one process remember apart: each plane's state makes its own `MeasureMemo` (the columns
 * measuring derives from loaded series, and its scratch), so one plane's work is neither seen nor reused by the
 * other, and both answer the same.
 */
import { assert, describe, it } from "@effect/vitest"
import { makeMemoryMarketStore } from "@market-data/memory"
import { Effect } from "effect"
import { type CryptoAsset, cryptoAsset } from "../../src/crypto/Assets.ts"
import { makePlaneState, type PlaneState } from "../../src/crypto/plane/State.ts"
import { buildFixture, writeFixture } from "./support/MarketFixture.ts"

const END = Date.UTC(2026, 10, 20, 12, 0)
const NOW = END + 60_000
const BTC = cryptoAsset("crypto:bitcoin") as CryptoAsset

/** How many entries the plane's measure memo has taken in so far (its derived-column maps' `set` calls). */
const countSets = (st: PlaneState): (() => number) => {
  let n = 0
  for (const map of [st.measureMemo.extremes, st.measureMemo.rates8hPct] as Array<WeakMap<object, unknown>>) {
    const set = map.set.bind(map)
    map.set = (key, value) => {
      n++
      return set(key, value)
    }
  }
  return () => n
}

describe("crypto plane instances", () => {
  it.effect("each plane state measures with a memo of its own", () =>
    Effect.gen(function* () {
      const store = makeMemoryMarketStore()
      yield* writeFixture(store, buildFixture([BTC], END, 12, 7), END)
      const a = makePlaneState(store)
      const b = makePlaneState(store)
      assert.notStrictEqual(a.measureMemo, b.measureMemo)
      const setsA = countSets(a)
      const setsB = countSets(b)

      const stateA = yield* a.stateOf(BTC, NOW, yield* a.statusesOf(BTC))
      assert.isAbove(setsA(), 0, "the first plane derived columns into its memo")
      assert.strictEqual(setsB(), 0, "the second plane's memo is untouched by the first plane's work")

      const stateB = yield* b.stateOf(BTC, NOW, yield* b.statusesOf(BTC))
      assert.isAbove(setsB(), 0, "the second plane derives its own columns")
      assert.deepStrictEqual(stateB.current, stateA.current)
    })
  )
})
