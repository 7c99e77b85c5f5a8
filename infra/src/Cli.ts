/**
 * The `market-data` command line: `serve`, `migrate`, `keys create|list|revoke`, `credits grant`, `doctor`,
 * `sources`, `ingest sec|prices` (in `Ingest.ts`).
 * Exit codes: 0 done (for `doctor`: healthy), 1 failed while running (for `doctor`: a check failed), 2 bad
 * usage or configuration. Data goes to stdout (as one JSON document with `--json`); messages and progress go
 * to stderr.
 */
import { existsSync, readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { type ParseArgsOptionsConfig, parseArgs as parseArgv } from "node:util"
import {
  AdminError,
  coverageSource,
  createKey,
  grantCredits,
  KeyStore,
  listKeys,
  revokeKey,
  type StorePorts
} from "@market-data/core"
import { type Database, makePgMarketStore, openPglite, openPostgres } from "@market-data/postgres"
import { SingleBar } from "cli-progress"
import { Cause, Clock, Effect, Layer, type Scope } from "effect"
import { type Kysely, sql } from "kysely"
import { sendToServer } from "./Admin.ts"
import { type AppConfig, ConfigProblem, loadConfig } from "./AppConfig.ts"
import { IngestUsage, ingestCommand } from "./Ingest.ts"
import { serve } from "./Main.ts"
import { migrations, migrator, pendingMigrations } from "./Migrate.ts"
import type { ProgressFactory } from "./Progress.ts"
import { layerPlatform, type OpenedService } from "./Service.ts"
import { lockDataDir, openInterruptibly, openStores, redactUrl } from "./Stores.ts"

export const USAGE = `market-data <command>

Commands:
  serve                                   run the HTTP server (configuration from the environment; see README)
  migrate [--json]                        apply pending database migrations (serve also does at start)
  keys create --credits N [--label L] [--rate-limit N] [--json]
                                          mint a key with an opening balance; prints the key once
  keys list [--json]                      list keys: ID, prefix, label, balance, created, revoked
  keys revoke <key-id> [--json]           revoke a key (its ID, not the key itself)
  credits grant <key-id> <n> [--reason R] [--json]
                                          add n credits (a whole number, 1 or more) to a key's balance
  doctor [--json]                         check the store: database reachable, migrations current, data dir lock
  sources [--json]                        each source (venue, SEC EDGAR): last success, lag, status, last error,
                                          as the live instance stored them (simulated/memory: ask the server)
  ingest sec <file-or-dir>... [--json]    load SEC files (companyfacts, submissions and older pages, Form 4, 13F,
                                          ticker lists; bulk folders too) into the database; idempotent
  ingest prices <csv-or-dir>... [--id eq:<cik>:<ticker>] [--json]
                                          load daily bars (header: date,open,high,low,close,volume; without
                                          --id, an id or ticker column names each row's company; folders are
                                          walked for .csv files)
  help                                    this text

Exit codes: 0 done (doctor: healthy), 1 failed while running (doctor: a check failed; keys/credits: unknown or
revoked key; ingest: anything refused, a file or a row), 2 bad usage or configuration. ingest reports loaded
and refused rows by count and reason, per file and in total; 0 means every file loaded in full (warnings, such as
a price row on a day the calendar has closed, may still be printed).`

/** Where a command writes. */
export interface Io {
  /** Data: what scripts read (one JSON document per command with `--json`). */
  readonly out: (line: string) => void
  /** Messages and progress. */
  readonly err: (line: string) => void
  /** How long work reports progress; by default a bar on a terminal, plain lines otherwise (`progressFor`). */
  readonly progress?: ProgressFactory
}

export type { Progress, ProgressFactory } from "./Progress.ts"

/** One plain line per finished step: for logs, pipes and CI. */
export const lineProgress =
  (write: (line: string) => void): ProgressFactory =>
  (title, total) => {
    let done = 0
    return {
      stepDone: (name, ms) => write(`${title} ${++done}/${total}: ${name} (${Math.round(ms)} ms)`),
      stop: () => {}
    }
  }

/** A `cli-progress` bar redrawn in place on `stream` (a terminal). */
export const barProgress =
  (stream: NodeJS.WritableStream, options: { readonly forceRedraw?: boolean } = {}): ProgressFactory =>
  (title, total) => {
    const bar = new SingleBar({
      stream,
      format: `${title} [{bar}] {value}/{total} {step}`,
      hideCursor: true,
      clearOnComplete: false,
      noTTYOutput: options.forceRedraw === true,
      notTTYSchedule: 0
    })
    bar.start(total, 0, { step: "" })
    return {
      stepDone: (name) => bar.increment(1, { step: name }),
      stop: () => bar.stop()
    }
  }

/** A bar when both output streams are terminals, plain lines on stderr otherwise. */
const progressFor = (io: Io): ProgressFactory =>
  io.progress ??
  (process.stdout.isTTY === true && process.stderr.isTTY === true ? barProgress(process.stderr) : lineProgress(io.err))

class Usage {
  readonly _tag = "Usage"
  readonly message: string
  constructor(message: string) {
    this.message = message
  }
}

interface Parsed {
  readonly positional: ReadonlyArray<string>
  readonly flags: ReadonlyMap<string, string | true>
}

/**
 * Every option of every command, with its type; each command then accepts its own subset (`onlyFlags`), so an
 * option of another command is refused by name (`unknown option --id`).
 */
const OPTIONS = {
  json: { type: "boolean" },
  help: { type: "boolean" },
  credits: { type: "string" },
  label: { type: "string" },
  "rate-limit": { type: "string" },
  reason: { type: "string" },
  id: { type: "string" }
} as const satisfies ParseArgsOptionsConfig

/**
 * Splits argv into positional words and options (`--flag value`, `--flag=value`, boolean `--json`; `--` ends the
 * options, so a positional word may start with a dash after it), with `node:util`'s `parseArgs`. Its tokens are
 * checked here so that each mistake is one plain line (exit 2): an option unknown to every command, one given
 * twice, a value missing (or another option where the value should be: `--credits --json`), a value given to a
 * boolean option (`--json=yes`), single-dash options (there are none).
 */
export const parseArgs = (argv: ReadonlyArray<string>): Parsed | Usage => {
  const { tokens } = parseArgv({
    args: [...argv],
    options: OPTIONS,
    allowPositionals: true,
    strict: false,
    tokens: true
  })
  const positional: Array<string> = []
  const flags = new Map<string, string | true>()
  for (const token of tokens) {
    if (token.kind === "positional") positional.push(token.value)
    if (token.kind !== "option") continue
    const raw = argv[token.index] as string
    if (!raw.startsWith("--")) {
      return new Usage(
        `unknown option ${raw}: options are spelled --name, and a word starting with a dash goes after -- (as in -- ${raw})`
      )
    }
    const name = token.name
    const known = Object.hasOwn(OPTIONS, name) ? OPTIONS[name as keyof typeof OPTIONS] : undefined
    if (known === undefined) return new Usage(`unknown option --${name}`)
    if (flags.has(name)) return new Usage(`--${name} given twice`)
    if (known.type === "boolean") {
      if (token.inlineValue === true) return new Usage(`--${name} takes no value`)
      flags.set(name, true)
    } else {
      const value = token.value
      // `--credits --json`: parseArgs takes the next word as the value; a missing value is meant.
      if (value === undefined || (token.inlineValue !== true && value.startsWith("--")))
        return new Usage(`--${name} needs a value`)
      flags.set(name, value)
    }
  }
  return { positional, flags }
}

const intFlag = (flags: Parsed["flags"], name: string, required: boolean): number | undefined | Usage => {
  const v = flags.get(name)
  if (v === undefined) return required ? new Usage(`--${name} is required`) : undefined
  if (v === true || !/^\d{1,15}$/.test(v))
    return new Usage(`--${name} must be a whole number, got ${JSON.stringify(v)}`)
  return Number(v)
}

const onlyFlags = (flags: Parsed["flags"], allowed: ReadonlyArray<string>): Usage | undefined => {
  for (const name of flags.keys()) if (!allowed.includes(name)) return new Usage(`unknown option --${name}`)
  return undefined
}

type Stores = StorePorts

/** The key commands, against whatever stores are provided. */
export const keysCommand = (parsed: Parsed, io: Io) =>
  Effect.gen(function* () {
    const [, sub, ...rest] = parsed.positional
    const json = parsed.flags.get("json") === true
    switch (sub) {
      case "create": {
        const bad = onlyFlags(parsed.flags, ["credits", "label", "rate-limit", "json"])
        if (bad) return yield* Effect.fail(bad)
        if (rest.length > 0) return yield* Effect.fail(new Usage(`unexpected ${JSON.stringify(rest[0])}`))
        const credits = intFlag(parsed.flags, "credits", true)
        if (credits instanceof Usage) return yield* Effect.fail(credits)
        const rateLimit = intFlag(parsed.flags, "rate-limit", false)
        if (rateLimit instanceof Usage) return yield* Effect.fail(rateLimit)
        const label = parsed.flags.get("label")
        const created = yield* createKey({
          credits: credits as number,
          label: typeof label === "string" ? label : null,
          rateLimitPerMinute: rateLimit ?? null
        })
        if (json) {
          io.out(
            JSON.stringify({
              key: created.key,
              id: created.record.id,
              label: created.record.label,
              credits: created.balance,
              rate_limit_per_minute: created.record.rateLimitPerMinute
            })
          )
        } else {
          io.out(created.key)
          io.err(`created ${created.record.id} with ${created.balance} credits; the key above is shown only once`)
        }
        return 0
      }
      case "list": {
        const bad = onlyFlags(parsed.flags, ["json"])
        if (bad) return yield* Effect.fail(bad)
        const keys = yield* listKeys
        const rows = keys.map(({ record, balance }) => ({
          id: record.id,
          prefix: record.prefix,
          label: record.label,
          credits: balance,
          rate_limit_per_minute: record.rateLimitPerMinute,
          created_at: record.createdAt.toISOString(),
          revoked_at: record.revokedAt?.toISOString() ?? null
        }))
        if (json) io.out(JSON.stringify(rows))
        else if (rows.length === 0) io.out("no keys")
        else {
          for (const r of rows) {
            io.out(
              [
                r.id,
                `${r.prefix}…`,
                r.label ?? "-",
                `${r.credits} credits`,
                r.created_at,
                r.revoked_at === null ? "active" : `revoked ${r.revoked_at}`
              ].join("  ")
            )
          }
        }
        return 0
      }
      case "revoke": {
        const bad = onlyFlags(parsed.flags, ["json"])
        if (bad) return yield* Effect.fail(bad)
        const id = rest[0]
        if (id === undefined || rest.length > 1) return yield* Effect.fail(new Usage("keys revoke takes one key ID"))
        const revoked = yield* revokeKey(id)
        if (json) io.out(JSON.stringify({ id: revoked.id, revoked_at: revoked.revokedAt?.toISOString() }))
        else io.out(`revoked ${revoked.id}`)
        return 0
      }
      default:
        return yield* Effect.fail(
          new Usage(`unknown keys command ${JSON.stringify(sub ?? "")}; use create, list or revoke`)
        )
    }
  })

/** `credits grant <key-id> <n> [--reason R]`, against whatever stores are provided. */
export const creditsCommand = (parsed: Parsed, io: Io) =>
  Effect.gen(function* () {
    const [, sub, ...rest] = parsed.positional
    if (sub !== "grant") {
      return yield* Effect.fail(new Usage(`unknown credits command ${JSON.stringify(sub ?? "")}; use grant`))
    }
    const bad = onlyFlags(parsed.flags, ["reason", "json"])
    if (bad) return yield* Effect.fail(bad)
    const [id, amount, ...extra] = rest
    if (id === undefined || amount === undefined || extra.length > 0) {
      return yield* Effect.fail(new Usage("credits grant takes a key ID and a number of credits"))
    }
    if (!/^\d{1,15}$/.test(amount) || Number(amount) < 1) {
      return yield* Effect.fail(
        new Usage(`the number of credits must be a whole number 1 or more, got ${JSON.stringify(amount)}`)
      )
    }
    const reasonFlag = parsed.flags.get("reason")
    if (reasonFlag === true || reasonFlag?.trim() === "") return yield* Effect.fail(new Usage("--reason needs a text"))
    const reason = reasonFlag ?? "operator grant"
    // A revoked key can never spend: credits granted to it would be lost, so say so instead.
    const found = yield* (yield* KeyStore).findById(id)
    if (found._tag === "Some" && found.value.revokedAt !== null) {
      return yield* Effect.fail(
        new AdminError(
          `key ${id} was revoked at ${found.value.revokedAt.toISOString()}; credits granted to it could never be spent`
        )
      )
    }
    const balance = yield* grantCredits(id, Number(amount), reason)
    if (parsed.flags.get("json") === true) {
      io.out(JSON.stringify({ id, granted: Number(amount), reason, credits: balance }))
    } else io.out(`granted ${amount} credits to ${id} (${reason}); balance ${balance}`)
    return 0
  })

const SHARED_STORE_NEEDED = (command: string) =>
  new ConfigProblem(
    `\`${command}\` commands need a store the server shares: DATABASE_URL=memory lives inside one process. Use the embedded store (DATABASE_URL unset, with the server stopped) or PostgreSQL, or give the server a key with MARKET_DATA_BOOTSTRAP_KEY.`
  )

/**
 * Runs an operator command on the stores the configuration names (or the given ones, in tests). On the embedded
 * store a running server holds the database: the command line goes to it over its admin channel instead.
 */
const onSharedStores = <E>(
  command: string,
  run: Effect.Effect<number, E, StorePorts | Layer.Success<typeof layerPlatform>>,
  storesOverride: Layer.Layer<StorePorts> | undefined,
  argv: ReadonlyArray<string>,
  io: Io
) =>
  Effect.gen(function* () {
    if (storesOverride !== undefined) {
      return yield* run.pipe(Effect.provide(Layer.merge(storesOverride, layerPlatform)))
    }
    const config = yield* loadConfig
    if (config.store._tag === "Memory") return yield* Effect.fail(SHARED_STORE_NEEDED(command))
    if (config.store._tag === "Embedded") {
      const dir = config.store.dir
      const answered = yield* Effect.promise(() => sendToServer(dir, argv, io))
      if (answered !== undefined) return answered
    }
    return yield* Effect.scoped(
      Effect.gen(function* () {
        const stores = yield* openStores(config)
        return yield* run.pipe(Effect.provide(Layer.merge(stores.layer, layerPlatform)))
      })
    )
  })

// ---------------------------------------------------------------------------------------------------------
// Migrations and the doctor work on the database itself, opened without migrating.
// ---------------------------------------------------------------------------------------------------------

/** A failure while running against a reachable store (exit 1). */
class RunFailure {
  readonly _tag = "RunFailure"
  readonly message: string
  constructor(message: string) {
    this.message = message
  }
}

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/** The configured database, opened without migrating (the embedded one under its lock file). */
const openDatabaseOnly = (
  config: AppConfig,
  store: Exclude<AppConfig["store"], { _tag: "Memory" }>
): Effect.Effect<Database, ConfigProblem, Scope.Scope> =>
  Effect.gen(function* () {
    if (store._tag === "Embedded") yield* lockDataDir(store.dir)
    const what = store._tag === "Embedded" ? `the embedded database in ${resolve(store.dir)}` : "PostgreSQL"
    return yield* Effect.acquireRelease(
      // Interruptible (Ctrl-C): a new embedded cluster's creation stops and leaves nothing (`openInterruptibly`).
      openInterruptibly(
        (signal) =>
          store._tag === "Embedded"
            ? openPglite(store.dir, { worker: config.pgliteWorker === true, signal })
            : Promise.resolve(openPostgres(store.url, { poolSize: Math.min(config.poolSize, 2) })),
        (e) => new ConfigProblem(`cannot open ${what}: ${errorText(e)}`)
      ),
      // A pool still trying to reach an unreachable server must not hold the command open.
      (database) => Effect.promise(() => database.close()).pipe(Effect.timeout("5 seconds"), Effect.ignore)
    )
  })

const storeDescription = (store: Exclude<AppConfig["store"], { _tag: "Memory" }>): string =>
  store._tag === "Embedded" ? `embedded PGlite in ${resolve(store.dir)}` : `PostgreSQL ${redactUrl(store.url)}`

/** Applies pending migrations one by one, reporting each to `progress`; resolves to the names applied. */
const applyMigrations = (db: Kysely<any>, progress: ProgressFactory) =>
  Effect.gen(function* () {
    const pending = yield* Effect.tryPromise({
      try: () => pendingMigrations(db),
      catch: (e) => new RunFailure(`cannot read the migration state: ${errorText(e)}`)
    })
    if (pending.length === 0) return [] as ReadonlyArray<string>
    const steps = yield* Effect.tryPromise({
      try: () => migrator(db),
      catch: (e) => new RunFailure(`cannot read the migration state: ${errorText(e)}`)
    })
    const bar = progress("migrating", pending.length)
    const applied: Array<string> = []
    yield* Effect.gen(function* () {
      for (;;) {
        const started = performance.now()
        const { error, results } = yield* Effect.promise(() => steps.migrateUp())
        const failed = results?.find((r) => r.status === "Error")
        if (error !== undefined) {
          return yield* Effect.fail(
            new RunFailure(`migration ${failed?.migrationName ?? "(before any)"} failed: ${errorText(error)}`)
          )
        }
        const done = (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName)
        // Nothing left (another instance may have applied the rest meanwhile).
        if (done.length === 0) return
        for (const name of done) {
          applied.push(name)
          bar.stepDone(name, performance.now() - started)
        }
      }
    }).pipe(Effect.ensuring(Effect.sync(() => bar.stop())))
    return applied as ReadonlyArray<string>
  })

/** `migrate [--json]`: applies pending migrations with progress; prints what it applied. */
const migrateCommand = (parsed: Parsed, io: Io) =>
  Effect.gen(function* () {
    const bad = onlyFlags(parsed.flags, ["json"])
    if (bad) return yield* Effect.fail(bad)
    const json = parsed.flags.get("json") === true
    const config = yield* loadConfig
    const names = Object.keys(migrations)
    const store = config.store
    if (store._tag === "Memory") {
      io.out(
        json
          ? JSON.stringify({ store: "memory", applied: [], pending: [], migrations: [] })
          : "memory store: nothing to migrate"
      )
      return 0
    }
    return yield* Effect.scoped(
      Effect.gen(function* () {
        const database = yield* openDatabaseOnly(config, store)
        const applied = yield* applyMigrations(database.db, progressFor(io))
        const pending = yield* Effect.tryPromise({
          try: () => pendingMigrations(database.db),
          catch: (e) => new RunFailure(`cannot read the migration state: ${errorText(e)}`)
        })
        const description = storeDescription(store)
        if (json) io.out(JSON.stringify({ store: description, applied, pending, migrations: names }))
        else {
          io.out(
            `${description}: applied ${applied.length} migration(s)${applied.length > 0 ? ` (${applied.join(", ")})` : ""}; ${names.length - pending.length} of ${names.length} applied, ${pending.length} pending`
          )
        }
        return pending.length === 0 ? 0 : 1
      })
    )
  })

type CheckStatus = "ok" | "fail" | "skipped"

interface Check {
  readonly name: string
  readonly status: CheckStatus
  readonly detail: string
}

const LOCK_FILE = "market-data.lock"

const processAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** Who holds the data directory's lock file, before this process tries to take it. */
const lockState = (dir: string): { readonly holder: number | undefined; readonly detail: string } => {
  const path = join(dir, LOCK_FILE)
  if (!existsSync(path)) return { holder: undefined, detail: "free; held by this check while it runs" }
  const pid = Number(readFileSync(path, "utf8").trim())
  if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && processAlive(pid)) {
    return { holder: pid, detail: `held by running process ${pid}` }
  }
  return { holder: undefined, detail: `stale lock of process ${pid} (gone): taken over` }
}

