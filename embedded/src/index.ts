/**
 * @market-data/embedded: the service as a library. `createMarketData` opens the same composition `serve`
 * runs (stores, data planes with their feed, the core pipeline) inside the calling process and returns a
 * client with the 23 operations as methods. It sits above the composition root (`@market-data/infra`, whose
 * `openService` it calls), not beside the adapters: the service has one composition, which this package uses.
 *
 * - With `apiKey`, every call goes through the same pipeline as HTTP and MCP: authentication, the key's rate
 *   limit, credits, idempotency keys. The same call over HTTP, MCP or here is the same normalized request.
 * - Without `apiKey`, calls run as the embedding program itself, a trusted internal principal: not rate
 *   limited, not billed, no idempotency (`usage` then answers `unauthenticated`: there is no key to report).
 *
 * Methods resolve to the operation's JSON envelope (`{data}` or, for `ids`, `{data, refused}`), or for
 * `docs` to the markdown text, and reject with a `MarketDataError` carrying the error code of the HTTP error
 * table. `call` answers everything a transport would see (status, exact body, charge, ETag, replay flag).
 */
import {
  type Answer,
  type ApiRequest,
  creditsChargedOf,
  ErrorCatalog,
  type ErrorCode,
  handle,
  KEY_FORMAT,
  Operations,
  type PipelineServices,
  statusOf
} from "@market-data/core"
import {
  type AppConfig,
  ConfigProblem,
  DefaultSimulatedCompanies,
  layerLogging,
  nodeVersionProblem,
  openService,
  type StoreChoice
} from "@market-data/infra"
import { type Context, Effect, Exit, Scope } from "effect"

/** Where the embedded service keeps its state. */
export type StoreOption =
  | "memory"
  | { readonly pglite: string }
  | { readonly postgres: string; readonly poolSize?: number }

export interface MarketDataOptions {
  /** Default `"memory"`: nothing survives `close()`. */
  readonly store?: StoreOption
  /** Default `"simulated"`. */
  readonly feed?: "simulated" | "live"
  /** An API key (`mdk_...`): calls are authenticated, rate limited and billed as over HTTP. */
  readonly apiKey?: string
  /**
   * Ensures `apiKey` exists with at least this many credits when the service opens (like
   * `MARKET_DATA_BOOTSTRAP_CREDITS`); useful on the memory store, where no other process can mint keys.
   */
  readonly ensureCredits?: number
  /** Seed of the simulated data; default as `MARKET_DATA_SEED`. */
  readonly seed?: number
  /**
   * The simulated crypto universe, as `MARKET_DATA_SIM_UNIVERSE`: `registry` (default here: the hand-written 35
   * assets, seconds to start and a few hundred MB) or `market` (the 428 assets `serve` simulates by default; about
   * a minute of CPU and over 2 GB, see docs/performance-log.md).
   */
  readonly simulatedUniverse?: "market" | "registry"
  /**
   * Generated simulated companies beside the hand-made five (0 to 999). Default: `MARKET_DATA_SIMULATED_COMPANIES`
   * from the environment when it is set, else 520 (as the server).
   */
  readonly simulatedCompanies?: number
  /** Default rate-limit policy, units per minute (a key's own override wins). Default 60. */
  readonly rateLimitPerMinute?: number
  /** Default `"None"`: the library logs nothing unless asked. */
  readonly logLevel?: AppConfig["logLevel"]
}

/** A parameter value: text as in a query string, or the typed value (numbers, booleans, lists). */
export type ParamValue = string | number | boolean | ReadonlyArray<string>

/** An operation's parameters by name; `undefined` values are left out. */
export type Params = { readonly [name: string]: ParamValue | undefined }

export interface CallOptions {
  /** An `Idempotency-Key` (paid operations with `apiKey`): replayed, not re-run or re-billed, for 24 h. */
  readonly idempotencyKey?: string
  /** `If-None-Match` (`read`): an unchanged result answers status 304 at zero credits. */
  readonly ifNoneMatch?: string
}

/** Everything a transport would see of one call. */
export interface CallResult {
  readonly status: number
  /** The exact body: JSON text, markdown for `docs`, empty for 304. */
  readonly text: string
  /** The parsed JSON body, the markdown for `docs`, undefined for 304. */
  readonly body: unknown
  readonly creditsCharged: number
  readonly etag: string | undefined
  /** True when the answer is the stored answer of an earlier identical request under the same idempotency key. */
  readonly replayed: boolean
  /** Seconds until the data can change (`next_update_at`), when known. */
  readonly maxAgeSeconds: number | undefined
  /** Seconds to wait before retrying (429, 409 `request_in_progress`, 503), when given. */
  readonly retryAfterSeconds: number | undefined
  /** Which source fed the data (`simulated`, `live`; HTTP's `X-Data-Source`), for data operations. */
  readonly dataSource: string | undefined
}

