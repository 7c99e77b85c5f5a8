/**
 * The service's configuration, read from the environment through Effect `Config`. Every variable is listed,
 * with its default, in the README's configuration table.
 */

import { parseTrustedProxies, TRUSTED_PROXIES_VARIABLE, type TrustedProxies } from "@market-data/core"
import { type ConnectionLimits, DEFAULT_CONNECTION_LIMITS } from "@market-data/http"
import { SimulatedGeneratedCompanies } from "@market-data/sources"
import { Config, Effect } from "effect"

/** Where `/metrics` is served unless configured: its own port, on loopback (the Prometheus exporters' usual port). */
export const DEFAULT_METRICS_PORT = 9464
export const DEFAULT_METRICS_HOST = "127.0.0.1"

/** How many generated simulated companies a service has unless configured (`MARKET_DATA_SIMULATED_COMPANIES`). */
export const DefaultSimulatedCompanies: number = SimulatedGeneratedCompanies

export type StoreChoice =
  | { readonly _tag: "Memory" }
  | { readonly _tag: "Embedded"; readonly dir: string }
  | { readonly _tag: "Postgres"; readonly url: string }

export interface AppConfig {
  readonly host: string
  readonly port: number
  readonly store: StoreChoice
  readonly dataDir: string
  /** Connections in the PostgreSQL pool. */
  readonly poolSize: number
  /**
   * Group commit on server PostgreSQL and the embedded store (`DATABASE_BATCH_MAX`, `DATABASE_BATCH_WINDOW_MS`):
   * most store calls in one statement (1: off, every call its own statement) and how long the first call of a batch
   * waits for company.
   * Absent (a configuration built in code): off.
   */
  readonly batch?: { readonly maxBatch: number; readonly windowMs: number }
  /**
   * `DATABASE_PGLITE_WORKER`: the embedded store's PGlite runs on its own worker thread (`on`) or
   * on the event loop's thread (`off`, and when absent). See `openPglite` in `adapters/postgres/src/Database.ts`.
   */
  readonly pgliteWorker?: boolean
  readonly feed: "simulated" | "live"
  /** Seed of the simulated market and simulated filings: the same seed gives the same data. */
  readonly seed: number
  /**
   * `MARKET_DATA_SIM_UNIVERSE`: the simulated crypto universe. `market`: the production-scale market of the
   * simulated venues' listings (over 400 assets, `makeSimulatedUniverse`), the default of `serve`; `registry`: only
   * the hand-written registry's 35 assets (the test suites' choice). Absent (a configuration built in code, as the
   * embedded library builds it) means `registry`.
   */
  readonly simulatedUniverse?: "market" | "registry"
  /** How many generated companies the simulated equity plane has beside the hand-made five (0 to 999). */
  readonly simulatedCompanies: number
  /** Origins, besides loopback ones, that may call the MCP endpoint from a browser. */
  readonly allowedOrigins: ReadonlyArray<string>
  /**
   * `MARKET_DATA_TRUSTED_PROXIES`: reverse proxies (IPs, CIDR ranges) whose `X-Forwarded-For` names the client a
   * keyless caller is rate limited by; absent or empty: none (the socket peer is the client).
   */
  readonly trustedProxies?: TrustedProxies
  readonly bootstrapKey: string | undefined
  readonly bootstrapCredits: number
  readonly rateLimitPerMinute: number
  readonly logLevel: "Trace" | "Debug" | "Info" | "Warn" | "Error" | "Fatal" | "None"
  readonly logFormat: "json" | "logfmt"
  /**
   * `MARKET_DATA_METRICS_PORT`: the port of its own `/metrics` is served on (with `/healthz` and `/readyz`), on
   * `metricsHost`; never on the API port. 9464 by default, `off` for none (undefined); `0` picks a free port (the
   * startup line shows it).
   */
  readonly metricsPort?: number | undefined
  /**
   * Whether `MARKET_DATA_METRICS_PORT` was set: then a port that cannot be listened on stops the start. The
   * default port already taken (a second instance on one host) leaves metrics off, with a warning.
   */
  readonly metricsPortSet?: boolean
  /**
   * `MARKET_DATA_METRICS_HOST`: the address `/metrics` listens on (its own port, `metricsPort`); loopback
   * (`127.0.0.1`) by default, so only this host can scrape it.
   */
  readonly metricsHost?: string | undefined
  /**
   * Connection and body limits of the API port (`MARKET_DATA_MAX_CONNECTIONS`,
   * `MARKET_DATA_MAX_CONNECTIONS_PER_CLIENT`, `MARKET_DATA_BODY_TIMEOUT_MS`); the transport's defaults when absent.
   */
  readonly connectionLimits?: ConnectionLimits | undefined
  /** `OTEL_EXPORTER_OTLP_ENDPOINT`: export traces over OTLP/HTTP (JSON) to `<endpoint>/v1/traces`. */
  readonly otlpEndpoint?: string | undefined
}