/** Checks the database: reachable, and its migrations those of this code. Creates a new embedded store. */
const databaseChecks = (
  config: AppConfig,
  store: Exclude<AppConfig["store"], { _tag: "Memory" }>,
  progress: ProgressFactory
) =>
  Effect.gen(function* () {
    const checks: Array<Check> = []
    const fresh = store._tag === "Embedded" && !existsSync(join(store.dir, "PG_VERSION"))
    const opened = yield* Effect.result(openDatabaseOnly(config, store))
    if (opened._tag === "Failure") {
      checks.push({ name: "database", status: "fail", detail: opened.failure.message })
      checks.push({ name: "migrations", status: "skipped", detail: "the database could not be opened" })
      return checks
    }
    checks.push(...(yield* checksOnDatabase(opened.success.db, fresh, progress)))
    return checks
  })

/** The database checks on an open database: reachable, migrations current (a fresh store is migrated now). */
const checksOnDatabase = (db: Kysely<any>, fresh: boolean, progress: ProgressFactory) =>
  Effect.gen(function* () {
    const checks: Array<Check> = []
    const started = performance.now()
    const version = yield* Effect.tryPromise(() => sql<{ v: string }>`select version() as v`.execute(db)).pipe(
      Effect.timeout("10 seconds"),
      Effect.result
    )
    if (version._tag === "Failure") {
      const why = version.failure._tag === "TimeoutError" ? "no answer within 10 s" : errorText(version.failure.cause)
      checks.push({ name: "database", status: "fail", detail: `unreachable: ${why}` })
      checks.push({ name: "migrations", status: "skipped", detail: "the database is unreachable" })
      return checks
    }
    const server = (version.success.rows[0]?.v ?? "").split(" on ")[0]?.split(",")[0] ?? "PostgreSQL"
    checks.push({
      name: "database",
      status: "ok",
      detail: `reachable: ${server}, ${Math.round(performance.now() - started)} ms${fresh ? "; created now" : ""}`
    })
    const known = Object.keys(migrations)
    if (fresh) {
      // A store created by this very check starts current, as `serve` would leave it.
      const applied = yield* Effect.result(applyMigrations(db, progress))
      checks.push(
        applied._tag === "Success"
          ? {
              name: "migrations",
              status: "ok",
              detail: `${applied.success.length} applied to the new store, 0 pending`
            }
          : { name: "migrations", status: "fail", detail: applied.failure.message }
      )
      return checks
    }
    const state = yield* Effect.tryPromise(async () => {
      const pending = await pendingMigrations(db)
      // A database never migrated has no table yet: everything is pending, nothing is foreign.
      const exists = await sql<{ e: boolean }>`select to_regclass('md_migrations') is not null as e`.execute(db)
      if (exists.rows[0]?.e !== true) return { pending, recorded: [] as Array<string> }
      const table = await sql<{ n: string }>`select name as n from md_migrations`.execute(db)
      return { pending, recorded: table.rows.map((r) => r.n) }
    }).pipe(Effect.result)
    if (state._tag === "Failure") {
      checks.push({ name: "migrations", status: "fail", detail: `cannot read them: ${errorText(state.failure.cause)}` })
      return checks
    }
    const unknown = state.success.recorded.filter((n) => !known.includes(n))
    const { pending } = state.success
    if (unknown.length > 0) {
      checks.push({
        name: "migrations",
        status: "fail",
        detail: `the database has migrations this code does not know (${unknown.join(", ")}): it was migrated by a newer version; run that version`
      })
    } else if (pending.length > 0) {
      checks.push({
        name: "migrations",
        status: "fail",
        detail: `${pending.length} pending (${pending.join(", ")}): run \`market-data migrate\` (serve also migrates at start)`
      })
    } else checks.push({ name: "migrations", status: "ok", detail: `${known.length} applied, 0 pending` })
    return checks
  })

