/**
 * `node bench/pglite-money.ts [seconds] [connections] [rounds]`: the paid path on the embedded PGlite store in
 * process (no HTTP), with group commit (`DATABASE_BATCH_MAX=64`, the default) and without it
 * (`DATABASE_BATCH_MAX=1`), in alternating rounds. Each service is `openService` on its own PGlite data folder in
 * a temporary directory, with the deterministic test plane's `price` (what the money path costs, not a plane), a
 * paid key without an Idempotency-Key (one `md_charge` a request) and, with `IDEM=1`, a fresh Idempotency-Key a
 * request (`md_admit` and `md_finish`). `connections` loops call at once for `seconds`; printed per round: requests
 * per second, CPU per request of this process (`process.cpuUsage`), latency p50 / p99, and statements per request
 * (the store's own count). `ONLY=on` or `ONLY=off` runs one of the two (to profile it with `node --cpu-prof`).
 * Not part of `npm run bench`.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { type ApiRequest, handle, type PipelineServices } from "@market-data/core"
import { layerLogging, openService } from "@market-data/infra"
import { type Context, Effect, Exit, Scope } from "effect"
import { makeTestPlane } from "../core/test/support/TestPlane.ts"
import { inProcessConfig } from "./process.ts"

const seconds = Number(process.argv[2] ?? 5)
const connections = Number(process.argv[3] ?? 10)
const rounds = Number(process.argv[4] ?? 3)
const idempotent = process.env.IDEM === "1"
const key = `mdk_${"Micro".repeat(6)}XY`

interface Opened {
  readonly name: string
  readonly run: <A>(effect: Effect.Effect<A, never, PipelineServices>) => Promise<A>
  readonly statements: () => number
  readonly close: () => Promise<void>
}

const open = async (name: string, maxBatch: number): Promise<Opened> => {
  const dir = mkdtempSync(join(tmpdir(), "pglite-money-"))
  const config = inProcessConfig(key, {
    store: { _tag: "Embedded", dir },
    dataDir: dir,
    batch: { maxBatch, windowMs: Number(process.env.WINDOW_MS ?? 1) }
  })
  const scope = Effect.runSync(Scope.make())
  const { context, statements } = await Effect.runPromise(
    Effect.gen(function* () {
      const plane = yield* makeTestPlane()
      const service = yield* openService(config, { handlerSets: [plane.handlers], withPlanes: false })
      return { context: service.context, statements: service.stores.database?.statements ?? (() => Number.NaN) }
    }).pipe(Scope.provide(scope), Effect.provide(layerLogging(config)))
  )
  return {
    name,
    run: Effect.runPromiseWith(context as Context.Context<PipelineServices>),
    statements,
    close: async () => {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

let sequence = 0
const request = (): ApiRequest => ({
  operation: "price",
  params: [["id", "crypto:bitcoin"]],
  authorization: [`Bearer ${key}`],
  idempotencyKey: idempotent ? [`k-${sequence++}`] : [],
  client: "127.0.0.1"
})

const round = async (s: Opened) => {
  const latencies: Array<number> = []
  const until = performance.now() + seconds * 1000
  const st0 = s.statements()
  const c0 = process.cpuUsage()
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until) {
        // A connection's next request arrives when its last answer is out, and is taken up in a later macrotask
        // (as a new HTTP request is): its latency counts that wait too.
        const t = performance.now()
        await new Promise((r) => setImmediate(r))
        const answer = await s.run(handle(request()))
        if (answer.outcome._tag !== "Json") throw new Error(`${s.name}: answered ${answer.outcome._tag}`)
        latencies.push(performance.now() - t)
      }
    })
  )
  const wall = performance.now() - t0
  const cpu = process.cpuUsage(c0)
  const n = latencies.length
  latencies.sort((a, b) => a - b)
  const q = (p: number) => (latencies[Math.min(n - 1, Math.floor(p * n))] as number).toFixed(2)
  process.stdout.write(
    `${s.name.padEnd(18)} ${String(Math.round((n * 1000) / wall)).padStart(6)} req/s, ${((cpu.user + cpu.system) / n).toFixed(0).padStart(5)} us CPU/request, p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, ${((s.statements() - st0) / n).toFixed(3)} statements/request, load ${loadavg()[0]?.toFixed(2)}\n`
  )
}

// `ONLY=on` or `ONLY=off`: one of the two (to profile it alone).
const only = process.env.ONLY
const services = [
  ...(only === "on" ? [] : [await open("group commit off", 1)]),
  ...(only === "off" ? [] : [await open("group commit", 64)])
]
// Warm each: the key cache, PGlite's plan caches, V8's code.
for (const s of services) {
  for (let i = 0; i < 300; i++) await s.run(handle(request()))
}
for (let r = 0; r < rounds; r++) {
  for (const s of r % 2 === 0 ? services : [...services].reverse()) await round(s)
}
for (const s of services) await s.close()
