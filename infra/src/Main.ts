/**
 * The composition root: picks the store adapters, wires the core services and the transports, and runs
 * the server until SIGTERM/SIGINT, then drains in-flight requests and exits 0.
 */
import { ensureBootstrapKey, type Handler, layerHandlers, Settings, type StorePorts } from "@market-data/core"
import { layerHttpServer } from "@market-data/http"
import { Effect, Layer, Logger, References } from "effect"
import * as SecureRandom from "effect/crypto/SecureRandom"
import { HttpServer } from "effect/http"
import { type AppConfig, ConfigProblem } from "./AppConfig.ts"
import { layerNodeDigest } from "./NodeDigest.ts"
import { openStores } from "./Stores.ts"

/** Services every entry point needs besides the stores. */
export const layerPlatform = Layer.mergeAll(layerNodeDigest, SecureRandom.layerWebCrypto)

/** The logger: one JSON (or logfmt) line per event on stdout, at the configured level. */
export const layerLogging = (config: AppConfig) =>
  Layer.mergeAll(
    Logger.layer([config.logFormat === "json" ? Logger.consoleJson : Logger.consoleLogFmt]),
    Layer.succeed(References.MinimumLogLevel)(config.logLevel)
  )

/** The core services over the given stores: settings, handlers, platform. */
export const layerCore = (
  config: AppConfig,
  stores: Layer.Layer<StorePorts>,
  planeHandlers: ReadonlyArray<ReadonlyMap<string, Handler>> = []
) => {
  const settings = Layer.succeed(Settings)({ rateLimitPerMinute: config.rateLimitPerMinute })
  const base = Layer.mergeAll(stores, settings, layerPlatform)
  return layerHandlers(planeHandlers).pipe(Layer.provideMerge(base))
}

/** `serve`: opens the stores, then runs the HTTP server until interrupted. */
export const serve = (config: AppConfig, planeHandlers: ReadonlyArray<ReadonlyMap<string, Handler>> = []) =>
  Effect.gen(function* () {
    // The stores open (and migrate) before the server listens, so no request waits on the database's start.
    const stores = yield* openStores(config)
    const core = layerCore(config, stores.layer, planeHandlers)
    // The bootstrap key exists before the server accepts its first request.
    const bootstrap = Layer.effectDiscard(
      Effect.gen(function* () {
        if (config.bootstrapKey === undefined) return
        const b = yield* ensureBootstrapKey(config.bootstrapKey, config.bootstrapCredits).pipe(
          Effect.mapError((e) => new ConfigProblem(e.message))
        )
        yield* Effect.logInfo(b.created ? "bootstrap key created" : "bootstrap key present").pipe(
          Effect.annotateLogs({ key_id: b.record.id, granted: b.granted })
        )
      })
    ).pipe(Layer.provide(core))
    const startupLine = Layer.effectDiscard(
      Effect.gen(function* () {
        const server = yield* HttpServer.HttpServer
        const address = server.address
        const url =
          address._tag === "UnixPathAddress"
            ? `unix:${address.path}`
            : `http://${formatHost(config.host)}:${address.port}`
        yield* Effect.sync(() =>
          process.stdout.write(
            `market-data listening on ${url}/api/v1 · store: ${stores.description} · feed: ${config.feed}\n`
          )
        )
      })
    )
    const app = startupLine.pipe(
      Layer.provideMerge(layerHttpServer({ host: config.host, port: config.port })),
      Layer.provide(Layer.merge(core, bootstrap))
    )
    return yield* Layer.launch(app).pipe(
      Effect.catchTag("ServeError", (e) =>
        Effect.fail(
          new ConfigProblem(
            `cannot listen on ${config.host}:${config.port}: ${e.cause instanceof Error ? e.cause.message : String(e.cause)}`
          )
        )
      )
    )
  }).pipe(Effect.scoped, Effect.provide(layerLogging(config)))

const formatHost = (host: string): string => (host.includes(":") ? `[${host}]` : host)