const LogLevels = ["Trace", "Debug", "Info", "Warn", "Error", "Fatal", "None"] as const

const normalizeLevel = (s: string): string => {
  const lower = s.trim().toLowerCase()
  return lower === "warning" ? "Warn" : lower.charAt(0).toUpperCase() + lower.slice(1)
}

/** The oldest Node the service runs on (Effect 4, kysely, undici; Node strips the TypeScript types itself). */
export const MIN_NODE = { major: 22, minor: 19 } as const

/** One plain sentence when this Node is too old for the service (`version`: default the running one), else undefined. */
export const nodeVersionProblem = (version: string = process.versions.node): string | undefined => {
  const [major = 0, minor = 0] = version.split(".").map(Number)
  if (major > MIN_NODE.major || (major === MIN_NODE.major && minor >= MIN_NODE.minor)) return undefined
  return `market-data needs Node >= ${MIN_NODE.major}.${MIN_NODE.minor} (Node 24 recommended) and this is Node ${version}: install Node 24, or run your program with the Node 24 that npm ci installs into node_modules (npx node <file>).`
}

/** Reads and validates the configuration; every failure names the variable. */
export const loadConfig: Effect.Effect<AppConfig, ConfigProblem> = Effect.suspend(() => readConfig).pipe(
  Effect.catchTag("ConfigError", (e) => Effect.fail(new ConfigProblem(`invalid configuration: ${e.message}`)))
)

