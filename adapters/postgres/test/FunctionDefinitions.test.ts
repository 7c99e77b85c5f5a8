/**
 * The SQL that runs today, readable in one place: every database function's module (`src/sql/`) holds exactly
 * the definition a database migrated to the latest schema has. Each module text is created in a scratch schema
 * and compared with the migrated function through `pg_get_functiondef` (name, arguments, result, language,
 * volatility and body), on PGlite and server PostgreSQL; and the list of modules is every `md_*` function the
 * migrations leave.
 */
import { sql } from "kysely"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { databaseFunctions } from "../src/sql/index.ts"
import { pgliteTestDatabase, postgresTestDatabase, TEST_DATABASE_URL, type TestDatabase } from "./support.ts"

const SCRATCH = "md_function_modules"

/** `pg_get_functiondef` of every `md_*` function of a schema, by name, its schema name written as `<schema>`. */
const definitionsIn = async (run: <R>(query: ReturnType<typeof sql<R>>) => Promise<Array<R>>, schema: string) => {
  const rows = await run(sql<{ name: string; def: string }>`
    select p.proname as name, pg_get_functiondef(p.oid) as def
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = ${schema} and p.proname like 'md\\_%'
    order by p.proname`)
  const escaped = schema.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  return new Map(rows.map((r) => [r.name, r.def.replace(new RegExp(`\\b${escaped}\\.`, "g"), "<schema>.")]))
}

const suite = (name: string, open: () => Promise<TestDatabase>) =>
  describe(`${name}: database function modules`, () => {
    let t: TestDatabase
    beforeAll(async () => {
      t = await open()
    }, 120_000)
    afterAll(() => t?.drop())

    it("each module's text is exactly the function a migrated database holds, and every md_ function has one", async () => {
      await t.database.db.connection().execute(async (c) => {
        const run = async <R>(query: ReturnType<typeof sql<R>>) => (await query.execute(c)).rows
        const schema = (await run(sql<{ s: string }>`select current_schema() as s`))[0]?.s as string
        const migrated = await definitionsIn(run, schema)
        expect([...migrated.keys()].sort()).toEqual(databaseFunctions.map((f) => f.name).sort())

        // The module texts, created alone in a scratch schema (bodies not checked against tables there), rolled back.
        await run(sql`begin`)
        try {
          await run(sql.raw(`create schema ${SCRATCH}`))
          await run(sql.raw(`set local search_path to ${SCRATCH}`))
          await run(sql`set local check_function_bodies = off`)
          for (const f of databaseFunctions) await run(sql.raw(f.definition))
          const fromModules = await definitionsIn(run, SCRATCH)
          for (const f of databaseFunctions) {
            expect(fromModules.get(f.name), f.name).toBeDefined()
            expect(fromModules.get(f.name), f.name).toBe(migrated.get(f.name))
          }
        } finally {
          await run(sql`rollback`)
        }
      })
    }, 60_000)
  })

suite("PGlite", () => pgliteTestDatabase())

if (TEST_DATABASE_URL === undefined) {
  console.warn("PostgreSQL function-module tests SKIPPED: set TEST_DATABASE_URL=postgres://... to run them")
  describe.skip("PostgreSQL: database function modules (skipped: TEST_DATABASE_URL is not set)", () => {})
} else {
  suite("PostgreSQL", () => postgresTestDatabase(TEST_DATABASE_URL as string))
}
