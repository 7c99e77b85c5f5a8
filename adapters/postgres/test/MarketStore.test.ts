/**
 * The market store contract suite on PGlite and on server PostgreSQL: the suite the in-memory twin passes.
 */
import { Effect, Layer } from "effect"
import { sql } from "kysely"
import { afterAll, beforeAll, describe } from "vitest"
import { marketStoreContract } from "../../../core/test/contracts/MarketStoreContract.ts"
import * as market from "../../../infra/migrations/2026-11-23T0100_market.ts"
import { migrations } from "../../../infra/src/Migrate.ts"
import { layerPgMarketStore, MarketTables } from "../src/PgMarketStore.ts"
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
  })

suite("pglite", () => pgliteTestDatabase())

if (TEST_DATABASE_URL === undefined) {
  describe.skip("postgresql (skipped: TEST_DATABASE_URL is not set)", () => {})
  console.warn("PostgreSQL market store suite SKIPPED: set TEST_DATABASE_URL=postgres://... to run it")
} else {
  suite("postgresql", () => postgresTestDatabase(TEST_DATABASE_URL as string))
}
