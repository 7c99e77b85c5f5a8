/**
 * The MCP methods: lifecycle (`initialize`, `ping`), tools (`tools/list`, `tools/call`) and resources
 * (`resources/list`, `resources/read`, `resources/templates/list`). `tools/call` and `resources/read` run
 * through the core pipeline's `handle` as an HTTP request would; the rest is answered from the registry.
 */
import {
  type Answer,
  apiError,
  DocsSections,
  ErrorCatalog,
  handle,
  Operations,
  type PipelineServices,
  typedArgumentError
} from "@market-data/core"
import { Effect } from "effect"
import { ASSET_RESOURCE_TEMPLATE, assetIdOf, readAsset } from "./AssetResources.ts"
import {
  constantResult,
  failure,
  isPlainObject,
  type Message,
  type Params,
  type RequestId,
  RpcCode,
  type RpcResponse,
  success
} from "./JsonRpc.ts"
import { LEGACY_PROTOCOL_VERSIONS, MetaKey, modernResult, SUPPORTED_PROTOCOL_VERSIONS } from "./Modern.ts"
import { errorResult, toolResult } from "./ToolResult.ts"
import {
  catalogVersion,
  ModernTools,
  ModernToolsWithOutputSchemas,
  Tools,
  ToolsWithOutputSchemas,
  tool
} from "./Tools.ts"

/** The newest initialize-based version: what `initialize` answers to a version it does not speak. */
export const LATEST_PROTOCOL_VERSION = "2025-11-25"

export const SERVER_INFO = { name: "service-market-data", version: "1.0.0" } as const

const keyless = Operations.filter((o) => o.auth === "keyless").map((o) => `\`${o.name}\``)

/**
 * What `initialize` tells the client (and its model) about the server: what it serves without claiming a feed
 * (the default one is simulated; each data result names its source), and the conventions every tool shares,
 * which the tool descriptions leave out to keep `tools/list` small.
 */
