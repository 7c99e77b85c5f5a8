/**
 * The simulated default at production scale (issue 16 point 6): the embedded default started the way `npm start`
 * starts it (`startCommand`: the same Node flags and environment), with `MARKET_DATA_SIM_UNIVERSE=market` (the
 * 400-odd simulated assets of the venues' listings), measured against its targets:
 *
 * - a first start on an empty data folder, then the same folder reopened: when the server listens, its first 200
 *   of the root document and of a paid `read` (bitcoin), when `/readyz` first answers 200, and when the baselines
 *   are warm (the log line "crypto baselines warm", and the first 200 of `rank`, which answers only once every
 *   asset is sampled); the server's RSS when warm and five seconds later, and its peak (VmHWM);
 *   targets: first start warm within 90 s; reopened first 200 within 3 s, warm within 30 s; RSS <= 1.0 GB;
 * - `rank limit=50` over the whole core tier at 10 connections (autocannon): p99 <= 20 ms;
 * - paid single-asset `read` throughput against the 35-asset `registry` universe, both servers up at once and
 *   measured in alternating rounds (so the machine's drift falls on both): within 10 %.
 *
 * The load runs on the reopened embedded store (PGlite), and again on `DATABASE_URL=memory` (the plane without
 * the store's per-request write), unless `BENCH_SCALE_STORES` names one (`pglite`, `memory`). `BENCH_SECONDS` per
 * measured window (default 10), `BENCH_SCALE_ROUNDS` alternating `read` rounds (default 3). No PostgreSQL needed:
 * `BENCH_ONLY=scale node bench/run.ts` runs this alone; `npm run bench` runs it after the rest.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import autocannon from "autocannon"
import {
  cpuMsOf,
  cpuSecondsOf,
  describeStart,
  KEY,
  memoryOf,
  ROOT,
  type StartCommand,
  startCommand
} from "./process.ts"

const DURATION = Number(process.env.BENCH_SECONDS ?? 10)
const ROUNDS = Number(process.env.BENCH_SCALE_ROUNDS ?? 3)
const PHASE_TIMEOUT_MS = Number(process.env.BENCH_SCALE_TIMEOUT_SECONDS ?? 900) * 1000
const READ_CONNECTIONS = 50
const RANK_CONNECTIONS = 10

/** Issue 16 point 6. */
export const SCALE_TARGETS = {
  freshWarmMs: 90_000,
  reopenedFirst200Ms: 3_000,
  reopenedWarmMs: 30_000,
  rssMb: 1024,
  rankP99Ms: 20,
  readRatio: 0.9
} as const

const AUTH = { authorization: `Bearer ${KEY}` }

type Universe = "market" | "registry"

interface Server {
  readonly child: ChildProcess
  readonly url: Promise<string>
  /** Resolves with the ms since launch at which the log said "crypto baselines warm". */
  readonly warmLog: Promise<number>
  readonly since: () => number
  readonly stderr: () => string
}

