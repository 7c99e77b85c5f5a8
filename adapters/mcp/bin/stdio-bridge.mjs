#!/usr/bin/env node
/**
 * A stdio bridge to the service's MCP endpoint, for MCP hosts that launch local servers over stdio and cannot
 * send an `Authorization` header to a remote one.
 *
 * The host starts this script as its "server"; each JSON-RPC message the host writes (one per line on stdin)
 * is POSTed to the endpoint with the API key as `Authorization: Bearer <key>`, and the endpoint's answer is
 * written back (one per line on stdout). The endpoint is stateless, so nothing but the negotiated protocol
 * version (sent as `MCP-Protocol-Version` after `initialize`) is kept between messages. Diagnostics go to
 * stderr. Plain JavaScript with no dependencies: it runs on any Node with `fetch` (18 or later), independent
 * of the Node the service needs.
 *
 *   MARKET_DATA_API_KEY=mdk_... node adapters/mcp/bin/stdio-bridge.mjs https://<host>/api/mcp
 *
 * The URL may also come from `MARKET_DATA_MCP_URL`; the default is http://127.0.0.1:8080/api/mcp. Without a
 * key the keyless tools still work. The bridge adds no `Idempotency-Key`: a retried paid call is a new call.
 */
import { createInterface } from "node:readline"

const url = process.argv[2] ?? process.env.MARKET_DATA_MCP_URL ?? "http://127.0.0.1:8080/api/mcp"
const key = process.env.MARKET_DATA_API_KEY ?? ""

try {
  new URL(url)
} catch {
  process.stderr.write(`stdio-bridge: not a URL: ${JSON.stringify(url)}\n`)
  process.exit(2)
}

/** The version `initialize` settled on; sent on every later POST, as the transport requires. */
let protocolVersion

const write = (message) => process.stdout.write(`${JSON.stringify(message)}\n`)

/** A JSON-RPC error for the message with `id` (nothing for a notification, which has none). */
const fail = (id, code, message) => {
  if (id !== undefined) write({ jsonrpc: "2.0", id, error: { code, message } })
}

const forward = async (message) => {
  const id = Array.isArray(message) || message === null || typeof message !== "object" ? undefined : message.id
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" }
  if (key !== "") headers.authorization = `Bearer ${key}`
  if (protocolVersion !== undefined) headers["mcp-protocol-version"] = protocolVersion
  let response
  try {
    response = await fetch(url, { method: "POST", headers, body: JSON.stringify(message) })
  } catch (e) {
    process.stderr.write(`stdio-bridge: ${url}: ${e?.cause?.message ?? e?.message ?? e}\n`)
    return fail(id, -32603, `stdio bridge: cannot reach ${url}`)
  }
  const text = await response.text()
  if (text.length === 0) return // 202: a notification or a response, accepted
  let body
  try {
    body = JSON.parse(text)
  } catch {
    return fail(id, -32603, `stdio bridge: HTTP ${response.status} from ${url} without a JSON body`)
  }
  // A refusal of the HTTP request (403, 405, 406, 413, 415, 400 on a version) carries a JSON-RPC error
  // without an id: give it the id of the message it refused, so the host can match it.
  if (!response.ok && body !== null && typeof body === "object" && !Array.isArray(body) && body.id === null) {
    if (id === undefined) return
    body = { ...body, id }
  }
  if (message?.method === "initialize" && typeof body?.result?.protocolVersion === "string") {
    protocolVersion = body.result.protocolVersion
  }
  write(body)
}

/** Messages in flight, so that the bridge exits only once every answer is written. */
const pending = new Set()
/** The `initialize` in flight: later messages wait for it, as they carry the version it settles. */
let initializing = Promise.resolve()

const lines = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY })
lines.on("line", (line) => {
  if (line.trim() === "") return
  let message
  try {
    message = JSON.parse(line)
  } catch {
    return write({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error: the line is not JSON" } })
  }
  const run = message?.method === "initialize" ? forward(message) : initializing.then(() => forward(message))
  if (message?.method === "initialize") initializing = run.catch(() => undefined)
  const p = run
    .catch((e) => process.stderr.write(`stdio-bridge: ${e?.message ?? e}\n`))
    .finally(() => pending.delete(p))
  pending.add(p)
})
lines.on("close", () => {
  Promise.all(pending).then(() => process.exit(0))
})
