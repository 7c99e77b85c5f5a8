/**
 * The MCP transport end to end over a real server: the HTTP framing table (405, 406, 415, 202, 403, 400, 413),
 * every JSON-RPC error code, the lifecycle, the 23 tools and their schemas, resources, auth inside
 * `tools/call`, and the official SDK client once per supported protocol version.
 */

import {
  DocsSections,
  docsExamples,
  ErrorBody,
  type OperationSpec,
  Operations,
  operation,
  paramsJsonSchema
} from "@market-data/core"
import {
  CATALOG_VERSION_HEADER,
  catalogVersion,
  catalogVersionOf,
  LEGACY_PROTOCOL_VERSIONS,
  MAX_BATCH_MESSAGES,
  MAX_MCP_BODY_BYTES,
  MCP_PATH,
  SUPPORTED_PROTOCOL_VERSIONS,
  Tools,
  ToolsWithOutputSchemas
} from "@market-data/mcp"
import { McpError } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  MCP_ALLOWED_ORIGINS_VARIABLE,
  MCP_ENDPOINT_PATH,
  MCP_MAX_BATCH_MESSAGES,
  MCP_MAX_BODY_BYTES,
  McpProtocolVersions,
  mcpDocMarkdown
} from "../core/src/McpDoc.ts"
import { makeTestPlane } from "../core/test/support/TestPlane.ts"
import { callTool, listToolsWithOutputSchemas, makeAjv, mcpPost, rpc, sdkClient, typedArgs } from "./support/mcp.ts"
import { rawRequest, startServer, type TestServer } from "./support/server.ts"

// Read per request through Effect Config, so setting it before the first request configures the server. Restored
// after the file: a worker may run other files after this one (vitest.config.ts: `isolate: false`).
const allowedOriginsBefore = process.env.MARKET_DATA_ALLOWED_ORIGINS
process.env.MARKET_DATA_ALLOWED_ORIGINS = "https://app.example.com, https://other.example:8443"
afterAll(() => {
  if (allowedOriginsBefore === undefined) delete process.env.MARKET_DATA_ALLOWED_ORIGINS
  else process.env.MARKET_DATA_ALLOWED_ORIGINS = allowedOriginsBefore
})

let server: TestServer
let key: string

beforeAll(async () => {
  const plane = await Effect.runPromise(makeTestPlane())
  // Keyless calls share the client address's budget and every test comes from 127.0.0.1: raise the default.
  server = await startServer({ rateLimitPerMinute: 100_000 }, [plane.handlers])
  key = (await server.newKey(1000, 100_000)).key
})
afterAll(() => server.close())

const auth = (k = key) => ({ Authorization: `Bearer ${k}` })
const isErrorBody = Schema.is(ErrorBody)
const initialize = (protocolVersion: unknown = "2025-11-25") => ({
  protocolVersion,
  capabilities: {},
  clientInfo: { name: "e2e", version: "1.0.0" }
})