/** Starts `serve` as `npm start` does, with a universe and a store; logs at info as JSON, to see the warm line. */
const launch = (command: StartCommand, universe: Universe, store: Record<string, string>): Server => {
  const t0 = performance.now()
  const since = () => Math.round(performance.now() - t0)
  const child = spawn(process.execPath, [...command.flags, command.script, "serve"], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...command.env,
      ...store,
      PORT: "0",
      MARKET_DATA_SIM_UNIVERSE: universe,
      MARKET_DATA_BOOTSTRAP_KEY: KEY,
      MARKET_DATA_BOOTSTRAP_CREDITS: "1000000000",
      MARKET_DATA_RATE_LIMIT_PER_MINUTE: "100000000",
      LOG_LEVEL: "info",
      LOG_FORMAT: "json"
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let tail = ""
  let err = ""
  const url = Promise.withResolvers<string>()
  const warmLog = Promise.withResolvers<number>()
  // Neither promise need be awaited (a server that exits before warm fails the phase through `poll`).
  url.promise.catch(() => undefined)
  warmLog.promise.catch(() => undefined)
  let listening = false
  let warm = false
  child.stdout?.on("data", (d) => {
    // Only the last few KB are kept: a line is searched for as it arrives, never the whole log.
    tail = (tail + d).slice(-8192)
    if (!listening) {
      const m = /listening on (http:\/\/[^/\s]+)/.exec(tail)
      if (m) {
        listening = true
        url.resolve(m[1] as string)
      }
    }
    if (!warm && tail.includes("crypto baselines warm")) {
      warm = true
      warmLog.resolve(since())
    }
  })
  child.stderr?.on("data", (d) => {
    err = (err + d).slice(-8192)
  })
  child.on("exit", (code, signal) => {
    const e = new Error(`serve (${universe}) exited ${code ?? signal}: ${err}`)
    url.reject(e)
    warmLog.reject(e)
  })
  return { child, url: url.promise, warmLog: warmLog.promise, since, stderr: () => err }
}

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000)
    child.on("exit", () => {
      clearTimeout(timer)
      resolve()
    })
    child.kill("SIGTERM")
  })

const statusOf = (url: string, headers: Record<string, string> = {}) =>
  fetch(url, { headers }).then(
    async (r) => {
      await r.arrayBuffer()
      return r.status
    },
    () => 0
  )

/** Polls until `url` answers 200: the ms since the server's launch, and the statuses seen before it. */
const first200 = async (
  server: Server,
  url: string,
  headers: Record<string, string>,
  everyMs: number
): Promise<{ ms: number; before: Record<string, number> }> => {
  const before: Record<string, number> = {}
  for (;;) {
    const status = await statusOf(url, headers)
    if (status === 200) return { ms: server.since(), before }
    before[String(status)] = (before[String(status)] ?? 0) + 1
    if (server.child.exitCode !== null || server.child.signalCode !== null) {
      throw new Error(`the server exited before ${url} answered 200: ${server.stderr()}`)
    }
    if (server.since() > PHASE_TIMEOUT_MS) throw new Error(`${url}: no 200 within ${PHASE_TIMEOUT_MS} ms`)
    await new Promise((r) => setTimeout(r, everyMs))
  }
}

export interface ScalePhase {
  listening_ms: number
  root_200_ms: number
  read_200_ms: number
  /** Statuses the paid `read` answered before its first 200. */
  read_before_200: Record<string, number>
  readyz_200_ms: number
  warm_log_ms: number
  rank_200_ms: number
  /** max(warm log, first `rank` 200): every asset sampled and `rank` answering over the whole core tier. */
  warm_ms: number
  rss_at_read_200_mb: number
  rss_warm_mb: number
  rss_settled_mb: number
  rss_peak_mb: number
  /** The server's CPU seconds (user + system) when warm: steadier than wall time on a shared machine. */
  cpu_warm_s: number
  /** The server's CPU use (% of one core) over the five idle seconds after warm: what the ticker costs. */
  idle_cpu_pct: number
  /** The machine's one-minute load average when warm (other work on the machine inflates every wall time). */
  load_1m: number
}

