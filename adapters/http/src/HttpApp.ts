/**
 * The HTTP transport: `GET /api/v1/<operation>`. It decodes the wire request into an `ApiRequest`, runs the
 * core pipeline, and encodes the `Answer`: status from the error table, headers (rate limit, credits, CORS,
 * caching, ETag), body. No business logic lives here.
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
  secondsUntilReset
} from "@market-data/core"
import { Context, Effect, Exit, LogLevel, Option, References } from "effect"
import type * as Digest from "effect/crypto/Digest"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { docsPage, isDocsPagePath } from "./DocsPage.ts"
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

const EXPOSED = [
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

/** What a mounted route tells the request log line and the metrics about one exchange. */
export interface RouteExchange {
  readonly response: HttpServerResponse.HttpServerResponse
  /** What the log line calls the operation (`mcp tools/call price`). */
  readonly op: string
  /** Credits charged by the exchange, when it ran a paid operation. */
  readonly credits: number | undefined
  readonly keyId: string | undefined
}

/**
 * Another transport served beside the API at one exact path (the MCP endpoint), handed to this adapter by the
 * composition root: the HTTP transport knows its path, the transport name its metrics carry and its handler,
 * nothing else. A mounted route answers its own CORS, methods and errors; it gets the request-size limits, the
 * request ID, the request log line and the `headers` every answer carries.
 */
