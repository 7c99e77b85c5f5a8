/**
 * Starts the real HTTP and MCP transports in-process on an ephemeral port over the whole service as `serve`
 * composes it: in-memory account stores and the real data planes from `openPlanes` (the simulated market
 * and filings, by default). The simulated year takes seconds and hundreds of megabytes, so a suite starts
 * one for the file. Logging is silenced unless LOG_LEVEL is set.
 */

import { createKey } from "@market-data/core"
import { HttpServerAddress } from "@market-data/http"
import { type AppConfig, layerTransports, openService } from "@market-data/infra"
import { Context, Effect, Exit, Layer, References, Scope } from "effect"
import { type TestServer, testConfig } from "./server.ts"

export interface PlanesServer extends TestServer {
  /** The feed, in words (as the startup line says it). */
  readonly feedDescription: string
}

/** The service with its real planes (default: the simulated feed on seed 20261123, the documented default). */
export const startPlanesServer = async (overrides: Partial<AppConfig> = {}): Promise<PlanesServer> => {
  const config = testConfig({ seed: 20261123, ...overrides })
  const quiet = Layer.succeed(References.MinimumLogLevel)(process.env.LOG_LEVEL === undefined ? "None" : "Info")
  const scope = Effect.runSync(Scope.make())
  try {
    const service = await Effect.runPromise(openService(config).pipe(Scope.provide(scope), Effect.provide(quiet)))
    const layer = layerTransports({ host: config.host, port: 0 }).pipe(
      Layer.provideMerge(Layer.succeedContext(service.context)),
      Layer.provide(quiet)
    )
    const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
    const run: TestServer["run"] = (effect) => Effect.runPromise(Effect.provide(effect, service.context))
    const port = Context.get(context, HttpServerAddress).port
    return {
      base: `http://127.0.0.1:${port}`,
      port,
      run,
      feedDescription: service.feedDescription,
      newKey: async (credits = 100, rateLimitPerMinute = null) => {
        const created = await run(createKey({ credits, rateLimitPerMinute }))
        return { key: created.key, id: created.record.id }
      },
      close: () => Effect.runPromise(Scope.close(scope, Exit.void))
    }
  } catch (e) {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    throw e
  }
}
