/**
 * The examples run against a live server started here (the embedded one opens the service itself), so they
 * cannot rot. Each example runs as its own Node process, as a user would run it; a recording proxy in front
 * of the server shows what each one actually asked and when.
 *
 * - curl-walkthrough.sh and the agent loop's edge cases run on a bare server with a plane whose data ticks
 *   on a short known cadence (`ticking-plane.ts`), so sleeping until `next_update_at` takes about a second.
 * - mcp-client.ts and the agent loop on `funding` run on the real simulated planes (one server for both).
 */
import { execFile } from "node:child_process"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type PlanesServer, startPlanesServer } from "./support/planes-server.ts"
import { type Exchange, type Injected, startRecordingProxy } from "./support/recording-proxy.ts"
import { startServer, type TestServer } from "./support/server.ts"
import { makeTickingPlane } from "./support/ticking-plane.ts"

const EXAMPLES = join(import.meta.dirname, "..", "examples")

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs an example as its own process; never rejects (the exit code is part of what is checked). */
const runExample = (file: string, env: Record<string, string>): Promise<Run> =>
  new Promise((resolve) => {
    const [command, args] = file.endsWith(".sh")
      ? ["bash", [join(EXAMPLES, file)]]
      : [process.execPath, [join(EXAMPLES, file)]]
    execFile(
      command as string,
      args as Array<string>,
      { env: { ...process.env, ...env }, timeout: 50_000, maxBuffer: 10_000_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1
        resolve({ code, stdout, stderr })
      }
    )
  })

/** The agent loop's decision lines: `<time> <event> key=value ...`. */
interface LogEvent {
  readonly at: number
  readonly event: string
  readonly fields: Record<string, string>
}
const decisions = (stdout: string): Array<LogEvent> =>
  stdout
    .split("\n")
    .filter((line) => /^\d{4}-\d{2}-\d{2}T\S+Z \w+/.test(line))
    .map((line) => {
      const [at, event, ...pairs] = line.split(" ")
      const fields: Record<string, string> = {}
      for (const pair of pairs) {
        const i = pair.indexOf("=")
        fields[pair.slice(0, i)] = pair.slice(i + 1)
      }
      return { at: Date.parse(at as string), event: event as string, fields }
    })

const dataOf = (e: Exchange) => (JSON.parse(e.body) as { data: { next_update_at: string; [k: string]: any } }).data

/** Every variable the agent reads, so nothing leaks in from the environment the tests run in. */
const agentEnv = (base: string, key: string, overrides: Record<string, string> = {}) => ({
  BASE: base,
  KEY: key,
  OP: "read",
  ID: "crypto:bitcoin",
  CYCLES: "3",
  WAKE_MARGIN_MS: "250",
  MAX_SLEEP_MS: "",
  ...overrides
})

