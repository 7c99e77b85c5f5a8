/**
 * The simulated market at production scale on the embedded default's kept history (issue 16 points 5 and 6):
 * `node bench/simulated-history.ts` opens the simulated planes (`MARKET_DATA_SIM_UNIVERSE=market` unless
 * `BENCH_UNIVERSE=registry`) progressively, as `serve` does, on a fresh data folder and then on the same folder
 * reopened, each in its own process, and reports per phase: when the first 200 assets were ready, when every
 * asset's baselines were warm, CPU time, the steps generated and the kept bytes read and written, and after
 * warm-up (after a full garbage collection) `process.memoryUsage()`: RSS, V8 heap, array buffers, and the
 * market store's own array bytes. The account and equity stores are in memory (PGlite's own cost is the
 * startup bench's, `BENCH_ONLY=startup`); the data folder is a temporary one, deleted at the end.
 * `BENCH_PHASES=fresh` runs the fresh phase only.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { openPlanes, openStores, SIMULATED_HISTORY_FOLDER } from "@market-data/infra"
import { Effect, References } from "effect"

const ROOT = join(import.meta.dirname, "..")
const MB = 1024 * 1024

interface Phase {
  readonly assets: number
  readonly firstReadyMs: number
  readonly first200Ms: number
  readonly warmMs: number
  readonly cpuMs: number
  readonly generatedSteps: number
  readonly keptAssets: number
  readonly keptReadMb: number
  readonly keptWrittenMb: number
  readonly keptReadMs: number
  readonly keptWriteMs: number
  readonly rssMb: number
  readonly heapUsedMb: number
  readonly arrayBuffersMb: number
  readonly storeArraysMb: number | null
}

const folderMb = (dir: string): number => readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0) / MB

/** One phase, in this process: open, wait until every asset is ready, measure. */
const phase = async (dir: string): Promise<Phase> => {
  const t0 = performance.now()
  const cpu0 = process.cpuUsage()
  const config = {
    host: "127.0.0.1",
    port: 0,
    store: { _tag: "Embedded", dir },
    dataDir: dir,
    poolSize: 1,
    feed: "simulated",
    seed: 1,
    simulatedUniverse: process.env.BENCH_UNIVERSE === "registry" ? "registry" : "market",
    simulatedCompanies: 0,
    allowedOrigins: [],
    bootstrapKey: undefined,
    bootstrapCredits: 0,
    rateLimitPerMinute: 60,
    logLevel: "None",
    logFormat: "json"
  } as const
  return Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const opened = yield* openPlanes(config, yield* openStores({ ...config, store: { _tag: "Memory" } }), {
          progressive: true
        })
        let firstReadyMs = Number.NaN
        let first200Ms = Number.NaN
        for (;;) {
          const missing = opened.missing()
          const ready = Number(/(\d+) of \d+ assets ready/.exec(missing[0] ?? "")?.[1] ?? 0)
          if (Number.isNaN(firstReadyMs) && (ready >= 1 || missing.length === 0)) firstReadyMs = performance.now() - t0
          if (Number.isNaN(first200Ms) && (ready >= 200 || missing.length === 0)) first200Ms = performance.now() - t0
          if (missing.length === 0) break
          yield* Effect.sleep(20)
        }
        const warmMs = performance.now() - t0
        const cpu = process.cpuUsage(cpu0)
        const report = opened.simulatedReport?.()
        globalThis.gc?.()
        const memory = process.memoryUsage()
        const store = opened.market as { bytes?: () => number }
        return {
          assets: report?.assets ?? 0,
          firstReadyMs: Math.round(firstReadyMs),
          first200Ms: Math.round(first200Ms),
          warmMs: Math.round(warmMs),
          cpuMs: Math.round((cpu.user + cpu.system) / 1000),
          generatedSteps: report?.generatedSteps ?? 0,
          keptAssets: report?.keptAssets ?? 0,
          keptReadMb: Math.round((report?.historyBytesRead ?? 0) / MB),
          keptWrittenMb: Math.round((report?.historyBytesWritten ?? 0) / MB),
          keptReadMs: report?.historyReadMs ?? 0,
          keptWriteMs: report?.historyWriteMs ?? 0,
          rssMb: Math.round(memory.rss / MB),
          heapUsedMb: Math.round(memory.heapUsed / MB),
          arrayBuffersMb: Math.round(memory.arrayBuffers / MB),
          storeArraysMb: store.bytes === undefined ? null : Math.round(store.bytes() / MB)
        }
      })
    ).pipe(Effect.provideService(References.MinimumLogLevel, "None"))
  )
}

if (process.argv[2] === "--phase") {
  const result = await phase(process.argv[3] as string)
  process.stdout.write(`${JSON.stringify(result)}\n`)
} else {
  const dir = mkdtempSync(join(tmpdir(), "md-simhistory-bench-"))
  try {
    // BENCH_PHASES=fresh measures only the fresh folder.
    for (const name of process.env.BENCH_PHASES === "fresh" ? ["fresh"] : ["fresh", "reopened"]) {
      // `npm start`'s Node flags, and --expose-gc for a measurement after a full collection.
      const out = execFileSync(
        process.execPath,
        ["--max-semi-space-size=8", "--expose-gc", "bench/simulated-history.ts", "--phase", dir],
        { cwd: ROOT, encoding: "utf8", env: { ...process.env, MALLOC_ARENA_MAX: "2" }, maxBuffer: 16 * MB }
      )
      const p = JSON.parse(out.trim().split("\n").at(-1) as string) as Phase
      process.stdout.write(
        `simulated history, ${name.padEnd(8)}: ${p.assets} assets; first asset ready (Bitcoin) ${p.firstReadyMs} ms, 200 ready ${p.first200Ms} ms, all warm ${p.warmMs} ms, ${p.cpuMs} ms CPU; ${p.generatedSteps} asset-steps generated, ${p.keptAssets} assets read back (${p.keptReadMb} MB read in ${p.keptReadMs} ms, ${p.keptWrittenMb} MB written in ${p.keptWriteMs} ms); after warm-up RSS ${p.rssMb} MB, heap ${p.heapUsedMb} MB, array buffers ${p.arrayBuffersMb} MB (market store ${p.storeArraysMb ?? "?"} MB)\n`
      )
    }
    const kept = join(dir, SIMULATED_HISTORY_FOLDER)
    process.stdout.write(`kept history folder: ${Math.round(folderMb(kept))} MB in ${readdirSync(kept).length} files\n`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
