/**
 * The store contract suites on PGlite and on server PostgreSQL: the very suites the in-memory twins pass.
 */
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe } from "vitest"
import { storeContracts } from "../../../core/test/contracts/StoreContracts.ts"
import { layerPgStores } from "../src/PgStores.ts"
import { pgliteTestDatabase, postgresTestDatabase, TEST_DATABASE_URL, type TestDatabase } from "./support.ts"

const suite = (name: string, open: () => Promise<TestDatabase>) =>
  describe(name, () => {
    let t: TestDatabase
    beforeAll(async () => {
      t = await open()
    }, 120_000)
    afterAll(() => t?.drop())
    // Each test starts from empty tables.
    storeContracts(name, () =>
      Layer.effectDiscard(Effect.promise(() => t.truncate())).pipe(Layer.provideMerge(layerPgStores(t.database)))
    )
  })

suite("pglite", () => pgliteTestDatabase())

if (TEST_DATABASE_URL === undefined) {
  describe.skip("postgresql (skipped: TEST_DATABASE_URL is not set)", () => {})
  console.warn("PostgreSQL contract suites SKIPPED: set TEST_DATABASE_URL=postgres://... to run them")
} else {
  suite("postgresql", () => postgresTestDatabase(TEST_DATABASE_URL as string))
}
