/**
 * The HTTP transport: `GET /api/v1/<operation>`, the docs page and the routes the composition root mounts (the
 * MCP endpoint), all on Node's `request` event through one handler (`makeRequestHandler`). It decodes the wire
 * request into an `ApiRequest`, runs the core pipeline, and encodes the `Answer` as a `WireResponse`: status from
 * the error table, headers (rate limit, credits, CORS, caching, the core's ETag), body; `writeAnswer`
 * (NodeWire.ts) writes every answer. No business logic lives here.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import {
  type Answer,
  type ApiError,
  admitKeyless,
  apiError,
  BASE_PATH,
  CREDITS_CHARGED_HEADER,
  creditsChargedOf,
  creditsHeaderOf,
  ErrorCatalog,
  type ErrorCode,
  etagOf,
  Handlers,
  handle,
  ifNoneMatchMatches,
  operation,
  type PipelineServices,
  type RateWindow,
  secondsUntilReset,
  type WireRequest,
  type WireResponse
} from "@market-data/core"
import { Context, Effect, Exit, Fiber, LogLevel, References, type Scope } from "effect"
import type * as Digest from "effect/crypto/Digest"
import { isDocsPagePath, makeDocsPage } from "./DocsPage.ts"
import { makeAnswerBatch, wireRequestOf, writeAnswer } from "./NodeWire.ts"
import { openApiDocument, rootDocument } from "./OpenApi.ts"
import { parseQuery } from "./Query.ts"
import { REQUEST_ID_HEADER, type RequestRecord, RequestTelemetry, requestIdOf } from "./Telemetry.ts"

/** Longest request target answered; longer is 414. */
export const MAX_URL_BYTES = 8192
/** Largest total of request header bytes answered; larger is 431. */
export const MAX_HEADER_BYTES = 16 * 1024

export const ALLOWED_METHODS = "GET, HEAD, OPTIONS"
/** The `Allow` header of a refused method on a paid operation: `HEAD` is never billed, so it is refused. */
export const PAID_ALLOWED_METHODS = "GET"

const EXPOSED: ReadonlyArray<string> = [
  "ETag",
  "RateLimit",
  "RateLimit-Policy",
  "Retry-After",
  "X-Credits-Charged",
  "Idempotent-Replayed",
  "X-Data-Source",
  "X-Catalog-Version",
  "X-Request-Id"
]

const CORS: Readonly<Record<string, string>> = {
  "access-control-allow-origin": "*",
  "access-control-expose-headers": EXPOSED.join(", ")
}

const PREFLIGHT: Readonly<Record<string, string>> = {
  ...CORS,
  "access-control-allow-methods": ALLOWED_METHODS,
  "access-control-allow-headers": "Authorization, Idempotency-Key, If-None-Match, Content-Type",
  "access-control-max-age": "86400"
}

/** HTTP status of an error code: the one table, from the contract's error catalog. */
export const httpStatus = (code: ErrorCode): number => ErrorCatalog[code].status

/** What a mounted route tells the request log line and the metrics about one exchange. */
export interface RouteExchange {
  readonly response: WireResponse
  /** What the log line calls the operation (`mcp tools/call price`). */
  readonly op: string
  /** Credits charged by the exchange, when it ran a paid operation. */
  readonly credits: number | undefined
  readonly keyId: string | undefined
}

/**
 * Another transport served beside the API at one exact path (the MCP endpoint), handed to this adapter by the
 * composition root: the HTTP transport knows its path, the transport name its metrics carry and its handler,
 * nothing else. A mounted route reads the request and answers through the core's wire records (its body streamed
 * when it is one), and answers its own CORS, methods and errors; it gets the request-size limits, the request ID,
 * the request log line, the telemetry record and the `headers` every answer carries, as every route does.
 */
export interface MountedRoute {
  readonly path: string
  readonly transport: RequestRecord["transport"]
  readonly handle: (request: WireRequest) => Effect.Effect<RouteExchange, never, PipelineServices>
  /**
   * Ends the route's long-lived answers (MCP listen streams) when the server stops, before it drains, so a stop
   * does not wait out the drain for them. Optional.
   */
  readonly shutdown?: Effect.Effect<void, never, PipelineServices>
}