describe("HTTP framing", () => {
  it("answers GET and DELETE (and any method but POST) 405 with Allow", async () => {
    for (const method of ["GET", "DELETE", "PUT", "PATCH"]) {
      const res = await mcpPost(server.base, { jsonrpc: "2.0", id: 1, method: "ping" }, {}, method)
      expect(res.status, method).toBe(405)
      expect(res.headers.get("allow")).toBe("POST, OPTIONS")
      expect(res.body.error.code).toBe(-32000)
      expect(res.body.id).toBeNull()
    }
  })

  it("answers 406 unless Accept names both application/json and text/event-stream", async () => {
    const ping = { jsonrpc: "2.0", id: 1, method: "ping" }
    for (const accept of ["application/json", "text/event-stream", "*/*", "application/json, text/event-stream;q=0"]) {
      const res = await mcpPost(server.base, ping, { accept })
      expect(res.status, accept).toBe(406)
      expect(res.body.error.code).toBe(-32000)
    }
    const none = await fetch(`${server.base}${MCP_PATH}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(ping)
    })
    expect(none.status).toBe(406)
    const ok = await mcpPost(server.base, ping, { accept: "text/event-stream; q=0.5, application/json" })
    expect(ok.status).toBe(200)
  })

  it("answers 415 unless Content-Type is application/json", async () => {
    const ping = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })
    for (const contentType of ["text/plain", "application/x-www-form-urlencoded", "application/json; charset=latin1"]) {
      const res = await mcpPost(server.base, ping, { "content-type": contentType })
      expect(res.status, contentType).toBe(415)
    }
    expect((await mcpPost(server.base, ping, { "content-type": "application/json; charset=utf-8" })).status).toBe(200)
  })

  it("answers notifications and responses 202 with no body", async () => {
    const initialized = await mcpPost(server.base, { jsonrpc: "2.0", method: "notifications/initialized" })
    expect(initialized.status).toBe(202)
    expect(initialized.text).toBe("")
    const cancelled = await mcpPost(server.base, {
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 7 }
    })
    expect(cancelled.status).toBe(202)
    const response = await mcpPost(server.base, { jsonrpc: "2.0", id: 5, result: {} })
    expect(response.status).toBe(202)
    expect(response.text).toBe("")
    const errorResponse = await mcpPost(server.base, { jsonrpc: "2.0", id: 6, error: { code: -1, message: "x" } })
    expect(errorResponse.status).toBe(202)
  })

  it("refuses a foreign Origin with 403 and accepts none, loopback on any port, and configured origins", async () => {
    const ping = { jsonrpc: "2.0", id: 1, method: "ping" }
    for (const origin of ["https://evil.example.com", "http://localhost.evil.com", "null", "http://127.0.0.2:80"]) {
      const res = await mcpPost(server.base, ping, { origin })
      expect(res.status, origin).toBe(403)
      expect(res.body.error.code).toBe(-32000)
      expect(res.headers.get("access-control-allow-origin")).toBeNull()
    }
    for (const origin of [
      "http://localhost:5173",
      "http://127.0.0.1:9",
      "https://localhost",
      "http://[::1]:3000",
      "https://app.example.com",
      "https://other.example:8443"
    ]) {
      const res = await mcpPost(server.base, ping, { origin })
      expect(res.status, origin).toBe(200)
      expect(res.headers.get("access-control-allow-origin")).toBe(origin)
      expect(res.headers.get("vary")).toContain("Origin")
    }
    // A configured origin admits only its own scheme and port.
    expect((await mcpPost(server.base, ping, { origin: "http://app.example.com" })).status).toBe(403)
    expect((await mcpPost(server.base, ping, { origin: "https://other.example" })).status).toBe(403)
    const none = await mcpPost(server.base, ping)
    expect(none.status).toBe(200)
    expect(none.headers.get("access-control-allow-origin")).toBeNull()
  })

  it("answers a CORS preflight from an allowed origin and refuses one from elsewhere", async () => {
    const preflight = (origin: string) =>
      fetch(`${server.base}${MCP_PATH}`, {
        method: "OPTIONS",
        headers: {
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers": "authorization, content-type, mcp-protocol-version"
        }
      })
    const ok = await preflight("https://app.example.com")
    expect(ok.status).toBe(204)
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://app.example.com")
    expect(ok.headers.get("access-control-allow-methods")).toBe("POST, OPTIONS")
    expect(ok.headers.get("access-control-allow-headers")).toContain("MCP-Protocol-Version")
    expect(ok.headers.get("access-control-allow-headers")).toContain("Idempotency-Key")
    expect((await preflight("https://evil.example.com")).status).toBe(403)
  })

  it("answers 400 UnsupportedProtocolVersion to an MCP-Protocol-Version it does not speak, and serves the three initialize-based ones", async () => {
    const ping = { jsonrpc: "2.0", id: 1, method: "ping" }
    for (const version of ["2024-11-05", "2099-01-01", "garbage", ""]) {
      const res = await mcpPost(server.base, ping, { "mcp-protocol-version": version })
      expect(res.status, version).toBe(400)
      // The 2026-07-28 error: it lists the supported versions, echoes the requested one and the request's id.
      expect(res.body.error.code).toBe(-32022)
      expect(res.body.error.data).toEqual({ supported: [...SUPPORTED_PROTOCOL_VERSIONS], requested: version })
      expect(res.body.id).toBe(1)
    }
    for (const version of LEGACY_PROTOCOL_VERSIONS) {
      expect((await mcpPost(server.base, ping, { "mcp-protocol-version": version })).status).toBe(200)
    }
  })

  it("answers 413 to a body over the limit, declared or streamed", async () => {
    const big = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "docs", arguments: { section: "x".repeat(MAX_MCP_BODY_BYTES) } }
    })
    const declared = await mcpPost(server.base, big)
    expect(declared.status).toBe(413)
    expect(declared.body.error.code).toBe(-32000)
    // Chunked: no Content-Length, so the limit is enforced while reading.
    const chunk = "x".repeat(64 * 1024)
    const chunks = Array.from({ length: 5 }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`).join("")
    const streamed = await rawRequest(
      server.port,
      `POST ${MCP_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
        `Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n${chunks}0\r\n\r\n`
    )
    expect(streamed.status).toBe(413)
    // Just under the limit is read (and then fails as JSON-RPC, not as size).
    const under = await mcpPost(server.base, "x".repeat(MAX_MCP_BODY_BYTES - 10))
    expect(under.status).toBe(400)
    expect(under.body.error.code).toBe(-32700)
  })

  it("sends the catalog-version beacon on MCP and HTTP answers, equal to tools/list _meta", async () => {
    const list = await rpc(server.base, "tools/list")
    expect(list.body.result._meta.catalog_version).toBe(catalogVersion)
    expect(list.headers.get(CATALOG_VERSION_HEADER)).toBe(catalogVersion)
    expect(catalogVersion).toMatch(/^[0-9a-f]{16}$/)
    const refused = await mcpPost(server.base, {}, {}, "GET")
    expect(refused.headers.get(CATALOG_VERSION_HEADER)).toBe(catalogVersion)
    for (const path of ["/api/v1", "/api/v1/docs", "/api/v1/nope", "/api/v1/usage"]) {
      const res = await fetch(`${server.base}${path}`)
      expect(res.headers.get(CATALOG_VERSION_HEADER), path).toBe(catalogVersion)
    }
    const cors = (await fetch(`${server.base}/api/v1/docs`)).headers.get("access-control-expose-headers")
    expect(cors).toContain("X-Catalog-Version")
  })
})

describe("the catalog version", () => {
  it("is a hash of the registry: stable, and different when a description, a price or a parameter changes", () => {
    expect(catalogVersionOf(Operations)).toBe(catalogVersion)
    const changed = (f: (op: OperationSpec) => OperationSpec) =>
      catalogVersionOf(Operations.map((op) => (op.name === "funding" ? f(op) : op)))
    const variants = [
      changed((op) => ({ ...op, summary: `${op.summary}!` })),
      changed((op) => ({ ...op, price: { per: "asset", credits: { crypto: 4, equity: 4 } } })),
      changed((op) => ({ ...op, params: op.params.slice(0, 1) })),
      catalogVersionOf(Operations.slice(1))
    ]
    for (const v of variants) expect(v).not.toBe(catalogVersion)
    expect(new Set(variants).size).toBe(variants.length)
  })
})

describe("JSON-RPC", () => {
  it("answers -32700 (HTTP 400) to a body that is not JSON", async () => {
    for (const body of ["{", "", "not json", '{"jsonrpc": "2.0",}']) {
      const res = await mcpPost(server.base, body)
      expect(res.status, body).toBe(400)
      expect(res.body).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32700, message: expect.any(String) } })
    }
  })

  it("answers -32600 to a message that is not JSON-RPC 2.0", async () => {
    const cases: ReadonlyArray<readonly [unknown, string | number | null]> = [
      [{ id: 1, method: "ping" }, 1],
      [{ jsonrpc: "1.0", id: "a", method: "ping" }, "a"],
      [{ jsonrpc: "2.0", id: null, method: "ping" }, null],
      [{ jsonrpc: "2.0", id: true, method: "ping" }, null],
      [{ jsonrpc: "2.0", id: 2, method: 42 }, 2],
      [{ jsonrpc: "2.0", id: 3 }, 3],
      [{ jsonrpc: "2.0", id: 4, method: "ping", params: "x" }, 4],
      [42, null],
      ['"ping"', null],
      [null, null]
    ]
    for (const [body, id] of cases) {
      const res = await mcpPost(server.base, body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.error.code, JSON.stringify(body)).toBe(-32600)
      expect(res.body.id).toBe(id)
    }
  })

  it("answers -32601 to an unknown method", async () => {
    for (const method of ["nope", "prompts/list", "resources/subscribe", "logging/setLevel"]) {
      const res = await rpc(server.base, method, {})
      expect(res.status).toBe(200)
      expect(res.body.error.code, method).toBe(-32601)
    }
  })

  it("answers -32602 to invalid params, an unknown tool and any cursor", async () => {
    const cases: ReadonlyArray<readonly [string, unknown]> = [
      ["initialize", { capabilities: {}, clientInfo: { name: "x", version: "1" } }],
      ["initialize", { protocolVersion: 2025, capabilities: {}, clientInfo: { name: "x", version: "1" } }],
      ["tools/call", { name: "nope", arguments: {} }],
      ["tools/call", { arguments: {} }],
      ["tools/call", { name: "docs", arguments: ["section", "index"] }],
      ["tools/call", { name: "docs", arguments: "section=index" }],
      ["tools/list", { cursor: "abc" }],
      ["tools/list", { cursor: "" }],
      ["resources/list", { cursor: "abc" }],
      ["resources/templates/list", { cursor: "abc" }],
      ["resources/read", {}],
      ["ping", []]
    ]
    for (const [method, params] of cases) {
      const res = await rpc(server.base, method, params)
      expect(res.body.error?.code, `${method} ${JSON.stringify(params)}`).toBe(-32602)
    }
    const unknown = await rpc(server.base, "tools/call", { name: "nope", arguments: {} })
    expect(unknown.body.error.data.tools).toHaveLength(23)
  })

  it("answers -32002 to an unknown resource", async () => {
    for (const uri of ["service://docs/nope", "service://docs/", "file:///etc/passwd", "service://other/index"]) {
      const res = await rpc(server.base, "resources/read", { uri })
      expect(res.body.error.code, uri).toBe(-32002)
      expect(res.body.error.data.uri).toBe(uri)
    }
  })

  it("echoes each initialize-based protocol version in initialize and answers 2025-11-25 to any other", async () => {
    for (const version of LEGACY_PROTOCOL_VERSIONS) {
      const res = await rpc(server.base, "initialize", initialize(version))
      expect(res.body.result.protocolVersion).toBe(version)
    }
    for (const version of ["2024-11-05", "2099-12-31", "x", "2026-07-28"]) {
      const res = await rpc(server.base, "initialize", initialize(version))
      expect(res.body.result.protocolVersion).toBe("2025-11-25")
    }
    const res = await rpc(server.base, "initialize", initialize())
    expect(res.body.result.serverInfo).toMatchObject({ name: "service-market-data", version: "1.0.0" })
    expect(res.body.result.capabilities).toEqual({
      tools: { listChanged: false },
      resources: { subscribe: false, listChanged: false }
    })
    expect(res.body.result.instructions).toContain("docs")
    // The feed is simulated by default: the instructions claim no feed, and say how a result names its source.
    const instructions = res.body.result.instructions as string
    expect(instructions).not.toMatch(/\blive (crypto|market|data)/i)
    for (const source of ["`simulated`", "`live`", "`sec`", "_meta.data_source"]) expect(instructions).toContain(source)
    // What the tool descriptions leave out is said here once.
    expect(instructions).toContain("isError: true")
  })

  it("answers ping with an empty result, keeping string and number ids", async () => {
    expect((await mcpPost(server.base, { jsonrpc: "2.0", id: "abc", method: "ping" })).body).toEqual({
      jsonrpc: "2.0",
      id: "abc",
      result: {}
    })
    expect((await mcpPost(server.base, { jsonrpc: "2.0", id: 0, method: "ping" })).body.id).toBe(0)
  })
})

describe("batches", () => {
  const ping = (id: number) => ({ jsonrpc: "2.0", id, method: "ping" })

  it("are accepted under 2025-03-26 (and without a version header, which means 2025-03-26)", async () => {
    for (const headers of [{ "mcp-protocol-version": "2025-03-26" }, {}]) {
      const res = await mcpPost(
        server.base,
        [ping(1), { jsonrpc: "2.0", method: "notifications/initialized" }, ping(2), { jsonrpc: "2.0", id: 9 }],
        headers
      )
      expect(res.status).toBe(200)
      expect(res.body).toEqual([
        { jsonrpc: "2.0", id: 1, result: {} },
        { jsonrpc: "2.0", id: 2, result: {} },
        { jsonrpc: "2.0", id: 9, error: expect.objectContaining({ code: -32600 }) }
      ])
    }
  })

  it("of notifications only answer 202", async () => {
    const res = await mcpPost(server.base, [
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } }
    ])
    expect(res.status).toBe(202)
    expect(res.text).toBe("")
  })

  it("are refused with -32600 under 2025-06-18 and 2025-11-25", async () => {
    for (const version of ["2025-06-18", "2025-11-25"]) {
      const res = await mcpPost(server.base, [ping(1), ping(2)], { "mcp-protocol-version": version })
      expect(res.status, version).toBe(400)
      expect(res.body.error.code).toBe(-32600)
      expect(res.body.error.message).toContain("2025-03-26")
    }
  })

  it("refuse an empty or oversized batch, and initialize inside a batch", async () => {
    const empty = await mcpPost(server.base, [])
    expect(empty.status).toBe(400)
    expect(empty.body.error.code).toBe(-32600)
    const big = await mcpPost(
      server.base,
      Array.from({ length: MAX_BATCH_MESSAGES + 1 }, (_, i) => ping(i))
    )
    expect(big.status).toBe(400)
    expect(big.body.error.code).toBe(-32600)
    const init = await mcpPost(server.base, [{ jsonrpc: "2.0", id: 1, method: "initialize", params: initialize() }])
    expect(init.status).toBe(200)
    expect(init.body[0].error.code).toBe(-32600)
  })
})

describe("tools", () => {
  it("lists exactly the 23 operations, with schemas and annotations", async () => {
    const res = await rpc(server.base, "tools/list", {})
    const tools = res.body.result.tools as ReadonlyArray<any>
    const full = (await listToolsWithOutputSchemas(server.base)).body.result.tools as ReadonlyArray<any>
    expect(tools.map((t) => t.name)).toEqual(Operations.map((o) => o.name))
    expect(tools).toHaveLength(23)
    for (const [i, t] of tools.entries()) {
      const op = operation(t.name)!
      expect(t.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true })
      expect(t.inputSchema.type).toBe("object")
      // Output schemas only on request; otherwise the same tool.
      expect(t.outputSchema).toBeUndefined()
      const { outputSchema, ...rest } = full[i]
      expect(rest).toEqual(t)
      expect(outputSchema.type).toBe("object")
      expect(outputSchema.$schema).toBe("https://json-schema.org/draft/2020-12/schema")
      expect(Object.keys(t.inputSchema.properties)).toEqual(op.params.map((p) => p.name))
      // The portable form of the parameter schemas `schema` serves as `input_schema`.
      expect(t.inputSchema).toEqual(paramsJsonSchema(op.params, "tool"))
      expect(t.description).toContain(op.summary)
      expect(t.description.length).toBeGreaterThan(100)
      if (op.auth === "paid") expect(t.description).toContain("credit")
      if (op.auth === "keyless") expect(t.description).toContain("Keyless")
    }
  })

  it("has schemas that compile as JSON Schema 2020-12, lists as arrays", () => {
    const ajv = makeAjv()
    for (const t of ToolsWithOutputSchemas) {
      const input = ajv.compile(t.inputSchema)
      const output = ajv.compile(t.outputSchema!)
      expect(output({ error: { code: "invalid_parameter", message: "m", param: "id", retryable: false } })).toBe(true)
      expect(output({}), t.name).toBe(false)
      expect(output({ error: { code: "no_such_code", message: "m", retryable: false } })).toBe(false)
      // `id`/`ids` exclusivity is a cross rule the service checks; only required parameters are in the schema.
      expect(input({}), t.name).toBe((t.inputSchema.required as ReadonlyArray<string>).length === 0)
      expect(input({ bogus: 1 }), t.name).toBe(false)
      if ("ids" in (t.inputSchema.properties as object)) {
        expect(input({ ids: ["crypto:bitcoin", "crypto:ethereum"] })).toBe(true)
        // The comma-joined form is accepted by the service (see below), not stated in the portable schema.
        expect(input({ ids: "crypto:bitcoin,crypto:ethereum" })).toBe(false)
        expect(input({ ids: 42 })).toBe(false)
        expect(input({ ids: ["crypto:bitcoin"] })).toBe(false)
      }
    }
    const financials = ajv.compile(Tools.find((t) => t.name === "financials")!.inputSchema)
    expect(financials({ id: "eq:320193:AAPL", statements: ["income", "balance"], periods: 8 })).toBe(true)
    expect(financials({ id: "eq:320193:AAPL", periods: 21 })).toBe(false)
  })

  it("answers every landed operation with structuredContent that validates against its outputSchema", async () => {
    // A server with only the production handlers (no test plane): whatever has landed is covered, and each
    // example request the docs show is the call.
    const plain = await startServer({ rateLimitPerMinute: 100_000 })
    try {
      const { key: plainKey } = await plain.newKey(10_000, 100_000)
      const index = (await (await fetch(`${plain.base}/api/v1/schema`)).json()) as any
      const landed = (index.data.operations as ReadonlyArray<{ name: string; status: string }>)
        .filter((o) => o.status === "available")
        .map((o) => o.name)
      expect(landed).toEqual(expect.arrayContaining(["docs", "schema", "usage"]))
      const ajv = makeAjv()
      for (const name of landed) {
        const validate = ajv.compile(ToolsWithOutputSchemas.find((t) => t.name === name)!.outputSchema!)
        const examples = docsExamples.filter((e) => e.section === "examples" && e.operation === name)
        expect(examples.length, name).toBeGreaterThan(0)
        for (const example of examples) {
          const args = Object.fromEntries(new URLSearchParams(example.query))
          const { result } = await callTool(plain.base, name, args, auth(plainKey))
          expect(validate(result.structuredContent), `${name} ${JSON.stringify(validate.errors)}`).toBe(true)
          if (name !== "docs") expect(JSON.parse(result.content[0].text)).toEqual(result.structuredContent)
        }
      }
    } finally {
      await plain.close()
    }
  })

  it("answers invalid arguments with the HTTP error object, and it validates against outputSchema", async () => {
    const ajv = makeAjv()
    for (const t of ToolsWithOutputSchemas) {
      const { reply, result } = await callTool(server.base, t.name, { bogus: 1 }, auth())
      expect(reply.status).toBe(200)
      expect(result.isError, t.name).toBe(true)
      expect(result.structuredContent.error).toMatchObject({
        code: "invalid_parameter",
        param: "bogus",
        retryable: false
      })
      expect(isErrorBody(result.structuredContent)).toBe(true)
      expect(JSON.parse(result.content[0].text)).toEqual(result.structuredContent)
      expect(result._meta.credits_charged).toBe(0)
      expect(ajv.validate(t.outputSchema!, result.structuredContent), t.name).toBe(true)
    }
    const cases: ReadonlyArray<readonly [string, Record<string, unknown>, string, string]> = [
      ["price", {}, "missing_parameter", "id"],
      ["price", { id: "crypto:bitcoin", ids: ["crypto:ethereum", "crypto:solana"] }, "conflicting_parameters", "ids"],
      ["price", { id: "bitcoin" }, "invalid_parameter", "id"],
      ["price", { ids: ["crypto:bitcoin"] }, "invalid_parameter", "ids"],
      ["series", { id: "crypto:bitcoin", limit: 501 }, "invalid_parameter", "limit"],
      ["series", { id: "crypto:bitcoin", limit: "ten" }, "invalid_parameter", "limit"],
      ["series", { id: "crypto:bitcoin", limit: "5" }, "invalid_parameter", "limit"],
      ["series", { id: "crypto:bitcoin", view: "summary", limit: 5 }, "parameter_requires", "limit"],
      ["docs", { section: "nope" }, "invalid_parameter", "section"],
      ["docs", { section: 7 }, "invalid_parameter", "section"]
    ]
    for (const [name, args, code, param] of cases) {
      const { result } = await callTool(server.base, name, args, auth())
      expect(result.isError, `${name} ${JSON.stringify(args)}`).toBe(true)
      expect(result.structuredContent.error).toMatchObject({ code, param })
    }
  })

  it("has input schemas that admit every request the docs show, as typed arguments", () => {
    const ajv = makeAjv()
    for (const example of docsExamples) {
      const t = Tools.find((x) => x.name === example.operation)!
      const args = typedArgs(example.query)
      expect(ajv.validate(t.inputSchema, args), `${example.operation}?${example.query} ${ajv.errorsText()}`).toBe(true)
    }
  })

  it("still accepts lists as one comma-joined string, as the descriptions say", async () => {
    const { key: own } = await server.newKey(10)
    const { result } = await callTool(server.base, "price", { ids: "crypto:bitcoin,crypto:ethereum" }, auth(own))
    expect(result.isError, JSON.stringify(result.structuredContent)).toBe(false)
    expect(result.structuredContent.data.map((r: { asset_id: string }) => r.asset_id)).toEqual([
      "crypto:bitcoin",
      "crypto:ethereum"
    ])
  })

  it("agrees with the service on every bound and enum: what the inputSchema refuses, the tool refuses naming the param; what it leaves to the description, the tool still refuses", async () => {
    const ajv = makeAjv()
    let checked = 0
    for (const op of Operations) {
      const t = Tools.find((x) => x.name === op.name)!
      const validate = ajv.compile(t.inputSchema)
      const asset = op.planes.length === 1 && op.planes[0] === "equity" ? "eq:320193:AAPL" : "crypto:bitcoin"
      const base: Record<string, unknown> = {}
      for (const p of op.params) {
        if (p.required) base[p.name] = p.type.kind === "assetId" ? asset : "abc"
      }
      if (op.rules.some((r) => r.rule === "exactlyOne")) base.id = asset
      for (const p of op.params) {
        // Each bad value, and whether the portable schema states the rule it breaks (the rest is in the
        // parameter's description: lengths, uniqueness, calendar dates, the slug's 64 characters).
        const bad: Array<readonly [unknown, boolean]> = []
        const k = p.type
        // A valid value as text is refused too: arguments are typed JSON, as the inputSchema says.
        if (k.kind === "int") {
          bad.push([k.min - 1, true], [k.max + 1, true], [1.5, true], ["ten", true], [String(k.min), true])
        }
        if (k.kind === "enum") bad.push(["zzz", true], [3, true])
        if (k.kind === "enumList") bad.push([["zzz"], true], [[], true], [[k.values[0], k.values[0]], false])
        if (k.kind === "string") bad.push(["", false], ["x".repeat(k.maxLength + 1), false])
        if (k.kind === "boolean") bad.push(["yes", true], [1, true], ["true", true])
        if (k.kind === "date") bad.push(["2025-13-01", false], ["yesterday", true])
        if (k.kind === "assetId") bad.push(["bitcoin", true], [42, true], [`crypto:${"a".repeat(65)}`, false])
        if (k.kind === "assetIdList") {
          bad.push([["crypto:bitcoin"], true], [["crypto:bitcoin", "crypto:bitcoin"], false], [[1, 2], true])
        }
        for (const [value, inSchema] of bad) {
          const args = { ...base, [p.name]: value }
          if (p.name === "ids") delete args.id
          expect(validate(args), `${op.name}.${p.name}=${JSON.stringify(value)}`).toBe(!inSchema)
          const { result } = await callTool(server.base, op.name, args, auth())
          expect(result.isError, `${op.name}.${p.name}=${JSON.stringify(value)}`).toBe(true)
          expect(["invalid_parameter", "invalid_cursor"], `${op.name}.${p.name}`).toContain(
            result.structuredContent.error.code
          )
          expect(result.structuredContent.error.param).toBe(p.name)
          checked++
        }
      }
    }
    expect(checked).toBeGreaterThan(80)
  })

  it("treats a null argument as omitted", async () => {
    const { result } = await callTool(server.base, "docs", { section: null })
    expect(result.isError).toBe(false)
    expect(result.structuredContent.data.section).toBe("index")
  })

  it("answers docs as {data: {section, markdown}} with the markdown as text, keyless and free", async () => {
    const { result } = await callTool(server.base, "docs", { section: "errors" })
    expect(result.isError).toBe(false)
    expect(result.structuredContent.data.section).toBe("errors")
    expect(result.structuredContent.data.markdown).toBe(
      await (await fetch(`${server.base}/api/v1/docs?section=errors`)).text()
    )
    expect(result.content).toEqual([{ type: "text", text: result.structuredContent.data.markdown }])
    expect(result._meta.credits_charged).toBe(0)
  })
})

describe("auth inside tools/call", () => {
  it("keeps initialize, ping, tools/list and resources keyless, and refuses them with a bad key as every operation does", async () => {
    expect((await rpc(server.base, "initialize", initialize())).body.result.serverInfo.name).toBe("service-market-data")
    expect((await rpc(server.base, "ping", {})).body.result).toEqual({})
    expect((await rpc(server.base, "tools/list", {})).body.result.tools).toHaveLength(23)
    for (const bad of [auth("mdk_00000000000000000000000000000000"), auth("not-a-key")]) {
      for (const [method, params] of [
        ["initialize", initialize()],
        ["ping", {}],
        ["tools/list", {}],
        ["resources/list", {}],
        ["resources/templates/list", {}],
        ["resources/read", { uri: "service://docs/index" }]
      ] as const) {
        const res = await rpc(server.base, method, params, bad)
        expect(res.status, method).toBe(200)
        expect(res.body.result, method).toBeUndefined()
        expect(res.body.error.code, method).toBe(-32000)
        expect(res.body.error.data.error.code, method).toBe("unauthenticated")
      }
      // The keyless `docs` tool and `GET /api/v1` answer the same refusal.
      const { result } = await callTool(server.base, "docs", {}, bad)
      expect(result.structuredContent.error.code).toBe("unauthenticated")
      const root = await fetch(`${server.base}/api/v1`, { headers: bad })
      expect(root.status).toBe(401)
      expect(((await root.json()) as any).error.code).toBe("unauthenticated")
    }
    // A notification alone has no response to carry the refusal: the POST answers 401.
    const note = await mcpPost(
      server.base,
      { jsonrpc: "2.0", method: "notifications/initialized" },
      auth("mdk_00000000000000000000000000000000")
    )
    expect(note.status).toBe(401)
    expect(note.headers.get("www-authenticate")).toContain("Bearer")
    expect(note.body.error.data.error.code).toBe("unauthenticated")
  })

  it("answers a paid or key-requiring tool without a valid key as an unauthenticated tool result, HTTP 200, no WWW-Authenticate", async () => {
    for (const headers of [{}, auth("mdk_00000000000000000000000000000000"), auth("not-a-key")]) {
      for (const name of ["price", "read", "usage", "resolve", "series"]) {
        const { reply, result } = await callTool(server.base, name, { id: "crypto:bitcoin" }, headers)
        expect(reply.status).toBe(200)
        expect(reply.headers.get("www-authenticate")).toBeNull()
        expect(result.isError, name).toBe(true)
        expect(result.structuredContent.error.code).toBe("unauthenticated")
        expect(result._meta.credits_charged).toBe(0)
      }
    }
  })

  it("authenticates tools/call from the Authorization header of the POST", async () => {
    const { key: own, id } = await server.newKey(7)
    const { result } = await callTool(server.base, "usage", {}, auth(own))
    expect(result.isError).toBe(false)
    expect(result.structuredContent.data).toMatchObject({ key_id: id, credits_remaining: 7 })
  })
})

describe("resources", () => {
  it("lists every docs section at service://docs/<section> and a template", async () => {
    const list = await rpc(server.base, "resources/list", {})
    expect(list.body.result.resources.map((r: { uri: string }) => r.uri)).toEqual(
      DocsSections.map((s) => `service://docs/${s}`)
    )
    for (const r of list.body.result.resources) expect(r).toMatchObject({ mimeType: "text/markdown" })
    const templates = await rpc(server.base, "resources/templates/list")
    expect(templates.body.result.resourceTemplates).toEqual([
      expect.objectContaining({ uriTemplate: "service://docs/{section}", mimeType: "text/markdown" }),
      expect.objectContaining({ uriTemplate: "service://read/{asset_id}", mimeType: "application/json" })
    ])
  })

  it("reads each section as the same markdown HTTP serves", async () => {
    for (const section of DocsSections) {
      const uri = `service://docs/${section}`
      const res = await rpc(server.base, "resources/read", { uri })
      const http = await (await fetch(`${server.base}/api/v1/docs?section=${section}`)).text()
      expect(res.body.result.contents).toEqual([{ uri, mimeType: "text/markdown", text: http }])
    }
  })
})

