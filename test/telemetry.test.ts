/**
 * The operator's endpoints on a real `market-data serve` process: `/healthz`, `/readyz`, `/metrics` (content
 * after known traffic), the optional metrics port, OTLP traces to a local collector, `X-Request-Id` and the
 * request ID in the log lines; and that none of these spends a rate unit. Readiness's 503 -> 200 is also proven
 * on `makeTelemetry` with a readiness the test controls, since the process's own warm-up may beat the first probe.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { MAX_SCRAPES_PER_SECOND, makeTelemetry } from "@market-data/infra"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { mcpPost } from "./support/mcp.ts"
import { SERVE_ENTRY, type ServerProcess, startServerProcess, stopServerProcess } from "./support/server-process.ts"

const KEY = "mdk_telemetry0telemetry1telemetry2ab"

/** Polls `check` until it returns a value (not undefined), failing after `ms`. */
const poll = async <A>(check: () => Promise<A | undefined>, ms: number, what: string): Promise<A> => {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`${what} within ${ms} ms`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** The value of one sample line of a Prometheus text exposition, or undefined. */
const sample = (text: string, name: string, labels: Record<string, string>): number | undefined => {
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue
    const body = line.slice(name.length + 1, line.lastIndexOf("}"))
    const found = Object.fromEntries([...body.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]))
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(line.slice(line.lastIndexOf(" ") + 1))
  }
  return undefined
}

const keyed = (base: string, path: string, headers: Record<string, string> = {}) =>
  fetch(`${base}${path}`, { headers: { authorization: `Bearer ${KEY}`, ...headers } })

const remaining = (res: Response): number => Number(/r=(\d+)/.exec(res.headers.get("ratelimit") ?? "")?.[1])

/** The metrics address the startup line names (`metrics http://host:port/metrics`). */
const metricsBaseOf = (s: ServerProcess): Promise<string> =>
  poll(
    async () => /metrics (http:\/\/127\.0\.0\.1:\d+)\/metrics/.exec(s.stdout())?.[1],
    10_000,
    "no metrics address in the startup line"
  )

