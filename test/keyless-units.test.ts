/**
 * Keyless callers cannot hurt paid ones (fast part; the load itself is test/faults/keyless-amplification.test.ts):
 *
 * - every keyless request spends one rate unit of its caller: the root and OpenAPI documents, the docs page,
 *   every MCP message (`initialize`, `ping`, `tools/list`, notifications, each member of a batch, members not
 *   run because of the batch cap);
 * - a batch's answer is capped (MCP_MAX_BATCH_ANSWER_BYTES): the members past it are answered -32000
 *   `batch_answer_limit`, not run;
 * - a bad key is refused on every keyless route and transport;
 * - a connection's requests are answered one at a time: the next waits until the previous answer is handed to
 *   the kernel and the write buffer has drained, with the socket paused meanwhile.
 */
import { EventEmitter } from "node:events"
import type * as http from "node:http"
import * as net from "node:net"
import { MCP_MAX_BATCH_ANSWER_BYTES } from "@market-data/core"
import { oneAtATimePerConnection } from "@market-data/http"
import { afterEach, describe, expect, it } from "vitest"
import { mcpPost } from "./support/mcp.ts"
import { startServer, type TestServer } from "./support/server.ts"

let server: TestServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const remaining = (headers: Headers): number => {
  const m = /^"default";r=(\d+);t=\d+$/.exec(headers.get("ratelimit") ?? "")
  if (m === null) throw new Error(`no RateLimit header: ${headers.get("ratelimit")}`)
  return Number(m[1])
}

const ping = (id: number) => ({ jsonrpc: "2.0", id, method: "ping" })
const toolsList = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/list" })
const BAD_KEY = { authorization: "Bearer mdk_00000000000000000000000000000000" }

describe("keyless requests spend the client address's units", () => {
  it("the root, OpenAPI and docs page documents and every MCP method, until the limit refuses them", async () => {
    server = await startServer({ rateLimitPerMinute: 6 })
    const base = server.base
    const root = await fetch(`${base}/api/v1`)
    expect(root.status).toBe(200)
    expect(remaining(root.headers)).toBe(5)
    const openapi = await fetch(`${base}/api/v1/openapi.json`)
    expect(openapi.status).toBe(200)
    expect(remaining(openapi.headers)).toBe(4)
    const page = await fetch(`${base}/`)
    expect(page.status).toBe(200)
    expect(remaining(page.headers)).toBe(3)
    const init = await mcpPost(base, {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } }
    })
    expect(init.body.result.protocolVersion).toBe("2025-11-25")
    expect(remaining(init.headers)).toBe(2)
    const note = await mcpPost(base, { jsonrpc: "2.0", method: "notifications/initialized" })
    expect(note.status).toBe(202)
    expect(remaining(note.headers)).toBe(1)
    const list = await mcpPost(base, toolsList(2))
    expect(list.body.result.tools).toHaveLength(23)
    expect(remaining(list.headers)).toBe(0)

    // Out of units: each refused as its transport refuses, with Retry-After; a keyless MCP POST on arrival, with
    // one JSON-RPC error without an id (its body is not read).
    const pinged = await mcpPost(base, ping(3))
    expect(pinged.status).toBe(429)
    expect(pinged.body.id).toBeNull()
    expect(pinged.body.error.code).toBe(-32000)
    expect(pinged.body.error.data.error).toMatchObject({ code: "rate_limited", retryable: true })
    expect(Number(pinged.headers.get("retry-after"))).toBeGreaterThan(0)
    const noted = await mcpPost(base, { jsonrpc: "2.0", method: "notifications/initialized" })
    expect(noted.status).toBe(429)
    expect(noted.body.error.data.error.code).toBe("rate_limited")
    for (const path of ["/api/v1", "/api/v1/openapi.json", "/"]) {
      const res = await fetch(`${base}${path}`)
      expect(res.status, path).toBe(429)
      expect(((await res.json()) as any).error.code, path).toBe("rate_limited")
      expect(Number(res.headers.get("retry-after")), path).toBeGreaterThan(0)
    }
  })

  it("each member of a batch spends one unit; the members past the limit are refused", async () => {
    server = await startServer({ rateLimitPerMinute: 10 })
    const first = await mcpPost(server.base, [ping(1), ping(2), ping(3), ping(4)])
    expect(first.body.map((r: any) => r.result)).toEqual([{}, {}, {}, {}])
    expect(remaining(first.headers)).toBe(6)
    const second = await mcpPost(
      server.base,
      Array.from({ length: 8 }, (_, i) => ping(10 + i))
    )
    expect(second.body.map((r: any) => r.id)).toEqual([10, 11, 12, 13, 14, 15, 16, 17])
    expect(second.body.slice(0, 6).map((r: any) => r.result)).toEqual([{}, {}, {}, {}, {}, {}])
    for (const refused of second.body.slice(6)) {
      expect(refused.error.code).toBe(-32000)
      expect(refused.error.data.error.code).toBe("rate_limited")
    }
    expect(remaining(second.headers)).toBe(0)
  })

  it("a keyed caller's protocol messages spend the key's units, not the address's", async () => {
    server = await startServer({ rateLimitPerMinute: 3 })
    const { key } = await server.newKey(10, 100)
    const keyed = { authorization: `Bearer ${key}` }
    const res = await mcpPost(server.base, [ping(1), toolsList(2), ping(3), ping(4)], keyed)
    expect(res.body.map((r: any) => r.error)).toEqual([undefined, undefined, undefined, undefined])
    expect(res.headers.get("ratelimit-policy")).toBe('"default";q=100;w=60')
    expect(remaining(res.headers)).toBe(96)
    // The address's own budget is untouched.
    expect(remaining((await fetch(`${server.base}/api/v1`)).headers)).toBe(2)
  })
})

