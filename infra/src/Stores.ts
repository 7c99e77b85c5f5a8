/**
 * Store selection: `DATABASE_URL` unset -> PGlite in `MARKET_DATA_DIR` (guarded by a lock file), `memory` ->
 * in-memory adapters, `postgres://...` -> a pg pool. Opening a database applies pending migrations and
 * starts the retention sweeper; closing the scope stops both and closes the database.
 */
import { closeSync, openSync, readFileSync, rmSync, writeSync } from "node:fs"
import { join, resolve } from "node:path"
import type { StorePorts } from "@market-data/core"
import { memoryStores } from "@market-data/memory"
import {
  DATA_FILE_MODE,
  type Database,
  GROUP_COMMIT_DEFAULTS,
  layerPgStores,
  makeDataFolder,
  openPglite,
  openPostgres,
  restrictDataFolder,
  sweep
} from "@market-data/postgres"
import { Clock, Effect, type Layer, Schedule, type Scope } from "effect"
import { type AppConfig, ConfigProblem } from "./AppConfig.ts"
import { migrateToLatest } from "./Migrate.ts"

export interface OpenedStores {
  readonly layer: Layer.Layer<StorePorts>
  /** For the startup line. */
  readonly description: string
  readonly database: Database | undefined
}

const LOCK_FILE = "market-data.lock"

/**
 * Data directories this process holds. A lock file naming this process's PID is ours only if listed here;
 * otherwise it was left by an earlier process that had the same PID (a container restarted as PID 1).
 */
const heldHere = new Set<string>()

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

/**
 * Takes the data directory's lock file, or fails naming the process that holds it. PGlite silently loses
 * writes when two processes open one directory, so a second opener must be refused.
 */
export const lockDataDir = (dir: string): Effect.Effect<void, ConfigProblem, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        // Owner-only from the first start on (`DataFolder.ts`); a folder found looser is tightened here.
        makeDataFolder(dir)
        const loosened = restrictDataFolder(dir)
        const path = join(dir, LOCK_FILE)
        if (heldHere.has(resolve(path))) {
          throw new ConfigProblem(
            `the data directory ${resolve(dir)} is already open in this process; PGlite allows one opener at a time. Close the other client first, or point this one elsewhere`
          )
        }
        for (let attempt = 0; attempt < 2; attempt++) {
          try {
            const fd = openSync(path, "wx", DATA_FILE_MODE)
            writeSync(fd, String(process.pid))
            closeSync(fd)
            heldHere.add(resolve(path))
            return { path, loosened }
          } catch (e) {
            if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
            const holder = Number(readFileSync(path, "utf8").trim())
            if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && alive(holder)) {
              throw new ConfigProblem(
                `the data directory ${resolve(dir)} is in use by process ${holder}; PGlite allows one process at a time. Stop it, or point MARKET_DATA_DIR elsewhere, or use PostgreSQL (DATABASE_URL=postgres://...)`
              )
            }
            rmSync(path, { force: true })
          }
        }
        throw new ConfigProblem(`could not take the lock file in ${resolve(dir)}`)
      },
      catch: (e) =>
        e instanceof ConfigProblem ? e : new ConfigProblem(`cannot use MARKET_DATA_DIR ${resolve(dir)}: ${String(e)}`)
    }),
    ({ path }) =>
      Effect.sync(() => {
        heldHere.delete(resolve(path))
        rmSync(path, { force: true })
      })
  ).pipe(
    Effect.flatMap(({ loosened: n }) =>
      n === 0
        ? Effect.void
        : Effect.logWarning(
            `tightened the data folder ${resolve(dir)}: ${n} entr${n === 1 ? "y was" : "ies were"} open to other local users; the folder and its folders are now 0700, its files 0600`
          )
    )
  )

/**
 * The acquire step of a database's open, interruptible (a SIGTERM or Ctrl-C while a command starts): `open` gets a
 * signal that aborts then, and the embedded store stops creating a new cluster instead of finishing it
 * (`PgliteOptions.signal`). The interruption still waits for `open` to settle: for the creating child to be gone and
 * its staging folder removed, or, where the open does not stop for the signal (an existing cluster, a pool), for
 * the database to open and be closed again, so nothing of it is still at work in the folder once the data folder's
 * lock is released.
 */
export const openInterruptibly = <E>(
  open: (signal: AbortSignal) => Promise<Database>,
  onError: (e: unknown) => E
): Effect.Effect<Database, E> => {
  let pending: Promise<Database> | undefined
  return Effect.tryPromise({
    try: (signal) => {
      pending = open(signal)
      return pending
    },
    catch: onError
  }).pipe(
    Effect.interruptible,
    Effect.onInterrupt(() =>
      Effect.promise(() =>
        pending === undefined
          ? Promise.resolve()
          : pending.then(
              (d) => d.close(),
              () => undefined
            )
      ).pipe(Effect.ignore)
    )
  )
}