/** What the composition root adds to the HTTP transport. */
export interface HttpRoutes {
  /** Transports mounted beside the API (matched before the API routes). */
  readonly mounts: ReadonlyArray<MountedRoute>
  /** Headers every answer carries, whatever its path (the catalog-version beacon). */
  readonly headers: Readonly<Record<string, string>>
}

/** The HTTP transport alone: the API, OpenAPI and the docs page, nothing mounted. */
export const API_ONLY: HttpRoutes = { mounts: [], headers: {} }

const mountAt = (routes: HttpRoutes, path: string): MountedRoute | undefined => {
  for (const mount of routes.mounts) if (mount.path === path) return mount
  return undefined
}

const jsonWire = (status: number, body: unknown, headers: Record<string, string>): WireResponse => ({
  status,
  headers: { ...CORS, "content-type": "application/json", ...headers },
  body: JSON.stringify(body)
})

/** The wire answer of an error, with the headers its code calls for. */
export const errorWire = (error: ApiError, headers: Record<string, string> = {}): WireResponse => {
  const extra: Record<string, string> = { "cache-control": "no-store", ...headers }
  if (error.code === "unauthenticated") extra["www-authenticate"] = 'Bearer realm="market-data"'
  if (error.code === "method_not_allowed") extra.allow ??= ALLOWED_METHODS
  if (error.retryAfterSeconds !== undefined) extra["retry-after"] = String(error.retryAfterSeconds)
  return jsonWire(httpStatus(error.code), error.toBody(), extra)
}

/** IETF httpapi RateLimit fields in structured-field syntax. */
export const rateLimitHeaders = (rate: RateWindow | undefined, nowMs: number): Record<string, string> =>
  rate === undefined
    ? {}
    : {
        "ratelimit-policy": `"default";q=${rate.limit};w=60`,
        ratelimit: `"default";r=${rate.remaining};t=${secondsUntilReset(rate, nowMs)}`
      }

/** Header values by lower-case name, keeping repeats (Node folds or drops some duplicates). */
const NONE: ReadonlyArray<string> = Object.freeze([])

/** The request headers the API routes read, every value kept in order (see NodeWire.ts `rawHeaderValues`). */
export interface RequestHeaders {
  readonly authorization: ReadonlyArray<string>
  readonly idempotencyKey: ReadonlyArray<string>
  readonly ifNoneMatch: ReadonlyArray<string>
  readonly forwardedFor: ReadonlyArray<string>
  readonly requestId: ReadonlyArray<string>
  /** The header bytes as `headerBytes` counts them. */
  readonly bytes: number
}

const add = (list: ReadonlyArray<string>, value: string): ReadonlyArray<string> =>
  list === NONE ? [value] : [...list, value]

/**
 * `rawHeaderValues` for every header the API routes read, and the header bytes, in one pass over Node's raw list:
 * a name is lower-cased only when its length is one of theirs.
 */
export const readHeaders = (raw: ReadonlyArray<string>): RequestHeaders => {
  let authorization = NONE
  let idempotencyKey = NONE
  let ifNoneMatch = NONE
  let forwardedFor = NONE
  let requestId = NONE
  let bytes = 0
  const n = raw.length
  for (let i = 0; i < n; i++) bytes += (raw[i] as string).length + 2
  for (let i = 0; i + 1 < n; i += 2) {
    const name = raw[i] as string
    const length = name.length
    if (length !== 12 && length !== 13 && length !== 15) continue
    const value = raw[i + 1] as string
    switch (name.toLowerCase()) {
      case "authorization":
        authorization = add(authorization, value)
        break
      case "idempotency-key":
        idempotencyKey = add(idempotencyKey, value)
        break
      case "if-none-match":
        ifNoneMatch = add(ifNoneMatch, value)
        break
      case "x-forwarded-for":
        forwardedFor = add(forwardedFor, value)
        break
      case REQUEST_ID_HEADER:
        requestId = add(requestId, value)
        break
    }
  }
  return { authorization, idempotencyKey, ifNoneMatch, forwardedFor, requestId, bytes }
}