/** One start, measured up to warm and five seconds past it; the server is left running. */
const measureStart = async (server: Server): Promise<ScalePhase> => {
  const url = await Promise.race([
    server.url,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error("the server did not listen in time")), PHASE_TIMEOUT_MS)
    )
  ])
  const listening_ms = server.since()
  const [root, read, readyz, rank, warmLog] = await Promise.all([
    first200(server, `${url}/api/v1`, {}, 20),
    first200(server, `${url}/api/v1/read?id=crypto:bitcoin`, AUTH, 20).then((r) => ({
      ...r,
      rss: memoryOf(server.child.pid).rss
    })),
    first200(server, `${url}/readyz`, {}, 100),
    first200(server, `${url}/api/v1/rank?limit=50`, AUTH, 100),
    server.warmLog
  ])
  const warm = memoryOf(server.child.pid)
  const cpu_warm_s = cpuSecondsOf(server.child.pid)
  await new Promise((r) => setTimeout(r, 5_000))
  const settled = memoryOf(server.child.pid)
  const idle_cpu_pct = Math.round(((cpuSecondsOf(server.child.pid) - cpu_warm_s) / 5) * 100)
  return {
    listening_ms,
    root_200_ms: root.ms,
    read_200_ms: read.ms,
    read_before_200: read.before,
    readyz_200_ms: readyz.ms,
    warm_log_ms: warmLog,
    rank_200_ms: rank.ms,
    warm_ms: Math.max(warmLog, rank.ms),
    rss_at_read_200_mb: read.rss,
    rss_warm_mb: warm.rss,
    rss_settled_mb: settled.rss,
    rss_peak_mb: settled.peak,
    cpu_warm_s,
    idle_cpu_pct,
    load_1m: Math.round((loadavg()[0] as number) * 100) / 100
  }
}

interface Coverage {
  crypto_assets: number
  by_tier: Record<string, number>
  rank_coverage: unknown
}

/** Counts the crypto assets `coverage` lists (every page) and reads `rank`'s coverage block. */
const coverageOf = async (url: string): Promise<Coverage> => {
  const by_tier: Record<string, number> = {}
  let crypto_assets = 0
  let cursor: string | null = null
  do {
    const page: string = `${url}/api/v1/coverage?plane=crypto&limit=500${cursor === null ? "" : `&cursor=${cursor}`}`
    const body = (await fetch(page, { headers: AUTH }).then((r) => r.json())) as {
      data: { rows: Array<{ tier: string }>; next_cursor: string | null }
    }
    for (const row of body.data.rows) {
      crypto_assets++
      by_tier[row.tier] = (by_tier[row.tier] ?? 0) + 1
    }
    cursor = body.data.next_cursor
  } while (cursor !== null)
  const rank = (await fetch(`${url}/api/v1/rank?limit=50`, { headers: AUTH }).then((r) => r.json())) as {
    data: { coverage: unknown }
  }
  return { crypto_assets, by_tier, rank_coverage: rank.data.coverage }
}

interface Load {
  rps: number
  p50: number
  p99: number
  non2xx: number
  /**
   * The server's CPU (user + system, all its threads) per 2xx answer over the measured window, in microseconds:
   * what the machine's other load moves far less than req/s (it includes the server's background work then).
   */
  cpu_us_per_2xx: number
  /** The machine's one-minute load average at the end of the window. */
  load_1m: number
}

const load = async (url: string, connections: number, server: Server): Promise<Load> => {
  const request = { url, headers: AUTH, connections }
  await autocannon({ ...request, duration: 2 })
  const cpuBefore = cpuMsOf(server.child.pid)
  const r = await autocannon({ ...request, duration: DURATION })
  const cpuMs = cpuMsOf(server.child.pid) - cpuBefore
  return {
    rps: Math.round(r.requests.average),
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx + r.errors + r.timeouts,
    cpu_us_per_2xx: r["2xx"] > 0 ? Math.round((cpuMs * 1000) / r["2xx"]) : Number.NaN,
    load_1m: Math.round((loadavg()[0] as number) * 100) / 100
  }
}

const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2
}

export interface ScaleLoad {
  store: "pglite" | "memory"
  coverage: Coverage
  rank_market: Load
  rank_registry: Load
  read_market: Array<Load>
  read_registry: Array<Load>
  read_ratio: number
  rss_after_load_mb: number
  rss_peak_mb: number
  /** The memory store's start (no data folder: every start is a first one). */
  start?: ScalePhase
}

/**
 * Load on a warm market server and a registry server up beside it: `rank` on each, then `read` in alternating
 * rounds (registry, market, registry, ...), each round's warm-up included.
 */
