/**
 * Test databases: a private schema on server PostgreSQL (TEST_DATABASE_URL), or an in-memory PGlite, each
 * migrated to the latest schema, with `truncate` to empty every table between tests.
 */
import { randomUUID } from "node:crypto"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { sql } from "kysely"
import { migrateToLatest } from "../../../infra/src/Migrate.ts"
import { type Database, openPglite, openPostgres, type PgliteOptions } from "../src/Database.ts"

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL

const TABLES = [
  "api_keys",
  "ledger_accounts",
  "ledger_entries",
  "ledger_holds",
  "idempotency_records",
  "rate_limit_scopes",
  "rate_limit_buckets"
]

export interface TestDatabase {
  readonly database: Database
  /** A connection URL that lands in this database's schema (for server processes under test). */
  readonly url: string | undefined
  readonly truncate: () => Promise<void>
  readonly drop: () => Promise<void>
}

/** A URL whose connections use `schema` as their search path. */
export const withSchema = (url: string, schema: string): string => {
  const u = new URL(url)
  u.searchParams.set("options", `-c search_path=${schema}`)
  return u.toString()
}

/**
 * A fresh schema on server PostgreSQL, migrated. Seen in full CI-like runs (2026-11-25 and 26), with other suites
 * dropping their schemas at the same time: a migration failed with `schema ... does not exist`. The cause was
 * Kysely's introspector, which scanned every schema of the database (`has_schema_privilege` on each) and failed on
 * one dropped during the scan; the migrator now looks at its own schema only (`infra/src/Migrate.ts`). A setup that
 * fails is still logged and tried once more on a new schema; a second failure fails the suite.
 */
export const postgresTestDatabase = async (url: string, poolSize = 20): Promise<TestDatabase> => {
  try {
    return await openMigratedSchema(url, poolSize)
  } catch (error) {
    console.warn(`postgresTestDatabase: setup failed once, retrying on a new schema: ${String(error)}`)
    return await openMigratedSchema(url, poolSize)
  }
}

const openMigratedSchema = async (url: string, poolSize: number): Promise<TestDatabase> => {
  const schema = `md_test_${randomUUID().replace(/-/g, "").slice(0, 16)}`
  const admin = openPostgres(url, { poolSize: 1 })
  await sql.raw(`create schema ${schema}`).execute(admin.db)
  await admin.close()
  const scoped = withSchema(url, schema)
  const database = openPostgres(scoped, { poolSize })
  try {
    await migrateToLatest(database.db)
  } catch (error) {
    await database.close()
    throw error
  }
  return {
    database,
    url: scoped,
    truncate: async () => {
      await sql.raw(`truncate ${TABLES.join(", ")}`).execute(database.db)
    },
    drop: async () => {
      await database.close()
      const a = openPostgres(url, { poolSize: 1 })
      await sql.raw(`drop schema ${schema} cascade`).execute(a.db)
      await a.close()
    }
  }
}

/**
 * A new in-memory PGlite migrated to the latest schema, dumped (`dumpDataDir`): made once per test worker (a worker
 * keeps its modules from file to file), for every in-memory test database to start from. A new cluster costs PGlite
 * 3 to 5 s of CPU (its WebAssembly `initdb`) and the migrations about 0.5 s more; a database loaded from the dump
 * about 0.8 s.
 */
let migratedDump: Promise<Blob> | undefined
export const migratedTemplate = (): Promise<Blob> => {
  migratedDump ??= (async () => {
    const database = await openPglite(undefined)
    try {
      await migrateToLatest(database.db)
      if (database.native?.kind !== "pglite") throw new Error("openPglite answered another kind of database")
      const pglite = database.native.pglite as unknown as { dumpDataDir: (compression: "none") => Promise<Blob> }
      return await pglite.dumpDataDir("none")
    } finally {
      await database.close()
    }
  })()
  // A failed attempt is not kept: the next database tries again.
  migratedDump.catch(() => {
    migratedDump = undefined
  })
  return migratedDump
}

/**
 * `dataDir` (empty) made a cluster from the test worker's migrated dump, as PGlite loads one (`loadDataDir`), about
 * 0.7 s; a new cluster (`openPglite` on an empty folder: `initdb` in a child process) takes 3 to 5 s of CPU. For
 * suites about what happens to an existing cluster; a new one's creation has its own tests
 * (`infra/test/CliSources.test.ts` here, `PgliteCreation.test.ts` in the end-to-end suites).
 */
export const seedDataDir = async (dataDir: string): Promise<void> => {
  const { PGlite } = await import("@electric-sql/pglite")
  const pglite = await PGlite.create({ dataDir, loadDataDir: await migratedTemplate() })
  await pglite.close()
}

/**
 * An in-memory PGlite (or one in `dataDir`), migrated; with `groupCommit`, its per-request calls are batched. An
 * in-memory one starts from the worker's migrated dump (`migratedTemplate`), and is migrated again (nothing left to
 * run unless the dump is behind).
 */
export const pgliteTestDatabase = async (dataDir?: string, options: PgliteOptions = {}): Promise<TestDatabase> => {
  const database = await openPglite(
    dataDir,
    dataDir === undefined ? { ...options, loadDataDir: await migratedTemplate() } : options
  )
  await migrateToLatest(database.db)
  return {
    database,
    url: undefined,
    truncate: async () => {
      for (const t of TABLES) await sql.raw(`delete from ${t}`).execute(database.db)
    },
    drop: () => database.close()
  }
}

/**
 * The process IDs whose command line contains `text` (Linux /proc; elsewhere none): a child process found by the
 * path it was given, as a test sees it alive or gone.
 */
export const processesWith = (text: string): Array<number> => {
  if (!existsSync("/proc")) return []
  const found: Array<number> = []
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").includes(text)) found.push(Number(entry))
    } catch {
      // exited meanwhile
    }
  }
  return found
}

/** Polls `look` every 5 ms until it gives a value (the test's own timeout bounds the wait). */
export const waitFor = async <A>(look: () => A | undefined | false): Promise<A> => {
  for (;;) {
    const a = look()
    if (a !== undefined && a !== false) return a
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}