describe("the official SDK client", () => {
  // The SDK 1.x speaks the initialize-based versions; 2026-07-28 has its own end-to-end test (mcp-2026.test.ts).
  for (const version of LEGACY_PROTOCOL_VERSIONS) {
    it(`works end to end under protocol version ${version}`, async () => {
      const { key: own } = await server.newKey(20)
      // With the output schemas, so that the client checks every structuredContent against them.
      const { client, transport } = await sdkClient(server.base, version, own, true)
      try {
        expect(transport.negotiated).toBe(version)
        expect(client.getServerVersion()).toMatchObject({ name: "service-market-data", version: "1.0.0" })
        expect(client.getServerCapabilities()).toMatchObject({ tools: {}, resources: {} })

        const { tools } = await client.listTools()
        expect(tools).toHaveLength(23)
        for (const t of tools) {
          expect(t.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true })
          expect(t.outputSchema?.type).toBe("object")
        }

        // The client validates structuredContent against the outputSchema itself.
        const docs = await client.callTool({ name: "docs", arguments: { section: "quickstart" } })
        expect(docs.isError).toBe(false)
        expect((docs.structuredContent as any).data.section).toBe("quickstart")

        const price = await client.callTool({ name: "price", arguments: { id: "crypto:bitcoin" } })
        expect(price.isError).toBe(false)
        expect(price._meta).toEqual({ credits_charged: 1 })
        expect((price.structuredContent as any).data.asset_id).toBe("crypto:bitcoin")

        const batch = await client.callTool({ name: "price", arguments: { ids: ["crypto:ethereum", "crypto:nope"] } })
        expect(batch._meta).toEqual({ credits_charged: 1 })
        expect((batch.structuredContent as any).refused).toEqual([{ id: "crypto:nope", reason: "unknown_asset" }])

        const usage = await client.callTool({ name: "usage", arguments: {} })
        expect((usage.structuredContent as any).data.credits_remaining).toBe(18)

        const invalid = await client.callTool({ name: "price", arguments: { id: "nope" } })
        expect(invalid.isError).toBe(true)
        expect((invalid.structuredContent as any).error.code).toBe("invalid_parameter")

        const resource = await client.readResource({ uri: "service://docs/index" })
        expect(resource.contents[0]).toMatchObject({ uri: "service://docs/index", mimeType: "text/markdown" })
        expect((resource.contents[0] as { text: string }).text.startsWith("#")).toBe(true)
        expect((await client.listResources()).resources).toHaveLength(DocsSections.length)
        expect(await client.ping()).toEqual({})

        const unknown = await client.callTool({ name: "nope", arguments: {} }).then(
          () => undefined,
          (e: unknown) => e
        )
        expect(unknown).toBeInstanceOf(McpError)
        expect((unknown as McpError).code).toBe(-32602)
      } finally {
        await client.close()
      }
    })
  }

  it("without a key still lists tools and gets unauthenticated from a paid tool", async () => {
    const { client } = await sdkClient(server.base, "2025-11-25")
    try {
      expect((await client.listTools()).tools).toHaveLength(23)
      const res = await client.callTool({ name: "funding", arguments: { id: "crypto:bitcoin" } })
      expect(res.isError).toBe(true)
      expect((res.structuredContent as any).error.code).toBe("unauthenticated")
    } finally {
      await client.close()
    }
  })
})

describe("the mcp docs section", () => {
  it("states the facts the transport implements", () => {
    expect(MCP_ENDPOINT_PATH).toBe(MCP_PATH)
    expect([...McpProtocolVersions]).toEqual([...SUPPORTED_PROTOCOL_VERSIONS])
    expect(MCP_MAX_BODY_BYTES).toBe(MAX_MCP_BODY_BYTES)
    expect(MCP_MAX_BATCH_MESSAGES).toBe(MAX_BATCH_MESSAGES)
    expect(MCP_ALLOWED_ORIGINS_VARIABLE).toBe("MARKET_DATA_ALLOWED_ORIGINS")
    for (const fact of ["-32700", "-32600", "-32601", "-32602", "-32002", "403", "405", "406", "413", "415", "202"]) {
      expect(mcpDocMarkdown).toContain(fact)
    }
    expect(mcpDocMarkdown).toContain("service://docs/<section>")
    expect(mcpDocMarkdown).toContain("_meta.credits_charged")
    expect(mcpDocMarkdown.startsWith("# MCP\n")).toBe(true)
  })
})