/** A keyless, key-independent document with its ETag (the core's `etagOf`). */
interface PublicDocument {
  readonly body: string
  readonly contentType: string
  readonly etag: string | undefined
}

/** Keyless, key-independent documents: cached briefly and answered 304 on a matching `If-None-Match`. */
const publicWire = (
  doc: PublicDocument,
  ifNoneMatch: string | undefined,
  extra: Record<string, string> = {}
): WireResponse => {
  const headers: Record<string, string> = { ...CORS, "cache-control": "public, max-age=60", ...extra }
  if (doc.etag !== undefined) {
    headers.etag = doc.etag
    if (ifNoneMatchMatches(ifNoneMatch, doc.etag)) return { status: 304, headers }
  }
  return { status: 200, headers: { ...headers, "content-type": doc.contentType }, body: doc.body }
}

/** The root and OpenAPI documents of the implemented operations. */
interface Documents {
  readonly root: PublicDocument
  readonly openapi: PublicDocument
}

/**
 * The root and OpenAPI documents, built once per set of implemented operations by the handler that serves them
 * (one per server: `makeRequestHandler`), not kept at module scope.
 */
export type DocumentsOf = (handlers: ReadonlyMap<string, unknown>) => Effect.Effect<Documents, never, Digest.Digest>

export const makeDocumentsOf = (): DocumentsOf => {
  let built: { readonly handlers: object; readonly documents: Documents } | undefined
  const json = (value: unknown) => {
    const body = JSON.stringify(value)
    return Effect.map(etagOf(body), (etag): PublicDocument => ({ body, contentType: "application/json", etag }))
  }
  return (handlers) => {
    if (built !== undefined && built.handlers === handlers) return Effect.succeed(built.documents)
    const implemented = new Set(handlers.keys())
    return Effect.map(
      Effect.all({ root: json(rootDocument(implemented)), openapi: json(openApiDocument(implemented)) }),
      (documents) => {
        built = { handlers, documents }
        return documents
      }
    )
  }
}

/** Encodes a pipeline answer. */
export const encodeAnswerWire = (answer: Answer, ifNoneMatch: string | undefined): WireResponse => {
  const headers: Record<string, string> = rateLimitHeaders(answer.rate, answer.nowMs)
  const o = answer.outcome
  const credits = creditsHeaderOf(answer)
  if (credits !== undefined) headers[CREDITS_CHARGED_HEADER] = credits
  const cache = (maxAge: number | undefined) =>
    maxAge === undefined ? "private, no-store" : `private, max-age=${maxAge}`
  switch (o._tag) {
    case "Failure":
      return errorWire(o.error, headers)
    case "Markdown":
      return publicWire(
        { body: o.markdown, contentType: "text/markdown; charset=utf-8", etag: o.etag },
        ifNoneMatch,
        headers
      )
    case "NotModified":
      return {
        status: 304,
        headers: { ...CORS, ...headers, etag: o.etag, "cache-control": cache(o.maxAgeSeconds) }
      }
    case "Replay":
      return {
        status: o.answer.status,
        headers: {
          ...CORS,
          "content-type": "application/json",
          ...o.answer.headers,
          ...headers,
          "cache-control": "private, no-store",
          "idempotent-replayed": "true"
        },
        body: o.answer.body
      }
    case "Json": {
      if (answer.op?.auth === "keyless")
        return publicWire({ body: o.body, contentType: "application/json", etag: o.etag }, ifNoneMatch, headers)
      // One object in the order the spreads gave (CORS, type, cache, ETag, source, rate limit, credits), built
      // without the intermediate ones: this is every paid answer.
      const json: Record<string, string> = {
        "access-control-allow-origin": CORS["access-control-allow-origin"] as string,
        "access-control-expose-headers": CORS["access-control-expose-headers"] as string,
        "content-type": "application/json",
        "cache-control": cache(o.maxAgeSeconds)
      }
      if (o.etag !== undefined) json.etag = o.etag
      if (o.dataSource !== undefined) json["x-data-source"] = o.dataSource
      return { status: 200, headers: Object.assign(json, headers), body: o.body }
    }
  }
}

