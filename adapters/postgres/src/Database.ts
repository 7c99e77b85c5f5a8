/**
 * The database handle behind the PostgreSQL adapters: kysely over a `pg` pool (server PostgreSQL) or over
 * PGlite (embedded). One query path for both. Table interfaces mirror the migrations in `infra/migrations`.
 */
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { mkdir, readdir, rename, rm } from "node:fs/promises"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Kysely, PGliteDialect, PostgresDialect } from "kysely"
import pg from "pg"
import { DATA_FOLDER_MODE, restrictDataFolder } from "./DataFolder.ts"
import { type GroupCommit, type GroupCommitOptions, makeGroupCommit } from "./GroupCommit.ts"
import { openPgliteWorker, type PgliteHandle, type PgliteTx } from "./PgliteProxy.ts"

export interface ApiKeysTable {
  id: string
  hash: string
  prefix: string
  label: string | null
  created_at_ms: string | number
  revoked_at_ms: string | number | null
  rate_limit_per_minute: number | null
}

export interface LedgerEntriesTable {
  id: string | number
  key_id: string
  kind: "grant" | "charge"
  amount: string | number
  reason: string
  hold_id: string | null
  at_ms: string | number
}

export interface IdempotencyRecordsTable {
  key_id: string
  idem_key: string
  fingerprint: string
  state: "in_flight" | "stored"
  token: string
  expires_at_ms: string | number
  status: number | null
  headers: unknown
  body: string | null
}

export interface Tables {
  api_keys: ApiKeysTable
  ledger_entries: LedgerEntriesTable
  idempotency_records: IdempotencyRecordsTable
}

export type StoreKind = "postgres" | "pglite"

export interface Database {
  readonly db: Kysely<Tables>
  readonly kind: StoreKind
  /** Closes the pool or the embedded database. */
  readonly close: () => Promise<void>
  /** The PostgreSQL pool's connections now (metrics); absent for the embedded database (one connection). */
  readonly poolStats?: () => PoolStats
  /**
   * Statements sent to the database so far (every round trip, whatever sent it: kysely, `COPY`, group commit):
   * on server PostgreSQL each query of a pooled connection, on PGlite each `query` and `exec`.
   */
  readonly statements?: () => number
  /**
   * Group commit (`GroupCommit.ts`): when present, the stores send their per-request calls through it, many
   * requests' calls in one statement. Absent: every call is its own statement.
   */
  readonly groupCommit?: GroupCommit
  /**
   * The driver under kysely, for what kysely cannot say: `COPY` (`Copy.ts`, which knows the types). Typed opaquely
   * so that the published declarations do not need the drivers' type packages (`@types/pg`, PGlite's Emscripten
   * types) in a consumer's project.
   */
  readonly native?:
    | { readonly kind: "postgres"; readonly pool: unknown }
    | { readonly kind: "pglite"; readonly pglite: unknown }
}

export interface PoolStats {
  /** Connections open, idle among them, requests waiting for one, and the pool's size. */
  readonly total: number
  readonly idle: number
  readonly waiting: number
  readonly max: number
}

// bigint (int8) and numeric come back as strings; the adapters convert the columns they read.
const toNumber = (v: string | number | null): number =>
  v === null ? Number.NaN : typeof v === "number" ? v : Number(v)
export const num = toNumber

/** The one statement a group commit sends; prepared once per connection. */
const BATCH_STATEMENT = "select md_batch($1::jsonb) as r"

/**
 * A pool on server PostgreSQL. With `groupCommit`, the stores' per-request calls go through a group committer
 * (`GroupCommit.ts`); without it (the default), each call is its own statement.
 */
