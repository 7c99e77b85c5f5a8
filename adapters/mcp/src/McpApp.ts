/**
 * The MCP transport: a stateless Streamable HTTP server in JSON response mode at `POST /api/mcp`.
 *
 * It checks the HTTP framing (Origin, method, Accept, Content-Type, MCP-Protocol-Version, body size), reads
 * JSON-RPC, and answers the lifecycle, tool and resource methods. Every `tools/call` (and every
 * `resources/read`) is an `ApiRequest` run through the core pipeline exactly as an HTTP request is; the
 * `Answer` is re-wrapped as a tool result. No business logic lives here.
 *
 * Written directly rather than on the SDK's server: the SDK disagrees with the contract on versions, batches,
 * unknown tools, cursors, `jsonrpc`-less messages and Origin (see STACK.md), and the surface is small.
 */
import type { IncomingMessage } from "node:http"
import {
  type Answer,
  type ApiError,
  apiError,
  DocsSections,
  ErrorCatalog,
  handle,
  type PipelineServices,
  type RateWindow,
  secondsUntilReset
} from "@market-data/core"
import { ByteSize, Config, Effect, Option } from "effect"
import { HttpIncomingMessage, type HttpServerRequest, HttpServerResponse } from "effect/http"
import {
  classify,
  failure,
  isPlainObject,
  type Message,
  type Params,
  type RequestId,
  RpcCode,
  type RpcResponse,
  success
} from "./JsonRpc.ts"
import { CATALOG_VERSION_HEADER, catalogVersion, Tools, tool } from "./Tools.ts"

/** Where the MCP endpoint is mounted. */
export const MCP_PATH = "/api/mcp"

/** Protocol versions this server speaks, newest first. */
export const SUPPORTED_PROTOCOL_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26"] as const
export const LATEST_PROTOCOL_VERSION = "2025-11-25"
/** What a request without `MCP-Protocol-Version` speaks (the transport spec's backwards-compatible default). */
const ASSUMED_PROTOCOL_VERSION = "2025-03-26"
/** The only version with JSON-RPC batches. */
const BATCH_PROTOCOL_VERSION = "2025-03-26"

export const SERVER_INFO = { name: "service-market-data", version: "1.0.0" } as const

/** Largest POST body read; larger is 413. MCP messages here are small: a tool call is a few hundred bytes. */
export const MAX_MCP_BODY_BYTES = 256 * 1024
/** Most messages in one batch (2025-03-26 only); more is -32600. */
export const MAX_BATCH_MESSAGES = 32

/** The environment variable naming extra browser origins allowed to call `/api/mcp` (comma-separated). */
export const ALLOWED_ORIGINS_VARIABLE = "MARKET_DATA_ALLOWED_ORIGINS"

const INSTRUCTIONS = [
  "Market data for agents: live crypto derivatives data and SEC-filed company facts, as 23 read-only tools.",
  "Start with the `docs` tool (section `quickstart`, or `mcp` for this connection) or the resource service://docs/index.",
  "Turn symbols and names into canonical asset IDs with `resolve`; every other tool takes canonical IDs.",
  "`docs` and `schema` are keyless; every other tool needs `Authorization: Bearer <API_KEY>` on the HTTP connection.",
  "Each result reports its cost in `_meta.credits_charged` (1 credit = 1 US cent). Errors are tool results with `isError: true` and `structuredContent.error` `{code, message, param?, retryable}`."
].join(" ")

const SECTION_TITLES: { readonly [section: string]: string } = {
  index: "what the service is and the map of the documentation",
  quickstart: "a first call in three steps",
  domains: "every operation, what it returns, the value sets of states and levels",
  access: "keys, rate limit, idempotency keys, conditional requests, CORS",
  grammar: "canonical IDs, parameters, lists, defaults, cross-parameter rules, envelopes, pagination",
  refusals: "when an asset is refused instead of answered",
  resolve: "turning symbols and names into canonical IDs",
  errors: "every error code, its status and whether to retry",
  pricing: "credits per operation and how holds settle",
  examples: "one request per operation",
  changelog: "what changed, and what is temporary",
  mcp: "connecting over MCP: transport, tools, resources, errors"
}

const DOCS_URI_PREFIX = "service://docs/"

