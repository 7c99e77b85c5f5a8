/**
 * MCP revision 2026-07-28 end to end over raw HTTP, as its transport page describes it (the official TypeScript
 * SDK 1.x speaks only the initialize-based revisions): per-request `_meta` and the mirrored headers,
 * `server/discover`, asset resources read for one credit exactly as the `read` tool, and push with
 * `subscriptions/listen` over a plane whose data changes on a short, known cadence (test/support/ticking-plane.ts).
 */
import { MCP_ASSET_URI_PREFIX, MCP_LISTEN_LIMITS, McpProtocolVersions, revokeKey } from "@market-data/core"
import { ASSET_URI_PREFIX, LISTEN_LIMITS, SUPPORTED_PROTOCOL_VERSIONS } from "@market-data/mcp"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startServer, type TestServer } from "./support/server.ts"
import { makeTickingPlane } from "./support/ticking-plane.ts"

const VERSION = "2026-07-28"
const META = {
  "io.modelcontextprotocol/protocolVersion": VERSION,
  "io.modelcontextprotocol/clientInfo": { name: "test", version: "1.0.0" },
  "io.modelcontextprotocol/clientCapabilities": {}
}

let server: TestServer
const SLOT_MS = 400

beforeAll(async () => {
  const plane = makeTickingPlane({ slotMs: SLOT_MS })
  server = await startServer({ rateLimitPerMinute: 10_000 }, [plane.handlers])
})
afterAll(() => server.close())

let nextId = 1

/** One 2026-07-28 request: the body's `_meta` and the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers. */
const post = async (method: string, params: Record<string, unknown> = {}, headers: Record<string, string> = {}) => {
  const id = nextId++
  const name = method === "resources/read" ? params.uri : method === "tools/call" ? params.name : undefined
  const res = await fetch(`${server.base}/api/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": VERSION,
      "mcp-method": method,
      ...(typeof name === "string" ? { "mcp-name": name } : {}),
      ...headers
    },
    body: JSON.stringify({ jsonrpc: "2.0", id, method, params: { ...params, _meta: META } })
  })
  const body = (await res.json()) as any
  return { status: res.status, headers: res.headers, body, id }
}

const balanceOf = async (key: string): Promise<number> => {
  const res = await post("tools/call", { name: "usage", arguments: {} }, { authorization: `Bearer ${key}` })
  return res.body.result.structuredContent.data.credits_remaining
}

/** An open listen stream: its SSE data messages as they arrive. */
const openListen = async (notifications: Record<string, unknown>, headers: Record<string, string> = {}) => {
  const controller = new AbortController()
  const id = nextId++
  const res = await fetch(`${server.base}/api/mcp`, {
    method: "POST",
    signal: controller.signal,
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": VERSION,
      "mcp-method": "subscriptions/listen",
      ...headers
    },
    body: JSON.stringify({ jsonrpc: "2.0", id, method: "subscriptions/listen", params: { notifications, _meta: META } })
  })
  const messages: Array<any> = []
  let comments = 0
  let ended = false
  const waiters: Array<() => void> = []
  const pump = async () => {
    if (res.body === null || !(res.headers.get("content-type") ?? "").startsWith("text/event-stream")) return
    const reader = res.body.getReader()
    const decoder = new TextDecoder()
    let buffer = ""
    try {
      while (true) {
        const { value, done } = await reader.read()
        if (done) break
        buffer += decoder.decode(value, { stream: true })
        let cut = buffer.indexOf("\n\n")
        while (cut >= 0) {
          const block = buffer.slice(0, cut)
          buffer = buffer.slice(cut + 2)
          if (block.startsWith(":")) comments++
          else if (block.startsWith("data: ")) messages.push(JSON.parse(block.slice(6)))
          for (const w of waiters.splice(0)) w()
          cut = buffer.indexOf("\n\n")
        }
      }
    } catch {
      // aborted
    }
    ended = true
    for (const w of waiters.splice(0)) w()
  }
  void pump()
  /** Waits until `ok` holds (checked on every message); fails after `ms`. */
  const until = (ok: () => boolean, ms = 10_000) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out; got ${JSON.stringify(messages)}`)), ms)
      const check = () => {
        if (ok()) {
          clearTimeout(timer)
          resolve()
        } else if (ended) {
          clearTimeout(timer)
          ok() ? resolve() : reject(new Error(`stream ended; got ${JSON.stringify(messages)}`))
        } else waiters.push(check)
      }
      check()
    })
  return {
    id,
    res,
    messages,
    comments: () => comments,
    ended: () => ended,
    until,
    close: () => controller.abort()
  }
}

