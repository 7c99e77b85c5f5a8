/**
 * Handlers of the discovery and account operations: `docs`, `schema`, `usage`, which need no market data,
 * and `resolve` and `coverage`, which answer from the planes' directories and so exist once planes are given
 * (until then they answer `501 not_implemented`, listed in the changelog).
 */
import { Effect, Layer } from "effect"
import { AssetSignals, assetSignalsOf } from "./AssetSignals.ts"
import { describeOperation, operationIndex } from "./Catalog.ts"
import { coverageHandler } from "./Coverage.ts"
import { renderDocs } from "./Docs.ts"
import { apiError, StoreUnavailable } from "./Errors.ts"
import { MoneyStore } from "./MoneyStore.ts"
import { type Handler, Handlers, Settings } from "./Pipeline.ts"
import { type PlaneOperations, planeHandlers } from "./Planes.ts"
import { type DocsSection, operation } from "./Registry.ts"
import { resolveHandler } from "./Resolve.ts"

/** The base path every HTTP operation lives under. */
export const BASE_PATH = "/api/v1"

/**
 * Builds the discovery handlers. `implemented` is the set of operations that have a handler in the running
 * service (so `schema` and `docs changelog` report the truth about what answers 501).
 */
export const discoveryHandlers = (
  implemented: ReadonlySet<string>
): Effect.Effect<ReadonlyMap<string, Handler>, never, MoneyStore | Settings> =>
  Effect.gen(function* () {
    const ledger = yield* MoneyStore
    const settings = yield* Settings
    const docsContext = { implemented, rateLimitPerMinute: settings.rateLimitPerMinute, basePath: BASE_PATH }
    const handlers = new Map<string, Handler>()
    handlers.set("docs", ({ params }) => {
      const section = params.section as DocsSection
      return Effect.succeed({ _tag: "Markdown", section, markdown: renderDocs(section, docsContext) })
    })
    handlers.set("schema", ({ params }) => {
      const resource = params.resource
      if (resource === undefined) {
        return Effect.succeed({ _tag: "Json", body: { data: operationIndex(implemented) }, creditsCharged: 0 })
      }
      const op = operation(String(resource))
      if (op === undefined) {
        return Effect.fail(apiError("invalid_parameter", "unknown resource", { param: "resource" }))
      }
      return Effect.succeed({ _tag: "Json", body: { data: describeOperation(op, implemented) }, creditsCharged: 0 })
    })
    handlers.set("usage", ({ principal, rate, nowMs }) =>
      Effect.gen(function* () {
        if (principal._tag !== "Key") {
          return yield* Effect.fail(apiError("unauthenticated", "`usage` needs an API key"))
        }
        const balance = yield* ledger.balance(principal.key.id, nowMs)
        return {
          _tag: "Json" as const,
          body: {
            data: {
              key_id: principal.key.id,
              credits_remaining: balance,
              rate_limit: {
                limit: rate.limit,
                remaining: rate.remaining,
                reset_at: new Date(rate.resetAtMs).toISOString()
              }
            }
          },
          creditsCharged: 0
        }
      })
    )
    return handlers
  })

/** The names of the operations this module answers. */
export const DiscoveryOperations: ReadonlyArray<string> = ["docs", "schema", "usage"]

/**
 * The handlers that answer from the planes' directories: `resolve` and `coverage`. Empty without planes, so
 * those two keep answering `501 not_implemented` until a plane is wired.
 */
export const directoryHandlers = (planes: ReadonlyArray<PlaneOperations>): ReadonlyMap<string, Handler> =>
  planes.length === 0
    ? new Map()
    : new Map<string, Handler>([
        ["resolve", resolveHandler(planes)],
        ["coverage", coverageHandler(planes)]
      ])

/**
 * A `Handlers` layer with the discovery handlers, the handlers of the given planes (their data operations
 * through `planeHandlers`, plus `resolve` and `coverage` over their directories) and any further handler
 * sets, so that `implemented` (what `schema` and `docs changelog` report) always matches what is wired.
 * A later set wins on a name clash; the discovery handlers `docs`, `schema` and `usage` come first. The
 * planes' `AssetSignals` come with them.
 */
export const layerHandlers = (
  handlerSets: ReadonlyArray<ReadonlyMap<string, Handler>> = [],
  planes: ReadonlyArray<PlaneOperations> = []
): Layer.Layer<Handlers | AssetSignals, never, MoneyStore | Settings> =>
  Layer.merge(
    Layer.effect(Handlers)(
      Effect.gen(function* () {
        const sets =
          planes.length === 0 ? handlerSets : [planeHandlers(planes), directoryHandlers(planes), ...handlerSets]
        const implemented = new Set<string>(DiscoveryOperations)
        for (const set of sets) for (const name of set.keys()) implemented.add(name)
        const discovery = yield* discoveryHandlers(implemented)
        return new Map([...Handlers.merge(discovery, ...sets)].map(([name, h]) => [name, storeFailureTyped(h)]))
      })
    ),
    Layer.succeed(AssetSignals)(assetSignalsOf(planes))
  )

/**
 * A handler whose store fails (a `StoreUnavailable` defect from a database-backed plane store or the ledger,
 * e.g. PostgreSQL restarting) answers the typed, transient `503 source_unavailable`, as a store failure in
 * the pipeline's own steps does, never the `500 internal_error` of a bug; the pipeline then releases what the
 * request held.
 */
const storeFailureTyped =
  (handler: Handler): Handler =>
  (input) =>
    handler(input).pipe(
      Effect.catchDefect((defect) =>
        defect instanceof StoreUnavailable
          ? Effect.logWarning("store unavailable", defect.operation, String(defect.cause)).pipe(
              Effect.andThen(
                Effect.fail(
                  apiError("source_unavailable", "the store is unavailable; nothing was charged, retry shortly", {
                    retryAfterSeconds: 1
                  })
                )
              )
            )
          : Effect.die(defect)
      )
    )
