/**
 * Money over MCP equals money over HTTP: for every operation the same call gives the same data and the same
 * charge on both transports; an idempotency key spans them (a call over HTTP replays over MCP and back); every
 * `tools/call`, also inside a batch, spends its own rate unit and is billed on its own. The paid operations are
 * served by the deterministic test plane.
 */
import { docsExamples, MoneyStore, Operations } from "@market-data/core"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeTestPlane, type TestPlane } from "../core/test/support/TestPlane.ts"
import { callTool, mcpPost, typedArgs } from "./support/mcp.ts"
import { rawRequest, startServer, type TestServer } from "./support/server.ts"

let server: TestServer
let plane: TestPlane

beforeAll(async () => {
  plane = await Effect.runPromise(makeTestPlane())
  server = await startServer({ rateLimitPerMinute: 100_000 }, [plane.handlers])
})
afterAll(() => server.close())

const auth = (key: string) => ({ Authorization: `Bearer ${key}` })
const httpGet = (path: string, key: string, headers: Record<string, string> = {}) =>
  fetch(`${server.base}${path}`, { headers: { ...auth(key), ...headers } })
const balanceOf = (keyId: string) =>
  server.run(Effect.flatMap(MoneyStore, (ledger) => ledger.balance(keyId, Date.now())))
const executions = () => Effect.runPromise(plane.executions)

describe("parity with HTTP", () => {
  for (const op of Operations) {
    const example = docsExamples.find((e) => e.section === "examples" && e.operation === op.name)
    it(`${op.name}: the same call gives the same data and charge over HTTP and MCP`, async () => {
      expect(example, op.name).toBeDefined()
      const query = example?.query ?? ""
      // Two keys in the same state, one per transport.
      const overHttp = await server.newKey(100, 100_000)
      const overMcp = await server.newKey(100, 100_000)
      const http = await httpGet(`/api/v1/${op.name}${query === "" ? "" : `?${query}`}`, overHttp.key)
      const httpText = await http.text()
      const httpCharge = Number(http.headers.get("x-credits-charged") ?? 0)
      const { reply, result } = await callTool(server.base, op.name, typedArgs(query), auth(overMcp.key))
      expect(reply.status).toBe(200)
      expect(result._meta.credits_charged, op.name).toBe(httpCharge)
      expect(result.isError, op.name).toBe(http.status !== 200)
      if (op.name === "docs") {
        expect(result.structuredContent.data.markdown).toBe(httpText)
      } else if (op.name === "usage") {
        const h = JSON.parse(httpText).data
        const m = result.structuredContent.data
        expect(m.credits_remaining).toBe(h.credits_remaining)
        expect(m.rate_limit.limit).toBe(h.rate_limit.limit)
        expect(m.key_id).toBe(overMcp.id)
      } else {
        expect(result.structuredContent, op.name).toEqual(JSON.parse(httpText))
        // The text content is the HTTP body itself.
        expect(result.content[0].text).toBe(httpText)
      }
      expect(await balanceOf(overMcp.id)).toBe(await balanceOf(overHttp.id))
    })
  }

  it("takes ids as an array or a comma-joined string, equal to HTTP's ids", async () => {
    const ids = ["crypto:bitcoin", "eq:320193:AAPL", "crypto:nope"]
    const http = await httpGet(`/api/v1/price?ids=${ids.join(",")}`, (await server.newKey(100)).key)
    const body = await http.json()
    expect(http.headers.get("x-credits-charged")).toBe("2")
    for (const value of [ids, ids.join(",")]) {
      const { key, id } = await server.newKey(100)
      const { result } = await callTool(server.base, "price", { ids: value }, auth(key))
      expect(result.structuredContent).toEqual(body)
      expect(result._meta.credits_charged).toBe(2)
      expect(await balanceOf(id)).toBe(98)
    }
  })

  it("refuses a batch the balance cannot hold, charging nothing", async () => {
    const { key, id } = await server.newKey(2)
    const { result } = await callTool(server.base, "funding", { ids: ["crypto:bitcoin", "crypto:ethereum"] }, auth(key))
    expect(result.isError).toBe(true)
    expect(result.structuredContent.error.code).toBe("insufficient_credits")
    expect(result._meta.credits_charged).toBe(0)
    expect(await balanceOf(id)).toBe(2)
  })
})