const INSTRUCTIONS = [
  `Market data for agents: crypto derivatives data and SEC-filed company facts, as ${Operations.length} read-only tools.`,
  "Each data result names its source in `_meta.data_source`: `simulated` (the deterministic simulated market a server runs by default, not real market data), `live` (real venue and EDGAR feeds) or `sec` (SEC filings the operator ingested).",
  `Start with the \`docs\` tool (section \`quickstart\`${(DocsSections as ReadonlyArray<string>).includes("mcp") ? ", or `mcp` for this connection" : ""}) or the resource service://docs/index.`,
  "Turn symbols and names into canonical asset IDs with `resolve`; every other tool takes canonical IDs.",
  `${keyless.join(" and ")} are keyless; every other tool needs \`Authorization: Bearer <API_KEY>\` on the HTTP connection.`,
  "Each result reports its cost in `_meta.credits_charged` (1 credit = 1 US cent).",
  "A failed call is a tool result with `isError: true` and `structuredContent` `{error: {code, message, param?, retryable}}`: fix the named `param`, and retry unchanged only when `retryable` is true.",
  "The `schema` tool describes each tool in full, with its result schema."
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

/** The `tools/list` results (without and with output schemas): constant, serialized once. */
const TOOLS_LIST = constantResult({ tools: Tools, _meta: { catalog_version: catalogVersion } })
const TOOLS_LIST_WITH_OUTPUT_SCHEMAS = constantResult({
  tools: ToolsWithOutputSchemas,
  _meta: { catalog_version: catalogVersion }
})

/**
 * How long a client may hold the lists, the docs and `server/discover` (2026-07-28 `ttlMs`): they change only
 * when the service is upgraded, which also changes `_meta.catalog_version` and the `X-Catalog-Version` header.
 */
export const CATALOG_TTL_MS = 3_600_000

const cacheable = { ttlMs: CATALOG_TTL_MS, cacheScope: "public" } as const

/** The server's identity as `initialize` and every 2026-07-28 result give it. */
export const SERVER_IDENTITY = { ...SERVER_INFO, title: "Market data for agents" } as const

/** A 2026-07-28 result that never changes: `resultType`, the server's identity and the caching hints. */
const modernConstant = (result: object) => constantResult(modernResult({ ...result, ...cacheable }, SERVER_IDENTITY))

const MODERN_TOOLS_LIST = modernConstant({ tools: ModernTools, _meta: { catalog_version: catalogVersion } })
const MODERN_TOOLS_LIST_WITH_OUTPUT_SCHEMAS = modernConstant({
  tools: ModernToolsWithOutputSchemas,
  _meta: { catalog_version: catalogVersion }
})

const resourcesList = {
  resources: DocsSections.map((section) => ({
    uri: `${DOCS_URI_PREFIX}${section}`,
    name: `docs-${section}`,
    title: `Docs: ${section}`,
    description: `Documentation section \`${section}\`: ${SECTION_TITLES[section] ?? section}.`,
    mimeType: "text/markdown"
  }))
}
const RESOURCES_LIST = constantResult(resourcesList)
const MODERN_RESOURCES_LIST = modernConstant(resourcesList)

const resourceTemplatesList = {
  resourceTemplates: [
    {
      uriTemplate: `${DOCS_URI_PREFIX}{section}`,
      name: "docs",
      title: "Documentation section",
      description: `A documentation section as markdown; {section} is one of ${DocsSections.join(", ")}.`,
      mimeType: "text/markdown"
    },
    ASSET_RESOURCE_TEMPLATE
  ]
}
const RESOURCE_TEMPLATES_LIST = constantResult(resourceTemplatesList)
const MODERN_RESOURCE_TEMPLATES_LIST = modernConstant(resourceTemplatesList)

/** What the server supports, as `server/discover` says it (2026-07-28). */
export const DISCOVER_CAPABILITIES = {
  tools: { listChanged: false },
  resources: { subscribe: true, listChanged: true }
} as const

const DISCOVER_RESULT = modernConstant({
  supportedVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
  capabilities: DISCOVER_CAPABILITIES,
  instructions: INSTRUCTIONS
})

/** What a message's handling knows of the HTTP request that carried it. */
export interface CallContext {
  readonly authorization: ReadonlyArray<string>
  /** The POST's `Idempotency-Key` values, or "ambiguous" when the POST carries several `tools/call`s. */
  readonly idempotencyKey: ReadonlyArray<string> | "ambiguous"
  /** The socket peer's address and the `X-Forwarded-For` values (the pipeline resolves the client from both). */
  readonly client: string
  readonly forwardedFor: ReadonlyArray<string>
  readonly batch: boolean
  /** Whether `tools/list` includes each tool's `outputSchema` (the endpoint's `?output_schemas=true`). */
  readonly outputSchemas: boolean
  /** Whether the POST speaks 2026-07-28 (`Modern.ts`); otherwise an initialize-based revision. */
  readonly modern: boolean
}

/** The outcome of one message: its JSON-RPC response (none for notifications and responses). */
export interface Dispatched {
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

/** Handles one classified message. Never fails: every problem is a JSON-RPC error or a tool error result. */
export const dispatch = (
  message: Message,
  context: CallContext
): Effect.Effect<Dispatched, never, PipelineServices> => {
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
  if (context.modern) return modernRequest(message, context)
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
        protocolVersion: (LEGACY_PROTOCOL_VERSIONS as ReadonlyArray<string>).includes(requested)
          ? requested
          : LATEST_PROTOCOL_VERSION,
        capabilities: { tools: { listChanged: false }, resources: { subscribe: false, listChanged: false } },
        serverInfo: SERVER_IDENTITY,
        instructions: INSTRUCTIONS
      })
    }
    case "ping":
      return ok({})
    case "tools/list":
      return Effect.succeed(
        noCursor(id, params) ?? {
          response: success(id, context.outputSchemas ? TOOLS_LIST_WITH_OUTPUT_SCHEMAS : TOOLS_LIST)
        }
      )
    case "tools/call":
      return callTool(id, params, context)
    case "resources/list":
      return Effect.succeed(noCursor(id, params) ?? { response: success(id, RESOURCES_LIST) })
    case "resources/templates/list":
      return Effect.succeed(noCursor(id, params) ?? { response: success(id, RESOURCE_TEMPLATES_LIST) })
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
    const assetId = assetIdOf(uri)
    if (assetId !== undefined) {
      const { answer, response } = yield* readAsset(id, uri, assetId, context)
      const wrapped =
        context.modern && "result" in response
          ? success(id, modernResult(response.result as object, SERVER_IDENTITY))
          : response
      return answer === undefined ? { response: wrapped } : { answer, response: wrapped }
    }
    const section = uri.startsWith(DOCS_URI_PREFIX) ? uri.slice(DOCS_URI_PREFIX.length) : undefined
    if (section === undefined || !(DocsSections as ReadonlyArray<string>).includes(section)) {
      // 2026-07-28 answers a resource that does not exist as -32602 (Invalid Params); the older revisions as -32002.
      return {
        response: failure(
          id,
          context.modern ? RpcCode.InvalidParams : RpcCode.ResourceNotFound,
          `Resource not found: ${uri.slice(0, 200)}`,
          { uri, templates: [`${DOCS_URI_PREFIX}{section}`, ASSET_RESOURCE_TEMPLATE.uriTemplate] }
        )
      }
    }
    // Resources are keyless, read as `docs` is: a presented key is checked, and the caller's budget spent.
    const answer = yield* handle({
      operation: "docs",
      params: [["section", section]],
      authorization: context.authorization,
      client: context.client,
      forwardedFor: context.forwardedFor
    })
    const o = answer.outcome
    if (o._tag === "Markdown") {
      const contents = { contents: [{ uri, mimeType: "text/markdown", text: o.markdown }] }
      return {
        answer,
        response: success(id, context.modern ? modernResult({ ...contents, ...cacheable }, SERVER_IDENTITY) : contents)
      }
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
    // A null argument is an omitted one (agents often send null for optional parameters).
    const entries = Object.entries(args).filter(([, v]) => v !== null)
    const op = Operations.find((o) => o.name === name)
    // Arguments are typed JSON: an integer or boolean parameter takes a JSON number or boolean, not its text.
    const typeError = op === undefined ? undefined : typedArgumentError(op, entries)
    const answer = yield* handle({
      operation: name,
      params: typeError ?? entries,
      authorization: context.authorization,
      idempotencyKey: context.idempotencyKey,
      client: context.client,
      forwardedFor: context.forwardedFor
    })
    const result = toolResult(answer)
    return { answer, response: success(id, context.modern ? modernResult(result, SERVER_IDENTITY) : result) }
  })

