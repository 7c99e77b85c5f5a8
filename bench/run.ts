/**
 * `npm run bench`: load from this process with autocannon against servers in their own processes, side by
 * side in one run: the anchors first, then the service. Prints a table and writes JSON to bench/results/.
 *
 * Needs server PostgreSQL (BENCH_DATABASE_URL, default the machine's postgres://postgres@127.0.0.1:5432/test).
 * The money scenarios on PostgreSQL use the deterministic test plane (its answers cost nothing to compute, so they
 * measure the pipeline and the store); the paid `read` on memory is measured on the service's own planes, with
 * the test plane as a second row, and on the embedded default; the data scenarios run the real service on the
 * simulated planes in memory. Keys
 * have their rate-limit policy raised for the run; every scenario reports its non-2xx count, which must be zero
 * (the 304 scenario counts its 304s there).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import autocannon from "autocannon"
import pg from "pg"
import { bulkBench } from "./bulk.ts"
import { listenBench } from "./listen.ts"
import { type MoneyBench, moneyBench } from "./money.ts"
import { KEY, memoryOf, ROOT, rssMb, type StartCommand, startCommand } from "./process.ts"
import { scaleBench } from "./scale.ts"
import { simulatedLoadBench } from "./simulated-load.ts"
import { streamsBench } from "./streams.ts"

const DB = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"
const DURATION = Number(process.env.BENCH_SECONDS ?? 10)
const CONNECTIONS = 50

interface Started {
  readonly url: string
  /** The pattern's second group, when it has one (the metrics address of a `serve` startup line). */
  readonly second: string | undefined
  readonly child: ChildProcess
  readonly startedMs: number
}

const launch = (args: ReadonlyArray<string>, env: Record<string, string>, pattern: RegExp): Promise<Started> =>
  new Promise((resolve, reject) => {
    const t0 = performance.now()
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: "warn", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    let err = ""
    child.stdout?.on("data", (d) => {
      out += d
      const m = pattern.exec(out)
      if (m) resolve({ url: m[1] as string, second: m[2], child, startedMs: performance.now() - t0 })
    })
    child.stderr?.on("data", (d) => (err += d))
    child.on("exit", (code) => reject(new Error(`${args.join(" ")} exited ${code}: ${err}`)))
  })

const stop = (s: Started) =>
  new Promise<void>((resolve) => {
    if (s.child.exitCode !== null) return resolve()
    s.child.on("exit", () => resolve())
    s.child.kill("SIGTERM")
  })

interface Row {
  scenario: string
  anchor: string | null
  rps: number
  p50: number
  p99: number
  non2xx: number
  rssMb: number
  ratio: number | null
}

const load = async (url: string, headers: Record<string, string> = {}, post?: string) => {
  const request = post === undefined ? { url, headers } : { url, headers, method: "POST" as const, body: post }
  // Warm-up, then the measured run.
  await autocannon({ ...request, connections: CONNECTIONS, duration: 2 })
  return autocannon({ ...request, connections: CONNECTIONS, duration: DURATION })
}

/**
 * Waits until the service on the simulated planes is fully warm: `rank` answers 200 only once every asset's
 * history is generated and its baselines sampled; then a few seconds more for what runs in the background.
 */
const untilWarm = async (url: string, headers: Record<string, string>) => {
  const deadline = Date.now() + 180_000
  for (;;) {
    const status = await fetch(`${url}/api/v1/rank?limit=1`, { headers }).then(
      (r) => r.status,
      () => 0
    )
    if (status === 200) break
    if (Date.now() > deadline) throw new Error(`${url}: not warm after 180 s (rank answers ${status})`)
    await new Promise((r) => setTimeout(r, 250))
  }
  await new Promise((r) => setTimeout(r, 5_000))
}

/** MCP `tools/call price` as a JSON-RPC POST (the MCP endpoint is stateless; no session needed). */
const MCP_PRICE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name: "price", arguments: { id: "crypto:bitcoin" } }
})
const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" }

