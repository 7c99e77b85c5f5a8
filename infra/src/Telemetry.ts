/**
 * The operator's view of a running server: `/healthz` (the process answers), `/readyz` (503 naming what is
 * missing until the stores answer and the crypto baselines are warm, then 200), `/metrics` (Prometheus text,
 * prom-client; served on a port of its own, loopback by default, never on the public API port; rendered at most
 * once a second and answered at most MAX_SCRAPES_PER_SECOND times a second) and OpenTelemetry traces over OTLP (Effect's own OTLP exporter) when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is set. None of these routes spends a rate unit or a credit: they are answered
 * before the API. The transports report each request through their ports (`RequestTelemetry` in the HTTP
 * transport, `PipelineObserver` in the core). On the request path a record is a few increments on plain
 * per-label-set numbers (about 30 ns; prom-client's own `inc`/`observe` hash their labels on every call, about
 * 1.7 us); prom-client's registry renders them, with its gauges and Node's process metrics, when scraped.
 */
import * as http from "node:http"
import {
  type Answer,
  type ApiRequest,
  Operations,
  type PipelineObserverShape,
  type SourceStatus
} from "@market-data/core"
import type { RequestRecord, RequestTelemetryShape } from "@market-data/http"
import type { GroupCommitStats, PoolStats } from "@market-data/postgres"
import { Effect, Layer } from "effect"
import { FetchHttpClient } from "effect/http"
import * as OtlpSerialization from "effect/observability/OtlpSerialization"
import * as OtlpTracer from "effect/observability/OtlpTracer"
import { Counter, collectDefaultMetrics, Gauge, type Metric, Registry } from "prom-client"

/** How long a rendered `/metrics` text is served again before the registry renders anew. */
export const METRICS_CACHE_MS = 1_000
/** Most `/metrics` answers a second; more wait for a later second (a scraper fetches every few seconds). */
export const MAX_SCRAPES_PER_SECOND = 20
/** Most connections the metrics port holds at once (more are closed unanswered). */
const METRICS_MAX_CONNECTIONS = 64

export const HEALTH_PATH = "/healthz"
export const READY_PATH = "/readyz"
export const METRICS_PATH = "/metrics"

const OPERATION_NAMES = new Set(Operations.map((o) => o.name))
/** Non-operation routes the transports name in their log lines. */
const ROUTE_NAMES = new Set(["root", "openapi", "docs_page", "-"])
const MCP_METHODS = new Set([
  "initialize",
  "ping",
  "tools/list",
  "tools/call",
  "resources/list",
  "resources/read",
  "resources/templates/list",
  "prompts/list",
  "notifications/initialized",
  "batch"
])

/**
 * The `operation` label of a request, from a closed set so no caller can grow the label space: an operation
 * of the registry (also for an MCP `tools/call`), one of the other routes, an MCP method, or `unknown`.
 */
export const operationLabel = (logOp: string): string => {
  if (OPERATION_NAMES.has(logOp) || ROUTE_NAMES.has(logOp)) return logOp
  if (logOp.startsWith("mcp ")) {
    const [method, tool] = logOp.slice(4).split(" ")
    if (method === "tools/call" && tool !== undefined && OPERATION_NAMES.has(tool)) return tool
    if (method !== undefined && MCP_METHODS.has(method)) return `mcp ${method}`
    return "mcp other"
  }
  return "unknown"
}

/** What an answer says about its idempotency key, when the request carried one to a paid operation. */
export const idempotencyOutcome = (request: ApiRequest, answer: Answer): string | undefined => {
  if (request.idempotencyKey === undefined || request.idempotencyKey.length === 0) return undefined
  if (answer.op?.auth !== "paid") return undefined
  const o = answer.outcome
  if (o._tag === "Replay") return "replayed"
  if (o._tag === "Json") return "executed"
  if (o._tag !== "Failure") return "not_stored"
  switch (o.error.code) {
    case "idempotency_conflict":
      return "conflict"
    case "request_in_progress":
      return "in_progress"
    case "invalid_idempotency_key":
      return "rejected"
    default:
      return "not_stored"
  }
}