/**
 * A 2026-07-28 request: no handshake (`initialize`, `ping`, `logging/setLevel` and `resources/subscribe` are gone
 * and answered as unknown methods), `server/discover`, and every result with `resultType`, the server's identity
 * in `_meta` and, where the revision asks, the caching hints. `subscriptions/listen` is answered by the endpoint
 * (it is a stream, `Listen.ts`).
 */
const modernRequest = (
  message: Extract<Message, { readonly _tag: "Request" }>,
  context: CallContext
): Effect.Effect<Dispatched, never, PipelineServices> => {
  const { id, params } = message
  switch (message.method) {
    case "server/discover":
      return Effect.succeed({ response: success(id, DISCOVER_RESULT) })
    case "tools/list":
      return Effect.succeed(
        noCursor(id, params) ?? {
          response: success(id, context.outputSchemas ? MODERN_TOOLS_LIST_WITH_OUTPUT_SCHEMAS : MODERN_TOOLS_LIST)
        }
      )
    case "tools/call":
      return callTool(id, params, context)
    case "resources/list":
      return Effect.succeed(noCursor(id, params) ?? { response: success(id, MODERN_RESOURCES_LIST) })
    case "resources/templates/list":
      return Effect.succeed(noCursor(id, params) ?? { response: success(id, MODERN_RESOURCE_TEMPLATES_LIST) })
    case "resources/read":
      return readResource(id, params, context)
    default:
      return Effect.succeed({
        response: failure(id, RpcCode.MethodNotFound, `Method not found: ${message.method.slice(0, 64)}`)
      })
  }
}

/** The key a client's `_meta` names its protocol version under (re-exported for the endpoint). */
export const PROTOCOL_VERSION_META_KEY = MetaKey.protocolVersion
