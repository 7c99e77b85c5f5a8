/**
 * Starts the real HTTP transport in-process on an ephemeral port over in-memory stores, for end-to-end
 * suites. Logging is silenced unless LOG_LEVEL is set.
 */
import * as net from "node:net"
import { createKey, type Handler, type PlaneOperations, type StorePorts } from "@market-data/core"
import { HttpServerAddress } from "@market-data/http"
import { type AppConfig, layerCore, layerTransports } from "@market-data/infra"
import { layerMemoryStores } from "@market-data/memory"
import { Context, Effect, Exit, Layer, References, Scope } from "effect"
import type * as Digest from "effect/crypto/Digest"
import type * as SecureRandom from "effect/crypto/SecureRandom"

export const testConfig = (overrides: Partial<AppConfig> = {}): AppConfig => ({
  host: "127.0.0.1",
  port: 0,
  store: { _tag: "Memory" },
  dataDir: "./.market-data-test",
  poolSize: 4,
  feed: "simulated",
  seed: 1,
  // The registry's 35 assets: a suite's start stays a few seconds; the production-scale simulated universe has
  // its own tests (adapters/sources/test/SimulatedUniverse.test.ts, infra/test/SimulatedMarket.test.ts).
  simulatedUniverse: "registry",
  // The hand-made companies only: the suites on this server do not need the generated universe (test/planes.test.ts
  // runs the default), and generating it takes seconds.
  simulatedCompanies: 0,
  allowedOrigins: [],
  bootstrapKey: undefined,
  bootstrapCredits: 0,
  rateLimitPerMinute: 60,
  logLevel: "None",
  logFormat: "json",
  ...overrides
})

type Services = StorePorts | Digest.Digest | SecureRandom.SecureRandom

export interface TestServer {
  readonly base: string
  readonly port: number
  /** Runs an effect against the server's own services (stores, keys). */
  readonly run: <A, E>(effect: Effect.Effect<A, E, Services>) => Promise<A>
  /** Creates a key; returns the secret and its ID. */
  readonly newKey: (credits?: number, rateLimitPerMinute?: number | null) => Promise<{ key: string; id: string }>
  readonly close: () => Promise<void>
}

export const startServer = async (
  overrides: Partial<AppConfig> = {},
  planeHandlers: ReadonlyArray<ReadonlyMap<string, Handler>> = [],
  /** Planes served through the production plane handlers (`planeHandlers`, `resolve`, `coverage`). */
  planes: ReadonlyArray<PlaneOperations> = []
): Promise<TestServer> => {
  const config = testConfig(overrides)
  const scope = Effect.runSync(Scope.make())
  const layer = layerTransports({
    host: config.host,
    port: 0,
    ...(config.connectionLimits === undefined ? {} : { limits: config.connectionLimits })
  }).pipe(
    Layer.provideMerge(layerCore(config, layerMemoryStores, planeHandlers, planes)),
    Layer.provide(Layer.succeed(References.MinimumLogLevel)(process.env.LOG_LEVEL === undefined ? "None" : "Info"))
  )
  const context = (await Effect.runPromise(Layer.buildWithScope(layer, scope))) as Context.Context<
    Services | HttpServerAddress
  >
  const run = <A, E>(effect: Effect.Effect<A, E, Services>) => Effect.runPromise(Effect.provide(effect, context))
  const port = Context.get(context, HttpServerAddress).port
  return {
    base: `http://127.0.0.1:${port}`,
    port,
    run,
    newKey: async (credits = 100, rateLimitPerMinute = null) => {
      const created = await run(createKey({ credits, rateLimitPerMinute }))
      return { key: created.key, id: created.record.id }
    },
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

export interface RawResponse {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
}

/** Sends bytes exactly as given (for repeated headers, oversized requests) and reads one response. */
export const rawRequest = (port: number, request: string): Promise<RawResponse> =>
  new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1")
    const chunks: Array<Buffer> = []
    socket.on("data", (c) => chunks.push(c))
    socket.on("error", reject)
    socket.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8")
      const split = text.indexOf("\r\n\r\n")
      const head = text.slice(0, split).split("\r\n")
      const status = Number((head[0] ?? "").split(" ")[1])
      const headers: Record<string, string> = {}
      for (const line of head.slice(1)) {
        const i = line.indexOf(":")
        headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim()
      }
      let body = text.slice(split + 4)
      if (headers["transfer-encoding"] === "chunked") body = dechunk(body)
      resolve({ status, headers, body })
    })
    socket.write(
      request.includes("Connection:") ? request : request.replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n")
    )
  })

const dechunk = (s: string): string => {
  let out = ""
  let rest = s
  for (;;) {
    const nl = rest.indexOf("\r\n")
    const size = Number.parseInt(rest.slice(0, nl), 16)
    if (!size) return out
    out += rest.slice(nl + 2, nl + 2 + size)
    rest = rest.slice(nl + 2 + size + 2)
  }
}
