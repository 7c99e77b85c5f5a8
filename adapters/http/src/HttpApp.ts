/**
 * The HTTP transport: `GET /api/v1/<operation>`. It decodes the wire request into an `ApiRequest`, runs the
 * core pipeline, and encodes the `Answer`: status from the error table, headers (rate limit, credits, CORS,
 * caching, ETag), body. No business logic lives here.
 */
import { createHash } from "node:crypto"
import type { IncomingMessage } from "node:http"
import {
  type Answer,
  type ApiError,
  apiError,
  BASE_PATH,
  ErrorCatalog,
  type ErrorCode,
  Handlers,
  handle,
  type Outcome,
  type PipelineServices,
  type RateWindow,
  secondsUntilReset
} from "@market-data/core"
import { CATALOG_VERSION_HEADER, catalogVersion, MCP_PATH, mcpEndpoint } from "@market-data/mcp"
import { Effect, Option } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { docsPage, isDocsPagePath } from "./DocsPage.ts"
import { openApiDocument, rootDocument } from "./OpenApi.ts"
import { parseQuery } from "./Query.ts"

/** Longest request target answered; longer is 414. */
export const MAX_URL_BYTES = 8192
/** Largest total of request header bytes answered; larger is 431. */
export const MAX_HEADER_BYTES = 16 * 1024

export const ALLOWED_METHODS = "GET, HEAD, OPTIONS"

const EXPOSED = [
  "ETag",
  "RateLimit",
  "RateLimit-Policy",
  "Retry-After",
  "X-Credits-Charged",
  "Idempotent-Replayed",
  "X-Data-Source",
  "X-Catalog-Version"
]

const CORS: Record<string, string> = {
  "access-control-allow-origin": "*",
  "access-control-expose-headers": EXPOSED.join(", ")
}

const PREFLIGHT: Record<string, string> = {
  ...CORS,
  "access-control-allow-methods": ALLOWED_METHODS,
  "access-control-allow-headers": "Authorization, Idempotency-Key, If-None-Match, Content-Type",
  "access-control-max-age": "86400"
}

/** HTTP status of an error code: the one table, from the contract's error catalog. */
export const httpStatus = (code: ErrorCode): number => ErrorCatalog[code].status

const json = (status: number, body: unknown, headers: Record<string, string>) =>
  HttpServerResponse.text(JSON.stringify(body), {
    status,
    contentType: "application/json",
    headers: { ...CORS, ...headers }
  })

/** The JSON answer of an error, with the headers its code calls for. */
export const errorResponse = (error: ApiError, headers: Record<string, string> = {}) => {
  const extra: Record<string, string> = { "cache-control": "no-store", ...headers }
  if (error.code === "unauthenticated") extra["www-authenticate"] = 'Bearer realm="market-data"'
  if (error.code === "method_not_allowed") extra.allow = ALLOWED_METHODS
  if (error.retryAfterSeconds !== undefined) extra["retry-after"] = String(error.retryAfterSeconds)
  return json(httpStatus(error.code), error.toBody(), extra)
}

/** IETF httpapi RateLimit fields in structured-field syntax. */
export const rateLimitHeaders = (rate: RateWindow | undefined, nowMs: number): Record<string, string> =>
  rate === undefined
    ? {}
    : {
        "ratelimit-policy": `"default";q=${rate.limit};w=60`,
        ratelimit: `"default";r=${rate.remaining};t=${secondsUntilReset(rate, nowMs)}`
      }

/** Strong ETag of a body's bytes. */
export const etagOf = (body: string): string =>
  `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`

