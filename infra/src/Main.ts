/**
 * The composition root: picks the store adapters, wires the core services and the transports, and runs
 * the server until SIGTERM/SIGINT, then drains in-flight requests and exits 0.
 */
import { type Handler, PipelineObserver } from "@market-data/core"
import { DEFAULT_CONNECTION_LIMITS, HttpServerAddress, RequestTelemetry, settleNodeHttpShapes } from "@market-data/http"
import { Context, Effect, Exit, Layer, Logger, References } from "effect"
import { type AdminRunner, serveAdmin } from "./Admin.ts"
import { type AppConfig, ConfigProblem, DEFAULT_METRICS_HOST } from "./AppConfig.ts"
import { listenEarly } from "./EarlyListener.ts"
import { flushLogLines, formatJsonLine, perTurnConsole } from "./LogLines.ts"
import { type OpenedService, openService } from "./Service.ts"
import { startProgress } from "./StartProgress.ts"
import { layerTracing, METRICS_PATH, makeTelemetry, serveMetricsPort } from "./Telemetry.ts"
import { layerTransports } from "./Transports.ts"

/**
 * The logger: one JSON (or logfmt) line per event on stdout, at the configured level. `perTurn` (the server):
 * the lines of one event-loop turn are written together (`LogLines.ts`); otherwise each line at once.
 */
export const layerLogging = (config: AppConfig, options: { readonly perTurn?: boolean } = {}) => {
  const format = config.logFormat === "json" ? formatJsonLine : Logger.formatLogFmt
  return Layer.mergeAll(
    Logger.layer([options.perTurn === true ? perTurnConsole(format) : Logger.withConsoleLog(format)]),
    Layer.succeed(References.MinimumLogLevel)(config.logLevel)
  )
}

/**
 * `serve`: opens the service (stores, planes, core), then runs the HTTP server until interrupted.
 * `handlerSets` adds operation handlers (tests serve a deterministic plane this way).
 */