describe("idempotency across transports", () => {
  it("replays over MCP the answer of the same call made over HTTP under one Idempotency-Key", async () => {
    const { key, id } = await server.newKey(10)
    const headers = { "Idempotency-Key": "agent-run-1" }
    const http = await httpGet("/api/v1/funding?id=crypto:bitcoin", key, headers)
    const httpText = await http.text()
    expect(http.headers.get("x-credits-charged")).toBe("3")
    const before = await executions()
    const { result } = await callTool(server.base, "funding", { id: "crypto:bitcoin" }, { ...auth(key), ...headers })
    expect(result.isError).toBe(false)
    expect(result._meta).toEqual({ credits_charged: 3, idempotent_replayed: true })
    expect(result.structuredContent).toEqual(JSON.parse(httpText))
    expect(result.content[0].text).toBe(httpText)
    expect(await executions()).toBe(before)
    expect(await balanceOf(id)).toBe(7)
  })

  it("replays over HTTP, byte for byte, the answer of a call made over MCP", async () => {
    const { key, id } = await server.newKey(10)
    const headers = { "Idempotency-Key": "agent-run-2" }
    const { result } = await callTool(
      server.base,
      "price",
      { ids: ["crypto:bitcoin", "crypto:ethereum"] },
      { ...auth(key), ...headers }
    )
    expect(result._meta).toEqual({ credits_charged: 2 })
    // The same normalized request whatever the argument form.
    const again = await callTool(
      server.base,
      "price",
      { ids: "crypto:bitcoin,crypto:ethereum" },
      { ...auth(key), ...headers }
    )
    expect(again.result._meta).toEqual({ credits_charged: 2, idempotent_replayed: true })
    const http = await httpGet("/api/v1/price?ids=crypto:bitcoin,crypto:ethereum", key, headers)
    expect(http.headers.get("idempotent-replayed")).toBe("true")
    expect(http.headers.get("x-credits-charged")).toBe("2")
    expect(await http.text()).toBe(result.content[0].text)
    expect(await balanceOf(id)).toBe(8)
  })

  it("answers a different call under a used key idempotency_conflict, and a bad key invalid_idempotency_key", async () => {
    const { key, id } = await server.newKey(10)
    await callTool(server.base, "price", { id: "crypto:bitcoin" }, { ...auth(key), "Idempotency-Key": "k-1" })
    const conflict = await callTool(
      server.base,
      "price",
      { id: "crypto:ethereum" },
      { ...auth(key), "Idempotency-Key": "k-1" }
    )
    expect(conflict.result.isError).toBe(true)
    expect(conflict.result.structuredContent.error.code).toBe("idempotency_conflict")
    const long = await callTool(
      server.base,
      "price",
      { id: "crypto:bitcoin" },
      { ...auth(key), "Idempotency-Key": "x".repeat(129) }
    )
    expect(long.result.structuredContent.error.code).toBe("invalid_idempotency_key")
    // Two Idempotency-Key headers on the POST.
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "price", arguments: { id: "crypto:bitcoin" } }
    })
    const twice = await rawRequest(
      server.port,
      `POST /api/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
        `Accept: application/json, text/event-stream\r\nAuthorization: Bearer ${key}\r\n` +
        `Idempotency-Key: a\r\nIdempotency-Key: b\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
    )
    expect(JSON.parse(twice.body).result.structuredContent.error.code).toBe("invalid_idempotency_key")
    expect(await balanceOf(id)).toBe(9)
  })

  it("answers request_in_progress to a duplicate while the first call still runs", async () => {
    const { key } = await server.newKey(10)
    const headers = { ...auth(key), "Idempotency-Key": "slow-1" }
    const before = await executions()
    const first = callTool(server.base, "price", { id: "crypto:slow" }, headers)
    // In flight once the plane has started computing it (it then waits for the gate).
    while ((await executions()) === before) await new Promise((r) => setTimeout(r, 10))
    const duplicate = await callTool(server.base, "price", { id: "crypto:slow" }, headers)
    expect(duplicate.result.isError).toBe(true)
    expect(duplicate.result.structuredContent.error).toMatchObject({ code: "request_in_progress", retryable: true })
    expect(duplicate.result._meta).toEqual({ credits_charged: 0, retry_after_seconds: 1 })
    await Effect.runPromise(plane.release)
    expect((await first).result._meta).toEqual({ credits_charged: 1 })
  })

  it("refuses an Idempotency-Key on a POST carrying several tools/calls, running none of them", async () => {
    const { key, id } = await server.newKey(10)
    const before = await executions()
    const call = (n: number, asset: string) => ({
      jsonrpc: "2.0",
      id: n,
      method: "tools/call",
      params: { name: "price", arguments: { id: asset } }
    })
    const res = await mcpPost(server.base, [call(1, "crypto:bitcoin"), call(2, "crypto:ethereum")], {
      ...auth(key),
      "Idempotency-Key": "batch-1",
      "mcp-protocol-version": "2025-03-26"
    })
    expect(res.status).toBe(200)
    for (const r of res.body) {
      expect(r.result.isError).toBe(true)
      expect(r.result.structuredContent.error.code).toBe("invalid_idempotency_key")
    }
    expect(await executions()).toBe(before)
    expect(await balanceOf(id)).toBe(10)
    // With one tools/call in the batch, the key is that call's.
    const single = [call(3, "crypto:bitcoin"), { jsonrpc: "2.0", id: 4, method: "ping" }]
    const headers = { ...auth(key), "Idempotency-Key": "batch-2", "mcp-protocol-version": "2025-03-26" }
    const once = await mcpPost(server.base, single, headers)
    expect(once.body[0].result._meta).toEqual({ credits_charged: 1 })
    const twice = await mcpPost(server.base, single, headers)
    expect(twice.body[0].result._meta).toEqual({ credits_charged: 1, idempotent_replayed: true })
    expect(await balanceOf(id)).toBe(9)
  })
})