describe("revision 2026-07-28 beside the initialize-based ones", () => {
  it("enforces the facts the mcp and access docs sections state", () => {
    expect({ ...LISTEN_LIMITS }).toEqual({ ...MCP_LISTEN_LIMITS })
    expect(ASSET_URI_PREFIX).toBe(MCP_ASSET_URI_PREFIX)
    expect([...SUPPORTED_PROTOCOL_VERSIONS]).toEqual([...McpProtocolVersions])
  })

  it("answers server/discover with the versions, capabilities, identity and caching hints", async () => {
    const res = await post("server/discover")
    expect(res.status).toBe(200)
    expect(res.body.result).toMatchObject({
      resultType: "complete",
      supportedVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
      capabilities: { tools: {}, resources: { subscribe: true, listChanged: true } },
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "service-market-data", version: "1.0.0" } },
      cacheScope: "public"
    })
    expect(res.body.result.ttlMs).toBeGreaterThan(0)
  })

  it("validates the version per request: header and _meta, unsupported versions, missing _meta, removed methods", async () => {
    const mismatch = await post("server/discover", {}, { "mcp-protocol-version": "2025-11-25" })
    // The header names an initialize-based version but the body speaks 2026-07-28.
    expect(mismatch.status).toBe(400)
    expect(mismatch.body.error.code).toBe(-32020)
    expect(mismatch.body.id).toBe(mismatch.id)
    const ping = await post("ping")
    expect(ping.status).toBe(404)
    expect(ping.body.error.code).toBe(-32601)
    const initialize = await post("initialize", { protocolVersion: VERSION, capabilities: {}, clientInfo: {} })
    expect(initialize.status).toBe(404)
    const noMeta = await fetch(`${server.base}/api/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": VERSION,
        "mcp-method": "tools/list"
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list", params: {} })
    })
    expect(noMeta.status).toBe(400)
    expect(((await noMeta.json()) as { error: { code: number } }).error.code).toBe(-32602)
  })

  it("lists the tools in the registry's order with the asset id mirrored into a header, with caching hints", async () => {
    const a = await post("tools/list")
    const b = await post("tools/list")
    expect(a.body.result.tools.map((t: { name: string }) => t.name)).toEqual(
      b.body.result.tools.map((t: { name: string }) => t.name)
    )
    expect(a.body.result).toMatchObject({ resultType: "complete", cacheScope: "public" })
    const read = a.body.result.tools.find((t: { name: string }) => t.name === "read")
    expect(read.inputSchema.properties.id["x-mcp-header"]).toBe("Asset-Id")
    // A call whose `id` is not mirrored is refused before it runs (and charges nothing).
    const { key } = await server.newKey(5)
    const unmirrored = await post(
      "tools/call",
      { name: "read", arguments: { id: "crypto:bitcoin" } },
      { authorization: `Bearer ${key}` }
    )
    expect(unmirrored.status).toBe(400)
    expect(unmirrored.body.error.code).toBe(-32020)
    const mirrored = await post(
      "tools/call",
      { name: "read", arguments: { id: "crypto:bitcoin" } },
      { authorization: `Bearer ${key}`, "mcp-param-asset-id": "crypto:bitcoin" }
    )
    expect(mirrored.body.result).toMatchObject({
      resultType: "complete",
      isError: false,
      _meta: { credits_charged: 1 }
    })
    expect(await balanceOf(key)).toBe(4)
  })

  it("still serves the initialize-based revisions on the same endpoint", async () => {
    const res = await fetch(`${server.base}/api/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25"
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "resources/read", params: { uri: "service://nothing" } })
    })
    // The older revisions keep -32002 for an unknown resource; 2026-07-28 answers -32602.
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32002)
    const modern = await post("resources/read", { uri: "service://nothing" })
    expect(modern.body.error.code).toBe(-32602)
    expect(modern.body.error.data.uri).toBe("service://nothing")
  })
})