const main = async () => {
  const rows: Array<Row> = []
  const record = (scenario: string, anchor: string | null, r: autocannon.Result, pid: number | undefined) => {
    const base = anchor === null ? undefined : rows.find((x) => x.scenario === anchor)
    const row: Row = {
      scenario,
      anchor,
      rps: Math.round(r.requests.average),
      p50: r.latency.p50,
      p99: r.latency.p99,
      non2xx: r.non2xx + r.errors,
      rssMb: rssMb(pid),
      ratio: base === undefined ? null : Math.round((r.requests.average / base.rps) * 100) / 100
    }
    rows.push(row)
    process.stdout.write(
      `${scenario.padEnd(34)} ${String(row.rps).padStart(7)} req/s  p50 ${row.p50} ms  p99 ${row.p99} ms  non-2xx ${row.non2xx}  rss ${row.rssMb} MB${row.ratio === null ? "" : `  ${row.ratio}x ${anchor}`}\n`
    )
  }

  // A schema of its own on server PostgreSQL.
  const schema = `md_bench_${process.pid}`
  const admin = new pg.Client({ connectionString: DB })
  await admin.connect()
  await admin.query(`drop schema if exists ${schema} cascade`)
  await admin.query(`create schema ${schema}`)
  const url = new URL(DB)
  url.searchParams.set("options", `-c search_path=${schema}`)
  const scoped = url.toString()

  try {
    const bare = await launch(["bench/anchors.ts", "bare"], {}, /listening on (\S+)/)
    record("anchor: bare node:http", null, await load(`${bare.url}/`), bare.child.pid)
    await stop(bare)

    const write = await launch(["bench/anchors.ts", "write"], { DATABASE_URL: scoped }, /listening on (\S+)/)
    record("anchor: node:http + 1 UPDATE", null, await load(`${write.url}/`), write.child.pid)
    await stop(write)

    const env = {
      PORT: "0",
      MARKET_DATA_BOOTSTRAP_KEY: KEY,
      MARKET_DATA_BOOTSTRAP_CREDITS: "1000000000",
      MARKET_DATA_RATE_LIMIT_PER_MINUTE: "100000000"
    }
    const auth = { authorization: `Bearer ${KEY}` }

    const memory = await launch(
      ["test/support/serve-test-plane.ts"],
      { ...env, DATABASE_URL: "memory" },
      /listening on (http:\/\/[^/\s]+)/
    )
    record(
      "service: root document (memory)",
      "anchor: bare node:http",
      await load(`${memory.url}/api/v1`),
      memory.child.pid
    )
    record(
      "service: paid price (memory)",
      "anchor: bare node:http",
      await load(`${memory.url}/api/v1/price?id=crypto:bitcoin`, auth),
      memory.child.pid
    )
    await stop(memory)

    // The real service on the simulated planes, in memory: the operations clients call.
    const planes = await launch(
      ["infra/src/bin.ts", "serve"],
      { ...env, DATABASE_URL: "memory" },
      /listening on (http:\/\/[^/\s]+)/
    )
    await untilWarm(planes.url, auth)
    const ids10 = [
      "bitcoin",
      "ethereum",
      "solana",
      "xrp",
      "dogecoin",
      "cardano",
      "avalanche",
      "chainlink",
      "litecoin",
      "polkadot"
    ]
      .map((slug) => `crypto:${slug}`)
      .join(",")
    for (const [scenario, path] of [
      ["service: read crypto (memory)", "/api/v1/read?id=crypto:bitcoin"],
      ["service: read batch of 10 (memory)", `/api/v1/read?ids=${ids10}`],
      ["service: funding (memory)", "/api/v1/funding?id=crypto:ethereum"],
      ["service: rank limit=50 (memory)", "/api/v1/rank?limit=50"],
      ["service: series limit=500 (memory)", "/api/v1/series?id=crypto:bitcoin&interval=15m&range=1mo&limit=500"],
      [
        "service: financials periods=20 (memory)",
        "/api/v1/financials?id=eq:9990001:ALDR&period_kind=quarter&periods=20"
      ]
    ] as const) {
      record(scenario, "anchor: bare node:http", await load(`${planes.url}${path}`, auth), planes.child.pid)
    }
    // MCP: the same paid `price`, as a tool call. A tool error would be a 200 too: check the answer first.
    const probe = await fetch(`${planes.url}/api/mcp`, {
      method: "POST",
      headers: { ...MCP_HEADERS, ...auth },
      body: MCP_PRICE
    }).then((r) => r.json() as Promise<{ result?: { isError?: boolean } }>)
    if (probe.result === undefined || probe.result.isError === true) {
      throw new Error(`MCP tools/call price did not succeed: ${JSON.stringify(probe).slice(0, 300)}`)
    }
    record(
      "service: MCP tools/call price (memory)",
      "anchor: bare node:http",
      await load(`${planes.url}/api/mcp`, { ...MCP_HEADERS, ...auth }, MCP_PRICE),
      planes.child.pid
    )
    await stop(planes)

    // `read` with the accounts (keys, ledger, rate limit) on the embedded PGlite store and on PostgreSQL.
    const dataDir = mkdtempSync(join(tmpdir(), "md-bench-read-"))
    for (const [label, storeEnv] of [
      ["PGlite", { MARKET_DATA_DIR: dataDir }],
      ["PostgreSQL", { DATABASE_URL: scoped, DATABASE_POOL_SIZE: "10" }]
    ] as const) {
      const s = await launch(["infra/src/bin.ts", "serve"], { ...env, ...storeEnv }, /listening on (http:\/\/[^/\s]+)/)
      await untilWarm(s.url, auth)
      record(
        `service: read crypto (${label})`,
        label === "PGlite" ? null : "anchor: node:http + 1 UPDATE",
        await load(`${s.url}/api/v1/read?id=crypto:bitcoin`, auth),
        s.child.pid
      )
      await stop(s)
    }
    rmSync(dataDir, { recursive: true, force: true })

    const server = await launch(
      ["test/support/serve-test-plane.ts"],
      { ...env, DATABASE_URL: scoped, DATABASE_POOL_SIZE: "10" },
      /listening on (http:\/\/[^/\s]+)/
    )
    record(
      "service: paid price (PostgreSQL)",
      "anchor: node:http + 1 UPDATE",
      await load(`${server.url}/api/v1/price?id=crypto:bitcoin`, auth),
      server.child.pid
    )
    record(
      "service: idempotent replay (PostgreSQL)",
      "anchor: node:http + 1 UPDATE",
      await load(`${server.url}/api/v1/price?id=crypto:bitcoin`, { ...auth, "idempotency-key": "bench-replay" }),
      server.child.pid
    )
    const first = await fetch(`${server.url}/api/v1/read?id=crypto:bitcoin`, { headers: auth })
    const etag = first.headers.get("etag") ?? ""
    record(
      "service: 304 read (PostgreSQL)",
      "anchor: node:http + 1 UPDATE",
      await load(`${server.url}/api/v1/read?id=crypto:bitcoin`, { ...auth, "if-none-match": etag }),
      server.child.pid
    )
    await stop(server)

    const money = await runMoney(scoped)
    const startup = await startupBench()
    const simulatedLoad = await simulatedLoadBench(SIM_COMPANIES)
    const scale = await scaleBench((line) => process.stdout.write(line))
    const bulk = await bulkBench(DB, (line) => process.stdout.write(line))

    mkdirSync(join(ROOT, "bench", "results"), { recursive: true })
    const file = join(ROOT, "bench", "results", `bench-${new Date().toISOString().replace(/[:.]/g, "-")}.json`)
    writeFileSync(
      file,
      JSON.stringify(
        { connections: CONNECTIONS, seconds: DURATION, rows, money, startup, simulatedLoad, scale, bulk },
        null,
        2
      )
    )
    process.stdout.write(`\nwritten ${file}\n`)
    const bad = rows.filter((r) => r.non2xx > 0 && !r.scenario.includes("304"))
    if (!scale.clean) {
      process.stdout.write("scale: a load scenario answered non-2xx\n")
      process.exitCode = 1
    }
    if (bad.length > 0) {
      process.stdout.write(`scenarios with non-2xx answers: ${bad.map((r) => r.scenario).join(", ")}\n`)
      process.exitCode = 1
    }
  } finally {
    await admin.query(`drop schema if exists ${schema} cascade`)
    await admin.end()
  }
}

