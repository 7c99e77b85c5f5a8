/**
 * `npm run bench`: load from this process with autocannon against servers in their own processes, side by
 * side in one run: the anchors first, then the service. Prints a table and writes JSON to bench/results/.
 *
 * Needs server PostgreSQL (BENCH_DATABASE_URL, default the machine's postgres://postgres@127.0.0.1:5432/test).
 * The money scenarios use the deterministic test plane (its answers cost nothing to compute, so they measure
 * the pipeline and the store); the data scenarios run the real service on the simulated planes in memory. Keys
 * have their rate-limit policy raised for the run; every scenario reports its non-2xx count, which must be zero
 * (the 304 scenario counts its 304s there).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import autocannon from "autocannon"
import pg from "pg"

const ROOT = join(import.meta.dirname, "..")
const DB = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"
const DURATION = Number(process.env.BENCH_SECONDS ?? 10)
const CONNECTIONS = 50
const KEY = `mdk_${"Bench".repeat(6)}XY`

interface Started {
  readonly url: string
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
      if (m) resolve({ url: m[1] as string, child, startedMs: performance.now() - t0 })
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

const rssMb = (pid: number | undefined): number => {
  if (pid === undefined) return Number.NaN
  try {
    return Math.round(Number(execFileSync("ps", ["-o", "rss=", "-p", String(pid)], { encoding: "utf8" }).trim()) / 1024)
  } catch {
    return Number.NaN
  }
}

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

const load = async (url: string, headers: Record<string, string> = {}) => {
  // Warm-up, then the measured run.
  await autocannon({ url, connections: CONNECTIONS, duration: 2, headers })
  return autocannon({ url, connections: CONNECTIONS, duration: DURATION, headers })
}

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
    // Let the background warm-up of the baselines finish before measuring.
    await new Promise((r) => setTimeout(r, 8_000))
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
    await stop(planes)

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

    // Startup on the embedded default: a fresh data dir, then reopened.
    const dir = mkdtempSync(join(tmpdir(), "md-bench-"))
    const startup: Record<string, unknown> = {}
    for (const phase of ["fresh", "reopened"]) {
      const t0 = performance.now()
      const s = await launch(
        ["infra/src/bin.ts", "serve"],
        { PORT: "0", MARKET_DATA_DIR: dir },
        /listening on (http:\/\/[^/\s]+)/
      )
      for (;;) {
        const ok = await fetch(`${s.url}/api/v1`).then(
          (r) => r.status === 200,
          () => false
        )
        if (ok) break
        await new Promise((r) => setTimeout(r, 20))
      }
      const ms = Math.round(performance.now() - t0)
      const rss = rssMb(s.child.pid)
      startup[phase] = { first_200_ms: ms, rss_mb: rss }
      process.stdout.write(`startup, embedded PGlite, ${phase.padEnd(8)}: first 200 after ${ms} ms, RSS ${rss} MB\n`)
      await stop(s)
    }
    rmSync(dir, { recursive: true, force: true })

    mkdirSync(join(ROOT, "bench", "results"), { recursive: true })
    const file = join(ROOT, "bench", "results", `bench-${new Date().toISOString().replace(/[:.]/g, "-")}.json`)
    writeFileSync(file, JSON.stringify({ connections: CONNECTIONS, seconds: DURATION, rows, startup }, null, 2))
    process.stdout.write(`\nwritten ${file}\n`)
    const bad = rows.filter((r) => r.non2xx > 0 && !r.scenario.includes("304"))
    if (bad.length > 0) {
      process.stdout.write(`scenarios with non-2xx answers: ${bad.map((r) => r.scenario).join(", ")}\n`)
      process.exitCode = 1
    }
  } finally {
    await admin.query(`drop schema if exists ${schema} cascade`)
    await admin.end()
  }
}

void main()