const measureLoad = async (
  store: "pglite" | "memory",
  market: Server,
  registry: Server,
  print: (line: string) => void
): Promise<ScaleLoad> => {
  const [m, r] = await Promise.all([market.url, registry.url])
  await Promise.all([first200(registry, `${r}/api/v1/rank?limit=50`, AUTH, 100), registry.warmLog])
  const coverage = await coverageOf(m)
  print(
    `scale (${store}): coverage lists ${coverage.crypto_assets} crypto assets ${JSON.stringify(coverage.by_tier)}; rank coverage ${JSON.stringify(coverage.rank_coverage)}\n`
  )
  const rank_market = await load(`${m}/api/v1/rank?limit=50`, RANK_CONNECTIONS, market)
  print(
    `scale (${store}): rank limit=50, 428 assets, ${RANK_CONNECTIONS} connections: ${rank_market.rps} req/s, p50 ${rank_market.p50} ms, p99 ${rank_market.p99} ms, non-2xx ${rank_market.non2xx}, load average ${rank_market.load_1m}\n`
  )
  const rank_registry = await load(`${r}/api/v1/rank?limit=50`, RANK_CONNECTIONS, registry)
  print(
    `scale (${store}): rank limit=50, 35 assets, ${RANK_CONNECTIONS} connections: ${rank_registry.rps} req/s, p50 ${rank_registry.p50} ms, p99 ${rank_registry.p99} ms, non-2xx ${rank_registry.non2xx}\n`
  )
  const read_market: Array<Load> = []
  const read_registry: Array<Load> = []
  for (let round = 1; round <= ROUNDS; round++) {
    const a = await load(`${r}/api/v1/read?id=crypto:bitcoin`, READ_CONNECTIONS, registry)
    read_registry.push(a)
    const b = await load(`${m}/api/v1/read?id=crypto:bitcoin`, READ_CONNECTIONS, market)
    read_market.push(b)
    print(
      `scale (${store}): read round ${round}: 35 assets ${a.rps} req/s (p99 ${a.p99} ms, ${a.cpu_us_per_2xx} us of server CPU an answer), 428 assets ${b.rps} req/s (p99 ${b.p99} ms, ${b.cpu_us_per_2xx} us an answer), non-2xx ${a.non2xx + b.non2xx}, load average ${b.load_1m}\n`
    )
  }
  const read_ratio =
    Math.round((median(read_market.map((x) => x.rps)) / median(read_registry.map((x) => x.rps))) * 100) / 100
  const memory = memoryOf(market.child.pid)
  return {
    store,
    coverage,
    rank_market,
    rank_registry,
    read_market,
    read_registry,
    read_ratio,
    rss_after_load_mb: memory.rss,
    rss_peak_mb: memory.peak
  }
}

export interface ScaleResult {
  command: string
  load_average: ReadonlyArray<number>
  load_average_after: ReadonlyArray<number>
  seconds: number
  rounds: number
  fresh: ScalePhase
  reopened: ScalePhase
  loads: Array<ScaleLoad>
  targets: Record<string, { measured: number; target: string; met: boolean }>
  /** Every load scenario answered 2xx only. */
  clean: boolean
}

const phaseLine = (label: string, p: ScalePhase) => {
  const before = Object.entries(p.read_before_200)
    .map(([status, n]) => `${n}x ${status === "0" ? "refused" : status}`)
    .join(", ")
  return `scale, ${label.padEnd(24)}: listening ${p.listening_ms} ms, first 200 /api/v1 ${p.root_200_ms} ms, first 200 paid read ${p.read_200_ms} ms${before === "" ? "" : ` (before it: ${before})`}, /readyz 200 ${p.readyz_200_ms} ms, warm log ${p.warm_log_ms} ms, first rank 200 ${p.rank_200_ms} ms; RSS ${p.rss_at_read_200_mb} MB at the read 200, ${p.rss_warm_mb} MB warm, ${p.rss_settled_mb} MB 5 s later, peak ${p.rss_peak_mb} MB; ${p.cpu_warm_s} s of CPU when warm, ${p.idle_cpu_pct} % of a core idle after; load average ${p.load_1m}\n`
}