/**
 * Startup on the embedded default (`npm start` with no configuration but a data dir and a key): a fresh data dir,
 * then the same dir reopened. Per phase: when the server listens, the first 200 of the root document `/api/v1`,
 * the first 200 of a paid data operation (`price` for bitcoin, with the bootstrap key), and when the service is
 * fully warm (the simulated history generated and the crypto baselines built: the log line "crypto baselines
 * warm"), with the RSS then and the peak RSS of the whole start (the kernel's high-water mark, VmHWM).
 * The targets, on the reopened dir: the paid 200 within 5 s (issue 4), and warm RSS within 1 GB: issue 4's 500 MB
 * was for the 35-asset registry, the default then; issue 16 made the 428-asset market the default with a 1.0 GB
 * line for the embedded server warm (the scale bench's row), which this one now checks too.
 * Runs alone with `BENCH_ONLY=startup node bench/run.ts` (no PostgreSQL needed).
 */
const STARTUP_TARGET_MS = 5_000
const STARTUP_TARGET_RSS_MB = 1_024

interface StartupPhase {
  listening_ms: number
  root_200_ms: number
  price_200_ms: number
  /** Statuses the paid call answered before its first 200 (e.g. 503 while the history is generated). */
  price_before_200: Record<string, number>
  warm_ms: number
  rss_at_price_200_mb: number
  rss_warm_mb: number
  rss_peak_mb: number
}