/** An error answer, with the code and status of the service's error table. */
export class MarketDataError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly param: string | undefined
  readonly retryable: boolean
  readonly retryAfterSeconds: number | undefined
  constructor(fields: {
    code: ErrorCode
    status: number
    message: string
    param: string | undefined
    retryable: boolean
    retryAfterSeconds: number | undefined
  }) {
    super(fields.message)
    this.name = "MarketDataError"
    this.code = fields.code
    this.status = fields.status
    this.param = fields.param
    this.retryable = fields.retryable
    this.retryAfterSeconds = fields.retryAfterSeconds
  }
}

/** The names of the 23 operations, as methods of the client. */
export type OperationName =
  | "read"
  | "price"
  | "funding"
  | "open_interest"
  | "orderflow"
  | "liquidations"
  | "liquidity"
  | "technicals"
  | "structure"
  | "profile"
  | "valuation"
  | "growth"
  | "fundamentals"
  | "series"
  | "financials"
  | "events"
  | "holders"
  | "rank"
  | "docs"
  | "schema"
  | "resolve"
  | "coverage"
  | "usage"

/** One method per operation: resolves to the JSON envelope (`docs`: the markdown), rejects with `MarketDataError`. */
export type OperationMethods = {
  readonly [N in OperationName]: N extends "docs"
    ? (params?: Params, options?: CallOptions) => Promise<string>
    : (params?: Params, options?: CallOptions) => Promise<{ readonly data: unknown; readonly refused?: unknown }>
}

export interface MarketDataClient extends OperationMethods {
  /** Calls an operation by name and answers everything a transport would see; never rejects for an error answer. */
  readonly call: (operation: string, params?: Params, options?: CallOptions) => Promise<CallResult>
  /** For Effect users: one request through the pipeline, with the services it needs already provided. */
  readonly handle: (request: Omit<ApiRequest, "client">) => Effect.Effect<Answer>
  /** For Effect users: the service's own context (stores, handlers, settings, platform). */
  readonly context: Context.Context<PipelineServices>
  /** Stops the feeds and closes the stores. Calls after it reject. */
  readonly close: () => Promise<void>
}

/** `MARKET_DATA_SIMULATED_COMPANIES` when set to a whole number 0 to 999, else the server's default. */
const simulatedCompaniesFromEnv = (): number => {
  const text = process.env.MARKET_DATA_SIMULATED_COMPANIES
  const n = text === undefined || !/^\d{1,3}$/.test(text) ? Number.NaN : Number(text)
  return Number.isInteger(n) ? n : DefaultSimulatedCompanies
}

const storeChoice = (store: StoreOption | undefined): StoreChoice => {
  if (store === undefined || store === "memory") return { _tag: "Memory" }
  if ("pglite" in store) return { _tag: "Embedded", dir: store.pglite }
  return { _tag: "Postgres", url: store.postgres }
}

