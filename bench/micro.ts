/**
 * `node bench/micro.ts <op> [n]`: CPU cost of one request in process on the memory store (no HTTP), with a paid
 * key, for profiling the core (`PROF=<file>` writes a CPU profile of the measured loop). Not part of
 * `npm run bench`. `UNIVERSE=market` simulates the 428-asset market (as `serve`'s default) instead of the
 * 35-asset registry: about a minute of CPU to start.
 *
 * - `<op>` (price, read, funding, rank, ...): through the embedded library and the real simulated planes.
 * - `pipeline`: `handle` alone with the deterministic test plane's `price` (what the pipeline itself costs).
 */
import { writeFileSync } from "node:fs"
import { Session } from "node:inspector/promises"
import { type ApiRequest, handle, type PipelineServices } from "@market-data/core"
import { createMarketData } from "@market-data/embedded"
import { type AppConfig, DefaultSimulatedCompanies, layerLogging, openService } from "@market-data/infra"
import { type Context, Effect, Scope } from "effect"
import { makeTestPlane } from "../core/test/support/TestPlane.ts"

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
  if (op === "pipeline") {
    const config: AppConfig = {
      host: "127.0.0.1",
      port: 0,
      store: { _tag: "Memory" },
      dataDir: "./.market-data",
      poolSize: 1,
      feed: "simulated",
      seed: 1,
      simulatedCompanies: DefaultSimulatedCompanies,
      allowedOrigins: [],
      bootstrapKey: key,
      bootstrapCredits: 1_000_000_000,
      rateLimitPerMinute: 1_000_000_000,
      logLevel: "None",
      logFormat: "json"
    }
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
process.stdout.write(
  `${op}: ${((ms * 1000) / n).toFixed(1)} us/request wall, ${((cpu.user + cpu.system) / n).toFixed(1)} us CPU\n`
)
await close()