const startupPhase = (dir: string, command: StartCommand): Promise<StartupPhase> =>
  new Promise((resolve, reject) => {
    const t0 = performance.now()
    const since = () => Math.round(performance.now() - t0)
    const child = spawn(process.execPath, [...command.flags, command.script, "serve"], {
      cwd: ROOT,
      env: {
        ...process.env,
        ...command.env,
        PORT: "0",
        MARKET_DATA_DIR: dir,
        MARKET_DATA_BOOTSTRAP_KEY: KEY,
        MARKET_DATA_BOOTSTRAP_CREDITS: "1000000000",
        MARKET_DATA_RATE_LIMIT_PER_MINUTE: "100000000",
        LOG_LEVEL: "info",
        LOG_FORMAT: "json"
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    const poll = async (url: string, headers: Record<string, string>, seen?: Record<string, number>) => {
      for (;;) {
        const status = await fetch(url, { headers }).then(
          async (r) => {
            await r.arrayBuffer()
            return r.status
          },
          () => 0
        )
        if (status === 200) return since()
        if (seen !== undefined) seen[String(status)] = (seen[String(status)] ?? 0) + 1
        if (child.exitCode !== null) throw new Error("the server exited")
        await new Promise((r) => setTimeout(r, 20))
      }
    }
    let out = ""
    let err = ""
    let listening: Promise<Omit<StartupPhase, "warm_ms" | "rss_warm_mb" | "rss_peak_mb">> | undefined
    let warm = false
    child.stderr?.on("data", (d) => (err += d))
    child.on("exit", (code) => reject(new Error(`serve exited ${code}: ${err}`)))
    child.stdout?.on("data", (d) => {
      out += d
      const m = /listening on (http:\/\/[^/\s]+)/.exec(out)
      if (m && listening === undefined) {
        const url = m[1] as string
        const listening_ms = since()
        const before: Record<string, number> = {}
        listening = Promise.all([
          poll(`${url}/api/v1`, {}),
          poll(`${url}/api/v1/price?id=crypto:bitcoin`, { authorization: `Bearer ${KEY}` }, before).then((ms) => ({
            ms,
            rss: memoryOf(child.pid).rss
          }))
        ]).then(([root, price]) => ({
          listening_ms,
          root_200_ms: root,
          price_200_ms: price.ms,
          price_before_200: before,
          rss_at_price_200_mb: price.rss
        }))
        listening.catch(reject)
      }
      if (!warm && listening !== undefined && out.includes("crypto baselines warm")) {
        warm = true
        const warm_ms = since()
        const memory = memoryOf(child.pid)
        void listening.then(
          (first) => {
            child.removeAllListeners("exit")
            child.on("exit", () => resolve({ ...first, warm_ms, rss_warm_mb: memory.rss, rss_peak_mb: memory.peak }))
            child.kill("SIGTERM")
          },
          () => undefined
        )
      }
    })
  })

const startupBench = async (): Promise<Record<string, StartupPhase>> => {
  const dir = mkdtempSync(join(tmpdir(), "md-bench-"))
  const startup: Record<string, StartupPhase> = {}
  const command = startCommand()
  const assignments = Object.entries(command.env).map(([k, v]) => `${k}=${v} `)
  process.stdout.write(
    `startup: ${assignments.join("")}node ${[...command.flags, command.script, "serve"].join(" ")}\n`
  )
  try {
    for (const phase of ["fresh", "reopened"]) {
      const p = await startupPhase(dir, command)
      startup[phase] = p
      const before = Object.entries(p.price_before_200)
        .map(([status, n]) => `${n}x ${status === "0" ? "refused" : status}`)
        .join(", ")
      process.stdout.write(
        `startup, embedded PGlite, ${phase.padEnd(8)}: listening ${p.listening_ms} ms, first 200 /api/v1 ${p.root_200_ms} ms, first 200 paid price ${p.price_200_ms} ms${before === "" ? "" : ` (before it: ${before})`}, fully warm ${p.warm_ms} ms; RSS ${p.rss_at_price_200_mb} MB at the paid 200, ${p.rss_warm_mb} MB warm, peak ${p.rss_peak_mb} MB\n`
      )
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  const reopened = startup.reopened as StartupPhase
  const met = reopened.price_200_ms <= STARTUP_TARGET_MS && reopened.rss_warm_mb < STARTUP_TARGET_RSS_MB
  process.stdout.write(
    `startup targets (reopened: paid 200 within ${STARTUP_TARGET_MS} ms, warm RSS under ${STARTUP_TARGET_RSS_MB} MB): ${met ? "met" : "NOT met"}\n`
  )
  return startup
}

const startupOnly = async () => {
  const startup = await startupBench()
  mkdirSync(join(ROOT, "bench", "results"), { recursive: true })
  const file = join(ROOT, "bench", "results", `startup-${new Date().toISOString().replace(/[:.]/g, "-")}.json`)
  writeFileSync(file, JSON.stringify({ startup }, null, 2))
  process.stdout.write(`\nwritten ${file}\n`)
}

/** How many generated simulated companies the first-start load is measured with (the service's default). */
const SIM_COMPANIES = Number(process.env.BENCH_SIM_COMPANIES ?? "520")

/** The simulated companies' first-start load alone: `BENCH_ONLY=simload node bench/run.ts` (no PostgreSQL). */
const simulatedLoadOnly = async () => {
  const simulatedLoad = await simulatedLoadBench(SIM_COMPANIES)
  mkdirSync(join(ROOT, "bench", "results"), { recursive: true })
  const file = join(ROOT, "bench", "results", `simload-${new Date().toISOString().replace(/[:.]/g, "-")}.json`)
  writeFileSync(file, JSON.stringify({ simulatedLoad }, null, 2))
  process.stdout.write(`\nwritten ${file}\n`)
  if (!simulatedLoad.sameRows || !simulatedLoad.reopenUnchanged) process.exitCode = 1
}

/** The money path's side-by-side rows (`bench/money.ts`) on the bench's schema `scoped`. */
const runMoney = async (scoped: string): Promise<MoneyBench> => {
  const dirs: Array<string> = []
  try {
    return await moneyBench({
      launch: async (args, env) => {
        // A `serve` line names its metrics port (`MARKET_DATA_METRICS_PORT=0` in the bench's environment).
        const s = await launch(args, env, /listening on (http:\/\/[^/\s]+)(?:[^\n]* · metrics (http:\/\/[^/\s]+))?/)
        return { url: s.url, metricsUrl: s.second, pid: s.child.pid, stop: () => stop(s) }
      },
      scoped,
      key: KEY,
      connections: CONNECTIONS,
      seconds: DURATION,
      rssMb,
      print: (line) => process.stdout.write(line),
      untilWarm,
      tempDir: async () => {
        const dir = mkdtempSync(join(tmpdir(), "md-bench-money-"))
        dirs.push(dir)
        return dir
      }
    })
  } finally {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  }
}

/** The money path alone: `BENCH_ONLY=money node bench/run.ts` (needs server PostgreSQL). */
const moneyOnly = async () => {
  const schema = `md_bench_${process.pid}`
  const admin = new pg.Client({ connectionString: DB })
  await admin.connect()
  await admin.query(`create schema ${schema}`)
  const url = new URL(DB)
  url.searchParams.set("options", `-c search_path=${schema}`)
  try {
    const money = await runMoney(url.toString())
    mkdirSync(join(ROOT, "bench", "results"), { recursive: true })
    const file = join(ROOT, "bench", "results", `money-${new Date().toISOString().replace(/[:.]/g, "-")}.json`)
    writeFileSync(file, JSON.stringify({ connections: CONNECTIONS, seconds: DURATION, money }, null, 2))
    process.stdout.write(`\nwritten ${file}\n`)
    if (money.rows.some((r) => r.non2xx > 0 && !r.scenario.includes("304"))) process.exitCode = 1
  } finally {
    await admin.query(`drop schema if exists ${schema} cascade`)
    await admin.end()
  }
}

/** The bulk ingest alone: `BENCH_ONLY=bulk node bench/run.ts` (needs server PostgreSQL). */
const bulkOnly = async () => {
  const bulk = await bulkBench(DB, (line) => process.stdout.write(line))
  mkdirSync(join(ROOT, "bench", "results"), { recursive: true })
  const file = join(ROOT, "bench", "results", `bulk-${new Date().toISOString().replace(/[:.]/g, "-")}.json`)
  writeFileSync(file, JSON.stringify({ bulk }, null, 2))
  process.stdout.write(`\nwritten ${file}\n`)
  if (!bulk.targets_met) process.exitCode = 1
}

/** The production-scale simulated default alone: `BENCH_ONLY=scale node bench/run.ts` (no PostgreSQL needed). */
const scaleOnly = async () => {
  const scale = await scaleBench((line) => process.stdout.write(line))
  mkdirSync(join(ROOT, "bench", "results"), { recursive: true })
  const file = join(ROOT, "bench", "results", `scale-${new Date().toISOString().replace(/[:.]/g, "-")}.json`)
  writeFileSync(file, JSON.stringify({ scale }, null, 2))
  process.stdout.write(`\nwritten ${file}\n`)
  if (!scale.clean) process.exitCode = 1
}

/**
 * Live mode's market streams against replay venues (`bench/streams.ts`: the ingest anchor on Binance, then 1,000
 * perpetuals across Binance, Bybit, OKX and Hyperliquid), opt-in for its 40 to 60 minutes:
 * `BENCH_ONLY=streams node bench/run.ts` (no PostgreSQL needed).
 */
const streamsOnly = async () => {
  const streams = await streamsBench((line) => process.stdout.write(line))
  mkdirSync(join(ROOT, "bench", "results"), { recursive: true })
  const file = join(ROOT, "bench", "results", `streams-${new Date().toISOString().replace(/[:.]/g, "-")}.json`)
  writeFileSync(file, JSON.stringify({ streams }, null, 2))
  process.stdout.write(`\nwritten ${file}\n`)
  if (streams.targets.some((t) => !t.met)) process.exitCode = 1
}

/** Push over MCP 2026-07-28 at 1,000 streams (`bench/listen.ts`): `BENCH_ONLY=listen node bench/run.ts` (no PostgreSQL). */
const listenOnly = async () => {
  const listen = await listenBench((line) => process.stdout.write(line))
  process.stdout.write(`\n${JSON.stringify(listen, null, 2)}\n`)
  mkdirSync(join(ROOT, "bench", "results"), { recursive: true })
  const file = join(ROOT, "bench", "results", `listen-${new Date().toISOString().replace(/[:.]/g, "-")}.json`)
  writeFileSync(file, JSON.stringify({ listen }, null, 2))
  process.stdout.write(`\nwritten ${file}\n`)
  if (listen.targets.some((t) => !t.met)) process.exitCode = 1
}

const only: Record<string, () => Promise<void>> = {
  startup: startupOnly,
  bulk: bulkOnly,
  simload: simulatedLoadOnly,
  scale: scaleOnly,
  money: moneyOnly,
  streams: streamsOnly,
  listen: listenOnly
}
void (only[process.env.BENCH_ONLY ?? ""] ?? main)()
