/**
 * MCP revision 2026-07-28 on the Streamable HTTP endpoint, beside the initialize-based revisions (2025-11-25,
 * 2025-06-18, 2025-03-26). Pure: which era a POST speaks, and the validation the revision prescribes before a
 * message is dispatched (per-request `_meta`, the `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and
 * `Mcp-Param-*` headers), with the revision's error codes.
 *
 * The era is chosen per request: a POST is served at 2026-07-28 when its `MCP-Protocol-Version` header is not one
 * of the initialize-based versions (absent means 2025-03-26, the transport's backwards-compatible default) or when
 * its body carries `_meta["io.modelcontextprotocol/protocolVersion"]`; otherwise exactly as before.
 */
import { classify, failure, isPlainObject, type Message, type RequestId, RpcCode, type RpcResponse } from "./JsonRpc.ts"

export const MODERN_PROTOCOL_VERSION = "2026-07-28"
/** The initialize-based versions, newest first. */
export const LEGACY_PROTOCOL_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26"] as const

/** The `_meta` keys the revision reserves. */
export const MetaKey = {
  protocolVersion: "io.modelcontextprotocol/protocolVersion",
  clientCapabilities: "io.modelcontextprotocol/clientCapabilities",
  clientInfo: "io.modelcontextprotocol/clientInfo",
  serverInfo: "io.modelcontextprotocol/serverInfo",
  subscriptionId: "io.modelcontextprotocol/subscriptionId"
} as const

/** The error codes 2026-07-28 defines (the sub-range -32020..-32099 it reserves). */
export const ModernCode = {
  HeaderMismatch: -32020,
  MissingRequiredClientCapability: -32021,
  UnsupportedProtocolVersion: -32022
} as const

/** The methods that carry `Mcp-Name`, and the parameter it mirrors. */
const NAMED: { readonly [method: string]: "name" | "uri" } = {
  "tools/call": "name",
  "prompts/get": "name",
  "resources/read": "uri"
}

export type Era = "legacy" | "modern"

const protocolVersionInMeta = (body: unknown): unknown => {
  if (!isPlainObject(body) || !isPlainObject(body.params)) return undefined
  const meta = body.params._meta
  return isPlainObject(meta) ? meta[MetaKey.protocolVersion] : undefined
}

/** Which era a POST speaks (see the module's comment). `header`: its `MCP-Protocol-Version`, `body`: parsed JSON. */
export const eraOf = (header: string | undefined, body: unknown): Era => {
  if (protocolVersionInMeta(body) !== undefined) return "modern"
  if (header === undefined) return "legacy"
  return (LEGACY_PROTOCOL_VERSIONS as ReadonlyArray<string>).includes(header) ? "legacy" : "modern"
}

/** A refusal of a 2026-07-28 POST: the HTTP status and the JSON-RPC error (with the request's id when read). */
export interface ModernRefusal {
  readonly _tag: "Refused"
  readonly status: number
  readonly response: RpcResponse
}

export type ModernMessage =
  | ModernRefusal
  | { readonly _tag: "Request"; readonly message: Extract<Message, { readonly _tag: "Request" }> }
  | { readonly _tag: "Notification" }

const refused = (status: number, id: RequestId | null, code: number, message: string, data?: unknown) =>
  ({ _tag: "Refused", status, response: failure(id, code, message, data) }) as const

/** The supported versions, newest first. */
export const SUPPORTED_PROTOCOL_VERSIONS = [MODERN_PROTOCOL_VERSION, ...LEGACY_PROTOCOL_VERSIONS] as const

/** UnsupportedProtocolVersionError: HTTP 400, -32022, the supported versions and the requested one. */
export const unsupportedVersion = (id: RequestId | null, requested: string): ModernRefusal =>
  refused(
    400,
    id,
    ModernCode.UnsupportedProtocolVersion,
    `Unsupported protocol version: ${JSON.stringify(requested.slice(0, 64))}; supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")} (the 2025 versions through initialize)`,
    { supported: [...SUPPORTED_PROTOCOL_VERSIONS], requested: requested.slice(0, 64) }
  )

const headerMismatch = (id: RequestId | null, message: string) =>
  refused(400, id, ModernCode.HeaderMismatch, `Header mismatch: ${message}`)

/** A header value as RFC 9110 reads it: optional whitespace around it is not part of it. */
const ows = (v: string): string => v.replace(/^[ \t]+|[ \t]+$/g, "")

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/
const VISIBLE = /^[\x20-\x7e\t]*$/

/**
 * A mirrored header's value (`Mcp-Name`, `Mcp-Param-*`): the plain value, or the decoded `=?base64?...?=` form.
 * Undefined when the value has characters a header must not carry, or its Base64 is malformed.
 */
export const decodeHeaderValue = (raw: string): string | undefined => {
  const v = ows(raw)
  if (!VISIBLE.test(v)) return undefined
  if (!(v.startsWith("=?base64?") && v.endsWith("?=") && v.length >= 11)) return v
  const encoded = v.slice(9, -2)
  if (!BASE64.test(encoded)) return undefined
  const decoded = Buffer.from(encoded, "base64").toString("utf8")
  return Buffer.from(decoded, "utf8").toString("base64") === encoded ? decoded : undefined
}

