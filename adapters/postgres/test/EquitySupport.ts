/**
 * Test databases with the equity tables: an in-memory PGlite migrated to the latest schema (plus the equity
 * migration while the composition root has not registered it), or a fresh schema on server PostgreSQL holding
 * the equity tables only.
 */
import { randomUUID } from "node:crypto"
import { sql } from "kysely"
import * as equityMigration from "../../../infra/migrations/2026-11-23T0200_equity.ts"
import * as barsTickerMigration from "../../../infra/migrations/2026-11-26T0300_bars_ticker.ts"
import { migrations } from "../../../infra/src/Migrate.ts"
import { openPostgres } from "../src/Database.ts"
import { pgliteTestDatabase, type TestDatabase, withSchema } from "./support.ts"

const registered = () => Object.keys(migrations).includes("2026-11-23T0200_equity")

/** An in-memory PGlite with every migration and the equity tables. */
export const pgliteEquityDatabase = async (): Promise<TestDatabase> => {
  const t = await pgliteTestDatabase()
  if (!registered()) await equityMigration.up(t.database.db)
  return t
}

/**
 * A fresh schema on server PostgreSQL holding the equity tables only, created by the equity migrations themselves
 * (the tables, then bars keyed by ticker; not kysely's migrator, whose lock-table check looks across schemas and is
 * confused by a leftover one).
 */
export const postgresEquityDatabase = async (url: string): Promise<TestDatabase> => {
  const schema = `md_test_eq_${randomUUID().replace(/-/g, "").slice(0, 12)}`
  const admin = openPostgres(url, { poolSize: 1 })
  await sql.raw(`create schema ${schema}`).execute(admin.db)
  await admin.close()
  const scoped = withSchema(url, schema)
  const database = openPostgres(scoped, { poolSize: 5 })
  await equityMigration.up(database.db)
  await barsTickerMigration.up(database.db)
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
