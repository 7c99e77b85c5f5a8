/**
 * `node bench/micro.ts <op> [n]`: CPU cost of one request in process on the memory store (no HTTP), with a paid
 * key, for profiling the core (`PROF=<file>` writes a CPU profile of the measured loop). Not part of
 * `npm run bench`. `UNIVERSE=market` simulates the 428-asset market (as `serve`'s default) instead of the
 * 35-asset registry: about a minute of CPU to start.
 *
 * - `<op>` (price, read, funding, rank, ...): through the embedded library and the real simulated planes.
 * - `pipeline`: `handle` alone with the deterministic test plane's `price` (what the pipeline itself costs).
 * - `http`: the HTTP transport's API handler (`makeRequestHandler`, as `serve` mounts it: telemetry, the catalog
 *   header) on a paid `read` of the test plane, without Node's parser and socket: stand-in request and response
 *   objects, 50 requests per event-loop turn as under load. `LOG_LEVEL` (default `warn`, as the bench's servers).
 */
import { writeFileSync } from "node:fs"
import type { IncomingMessage, ServerResponse } from "node:http"
import { Session } from "node:inspector/promises"
import { type ApiRequest, handle, PipelineObserver, type PipelineServices } from "@market-data/core"
import { createMarketData } from "@market-data/embedded"
import { makeRequestHandler, RequestTelemetry } from "@market-data/http"
import { type AppConfig, layerLogging, makeTelemetry, openService, transportHeaders } from "@market-data/infra"
import { Context, Effect, Scope } from "effect"
import { makeTestPlane } from "../core/test/support/TestPlane.ts"
import { inProcessConfig } from "./process.ts"

const op = process.argv[2] ?? "price"
const n = Number(process.argv[3] ?? 20_000)
const key = `mdk_${"Micro".repeat(6)}XY`

/** `PROF=<file>`: a CPU profile of the measured loop only, written to that file. */
const startProfiler = async (file: string) => {
  const session = new Session()
  session.connect()
  await session.post("Profiler.enable")
  await session.post("Profiler.setSamplingInterval", { interval: 100 })
  await session.post("Profiler.start")
  return async () => {
    const { profile } = await session.post("Profiler.stop")
    writeFileSync(file, JSON.stringify(profile))
  }
}

/** The call to measure and how to close what it needs. */
const setUp = async (): Promise<{ call: () => Promise<number>; close: () => Promise<void> }> => {
  if (op === "http") return setUpHttp()
  if (op === "pipeline") {
    const config = inProcessConfig(key)
    const scope = Effect.runSync(Scope.make())
    const context: Context.Context<PipelineServices> = await Effect.runPromise(
      Effect.gen(function* () {
        const plane = yield* makeTestPlane()
        return (yield* openService(config, { handlerSets: [plane.handlers], withPlanes: false })).context
      }).pipe(Scope.provide(scope), Effect.provide(layerLogging(config)))
    )
    const request: ApiRequest = {
      operation: "price",
      params: [["id", "crypto:bitcoin"]],
      authorization: [`Bearer ${key}`],
      idempotencyKey: [],
      client: "127.0.0.1"
    }
    const run = Effect.runPromiseWith(context)
    return {
      call: () => run(handle(request)).then((a) => (a.outcome._tag === "Json" ? 200 : 500)),
      close: () => Effect.runPromise(Scope.close(scope, { _tag: "Success", value: undefined } as never))
    }
  }
  const client = await createMarketData({
    store: "memory",
    apiKey: key,
    ensureCredits: 1_000_000_000,
    rateLimitPerMinute: 1_000_000_000,
    simulatedUniverse: process.env.UNIVERSE === "market" ? "market" : "registry"
  })
  const params: Record<string, string> = op === "rank" ? { limit: "50" } : { id: "crypto:bitcoin" }
  return { call: () => client.call(op, params).then((r) => r.status), close: () => client.close() }
}

/** What `makeRequestHandler` uses of a Node response. */
class StandInResponse {
  writableEnded = false
  destroyed = false
  statusCode = 0
  private readonly ended: () => void
  constructor(ended: () => void) {
    this.ended = ended
  }
  writeHead(code: number) {
    this.statusCode = code
    return this
  }
  end() {
    this.writableEnded = true
    this.ended()
    return this
  }
  on() {
    return this
  }
}

/** Requests handed to the handler per event-loop turn (`http`), as a server under load gets them. */
const PER_TURN = 50

/**
 * `http`: the API handler as `serve` mounts it (the service's context with the logger, the telemetry and the
 * catalog header), on stand-in Node request and response objects. Each call is `PER_TURN` requests handed over
 * in one turn; it resolves when all are answered (`end`), with 200 only if every answer was a 200.
 */
const setUpHttp = async (): Promise<{ call: () => Promise<number>; close: () => Promise<void> }> => {
  const config = inProcessConfig(key, {
    logLevel: (process.env.LOG_LEVEL ?? "Warn").replace(/^./, (c) => c.toUpperCase()) as AppConfig["logLevel"]
  })
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(
    Effect.gen(function* () {
      const plane = yield* makeTestPlane()
      const service = yield* openService(config, { handlerSets: [plane.handlers], withPlanes: false })
      // The logger and its level, as the server's fibers see them.
      const ambient = yield* Effect.context<never>()
      return Context.merge(ambient, service.context)
    }).pipe(Scope.provide(scope), Effect.provide(layerLogging(config, { perTurn: true })))
  )
  const telemetry = makeTelemetry(
    { missing: Effect.succeed([]), sourceStatus: Effect.succeed([]), poolStats: undefined },
    { tracing: false }
  )
  const served = Context.add(
    Context.add(context, RequestTelemetry, telemetry.requestTelemetry),
    PipelineObserver,
    telemetry.pipelineObserver
  )
  const api = makeRequestHandler(served, { mounts: [], headers: transportHeaders })
  const operational = telemetry.handler(true)
  const rawHeaders = ["host", "127.0.0.1:8080", "authorization", `Bearer ${key}`]
  const call = () =>
    new Promise<number>((resolve) => {
      let left = PER_TURN
      let status = 200
      for (let i = 0; i < PER_TURN; i++) {
        const req = {
          method: "GET",
          url: "/api/v1/read?id=crypto:bitcoin",
          headers: { host: "127.0.0.1:8080", authorization: `Bearer ${key}` },
          rawHeaders,
          socket: { remoteAddress: "127.0.0.1" }
        } as unknown as IncomingMessage
        const res = new StandInResponse(() => {
          if (res.statusCode !== 200) status = res.statusCode
          if (--left === 0) resolve(status)
        })
        const node = res as unknown as ServerResponse
        if (!operational(req, node)) api(req, node)
      }
    })
  return {
    call,
    close: () => Effect.runPromise(Scope.close(scope, { _tag: "Success", value: undefined } as never))
  }
}

const { call, close } = await setUp()
// Warm: the first calls build the baselines.
for (let i = 0; i < 200; i++) await call()
const profiler = process.env.PROF === undefined ? undefined : await startProfiler(process.env.PROF)
const t0 = performance.now()
const c0 = process.cpuUsage()
for (let i = 0; i < n; i++) {
  const status = await call()
  if (status !== 200) throw new Error(`${op}: answered ${status}`)
}
const cpu = process.cpuUsage(c0)
const ms = performance.now() - t0
await profiler?.()
const requests = op === "http" ? n * PER_TURN : n
process.stdout.write(
  `${op}: ${((ms * 1000) / requests).toFixed(1)} us/request wall, ${((cpu.user + cpu.system) / requests).toFixed(1)} us CPU\n`
)
await close()