export interface TelemetrySources {
  /** What the service still lacks (`/readyz`); empty when ready. */
  readonly missing: Effect.Effect<ReadonlyArray<string>>
  /** Each source component's status, read at scrape time. */
  readonly sourceStatus: Effect.Effect<ReadonlyArray<SourceStatus>>
  /** The PostgreSQL pool's use, read at scrape time; undefined without a pool. */
  readonly poolStats: (() => PoolStats) | undefined
  /** Statements sent to PostgreSQL so far (round trips), read at scrape time; undefined without a pool. */
  readonly statements?: (() => number) | undefined
  /** Group commit's batches and calls so far, read at scrape time; undefined when it is off. */
  readonly groupCommit?: (() => GroupCommitStats) | undefined
}

export interface Telemetry {
  readonly registry: Registry
  readonly requestTelemetry: RequestTelemetryShape
  readonly pipelineObserver: PipelineObserverShape
  /** Answers `/healthz`, `/readyz` and (when `serveMetrics`) `/metrics`; false for any other path. */
  readonly handler: (serveMetrics: boolean) => (req: http.IncomingMessage, res: http.ServerResponse) => boolean
}

const LATENCY_BUCKETS: ReadonlyArray<number> = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10
]

/** Count and latency of one label set; `buckets[i]` counts answers in bucket i alone (the last: over 10 s). */
interface RequestStats {
  readonly labels: Record<string, string>
  count: number
  sum: number
  readonly buckets: Float64Array
}

interface Sample {
  readonly metricName?: string
  readonly labels: Record<string, string>
  readonly value: number
}

/** A metric whose samples are computed at scrape time, in the shape prom-client's registry renders. */
const metricOf = (name: string, help: string, type: "counter" | "histogram", values: () => ReadonlyArray<Sample>) =>
  ({
    name,
    help,
    type,
    aggregator: "sum",
    get: async () => ({ name, help, type, aggregator: "sum", values: values() }),
    reset: () => {}
  }) as unknown as Metric<string>

/** Prometheus histogram samples (cumulative `_bucket`s, `_sum`, `_count`) of one label set. */
const histogramSamples =
  (name: string) =>
  (st: RequestStats): Array<Sample> => {
    const out: Array<Sample> = []
    let cumulative = 0
    LATENCY_BUCKETS.forEach((le, i) => {
      cumulative += st.buckets[i] as number
      out.push({ metricName: `${name}_bucket`, labels: { ...st.labels, le: String(le) }, value: cumulative })
    })
    out.push({ metricName: `${name}_bucket`, labels: { ...st.labels, le: "+Inf" }, value: st.count })
    out.push({ metricName: `${name}_sum`, labels: st.labels, value: st.sum })
    out.push({ metricName: `${name}_count`, labels: st.labels, value: st.count })
    return out
  }

const json = (res: http.ServerResponse, status: number, body: unknown, head: boolean) => {
  const text = JSON.stringify(body)
  res.writeHead(status, {
    "content-type": "application/json",
    "cache-control": "no-store",
    "content-length": Buffer.byteLength(text)
  })
  res.end(head ? undefined : text)
}