describe("a batch's answer is capped", () => {
  for (const [label, query] of [
    ["the default tool list", ""],
    ["the tool list with output schemas", "?output_schemas=true"]
  ] as const) {
    it(`stops running members once the answers reach ${MCP_MAX_BATCH_ANSWER_BYTES} bytes (${label}); each member still spends its unit`, async () => {
      server = await startServer({ rateLimitPerMinute: 100 })
      const members = Array.from({ length: 32 }, (_, i) => toolsList(i + 1))
      const res = await mcpPost(server.base, members, {}, "POST", query)
      expect(res.status).toBe(200)
      expect(res.body.map((r: any) => r.id)).toEqual(members.map((m) => m.id))
      // A prefix of whole tool lists, as many as fit; the member that would pass the cap and every later one
      // are refused, not run.
      const delivered = res.body.findIndex((r: any) => r.result === undefined)
      expect(delivered).toBeGreaterThanOrEqual(1)
      for (const list of res.body.slice(0, delivered)) expect(list.result.tools).toHaveLength(23)
      const one = Buffer.byteLength(JSON.stringify(res.body[0]))
      expect(delivered * one).toBeLessThanOrEqual(MCP_MAX_BATCH_ANSWER_BYTES)
      expect((delivered + 1) * one).toBeGreaterThan(MCP_MAX_BATCH_ANSWER_BYTES)
      for (const capped of res.body.slice(delivered)) {
        expect(capped.error.code).toBe(-32000)
        expect(capped.error.data).toEqual({
          reason: "batch_answer_limit",
          limit_bytes: MCP_MAX_BATCH_ANSWER_BYTES,
          retryable: true
        })
      }
      // The whole answer stays within the cap plus the small refusals.
      expect(Buffer.byteLength(res.text)).toBeLessThanOrEqual(MCP_MAX_BATCH_ANSWER_BYTES + 32 * 400)
      expect(remaining(res.headers)).toBe(100 - 32)
    })
  }

  it("small members after a large one still fit under the cap", async () => {
    server = await startServer({ rateLimitPerMinute: 100 })
    const res = await mcpPost(server.base, [toolsList(1), ping(2), ping(3)])
    expect(res.body.map((r: any) => r.result !== undefined)).toEqual([true, true, true])
  })
})

describe("a keyless MCP POST spends its unit on arrival, whatever becomes of it", () => {
  it("a body that is not JSON, a batch under a version without batches, a wrong Content-Type: one unit each", async () => {
    server = await startServer({ rateLimitPerMinute: 5 })
    const notJson = await mcpPost(server.base, "{not json")
    expect(notJson.status).toBe(400)
    expect(notJson.body.error.code).toBe(-32700)
    expect(remaining(notJson.headers)).toBe(4)
    const batch = await mcpPost(server.base, [ping(1), ping(2)], { "mcp-protocol-version": "2025-11-25" })
    expect(batch.status).toBe(400)
    expect(batch.body.error.code).toBe(-32600)
    expect(remaining(batch.headers)).toBe(3)
    const wrongType = await mcpPost(server.base, ping(3), { "content-type": "text/plain" })
    expect(wrongType.status).toBe(415)
    expect(remaining(wrongType.headers)).toBe(2)
    // A message that runs spends the unit its POST spent on arrival, not another: one unit per message, as before.
    const single = await mcpPost(server.base, ping(4))
    expect(single.body.result).toEqual({})
    expect(remaining(single.headers)).toBe(1)
    const call = await mcpPost(server.base, {
      jsonrpc: "2.0",
      id: 5,
      method: "tools/call",
      params: { name: "docs", arguments: { section: "access" } }
    })
    expect(call.body.result.isError).not.toBe(true)
    expect(remaining(call.headers)).toBe(0)
    // Out of units: refused on arrival, one error for the whole POST, its body unread.
    const refused = await mcpPost(server.base, "{not json either")
    expect(refused.status).toBe(429)
    expect(refused.body.error.data.error.code).toBe("rate_limited")
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
  })

  it("a batch sent out of units is answered with one error, smaller than the batch", async () => {
    server = await startServer({ rateLimitPerMinute: 1 })
    expect((await mcpPost(server.base, ping(1))).body.result).toEqual({})
    const members = Array.from({ length: 32 }, (_, i) => ping(i + 10))
    const res = await mcpPost(server.base, members)
    expect(res.status).toBe(429)
    expect(Array.isArray(res.body)).toBe(false)
    expect(res.body.id).toBeNull()
    expect(res.body.error.data.error.code).toBe("rate_limited")
    expect(Buffer.byteLength(res.text)).toBeLessThan(Buffer.byteLength(JSON.stringify(members)))
  })

  it("a batch whose units run out part way: the later members' refusals are short (the answer a small multiple of the batch)", async () => {
    server = await startServer({ rateLimitPerMinute: 2 })
    const members = Array.from({ length: 32 }, (_, i) => ping(i + 1))
    const sent = Buffer.byteLength(JSON.stringify(members))
    const res = await mcpPost(server.base, members)
    expect(res.status).toBe(200)
    expect(res.body.map((r: any) => r.id)).toEqual(members.map((m) => m.id))
    expect(res.body.slice(0, 2).map((r: any) => r.result)).toEqual([{}, {}])
    for (const refused of res.body.slice(2)) expect(refused.error.data.error.code).toBe("rate_limited")
    // The first refusal in full, the rest short.
    expect(res.body[2].error.data.error.message).toMatch(/rate limit of 2 units per minute/)
    expect(res.body[3].error.data.error.message).toBe("as above")
    expect(Buffer.byteLength(res.text)).toBeLessThan(4 * sent)
  })
})

