/**
 * The `market-data` command line: `serve`, `keys create|list|revoke`. Exit codes: 0 done, 1 failed while
 * running, 2 bad usage or configuration.
 */
import { AdminError, createKey, listKeys, revokeKey, type StorePorts } from "@market-data/core"
import { Effect, Layer } from "effect"
import { ConfigProblem, loadConfig } from "./AppConfig.ts"
import { serve } from "./Main.ts"
import { migrations, pendingMigrations } from "./Migrate.ts"
import { layerPlatform } from "./Service.ts"
import { openStores } from "./Stores.ts"

export const USAGE = `market-data <command>

Commands:
  serve                                   run the HTTP server (configuration from the environment; see README)
  keys create --credits N [--label L] [--rate-limit N] [--json]
                                          mint a key with an opening balance; prints the key once
  keys list [--json]                      list keys: ID, prefix, label, balance, created, revoked
  keys revoke <key-id> [--json]           revoke a key (its ID, not the key itself)
  migrate [--json]                        apply pending database migrations (serve also does at start)
  help                                    this text

Exit codes: 0 done, 1 failed while running, 2 bad usage or configuration.`

/** Where a command writes. */
export interface Io {
  readonly out: (line: string) => void
  readonly err: (line: string) => void
}

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

const BOOLEAN_FLAGS = new Set(["json", "help"])

/** Splits argv into positional words and `--flag value` / `--flag=value` / boolean flags. */
export const parseArgs = (argv: ReadonlyArray<string>): Parsed | Usage => {
  const positional: Array<string> = []
  const flags = new Map<string, string | true>()
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string
    if (!a.startsWith("--")) {
      positional.push(a)
      continue
    }
    const eq = a.indexOf("=")
    const name = eq < 0 ? a.slice(2) : a.slice(2, eq)
    if (flags.has(name)) return new Usage(`--${name} given twice`)
    if (eq >= 0) flags.set(name, a.slice(eq + 1))
    else if (BOOLEAN_FLAGS.has(name)) flags.set(name, true)
    else {
      const next = argv[i + 1]
      if (next === undefined || next.startsWith("--")) return new Usage(`--${name} needs a value`)
      flags.set(name, next)
      i++
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
    if (command === undefined || command === "help" || parsed.flags.get("help") === true) {
      io.out(USAGE)
      return command === undefined ? 2 : 0
    }
    if (command === "serve") {
      const bad = onlyFlags(parsed.flags, [])
      if (bad) return yield* Effect.fail(bad)
      const config = yield* loadConfig.pipe(
        Effect.mapError((e) => (e instanceof ConfigProblem ? e : new ConfigProblem(String(e))))
      )
      yield* serve(config)
      return 0
    }
    if (command === "keys") {
      if (storesOverride !== undefined) {
        return yield* keysCommand(parsed, io).pipe(Effect.provide(Layer.merge(storesOverride, layerPlatform)))
      }
      const config = yield* loadConfig
      if (config.store._tag === "Memory") {
        return yield* Effect.fail(
          new ConfigProblem(
            "`keys` commands need a store the server shares: DATABASE_URL=memory lives inside one process. Use the embedded store (DATABASE_URL unset, with the server stopped) or PostgreSQL, or give the server a key with MARKET_DATA_BOOTSTRAP_KEY."
          )
        )
      }
      return yield* Effect.scoped(
        Effect.gen(function* () {
          const stores = yield* openStores(config)
          return yield* keysCommand(parsed, io).pipe(Effect.provide(Layer.merge(stores.layer, layerPlatform)))
        })
      )
    }
    if (command === "migrate") {
      const bad = onlyFlags(parsed.flags, ["json"])
      if (bad) return yield* Effect.fail(bad)
      const config = yield* loadConfig
      if (config.store._tag === "Memory") {
        io.out(
          parsed.flags.get("json") === true
            ? JSON.stringify({ store: "memory", applied: [], current: [] })
            : "memory store: nothing to migrate"
        )
        return 0
      }
      return yield* Effect.scoped(
        Effect.gen(function* () {
          const stores = yield* openStores(config)
          const current = yield* Effect.promise(() => pendingMigrations(stores.database!.db))
          const names = Object.keys(migrations)
          if (parsed.flags.get("json") === true)
            io.out(JSON.stringify({ store: stores.description, pending: current, migrations: names }))
          else io.out(`${stores.description}: ${names.length} migration(s) applied, ${current.length} pending`)
          return 0
        })
      )
    }
    return yield* Effect.fail(new Usage(`unknown command ${JSON.stringify(command)}`))
  })
  return program.pipe(
    Effect.catch((e: Usage | ConfigProblem | AdminError) =>
      Effect.sync(() => {
        if (e instanceof Usage) {
          io.err(`market-data: ${e.message}\n\n${USAGE}`)
          return 2
        }
        io.err(`market-data: ${e.message}`)
        return e instanceof AdminError ? 1 : 2
      })
    )
  )
}
