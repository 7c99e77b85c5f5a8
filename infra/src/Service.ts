/**
 * The service without a transport: the stores the configuration names, the data planes with their feeds,
 * the core services and the bootstrap key, for the life of a scope. `serve` puts the HTTP and MCP transports
 * on it; the embedded library (`@market-data/embedded`) calls the pipeline on it directly. One composition,
 * so every kind of user gets the same service.
 */
import {
  ensureBootstrapKey,
  type Handler,
  layerHandlers,
  layerRequestCaches,
  type PipelineServices,
  type PlaneOperations,
  Settings,
  type SourceStatus,
  type StorePorts
} from "@market-data/core"
import { Cause, type Context, Effect, Layer, type Scope } from "effect"
import * as SecureRandom from "effect/crypto/SecureRandom"
import { sql } from "kysely"
import { type AppConfig, ConfigProblem } from "./AppConfig.ts"
import { layerNodeDigest } from "./NodeDigest.ts"
import { openPlanes, startSimulatedHistoryApart } from "./Planes.ts"
import { noStartProgress, type StartProgress } from "./StartProgress.ts"
import { lockDataDir, type OpenedStores, openStores } from "./Stores.ts"

/** Services every entry point needs besides the stores. */
export const layerPlatform = Layer.mergeAll(layerNodeDigest, SecureRandom.layerWebCrypto)

/** The core services over the given stores: settings, handlers (planes and extra sets), platform. */
export const layerCore = (
  config: AppConfig,
  stores: Layer.Layer<StorePorts>,
  handlerSets: ReadonlyArray<ReadonlyMap<string, Handler>> = [],
  planes: ReadonlyArray<PlaneOperations> = []
): Layer.Layer<PipelineServices | SecureRandom.SecureRandom> => {
  const settings = Layer.succeed(Settings)({
    rateLimitPerMinute: config.rateLimitPerMinute,
    ...(config.trustedProxies === undefined ? {} : { trustedProxies: config.trustedProxies })
  })
  // The request path's process-local memory, this service instance's own (`RequestCaches`).
  const base = Layer.mergeAll(stores, settings, layerPlatform, layerRequestCaches())
  return layerHandlers(handlerSets, planes).pipe(Layer.provideMerge(base))
}

export interface OpenedService {
  readonly context: Context.Context<PipelineServices | SecureRandom.SecureRandom>
  readonly stores: OpenedStores
  readonly planes: ReadonlyArray<PlaneOperations>
  /** For the startup line: the store and the feed, in words. */
  readonly storeDescription: string
  readonly feedDescription: string
  /**
   * What is missing before the service can give every answer (`/readyz`): the database not answering, the
   * crypto baselines still being computed. Empty when ready.
   */
  readonly missing: Effect.Effect<ReadonlyArray<string>>
  /** Each source component's status (the `market-data sources` view), for metrics; empty without planes. */
  readonly sourceStatus: Effect.Effect<ReadonlyArray<SourceStatus>>
}

/** Longest wait for the database's answer to a readiness probe. */
const DATABASE_PROBE_MS = 2000

/**
 * Opens the whole service for the life of the scope. `handlerSets` adds or overrides operation handlers
 * (tests serve a deterministic plane this way); `withPlanes: false` leaves the data planes out.
 */
export const openService = (
  config: AppConfig,
  options: {
    readonly handlerSets?: ReadonlyArray<ReadonlyMap<string, Handler>>
    readonly withPlanes?: boolean
    /** Generate the simulated market in the background (see `OpenPlanesOptions`); `serve` does. */
    readonly progressive?: boolean
    /** Where the steps of the start are reported until the server listens (`serve`'s progress lines). */
    readonly progress?: StartProgress
  } = {}
): Effect.Effect<OpenedService, ConfigProblem, Scope.Scope> =>
  Effect.gen(function* () {
    // A progressive start on the embedded default has the simulated market's missing kept history generated in
    // a child process from the first moment, on the machine's other core, while the stores open and the filings
    // load (see `startSimulatedHistoryApart`). The data folder's lock is taken first: the child writes in it.
    const early =
      options.withPlanes !== false && options.progressive === true && config.store._tag === "Embedded"
        ? config.store.dir
        : undefined
    if (early !== undefined) yield* lockDataDir(early)
    const progress = options.progress ?? noStartProgress
    const apart = early === undefined ? undefined : yield* startSimulatedHistoryApart(config)
    const apartProgress = apart?.progress
    if (apart !== undefined && apartProgress !== undefined) {
      yield* progress.watch("generating the simulated crypto history in a child process", () => {
        const p = apartProgress()
        return p.running ? `${p.written} of ${apart.indexes.size} assets written` : false
      })
    }
    // The stores open (and migrate) before anything is served, so no request waits on the database's start.
    // Migrations run one after another without yielding to timers: each reports itself (`tick`).
    let migrating: string | undefined
    const stores = yield* progress.during(
      config.store._tag === "Embedded"
        ? `opening the embedded database in ${config.store.dir} (a new folder's is created first) and migrating it`
        : config.store._tag === "Postgres"
          ? "connecting to PostgreSQL and migrating it"
          : "opening the memory stores",
      openStores(config, {
        locked: early !== undefined,
        onMigration: (name) => {
          migrating = `migration ${name}`
          progress.tick()
        }
      }),
      () => migrating
    )
    const opened =
      options.withPlanes === false
        ? undefined
        : yield* openPlanes(config, stores, {
            progressive: options.progressive === true,
            ...(apart === undefined ? {} : { apart }),
            progress
          })
    // `coverage` reports each asset's source health from the plane stores' statuses (`ReportsSources`).
    const planes =
      opened === undefined
        ? undefined
        : {
            ...opened,
            planes: opened.planes.map((p) => ({
              ...p,
              sourceStatus: opened.market.status,
              ...(opened.market.assetStatuses === undefined ? {} : { assetSourceStatus: opened.market.assetStatuses })
            }))
          }
    const core = layerCore(config, stores.layer, options.handlerSets ?? [], planes?.planes ?? [])
    const context = yield* Layer.build(core)
    // The bootstrap key exists before the first request.
    if (config.bootstrapKey !== undefined) {
      const b = yield* ensureBootstrapKey(config.bootstrapKey, config.bootstrapCredits).pipe(
        Effect.provide(context),
        Effect.mapError((e) => new ConfigProblem(e.message))
      )
      yield* Effect.logInfo(b.created ? "bootstrap key created" : "bootstrap key present").pipe(
        Effect.annotateLogs({ key_id: b.record.id, granted: b.granted })
      )
    }
    const database = stores.database
    const databaseMissing: Effect.Effect<ReadonlyArray<string>> =
      database === undefined
        ? Effect.succeed([])
        : Effect.tryPromise(() => sql`select 1`.execute(database.db)).pipe(
            Effect.timeout(DATABASE_PROBE_MS),
            Effect.as([] as ReadonlyArray<string>),
            Effect.catchCause((cause) =>
              Effect.succeed([
                `database: not answering (${Cause.hasInterruptsOnly(cause) ? "interrupted" : String(Cause.squash(cause)).slice(0, 200)})`
              ])
            )
          )
    return {
      context,
      stores,
      planes: planes?.planes ?? [],
      storeDescription: stores.description,
      feedDescription: planes?.description ?? "none (data planes left out)",
      missing: Effect.map(databaseMissing, (db) => [...db, ...(opened?.missing() ?? [])]),
      sourceStatus: opened === undefined ? Effect.succeed([]) : opened.market.status
    }
  })