export const scaleBench = async (print: (line: string) => void): Promise<ScaleResult> => {
  const command = startCommand()
  const stores = (process.env.BENCH_SCALE_STORES ?? "pglite,memory").split(",").map((s) => s.trim())
  const load_average = loadavg().map((x) => Math.round(x * 100) / 100)
  print(
    `scale: ${describeStart(command, { MARKET_DATA_SIM_UNIVERSE: "market" })}; load average ${load_average.join(" ")}\n`
  )
  const dir = mkdtempSync(join(tmpdir(), "md-bench-scale-"))
  const registryDir = mkdtempSync(join(tmpdir(), "md-bench-scale-registry-"))
  const running: Array<ChildProcess> = []
  const loads: Array<ScaleLoad> = []
  let fresh: ScalePhase
  let reopened: ScalePhase
  try {
    const first = launch(command, "market", { MARKET_DATA_DIR: dir })
    running.push(first.child)
    fresh = await measureStart(first)
    print(phaseLine("embedded, empty folder", fresh))
    await stop(first.child)

    const second = launch(command, "market", { MARKET_DATA_DIR: dir })
    running.push(second.child)
    reopened = await measureStart(second)
    print(phaseLine("embedded, reopened", reopened))
    if (stores.includes("pglite")) {
      const registry = launch(command, "registry", { MARKET_DATA_DIR: registryDir })
      running.push(registry.child)
      loads.push(await measureLoad("pglite", second, registry, print))
      await stop(registry.child)
    }
    await stop(second.child)

    if (stores.includes("memory")) {
      const market = launch(command, "market", { DATABASE_URL: "memory" })
      running.push(market.child)
      const start = await measureStart(market)
      print(phaseLine("memory store", start))
      const registry = launch(command, "registry", { DATABASE_URL: "memory" })
      running.push(registry.child)
      loads.push({ ...(await measureLoad("memory", market, registry, print)), start })
      await stop(registry.child)
      await stop(market.child)
    }
  } finally {
    await Promise.all(running.map(stop))
    rmSync(dir, { recursive: true, force: true })
    rmSync(registryDir, { recursive: true, force: true })
  }

  const embedded = loads.find((l) => l.store === "pglite") ?? loads[0]
  // The target is the embedded default's: its two starts and the load on it (the memory store is reported beside).
  const rssMax = Math.max(
    fresh.rss_settled_mb,
    reopened.rss_settled_mb,
    ...loads.filter((l) => l.store === "pglite").map((l) => l.rss_after_load_mb)
  )
  const targets: ScaleResult["targets"] = {
    "empty folder: baselines warm": {
      measured: fresh.warm_ms,
      target: `<= ${SCALE_TARGETS.freshWarmMs} ms`,
      met: fresh.warm_ms <= SCALE_TARGETS.freshWarmMs
    },
    "reopened: first 200 (paid read)": {
      measured: reopened.read_200_ms,
      target: `<= ${SCALE_TARGETS.reopenedFirst200Ms} ms`,
      met: reopened.read_200_ms <= SCALE_TARGETS.reopenedFirst200Ms
    },
    "reopened: baselines warm": {
      measured: reopened.warm_ms,
      target: `<= ${SCALE_TARGETS.reopenedWarmMs} ms`,
      met: reopened.warm_ms <= SCALE_TARGETS.reopenedWarmMs
    },
    "embedded: server RSS after warm-up (largest, MB)": {
      measured: rssMax,
      target: `<= ${SCALE_TARGETS.rssMb} MB`,
      met: rssMax <= SCALE_TARGETS.rssMb
    }
  }
  for (const l of loads) {
    targets[`rank limit=50 p99, 10 connections (${l.store}, ms)`] = {
      measured: l.rank_market.p99,
      target: `<= ${SCALE_TARGETS.rankP99Ms} ms`,
      met: l.rank_market.p99 <= SCALE_TARGETS.rankP99Ms
    }
    targets[`read 428 / 35 assets (${l.store}, median of ${ROUNDS})`] = {
      measured: l.read_ratio,
      target: `>= ${SCALE_TARGETS.readRatio}`,
      met: l.read_ratio >= SCALE_TARGETS.readRatio
    }
  }
  const clean = loads.every((l) =>
    [l.rank_market, l.rank_registry, ...l.read_market, ...l.read_registry].every((x) => x.non2xx === 0)
  )
  const load_average_after = loadavg().map((x) => Math.round(x * 100) / 100)

  print(
    `\nscale, side by side (load average ${load_average.join(" ")} before, ${load_average_after.join(" ")} after):\n`
  )
  const row = (what: string, a: string | number, b: string | number) =>
    print(`  ${what.padEnd(34)} ${String(a).padStart(12)} ${String(b).padStart(12)}\n`)
  row("", "empty folder", "reopened")
  row("listening (ms)", fresh.listening_ms, reopened.listening_ms)
  row("first 200 /api/v1 (ms)", fresh.root_200_ms, reopened.root_200_ms)
  row("first 200 paid read (ms)", fresh.read_200_ms, reopened.read_200_ms)
  row("/readyz 200 (ms)", fresh.readyz_200_ms, reopened.readyz_200_ms)
  row("baselines warm (ms)", fresh.warm_ms, reopened.warm_ms)
  row(
    "RSS warm / +5 s (MB)",
    `${fresh.rss_warm_mb} / ${fresh.rss_settled_mb}`,
    `${reopened.rss_warm_mb} / ${reopened.rss_settled_mb}`
  )
  row("peak RSS, VmHWM (MB)", fresh.rss_peak_mb, reopened.rss_peak_mb)
  row("server CPU when warm (s)", fresh.cpu_warm_s, reopened.cpu_warm_s)
  row("idle CPU after warm (% of a core)", fresh.idle_cpu_pct, reopened.idle_cpu_pct)
  for (const l of loads) {
    print(`\n  load on ${l.store}${l === embedded ? " (the embedded default)" : ""}:\n`)
    row("", "428 assets", "35 assets")
    row("rank limit=50 req/s", l.rank_market.rps, l.rank_registry.rps)
    row(
      "rank limit=50 p50 / p99 (ms)",
      `${l.rank_market.p50} / ${l.rank_market.p99}`,
      `${l.rank_registry.p50} / ${l.rank_registry.p99}`
    )
    row("read req/s (median)", median(l.read_market.map((x) => x.rps)), median(l.read_registry.map((x) => x.rps)))
    row(
      "read server CPU/answer (us, median)",
      median(l.read_market.map((x) => x.cpu_us_per_2xx)),
      median(l.read_registry.map((x) => x.cpu_us_per_2xx))
    )
    row("RSS after the load / peak (MB)", `${l.rss_after_load_mb} / ${l.rss_peak_mb}`, "")
  }
  print("\nscale targets (issue 16 point 6):\n")
  for (const [what, t] of Object.entries(targets)) {
    print(
      `  ${what.padEnd(48)} ${String(t.measured).padStart(8)}  target ${t.target.padEnd(12)} ${t.met ? "met" : "NOT met"}\n`
    )
  }
  return {
    command: describeStart(command, { MARKET_DATA_SIM_UNIVERSE: "market" }),
    load_average,
    load_average_after,
    seconds: DURATION,
    rounds: ROUNDS,
    fresh,
    reopened,
    loads,
    targets,
    clean
  }
}