/** What the HTTP request log line records about an MCP exchange. */
export interface McpExchange {
  readonly response: HttpServerResponse.HttpServerResponse
  /** `mcp <method>` (with the tool name for `tools/call`), or `mcp batch` . */
  readonly op: string
  /** Credits charged by the `tools/call`s of this POST, when any ran. */
  readonly credits: number | undefined
  readonly keyId: string | undefined
}

// ---------------------------------------------------------------------------------------------------------------
// Origin
// ---------------------------------------------------------------------------------------------------------------

/** `scheme://host[:port]` of an origin, normalized, or undefined when it is not a URL origin. */
const normalizeOrigin = (text: string): string | undefined => {
  try {
    const url = new URL(text.trim())
    return url.origin === "null" ? undefined : url.origin
  } catch {
    return undefined
  }
}

/**
 * Parses `MARKET_DATA_ALLOWED_ORIGINS`: comma-separated origins such as `https://app.example.com`. Returns the
 * normalized origins, or a message naming the first entry that is not an origin (for start-up validation).
 */
export const parseAllowedOrigins = (text: string): ReadonlyArray<string> | { readonly problem: string } => {
  const out: Array<string> = []
  for (const entry of text.split(",")) {
    if (entry.trim().length === 0) continue
    const origin = normalizeOrigin(entry)
    if (origin === undefined) {
      return {
        problem: `${ALLOWED_ORIGINS_VARIABLE}: ${JSON.stringify(entry.trim())} is not an origin like https://app.example.com`
      }
    }
    out.push(origin)
  }
  return out
}

/** The allowed origins as configured (through Effect `Config`, so from the environment by default). */
export const allowedOriginsConfig: Config.Config<string> = Config.String(ALLOWED_ORIGINS_VARIABLE).pipe(
  Config.withDefault("")
)

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"])

/** Loopback origins (any port) are always allowed: a local client cannot be a DNS-rebinding victim's page. */
export const isLoopbackOrigin = (origin: string): boolean => {
  try {
    const url = new URL(origin)
    return (url.protocol === "http:" || url.protocol === "https:") && LOOPBACK_HOSTS.has(url.hostname.toLowerCase())
  } catch {
    return false
  }
}

const originAllowed = (origin: string): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    if (isLoopbackOrigin(origin)) return true
    const normalized = normalizeOrigin(origin)
    if (normalized === undefined) return false
    const text = yield* Effect.orElseSucceed(allowedOriginsConfig, () => "")
    const allowed = parseAllowedOrigins(text)
    return Array.isArray(allowed) && allowed.includes(normalized)
  })

// ---------------------------------------------------------------------------------------------------------------
// HTTP framing
// ---------------------------------------------------------------------------------------------------------------

const EXPOSED = ["RateLimit", "RateLimit-Policy", "Retry-After", "X-Catalog-Version"].join(", ")

const ALLOWED_REQUEST_HEADERS = [
  "Authorization",
  "Content-Type",
  "Accept",
  "Idempotency-Key",
  "MCP-Protocol-Version",
  "Mcp-Session-Id",
  "Last-Event-ID"
].join(", ")

const corsHeaders = (origin: string | undefined): Record<string, string> =>
  origin === undefined
    ? {}
    : { "access-control-allow-origin": origin, "access-control-expose-headers": EXPOSED, vary: "Origin" }

const jsonResponse = (status: number, body: unknown, headers: Record<string, string>) =>
  HttpServerResponse.text(JSON.stringify(body), {
    status,
    contentType: "application/json",
    headers: { "cache-control": "no-store", [CATALOG_VERSION_HEADER]: catalogVersion, ...headers }
  })

/** A refusal of the HTTP request itself: the status, and a JSON-RPC error without an id as the body. */
const refuse = (status: number, message: string, headers: Record<string, string> = {}) =>
  jsonResponse(status, failure(null, RpcCode.ServerError, message), headers)

/** Header values by lower-case name, keeping repeats (Node folds or drops some duplicates). */
const headerValues = (request: HttpServerRequest.HttpServerRequest, name: string): Array<string> => {
  const raw = (request.source as IncomingMessage | undefined)?.rawHeaders
  if (raw === undefined) {
    const v = request.headers[name]
    return v === undefined ? [] : [v]
  }
  const out: Array<string> = []
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if ((raw[i] as string).toLowerCase() === name) out.push(raw[i + 1] as string)
  }
  return out
}

