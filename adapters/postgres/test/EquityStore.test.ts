/**
 * The equity store contract suite on PGlite and on server PostgreSQL (when TEST_DATABASE_URL is set): the very
 * suite the in-memory twin passes.
 */
import { Effect, Layer } from "effect"
import { sql } from "kysely"
import { afterAll, beforeAll, describe } from "vitest"
import { equityStoreContract } from "../../../core/test/contracts/EquityStoreContract.ts"
import { EquityTableNames, layerPgEquityStore } from "../src/PgEquityStore.ts"
import { pgliteEquityDatabase, postgresEquityDatabase } from "./EquitySupport.ts"
import { TEST_DATABASE_URL, type TestDatabase } from "./support.ts"

const suite = (name: string, open: () => Promise<TestDatabase>) =>
  describe(name, () => {
    let t: TestDatabase
    beforeAll(async () => {
      t = await open()
    }, 120_000)
    afterAll(() => t?.drop())
    equityStoreContract(name, () =>
      Layer.effectDiscard(
        Effect.promise(async () => {
          for (const table of EquityTableNames) await sql.raw(`delete from ${table}`).execute(t.database.db)
        })
      ).pipe(Layer.provideMerge(layerPgEquityStore(t.database)))
    )
  })

suite("pglite", pgliteEquityDatabase)

if (TEST_DATABASE_URL === undefined) {
  describe.skip("postgresql (skipped: TEST_DATABASE_URL is not set)", () => {})
  console.warn("PostgreSQL equity store suite SKIPPED: set TEST_DATABASE_URL=postgres://... to run it")
} else {
  suite("postgresql", () => postgresEquityDatabase(TEST_DATABASE_URL as string))
}