describe("asset resources", () => {
  it("lists the asset template and reads one asset for one credit, exactly as the read tool", async () => {
    const templates = await post("resources/templates/list")
    expect(templates.body.result.resourceTemplates.map((t: { uriTemplate: string }) => t.uriTemplate)).toContain(
      "service://read/{asset_id}"
    )
    expect(templates.body.result).toMatchObject({ cacheScope: "public" })
    const { key } = await server.newKey(3)
    const uri = "service://read/crypto:ethereum"
    const res = await post("resources/read", { uri }, { authorization: `Bearer ${key}` })
    expect(res.status).toBe(200)
    const { result } = res.body
    expect(result).toMatchObject({ resultType: "complete", cacheScope: "private", _meta: { credits_charged: 1 } })
    const data = JSON.parse(result.contents[0].text).data
    expect(result.contents[0]).toMatchObject({ uri, mimeType: "application/json" })
    expect(data.asset_id).toBe("crypto:ethereum")
    // ttlMs is the time to the data's next update.
    expect(result.ttlMs).toBeGreaterThanOrEqual(0)
    expect(result.ttlMs).toBeLessThanOrEqual(SLOT_MS)
    expect(await balanceOf(key)).toBe(2)
  })

  it("replays a read under the same Idempotency-Key without charging again", async () => {
    const { key } = await server.newKey(3)
    const uri = "service://read/crypto:bitcoin"
    const headers = { authorization: `Bearer ${key}`, "idempotency-key": "read-once" }
    const first = await post("resources/read", { uri }, headers)
    const second = await post("resources/read", { uri }, headers)
    expect(second.body.result.contents[0].text).toBe(first.body.result.contents[0].text)
    expect(second.body.result._meta).toMatchObject({ credits_charged: 1, idempotent_replayed: true })
    expect(await balanceOf(key)).toBe(2)
  })

  it("refuses an Idempotency-Key on a batch of two asset reads (2025-03-26) before charging anything", async () => {
    const { key } = await server.newKey(3)
    const read = (id: number, asset: string) => ({
      jsonrpc: "2.0",
      id,
      method: "resources/read",
      params: { uri: `service://read/${asset}` }
    })
    const res = await fetch(`${server.base}/api/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-03-26",
        authorization: `Bearer ${key}`,
        "idempotency-key": "two-reads"
      },
      body: JSON.stringify([read(1, "crypto:bitcoin"), read(2, "crypto:ethereum")])
    })
    const answers = (await res.json()) as Array<{ error: { data: { error: { code: string } } } }>
    expect(answers.map((a) => a.error.data.error.code)).toEqual(["invalid_idempotency_key", "invalid_idempotency_key"])
    expect(await balanceOf(key)).toBe(3)
  })

  it("refuses a keyless read unauthenticated and serves nothing", async () => {
    const res = await post("resources/read", { uri: "service://read/crypto:bitcoin" })
    expect(res.body.result).toBeUndefined()
    expect(res.body.error.data.error.code).toBe("unauthenticated")
  })

  it("refuses a read without credits insufficient_credits, as the read tool does", async () => {
    const { key } = await server.newKey(0)
    const res = await post(
      "resources/read",
      { uri: "service://read/crypto:bitcoin" },
      { authorization: `Bearer ${key}` }
    )
    expect(res.body.error.data.error.code).toBe("insufficient_credits")
  })

  it("answers an unknown asset as a resource not found", async () => {
    const { key } = await server.newKey(3)
    const res = await post(
      "resources/read",
      { uri: "service://read/crypto:nothing" },
      { authorization: `Bearer ${key}` }
    )
    expect(res.body.error.code).toBe(-32602)
    expect(await balanceOf(key)).toBe(3)
  })
})

describe("push with subscriptions/listen", () => {
  it("acknowledges first, then notifies each change of a subscribed asset with the subscription id, free", async () => {
    const { key } = await server.newKey(5)
    const uris = ["service://read/crypto:bitcoin", "service://read/crypto:ethereum"]
    const stream = await openListen(
      { resourceSubscriptions: uris, toolsListChanged: true },
      { authorization: `Bearer ${key}` }
    )
    try {
      expect(stream.res.status).toBe(200)
      expect(stream.res.headers.get("content-type")).toContain("text/event-stream")
      await stream.until(() => stream.messages.length >= 1)
      expect(stream.messages[0]).toEqual({
        jsonrpc: "2.0",
        method: "notifications/subscriptions/acknowledged",
        params: {
          _meta: { "io.modelcontextprotocol/subscriptionId": stream.id },
          // toolsListChanged is not offered (the tools change only with the service), so not acknowledged.
          notifications: { resourceSubscriptions: uris }
        }
      })
      // The plane moves every SLOT_MS: both assets are announced.
      const updated = () => stream.messages.filter((m) => m.method === "notifications/resources/updated")
      await stream.until(() => new Set(updated().map((m) => m.params.uri)).size === 2)
      for (const m of updated()) {
        expect(m.params._meta).toEqual({ "io.modelcontextprotocol/subscriptionId": stream.id })
        expect(uris).toContain(m.params.uri)
      }
      // Notifications cost nothing (listening spent one rate unit, no credit); reading is the paid read.
      expect(await balanceOf(key)).toBe(5)
      const read = await post("resources/read", { uri: uris[0] }, { authorization: `Bearer ${key}` })
      expect(read.body.result._meta.credits_charged).toBe(1)
      expect(await balanceOf(key)).toBe(4)
    } finally {
      stream.close()
    }
  })

  it("refuses keyless listening to an asset resource", async () => {
    const res = await fetch(`${server.base}/api/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": VERSION,
        "mcp-method": "subscriptions/listen"
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 9,
        method: "subscriptions/listen",
        params: { notifications: { resourceSubscriptions: ["service://read/crypto:bitcoin"] }, _meta: META }
      })
    })
    expect(res.status).toBe(401)
    const body = (await res.json()) as { id: number; error: { data: { error: { code: string } } } }
    expect(body.id).toBe(9)
    expect(body.error.data.error.code).toBe("unauthenticated")
  })

  it("caps the resources of a stream and the streams of a key", async () => {
    const { key } = await server.newKey(1)
    const auth = { authorization: `Bearer ${key}` }
    const many = Array.from({ length: LISTEN_LIMITS.resourcesPerStream + 1 }, (_, i) => `service://read/crypto:a${i}`)
    const tooMany = await openListen({ resourceSubscriptions: many }, auth)
    expect(tooMany.res.status).toBe(200)
    expect(((await tooMany.res.json()) as { error: { code: number } }).error.code).toBe(-32602)
    const open = []
    for (let i = 0; i < LISTEN_LIMITS.streamsPerKey; i++) {
      const s = await openListen({ resourceSubscriptions: ["service://read/crypto:bitcoin"] }, auth)
      await s.until(() => s.messages.length >= 1)
      open.push(s)
    }
    try {
      const over = await openListen({ resourceSubscriptions: ["service://read/crypto:bitcoin"] }, auth)
      expect(over.res.status).toBe(429)
      const body = (await over.res.json()) as { error: { data: { reason: string; limit: number } } }
      expect(body.error.data).toMatchObject({ reason: "listen_stream_limit", limit: LISTEN_LIMITS.streamsPerKey })
    } finally {
      for (const s of open) s.close()
    }
  })

  it("closes a revoked key's streams with the unauthenticated error", async () => {
    const recheck = LISTEN_LIMITS.keyRecheckMs
    LISTEN_LIMITS.keyRecheckMs = 100
    const { key, id } = await server.newKey(1)
    const stream = await openListen(
      { resourceSubscriptions: ["service://read/crypto:bitcoin"] },
      { authorization: `Bearer ${key}` }
    )
    try {
      await stream.until(() => stream.messages.length >= 1)
      await server.run(revokeKey(id))
      await stream.until(() => stream.ended())
      const last = stream.messages.at(-1)
      expect(last).toMatchObject({
        jsonrpc: "2.0",
        id: stream.id,
        error: { data: { error: { code: "unauthenticated" } } }
      })
    } finally {
      LISTEN_LIMITS.keyRecheckMs = recheck
      stream.close()
    }
  })

  it("sends keep-alive comments while nothing changes", async () => {
    const keepAlive = LISTEN_LIMITS.keepAliveMs
    LISTEN_LIMITS.keepAliveMs = 50
    const stream = await openListen({ toolsListChanged: true })
    try {
      await stream.until(() => stream.messages.length >= 1)
      expect(stream.messages[0].params.notifications).toEqual({})
      await new Promise<void>((resolve, reject) => {
        const timer = setInterval(() => {
          if (stream.comments() >= 2) {
            clearInterval(timer)
            resolve()
          }
        }, 20)
        setTimeout(() => {
          clearInterval(timer)
          reject(new Error("no keep-alive"))
        }, 5_000)
      })
    } finally {
      LISTEN_LIMITS.keepAliveMs = keepAlive
      stream.close()
    }
  })
})

