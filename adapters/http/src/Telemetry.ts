/**
 * What the HTTP transport tells an operator's telemetry about each request it answered (the API routes, MCP and
 * the docs page): a port with a no-op default, so the transport needs no metrics library and pays nothing when
 * no one listens. `infra` provides the Prometheus and OpenTelemetry implementation.
 */
import { randomUUID } from "node:crypto"
import { Context } from "effect"

/** One answered request. */
export interface RequestRecord {
  /** `mcp` for `/api/mcp`, `http` for everything else. */
  readonly transport: "http" | "mcp"
  /** What the request log line calls the operation (`price`, `root`, `docs_page`, `mcp tools/call price`, `-`). */
  readonly operation: string
  readonly status: number
  readonly seconds: number
}

export interface RequestTelemetryShape {
  /** Called once per answered request, synchronously: must be cheap and must not throw. */
  readonly record: ((r: RequestRecord) => void) | undefined
  /** Whether each request runs in a trace span (an OTLP exporter is configured). */
  readonly tracing: boolean
}

export const RequestTelemetry = Context.Reference<RequestTelemetryShape>("@market-data/http/RequestTelemetry", {
  defaultValue: () => ({ record: undefined, tracing: false })
})

/** The response header carrying the request ID (also in the request's log lines as `request_id`). */
export const REQUEST_ID_HEADER = "x-request-id"

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * The request's ID: the caller's `X-Request-Id` when it is one plain token (letters, digits, `.`, `_`, `:`, `-`,
 * at most 128), so a proxy's ID carries through; otherwise a fresh UUID.
 */
export const requestIdOf = (incoming: string | ReadonlyArray<string> | undefined): string =>
  typeof incoming === "string" && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID()