/** What the request log line records. */
interface LogFields {
  op: string
  status: number
  credits: number | undefined
  key_id: string | undefined
  /** Also sent back as `X-Request-Id`. */
  request_id: string
}

const newLog = (requestId: string): LogFields => ({
  op: "-",
  status: 0,
  credits: undefined,
  key_id: undefined,
  request_id: requestId
})

/** The request log line (info level). */
const logRequest = (method: string, log: LogFields, started: number) =>
  Effect.logInfo("request").pipe(
    Effect.annotateLogs({
      method,
      request_id: log.request_id,
      op: log.op,
      status: log.status,
      ms: Math.round((performance.now() - started) * 10) / 10,
      ...(log.credits === undefined ? {} : { credits: log.credits }),
      ...(log.key_id === undefined ? {} : { key_id: log.key_id })
    })
  )

const internalErrorWire = () =>
  errorWire(apiError("internal_error", "internal error; nothing was charged, retry later"))

/** Answers for requests over this service's limits, whatever their path. */
const overLimitsOf = (url: string, headerBytes: number): WireResponse | undefined => {
  // A UTF-16 unit is at most 3 UTF-8 bytes: a short target needs no count.
  if (url.length * 3 > MAX_URL_BYTES && Buffer.byteLength(url) > MAX_URL_BYTES) {
    return errorWire(apiError("uri_too_long", `the request target exceeds ${MAX_URL_BYTES} bytes`))
  }
  if (headerBytes > MAX_HEADER_BYTES) {
    return errorWire(apiError("headers_too_large", `request headers exceed ${MAX_HEADER_BYTES} bytes`))
  }
  return undefined
}

const pathOf = (url: string): string => {
  const q = url.indexOf("?")
  return q < 0 ? url : url.slice(0, q)
}

/** The API's parts of a request. */
interface ApiRequest {
  readonly method: string
  /** The request target: path and query. */
  readonly url: string
  readonly headers: RequestHeaders
  readonly remoteAddress: string | undefined
}

/**
 * The API routes: the root and OpenAPI documents and `/api/v1/<operation>`; every other path outside the mounted
 * routes and the docs page is `unknown_operation`. Never fails.
 */