/** Opens the service in this process. Rejects with a message naming the problem when it cannot start. */
export const createMarketData = async (options: MarketDataOptions = {}): Promise<MarketDataClient> => {
  // On a Node too old for the service: one plain sentence, not a failure deep inside the runtime.
  const tooOld = nodeVersionProblem()
  if (tooOld !== undefined) throw new Error(tooOld)
  const store = storeChoice(options.store)
  const config: AppConfig = {
    host: "127.0.0.1",
    port: 0,
    store,
    dataDir: store._tag === "Embedded" ? store.dir : "./.market-data",
    poolSize: typeof options.store === "object" && "poolSize" in options.store ? (options.store.poolSize ?? 10) : 10,
    feed: options.feed ?? "simulated",
    seed: options.seed ?? 20261123,
    simulatedUniverse: options.simulatedUniverse ?? "registry",
    simulatedCompanies: options.simulatedCompanies ?? simulatedCompaniesFromEnv(),
    allowedOrigins: [],
    bootstrapKey: options.ensureCredits === undefined ? undefined : options.apiKey,
    bootstrapCredits: options.ensureCredits ?? 0,
    rateLimitPerMinute: options.rateLimitPerMinute ?? 60,
    logLevel: options.logLevel ?? "None",
    logFormat: "json"
  }
  if (options.ensureCredits !== undefined && options.apiKey === undefined) {
    throw new Error("ensureCredits needs apiKey: it tops up that key")
  }
  if (options.apiKey !== undefined && !KEY_FORMAT.test(options.apiKey)) {
    throw new Error("apiKey must be `mdk_` followed by 32 letters or digits (base62), as `keys create` prints it")
  }
  const scope = Effect.runSync(Scope.make())
  const opened = await Effect.runPromiseExit(
    openService(config).pipe(Scope.provide(scope), Effect.provide(layerLogging(config)))
  )
  if (Exit.isFailure(opened)) {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    const failure = opened.cause
    const problem = Exit.findErrorOption(opened)
    throw new Error(
      problem._tag === "Some" && problem.value instanceof ConfigProblem
        ? problem.value.message
        : `cannot open the service: ${String(failure)}`
    )
  }
  const context = opened.value.context
  let closed = false

  const authorization = options.apiKey === undefined ? [] : [`Bearer ${options.apiKey}`]
  const requestOf = (operation: string, params: Params, opts: CallOptions): ApiRequest => ({
    operation,
    params: Object.entries(params).filter((e): e is [string, ParamValue] => e[1] !== undefined),
    authorization,
    ...(opts.idempotencyKey === undefined ? {} : { idempotencyKey: [opts.idempotencyKey] }),
    ...(opts.ifNoneMatch === undefined ? {} : { ifNoneMatch: opts.ifNoneMatch }),
    client: "in-process",
    ...(options.apiKey === undefined ? { internal: true } : {})
  })

  const call = async (operation: string, params: Params = {}, opts: CallOptions = {}): Promise<CallResult> => {
    if (closed) throw new Error("this market-data client is closed")
    const answer = await Effect.runPromise(handle(requestOf(operation, params, opts)).pipe(Effect.provide(context)))
    return resultOf(answer)
  }

  const method =
    (operation: OperationName) =>
    async (params: Params = {}, opts: CallOptions = {}): Promise<never> => {
      const r = await call(operation, params, opts)
      if (r.status >= 400) throw errorOf(r)
      return r.body as never
    }
  const methods = Object.fromEntries(Operations.map((op) => [op.name, method(op.name as OperationName)]))

  return {
    ...(methods as unknown as OperationMethods),
    call,
    handle: (request) => handle({ ...request, client: "in-process" }).pipe(Effect.provide(context)),
    context,
    close: async () => {
      if (closed) return
      closed = true
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }
}

const resultOf = (answer: Answer): CallResult => {
  const o = answer.outcome
  const status = statusOf(o)
  switch (o._tag) {
    case "Json":
      return {
        status,
        text: o.body,
        body: JSON.parse(o.body),
        creditsCharged: o.creditsCharged,
        etag: o.etag,
        replayed: false,
        maxAgeSeconds: o.maxAgeSeconds,
        retryAfterSeconds: undefined,
        dataSource: o.dataSource
      }
    case "Markdown":
      return {
        status,
        text: o.markdown,
        body: o.markdown,
        creditsCharged: 0,
        etag: undefined,
        replayed: false,
        maxAgeSeconds: undefined,
        retryAfterSeconds: undefined,
        dataSource: undefined
      }
    case "NotModified":
      return {
        status,
        text: "",
        body: undefined,
        creditsCharged: 0,
        etag: o.etag,
        replayed: false,
        maxAgeSeconds: o.maxAgeSeconds,
        retryAfterSeconds: undefined,
        dataSource: undefined
      }
    case "Replay":
      return {
        status,
        text: o.answer.body,
        body: JSON.parse(o.answer.body),
        creditsCharged: creditsChargedOf(o),
        etag: o.answer.headers.etag,
        replayed: true,
        maxAgeSeconds: undefined,
        retryAfterSeconds: undefined,
        dataSource: o.answer.headers["x-data-source"]
      }
    case "Failure":
      return {
        status,
        text: JSON.stringify(o.error.toBody()),
        body: o.error.toBody(),
        creditsCharged: o.creditsCharged,
        etag: undefined,
        replayed: false,
        maxAgeSeconds: undefined,
        retryAfterSeconds: o.error.retryAfterSeconds,
        dataSource: undefined
      }
  }
}

const errorOf = (r: CallResult): MarketDataError => {
  const e = (r.body as { error: { code: ErrorCode; message: string; param?: string; retryable: boolean } }).error
  return new MarketDataError({
    code: e.code,
    status: ErrorCatalog[e.code].status,
    message: e.message,
    param: e.param,
    retryable: e.retryable,
    retryAfterSeconds: r.retryAfterSeconds
  })
}