const printChecks = (json: boolean, description: string, checks: ReadonlyArray<Check>, io: Io): number => {
  const healthy = checks.every((c) => c.status !== "fail")
  if (json) io.out(JSON.stringify({ healthy, store: description, checks }))
  else {
    const width = Math.max(...checks.map((c) => c.name.length))
    for (const c of checks) io.out(`${c.status.padEnd(7)} ${c.name.padEnd(width)}  ${c.detail}`)
    io.out(healthy ? "healthy" : "NOT healthy: see the checks marked fail")
  }
  return healthy ? 0 : 1
}

/** `doctor` as a running server answers it over its admin channel: the checks on its own open database. */
const doctorOnServer = (parsed: Parsed, io: Io, config: AppConfig, service: OpenedService) =>
  Effect.gen(function* () {
    const bad = onlyFlags(parsed.flags, ["json"])
    if (bad) return yield* Effect.fail(bad)
    const checks: Array<Check> = [
      { name: "store", status: "ok", detail: service.storeDescription },
      { name: "data dir", status: "ok", detail: resolve(config.dataDir) },
      {
        name: "lock",
        status: "ok",
        detail: `held by the running server (process ${process.pid}), which answered these checks over its admin channel`
      }
    ]
    const database = service.stores.database
    if (database === undefined) checks.push({ name: "database", status: "skipped", detail: "no database" })
    else checks.push(...(yield* checksOnDatabase(database.db, false, lineProgress(io.err))))
    return printChecks(parsed.flags.get("json") === true, service.storeDescription, checks, io)
  })