describe("health, readiness, metrics, request IDs on a served process", () => {
  let server: ServerProcess
  let metricsBase: string
  beforeAll(async () => {
    server = await startServerProcess(
      {
        DATABASE_URL: "memory",
        LOG_LEVEL: "info",
        MARKET_DATA_BOOTSTRAP_KEY: KEY,
        MARKET_DATA_BOOTSTRAP_CREDITS: "100",
        MARKET_DATA_RATE_LIMIT_PER_MINUTE: "6",
        MARKET_DATA_METRICS_PORT: "0"
      },
      { entry: SERVE_ENTRY, args: ["serve"] }
    )
    metricsBase = await metricsBaseOf(server)
  }, 90_000)
  afterAll(async () => {
    if (server !== undefined) await stopServerProcess(server)
  })

  it("/healthz answers at once; /readyz names what is missing until the baselines are warm, then 200", async () => {
    const health = await fetch(`${server.base}/healthz`)
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({ status: "ok" })
    const first = await fetch(`${server.base}/readyz`)
    if (first.status === 503) {
      const body = (await first.json()) as { status: string; missing: Array<string> }
      expect(body.status).toBe("not_ready")
      expect(body.missing.join(" ")).toMatch(/crypto baselines: \d+ of \d+ assets ready/)
    } else expect(first.status).toBe(200)
    const ready = await poll(
      async () => {
        const r = await fetch(`${server.base}/readyz`)
        return r.status === 200 ? ((await r.json()) as unknown) : undefined
      },
      60_000,
      "/readyz did not turn 200"
    )
    expect(ready).toEqual({ status: "ready" })
  }, 70_000)

  it("spends no rate unit, records the traffic in /metrics, and tags every answer and log line with a request ID", async () => {
    const before = await keyed(server.base, "/api/v1/usage")
    expect(before.status).toBe(200)
    const r0 = remaining(before)
    for (let i = 0; i < 10; i++) {
      for (const [base, path] of [
        [server.base, "/healthz"],
        [server.base, "/readyz"],
        [metricsBase, "/metrics"]
      ] as const) {
        const res = await keyed(base, path)
        expect(res.status).toBe(200)
        await res.arrayBuffer()
      }
    }
    const after = await keyed(server.base, "/api/v1/usage")
    expect(remaining(after)).toBe(r0 - 1)

    // Paid, idempotent, replayed, conflicting, over MCP, and refused for the rate limit.
    const fin = "/api/v1/financials?id=eq:9990001:ALDR&period_kind=quarter"
    const paid = await keyed(server.base, fin, { "idempotency-key": "telemetry-1", "x-request-id": "trace-abc.1" })
    expect(paid.status).toBe(200)
    expect(paid.headers.get("x-request-id")).toBe("trace-abc.1")
    const charged = Number(paid.headers.get("x-credits-charged"))
    expect(charged).toBeGreaterThan(0)
    const replay = await keyed(server.base, fin, { "idempotency-key": "telemetry-1" })
    expect(replay.headers.get("idempotent-replayed")).toBe("true")
    const conflict = await keyed(server.base, `${fin.replace("quarter", "annual")}`, {
      "idempotency-key": "telemetry-1"
    })
    expect(conflict.status).toBe(409)
    const mcp = await mcpPost(
      server.base,
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "usage", arguments: {} } },
      { authorization: `Bearer ${KEY}` }
    )
    expect(mcp.status).toBe(200)
    expect(mcp.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
    const refused = await keyed(server.base, "/api/v1/usage")
    expect(refused.status).toBe(429)
    // A caller's ID that is not one plain token is replaced, not echoed.
    const odd = await fetch(`${server.base}/api/v1`, { headers: { "x-request-id": "a b<script>" } })
    expect(odd.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)

    // The metrics text is rendered at most once a second: polled until it shows the last request.
    const text = await poll(
      async () => {
        const metrics = await fetch(`${metricsBase}/metrics`)
        expect(metrics.headers.get("content-type")).toContain("text/plain")
        const text = await metrics.text()
        const refusals = sample(text, "market_data_rate_limit_refusals_total", { operation: "usage" })
        return refusals === 1 ? text : undefined
      },
      10_000,
      "/metrics did not show the refused request"
    )
    const count = (labels: Record<string, string>) => sample(text, "market_data_requests_total", labels)
    expect(count({ operation: "financials", transport: "http", status: "200" })).toBe(2)
    expect(count({ operation: "financials", transport: "http", status: "409" })).toBe(1)
    expect(count({ operation: "usage", transport: "mcp", status: "200" })).toBe(1)
    expect(count({ operation: "usage", transport: "http", status: "429" })).toBe(1)
    expect(
      sample(text, "market_data_request_duration_seconds_count", {
        operation: "financials",
        transport: "http",
        status: "200"
      })
    ).toBe(2)
    expect(sample(text, "market_data_credits_charged_total", { operation: "financials" })).toBe(charged)
    expect(sample(text, "market_data_idempotency_outcomes_total", { outcome: "executed" })).toBe(1)
    expect(sample(text, "market_data_idempotency_outcomes_total", { outcome: "replayed" })).toBe(1)
    expect(sample(text, "market_data_idempotency_outcomes_total", { outcome: "conflict" })).toBe(1)
    expect(sample(text, "market_data_rate_limit_refusals_total", { operation: "usage" })).toBe(1)
    // The operational routes are not requests of the API.
    expect(text).not.toMatch(/operation="(healthz|readyz|metrics)"/)
    expect(text).toMatch(/^market_data_source_lag_seconds\{venue="[^"]+",component="[^"]+"\} \d/m)

    const lines = server
      .stdout()
      .split("\n")
      .filter((l) => l.includes('"message":"request"'))
      .map((l) => JSON.parse(l) as { annotations: Record<string, unknown> })
    expect(lines.length).toBeGreaterThanOrEqual(7)
    expect(server.stdout()).not.toContain("no API key exists")
    for (const line of lines) expect(line.annotations.request_id).toEqual(expect.any(String))
    expect(lines.some((l) => l.annotations.request_id === "trace-abc.1" && l.annotations.op === "financials")).toBe(
      true
    )
  }, 60_000)
})

