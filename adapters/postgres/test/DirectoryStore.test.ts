/**
 * The asset directory store contract on PGlite and on server PostgreSQL: the suite the in-memory twin passes.
 */
import { Effect, Layer } from "effect"
import { sql } from "kysely"
import { afterAll, beforeAll, describe } from "vitest"
import { directoryStoreContract } from "../../../core/test/contracts/DirectoryStoreContract.ts"
import { DirectoryTables, layerPgDirectoryStore } from "../src/PgDirectoryStore.ts"
import { pgliteTestDatabase, postgresTestDatabase, TEST_DATABASE_URL, type TestDatabase } from "./support.ts"

const suite = (name: string, open: () => Promise<TestDatabase>) =>
  describe(name, () => {
    let t: TestDatabase
    beforeAll(async () => {
      t = await open()
    }, 120_000)
    afterAll(() => t?.drop())
    const empty = Effect.promise(async () => {
      for (const table of DirectoryTables) await sql.raw(`delete from ${table}`).execute(t.database.db)
      await sql.raw("update crypto_directory_meta set updated_ms = 0, coins_fetched_ms = null").execute(t.database.db)
    })
    directoryStoreContract(name, () =>
      Layer.effectDiscard(empty).pipe(Layer.provideMerge(Layer.suspend(() => layerPgDirectoryStore(t.database))))
    )
  })

suite("pglite", () => pgliteTestDatabase())

if (TEST_DATABASE_URL === undefined) {
  describe.skip("postgresql (skipped: TEST_DATABASE_URL is not set)", () => {})
  console.warn("PostgreSQL directory store suite SKIPPED: set TEST_DATABASE_URL=postgres://... to run it")
} else {
  suite("postgresql", () => postgresTestDatabase(TEST_DATABASE_URL as string))
}
