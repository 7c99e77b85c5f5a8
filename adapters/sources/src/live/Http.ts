/**
 * HTTP for the live sources: Node's global `fetch` inside Effect, with a per-request timeout (the request is
 * aborted when it runs out or the fiber is interrupted), and every way a request can go wrong turned into one
 * `SourceError` with a kind the scheduler and the freshness status can act on: `status` (a non-2xx answer,
 * with `Retry-After` when sent), `timeout`, `network` (connection refused, reset, truncated body) and `format`
 * (a body that is not what the venue documents).
 */
import { Clock, Data, Effect } from "effect"

export type SourceErrorKind = "status" | "timeout" | "network" | "format"

/** A failed fetch from a live source. */
export class SourceError extends Data.TaggedError("SourceError")<{
  /** `binance`, `bybit`, `okx`, `hyperliquid` or `sec`. */
  readonly source: string
  readonly kind: SourceErrorKind
  /** What was being fetched (a path, never a secret). */
  readonly what: string
  readonly message: string
  /** HTTP status for `status` errors. */
  readonly status?: number
  /** Milliseconds the source asked us to wait (`Retry-After`), for 429 and 503 answers. */
  readonly retryAfterMs?: number
}> {}

export interface HttpRequest {
  readonly source: string
  readonly url: string
  readonly method?: "GET" | "POST"
  /** JSON body for POST. */
  readonly body?: unknown
  readonly headers?: Readonly<Record<string, string>>
  readonly timeoutMs: number
}

/**
 * `Retry-After` in milliseconds from `nowMs`: delta-seconds or an HTTP date (RFC 9110 §10.2.3); undefined when
 * absent or unreadable.
 */
export const parseRetryAfterMs = (value: string | null, nowMs: number): number | undefined => {
  if (value === null) return undefined
  const text = value.trim()
  if (/^\d+$/.test(text)) return Number(text) * 1000
  const at = Date.parse(text)
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs)
}

const pathOf = (url: string): string => {
  try {
    const u = new URL(url)
    return `${u.pathname}${u.search}`
  } catch {
    return url
  }
}

const describeCause = (cause: unknown): string => {
  if (cause instanceof Error) {
    const inner = (cause as { cause?: unknown }).cause
    const code = inner instanceof Error ? ((inner as { code?: string }).code ?? inner.message) : undefined
    return code === undefined ? cause.message : `${cause.message} (${code})`
  }
  return String(cause)
}

/** The body of a 2xx answer as text; any other outcome is a `SourceError`. */
export const fetchText = (request: HttpRequest): Effect.Effect<string, SourceError> => {
  const what = `${request.method ?? "GET"} ${pathOf(request.url)}`
  const fail = (kind: SourceErrorKind, message: string, extra: { status?: number; retryAfterMs?: number } = {}) =>
    new SourceError({ source: request.source, kind, what, message, ...extra })
  const attempt = Effect.gen(function* () {
    const response = yield* Effect.tryPromise({
      try: (signal) =>
        fetch(request.url, {
          method: request.method ?? "GET",
          signal,
          headers: {
            Accept: "application/json",
            ...(request.body === undefined ? {} : { "Content-Type": "application/json" }),
            ...request.headers
          },
          ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) })
        }),
      catch: (cause) => fail("network", describeCause(cause))
    })
    if (!response.ok) {
      const nowMs = yield* Clock.currentTimeMillis
      const retryAfterMs = parseRetryAfterMs(response.headers.get("retry-after"), nowMs)
      // Drain the body so the connection is released; its text helps the log.
      const body = yield* Effect.promise(() => response.text().catch(() => ""))
      return yield* Effect.fail(
        fail("status", `HTTP ${response.status}${body === "" ? "" : `: ${body.slice(0, 200)}`}`, {
          status: response.status,
          ...(retryAfterMs === undefined ? {} : { retryAfterMs })
        })
      )
    }
    return yield* Effect.tryPromise({
      try: () => response.text(),
      catch: (cause) => fail("network", `body: ${describeCause(cause)}`)
    })
  })
  return Effect.timeoutOrElse(attempt, {
    duration: request.timeoutMs,
    orElse: () => Effect.fail(fail("timeout", `no complete answer within ${request.timeoutMs} ms`))
  })
}

/** The body of a 2xx answer parsed as JSON (`format` error when it is not JSON). */
export const fetchJson = (request: HttpRequest): Effect.Effect<unknown, SourceError> =>
  Effect.flatMap(fetchText(request), (text) =>
    Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: () =>
        new SourceError({
          source: request.source,
          kind: "format",
          what: `${request.method ?? "GET"} ${pathOf(request.url)}`,
          message: `not JSON: ${text.slice(0, 80)}`
        })
    })
  )