const apiRoute = (
  request: ApiRequest,
  log: LogFields,
  documentsOf: DocumentsOf
): Effect.Effect<WireResponse, never, PipelineServices> => {
  // Plain combinators rather than a generator: this runs for every request.
  const url = request.url
  const headers = request.headers
  const q = url.indexOf("?")
  const path = q < 0 ? url : url.slice(0, q)
  const query = q < 0 ? "" : url.slice(q + 1)
  const method = request.method.toUpperCase()

  let target: { kind: "root" } | { kind: "openapi" } | { kind: "op"; name: string }
  if (path === BASE_PATH || path === `${BASE_PATH}/`) target = { kind: "root" }
  else if (path === `${BASE_PATH}/openapi.json`) target = { kind: "openapi" }
  else if (path.startsWith(`${BASE_PATH}/`)) target = { kind: "op", name: safeDecode(path.slice(BASE_PATH.length + 1)) }
  else {
    log.op = "-"
    return Effect.succeed(
      errorWire(
        apiError(
          "unknown_operation",
          `nothing at ${JSON.stringify(path.slice(0, 128))}; operations live under ${BASE_PATH}/<operation>`
        )
      )
    )
  }
  log.op = target.kind === "op" ? target.name : target.kind

  if (method === "OPTIONS") return Effect.succeed({ status: 204, headers: PREFLIGHT })
  // A paid operation is GET only: a HEAD would be billed for a body it never receives, so it is refused before
  // anything runs (no key check, no rate unit, no credit), as any other method is. Free routes keep HEAD.
  const paidOp = target.kind === "op" && operation(target.name)?.auth === "paid"
  if (method !== "GET" && (method !== "HEAD" || paidOp)) {
    return Effect.succeed(
      errorWire(
        apiError("method_not_allowed", `${method} is not allowed${paidOp ? " on a paid operation" : ""}; use GET`),
        paidOp ? { allow: PAID_ALLOWED_METHODS } : {}
      )
    )
  }
  const ifNoneMatch = joined(headers.ifNoneMatch)

  if (target.kind !== "op") {
    // The root and OpenAPI documents are keyless requests like any other: a presented key is checked and the
    // caller spends a rate unit (see `admitKeyless`).
    const kind = target.kind
    return Effect.flatMap(
      admitKeyless({
        authorization: headers.authorization,
        client: request.remoteAddress ?? "unknown",
        forwardedFor: headers.forwardedFor
      }),
      (admitted) => {
        log.key_id = admitted.keyId
        const headers = rateLimitHeaders(admitted.rate, admitted.nowMs)
        if (admitted.refusal !== undefined) return Effect.succeed(errorWire(admitted.refusal, headers))
        return Effect.map(Effect.flatMap(Effect.service(Handlers), documentsOf), (documents) =>
          publicWire(documents[kind], ifNoneMatch, headers)
        )
      }
    )
  }
  const name = target.name
  return Effect.map(
    handle({
      operation: name,
      params: parseQuery(query),
      authorization: headers.authorization,
      idempotencyKey: headers.idempotencyKey,
      ...(ifNoneMatch === undefined ? {} : { ifNoneMatch }),
      client: request.remoteAddress ?? "unknown",
      forwardedFor: headers.forwardedFor
    }),
    (answer) => {
      if (answer.op === undefined)
        return errorWire(
          apiError(
            "unknown_operation",
            `no operation named ${JSON.stringify(name.slice(0, 64))}; see ${BASE_PATH}/schema`
          )
        )
      log.key_id = answer.keyId
      log.credits = answer.op.auth === "paid" ? creditsChargedOf(answer.outcome) : undefined
      return encodeAnswerWire(answer, ifNoneMatch)
    }
  )
}

/** A mounted route's answer, its log fields noted. */
const mountRoute = (
  mount: MountedRoute,
  req: IncomingMessage,
  log: LogFields
): Effect.Effect<WireResponse, never, PipelineServices> =>
  Effect.map(mount.handle(wireRequestOf(req)), (exchange) => {
    log.op = exchange.op
    log.credits = exchange.credits
    log.key_id = exchange.keyId
    return exchange.response
  })

/** The human docs page and its assets: keyless, zero credits, outside the API (see DocsPage.ts). */
const docsRoute = (
  docsPage: ReturnType<typeof makeDocsPage>,
  path: string,
  request: ApiRequest,
  acceptEncoding: string | undefined,
  log: LogFields
): Effect.Effect<WireResponse, never, PipelineServices> => {
  log.op = "docs_page"
  const method = request.method.toUpperCase()
  const page = { method, acceptEncoding, ifNoneMatch: joined(request.headers.ifNoneMatch) }
  if (method !== "GET" && method !== "HEAD") return docsPage(page, path)
  // A keyless request: the presented key is checked and the caller spends a rate unit (`admitKeyless`).
  return Effect.flatMap(
    admitKeyless({
      authorization: request.headers.authorization,
      client: request.remoteAddress ?? "unknown",
      forwardedFor: request.headers.forwardedFor
    }),
    (admitted) => {
      log.key_id = admitted.keyId
      const rate = rateLimitHeaders(admitted.rate, admitted.nowMs)
      if (admitted.refusal !== undefined) return Effect.succeed(errorWire(admitted.refusal, rate))
      return Effect.map(docsPage(page, path), (wire) => ({ ...wire, headers: { ...wire.headers, ...rate } }))
    }
  )
}

/**
 * The HTTP transport's one request handler, for Node's `request` event: every path (the API, the docs page, the
 * mounted routes) is answered through it. One fiber per request runs the route with the given services; the
 * answer is written by `writeAnswer` (with `routes.headers` and the request ID), the request log line and the
 * telemetry record taken the same way for every route. A defect becomes 500 `internal_error`; a client gone
 * before its answer interrupts the fiber (holds are released as on any interruption). `scope`: where fibers that
 * outlive their turn are kept, so that closing it (after the server drained) interrupts those still running.
 * Everything it keeps (the root and OpenAPI documents, the docs page's assets, the write batch) is its own.
 */