/**
 * The commands a running server runs for the CLI over its admin channel: the key and credit commands on its
 * own stores, and `doctor` on its own database.
 */
const adminRunner =
  (config: AppConfig, service: OpenedService) =>
  (argv: ReadonlyArray<string>, io: Io): Effect.Effect<number> => {
    if (argv[0] !== "doctor") return runCli(argv, io, Layer.succeedContext(service.context))
    const parsed = parseArgs(argv)
    return (parsed instanceof Usage ? Effect.fail(parsed) : doctorOnServer(parsed, io, config, service)).pipe(
      Effect.catch((e: Usage) =>
        Effect.sync(() => {
          io.err(`market-data: ${e.message}`)
          return 2
        })
      )
    )
  }

/** `doctor [--json]`: checks the configured store; exit 0 when every check passes, 1 otherwise. */
const doctorCommand = (parsed: Parsed, io: Io, argv: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const bad = onlyFlags(parsed.flags, ["json"])
    if (bad) return yield* Effect.fail(bad)
    const config = yield* loadConfig
    const store = config.store
    const checks: Array<Check> = []
    let description: string
    if (store._tag === "Memory") {
      description = "memory (DATABASE_URL=memory)"
      checks.push({
        name: "store",
        status: "ok",
        detail: "in-memory: nothing persists, no database to check; `serve` creates it in its own process"
      })
    } else {
      description = storeDescription(store)
      checks.push({ name: "store", status: "ok", detail: description })
      if (store._tag === "Embedded") {
        const lock = lockState(store.dir)
        checks.push({
          name: "data dir",
          status: "ok",
          detail: existsSync(store.dir) ? resolve(store.dir) : `${resolve(store.dir)} (created now)`
        })
        if (lock.holder !== undefined) {
          // A running server checks its own store and answers over its admin channel.
          const dir = store.dir
          const answered = yield* Effect.promise(() => sendToServer(dir, argv, io))
          if (answered !== undefined) return answered
          checks.push({
            name: "lock",
            status: "fail",
            detail: `${lock.detail}: PGlite admits one process at a time, so the database cannot be checked while it runs. Stop that process to check the store (a running server answers GET /api/v1)`
          })
          checks.push({ name: "database", status: "skipped", detail: "the data directory is in use" })
          checks.push({ name: "migrations", status: "skipped", detail: "the data directory is in use" })
        } else {
          checks.push({ name: "lock", status: "ok", detail: lock.detail })
        }
      }
      if (!checks.some((c) => c.status === "fail")) {
        checks.push(...(yield* Effect.scoped(databaseChecks(config, store, progressFor(io)))))
      }
    }
    return printChecks(parsed.flags.get("json") === true, description, checks, io)
  })