export const serve = (
  config: AppConfig,
  handlerSets: ReadonlyArray<ReadonlyMap<string, Handler>> = [],
  options: {
    readonly withPlanes?: boolean
    /**
     * The commands of the local admin channel (`Admin.ts`), run on this server's stores; served on the embedded
     * store, where no other process can open them while this one runs.
     */
    readonly admin?: (service: OpenedService) => AdminRunner
  } = {}
) =>
  Effect.gen(function* () {
    // Added first, so it runs last: after the server drained and the stores closed (one line, on stdout).
    const signal = yield* shutdownSignal
    yield* Effect.addFinalizer((exit) =>
      Exit.hasInterrupts(exit)
        ? Effect.sync(() => {
            flushLogLines()
            process.stdout.write(
              `market-data stopped${signal.received === undefined ? "" : ` on ${signal.received}`}: in-flight requests drained, stores closed\n`
            )
          })
        : Effect.void
    )
    // The start says every few seconds what it is doing and how far along (StartProgress.ts), until it is ready.
    // The port opens first, before the stores: until the service is open it answers /healthz, and /readyz and
    // every other request with 503 and Retry-After (EarlyListener.ts); then the HTTP transport takes the socket
    // over. The server listens while the simulated market's history is generated: each crypto asset answers once
    // its history is ready (503 source_unavailable with Retry-After before), everything else at once.
    const progress = yield* startProgress()
    // Before the first request can arrive: sixteen requests of the process's own, so that V8 lays Node's HTTP
    // objects out for their whole life while the start's collections cannot drop their shapes (NodeShapes.ts).
    yield* Effect.promise(settleNodeHttpShapes)
    const limits = config.connectionLimits ?? DEFAULT_CONNECTION_LIMITS
    const early = yield* listenEarly(
      config.host,
      config.port,
      Math.max(511, limits.maxConnections),
      progress.doing
    ).pipe(Effect.mapError((e) => new ConfigProblem(`cannot listen on ${config.host}:${config.port}: ${e.message}`)))
    yield* progress.answering
    yield* Effect.sync(() => {
      flushLogLines()
      process.stdout.write(
        `market-data starting on http://${formatHost(config.host)}:${early.port}: /healthz answers; /readyz and the API answer 503 (Retry-After: 1) until the service is open\n`
      )
    })
    const service = yield* openService(config, {
      handlerSets,
      progressive: true,
      progress,
      ...(options.withPlanes === undefined ? {} : { withPlanes: options.withPlanes })
    })
    if (config.store._tag === "Embedded" && options.admin !== undefined) {
      yield* serveAdmin(config.store.dir, options.admin(service))
    }
    // Health and readiness, answered before the API (no rate unit, no credit); `/metrics` only on a port of its
    // own (MARKET_DATA_METRICS_PORT, 9464 by default, on MARKET_DATA_METRICS_HOST, loopback by default), never on
    // the public API port.
    const telemetry = makeTelemetry(
      {
        missing: service.missing,
        sourceStatus: service.sourceStatus,
        poolStats: service.stores.database?.poolStats,
        statements: service.stores.database?.statements,
        groupCommit: service.stores.database?.groupCommit?.stats
      },
      { tracing: config.otlpEndpoint !== undefined }
    )
    const metricsHost = config.metricsHost ?? DEFAULT_METRICS_HOST
    const metricsPort =
      config.metricsPort === undefined
        ? undefined
        : yield* serveMetricsPort(telemetry, metricsHost, config.metricsPort).pipe(
            Effect.catch((e) =>
              config.metricsPortSet === true
                ? Effect.fail(
                    new ConfigProblem(
                      `cannot listen on ${metricsHost}:${config.metricsPort} for metrics (MARKET_DATA_METRICS_PORT): ${e.message}`
                    )
                  )
                : Effect.as(
                    Effect.logWarning(
                      `metrics are off: the default metrics port ${metricsHost}:${config.metricsPort} cannot be listened on (${e.message}); set MARKET_DATA_METRICS_PORT to another port, or to off`
                    ),
                    undefined
                  )
            )
          )
    const context = Context.add(
      Context.add(service.context, RequestTelemetry, telemetry.requestTelemetry),
      PipelineObserver,
      telemetry.pipelineObserver
    )
    const services =
      config.otlpEndpoint === undefined
        ? Layer.succeedContext(context)
        : Layer.merge(Layer.succeedContext(context), layerTracing(config.otlpEndpoint))
    const startupLine = Layer.effectDiscard(
      Effect.gen(function* () {
        const address = yield* HttpServerAddress
        const url = `http://${formatHost(config.host)}:${address.port}`
        const metrics =
          metricsPort === undefined ? "off" : `http://${formatHost(metricsHost)}:${metricsPort}${METRICS_PATH}`
        // A memory store lives in this process only: without a bootstrap key there is no key and no way to mint one.
        const keyHint =
          config.store._tag === "Memory" && config.bootstrapKey === undefined
            ? "no API key exists: DATABASE_URL=memory keeps keys inside this process, where `market-data keys create` cannot reach them. To get one, restart with MARKET_DATA_BOOTSTRAP_KEY=mdk_<32 letters or digits> MARKET_DATA_BOOTSTRAP_CREDITS=<n> (that key is then created with n credits), or use the embedded store (unset DATABASE_URL) and `market-data keys create --credits N`\n"
            : ""
        // From here each progress line names what is still missing, until nothing is.
        yield* progress.listening(service.missing)
        yield* Effect.sync(() => {
          flushLogLines()
          process.stdout.write(
            `market-data listening on ${url}/api/v1 · docs page ${url}/ · MCP ${url}/api/mcp · metrics ${metrics} · store: ${service.storeDescription} · feed: ${service.feedDescription}\n${keyHint}`
          )
        })
      })
    )
    const app = startupLine.pipe(
      Layer.provideMerge(
        layerTransports({
          host: config.host,
          port: config.port,
          operational: telemetry.handler(false),
          limits: config.connectionLimits,
          listening: early.handOver()
        })
      ),
      Layer.provide(services)
    )
    return yield* Layer.launch(app).pipe(
      Effect.catchTag("ListenError", (e) =>
        Effect.fail(new ConfigProblem(`cannot listen on ${config.host}:${config.port}: ${e.cause.message}`))
      )
    )
  }).pipe(Effect.scoped, Effect.provide(layerLogging(config, { perTurn: true })))

/** Which signal stopped the server, for the shutdown line (NodeRuntime's own handlers do the stopping). */
const shutdownSignal = Effect.acquireRelease(
  Effect.sync(() => {
    const state: { received: NodeJS.Signals | undefined; readonly remove: () => void } = {
      received: undefined,
      remove: () => {
        process.removeListener("SIGTERM", onSignal)
        process.removeListener("SIGINT", onSignal)
      }
    }
    const onSignal = (signal: NodeJS.Signals) => {
      state.received = signal
    }
    process.on("SIGTERM", onSignal)
    process.on("SIGINT", onSignal)
    return state
  }),
  (state) => Effect.sync(state.remove)
)

const formatHost = (host: string): string => (host.includes(":") ? `[${host}]` : host)