/** Whether a header's text stands for a body value (numbers compared numerically, booleans as true/false). */
const sameValue = (header: string, body: unknown): boolean => {
  if (typeof body === "string") return header === body
  if (typeof body === "number") return header.trim() !== "" && Number(header) === body
  if (typeof body === "boolean") return header === String(body)
  return false
}

/** One tool input property mirrored into a header (`x-mcp-header`): the property and the header's name part. */
export interface MirroredParam {
  readonly property: string
  readonly header: string
}

/** The headers of a POST: the first value of each, by lower-case name. */
export type HeaderLookup = (lowerCaseName: string) => string | undefined

/**
 * Validates one 2026-07-28 POST body (already parsed) against the revision: a single request or notification
 * (no batches, no responses), `_meta` with the protocol version and client capabilities, the version header
 * equal to it and supported, and the mirrored headers equal to the body. `mirrored` names the `x-mcp-header`
 * properties of a tool.
 */
export const validateModern = (
  body: unknown,
  header: HeaderLookup,
  mirrored: (tool: string) => ReadonlyArray<MirroredParam>
): ModernMessage => {
  const versionHeader = header("mcp-protocol-version")
  if (Array.isArray(body)) {
    return refused(400, null, RpcCode.InvalidRequest, "Invalid Request: JSON-RPC batches are not part of 2026-07-28")
  }
  const message = classify(body)
  if (message._tag === "Invalid") return refused(400, message.id, message.code, `Invalid Request: ${message.message}`)
  if (message._tag === "Response") {
    return refused(400, null, RpcCode.InvalidRequest, "Invalid Request: a client sends no JSON-RPC responses")
  }
  const metaVersion = protocolVersionInMeta(body)
  const id = message._tag === "Request" ? message.id : null
  if (versionHeader !== undefined && versionHeader !== MODERN_PROTOCOL_VERSION) {
    if (metaVersion === undefined || metaVersion === versionHeader) return unsupportedVersion(id, versionHeader)
  }
  if (message._tag === "Notification") {
    if (versionHeader === undefined) return headerMismatch(null, "the MCP-Protocol-Version header is required")
    if (metaVersion !== undefined && metaVersion !== versionHeader) {
      return headerMismatch(null, "MCP-Protocol-Version does not match _meta")
    }
    return { _tag: "Notification" }
  }
  const meta = message.params._meta
  if (!isPlainObject(meta)) {
    return refused(400, id, RpcCode.InvalidParams, "Invalid params: `_meta` is required at 2026-07-28")
  }
  if (typeof meta[MetaKey.protocolVersion] !== "string") {
    return refused(
      400,
      id,
      RpcCode.InvalidParams,
      `Invalid params: \`_meta["${MetaKey.protocolVersion}"]\` is required`
    )
  }
  if (!isPlainObject(meta[MetaKey.clientCapabilities])) {
    return refused(
      400,
      id,
      RpcCode.InvalidParams,
      `Invalid params: \`_meta["${MetaKey.clientCapabilities}"]\` must be an object`
    )
  }
  if (versionHeader === undefined) return headerMismatch(id, "the MCP-Protocol-Version header is required")
  if (metaVersion !== versionHeader) {
    return headerMismatch(
      id,
      `MCP-Protocol-Version ${JSON.stringify(versionHeader.slice(0, 64))} does not match _meta ${JSON.stringify(String(metaVersion).slice(0, 64))}`
    )
  }
  const method = header("mcp-method")
  if (method === undefined) return headerMismatch(id, "the Mcp-Method header is required")
  if (ows(method) !== message.method) {
    return headerMismatch(id, `Mcp-Method ${JSON.stringify(ows(method).slice(0, 64))} does not match the body's method`)
  }
  const named = NAMED[message.method]
  if (named !== undefined) {
    const value = message.params[named]
    const raw = header("mcp-name")
    if (typeof value === "string") {
      if (raw === undefined) return headerMismatch(id, `the Mcp-Name header is required for ${message.method}`)
      const decoded = decodeHeaderValue(raw)
      if (decoded === undefined) return headerMismatch(id, "Mcp-Name is not a valid header value")
      if (decoded !== value) {
        return headerMismatch(id, `Mcp-Name does not match the body's params.${named}`)
      }
    }
  }
  if (message.method === "tools/call" && typeof message.params.name === "string") {
    const args = isPlainObject(message.params.arguments) ? message.params.arguments : {}
    for (const { property, header: suffix } of mirrored(message.params.name)) {
      const value = args[property]
      const raw = header(`mcp-param-${suffix.toLowerCase()}`)
      if (value === undefined || value === null) continue
      if (raw === undefined)
        return headerMismatch(id, `the Mcp-Param-${suffix} header is required with \`${property}\``)
      const decoded = decodeHeaderValue(raw)
      if (decoded === undefined) return headerMismatch(id, `Mcp-Param-${suffix} is not a valid header value`)
      if (!sameValue(decoded, value)) return headerMismatch(id, `Mcp-Param-${suffix} does not match \`${property}\``)
    }
  }
  return { _tag: "Request", message }
}

/** The result of a 2026-07-28 request: `resultType` and the server's identity in `_meta`, beside the rest. */
export const modernResult = (result: object, serverInfo: object): object => {
  const meta = (result as { readonly _meta?: unknown })._meta
  return {
    ...result,
    resultType: "complete",
    _meta: { ...(isPlainObject(meta) ? meta : {}), [MetaKey.serverInfo]: serverInfo }
  }
}
