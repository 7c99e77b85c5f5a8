/**
 * Forward-only migrations, applied in name order. Kysely's migrator takes a PostgreSQL advisory lock for
 * the run, so instances starting together on one database do not race; PGlite has one connection anyway.
 */
import { type DatabaseIntrospector, type Kysely, sql, type TableMetadata } from "kysely"
import { type Migration, Migrator } from "kysely/migration"
import * as accounts from "../migrations/2026-11-22T0001_accounts.ts"
import * as meteredCharge from "../migrations/2026-11-23T0001_metered_charge.ts"
import * as settleOwner from "../migrations/2026-11-23T0002_settle_owner.ts"
import * as market from "../migrations/2026-11-23T0100_market.ts"
import * as equity from "../migrations/2026-11-23T0200_equity.ts"
import * as sourceErrors from "../migrations/2026-11-23T0300_source_errors.ts"
import * as rateBegin from "../migrations/2026-11-23T0400_rate_begin.ts"
import * as assetDirectory from "../migrations/2026-11-25T0100_asset_directory.ts"
import * as bulkEntries from "../migrations/2026-11-25T0300_bulk_entries.ts"
import * as directorySpot from "../migrations/2026-11-25T0500_directory_spot.ts"
import * as equitySimulation from "../migrations/2026-11-25T0600_equity_simulation.ts"
import * as topUp from "../migrations/2026-11-25T2300_top_up.ts"
import * as barsTicker from "../migrations/2026-11-26T0300_bars_ticker.ts"
import * as moneyPort from "../migrations/2026-11-26T0400_money_port.ts"
import * as batch from "../migrations/2026-11-26T0500_batch.ts"
import * as namedBatchArguments from "../migrations/2026-12-06T0100_named_batch_arguments.ts"

/** Every migration, by name. Add new ones here; never edit one that has shipped. */
export const migrations = {
  "2026-11-22T0001_accounts": accounts,
  "2026-11-23T0001_metered_charge": meteredCharge,
  "2026-11-23T0002_settle_owner": settleOwner,
  "2026-11-23T0100_market": market,
  "2026-11-23T0200_equity": equity,
  "2026-11-23T0300_source_errors": sourceErrors,
  "2026-11-23T0400_rate_begin": rateBegin,
  "2026-11-25T0100_asset_directory": assetDirectory,
  "2026-11-25T0300_bulk_entries": bulkEntries,
  "2026-11-25T0500_directory_spot": directorySpot,
  "2026-11-25T0600_equity_simulation": equitySimulation,
  "2026-11-25T2300_top_up": topUp,
  "2026-11-26T0300_bars_ticker": barsTicker,
  "2026-11-26T0400_money_port": moneyPort,
  "2026-11-26T0500_batch": batch,
  "2026-12-06T0100_named_batch_arguments": namedBatchArguments
}

export interface MigrationReport {
  readonly applied: ReadonlyArray<string>
  readonly current: ReadonlyArray<string>
}

/**
 * `db` with an introspector that looks at `schema` alone, for the migrator (which only asks whether its schema and
 * its two tables exist). Kysely's PostgreSQL introspector lists the tables of every schema of the database and calls
 * `has_schema_privilege` on each: a schema another session drops during that scan fails it with `schema "..." does
 * not exist`. Seen twice in the shared test database (suites drop their schemas while others migrate: a server
 * refused to start); a production database whose operators drop schemas would see it too.
 */
const withSchemaIntrospection = (db: Kysely<any>, schema: string): Kysely<any> => {
  const introspection: DatabaseIntrospector = {
    getSchemas: async () =>
      (
        await sql<{
          name: string
        }>`select nspname as name from pg_catalog.pg_namespace where nspname = ${schema}`.execute(db)
      ).rows,
    getTables: async () =>
      (
        await sql<{ name: string }>`select c.relname as name from pg_catalog.pg_class c
          join pg_catalog.pg_namespace n on n.oid = c.relnamespace
          where n.nspname = ${schema} and c.relkind in ('r', 'p', 'v', 'f')`.execute(db)
      ).rows.map((r): TableMetadata => ({ name: r.name, schema, isView: false, isForeign: false, columns: [] }))
  }
  return new Proxy(db, {
    get: (target, prop) => {
      if (prop === "introspection") return introspection
      const value = Reflect.get(target, prop, target)
      // Kysely's methods read private fields: they run on the real instance.
      return typeof value === "function" ? value.bind(target) : value
    }
  })
}

/**
 * The migrator for the connection's current schema. Kysely looks its tables up in every schema unless told
 * which, so without this a leftover schema with a `kysely_migration_lock` (say from a killed test run) would
 * make migrations in another schema of the same database fail.
 */
export const migrator = async (db: Kysely<any>, onMigration?: (name: string) => void): Promise<Migrator> => {
  const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]?.s
  // `onMigration` hears each migration's name before it runs (a start's progress lines); the SQL is the same.
  const provided: Record<string, Migration> =
    onMigration === undefined
      ? migrations
      : Object.fromEntries(
          Object.entries(migrations).map(([name, m]): [string, Migration] => [
            name,
            {
              up: async (d) => {
                onMigration(name)
                await m.up(d)
              },
              down: m.down
            }
          ])
        )
  return new Migrator({
    db: schema === undefined ? db : withSchemaIntrospection(db, schema),
    provider: { getMigrations: async () => provided },
    migrationTableName: "md_migrations",
    ...(schema === undefined ? {} : { migrationTableSchema: schema })
  })
}

/** Applies every pending migration; throws with the failing migration's name. */
export const migrateToLatest = async (
  db: Kysely<any>,
  onMigration?: (name: string) => void
): Promise<MigrationReport> => {
  const { error, results } = await (await migrator(db, onMigration)).migrateToLatest()
  const failed = results?.find((r) => r.status === "Error")
  if (error !== undefined) {
    throw new Error(
      `migration ${failed?.migrationName ?? "(before any)"} failed: ${error instanceof Error ? error.message : String(error)}`
    )
  }
  const applied = (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName)
  const current = (await (await migrator(db)).getMigrations())
    .filter((m) => m.executedAt !== undefined)
    .map((m) => m.name)
  return { applied, current }
}

/** Names of migrations not yet applied. */
export const pendingMigrations = async (db: Kysely<any>): Promise<ReadonlyArray<string>> =>
  (await (await migrator(db)).getMigrations()).filter((m) => m.executedAt === undefined).map((m) => m.name)
