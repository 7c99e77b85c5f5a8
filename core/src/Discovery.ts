/**
 * Handlers of the discovery and account operations that need no market data: `docs`, `schema`, `usage`.
 * (`resolve` and `coverage` answer from the asset universes and arrive with the planes.)
 */
import { Effect, Layer } from "effect"
import { describeOperation, operationIndex } from "./Catalog.ts"
import { renderDocs } from "./Docs.ts"
import { apiError } from "./Errors.ts"
import { Ledger } from "./Ledger.ts"
import { type Handler, Handlers, Settings } from "./Pipeline.ts"
import { type DocsSection, operation } from "./Registry.ts"

/** The base path every HTTP operation lives under. */
export const BASE_PATH = "/api/v1"

/**
 * Builds the discovery handlers. `implemented` is the set of operations that have a handler in the running
 * service (so `schema` and `docs changelog` report the truth about what answers 501).
 */
export const discoveryHandlers = (
  implemented: ReadonlySet<string>
): Effect.Effect<ReadonlyMap<string, Handler>, never, Ledger | Settings> =>
  Effect.gen(function* () {
    const ledger = yield* Ledger
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
 * A `Handlers` layer with the discovery handlers plus any plane handler sets given, so that `implemented`
 * always matches what is actually wired.
 */
export const layerHandlers = (
  planeHandlers: ReadonlyArray<ReadonlyMap<string, Handler>> = []
): Layer.Layer<Handlers, never, Ledger | Settings> =>
  Layer.effect(Handlers)(
    Effect.gen(function* () {
      const implemented = new Set<string>(DiscoveryOperations)
      for (const set of planeHandlers) for (const name of set.keys()) implemented.add(name)
      const discovery = yield* discoveryHandlers(implemented)
      return Handlers.merge(discovery, ...planeHandlers)
    })
  )
