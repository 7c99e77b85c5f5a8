/**
 * The money pipeline as HTTP clients see it: headers of charges, replays, 304s and refusals. The operations
 * are served by the deterministic test plane (production planes land with their issues).
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeTestPlane, type TestPlane } from "../core/test/support/TestPlane.ts"
import { startServer, type TestServer } from "./support/server.ts"

let server: TestServer
let plane: TestPlane

beforeAll(async () => {
  plane = await Effect.runPromise(makeTestPlane())
  server = await startServer({}, [plane.handlers])
})
afterAll(() => server.close())

const get = (path: string, key: string, headers: Record<string, string> = {}) =>
  fetch(`${server.base}${path}`, { headers: { Authorization: `Bearer ${key}`, ...headers } })

describe("money over HTTP", () => {
  it("reports X-Credits-Charged, a strong ETag and a private max-age", async () => {
    const { key } = await server.newKey(10)
    const res = await get("/api/v1/read?id=eq:320193:AAPL", key)
    expect(res.status).toBe(200)
    expect(res.headers.get("x-credits-charged")).toBe("5")
    expect(res.headers.get("etag")).toMatch(/^"[0-9a-f]{40}"$/)
    expect(res.headers.get("cache-control")).toMatch(/^private, max-age=\d+$/)
    const usage = await (await get("/api/v1/usage", key)).json()
    expect((usage as { data: { credits_remaining: number } }).data.credits_remaining).toBe(5)
  })

  it("answers 304 with ETag, Cache-Control and rate-limit fields, no body, zero credits", async () => {
    const { key } = await server.newKey(10)
    const first = await get("/api/v1/read?id=crypto:bitcoin", key)
    const etag = first.headers.get("etag") as string
    const res = await get("/api/v1/read?id=crypto:bitcoin", key, { "If-None-Match": etag })
    expect(res.status).toBe(304)
    expect(res.headers.get("etag")).toBe(etag)
    expect(res.headers.get("cache-control")).toMatch(/^private, max-age=\d+$/)
    expect(res.headers.get("x-credits-charged")).toBe("0")
    expect(res.headers.get("ratelimit")).toMatch(/^"default";r=58;t=\d+$/)
    expect(await res.text()).toBe("")
  })

  it("answers 304 at zero credits to a key with no credits left; a stale ETag is 402", async () => {
    const { key } = await server.newKey(1)
    const first = await get("/api/v1/read?id=crypto:bitcoin", key)
    expect(first.status).toBe(200)
    const etag = first.headers.get("etag") as string
    for (const extra of [{}, { "Idempotency-Key": "conditional-1" }]) {
      const res = await get("/api/v1/read?id=crypto:bitcoin", key, { "If-None-Match": etag, ...extra })
      expect(res.status).toBe(304)
      expect(res.headers.get("x-credits-charged")).toBe("0")
      const stale = await get("/api/v1/read?id=crypto:bitcoin", key, { "If-None-Match": '"stale"', ...extra })
      expect(stale.status).toBe(402)
      expect(stale.headers.get("x-credits-charged")).toBe("0")
    }
    const usage = (await (await get("/api/v1/usage", key)).json()) as { data: { credits_remaining: number } }
    expect(usage.data.credits_remaining).toBe(0)
  })

  it("refuses HEAD on a paid operation with 405 and Allow: GET, before anything runs or is billed", async () => {
    const { key } = await server.newKey(10)
    const before = await Effect.runPromise(plane.executions)
    for (const path of ["/api/v1/price?id=crypto:bitcoin", "/api/v1/read?id=crypto:bitcoin"]) {
      const res = await fetch(`${server.base}${path}`, { method: "HEAD", headers: { Authorization: `Bearer ${key}` } })
      expect(res.status).toBe(405)
      expect(res.headers.get("allow")).toBe("GET")
      expect(res.headers.get("x-credits-charged")).toBeNull()
      expect(await res.text()).toBe("")
    }
    expect(await Effect.runPromise(plane.executions)).toBe(before)
    const usage = await get("/api/v1/usage", key)
    expect(((await usage.json()) as { data: { credits_remaining: number } }).data.credits_remaining).toBe(10)
    // No rate unit was spent either: usage is the key's first counted request.
    expect(usage.headers.get("ratelimit")).toMatch(/^"default";r=59;/)
    // A free operation still answers HEAD, without a body.
    const free = await fetch(`${server.base}/api/v1/usage`, {
      method: "HEAD",
      headers: { Authorization: `Bearer ${key}` }
    })
    expect(free.status).toBe(200)
    expect(await free.text()).toBe("")
  })

  it("replays byte for byte with Idempotent-Replayed and the original charge, charging once", async () => {
    const { key } = await server.newKey(10)
    const headers = { "Idempotency-Key": "order-42" }
    const first = await get("/api/v1/funding?ids=crypto:bitcoin,crypto:nope", key, headers)
    const firstBody = await first.text()
    const again = await get("/api/v1/funding?ids=crypto:bitcoin,crypto:nope", key, headers)
    expect(again.status).toBe(200)
    expect(await again.text()).toBe(firstBody)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.headers.get("x-credits-charged")).toBe("3")
    expect(again.headers.get("etag")).toBe(first.headers.get("etag"))
    expect(again.headers.get("ratelimit")).toMatch(/^"default";r=58;/)
    const usage = (await (await get("/api/v1/usage", key)).json()) as { data: { credits_remaining: number } }
    expect(usage.data.credits_remaining).toBe(7)
    const conflict = await get("/api/v1/funding?id=crypto:bitcoin", key, headers)
    expect(conflict.status).toBe(409)
    expect(((await conflict.json()) as { error: { code: string } }).error.code).toBe("idempotency_conflict")
  })

  it("refuses a bad Idempotency-Key and two of them with 400", async () => {
    const { key } = await server.newKey(10)
    const long = await get("/api/v1/price?id=crypto:bitcoin", key, { "Idempotency-Key": "x".repeat(129) })
    expect(long.status).toBe(400)
    expect(((await long.json()) as { error: { code: string } }).error.code).toBe("invalid_idempotency_key")
  })

  it("answers 402 when the balance cannot cover the hold, and X-Credits-Charged 0", async () => {
    const { key } = await server.newKey(2)
    const res = await get("/api/v1/funding?id=crypto:bitcoin", key)
    expect(res.status).toBe(402)
    expect(res.headers.get("x-credits-charged")).toBe("0")
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("insufficient_credits")
  })

  it("20 concurrent identical requests with one key over HTTP: one execution, 19 answered 409 with Retry-After: 1", async () => {
    const { key } = await server.newKey(100, 1000)
    const before = await Effect.runPromise(plane.executions)
    let answered = 0
    const pending = Array.from({ length: 20 }, () =>
      get("/api/v1/price?id=crypto:slow", key, { "Idempotency-Key": "same" }).then(async (r) => {
        const result = { status: r.status, retryAfter: r.headers.get("retry-after"), body: await r.text() }
        answered++
        return result
      })
    )
    // The slow asset holds the one execution until released: wait (polling, bounded) until the other 19 have
    // been answered, then release it. No fixed sleep: the order is fixed by events, not by timing.
    const deadline = Date.now() + 30_000
    while (answered < 19 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
    expect(answered, "the 19 duplicates are answered while the first is in progress").toBe(19)
    await Effect.runPromise(plane.release)
    const results = await Promise.all(pending)
    expect(results.filter((r) => r.status === 409 && r.retryAfter === "1").length).toBe(19)
    expect(results.filter((r) => r.status === 200).length).toBe(1)
    expect((await Effect.runPromise(plane.executions)) - before).toBe(1)
    const usage = (await (await get("/api/v1/usage", key)).json()) as { data: { credits_remaining: number } }
    expect(usage.data.credits_remaining).toBe(99)
  })
})