export const makeRequestHandler = (
  context: Context.Context<PipelineServices>,
  routes: HttpRoutes = API_ONLY,
  scope?: Scope.Scope
): ((req: IncomingMessage, res: ServerResponse) => void) => {
  const run = Effect.runForkWith(context)
  // The request line is logged at info: below the configured level it is not even built.
  const logsRequests = LogLevel.isGreaterThanOrEqualTo("Info", Context.get(context, References.MinimumLogLevel))
  const telemetry = Context.get(context, RequestTelemetry)
  const record = telemetry.record
  const documentsOf = makeDocumentsOf()
  const docsPage = makeDocsPage(errorWire)
  const batch = makeAnswerBatch()
  const extra = routes.headers
  return (req, res) => {
    const started = performance.now()
    const url = req.url ?? "/"
    const method = req.method ?? "GET"
    const headers = readHeaders(req.rawHeaders)
    const log = newLog(requestIdOf(joined(headers.requestId)))
    const path = pathOf(url)
    const mount = mountAt(routes, path)
    const request: ApiRequest = { method, url, headers, remoteAddress: req.socket.remoteAddress }
    const limited = overLimitsOf(url, headers.bytes)
    const answered =
      limited !== undefined
        ? Effect.succeed(limited)
        : mount !== undefined
          ? mountRoute(mount, req, log)
          : isDocsPagePath(path)
            ? docsRoute(docsPage, path, request, joinedHeader(req.headers["accept-encoding"]), log)
            : apiRoute(request, log, documentsOf)
    const safe = Effect.catchCause(answered, (cause) =>
      Effect.logError("unhandled", cause).pipe(
        Effect.annotateLogs({ request_id: log.request_id }),
        Effect.as(internalErrorWire())
      )
    )
    // The request line is written inside the fiber (the logger is the fiber's); the telemetry record outside it.
    const routed = logsRequests
      ? Effect.tap(safe, (wire) => {
          log.status = wire.status
          return logRequest(method, log, started)
        })
      : safe
    const fiber = run(telemetry.tracing ? Effect.withSpan(routed, `${method} ${path}`) : routed)
    const wireOf = (exit: Exit.Exit<WireResponse>): WireResponse | undefined => {
      // Not answered: interrupted (the client gone, the server stopped).
      if (!Exit.isSuccess(exit)) return undefined
      if (record !== undefined)
        record({
          transport: mount === undefined ? "http" : mount.transport,
          operation: log.op,
          status: exit.value.status,
          seconds: (performance.now() - started) / 1000
        })
      return exit.value
    }
    const done = fiber.pollUnsafe()
    if (done !== undefined) {
      // Answered at once: written with the others of this event-loop turn (`makeAnswerBatch`).
      const wire = wireOf(done)
      if (wire !== undefined) batch.writeSoon(res, wire, extra, log.request_id)
      return
    }
    if (scope !== undefined) Fiber.runIn(fiber, scope)
    fiber.addObserver((exit) => {
      const wire = wireOf(exit)
      if (wire === undefined || res.writableEnded || res.destroyed) return
      try {
        writeAnswer(res, wire, extra, log.request_id)
      } catch {
        // Node refused the answer (it validated its headers): the client gets a closed connection, not a hang.
        res.destroy()
      }
    })
    res.on("close", () => {
      if (!res.writableEnded) fiber.interruptUnsafe()
    })
  }
}

/** Values of a repeated header as Node's `req.headers` joins them (", "); undefined when absent. */
const joined = (values: ReadonlyArray<string>): string | undefined =>
  values.length === 0 ? undefined : values.length === 1 ? values[0] : values.join(", ")

const joinedHeader = (value: string | ReadonlyArray<string> | undefined): string | undefined =>
  typeof value === "string" || value === undefined ? value : value.join(", ")

const safeDecode = (s: string): string => {
  // Only a percent escape decodes to something else.
  if (s.indexOf("%") < 0) return s
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}