describe("metrics port and traces", () => {
  it("MARKET_DATA_METRICS_PORT serves /metrics on its own port only", async () => {
    const s = await startServerProcess(
      { DATABASE_URL: "memory", MARKET_DATA_METRICS_PORT: "0" },
      { entry: SERVE_ENTRY, args: ["serve"] }
    )
    try {
      const port = new URL(await metricsBaseOf(s)).port
      expect(Number(port)).not.toBe(s.port)
      // A memory store without a bootstrap key says at start how to get a key.
      expect(s.stdout()).toContain("no API key exists: DATABASE_URL=memory keeps keys inside this process")
      expect(s.stdout()).toContain("MARKET_DATA_BOOTSTRAP_KEY=mdk_")
      const metrics = await fetch(`http://127.0.0.1:${port}/metrics`)
      expect(metrics.status).toBe(200)
      expect(await metrics.text()).toContain("market_data_requests_total")
      const onApi = await fetch(`${s.base}/metrics`)
      expect(onApi.status).toBe(404)
      expect(((await onApi.json()) as { error: { code: string } }).error.code).toBe("unknown_operation")
    } finally {
      await stopServerProcess(s)
    }
  }, 90_000)

  it("by default /metrics is on its own loopback port (9464), not on the API port; `off` serves it nowhere", async () => {
    const s = await startServerProcess({ DATABASE_URL: "memory" }, { entry: SERVE_ENTRY, args: ["serve"] })
    try {
      // The default port, unless another process (a parallel test's server) holds it: then metrics are off,
      // with a warning naming the variable.
      const line = await poll(
        async () => /metrics (\S+) · store/.exec(s.stdout())?.[1],
        10_000,
        "no metrics part in the startup line"
      )
      if (line === "off") expect(s.stdout()).toContain("metrics are off: the default metrics port 127.0.0.1:9464")
      else expect(line).toBe("http://127.0.0.1:9464/metrics")
      const onApi = await fetch(`${s.base}/metrics`)
      expect(onApi.status).toBe(404)
      await onApi.arrayBuffer()
    } finally {
      await stopServerProcess(s)
    }
    const off = await startServerProcess(
      { DATABASE_URL: "memory", MARKET_DATA_METRICS_PORT: "off" },
      { entry: SERVE_ENTRY, args: ["serve"] }
    )
    try {
      await poll(async () => (/ · metrics off · /.test(off.stdout()) ? true : undefined), 10_000, "metrics not off")
      expect((await fetch(`${off.base}/metrics`)).status).toBe(404)
    } finally {
      await stopServerProcess(off)
    }
  }, 90_000)

  it("OTEL_EXPORTER_OTLP_ENDPOINT: each request's span reaches the collector over OTLP/HTTP", async () => {
    const bodies: Array<string> = []
    const collector = http.createServer((req, res) => {
      let body = ""
      req.on("data", (d) => {
        body += d
      })
      req.on("end", () => {
        if (req.url === "/v1/traces") bodies.push(body)
        res.writeHead(200, { "content-type": "application/json" })
        res.end("{}")
      })
    })
    await new Promise<void>((r) => collector.listen(0, "127.0.0.1", r))
    const collectorPort = (collector.address() as AddressInfo).port
    const s = await startServerProcess(
      { DATABASE_URL: "memory", OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collectorPort}` },
      { entry: SERVE_ENTRY, args: ["serve"] }
    )
    try {
      expect((await fetch(`${s.base}/api/v1/schema`)).status).toBe(200)
      const span = await poll(
        async () => bodies.find((b) => b.includes("GET /api/v1/schema")),
        20_000,
        "no span for the request reached the collector"
      )
      const parsed = JSON.parse(span) as {
        resourceSpans: Array<{ resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> } }>
      }
      const service = parsed.resourceSpans[0]?.resource.attributes.find((a) => a.key === "service.name")
      expect(service?.value.stringValue).toBe("market-data")
    } finally {
      await stopServerProcess(s)
      await new Promise((r) => collector.close(r))
    }
  }, 90_000)
})

describe("makeTelemetry", () => {
  it("/readyz is 503 naming what is missing, then 200; the pool's use is in /metrics, rendered at most once a second", async () => {
    let nowMs = 0
    let missing: ReadonlyArray<string> = ["database: not answering", "crypto baselines: 3 of 35 assets ready"]
    const telemetry = makeTelemetry(
      {
        missing: Effect.sync(() => missing),
        sourceStatus: Effect.succeed([]),
        poolStats: () => ({ total: 4, idle: 1, waiting: 2, max: 10 }),
        statements: () => 120,
        groupCommit: () => ({ batches: 7, calls: 300, failedBatches: 1, largest: 64 })
      },
      { tracing: false, nowMs: () => nowMs }
    )
    const answer = telemetry.handler(true)
    const server = http.createServer((req, res) => {
      if (!answer(req, res)) {
        res.writeHead(418)
        res.end()
      }
    })
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    try {
      const notReady = await fetch(`${base}/readyz`)
      expect(notReady.status).toBe(503)
      expect(await notReady.json()).toEqual({ status: "not_ready", missing })
      missing = []
      const ready = await fetch(`${base}/readyz`)
      expect(ready.status).toBe(200)
      expect((await fetch(`${base}/readyz`, { method: "POST" })).status).toBe(405)
      expect((await fetch(`${base}/elsewhere`)).status).toBe(418)
      const text = await (await fetch(`${base}/metrics`)).text()
      expect(sample(text, "market_data_db_pool_connections", { state: "in_use" })).toBe(3)
      expect(sample(text, "market_data_db_pool_connections", { state: "waiting" })).toBe(2)
      expect(text).toMatch(/^market_data_db_statements_total 120$/m)
      expect(sample(text, "market_data_db_group_commit_total", { kind: "batches" })).toBe(7)
      expect(sample(text, "market_data_db_group_commit_total", { kind: "calls" })).toBe(300)
      expect(sample(text, "market_data_db_group_commit_total", { kind: "failed" })).toBe(1)
      expect(text).toMatch(/^market_data_ready 1$/m)
      // Request labels come from a closed set: a made-up operation does not become a label value.
      telemetry.requestTelemetry.record?.({ transport: "http", operation: "no-such-op", status: 404, seconds: 0.001 })
      telemetry.requestTelemetry.record?.({
        transport: "mcp",
        operation: "mcp tools/call price",
        status: 200,
        seconds: 0.002
      })
      // The text rendered a moment ago is served again for a second; then rendered anew.
      const cached = await (await fetch(`${base}/metrics`)).text()
      expect(cached).toBe(text)
      nowMs += 1_000
      const after = await (await fetch(`${base}/metrics`)).text()
      expect(sample(after, "market_data_requests_total", { operation: "unknown", status: "404" })).toBe(1)
      expect(sample(after, "market_data_requests_total", { operation: "price", transport: "mcp" })).toBe(1)
      expect(after).not.toContain("no-such-op")
    } finally {
      await new Promise((r) => server.close(r))
    }
  })

  it("answers at most MAX_SCRAPES_PER_SECOND scrapes a second; the rest wait for the next second", async () => {
    let nowMs = 5_000
    const telemetry = makeTelemetry(
      { missing: Effect.succeed([]), sourceStatus: Effect.succeed([]), poolStats: undefined },
      { tracing: false, nowMs: () => nowMs }
    )
    const answer = telemetry.handler(true)
    const server = http.createServer((req, res) => {
      if (!answer(req, res)) {
        res.writeHead(418)
        res.end()
      }
    })
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    try {
      let answered = 0
      const scrapes = Array.from({ length: MAX_SCRAPES_PER_SECOND + 5 }, async () => {
        const res = await fetch(`${base}/metrics`)
        expect(res.status).toBe(200)
        await res.arrayBuffer()
        answered++
      })
      await poll(
        async () => (answered === MAX_SCRAPES_PER_SECOND ? true : undefined),
        10_000,
        "20 scrapes not answered"
      )
      // Health and readiness are not scrapes.
      expect((await fetch(`${base}/healthz`)).status).toBe(200)
      expect(answered).toBe(MAX_SCRAPES_PER_SECOND)
      // The next second answers the five that waited.
      nowMs += 1_000
      await Promise.all(scrapes)
      expect(answered).toBe(MAX_SCRAPES_PER_SECOND + 5)
    } finally {
      await new Promise((r) => server.close(r))
    }
  })
})