export const openPostgres = (
  url: string,
  options: { readonly poolSize?: number; readonly groupCommit?: GroupCommitOptions } = {}
): Database => {
  const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 10 })
  let statements = 0
  // An idle client that loses its connection must not crash the process; the next query reconnects.
  pool.on("error", () => {})
  // Nor may a client checked out of the pool: while checked out it has no listener of the pool's, and `pg`
  // emits 'error' on it when the server goes away mid-query (a restart, `pg_ctl stop -m immediate`), which
  // with no listener kills the process. The query itself still fails (answered 503 `source_unavailable`),
  // and the pool discards the client when it is released unqueryable.
  pool.on("connect", (client) => {
    client.on("error", () => {})
    // Every statement a pooled connection sends is counted (kysely, `pool.query` and `COPY` all go through it).
    const send = client.query
    client.query = function (this: pg.PoolClient, ...args: Array<unknown>) {
      statements++
      return (send as (...a: Array<unknown>) => unknown).apply(this, args)
    } as typeof client.query
  })
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) })
  const max = options.poolSize ?? 10
  return {
    db,
    kind: "postgres",
    close: () => db.destroy(),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max }),
    statements: () => statements,
    native: { kind: "postgres", pool },
    ...(options.groupCommit === undefined || options.groupCommit.maxBatch <= 1
      ? {}
      : {
          groupCommit: makeGroupCommit(
            async (calls) =>
              (await pool.query<{ r: Array<never> }>({ name: "md_batch", text: BATCH_STATEMENT, values: [calls] }))
                .rows[0]?.r ?? [],
            options.groupCommit
          )
        })
  }
}

/**
 * Shared buffers of the embedded database. PGlite's default (128 MB) is sized for a server; one process
 * serving one key set needs far less, and 32 MB takes a reopened service from about 380 MB to about 270 MB RSS.
 */
export const PGLITE_SHARED_BUFFERS = "32MB"

/**
 * Where a new cluster is created before it is moved into the data folder (`createClusterApart`). A folder left
 * here by a creation that was stopped (SIGTERM, SIGKILL, power loss) is removed by the next creation.
 */
export const PGLITE_STAGING = ".pglite-initdb"

/** PGlite's `initdb` stopped by the caller's signal (`PgliteOptions.signal`): nothing of it is left behind. */
export class PgliteCreationAborted extends Error {
  constructor() {
    super("the embedded database's creation was stopped")
    this.name = "PgliteCreationAborted"
  }
}

/**
 * Moves a cluster created in `staging` into `dataDir`, `PG_VERSION` last: `openPglite` takes a folder with
 * `PG_VERSION` for a whole cluster, so a stop anywhere in the creation or the move leaves a folder that the next
 * start creates again. Cluster entries already in `dataDir` (from a creation by an earlier version, stopped part
 * way, which wrote into the folder itself) are replaced: without `PG_VERSION` they are no cluster.
 */
const moveClusterIn = async (staging: string, dataDir: string): Promise<void> => {
  const names = await readdir(staging)
  if (!names.includes("PG_VERSION")) throw new Error(`no PG_VERSION in the created cluster (${staging})`)
  for (const name of [...names.filter((n) => n !== "PG_VERSION"), "PG_VERSION"]) {
    await rm(join(dataDir, name), { recursive: true, force: true })
    await rename(join(staging, name), join(dataDir, name))
  }
  await rm(staging, { recursive: true, force: true })
}

/**
 * Creates a new cluster for `dataDir` in a child process (`CreatePglite.ts`) on V8's baseline WebAssembly
 * compiler. PGlite's `initdb` in the opening process peaked it at 1.1 to 1.3 GB (most of it V8's optimizing
 * compiler working through PGlite's WebAssembly, which is compiled afresh for initdb), whatever is loaded after;
 * in a child with `--liftoff-only` the creation peaks at about 570 MB, in that child only, and ends with it, and
 * the opener then reopens an existing cluster (about 300 MB). Undefined when the child could be run and created
 * it; the child's complaint otherwise.
 *
 * The child creates the cluster in `PGLITE_STAGING` inside the folder, and it is moved in when whole
 * (`moveClusterIn`): PGlite writes its files over the last tenth of the creation, `PG_VERSION` among the first, so
 * a child stopped then used to leave a folder that looked like a cluster and was not one. `signal` stops the
 * creation (a SIGTERM while `serve` starts): the child is killed, the staging folder removed, and the promise
 * rejects with `PgliteCreationAborted` once the child is gone (under load an initdb took a minute, which a
 * container's stop would not wait for).
 */
