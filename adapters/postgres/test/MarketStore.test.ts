/**
 * The market store contract suite on PGlite and on server PostgreSQL: the suite the in-memory twin passes.
 */

import { MarketStore } from "@market-data/core"
import { makeMemoryMarketStore, makeWriteThroughMarketStore, warmMarketStore } from "@market-data/memory"
import { Effect, Layer } from "effect"
import { sql } from "kysely"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { marketStoreContract } from "../../../core/test/contracts/MarketStoreContract.ts"
import * as market from "../../../infra/migrations/2026-11-23T0100_market.ts"
import { migrations } from "../../../infra/src/Migrate.ts"
import { layerPgMarketStore, MarketTables, makePgMarketStore } from "../src/PgMarketStore.ts"
import { pgliteTestDatabase, postgresTestDatabase, TEST_DATABASE_URL, type TestDatabase } from "./support.ts"

const MIGRATION = "2026-11-23T0100_market"

const suite = (name: string, open: () => Promise<TestDatabase>) =>
  describe(name, () => {
    let t: TestDatabase
    beforeAll(async () => {
      t = await open()
      // Until the composition root registers the migration, apply it here.
      if (!(MIGRATION in migrations)) await market.up(t.database.db)
    }, 120_000)
    afterAll(() => t?.drop())
    const empty = Effect.promise(async () => {
      for (const table of MarketTables) await sql.raw(`delete from ${table}`).execute(t.database.db)
    })
    marketStoreContract(name, () =>
      Layer.effectDiscard(empty).pipe(Layer.provideMerge(Layer.suspend(() => layerPgMarketStore(t.database))))
    )
    marketStoreContract(`${name} behind a memory hot store`, () =>
      Layer.effectDiscard(empty).pipe(
        Layer.provideMerge(
          Layer.sync(MarketStore)(() =>
            makeWriteThroughMarketStore(makeMemoryMarketStore(), makePgMarketStore(t.database))
          )
        )
      )
    )

    it("persists what the hot store serves, and a fresh hot store warms from it", async () => {
      await Effect.runPromise(empty)
      const pg = makePgMarketStore(t.database)
      const store = makeWriteThroughMarketStore(makeMemoryMarketStore(), pg)
      const T = Date.UTC(2026, 0, 1)
      const batch = {
        kind: "openInterest" as const,
        assetId: "crypto:bitcoin",
        venue: "okx",
        t: [T, T + 900_000, T + 1_800_000],
        oiUsd: [1.5e9, 1.6e9, 1.55e9]
      }
      const book = {
        assetId: "crypto:bitcoin",
        venue: "okx",
        t: T,
        bids: [[99, 1] as const],
        asks: [[101, 2] as const]
      }
      await Effect.runPromise(Effect.andThen(store.write([batch]), store.putBooks([book])))
      const warm = makeMemoryMarketStore()
      const rows = await Effect.runPromise(warmMarketStore(warm, pg, ["crypto:bitcoin"], T + 900_000, T + 3_600_000))
      expect(rows).toBe(2)
      const [s] = await Effect.runPromise(
        warm.read("openInterest", { assetId: "crypto:bitcoin", fromMs: 0, toMs: T * 2 })
      )
      expect([...(s?.oiUsd ?? [])]).toEqual([1.6e9, 1.55e9])
      expect(await Effect.runPromise(warm.books("crypto:bitcoin"))).toEqual([book])
    })
  })

suite("pglite", () => pgliteTestDatabase())

if (TEST_DATABASE_URL === undefined) {
  describe.skip("postgresql (skipped: TEST_DATABASE_URL is not set)", () => {})
  console.warn("PostgreSQL market store suite SKIPPED: set TEST_DATABASE_URL=postgres://... to run it")
} else {
  suite("postgresql", () => postgresTestDatabase(TEST_DATABASE_URL as string))
}