/** Whether an `Accept` value names both `application/json` and `text/event-stream` (with q > 0). */
export const acceptsMcp = (accept: string | undefined): boolean => {
  if (accept === undefined) return false
  const types = new Set<string>()
  for (const range of accept.split(",")) {
    const [type = "", ...params] = range.split(";").map((s) => s.trim().toLowerCase())
    const q = params.find((p) => p.startsWith("q="))
    if (q !== undefined && !(Number(q.slice(2)) > 0)) continue
    types.add(type)
  }
  return types.has("application/json") && types.has("text/event-stream")
}

/** Whether a `Content-Type` is JSON (optionally `charset=utf-8`). */
export const isJsonContentType = (contentType: string | undefined): boolean => {
  if (contentType === undefined) return false
  const [type = "", ...params] = contentType.split(";").map((s) => s.trim().toLowerCase())
  if (type !== "application/json") return false
  return params.every((p) => !p.startsWith("charset=") || p === "charset=utf-8" || p === 'charset="utf-8"')
}

const rateLimitHeaders = (rate: RateWindow | undefined, nowMs: number): Record<string, string> =>
  rate === undefined
    ? {}
    : {
        "ratelimit-policy": `"default";q=${rate.limit};w=60`,
        ratelimit: `"default";r=${rate.remaining};t=${secondsUntilReset(rate, nowMs)}`
      }

type BodyRead = { readonly _tag: "Body"; readonly text: string } | { readonly _tag: "TooLarge" | "Unreadable" }

const readBody = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<BodyRead> => {
  const declared = request.headers["content-length"]
  if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > MAX_MCP_BODY_BYTES) {
    return Effect.succeed({ _tag: "TooLarge" })
  }
  return request.text.pipe(
    Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(MAX_MCP_BODY_BYTES)),
    Effect.map((text): BodyRead => ({ _tag: "Body", text })),
    Effect.catch((e) =>
      Effect.succeed<BodyRead>({
        _tag: e.reason._tag === "RequestParseError" && e.reason.reason === "BodyTooLarge" ? "TooLarge" : "Unreadable"
      })
    )
  )
}

// ---------------------------------------------------------------------------------------------------------------
// The endpoint
// ---------------------------------------------------------------------------------------------------------------