// ---------------------------------------------------------------------------------------------------------
// `sources`: source health as the ingesting instance recorded it in the database.
// ---------------------------------------------------------------------------------------------------------

/** A lag in seconds, short: `42s`, `3m 05s`, `5h 02m`, `3d 04h`. */
const shortLag = (seconds: number): string => {
  const two = (n: number) => String(n).padStart(2, "0")
  if (seconds < 60) return `${seconds}s`
  if (seconds < 3_600) return `${Math.floor(seconds / 60)}m ${two(seconds % 60)}s`
  if (seconds < 86_400) return `${Math.floor(seconds / 3_600)}h ${two(Math.floor((seconds % 3_600) / 60))}m`
  return `${Math.floor(seconds / 86_400)}d ${two(Math.floor((seconds % 86_400) / 3_600))}h`
}

const SERVER_HINT =
  'ask the running server instead: `curl -H "Authorization: Bearer $KEY" "http://HOST:PORT/api/v1/coverage?id=crypto:bitcoin"` (its `sources`; an equity ID shows SEC EDGAR)'

/**
 * `sources [--json]`: every source component (venue or SEC EDGAR) with its last success, lag, freshness and
 * last error, as the ingesting instance persisted them in the database's market store. The simulated feed and
 * the memory store keep their statuses inside the serving process: the command says so (exit 0).
 */