export interface MountedRoute {
  readonly path: string
  readonly transport: RequestRecord["transport"]
  readonly handle: (
    request: HttpServerRequest.HttpServerRequest
  ) => Effect.Effect<RouteExchange, never, PipelineServices>
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

/** A response as plain data: what the fast Node path writes directly and the Effect path converts. */
export interface WireResponse {
  readonly status: number
  readonly headers: Record<string, string>
  /** Absent for 204 and 304. */
  readonly body?: string
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

/** An Effect HTTP response of a wire answer. */
export const toHttpResponse = (wire: WireResponse): HttpServerResponse.HttpServerResponse => {
  const { "content-type": contentType, ...headers } = wire.headers
  return wire.body === undefined
    ? HttpServerResponse.empty({ status: wire.status, headers })
    : HttpServerResponse.text(wire.body, {
        status: wire.status,
        ...(contentType === undefined ? {} : { contentType }),
        headers
      })
}

/** The JSON answer of an error, with the headers its code calls for. */
export const errorResponse = (error: ApiError, headers: Record<string, string> = {}) =>
  toHttpResponse(errorWire(error, headers))

/** IETF httpapi RateLimit fields in structured-field syntax. */
export const rateLimitHeaders = (rate: RateWindow | undefined, nowMs: number): Record<string, string> =>
  rate === undefined
    ? {}
    : {
        "ratelimit-policy": `"default";q=${rate.limit};w=60`,
        ratelimit: `"default";r=${rate.remaining};t=${secondsUntilReset(rate, nowMs)}`
      }

/** Header values by lower-case name, keeping repeats (Node folds or drops some duplicates). */
const rawHeaderValues = (raw: ReadonlyArray<string>, name: string): Array<string> => {
  const out: Array<string> = []
  for (let i = 0; i + 1 < raw.length; i += 2)
    if ((raw[i] as string).toLowerCase() === name) out.push(raw[i + 1] as string)
  return out
}

const headerBytes = (raw: ReadonlyArray<string>): number => {
  let n = 0
  for (const part of raw) n += part.length + 2
  return n
}

const NONE: ReadonlyArray<string> = []

/** The request headers the API routes read, every value kept in order (see `rawHeaderValues`). */
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
 * `rawHeaderValues` for every header the API routes read, and `headerBytes`, in one pass over Node's raw list:
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

/** The `X-Request-Id` value as Node's `req.headers` gives it (repeats joined with ", "). */
const requestIdHeader = (values: ReadonlyArray<string>): string | undefined =>
  values.length === 0 ? undefined : values.length === 1 ? values[0] : values.join(", ")

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
 * (one per server: `nodeApiHandler`, `makeHttpApp`), not kept at module scope.
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

/** Encodes a pipeline answer as an Effect HTTP response. */
export const encodeAnswer = (answer: Answer, ifNoneMatch: string | undefined) =>
  toHttpResponse(encodeAnswerWire(answer, ifNoneMatch))

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

/** The parts of a request the API routes read. */
export interface WireRequest {
  readonly method: string
  /** The request target: path and query. */
  readonly url: string
  /** Node's raw header list: name, value, name, value, ... */
  readonly rawHeaders: ReadonlyArray<string>
  /** `readHeaders(rawHeaders)`, when the caller has read them already. */
  readonly headers?: RequestHeaders
  readonly remoteAddress: string | undefined
}

/** Answers for requests over this service's limits, whatever their path. */
const overLimits = (url: string, rawHeaders: ReadonlyArray<string>): WireResponse | undefined =>
  overLimitsOf(url, headerBytes(rawHeaders))

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

/** Whether a path is served by the Effect application (a mounted route, the docs page) rather than the API routes. */
export const isApplicationPath = (path: string, routes: HttpRoutes = API_ONLY): boolean =>
  mountAt(routes, path) !== undefined || isDocsPagePath(path)

/**
 * The API routes: the root and OpenAPI documents and `/api/v1/<operation>`; every other path outside the mounted
 * routes and the docs page is `unknown_operation`. Never fails.
 */
export const apiRoute = (
  request: WireRequest,
  log: LogFields,
  documentsOf: DocumentsOf
): Effect.Effect<WireResponse, never, PipelineServices> => {
  // Plain combinators rather than a generator: this runs for every request.
  const url = request.url
  const headers = request.headers ?? readHeaders(request.rawHeaders)
  const limited = overLimitsOf(url, headers.bytes)
  if (limited !== undefined) return Effect.succeed(limited)
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
  const ifNoneMatch =
    headers.ifNoneMatch.length === 0
      ? undefined
      : headers.ifNoneMatch.length === 1
        ? headers.ifNoneMatch[0]
        : headers.ifNoneMatch.join(", ")

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

/**
 * The Effect HTTP application of the paths that are not the API's: the mounted routes (the MCP endpoint, built
 * on Effect's HTTP request) and the docs page. The API routes are answered only by `nodeApiHandler`, straight on
 * Node's `request` event, which the Node server (Server.ts) asks first; so every API answer is written in one
 * place (`writeWire`). Requires the pipeline's services; a defect becomes 500 `internal_error`.
 */
export const makeHttpApp = (
  routes: HttpRoutes
): Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  never,
  HttpServerRequest.HttpServerRequest | PipelineServices
> =>
  Effect.gen(function* () {
    const started = performance.now()
    const request = yield* HttpServerRequest.HttpServerRequest
    const source = request.source as IncomingMessage | undefined
    const log = newLog(requestIdOf(source?.headers[REQUEST_ID_HEADER]))
    const telemetry = yield* RequestTelemetry
    const mount = mountAt(routes, pathOf(request.url))
    const routed = route(request, source, log, mount).pipe(
      Effect.catchCause((cause) =>
        Effect.logError("unhandled", cause).pipe(
          Effect.annotateLogs({ request_id: log.request_id }),
          Effect.as(toHttpResponse(internalErrorWire()))
        )
      )
    )
    // Every answer carries the composition's headers (the catalog-version beacon) and the request ID.
    const response = HttpServerResponse.setHeaders(
      yield* telemetry.tracing ? Effect.withSpan(routed, `${request.method} ${pathOf(request.url)}`) : routed,
      { ...routes.headers, [REQUEST_ID_HEADER]: log.request_id }
    )
    log.status = response.status
    yield* logRequest(request.method, log, started)
    telemetry.record?.({
      transport: mount?.transport ?? "http",
      operation: log.op,
      status: log.status,
      seconds: (performance.now() - started) / 1000
    })
    return response
  }).pipe(
    Effect.catchCause((cause) =>
      Effect.logError("unhandled", cause).pipe(Effect.as(toHttpResponse(internalErrorWire())))
    )
  )

/** A header's values of a request without Node's raw header list (in-process test servers). */
const headerList = (request: HttpServerRequest.HttpServerRequest, name = "authorization"): Array<string> => {
  const value = request.headers[name]
  return value === undefined ? [] : [value]
}

const route = (
  request: HttpServerRequest.HttpServerRequest,
  source: IncomingMessage | undefined,
  log: LogFields,
  mount: MountedRoute | undefined
) =>
  Effect.gen(function* () {
    const rawHeaders = source?.rawHeaders ?? []
    const path = pathOf(request.url)
    if (mount !== undefined || isDocsPagePath(path)) {
      const limited = overLimits(request.url, rawHeaders)
      if (limited !== undefined) return toHttpResponse(limited)
    }
    // A mounted transport (the MCP endpoint): it answers CORS, methods and errors itself.
    if (mount !== undefined) {
      const exchange = yield* mount.handle(request)
      log.op = exchange.op
      log.credits = exchange.credits
      log.key_id = exchange.keyId
      return exchange.response
    }
    // The human docs page and its assets (keyless, zero credits, outside the API; see DocsPage.ts).
    if (isDocsPagePath(path)) {
      log.op = "docs_page"
      const method = request.method.toUpperCase()
      if (method !== "GET" && method !== "HEAD") return yield* docsPage(request, path, errorResponse)
      // A keyless request: the presented key is checked and the caller spends a rate unit (`admitKeyless`).
      const admitted = yield* admitKeyless({
        authorization: rawHeaders.length > 0 ? rawHeaderValues(rawHeaders, "authorization") : headerList(request),
        client: Option.getOrElse(request.remoteAddress, () => "unknown"),
        forwardedFor:
          rawHeaders.length > 0
            ? rawHeaderValues(rawHeaders, "x-forwarded-for")
            : headerList(request, "x-forwarded-for")
      })
      log.key_id = admitted.keyId
      const headers = rateLimitHeaders(admitted.rate, admitted.nowMs)
      if (admitted.refusal !== undefined) return errorResponse(admitted.refusal, headers)
      return HttpServerResponse.setHeaders(yield* docsPage(request, path, errorResponse), headers)
    }
    // Every other path is the API's, which `nodeApiHandler` answers before this application is asked.
    return toHttpResponse(internalErrorWire())
  })

/**
 * The API routes straight on Node's `request` event, without the Effect HTTP layer: one fiber per request
 * runs `apiRoute` with the given services, and the answer is written with a single `writeHead`/`end` (with
 * `routes.headers`). Returns false for the paths the Effect application serves (the mounted routes, the docs
 * page), which the caller hands on.
 */
export const nodeApiHandler = (
  context: Context.Context<PipelineServices>,
  routes: HttpRoutes = API_ONLY
): ((req: IncomingMessage, res: ServerResponse) => boolean) => {
  const run = Effect.runForkWith(context)
  // The request line is logged at info: below the configured level it is not even built.
  const logsRequests = LogLevel.isGreaterThanOrEqualTo("Info", Context.get(context, References.MinimumLogLevel))
  const telemetry = Context.get(context, RequestTelemetry)
  const record = telemetry.record
  const documentsOf = makeDocumentsOf()
  const writer = makeAnswerWriter()
  return (req, res) => {
    const url = req.url ?? "/"
    if (isApplicationPath(pathOf(url), routes)) return false
    const started = performance.now()
    const method = req.method ?? "GET"
    const rawHeaders = req.rawHeaders
    const headers = readHeaders(rawHeaders)
    const log = newLog(requestIdOf(requestIdHeader(headers.requestId)))
    // The request line is written inside the fiber (the logger is the fiber's); the telemetry record outside
    // it, once the route has answered (not for an answer the route failed to give: `routeFailed`).
    let routeFailed = false
    const answered = apiRoute(
      { method, url, rawHeaders, headers, remoteAddress: req.socket.remoteAddress },
      log,
      documentsOf
    )
    const routed = (
      logsRequests
        ? Effect.tap(answered, (wire) => {
            log.status = wire.status
            return logRequest(method, log, started)
          })
        : answered
    ).pipe(
      Effect.catchCause((cause) => {
        routeFailed = true
        return Effect.logError("unhandled", cause).pipe(
          Effect.annotateLogs({ request_id: log.request_id }),
          Effect.as(internalErrorWire())
        )
      })
    )
    const program = telemetry.tracing ? Effect.withSpan(routed, `${method} ${pathOf(url)}`) : routed
    const fiber = run(program)
    const wireOf = (exit: Exit.Exit<WireResponse>): WireResponse => {
      if (!Exit.isSuccess(exit)) return internalErrorWire()
      if (record !== undefined && !routeFailed)
        record({
          transport: "http",
          operation: log.op,
          status: exit.value.status,
          seconds: (performance.now() - started) / 1000
        })
      return exit.value
    }
    const write = (exit: Exit.Exit<WireResponse>) => {
      const wire = wireOf(exit)
      if (res.writableEnded || res.destroyed) return
      writeWire(res, wire, routes.headers, log.request_id)
    }
    const done = fiber.pollUnsafe()
    if (done !== undefined) {
      // Answered at once: written with the others of this event-loop turn (see `writeSoon`).
      writer.writeSoon(res, wireOf(done), routes.headers, log.request_id)
    } else {
      fiber.addObserver(write)
      // A client gone before the answer: stop the work (holds are released as on any interruption).
      res.on("close", () => {
        if (!res.writableEnded) fiber.interruptUnsafe()
      })
    }
    return true
  }
}

/**
 * Answers computed synchronously in one event-loop turn are written together when the turn's I/O is done
 * (`setImmediate`), not one by one between the computations. Under load a turn handles many requests; writing
 * their answers back to back wakes a waiting client process once per burst instead of once per answer, which
 * on a virtual machine (where waking another CPU is a costly exit to the hypervisor) was a third of the time
 * of each answer on loopback. A lone request is written at the end of its own turn, microseconds later.
 * One writer per handler (`nodeApiHandler`): its batch is that server's, not the module's.
 */
const makeAnswerWriter = () => {
  let pending: Array<ServerResponse | WireResponse | Readonly<Record<string, string>> | string> = []
  const flush = () => {
    const batch = pending
    pending = []
    for (let i = 0; i < batch.length; i += 4) {
      const res = batch[i] as ServerResponse
      if (res.writableEnded || res.destroyed) continue
      try {
        writeWire(
          res,
          batch[i + 1] as WireResponse,
          batch[i + 2] as Readonly<Record<string, string>>,
          batch[i + 3] as string
        )
      } catch {
        // One answer Node refuses to write (it validated its headers) must not keep the others unwritten.
        res.destroy()
      }
    }
  }
  return {
    writeSoon: (
      res: ServerResponse,
      wire: WireResponse,
      extra: Readonly<Record<string, string>>,
      requestId: string
    ): void => {
      if (pending.length === 0) setImmediate(flush)
      pending.push(res, wire, extra, requestId)
    }
  }
}

/**
 * One `writeHead` with every header, the request ID first: no header set on the response beforehand, so Node
 * takes its fast path instead of a `setHeader` per header. The headers go as a flat name/value list, which Node
 * writes pair by pair as it would an object's properties; the list is what the object
 * `{ "x-request-id": requestId, ...wire.headers, ...extra, "content-length": n }` would hold, in its order (a name
 * met again keeps its first place and takes the later value; no header name is an array index, which an object
 * would put first), without building that object.
 */
const writeWire = (
  res: ServerResponse,
  wire: WireResponse,
  extra: Readonly<Record<string, string>>,
  requestId: string
) => {
  const list = responseHeaderList(wire.headers, extra, requestId)
  if (wire.body === undefined) {
    res.writeHead(wire.status, list)
    res.end()
    return
  }
  set(list, "content-length", Buffer.byteLength(wire.body))
  res.writeHead(wire.status, list)
  res.end(wire.body)
}

/** Sets `name` in a flat name/value list as an object assignment would: in its place if present, else last. */
const set = (list: Array<string | number>, name: string, value: string | number) => {
  for (let i = 0; i < list.length; i += 2) {
    if (list[i] === name) {
      list[i + 1] = value
      return
    }
  }
  list.push(name, value)
}

/** The flat list of `{ [REQUEST_ID_HEADER]: requestId, ...headers, ...extra }`. */
export const responseHeaderList = (
  headers: Readonly<Record<string, string>>,
  extra: Readonly<Record<string, string>>,
  requestId: string
): Array<string | number> => {
  const list: Array<string | number> = [REQUEST_ID_HEADER, requestId]
  for (const name in headers) {
    if (name === REQUEST_ID_HEADER) list[1] = headers[name] as string
    else list.push(name, headers[name] as string)
  }
  for (const name in extra) set(list, name, extra[name] as string)
  return list
}

const safeDecode = (s: string): string => {
  // Only a percent escape decodes to something else.
  if (s.indexOf("%") < 0) return s
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}