const creditsOf = async (base: string, key: string): Promise<number> => {
  const res = await fetch(`${base}/api/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
  return ((await res.json()) as { data: { credits_remaining: number } }).data.credits_remaining
}

/** A bare server (memory stores) whose `read` ticks every `slotMs`, behind a recording proxy. */
const tickingServer = async (
  slotMs: number,
  inject?: (n: number) => Injected | undefined,
  stalled = false,
  startMs?: "first-read"
) => {
  const plane = makeTickingPlane({ slotMs, stalled, ...(startMs === undefined ? {} : { startMs }) })
  const server = await startServer({ rateLimitPerMinute: 10_000 }, [plane.handlers])
  const proxy = await startRecordingProxy(server.base, inject)
  return {
    server,
    proxy,
    plane,
    close: async () => {
      await proxy.close()
      await server.close()
    }
  }
}

// The embedded example needs no server and spends its time generating the simulated market (twice): it runs
// from the start, beside the suites below, which mostly sleep; its test at the end awaits it.
let embedded: Promise<Run>
beforeAll(() => {
  embedded = runExample("embedded.ts", {})
})
// Never leave it running behind the suite (e.g. when a filter skips its test).
afterAll(() => embedded)

describe("curl-walkthrough.sh", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer({ rateLimitPerMinute: 10_000 })
  })
  afterAll(() => server.close())

  it("runs to the end against a server", async () => {
    const { key } = await server.newKey(10)
    const run = await runExample("curl-walkthrough.sh", { BASE: server.base, KEY: key })
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain("service-market-data")
    expect(run.stdout).toContain("credits_remaining")
    expect(run.stdout).toContain("HTTP 400")
    expect(run.stdout).toContain("parameter_requires")
  })
})

describe("agent-loop.ts on a plane that ticks every second", () => {
  it("sleeps until each answer's next_update_at and asks nothing in between", async () => {
    // The first read starts slot 0, so its next_update_at is a whole slot ahead: the agent's process on a loaded
    // machine (its answer seen some hundreds of ms late) must not find it already past ("late").
    const t = await tickingServer(2_000, undefined, false, "first-read")
    try {
      const { key } = await t.server.newKey(10)
      const run = await runExample("agent-loop.ts", agentEnv(t.proxy.base, key, { CYCLES: "3" }))
      expect(run.code, run.stderr + run.stdout).toBe(0)

      // Exactly three requests reached the server, all reads, each answered with new data.
      const reads = t.proxy.exchanges
      expect(reads.map((e) => `${e.method} ${e.path} ${e.status}`)).toEqual(
        Array(3).fill("GET /api/v1/read?id=crypto%3Abitcoin 200")
      )
      expect(new Set(reads.map((e) => dataOf(e).headline.price_usd)).size).toBe(3)

      const log = decisions(run.stdout)
      expect(log.map((e) => e.event)).toEqual(["start", "observed", "sleep", "observed", "sleep", "observed", "done"])
      const sleeps = log.filter((e) => e.event === "sleep")
      for (const [i, sleep] of sleeps.entries()) {
        const answered = reads[i] as Exchange
        const asked = reads[i + 1] as Exchange
        // The planned wake is the next_update_at the server sent (as the proxy saw it), plus the margin.
        const told = Date.parse(dataOf(answered).next_update_at)
        expect(sleep.fields.reason).toBe("next_update_at")
        expect(Date.parse(sleep.fields.until as string)).toBe(told + 250)
        // It asked again only once that time had come (not early, not much later), with the last ETag.
        expect(asked.arrivedAt).toBeGreaterThanOrEqual(told + 250)
        expect(asked.arrivedAt - (told + 250)).toBeLessThan(2_000)
        expect(asked.requestHeaders["if-none-match"]).toBe(answered.responseHeaders.etag)
        // The next answer is the next slot's: the wake was at the right moment to see new data.
        expect(Date.parse(dataOf(asked).as_of)).toBeGreaterThanOrEqual(told)
      }
      expect(await creditsOf(t.server.base, key)).toBe(7)
    } finally {
      await t.close()
    }
  })

  it("woken early by MAX_SLEEP_MS, it gets 304 at zero credits and keeps the last next_update_at", async () => {
    const t = await tickingServer(60_000)
    try {
      const { key } = await t.server.newKey(10)
      const run = await runExample("agent-loop.ts", agentEnv(t.proxy.base, key, { CYCLES: "3", MAX_SLEEP_MS: "300" }))
      expect(run.code, run.stderr + run.stdout).toBe(0)
      const reads = t.proxy.exchanges
      expect(reads.map((e) => e.status)).toEqual([200, 304, 304])
      const first = reads[0] as Exchange
      const told = dataOf(first).next_update_at
      const log = decisions(run.stdout)
      expect(log.map((e) => e.event)).toEqual([
        "start",
        "observed",
        "sleep",
        "not_modified",
        "sleep",
        "not_modified",
        "done"
      ])
      for (const [i, sleep] of log.filter((e) => e.event === "sleep").entries()) {
        expect(sleep.fields).toMatchObject({ reason: "max_sleep", ms: "300", next_update_at: told })
        expect((reads[i + 1] as Exchange).arrivedAt).toBeGreaterThanOrEqual(Date.parse(sleep.fields.until as string))
        expect((reads[i + 1] as Exchange).requestHeaders["if-none-match"]).toBe(first.responseHeaders.etag)
      }
      expect(await creditsOf(t.server.base, key)).toBe(9)
    } finally {
      await t.close()
    }
  })

  it("on 429 waits the Retry-After it was given, then carries on", async () => {
    // The real limit's Retry-After is up to a minute away, so the proxy answers the second request with a
    // 429 of its own, shaped as the service's (Retry-After: 1).
    const rateLimited: Injected = {
      status: 429,
      headers: { "content-type": "application/json", "retry-after": "1" },
      body: JSON.stringify({ error: { code: "rate_limited", message: "slow down", retryable: true } })
    }
    const t = await tickingServer(500, (n) => (n === 2 ? rateLimited : undefined))
    try {
      const { key } = await t.server.newKey(10)
      const run = await runExample("agent-loop.ts", agentEnv(t.proxy.base, key, { CYCLES: "2" }))
      expect(run.code, run.stderr + run.stdout).toBe(0)
      const ex = t.proxy.exchanges
      expect(ex.map((e) => e.status)).toEqual([200, 429, 200])
      const log = decisions(run.stdout)
      expect(log.map((e) => e.event)).toEqual([
        "start",
        "observed",
        "sleep",
        "rate_limited",
        "sleep",
        "observed",
        "done"
      ])
      expect(log[4]?.fields).toMatchObject({ reason: "retry_after", ms: "1000" })
      expect((ex[2] as Exchange).arrivedAt - (ex[1] as Exchange).answeredAt).toBeGreaterThanOrEqual(1_000)
    } finally {
      await t.close()
    }
  })

  it("on a stalled source (next_update_at is now) backs off from 1 s, doubling, instead of polling", async () => {
    const t = await tickingServer(500, undefined, true)
    try {
      const { key } = await t.server.newKey(10)
      const run = await runExample("agent-loop.ts", agentEnv(t.proxy.base, key, { CYCLES: "3" }))
      expect(run.code, run.stderr + run.stdout).toBe(0)
      const ex = t.proxy.exchanges
      expect(ex.map((e) => [e.status, dataOf(e).status])).toEqual(Array(3).fill([200, "stale"]))
      const sleeps = decisions(run.stdout).filter((e) => e.event === "sleep")
      expect(sleeps.map((e) => [e.fields.reason, e.fields.ms])).toEqual([
        ["late", "1000"],
        ["late", "2000"]
      ])
      for (const [i, sleep] of sleeps.entries()) {
        expect((ex[i + 1] as Exchange).arrivedAt).toBeGreaterThanOrEqual(Date.parse(sleep.fields.until as string))
      }
    } finally {
      await t.close()
    }
  })

  it("stops on 402 without retrying, and on a refused key", async () => {
    const t = await tickingServer(500)
    try {
      const { key } = await t.server.newKey(0)
      const broke = await runExample("agent-loop.ts", agentEnv(t.proxy.base, key))
      expect(broke.code).toBe(3)
      expect(decisions(broke.stdout).map((e) => e.event)).toEqual(["start", "out_of_credits"])
      expect(broke.stdout).toContain("code=insufficient_credits")
      const unknown = await runExample("agent-loop.ts", agentEnv(t.proxy.base, `mdk_${"Z".repeat(32)}`))
      expect(unknown.code).toBe(2)
      expect(unknown.stdout).toContain("code=unauthenticated")
      expect(t.proxy.exchanges.map((e) => e.status)).toEqual([402, 401])
      const missing = await runExample("agent-loop.ts", agentEnv(t.proxy.base, ""))
      expect(missing.code).toBe(2)
      expect(missing.stderr).toContain("set KEY")
    } finally {
      await t.close()
    }
  })
})

describe("mcp-watcher.ts on a plane that ticks every 300 ms", () => {
  it("subscribes to three assets over MCP 2026-07-28 and prints each change it reads, one credit per read", async () => {
    const t = await tickingServer(300)
    try {
      const { key } = await t.server.newKey(20)
      const run = await runExample("mcp-watcher.ts", {
        BASE: t.server.base,
        KEY: key,
        IDS: "crypto:bitcoin,crypto:ethereum,crypto:solana",
        READS: "6"
      })
      expect(run.code, run.stderr + run.stdout).toBe(0)
      expect(run.stdout).toContain(
        "watching service://read/crypto:bitcoin, service://read/crypto:ethereum, service://read/crypto:solana"
      )
      const lines = run.stdout.split("\n").filter((l) => / price \d/.test(l))
      expect(lines).toHaveLength(6)
      for (const l of lines) expect(l).toContain("(credits charged: 1,")
      // The first three reads are the starting point; the later ones were announced changes.
      expect(new Set(lines.slice(0, 3).map((l) => l.split(" ")[0]))).toEqual(
        new Set(["crypto:bitcoin", "crypto:ethereum", "crypto:solana"])
      )
      expect(run.stdout).toContain("stopping after 6 reads")
      expect(await creditsOf(t.server.base, key)).toBe(14)
    } finally {
      await t.close()
    }
  })

  it("exits 2 without a key", async () => {
    const run = await runExample("mcp-watcher.ts", { BASE: "http://127.0.0.1:1", KEY: "" })
    expect(run.code).toBe(2)
  })
})

describe("on the simulated planes", () => {
  let planes: PlanesServer
  beforeAll(async () => {
    planes = await startPlanesServer({ rateLimitPerMinute: 10_000 })
  })
  afterAll(() => planes.close())

  it("mcp-client.ts lists the tools, calls free and paid ones, replays under an idempotency key, reports a tool error", async () => {
    const proxy = await startRecordingProxy(planes.base)
    try {
      const { key } = await planes.newKey(20)
      const run = await runExample("mcp-client.ts", { BASE: proxy.base, KEY: key })
      expect(run.code, run.stderr + run.stdout).toBe(0)
      const out = run.stdout
      expect(out).toContain("connected to service-market-data 1.0.0")
      expect(out).toContain("== 23 tools")
      expect(out).toContain("== schema price (credits charged: 0)")
      expect(out).toContain("best match: crypto:bitcoin")
      expect(out).toContain("== price crypto:bitcoin (credits charged: 1)")
      expect(out).toContain("retry: charged 1, replayed true")
      expect(out).toContain("spent 1")
      expect(out).toMatch(/tool error: unknown_asset \(param id, retryable false\)/)
      // Two paid price calls billed, the replay and the refused asset not.
      expect(await creditsOf(planes.base, key)).toBe(18)
      // The idempotency key went out as a header, on exactly the two calls that used it.
      const keyed = proxy.exchanges.filter((e) => e.requestHeaders["idempotency-key"] !== undefined)
      expect(keyed).toHaveLength(2)
      expect(keyed[0]?.requestHeaders["idempotency-key"]).toBe(keyed[1]?.requestHeaders["idempotency-key"])
      // Everything went to the MCP endpoint; every tool call is a POST (the SDK may also try a GET stream: 405).
      expect(new Set(proxy.exchanges.map((e) => e.path))).toEqual(new Set(["/api/mcp"]))
      for (const e of proxy.exchanges) expect(e.method === "POST" ? e.status : 405).toBe(e.status)
    } finally {
      await proxy.close()
    }
  })

  it("agent-loop.ts watches funding and plans its wake from next_update_at", async () => {
    const proxy = await startRecordingProxy(planes.base)
    try {
      const { key } = await planes.newKey(20)
      const run = await runExample(
        "agent-loop.ts",
        agentEnv(proxy.base, key, { OP: "funding", CYCLES: "2", MAX_SLEEP_MS: "1000" })
      )
      expect(run.code, run.stderr + run.stdout).toBe(0)
      expect(run.stdout).toMatch(/funding 8h \S+ \(pctl [\d.]+\) %, band \w+, next settlement \S+Z/)
      const [first, second, ...rest] = proxy.exchanges
      expect(rest).toEqual([])
      expect(first?.status).toBe(200)
      const told = Date.parse(dataOf(first as Exchange).next_update_at)
      const sleep = decisions(run.stdout).find((e) => e.event === "sleep")
      const until = Date.parse(sleep?.fields.until as string)
      // The wake is next_update_at (+ margin) or, when that is further than the 1 s cap, the cap; or, when the
      // answer reached the agent after its next_update_at (a loaded machine), the late back-off (1 s first).
      const decidedAt = until - Number(sleep?.fields.ms)
      if (sleep?.fields.reason === "next_update_at") expect(until).toBe(told + 250)
      else if (sleep?.fields.reason === "late") {
        expect(told).toBeLessThanOrEqual(decidedAt)
        expect(sleep.fields.ms).toBe("1000")
      } else {
        expect(sleep?.fields).toMatchObject({ reason: "max_sleep", ms: "1000" })
        expect(until).toBeLessThan(told + 250)
      }
      expect(second?.arrivedAt).toBeGreaterThanOrEqual(until)
      expect(second?.requestHeaders["if-none-match"]).toBe(first?.responseHeaders.etag)
      // Before next_update_at nothing can have changed: the conditional read is a free 304. (Half a second of
      // slack: the server answers a moment after the proxy saw the request.)
      if ((second as Exchange).arrivedAt < told - 500) expect(second?.status).toBe(304)
      else expect([200, 304]).toContain(second?.status)
    } finally {
      await proxy.close()
    }
  })
})

describe("embedded.ts", () => {
  it("runs the service in process, trusted and keyed, and closes", async () => {
    const run = await embedded
    expect(run.code, run.stderr + run.stdout).toBe(0)
    const out = run.stdout
    expect(out).toMatch(/BTC [\d.]+ USD, 24h -?[\d.]+% \(pctl [\d.]+\), trend \w+, status \w+/)
    expect(out).toContain('"reason": "unknown_asset"')
    expect(out).toContain('resolve "Aldermoor" -> eq:9990001:ALDR')
    expect(out).toMatch(/revenue - cost_of_revenue = (\d+) \(filed gross_profit \1\)/)
    expect(out).toContain("422 plane_mismatch")
    expect(out).toMatch(/read crypto:bitcoin -> 200, charged 1, ETag "[0-9a-f]+"/)
    expect(out).toContain("read again with If-None-Match -> 304, charged 0")
    expect(out).toContain("402 insufficient_credits")
    expect(out).toMatch(/credits: 3\n[\s\S]*credits: 2\n/)
  })
})