const sourcesCommand = (parsed: Parsed, io: Io) =>
  Effect.gen(function* () {
    const bad = onlyFlags(parsed.flags, ["json"])
    if (bad) return yield* Effect.fail(bad)
    if (parsed.positional.length > 1) {
      return yield* Effect.fail(new Usage(`unexpected ${JSON.stringify(parsed.positional[1])}`))
    }
    const json = parsed.flags.get("json") === true
    const config = yield* loadConfig
    const store = config.store
    const inProcess = (description: string, why: string) => {
      if (json)
        io.out(JSON.stringify({ store: description, feed: config.feed, in_process: true, sources: [], note: why }))
      else io.out(`${why}; ${SERVER_HINT}`)
      return 0
    }
    if (store._tag === "Memory") {
      return inProcess(
        "memory (DATABASE_URL=memory)",
        "DATABASE_URL=memory: the source statuses live inside the serving process, not in a database"
      )
    }
    const description = storeDescription(store)
    const simulatedNote = `the simulated feed (MARKET_DATA_FEED=${config.feed}) keeps its source statuses inside the serving process, never in the database (with a live instance on this store, set MARKET_DATA_FEED=live)`
    // The embedded store admits one process: a simulated server would hold it for statuses it never stores.
    if (config.feed === "simulated" && store._tag === "Embedded") return inProcess(description, simulatedNote)
    if (store._tag === "Embedded" && !existsSync(join(store.dir, "PG_VERSION"))) {
      const why = `no embedded database in ${resolve(store.dir)} yet: nothing has been ingested`
      if (json)
        io.out(JSON.stringify({ store: description, feed: config.feed, in_process: false, sources: [], note: why }))
      else io.out(why)
      return 0
    }
    return yield* Effect.scoped(
      Effect.gen(function* () {
        const database = yield* openDatabaseOnly(config, store).pipe(
          Effect.mapError((e) => new ConfigProblem(`${e.message}; ${SERVER_HINT}`))
        )
        const read = yield* Effect.exit(makePgMarketStore(database).status)
        if (read._tag === "Failure") {
          const cause = Cause.squash(read.cause)
          const inner = (cause as { cause?: unknown }).cause ?? cause
          return yield* Effect.fail(
            new RunFailure(
              `cannot read the source statuses from ${description}: ${errorText(inner)} (is the database migrated? run \`market-data migrate\`)`
            )
          )
        }
        const statuses = read.value
        if (statuses.length === 0 && config.feed === "simulated") return inProcess(description, simulatedNote)
        const nowMs = yield* Clock.currentTimeMillis
        const rows = statuses.map((s) => ({
          ...coverageSource(s, nowMs),
          cadence_seconds: Math.round(s.cadenceMs / 1000),
          checked_at: new Date(s.checkedMs).toISOString(),
          ...(s.detail === undefined || s.failing ? {} : { detail: s.detail })
        }))
        if (json) {
          io.out(
            JSON.stringify({
              store: description,
              feed: config.feed,
              in_process: false,
              as_of: new Date(nowMs).toISOString(),
              sources: rows
            })
          )
          return 0
        }
        io.err(`source statuses in ${description}, as the ingesting instance recorded them`)
        if (rows.length === 0) {
          io.out("no source status recorded yet: no live instance (MARKET_DATA_FEED=live) has ingested into this store")
          return 0
        }
        const table = [
          ["SOURCE", "VENUE", "COMPONENT", "STATUS", "LAST SUCCESS", "LAG", "ERROR"],
          ...rows.map((r) => [
            r.source,
            r.venue,
            r.component,
            r.status,
            r.last_success_at ?? "never",
            r.lag_seconds === null ? "-" : shortLag(r.lag_seconds),
            r.error ?? (r.detail === undefined ? "-" : `(ok) ${r.detail}`)
          ])
        ]
        const widths = (table[0] as Array<string>).map((_, i) =>
          Math.max(...table.map((row) => (row[i] as string).length))
        )
        for (const row of table) {
          io.out(
            row
              .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] as number)))
              .join("  ")
              .trimEnd()
          )
        }
        const failing = rows.filter((r) => r.error !== undefined).length
        io.err(`${rows.length} components: ${failing} failing, ${rows.filter((r) => r.status === "live").length} live`)
        return 0
      })
    )
  })