describe("rate limit and billing per tools/call", () => {
  it("spends one unit per tools/call; the refusal is a rate_limited tool result; other methods spend units too", async () => {
    const { key, id } = await server.newKey(10, 3)
    for (let i = 0; i < 3; i++) {
      const { reply, result } = await callTool(server.base, "price", { id: "crypto:bitcoin" }, auth(key))
      expect(result.isError).toBe(false)
      expect(reply.headers.get("ratelimit")).toMatch(new RegExp(`^"default";r=${2 - i};t=\\d+$`))
      expect(reply.headers.get("ratelimit-policy")).toBe('"default";q=3;w=60')
    }
    const { reply, result } = await callTool(server.base, "price", { id: "crypto:bitcoin" }, auth(key))
    expect(reply.status).toBe(200)
    expect(result.isError).toBe(true)
    expect(result.structuredContent.error).toMatchObject({ code: "rate_limited", retryable: true })
    expect(result._meta.credits_charged).toBe(0)
    expect(result._meta.retry_after_seconds).toBeGreaterThan(0)
    expect(await balanceOf(id)).toBe(7)
    // tools/list spends a unit of the same key: refused as -32000 with the error object, and Retry-After.
    const list = await mcpPost(server.base, { jsonrpc: "2.0", id: 1, method: "tools/list" }, auth(key))
    expect(list.status).toBe(200)
    expect(list.body.result).toBeUndefined()
    expect(list.body.error.code).toBe(-32000)
    expect(list.body.error.data.error).toMatchObject({ code: "rate_limited", retryable: true })
    expect(list.body.error.data.retry_after_seconds).toBeGreaterThan(0)
    expect(Number(list.headers.get("retry-after"))).toBeGreaterThan(0)
  })

  it("rate limits each member of a 2025-03-26 batch on its own, and bills each call on its own", async () => {
    const { key, id } = await server.newKey(10, 3)
    const call = (n: number, asset: string) => ({
      jsonrpc: "2.0",
      id: n,
      method: "tools/call",
      params: { name: "price", arguments: { id: asset } }
    })
    const res = await mcpPost(
      server.base,
      [
        call(1, "crypto:bitcoin"),
        call(2, "crypto:nope"),
        { jsonrpc: "2.0", id: 3, method: "ping" },
        call(4, "eq:320193:AAPL"),
        call(5, "crypto:ethereum")
      ],
      { ...auth(key), "mcp-protocol-version": "2025-03-26" }
    )
    expect(res.status).toBe(200)
    expect(res.body.map((r: { id: number }) => r.id)).toEqual([1, 2, 3, 4, 5])
    const [first, refused, ping, third, fourth] = res.body
    expect(first.result._meta).toEqual({ credits_charged: 1 })
    expect(refused.result.structuredContent.error.code).toBe("unknown_asset")
    expect(refused.result._meta.credits_charged).toBe(0)
    // The ping is the third member: it spends the last unit, so the calls after it are refused, uncharged.
    expect(ping.result).toEqual({})
    expect(third.result.structuredContent.error.code).toBe("rate_limited")
    expect(third.result._meta.credits_charged).toBe(0)
    expect(fourth.result.structuredContent.error.code).toBe("rate_limited")
    expect(res.headers.get("ratelimit")).toMatch(/^"default";r=0;/)
    expect(await balanceOf(id)).toBe(9)
  })
})