export const createClusterApart = async (
  dataDir: string,
  postgresqlconf: ReadonlyArray<string>,
  signal?: AbortSignal
): Promise<string | undefined> => {
  const stopped = (): boolean => signal?.aborted === true
  if (stopped()) throw new PgliteCreationAborted()
  const staging = join(dataDir, PGLITE_STAGING)
  await rm(staging, { recursive: true, force: true })
  await mkdir(staging, { recursive: true, mode: DATA_FOLDER_MODE })
  const outcome = await new Promise<string | undefined>((resolve) => {
    const script = fileURLToPath(
      new URL(import.meta.url.endsWith(".ts") ? "./CreatePglite.ts" : "./CreatePglite.js", import.meta.url)
    )
    const child = spawn(process.execPath, ["--liftoff-only", script, staging, ...postgresqlconf], {
      stdio: ["ignore", "ignore", "pipe"]
    })
    const stop = () => child.kill("SIGKILL")
    signal?.addEventListener("abort", stop, { once: true })
    if (stopped()) stop()
    let err = ""
    child.stderr?.on("data", (d) => {
      if (err.length < 4000) err += d
    })
    child.on("error", (e) => {
      signal?.removeEventListener("abort", stop)
      resolve(e.message)
    })
    child.on("exit", (code, sig) => {
      signal?.removeEventListener("abort", stop)
      resolve(code === 0 ? undefined : `exited with ${sig ?? `code ${code}`}: ${err.trim().slice(-1000)}`)
    })
  })
  if (stopped()) {
    await rm(staging, { recursive: true, force: true })
    throw new PgliteCreationAborted()
  }
  if (outcome !== undefined) {
    await rm(staging, { recursive: true, force: true })
    return outcome
  }
  try {
    await moveClusterIn(staging, dataDir)
    return undefined
  } catch (e) {
    return `could not move the created cluster into ${dataDir}: ${e instanceof Error ? e.message : String(e)}`
  }
}

/**
 * Group commit on the embedded database: one batch at a time. PGlite is one connection (on this process's event
 * loop, or on its worker thread), so a second batch on its way could only wait for the first; calls arriving
 * meanwhile join the next.
 */
export const PGLITE_GROUP_COMMIT_IN_FLIGHT = 1

export interface PgliteOptions {
  readonly groupCommit?: GroupCommitOptions
  /**
   * Where PGlite runs: `true` on its own `node:worker_threads` Worker (`PgliteProxy.ts`), so its WebAssembly
   * does not share the event loop with HTTP and the planes (`DATABASE_PGLITE_WORKER=on`); `false` (the default)
   * in this thread. On a 2-core host that also runs its clients the worker measured no better (docs/performance-log.md).
   */
  readonly worker?: boolean
  /**
   * Stops the creation of a new cluster (`createClusterApart`): the promise then rejects with
   * `PgliteCreationAborted` and leaves no cluster, whole or partial, in the folder. An existing cluster's opening
   * is not stopped (it takes about a second).
   */
  readonly signal?: AbortSignal
  /**
   * Test-only: an in-memory database (`dataDir` undefined) starts from this dump of a data directory (PGlite's
   * `dumpDataDir`) instead of a new cluster; the test suites start each database from one made and migrated once
   * (`adapters/postgres/test/support.ts`), about 0.8 s instead of 3 to 5. Ignored with a `dataDir`.
   */
  readonly loadDataDir?: Blob
}