/**
 * Runs a command line and resolves to its exit code. `storesOverride` lets tests run the key commands
 * against in-memory stores.
 */
export const runCli = (
  argv: ReadonlyArray<string>,
  io: Io,
  storesOverride?: Layer.Layer<Stores>
): Effect.Effect<number> => {
  const program = Effect.gen(function* () {
    const parsed = parseArgs(argv)
    if (parsed instanceof Usage) return yield* Effect.fail(parsed)
    const command = parsed.positional[0]
    // Asking for help (`help`, `--help`, `<command> --help`) succeeds; no command at all is a usage error.
    if (command === "help" || parsed.flags.get("help") === true) {
      io.out(USAGE)
      return 0
    }
    if (command === undefined) {
      io.err(USAGE)
      return 2
    }
    if (command === "serve") {
      const bad = onlyFlags(parsed.flags, [])
      if (bad) return yield* Effect.fail(bad)
      const config = yield* loadConfig.pipe(
        Effect.mapError((e) => (e instanceof ConfigProblem ? e : new ConfigProblem(String(e))))
      )
      yield* serve(config, [], { admin: (service) => adminRunner(config, service) })
      return 0
    }
    if (command === "keys") return yield* onSharedStores("keys", keysCommand(parsed, io), storesOverride, argv, io)
    if (command === "credits")
      return yield* onSharedStores("credits", creditsCommand(parsed, io), storesOverride, argv, io)
    if (command === "migrate") return yield* migrateCommand(parsed, io)
    if (command === "doctor") return yield* doctorCommand(parsed, io, argv)
    if (command === "sources") return yield* sourcesCommand(parsed, io)
    if (command === "ingest") {
      return yield* ingestCommand(parsed, io, progressFor(io)).pipe(
        Effect.mapError((e) => (e instanceof IngestUsage ? new Usage(e.message) : e))
      )
    }
    return yield* Effect.fail(new Usage(`unknown command ${JSON.stringify(command)}`))
  })
  return program.pipe(
    Effect.catch((e: Usage | ConfigProblem | AdminError | RunFailure) =>
      Effect.sync(() => {
        if (e instanceof Usage) {
          io.err(`market-data: ${e.message}\n\n${USAGE}`)
          return 2
        }
        io.err(`market-data: ${e.message}`)
        return e instanceof AdminError || e instanceof RunFailure ? 1 : 2
      })
    )
  )
}