const matches = (ifNoneMatch: string | undefined, etag: string): boolean => {
  if (ifNoneMatch === undefined) return false
  if (ifNoneMatch.trim() === "*") return true
  return ifNoneMatch.split(",").some((t) => t.trim().replace(/^W\//, "") === etag)
}

/** Header values by lower-case name, keeping repeats (Node folds or drops some duplicates). */
const rawHeaderValues = (req: IncomingMessage | undefined, name: string): Array<string> => {
  const out: Array<string> = []
  const raw = req?.rawHeaders ?? []
  for (let i = 0; i + 1 < raw.length; i += 2)
    if ((raw[i] as string).toLowerCase() === name) out.push(raw[i + 1] as string)
  return out
}

const headerBytes = (req: IncomingMessage | undefined): number => {
  let n = 0
  for (const part of req?.rawHeaders ?? []) n += part.length + 2
  return n
}

/** Keyless, key-independent documents: cached briefly and answered 304 on a matching `If-None-Match`. */
const publicDocument = (body: string, contentType: string, ifNoneMatch: string | undefined, head: boolean) => {
  const etag = etagOf(body)
  const headers = { ...CORS, etag, "cache-control": "public, max-age=60" }
  if (matches(ifNoneMatch, etag)) return HttpServerResponse.empty({ status: 304, headers })
  return HttpServerResponse.text(head ? "" : body, { status: 200, contentType, headers })
}

/** Encodes a pipeline answer. */
export const encodeAnswer = (answer: Answer, ifNoneMatch: string | undefined, head: boolean) => {
  const headers: Record<string, string> = rateLimitHeaders(answer.rate, answer.nowMs)
  const o = answer.outcome
  if (answer.op?.auth === "paid" && o._tag !== "Replay") headers["x-credits-charged"] = String(creditsOf(o))
  const cache = (maxAge: number | undefined) =>
    maxAge === undefined ? "private, no-store" : `private, max-age=${maxAge}`
  switch (o._tag) {
    case "Failure":
      return errorResponse(o.error, headers)
    case "Markdown":
      return publicDocument(o.markdown, "text/markdown; charset=utf-8", ifNoneMatch, head).pipe(
        HttpServerResponse.setHeaders(headers)
      )
    case "NotModified":
      return HttpServerResponse.empty({
        status: 304,
        headers: { ...CORS, ...headers, etag: o.etag, "cache-control": cache(o.maxAgeSeconds) }
      })
    case "Replay":
      return HttpServerResponse.text(head ? "" : o.answer.body, {
        status: o.answer.status,
        contentType: o.answer.headers["content-type"] ?? "application/json",
        headers: {
          ...CORS,
          ...o.answer.headers,
          ...headers,
          "cache-control": "private, no-store",
          "idempotent-replayed": "true"
        }
      })
    case "Json": {
      if (answer.op?.auth === "keyless") {
        return publicDocument(o.body, "application/json", ifNoneMatch, head).pipe(
          HttpServerResponse.setHeaders(headers)
        )
      }
      return HttpServerResponse.text(head ? "" : o.body, {
        status: 200,
        contentType: "application/json",
        headers: {
          ...CORS,
          "cache-control": cache(o.maxAgeSeconds),
          ...(o.etag === undefined ? {} : { etag: o.etag }),
          ...(o.dataSource === undefined ? {} : { "x-data-source": o.dataSource }),
          ...headers
        }
      })
    }
  }
}

const creditsOf = (o: Outcome): number => {
  switch (o._tag) {
    case "Json":
    case "Failure":
      return o.creditsCharged
    case "Replay":
      return Number(o.answer.headers["x-credits-charged"] ?? 0)
    default:
      return 0
  }
}

/** What the request log line records. */
interface LogFields {
  op: string
  status: number
  credits: number | undefined
  key_id: string | undefined
}

/**
 * The HTTP application. Requires the pipeline's services; answers every request (never a 5xx for bad
 * input; a defect becomes 500 `internal_error`).
 */
export const httpApp: Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  never,
  HttpServerRequest.HttpServerRequest | PipelineServices
> = Effect.gen(function* () {
  const started = performance.now()
  const request = yield* HttpServerRequest.HttpServerRequest
  const source = request.source as IncomingMessage | undefined
  const log: LogFields = { op: "-", status: 0, credits: undefined, key_id: undefined }
  // Every answer carries the catalog-version beacon (a hash of the registry; see @market-data/mcp `catalogVersion`).
  const response = HttpServerResponse.setHeader(
    yield* route(request, source, log),
    CATALOG_VERSION_HEADER,
    catalogVersion
  )
  log.status = response.status
  yield* Effect.logInfo("request").pipe(
    Effect.annotateLogs({
      method: request.method,
      op: log.op,
      status: log.status,
      ms: Math.round((performance.now() - started) * 10) / 10,
      ...(log.credits === undefined ? {} : { credits: log.credits }),
      ...(log.key_id === undefined ? {} : { key_id: log.key_id })
    })
  )
  return response
}).pipe(
  Effect.catchCause((cause) =>
    Effect.logError("unhandled", cause).pipe(
      Effect.as(errorResponse(apiError("internal_error", "internal error; nothing was charged, retry later")))
    )
  )
)

const route = (request: HttpServerRequest.HttpServerRequest, source: IncomingMessage | undefined, log: LogFields) =>
  Effect.gen(function* () {
    const url = request.url
    if (Buffer.byteLength(url) > MAX_URL_BYTES) {
      return errorResponse(apiError("uri_too_long", `the request target exceeds ${MAX_URL_BYTES} bytes`))
    }
    if (headerBytes(source) > MAX_HEADER_BYTES) {
      return errorResponse(apiError("headers_too_large", `request headers exceed ${MAX_HEADER_BYTES} bytes`))
    }
    const q = url.indexOf("?")
    const path = q < 0 ? url : url.slice(0, q)
    const query = q < 0 ? "" : url.slice(q + 1)
    const method = request.method.toUpperCase()

    // The MCP endpoint. It answers CORS itself: unlike the keyless-readable GET API (`*` above), it checks
    // `Origin` (absent, loopback on any port, or listed in MARKET_DATA_ALLOWED_ORIGINS; otherwise 403) and
    // echoes an allowed origin, because a browser page must not drive a local or keyed MCP session.
    if (path === MCP_PATH) {
      const exchange = yield* mcpEndpoint(request)
      log.op = exchange.op
      log.credits = exchange.credits
      log.key_id = exchange.keyId
      return exchange.response
    }

    // The human docs page and its assets (keyless, zero credits, outside the API; see DocsPage.ts).
    if (isDocsPagePath(path)) {
      log.op = "docs_page"
      return yield* docsPage(request, path)
    }

    const handlers = yield* Handlers
    const implemented = new Set(handlers.keys())
    const ifNoneMatchValues = rawHeaderValues(source, "if-none-match")
    const ifNoneMatch = ifNoneMatchValues.length > 0 ? ifNoneMatchValues.join(", ") : undefined

    let target: { kind: "root" } | { kind: "openapi" } | { kind: "op"; name: string }
    if (path === BASE_PATH || path === `${BASE_PATH}/`) target = { kind: "root" }
    else if (path === `${BASE_PATH}/openapi.json`) target = { kind: "openapi" }
    else if (path.startsWith(`${BASE_PATH}/`))
      target = { kind: "op", name: safeDecode(path.slice(BASE_PATH.length + 1)) }
    else {
      log.op = "-"
      return errorResponse(
        apiError(
          "unknown_operation",
          `nothing at ${JSON.stringify(path.slice(0, 128))}; operations live under ${BASE_PATH}/<operation>`
        )
      )
    }
    log.op = target.kind === "op" ? target.name : target.kind

    if (method === "OPTIONS") return HttpServerResponse.empty({ status: 204, headers: PREFLIGHT })
    if (method !== "GET" && method !== "HEAD") {
      return errorResponse(apiError("method_not_allowed", `${method} is not allowed; use GET`))
    }
    const head = method === "HEAD"

    if (target.kind === "root") {
      return publicDocument(JSON.stringify(rootDocument(implemented)), "application/json", ifNoneMatch, head)
    }
    if (target.kind === "openapi") {
      return publicDocument(JSON.stringify(openApiDocument(implemented)), "application/json", ifNoneMatch, head)
    }

    const pairs = parseQuery(query)
    const answer = yield* handle({
      operation: target.name,
      params: pairs,
      authorization: rawHeaderValues(source, "authorization"),
      idempotencyKey: rawHeaderValues(source, "idempotency-key"),
      ...(ifNoneMatch === undefined ? {} : { ifNoneMatch }),
      client: Option.getOrElse(request.remoteAddress, () => "unknown")
    })
    if (answer.op === undefined)
      return errorResponse(
        apiError(
          "unknown_operation",
          `no operation named ${JSON.stringify(target.name.slice(0, 64))}; see ${BASE_PATH}/schema`
        )
      )
    log.key_id = answer.keyId
    log.credits = answer.op.auth === "paid" ? creditsOf(answer.outcome) : undefined
    return encodeAnswer(answer, ifNoneMatch, head)
  })

const safeDecode = (s: string): string => {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}
