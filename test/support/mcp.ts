/**
 * Helpers for the MCP end-to-end suites: raw JSON-RPC POSTs, the official SDK client pinned to one protocol
 * version, and a JSON Schema 2020-12 validator.
 */

import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { Ajv2020 } from "ajv/dist/2020.js"

export const MCP_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream"
} as const

export interface McpReply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  /** The parsed body (undefined when empty). */
  readonly body: any
}

/** POSTs `body` (serialized unless already a string) to `/api/mcp` with the MCP headers plus `headers`. */
export const mcpPost = async (
  base: string,
  body: unknown,
  headers: Record<string, string> = {},
  method = "POST",
  query = ""
): Promise<McpReply> => {
  const res = await fetch(`${base}/api/mcp${query}`, {
    method,
    headers: { ...MCP_HEADERS, ...headers },
    ...(method === "GET" || method === "HEAD" ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) })
  })
  const text = await res.text()
  return { status: res.status, headers: res.headers, text, body: text.length === 0 ? undefined : JSON.parse(text) }
}

/** The typed arguments of an HTTP query, as an agent would send them (lists as arrays, numbers, booleans). */
export const typedArgs = (query: string): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const [name, value] of new URLSearchParams(query)) {
    if (name === "ids" || name === "statements" || name === "types") out[name] = value.split(",")
    else if (/^\d+$/.test(value)) out[name] = Number(value)
    else if (value === "true" || value === "false") out[name] = value === "true"
    else out[name] = value
  }
  return out
}

let nextId = 1

/** One JSON-RPC request; returns the reply with `body` the JSON-RPC response. */
export const rpc = (base: string, method: string, params?: unknown, headers: Record<string, string> = {}) =>
  mcpPost(base, { jsonrpc: "2.0", id: nextId++, method, ...(params === undefined ? {} : { params }) }, headers)

/** `tools/list` with every tool's `outputSchema` (the endpoint's `?output_schemas=true`). */
export const listToolsWithOutputSchemas = (base: string) =>
  mcpPost(base, { jsonrpc: "2.0", id: nextId++, method: "tools/list" }, {}, "POST", "?output_schemas=true")

/** A `tools/call`; returns the reply and the tool result. */
export const callTool = async (
  base: string,
  name: string,
  args: Record<string, unknown>,
  headers: Record<string, string> = {}
) => {
  const reply = await rpc(base, "tools/call", { name, arguments: args }, headers)
  return { reply, result: reply.body?.result }
}

/**
 * The SDK's Streamable HTTP client transport, made to ask for `version` in `initialize` (the SDK always asks
 * for its latest) so that each supported protocol version is exercised end to end with the real client.
 */
class VersionedTransport extends StreamableHTTPClientTransport {
  negotiated: string | undefined
  private readonly version: string
  constructor(url: URL, version: string, headers: Record<string, string>) {
    super(url, { requestInit: { headers } })
    this.version = version
  }
  override send(message: JSONRPCMessage, options?: Parameters<StreamableHTTPClientTransport["send"]>[1]) {
    const m = message as { method?: string; params?: Record<string, unknown> }
    if (m.method === "initialize") {
      return super.send(
        { ...message, params: { ...m.params, protocolVersion: this.version } } as JSONRPCMessage,
        options
      )
    }
    return super.send(message, options)
  }
  override setProtocolVersion(version: string): void {
    this.negotiated = version
    super.setProtocolVersion(version)
  }
}

/**
 * A connected SDK client speaking `version`, optionally with a key. With `outputSchemas`, it connects to
 * `/api/mcp?output_schemas=true`, so `listTools` gives it every `outputSchema` and it validates each
 * `structuredContent` against them.
 */
export const sdkClient = async (base: string, version: string, key?: string, outputSchemas = false) => {
  const transport = new VersionedTransport(
    new URL(`${base}/api/mcp${outputSchemas ? "?output_schemas=true" : ""}`),
    version,
    key === undefined ? {} : { Authorization: `Bearer ${key}` }
  )
  const client = new Client({ name: "market-data-e2e", version: "1.0.0" })
  await client.connect(transport)
  return { client, transport }
}

/**
 * A strict JSON Schema 2020-12 validator (ajv, a root devDependency). The one format our schemas use, `date`,
 * is checked as a calendar date.
 */
export const makeAjv = (): Ajv2020 =>
  new Ajv2020({ strict: true, allErrors: true }).addFormat("date", {
    type: "string",
    validate: (s: string) => {
      const d = new Date(`${s}T00:00:00Z`)
      return /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(d.getTime()) && d.toISOString().startsWith(s)
    }
  })