describe("a server that stops", () => {
  it("ends its listen streams with the completion result instead of waiting them out", async () => {
    const own = await startServer({ rateLimitPerMinute: 10_000 }, [makeTickingPlane({ slotMs: 60_000 }).handlers])
    const { key } = await own.newKey(1)
    const res = await fetch(`${own.base}/api/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${key}`,
        "mcp-protocol-version": VERSION,
        "mcp-method": "subscriptions/listen"
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "watch",
        method: "subscriptions/listen",
        params: { notifications: { resourceSubscriptions: ["service://read/crypto:bitcoin"] }, _meta: META }
      })
    })
    const reader = (res.body as ReadableStream<Uint8Array>).getReader()
    const decoder = new TextDecoder()
    let text = decoder.decode((await reader.read()).value)
    expect(text).toContain("notifications/subscriptions/acknowledged")
    const closing = own.close()
    while (true) {
      const { value, done } = await reader.read()
      if (done) break
      text += decoder.decode(value)
    }
    await closing
    const last = text
      .split("\n\n")
      .filter((b) => b.startsWith("data: "))
      .map((b) => JSON.parse(b.slice(6)))
      .at(-1)
    expect(last).toEqual({
      jsonrpc: "2.0",
      id: "watch",
      result: { resultType: "complete", _meta: { "io.modelcontextprotocol/subscriptionId": "watch" } }
    })
  })
})