/** Opens a database, migrates it and starts the sweeper, for the life of the scope (`openInterruptibly`). */
const openDatabase = (
  open: (signal: AbortSignal) => Promise<Database>,
  what: string,
  onMigration?: (name: string) => void
) =>
  Effect.gen(function* () {
    const database = yield* Effect.acquireRelease(
      openInterruptibly(open, (e) => new ConfigProblem(`cannot open ${what}: ${String(e)}`)),
      (d) => Effect.promise(() => d.close()).pipe(Effect.ignore)
    )
    const report = yield* Effect.tryPromise({
      try: () => migrateToLatest(database.db, onMigration),
      catch: (e) => new ConfigProblem(`cannot migrate ${what}: ${e instanceof Error ? e.message : String(e)}`)
    })
    if (report.applied.length > 0) yield* Effect.logInfo(`applied migrations: ${report.applied.join(", ")}`)
    yield* Clock.currentTimeMillis.pipe(
      Effect.flatMap((now) => sweep(database, now)),
      Effect.catchDefect((d) => Effect.logWarning("retention sweep failed", String(d))),
      Effect.repeat(Schedule.spaced("1 minute")),
      Effect.delay("1 minute"),
      Effect.forkScoped
    )
    return database
  })

/**
 * Opens the stores the configuration names. `locked`: the caller already holds the embedded data folder's lock
 * (`lockDataDir`, for the life of the same scope), as `openService` does to start work in the folder first.
 */
export const openStores = (
  config: AppConfig,
  options: {
    readonly locked?: boolean
    /** Hears each pending migration's name before it runs (a start's progress lines). */
    readonly onMigration?: (name: string) => void
  } = {}
): Effect.Effect<OpenedStores, ConfigProblem, Scope.Scope> =>
  Effect.gen(function* () {
    switch (config.store._tag) {
      case "Memory":
        return {
          layer: memoryStores(),
          description: "memory (DATABASE_URL=memory; nothing survives a restart)",
          database: undefined
        }
      case "Embedded": {
        const dir = config.store.dir
        if (options.locked !== true) yield* lockDataDir(dir)
        const batch = config.batch
        const grouped = batch !== undefined && batch.maxBatch > 1
        const database = yield* openDatabase(
          (signal) =>
            openPglite(dir, {
              signal,
              worker: config.pgliteWorker === true,
              ...(grouped
                ? { groupCommit: { ...GROUP_COMMIT_DEFAULTS, maxBatch: batch.maxBatch, windowMs: batch.windowMs } }
                : {})
            }),
          `the embedded database in ${resolve(dir)}`,
          options.onMigration
        )
        return {
          layer: layerPgStores(database),
          description: `embedded PGlite in ${resolve(dir)} (${
            config.pgliteWorker === true ? "on its worker thread" : "on the main thread"
          }, ${grouped ? `group commit up to ${batch.maxBatch} calls, ${batch.windowMs} ms window` : "group commit off"})`,
          database
        }
      }
      case "Postgres": {
        const url = config.store.url
        const database = yield* openDatabase(
          () =>
            Promise.resolve(
              openPostgres(url, {
                poolSize: config.poolSize,
                ...(config.batch === undefined || config.batch.maxBatch <= 1
                  ? {}
                  : {
                      groupCommit: {
                        ...GROUP_COMMIT_DEFAULTS,
                        maxBatch: config.batch.maxBatch,
                        windowMs: config.batch.windowMs,
                        // Each batch on its way holds a connection: leave the rest of the pool to other queries.
                        maxInFlight: Math.max(1, Math.min(GROUP_COMMIT_DEFAULTS.maxInFlight, config.poolSize - 1))
                      }
                    })
              })
            ),
          "PostgreSQL",
          options.onMigration
        )
        return {
          layer: layerPgStores(database),
          description: `PostgreSQL ${redactUrl(url)} (pool ${config.poolSize}, ${
            config.batch === undefined || config.batch.maxBatch <= 1
              ? "group commit off"
              : `group commit up to ${config.batch.maxBatch} calls, ${config.batch.windowMs} ms window`
          })`,
          database
        }
      }
    }
  })

/** A database URL without its password, for logs. */
export const redactUrl = (url: string): string => {
  try {
    const u = new URL(url)
    if (u.password !== "") u.password = "***"
    return u.toString()
  } catch {
    return "postgres://(unparseable)"
  }
}

/** The stores as a scoped layer. */
export const layerStores = (opened: OpenedStores): Layer.Layer<StorePorts> => opened.layer
