/**
 * `node bench/tick.ts [n] [ops]`: the cost of one call right after a venue's routine refresh (its books status
 * written, as the simulated feed does every 20 to 60 s), in process on the memory store with the 35 registry
 * assets and 120 days of fixture history; alternately with the store's per-asset `seriesRevision` and without it
 * (each asset's state then keyed on the global revision, as before it existed). `ops`: comma-separated, default
 * `rank,read`. Not part of `npm run bench`.
 */
import { makeMemoryMarketStore } from "@market-data/memory"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { CryptoAssets } from "../core/src/crypto/Assets.ts"
import { makeCryptoPlane } from "../core/src/crypto/CryptoPlane.ts"
import { MarketStore } from "../core/src/crypto/Market.ts"
import { buildFixture, writeFixture } from "../core/test/crypto/support/MarketFixture.ts"
import { callPlanes } from "../core/test/support/PlaneCall.ts"

const END = Date.UTC(2026, 10, 20, 12, 0)
const n = Number(process.argv[2] ?? 200)
const run = (perAsset: boolean, op: string) =>
  Effect.gen(function* () {
    const store = makeMemoryMarketStore()
    yield* writeFixture(store, buildFixture(CryptoAssets, END, 120, 7), END)
    const { seriesRevision: _s, ...without } = store
    const plane = yield* makeCryptoPlane.pipe(Effect.provideService(MarketStore, perAsset ? store : without))
    const now = END + 1000
    yield* TestClock.setTime(now)
    const params = op === "rank" ? [["limit", "50"] as const] : [["id", "crypto:bitcoin"] as const]
    yield* callPlanes([plane], op, params, now)
    const books = (yield* store.status)
      .filter((s) => s.component === "bars")
      .map((s) => ({ ...s, component: "books" as const }))
    const t0 = performance.now()
    for (let i = 0; i < n; i++) {
      yield* store.putStatus(books)
      yield* callPlanes([plane], op, params, now)
    }
    return ((performance.now() - t0) * 1000) / n
  }).pipe(Effect.provide(TestClock.layer()))
for (const op of (process.argv[3] ?? "rank,read").split(","))
  for (const perAsset of [false, true, false, true]) {
    const us = await Effect.runPromise(run(perAsset, op) as Effect.Effect<number>)
    console.log(
      `${op}: ${perAsset ? "per-asset series revision" : "global revision (before)"}: ${us.toFixed(0)} us per call after a tick`
    )
  }