/** Builds the metrics registry and the operational routes. `tracing`: requests run in spans (OTLP is on). */
export const makeTelemetry = (
  sources: TelemetrySources,
  options: {
    readonly tracing: boolean
    /** The clock of the `/metrics` cache and scrape budget, in milliseconds (tests move it); `performance.now`. */
    readonly nowMs?: () => number
  }
): Telemetry => {
  const clock = options.nowMs ?? (() => performance.now())
  const registry = new Registry()
  collectDefaultMetrics({ register: registry, prefix: "market_data_process_" })

  // Request count and latency: the hot path's metrics, kept in plain per-label-set records (a Map lookup, a
  // bucket search, three increments; prom-client's own observe hashes the labels on every call) and handed to
  // the registry as ordinary counter and histogram samples when it is scraped.
  const stats = new Map<string, RequestStats>()
  registry.registerMetric(
    metricOf(
      "market_data_requests_total",
      "Requests answered, by operation, transport and HTTP status",
      "counter",
      () => [...stats.values()].map((st) => ({ labels: st.labels, value: st.count }))
    )
  )
  registry.registerMetric(
    metricOf(
      "market_data_request_duration_seconds",
      "Time to answer a request, by operation, transport and HTTP status",
      "histogram",
      () => [...stats.values()].flatMap(histogramSamples("market_data_request_duration_seconds"))
    )
  )
  // Per-answer counters of the pipeline, kept as plain numbers by label value (cheap on the paid path).
  const credits = new Map<string, number>()
  const idempotency = new Map<string, number>()
  const refusals = new Map<string, number>()
  const bump = (m: Map<string, number>, label: string, by = 1) => m.set(label, (m.get(label) ?? 0) + by)
  const counterOf = (name: string, help: string, label: string, m: Map<string, number>) =>
    registry.registerMetric(
      metricOf(name, help, "counter", () => [...m].map(([value, n]) => ({ labels: { [label]: value }, value: n })))
    )
  counterOf(
    "market_data_credits_charged_total",
    "Credits charged, by operation (a replay or an error charges nothing new)",
    "operation",
    credits
  )
  counterOf(
    "market_data_idempotency_outcomes_total",
    "Paid requests carrying an Idempotency-Key, by outcome: executed, replayed, conflict, in_progress, rejected, not_stored",
    "outcome",
    idempotency
  )
  counterOf(
    "market_data_rate_limit_refusals_total",
    "Requests refused 429 rate_limited, by operation",
    "operation",
    refusals
  )
  new Gauge({
    name: "market_data_source_lag_seconds",
    help: "Age of the newest data of each source component (venue or SEC EDGAR), at scrape time",
    labelNames: ["venue", "component"] as const,
    registers: [registry],
    async collect() {
      this.reset()
      const now = Date.now()
      for (const s of await Effect.runPromise(sources.sourceStatus)) {
        if (s.newestMs > 0) this.set({ venue: s.venue, component: s.component }, Math.max(0, (now - s.newestMs) / 1000))
      }
    }
  })
  new Gauge({
    name: "market_data_source_failing",
    help: "1 while fetching a source component is failing, else 0",
    labelNames: ["venue", "component"] as const,
    registers: [registry],
    async collect() {
      this.reset()
      for (const s of await Effect.runPromise(sources.sourceStatus)) {
        this.set({ venue: s.venue, component: s.component }, s.failing ? 1 : 0)
      }
    }
  })
  new Gauge({
    name: "market_data_source_rest_weight_per_minute",
    help: "Request weight each live venue's REST connector spent in the last minute (its `rest` source status), by venue",
    labelNames: ["venue"] as const,
    registers: [registry],
    async collect() {
      this.reset()
      for (const s of await Effect.runPromise(sources.sourceStatus)) {
        const m = s.component === "rest" ? /REST request weight (\d+)/.exec(s.detail ?? "") : null
        if (m !== null) this.set({ venue: s.venue }, Number(m[1]))
      }
    }
  })
  const poolStats = sources.poolStats
  if (poolStats !== undefined) {
    new Gauge({
      name: "market_data_db_pool_connections",
      help: "PostgreSQL pool connections by state: open (total), idle, in_use, waiting (requests queued for one), max",
      labelNames: ["state"] as const,
      registers: [registry],
      collect() {
        const p = poolStats()
        this.set({ state: "total" }, p.total)
        this.set({ state: "idle" }, p.idle)
        this.set({ state: "in_use" }, p.total - p.idle)
        this.set({ state: "waiting" }, p.waiting)
        this.set({ state: "max" }, p.max)
      }
    })
  }
  const statements = sources.statements
  if (statements !== undefined) {
    new Counter({
      name: "market_data_db_statements_total",
      help: "Statements sent to the database (PostgreSQL round trips; PGlite query and exec calls), whatever sent them",
      registers: [registry],
      collect() {
        this.reset()
        this.inc(statements())
      }
    })
  }
  const groupCommit = sources.groupCommit
  if (groupCommit !== undefined) {
    new Counter({
      name: "market_data_db_group_commit_total",
      help: "Group commit: batches sent (batches), store calls in them (calls), batches whose statement failed whole (failed)",
      labelNames: ["kind"] as const,
      registers: [registry],
      collect() {
        const g = groupCommit()
        this.reset()
        this.inc({ kind: "batches" }, g.batches)
        this.inc({ kind: "calls" }, g.calls)
        this.inc({ kind: "failed" }, g.failedBatches)
      }
    })
  }
  new Gauge({
    name: "market_data_ready",
    help: "1 when /readyz answers 200",
    registers: [registry],
    async collect() {
      this.set((await Effect.runPromise(sources.missing)).length === 0 ? 1 : 0)
    }
  })

  const statsOf = (r: RequestRecord): RequestStats => {
    const labels = { operation: operationLabel(r.operation), transport: r.transport, status: String(r.status) }
    const labelKey = `${labels.transport}\u0000${labels.operation}\u0000${labels.status}`
    const known = stats.get(labelKey)
    if (known !== undefined) return known
    const created: RequestStats = { labels, count: 0, sum: 0, buckets: new Float64Array(LATENCY_BUCKETS.length + 1) }
    stats.set(labelKey, created)
    return created
  }
  // By transport, then the transport's operation name, then status: no key string is built per request.
  const cache = {
    http: new Map<string, Map<number, RequestStats>>(),
    mcp: new Map<string, Map<number, RequestStats>>()
  }
  let cached = 0
  const record = (r: RequestRecord) => {
    const byOp = cache[r.transport]
    let byStatus = byOp.get(r.operation)
    let st = byStatus?.get(r.status)
    if (st === undefined) {
      st = statsOf(r)
      // Unknown operations share one label set but not one cache entry: cap the cache so a scan cannot grow it.
      if (cached < 10_000) {
        cached++
        if (byStatus === undefined) {
          byStatus = new Map()
          byOp.set(r.operation, byStatus)
        }
        byStatus.set(r.status, st)
      }
    }
    st.count++
    st.sum += r.seconds
    let b = 0
    while (b < LATENCY_BUCKETS.length && r.seconds > (LATENCY_BUCKETS[b] as number)) b++
    st.buckets[b] = (st.buckets[b] as number) + 1
  }

  const answered = (request: ApiRequest, answer: Answer) => {
    const o = answer.outcome
    const op = answer.op?.name ?? "unknown"
    if ((o._tag === "Json" || o._tag === "Failure") && o.creditsCharged > 0) bump(credits, op, o.creditsCharged)
    if (o._tag === "Failure" && o.error.code === "rate_limited") bump(refusals, op)
    const idem = idempotencyOutcome(request, answer)
    if (idem !== undefined) bump(idempotency, idem)
  }

  // The rendered text is kept for METRICS_CACHE_MS: however often `/metrics` is fetched, the registry renders
  // (about 5 ms of CPU for 47 KB) at most once a second, and fetches meanwhile share that render.
  let lastRender: { readonly atMs: number; readonly text: Promise<string> } | undefined
  const rendered = (nowMs: number): Promise<string> => {
    if (lastRender === undefined || nowMs - lastRender.atMs >= METRICS_CACHE_MS) {
      const text = registry.metrics()
      const entry = { atMs: nowMs, text }
      lastRender = entry
      text.catch(() => {
        if (lastRender === entry) lastRender = undefined
      })
    }
    return lastRender.text
  }
  const scrapeWindow = { startMs: Number.NEGATIVE_INFINITY, count: 0 }

  const handler = (serveMetrics: boolean) => (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = req.url ?? "/"
    const q = url.indexOf("?")
    const path = q < 0 ? url : url.slice(0, q)
    if (path !== HEALTH_PATH && path !== READY_PATH && !(serveMetrics && path === METRICS_PATH)) return false
    const method = req.method ?? "GET"
    const head = method === "HEAD"
    if (method !== "GET" && !head) {
      res.writeHead(405, { allow: "GET, HEAD", "content-type": "application/json" })
      res.end(
        JSON.stringify({
          error: { code: "method_not_allowed", message: `${method} is not allowed; use GET`, retryable: false }
        })
      )
      return true
    }
    if (path === HEALTH_PATH) {
      json(res, 200, { status: "ok" }, head)
      return true
    }
    if (path === READY_PATH) {
      Effect.runPromise(sources.missing).then(
        (missing) =>
          missing.length === 0
            ? json(res, 200, { status: "ready" }, head)
            : json(res, 503, { status: "not_ready", missing }, head),
        (e) => json(res, 503, { status: "not_ready", missing: [`readiness check failed: ${String(e)}`] }, head)
      )
      return true
    }
    // A scrape flood is answered from the cached text, at most MAX_SCRAPES_PER_SECOND a second: a scrape past
    // the budget waits for a later second (holding its connection, costing no CPU meanwhile) rather than being
    // refused, which would only have its client ask again at once.
    const answerScrape = () => {
      if (res.destroyed) return
      const nowMs = clock()
      if (nowMs - scrapeWindow.startMs >= 1_000) {
        scrapeWindow.startMs = nowMs
        scrapeWindow.count = 0
      }
      if (scrapeWindow.count >= MAX_SCRAPES_PER_SECOND) {
        setTimeout(answerScrape, Math.max(1, scrapeWindow.startMs + 1_000 - nowMs))
        return
      }
      scrapeWindow.count++
      writeMetrics(nowMs)
    }
    const writeMetrics = (nowMs: number) =>
      rendered(nowMs).then(
        (text) => {
          if (res.destroyed) return
          res.writeHead(200, {
            "content-type": registry.contentType,
            "cache-control": "no-store",
            "content-length": Buffer.byteLength(text)
          })
          res.end(head ? undefined : text)
        },
        (e) => {
          if (res.destroyed) return
          res.writeHead(500, { "content-type": "text/plain" })
          res.end(`metrics collection failed: ${String(e)}\n`)
        }
      )
    answerScrape()
    return true
  }

  return {
    registry,
    requestTelemetry: { record, tracing: options.tracing },
    pipelineObserver: { answered },
    handler
  }
}