/**
 * PGlite in `dataDir`, or in memory when `dataDir` is undefined. A data directory without a cluster yet gets one
 * created in a child process first (`createClusterApart`); should that fail, it is created here as before (a stop
 * by `options.signal` is not a failure: it rejects).
 * With `worker`, the instance is opened and runs on a worker thread (`PgliteProxy.ts`): same data
 * directory, same settings, same statements, same durability (a commit returns after its WAL is written, in
 * whichever thread PGlite runs).
 *
 * With `groupCommit` (`maxBatch` above 1), the stores' per-request calls go through a group committer as on
 * server PostgreSQL: the calls of concurrent requests run as one `md_batch` statement in one transaction. On
 * PGlite every statement runs in one thread (parse, plan, execute, commit and the protocol's messages through
 * WebAssembly), so a batch saves each member a statement's fixed cost (see docs/performance-log.md); a commit is as
 * durable as a lone statement's, its WAL written to the data directory before the answer is released.
 */
export const openPglite = async (dataDir: string | undefined, options: PgliteOptions = {}): Promise<Database> => {
  const postgresqlconf = [`shared_buffers=${PGLITE_SHARED_BUFFERS}`]
  const creates = dataDir !== undefined && !existsSync(join(dataDir, "PG_VERSION"))
  if (creates) {
    await createClusterApart(dataDir, postgresqlconf, options.signal)
    // initdb wrote the new cluster's files readable and writable by every local user: owner-only before it opens.
    if (existsSync(dataDir)) restrictDataFolder(dataDir)
  }
  const pglite: PgliteHandle =
    options.worker !== true
      ? // Loaded only here: with the worker, this thread never loads PGlite.
        ((await (
          await import("@electric-sql/pglite")
        ).PGlite.create(
          dataDir !== undefined
            ? { dataDir, postgresqlconf }
            : options.loadDataDir !== undefined
              ? { loadDataDir: options.loadDataDir, postgresqlconf }
              : { postgresqlconf }
        )) as unknown as PgliteHandle)
      : await openPgliteWorker(dataDir, postgresqlconf, dataDir === undefined ? options.loadDataDir : undefined)
  // Owner-only again once open: a cluster the child could not create was created by this open instead
  // (`createClusterApart`'s fallback), and PGlite's start rewrites some files (`pg_internal.init`) `0644`, whatever
  // the umask. Again at close, for the files it writes then.
  if (dataDir !== undefined) restrictDataFolder(dataDir)
  // Every statement is counted, whatever sends it (kysely, `COPY`, group commit): PGlite's `query` and `exec`,
  // on the instance and on its transactions.
  let statements = 0
  const countOn = <T extends { query: PgliteHandle["query"]; exec: PgliteHandle["exec"] }>(target: T): T => {
    const query = target.query.bind(target)
    const exec = target.exec.bind(target)
    target.query = ((...args: Parameters<PgliteHandle["query"]>) => {
      statements++
      return query(...args)
    }) as PgliteHandle["query"]
    target.exec = ((...args: Parameters<PgliteHandle["exec"]>) => {
      statements++
      return exec(...args)
    }) as PgliteHandle["exec"]
    return target
  }
  countOn(pglite)
  const transaction = pglite.transaction.bind(pglite)
  pglite.transaction = ((callback: Parameters<PgliteHandle["transaction"]>[0]) =>
    transaction((tx) =>
      callback(countOn(tx as PgliteTx & Pick<PgliteHandle, "query" | "exec">))
    )) as PgliteHandle["transaction"]
  const db = new Kysely<Tables>({ dialect: new PGliteDialect({ pglite: pglite as never }) })
  const group = options.groupCommit
  return {
    db,
    kind: "pglite",
    native: { kind: "pglite", pglite },
    statements: () => statements,
    close: async () => {
      await db.destroy()
      if (!pglite.closed) await pglite.close()
      if (dataDir !== undefined && existsSync(dataDir)) restrictDataFolder(dataDir)
    },
    ...(group === undefined || group.maxBatch <= 1
      ? {}
      : {
          groupCommit: makeGroupCommit(
            async (calls) => (await pglite.query<{ r: Array<never> }>(BATCH_STATEMENT, [calls])).rows[0]?.r ?? [],
            { ...group, maxInFlight: PGLITE_GROUP_COMMIT_IN_FLIGHT }
          )
        })
  }
}