describe("a bad key on a keyless route is refused everywhere", () => {
  it("the root, OpenAPI, the docs page, docs and schema: 401 unauthenticated with WWW-Authenticate", async () => {
    server = await startServer({ rateLimitPerMinute: 100 })
    for (const path of ["/api/v1", "/api/v1/openapi.json", "/", "/api/v1/docs", "/api/v1/schema"]) {
      const res = await fetch(`${server.base}${path}`, { headers: BAD_KEY })
      expect(res.status, path).toBe(401)
      expect(res.headers.get("www-authenticate"), path).toContain("Bearer")
      expect(((await res.json()) as any).error.code, path).toBe("unauthenticated")
    }
  })
})

describe("one request at a time per connection (backpressure)", () => {
  /** A fake connection: pause/resume recorded, `writableNeedDrain` settable, `drain`/`close` emitted by hand. */
  const fakeSocket = () => {
    const socket = Object.assign(new EventEmitter(), {
      destroyed: false,
      writableNeedDrain: false,
      paused: false,
      pause() {
        socket.paused = true
      },
      resume() {
        socket.paused = false
      }
    })
    return socket
  }
  const turn = () => new Promise((resolve) => setImmediate(resolve))

  it("starts a pipelined request only after the previous answer closed and the write buffer drained", async () => {
    const socket = fakeSocket()
    const started: Array<string> = []
    const gate = oneAtATimePerConnection((req) => {
      started.push((req as unknown as { name: string }).name)
    })
    const pair = (name: string) =>
      [
        { name, socket } as unknown as http.IncomingMessage,
        new EventEmitter() as unknown as http.ServerResponse
      ] as const
    const [a, b, c] = [pair("a"), pair("b"), pair("c")]
    gate(...a)
    gate(...b)
    gate(...c)
    expect(started).toEqual(["a"])
    // Requests waiting: the connection is not read further.
    expect(socket.paused).toBe(true)

    a[1].emit("close")
    await turn()
    expect(started).toEqual(["a", "b"])

    // b's answer is out of the process, but the socket still holds more than its high-water mark: c waits.
    socket.writableNeedDrain = true
    b[1].emit("close")
    await turn()
    expect(started).toEqual(["a", "b"])
    expect(socket.paused).toBe(true)
    socket.writableNeedDrain = false
    socket.emit("drain")
    await turn()
    expect(started).toEqual(["a", "b", "c"])

    // Nothing left waiting: the connection is read again.
    c[1].emit("close")
    await turn()
    expect(socket.paused).toBe(false)
  })

  it("a client that pipelines and then reads gets every answer, in order", async () => {
    server = await startServer({ rateLimitPerMinute: 1000 })
    const count = 20
    const body = (id: number) => JSON.stringify(toolsList(id))
    const request = (id: number) =>
      `POST /api/mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n` +
      `Content-Length: ${Buffer.byteLength(body(id))}\r\n${id === count ? "Connection: close\r\n" : ""}\r\n${body(id)}`
    const text = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(server?.port as number, "127.0.0.1")
      const chunks: Array<Buffer> = []
      socket.on("data", (c) => chunks.push(c))
      socket.on("error", reject)
      socket.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
      socket.write(Array.from({ length: count }, (_, i) => request(i + 1)).join(""))
    })
    const ids = [...text.matchAll(/\{"jsonrpc":"2\.0","id":(\d+),"result":\{"tools"/g)].map((m) => Number(m[1]))
    expect(ids).toEqual(Array.from({ length: count }, (_, i) => i + 1))
  })
})
