/**
 * The equity store contract suite on PGlite and on server PostgreSQL (when TEST_DATABASE_URL is set): the very
 * suite the in-memory twin passes.
 */
import { randomUUID } from "node:crypto"
import { Effect, Layer } from "effect"
import { sql } from "kysely"
import { afterAll, beforeAll, describe } from "vitest"
import { equityStoreContract } from "../../../core/test/contracts/EquityStoreContract.ts"
import * as equityMigration from "../../../infra/migrations/2026-11-23T0200_equity.ts"
import { migrations } from "../../../infra/src/Migrate.ts"
import { openPostgres } from "../src/Database.ts"
import { EquityTableNames, layerPgEquityStore } from "../src/PgEquityStore.ts"
import { pgliteTestDatabase, TEST_DATABASE_URL, type TestDatabase, withSchema } from "./support.ts"

/** Applies the equity migration where the composition root has not registered it (yet). */
const withEquityTables = async (t: TestDatabase): Promise<TestDatabase> => {
  if (!Object.keys(migrations).includes("2026-11-23T0200_equity")) await equityMigration.up(t.database.db)
  return t
}

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

/**
 * A fresh schema on server PostgreSQL holding the equity tables only (created by the equity migration itself,
 * without kysely's migrator, whose lock-table check looks across schemas and is confused by a leftover one).
 */
const postgresEquityDatabase = async (url: string): Promise<TestDatabase> => {
  const schema = `md_test_eq_${randomUUID().replace(/-/g, "").slice(0, 12)}`
  const admin = openPostgres(url, { poolSize: 1 })
  await sql.raw(`create schema ${schema}`).execute(admin.db)
  await admin.close()
  const scoped = withSchema(url, schema)
  const database = openPostgres(scoped, { poolSize: 5 })
  await equityMigration.up(database.db)
  return {
    database,
    url: scoped,
    truncate: async () => {},
    drop: async () => {
      await database.close()
      const a = openPostgres(url, { poolSize: 1 })
      await sql.raw(`drop schema ${schema} cascade`).execute(a.db)
      await a.close()
    }
  }
}

suite("pglite", async () => withEquityTables(await pgliteTestDatabase()))

if (TEST_DATABASE_URL === undefined) {
  describe.skip("postgresql (skipped: TEST_DATABASE_URL is not set)", () => {})
  console.warn("PostgreSQL equity store suite SKIPPED: set TEST_DATABASE_URL=postgres://... to run it")
} else {
  suite("postgresql", () => postgresEquityDatabase(TEST_DATABASE_URL as string))
}