/** Answers one HTTP request to `/api/mcp`. Never fails. */
export const mcpEndpoint = (
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<McpExchange, never, PipelineServices> =>
  Effect.gen(function* () {
    const plain = (response: HttpServerResponse.HttpServerResponse, op = "mcp"): McpExchange => ({
      response,
      op,
      credits: undefined,
      keyId: undefined
    })
    const origins = headerValues(request, "origin")
    const origin = origins[0]
    if (origins.length > 1 || (origin !== undefined && !(yield* originAllowed(origin)))) {
      return plain(refuse(403, `Forbidden: Origin ${JSON.stringify(origins.join(", ").slice(0, 200))} is not allowed`))
    }
    const cors = corsHeaders(origin)
    const method = request.method.toUpperCase()
    if (method === "OPTIONS") {
      return plain(
        HttpServerResponse.empty({
          status: 204,
          headers: {
            ...cors,
            "access-control-allow-methods": "POST, OPTIONS",
            "access-control-allow-headers": ALLOWED_REQUEST_HEADERS,
            "access-control-max-age": "86400",
            [CATALOG_VERSION_HEADER]: catalogVersion
          }
        })
      )
    }
    if (method !== "POST") {
      return plain(
        refuse(
          405,
          `Method not allowed: ${method}; this stateless server answers POST only (no SSE stream, no sessions)`,
          {
            ...cors,
            allow: "POST, OPTIONS"
          }
        )
      )
    }
    if (!acceptsMcp(request.headers.accept)) {
      return plain(refuse(406, "Not Acceptable: Accept must include both application/json and text/event-stream", cors))
    }
    if (!isJsonContentType(request.headers["content-type"])) {
      return plain(refuse(415, "Unsupported Media Type: Content-Type must be application/json", cors))
    }
    const versionHeader = request.headers["mcp-protocol-version"]
    if (
      versionHeader !== undefined &&
      !(SUPPORTED_PROTOCOL_VERSIONS as ReadonlyArray<string>).includes(versionHeader)
    ) {
      return plain(
        refuse(
          400,
          `Bad Request: unsupported MCP-Protocol-Version ${JSON.stringify(versionHeader.slice(0, 64))}; supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")}`,
          cors
        )
      )
    }
    const body = yield* readBody(request)
    if (body._tag === "TooLarge") {
      return plain(refuse(413, `Content Too Large: the body exceeds ${MAX_MCP_BODY_BYTES} bytes`, cors))
    }
    if (body._tag !== "Body") return plain(refuse(400, "Bad Request: the body could not be read", cors))

    let parsed: unknown
    try {
      parsed = JSON.parse(body.text)
    } catch {
      return plain(jsonResponse(400, failure(null, RpcCode.ParseError, "Parse error: the body is not JSON"), cors))
    }
    const batch = Array.isArray(parsed)
    if (Array.isArray(parsed)) {
      const version = versionHeader ?? ASSUMED_PROTOCOL_VERSION
      const problem =
        version !== BATCH_PROTOCOL_VERSION
          ? `JSON-RPC batches exist only in protocol version ${BATCH_PROTOCOL_VERSION}; this request speaks ${version}`
          : parsed.length === 0
            ? "an empty batch is not a request"
            : parsed.length > MAX_BATCH_MESSAGES
              ? `a batch carries at most ${MAX_BATCH_MESSAGES} messages`
              : undefined
      if (problem !== undefined) {
        return plain(jsonResponse(400, failure(null, RpcCode.InvalidRequest, `Invalid Request: ${problem}`), cors))
      }
    }
    const messages = (batch ? (parsed as ReadonlyArray<unknown>) : [parsed]).map(classify)

    const calls = messages.filter((m) => m._tag === "Request" && m.method === "tools/call").length
    const idempotencyKey = headerValues(request, "idempotency-key")
    const context: CallContext = {
      authorization: headerValues(request, "authorization"),
      idempotencyKey: idempotencyKey.length > 0 && calls > 1 ? "ambiguous" : idempotencyKey,
      client: Option.getOrElse(request.remoteAddress, () => "unknown"),
      batch
    }

    const responses: Array<RpcResponse> = []
    const answers: Array<Answer> = []
    for (const message of messages) {
      const out = yield* dispatch(message, context)
      if (out.response !== undefined) responses.push(out.response)
      if (out.answer !== undefined) answers.push(out.answer)
    }

    const last = answers.findLast((a) => a.rate !== undefined)
    const headers = { ...cors, ...(last === undefined ? {} : rateLimitHeaders(last.rate, last.nowMs)) }
    const credits = answers.length === 0 ? undefined : answers.reduce((n, a) => n + chargeOf(a), 0)
    const exchange = (response: HttpServerResponse.HttpServerResponse): McpExchange => ({
      response,
      op: logName(messages, batch),
      credits,
      keyId: answers.findLast((a) => a.keyId !== undefined)?.keyId
    })
    if (responses.length === 0) {
      // Only notifications and responses: accepted, nothing to answer.
      return exchange(
        HttpServerResponse.empty({ status: 202, headers: { ...headers, [CATALOG_VERSION_HEADER]: catalogVersion } })
      )
    }
    if (!batch) {
      const only = messages[0] as Message
      return exchange(jsonResponse(only._tag === "Invalid" ? 400 : 200, responses[0], headers))
    }
    return exchange(jsonResponse(200, responses, headers))
  })

const logName = (messages: ReadonlyArray<Message>, batch: boolean): string => {
  if (batch) return `mcp batch(${messages.length})`
  const m = messages[0]
  if (m === undefined || m._tag === "Invalid") return "mcp invalid"
  if (m._tag === "Response") return "mcp response"
  if (m._tag === "Notification") return `mcp ${m.method.slice(0, 64)}`
  const name = m.method === "tools/call" && typeof m.params.name === "string" ? ` ${m.params.name.slice(0, 64)}` : ""
  return `mcp ${m.method.slice(0, 64)}${name}`
}

// ---------------------------------------------------------------------------------------------------------------
// Methods
// ---------------------------------------------------------------------------------------------------------------

interface CallContext {
  readonly authorization: ReadonlyArray<string>
  /** The POST's `Idempotency-Key` values, or "ambiguous" when the POST carries several `tools/call`s. */
  readonly idempotencyKey: ReadonlyArray<string> | "ambiguous"
  readonly client: string
  readonly batch: boolean
}

interface Dispatched {
  readonly response?: RpcResponse
  /** The pipeline's answer, when the message ran through it. */
  readonly answer?: Answer
}

const invalidParams = (id: RequestId, message: string, data?: unknown): Dispatched => ({
  response: failure(id, RpcCode.InvalidParams, `Invalid params: ${message}`, data)
})

const noCursor = (id: RequestId, params: Params): Dispatched | undefined =>
  params.cursor === undefined
    ? undefined
    : invalidParams(id, "invalid cursor: this server lists everything in one page and issues no cursors", {
        cursor: params.cursor
      })

const dispatch = (message: Message, context: CallContext): Effect.Effect<Dispatched, never, PipelineServices> => {
  switch (message._tag) {
    case "Notification":
    case "Response":
      return Effect.succeed({})
    case "Invalid":
      return Effect.succeed({ response: failure(message.id, message.code, `Invalid Request: ${message.message}`) })
    case "Request":
      return request(message, context)
  }
}

const request = (
  message: Extract<Message, { readonly _tag: "Request" }>,
  context: CallContext
): Effect.Effect<Dispatched, never, PipelineServices> => {
  const { id, params } = message
  const ok = (result: unknown): Effect.Effect<Dispatched> => Effect.succeed({ response: success(id, result) })
  switch (message.method) {
    case "initialize": {
      if (context.batch) {
        return Effect.succeed({
          response: failure(id, RpcCode.InvalidRequest, "Invalid Request: initialize must not be part of a batch")
        })
      }
      if (typeof params.protocolVersion !== "string") {
        return Effect.succeed(invalidParams(id, "`protocolVersion` must be a string"))
      }
      if (!isPlainObject(params.capabilities))
        return Effect.succeed(invalidParams(id, "`capabilities` must be an object"))
      if (!isPlainObject(params.clientInfo)) return Effect.succeed(invalidParams(id, "`clientInfo` must be an object"))
      const requested = params.protocolVersion
      return ok({
        protocolVersion: (SUPPORTED_PROTOCOL_VERSIONS as ReadonlyArray<string>).includes(requested)
          ? requested
          : LATEST_PROTOCOL_VERSION,
        capabilities: { tools: { listChanged: false }, resources: { subscribe: false, listChanged: false } },
        serverInfo: { ...SERVER_INFO, title: "Market data for agents" },
        instructions: INSTRUCTIONS
      })
    }
    case "ping":
      return ok({})
    case "tools/list":
      return Effect.succeed(
        noCursor(id, params) ?? { response: success(id, { tools: Tools, _meta: { catalog_version: catalogVersion } }) }
      )
    case "tools/call":
      return callTool(id, params, context)
    case "resources/list":
      return Effect.succeed(
        noCursor(id, params) ?? {
          response: success(id, {
            resources: DocsSections.map((section) => ({
              uri: `${DOCS_URI_PREFIX}${section}`,
              name: `docs-${section}`,
              title: `Docs: ${section}`,
              description: `Documentation section \`${section}\`: ${SECTION_TITLES[section] ?? section}.`,
              mimeType: "text/markdown"
            }))
          })
        }
      )
    case "resources/templates/list":
      return Effect.succeed(
        noCursor(id, params) ?? {
          response: success(id, {
            resourceTemplates: [
              {
                uriTemplate: `${DOCS_URI_PREFIX}{section}`,
                name: "docs",
                title: "Documentation section",
                description: `A documentation section as markdown; {section} is one of ${DocsSections.join(", ")}.`,
                mimeType: "text/markdown"
              }
            ]
          })
        }
      )
    case "resources/read":
      return readResource(id, params, context)
    default:
      return Effect.succeed({
        response: failure(id, RpcCode.MethodNotFound, `Method not found: ${message.method.slice(0, 64)}`)
      })
  }
}

/** `service://docs/<section>`: read through the pipeline as the keyless `docs` operation. */
const readResource = (
  id: RequestId,
  params: Params,
  context: CallContext
): Effect.Effect<Dispatched, never, PipelineServices> =>
  Effect.gen(function* () {
    const uri = params.uri
    if (typeof uri !== "string") return invalidParams(id, "`uri` must be a string")
    const section = uri.startsWith(DOCS_URI_PREFIX) ? uri.slice(DOCS_URI_PREFIX.length) : undefined
    if (section === undefined || !(DocsSections as ReadonlyArray<string>).includes(section)) {
      return {
        response: failure(id, RpcCode.ResourceNotFound, `Resource not found: ${uri.slice(0, 200)}`, {
          uri,
          templates: [`${DOCS_URI_PREFIX}{section}`]
        })
      }
    }
    // Resources are keyless: the caller's key plays no part (its budget is the client address's).
    const answer = yield* handle({
      operation: "docs",
      params: [["section", section]],
      authorization: [],
      client: context.client
    })
    const o = answer.outcome
    if (o._tag === "Markdown") {
      return { answer, response: success(id, { contents: [{ uri, mimeType: "text/markdown", text: o.markdown }] }) }
    }
    const error = o._tag === "Failure" ? o.error : apiError("internal_error", "unexpected answer to docs")
    const code = ErrorCatalog[error.code].status >= 500 ? RpcCode.InternalError : RpcCode.ServerError
    return { answer, response: failure(id, code, error.message, error.toBody()) }
  })

const callTool = (
  id: RequestId,
  params: Params,
  context: CallContext
): Effect.Effect<Dispatched, never, PipelineServices> =>
  Effect.gen(function* () {
    const name = params.name
    if (typeof name !== "string") return invalidParams(id, "`name` must be a string naming a tool")
    if (tool(name) === undefined) {
      return invalidParams(id, `unknown tool ${JSON.stringify(name.slice(0, 64))}`, {
        tools: Tools.map((t) => t.name)
      })
    }
    const args = params.arguments ?? {}
    if (!isPlainObject(args)) return invalidParams(id, "`arguments` must be an object")
    if (context.idempotencyKey === "ambiguous") {
      return {
        response: success(
          id,
          errorResult(
            apiError(
              "invalid_idempotency_key",
              "an Idempotency-Key header applies to a POST that carries exactly one tools/call; send each call in its own POST"
            ),
            0
          )
        )
      }
    }
    const answer = yield* handle({
      operation: name,
      // A null argument is an omitted one (agents often send null for optional parameters).
      params: Object.entries(args).filter(([, v]) => v !== null),
      authorization: context.authorization,
      idempotencyKey: context.idempotencyKey,
      client: context.client
    })
    return { answer, response: success(id, toolResult(answer)) }
  })

// ---------------------------------------------------------------------------------------------------------------
// Answers as tool results
// ---------------------------------------------------------------------------------------------------------------

/** A tool result: the envelope in `structuredContent`, its compact text in `content`, the charge in `_meta`. */
export interface ToolResult {
  readonly content: ReadonlyArray<{ readonly type: "text"; readonly text: string }>
  readonly structuredContent: unknown
  readonly isError: boolean
  readonly _meta: { readonly credits_charged: number; readonly [k: string]: unknown }
}

const errorResult = (error: ApiError, credits: number): ToolResult => {
  const body = error.toBody()
  return {
    content: [{ type: "text", text: JSON.stringify(body) }],
    structuredContent: body,
    isError: true,
    _meta: {
      credits_charged: credits,
      ...(error.retryAfterSeconds === undefined ? {} : { retry_after_seconds: error.retryAfterSeconds })
    }
  }
}

const chargeOf = (answer: Answer): number => {
  const o = answer.outcome
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

/** Re-wraps a pipeline answer as a tool result. */
export const toolResult = (answer: Answer): ToolResult => {
  const o = answer.outcome
  switch (o._tag) {
    case "Json":
      return {
        content: [{ type: "text", text: o.body }],
        structuredContent: JSON.parse(o.body),
        isError: false,
        _meta: { credits_charged: o.creditsCharged }
      }
    case "Markdown":
      return {
        content: [{ type: "text", text: o.markdown }],
        structuredContent: { data: { section: o.section, markdown: o.markdown } },
        isError: false,
        _meta: { credits_charged: 0 }
      }
    case "Failure":
      return errorResult(o.error, o.creditsCharged)
    case "Replay":
      // The stored answer of the first request (over HTTP or MCP), byte for byte, with its original charge.
      return {
        content: [{ type: "text", text: o.answer.body }],
        structuredContent: JSON.parse(o.answer.body),
        isError: o.answer.status >= 400,
        _meta: { credits_charged: chargeOf(answer), idempotent_replayed: true }
      }
    case "NotModified":
      // MCP sends no If-None-Match, so the pipeline cannot answer 304 here.
      return errorResult(apiError("internal_error", "unexpected 304 over MCP"), 0)
  }
}