const readConfig = Effect.gen(function* () {
  const host = yield* Config.String("HOST").pipe(Config.withDefault("127.0.0.1"))
  const port = yield* Config.Int("PORT").pipe(Config.withDefault(8080))
  const databaseUrl = yield* Config.String("DATABASE_URL").pipe(Config.withDefault(""))
  const dataDir = yield* Config.String("MARKET_DATA_DIR").pipe(Config.withDefault("./.market-data"))
  const poolSize = yield* Config.Int("DATABASE_POOL_SIZE").pipe(Config.withDefault(10))
  const batchMax = yield* Config.Int("DATABASE_BATCH_MAX").pipe(Config.withDefault(64))
  const batchWindowMs = yield* Config.Int("DATABASE_BATCH_WINDOW_MS").pipe(Config.withDefault(1))
  const pgliteWorker = yield* Config.Literals(["on", "off"], "DATABASE_PGLITE_WORKER").pipe(
    Config.withDefault("off" as const)
  )
  const feed = yield* Config.Literals(["simulated", "live"], "MARKET_DATA_FEED").pipe(
    Config.withDefault("simulated" as const)
  )
  const seed = yield* Config.Int("MARKET_DATA_SEED").pipe(Config.withDefault(20261123))
  const simulatedUniverse = yield* Config.Literals(["market", "registry"], "MARKET_DATA_SIM_UNIVERSE").pipe(
    Config.withDefault("market" as const)
  )
  const simulatedCompanies = yield* Config.Int("MARKET_DATA_SIMULATED_COMPANIES").pipe(
    Config.withDefault(DefaultSimulatedCompanies)
  )
  const allowedOriginsText = yield* Config.String("MARKET_DATA_ALLOWED_ORIGINS").pipe(Config.withDefault(""))
  const trustedProxiesText = yield* Config.String(TRUSTED_PROXIES_VARIABLE).pipe(Config.withDefault(""))
  const bootstrapKey = yield* Config.String("MARKET_DATA_BOOTSTRAP_KEY").pipe(Config.withDefault(""))
  const bootstrapCredits = yield* Config.Int("MARKET_DATA_BOOTSTRAP_CREDITS").pipe(Config.withDefault(0))
  const rateLimitPerMinute = yield* Config.Int("MARKET_DATA_RATE_LIMIT_PER_MINUTE").pipe(Config.withDefault(60))
  const logLevelText = yield* Config.String("LOG_LEVEL").pipe(Config.withDefault("info"))
  const logFormat = yield* Config.Literals(["json", "logfmt"], "LOG_FORMAT").pipe(Config.withDefault("json" as const))
  const metricsPortText = yield* Config.String("MARKET_DATA_METRICS_PORT").pipe(Config.withDefault(""))
  const metricsHost = yield* Config.String("MARKET_DATA_METRICS_HOST").pipe(Config.withDefault(DEFAULT_METRICS_HOST))
  const maxConnections = yield* Config.Int("MARKET_DATA_MAX_CONNECTIONS").pipe(
    Config.withDefault(DEFAULT_CONNECTION_LIMITS.maxConnections)
  )
  const maxConnectionsPerClient = yield* Config.Int("MARKET_DATA_MAX_CONNECTIONS_PER_CLIENT").pipe(
    Config.withDefault(DEFAULT_CONNECTION_LIMITS.maxConnectionsPerClient)
  )
  const bodyTimeoutMs = yield* Config.Int("MARKET_DATA_BODY_TIMEOUT_MS").pipe(
    Config.withDefault(DEFAULT_CONNECTION_LIMITS.bodyTimeoutMs)
  )
  const otlpEndpoint = yield* Config.String("OTEL_EXPORTER_OTLP_ENDPOINT").pipe(Config.withDefault(""))

  const logLevel = normalizeLevel(logLevelText)
  if (!(LogLevels as ReadonlyArray<string>).includes(logLevel)) {
    return yield* Effect.fail(
      new ConfigProblem(
        `LOG_LEVEL must be one of ${LogLevels.join(", ").toLowerCase()}; got ${JSON.stringify(logLevelText)}`
      )
    )
  }
  if (port < 0 || port > 65535) {
    return yield* Effect.fail(new ConfigProblem(`PORT must be 0 to 65535 (0 picks a free port); got ${port}`))
  }
  const metricsPortSet = metricsPortText.trim() !== ""
  const metricsPort = !metricsPortSet
    ? DEFAULT_METRICS_PORT
    : metricsPortText.trim().toLowerCase() === "off"
      ? undefined
      : Number(metricsPortText)
  if (metricsPort !== undefined && !(Number.isInteger(metricsPort) && metricsPort >= 0 && metricsPort <= 65535)) {
    return yield* Effect.fail(
      new ConfigProblem(`MARKET_DATA_METRICS_PORT must be 0 to 65535, or off; got ${JSON.stringify(metricsPortText)}`)
    )
  }
  if (metricsHost.trim() === "") {
    return yield* Effect.fail(new ConfigProblem("MARKET_DATA_METRICS_HOST must be an address, e.g. 127.0.0.1"))
  }
  if (maxConnections < 1 || maxConnections > 1_000_000) {
    return yield* Effect.fail(
      new ConfigProblem(`MARKET_DATA_MAX_CONNECTIONS must be 1 to 1000000; got ${maxConnections}`)
    )
  }
  if (maxConnectionsPerClient < 1 || maxConnectionsPerClient > maxConnections) {
    return yield* Effect.fail(
      new ConfigProblem(
        `MARKET_DATA_MAX_CONNECTIONS_PER_CLIENT must be 1 to MARKET_DATA_MAX_CONNECTIONS (${maxConnections}); got ${maxConnectionsPerClient}`
      )
    )
  }
  if (bodyTimeoutMs < 100 || bodyTimeoutMs > 60_000) {
    return yield* Effect.fail(
      new ConfigProblem(`MARKET_DATA_BODY_TIMEOUT_MS must be 100 to 60000; got ${bodyTimeoutMs}`)
    )
  }
  if (otlpEndpoint !== "" && !/^https?:\/\/[^\s]+$/.test(otlpEndpoint)) {
    return yield* Effect.fail(
      new ConfigProblem(`OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL; got ${JSON.stringify(otlpEndpoint)}`)
    )
  }
  if (poolSize < 1 || poolSize > 1000) {
    return yield* Effect.fail(new ConfigProblem(`DATABASE_POOL_SIZE must be 1 to 1000; got ${poolSize}`))
  }
  if (batchMax < 1 || batchMax > 64) {
    return yield* Effect.fail(new ConfigProblem(`DATABASE_BATCH_MAX must be 1 (off) to 64; got ${batchMax}`))
  }
  if (batchWindowMs < 0 || batchWindowMs > 100) {
    return yield* Effect.fail(new ConfigProblem(`DATABASE_BATCH_WINDOW_MS must be 0 to 100; got ${batchWindowMs}`))
  }
  if (bootstrapCredits < 0) {
    return yield* Effect.fail(new ConfigProblem("MARKET_DATA_BOOTSTRAP_CREDITS must be 0 or more"))
  }
  if (rateLimitPerMinute < 1) {
    return yield* Effect.fail(new ConfigProblem("MARKET_DATA_RATE_LIMIT_PER_MINUTE must be 1 or more"))
  }
  if (seed < 0 || seed > 0xffffffff) {
    return yield* Effect.fail(new ConfigProblem(`MARKET_DATA_SEED must be 0 to 4294967295; got ${seed}`))
  }
  if (simulatedCompanies < 0 || simulatedCompanies > 999) {
    return yield* Effect.fail(
      new ConfigProblem(`MARKET_DATA_SIMULATED_COMPANIES must be 0 to 999; got ${simulatedCompanies}`)
    )
  }
  const allowedOrigins = allowedOriginsText
    .split(",")
    .map((o) => o.trim())
    .filter((o) => o !== "")
  for (const origin of allowedOrigins) {
    let parsed: URL | undefined
    try {
      parsed = new URL(origin)
    } catch {
      parsed = undefined
    }
    if (parsed === undefined || parsed.origin !== origin) {
      return yield* Effect.fail(
        new ConfigProblem(
          `MARKET_DATA_ALLOWED_ORIGINS must be a comma-separated list of origins like https://app.example.com; got ${JSON.stringify(origin)}`
        )
      )
    }
  }
  const trustedProxies = parseTrustedProxies(trustedProxiesText)
  if (trustedProxies._tag === "Problem") return yield* Effect.fail(new ConfigProblem(trustedProxies.problem))
  let store: StoreChoice
  if (databaseUrl === "") store = { _tag: "Embedded", dir: dataDir }
  else if (databaseUrl === "memory") store = { _tag: "Memory" }
  else if (/^postgres(ql)?:\/\//.test(databaseUrl)) store = { _tag: "Postgres", url: databaseUrl }
  else {
    return yield* Effect.fail(
      new ConfigProblem("DATABASE_URL must be `memory` or a postgres:// URL, or be unset for the embedded store")
    )
  }
  const config: AppConfig = {
    host,
    port,
    store,
    dataDir,
    poolSize,
    batch: { maxBatch: batchMax, windowMs: batchWindowMs },
    pgliteWorker: pgliteWorker === "on",
    feed,
    seed,
    simulatedUniverse,
    simulatedCompanies,
    allowedOrigins,
    trustedProxies: trustedProxies.value,
    bootstrapKey: bootstrapKey === "" ? undefined : bootstrapKey,
    bootstrapCredits,
    rateLimitPerMinute,
    logLevel: logLevel as AppConfig["logLevel"],
    logFormat,
    metricsPort,
    metricsPortSet,
    metricsHost: metricsHost.trim(),
    connectionLimits: { maxConnections, maxConnectionsPerClient, bodyTimeoutMs },
    otlpEndpoint: otlpEndpoint === "" ? undefined : otlpEndpoint.replace(/\/+$/, "")
  }
  return config
})

/** A configuration the service cannot start with; the message says what to change. */
export class ConfigProblem {
  readonly _tag = "ConfigProblem"
  readonly message: string
  constructor(message: string) {
    this.message = message
  }
}