/**
 * A server for `/metrics` alone (with `/healthz` and `/readyz`) on its own port, for the life of the scope.
 * Resolves to the port it listens on.
 */
export const serveMetricsPort = (telemetry: Telemetry, host: string, port: number) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly server: http.Server; readonly port: number }, Error>((resume) => {
      const answer = telemetry.handler(true)
      const server = http.createServer((req, res) => {
        if (answer(req, res)) return
        res.writeHead(404, { "content-type": "application/json" })
        res.end(
          JSON.stringify({
            error: { code: "not_found", message: "this port serves /metrics, /healthz and /readyz", retryable: false }
          })
        )
      })
      // Loopback by default, and few connections: the port is for scrapers, not for the public.
      server.maxConnections = METRICS_MAX_CONNECTIONS
      server.headersTimeout = 5_000
      server.requestTimeout = 10_000
      server.once("error", (e) => resume(Effect.fail(e)))
      server.listen(port, host, () => {
        const address = server.address()
        resume(Effect.succeed({ server, port: typeof address === "object" && address !== null ? address.port : port }))
      })
    }),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        server.close(() => resume(Effect.void))
        server.closeAllConnections()
      })
  ).pipe(Effect.map(({ port }) => port))

/** OTLP/HTTP (JSON) trace export to `<endpoint>/v1/traces` through Effect's OTLP tracer. */
export const layerTracing = (endpoint: string) =>
  OtlpTracer.layer({
    url: `${endpoint}/v1/traces`,
    resource: { serviceName: process.env.OTEL_SERVICE_NAME || "market-data", serviceVersion: "1.0.0" },
    exportInterval: "1 second"
  }).pipe(Layer.provide(OtlpSerialization.layerJson), Layer.provide(FetchHttpClient.layer))
