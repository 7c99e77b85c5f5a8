/**
 * The HTTP transport end to end: discovery, routing, methods, auth table, rate limit, limits, CORS, 501s.
 */
import { DocsSections, ErrorBody, Operations, revokeKey } from "@market-data/core"
import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { rawRequest, startServer, type TestServer } from "./support/server.ts"

let server: TestServer
let key: string
let keyId: string

beforeAll(async () => {
  // Keyless calls and failed authentications share the client address's budget; every test here comes from
  // 127.0.0.1, so the default policy is raised and the tests of the 60-unit policy use keys that carry it.
  server = await startServer({ rateLimitPerMinute: 100_000 })
  const created = await server.newKey(100, 100_000)
  key = created.key
  keyId = created.id
})
afterAll(() => server.close())

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${server.base}${path}`, { headers })
const auth = (k = key) => ({ Authorization: `Bearer ${k}` })
const isErrorBody = Schema.is(ErrorBody)
const jsonOf = (res: Response): Promise<any> => res.json()

const expectError = async (res: Response, status: number, code: string, param?: string) => {
  const body = await jsonOf(res)
  expect(res.status).toBe(status)
  expect(isErrorBody(body)).toBe(true)
  expect(body.error.code).toBe(code)
  if (param !== undefined) expect(body.error.param).toBe(param)
  return body
}

describe("discovery", () => {
  it("answers the root document without a key, listing all 23 operations", async () => {
    const res = await get("/api/v1")
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toContain("application/json")
    const body = await jsonOf(res)
    expect(body.name).toBe("service-market-data")
    expect(body.version).toBe("1.0.0")
    expect(body.api).toBe("v1")
    expect(body.mcp_protocol_versions).toEqual(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"])
    expect(body.operations.map((o: { name: string }) => o.name)).toEqual(Operations.map((o) => o.name))
    expect(body.operations).toHaveLength(23)
  })

  it("serves an OpenAPI 3.1 document whose parameters are the registry's", async () => {
    const res = await get("/api/v1/openapi.json")
    expect(res.status).toBe(200)
    const doc = await jsonOf(res)
    expect(doc.openapi).toBe("3.1.0")
    for (const op of Operations) {
      const path = doc.paths[`/api/v1/${op.name}`]
      expect(path, op.name).toBeDefined()
      const names = path.get.parameters
        .filter((p: { in: string }) => p.in === "query")
        .map((p: { name: string }) => p.name)
      expect(names).toEqual(op.params.map((p) => p.name))
      expect(path.get.security.length === 0).toBe(op.auth === "keyless")
    }
  })

  it("answers every docs section as markdown without a key", async () => {
    for (const section of DocsSections) {
      const res = await get(`/api/v1/docs?section=${section}`)
      expect(res.status, section).toBe(200)
      expect(res.headers.get("content-type")).toBe("text/markdown; charset=utf-8")
      expect((await res.text()).startsWith("#")).toBe(true)
    }
    const dflt = await (await get("/api/v1/docs")).text()
    expect(dflt).toBe(await (await get("/api/v1/docs?section=index")).text())
  })

  it("answers 304 to If-None-Match on unchanged docs", async () => {
    const first = await get("/api/v1/docs?section=errors")
    const etag = first.headers.get("etag")
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/)
    const second = await get("/api/v1/docs?section=errors", { "If-None-Match": etag as string })
    expect(second.status).toBe(304)
  })

  it("schema lists all 23 and describes one operation in full", async () => {
    const index = await jsonOf(await get("/api/v1/schema"))
    expect(index.data.count).toBe(23)
    expect(index.data.operations).toHaveLength(23)
    const funding = (await jsonOf(await get("/api/v1/schema?resource=funding"))).data
    expect(funding.name).toBe("funding")
    expect(funding.auth).toBe("paid")
    expect(funding.credits).toMatchObject({ per: "asset", crypto: 3 })
    expect(funding.parameters.map((p: { name: string }) => p.name)).toEqual(["id", "ids"])
    expect(funding.errors.map((e: { code: string }) => e.code)).toContain("plane_mismatch")
    const series = (await jsonOf(await get("/api/v1/schema?resource=series"))).data
    const limit = series.parameters.find((p: { name: string }) => p.name === "limit")
    expect(limit).toMatchObject({ minimum: 1, maximum: 500, default: 120 })
  })

  it("schema refuses an unknown resource with 400", async () => {
    await expectError(await get("/api/v1/schema?resource=nope"), 400, "invalid_parameter", "resource")
  })
})

describe("routing and methods", () => {
  it("answers 404 unknown_operation for an unknown operation", async () => {
    await expectError(await get("/api/v1/nope", auth()), 404, "unknown_operation")
    await expectError(await get("/elsewhere"), 404, "unknown_operation")
  })

  it("answers 405 with Allow for other methods (a paid operation is GET only: no HEAD)", async () => {
    for (const method of ["POST", "PUT", "DELETE", "PATCH", "HEAD"]) {
      const res = await fetch(`${server.base}/api/v1/price?id=crypto:bitcoin`, { method, headers: auth() })
      expect(res.status).toBe(405)
      expect(res.headers.get("allow")).toBe("GET")
      if (method !== "HEAD") await expectError(res, 405, "method_not_allowed")
    }
    for (const method of ["POST", "PUT", "DELETE", "PATCH"]) {
      const res = await fetch(`${server.base}/api/v1/usage`, { method, headers: auth() })
      expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS")
      await expectError(res, 405, "method_not_allowed")
    }
  })

  it("answers a CORS preflight", async () => {
    const res = await fetch(`${server.base}/api/v1/price`, {
      method: "OPTIONS",
      headers: { Origin: "https://example.org", "Access-Control-Request-Method": "GET" }
    })
    expect(res.status).toBe(204)
    expect(res.headers.get("access-control-allow-origin")).toBe("*")
    const allowed = (res.headers.get("access-control-allow-headers") ?? "").toLowerCase()
    for (const h of ["authorization", "idempotency-key", "if-none-match"]) expect(allowed).toContain(h)
    const exposed = (await get("/api/v1")).headers.get("access-control-expose-headers") ?? ""
    for (const h of ["ETag", "RateLimit", "RateLimit-Policy", "Retry-After", "X-Credits-Charged"])
      expect(exposed).toContain(h)
  })

  it("answers HEAD without a body", async () => {
    const res = await fetch(`${server.base}/api/v1/docs`, { method: "HEAD" })
    expect(res.status).toBe(200)
    expect(await res.text()).toBe("")
  })

  it("answers 501 not_implemented for an operation whose plane has not landed, charging nothing", async () => {
    const res = await get("/api/v1/price?id=crypto:bitcoin", auth())
    expect(res.headers.get("x-credits-charged")).toBe("0")
    await expectError(res, 501, "not_implemented")
  })

  it("validates parameters before answering 501", async () => {
    await expectError(await get("/api/v1/price?id=BTC", auth()), 400, "invalid_parameter", "id")
    await expectError(
      await get("/api/v1/price?id=crypto:bitcoin&id=crypto:ether", auth()),
      400,
      "invalid_parameter",
      "id"
    )
    await expectError(await get("/api/v1/price?ticker=BTC", auth()), 400, "invalid_parameter", "ticker")
    await expectError(
      await get("/api/v1/price?id=crypto:bitcoin&ids=crypto:a,crypto:b", auth()),
      400,
      "conflicting_parameters"
    )
    await expectError(
      await get("/api/v1/series?id=crypto:bitcoin&view=summary&limit=5", auth()),
      400,
      "parameter_requires",
      "limit"
    )
    await expectError(await get("/api/v1/price?id=%E0%A4%A", auth()), 400, "invalid_parameter", "id")
    await expectError(await get("/api/v1/price?id=crypto%00bitcoin", auth()), 400, "invalid_parameter", "id")
  })
})

describe("authentication", () => {
  it("lets keyless operations through without a key", async () => {
    for (const path of ["/api/v1", "/api/v1/docs", "/api/v1/schema", "/api/v1/openapi.json"]) {
      expect((await get(path)).status, path).toBe(200)
    }
  })

  it("requires a key for zero-credit account operations and paid operations", async () => {
    for (const path of [
      "/api/v1/usage",
      "/api/v1/resolve?q=btc",
      "/api/v1/coverage",
      "/api/v1/read?id=crypto:bitcoin"
    ]) {
      const res = await get(path)
      expect(res.headers.get("www-authenticate")).toContain("Bearer")
      await expectError(res, 401, "unauthenticated")
    }
  })

  it("answers malformed, unknown and revoked keys identically", async () => {
    const revoked = await server.newKey(5)
    await server.run(revokeKey(revoked.id))
    const bodies: Array<string> = []
    for (const header of [
      "Bearer not-a-key",
      `Bearer mdk_${"A".repeat(32)}`,
      `Bearer ${revoked.key}`,
      "Basic dXNlcjpwYXNz",
      "Bearer",
      `Token ${key}`
    ]) {
      const res = await get("/api/v1/usage", { Authorization: header })
      expect(res.status, header).toBe(401)
      bodies.push(await res.text())
    }
    expect(new Set(bodies).size).toBe(1)
  })

  it("accepts the Bearer scheme in any case", async () => {
    for (const scheme of ["Bearer", "bearer", "BEARER", "bEaReR"]) {
      expect((await get("/api/v1/usage", { Authorization: `${scheme} ${key}` })).status, scheme).toBe(200)
    }
  })

  it("refuses two Authorization headers with 400 invalid_header", async () => {
    const res = await rawRequest(
      server.port,
      `GET /api/v1/usage HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nAuthorization: Bearer ${key}\r\n\r\n`
    )
    expect(res.status).toBe(400)
    expect(JSON.parse(res.body).error).toMatchObject({ code: "invalid_header", param: "authorization" })
  })

  it("echoes one plain X-Request-Id and replaces two with a fresh ID", async () => {
    const one = await rawRequest(server.port, "GET /api/v1 HTTP/1.1\r\nHost: x\r\nX-Request-Id: req-7\r\n\r\n")
    expect(one.headers["x-request-id"]).toBe("req-7")
    const two = await rawRequest(
      server.port,
      "GET /api/v1 HTTP/1.1\r\nHost: x\r\nX-Request-Id: req-7\r\nx-request-id: req-8\r\n\r\n"
    )
    expect(two.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/)
  })

  it("checks a key sent to a keyless operation", async () => {
    await expectError(await get("/api/v1/docs", { Authorization: "Bearer nope" }), 401, "unauthenticated")
    expect((await get("/api/v1/docs", auth())).status).toBe(200)
  })
})

describe("usage and the rate limit", () => {
  it("reports the key's credits and rate-limit window", async () => {
    const fresh = await server.newKey(42, 60)
    const res = await get("/api/v1/usage", auth(fresh.key))
    expect(res.status).toBe(200)
    const { data } = await jsonOf(res)
    expect(data.credits_remaining).toBe(42)
    expect(data.key_id).toBe(fresh.id)
    expect(data.rate_limit.limit).toBe(60)
    expect(data.rate_limit.remaining).toBe(59)
    expect(Date.parse(data.rate_limit.reset_at)).toBeGreaterThan(Date.now())
    expect(res.headers.get("ratelimit-policy")).toBe('"default";q=60;w=60')
    expect(res.headers.get("ratelimit")).toMatch(/^"default";r=59;t=\d+$/)
    expect(keyId).toMatch(/^key_/)
  })

  it("refuses the 61st request in a window with 429 and Retry-After", async () => {
    const fresh = await server.newKey(1, 60)
    const statuses: Array<number> = []
    for (let i = 0; i < 61; i++) statuses.push((await get("/api/v1/docs", auth(fresh.key))).status)
    expect(statuses.slice(0, 60).every((s) => s === 200)).toBe(true)
    const last = await get("/api/v1/usage", auth(fresh.key))
    expect(Number(last.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    expect(last.headers.get("ratelimit")).toMatch(/^"default";r=0;t=\d+$/)
    await expectError(last, 429, "rate_limited")
  })

  it("limits failed authentications per client address", async () => {
    const strict = await startServer({ rateLimitPerMinute: 5 })
    try {
      const statuses: Array<number> = []
      for (let i = 0; i < 6; i++) {
        statuses.push(
          (await fetch(`${strict.base}/api/v1/usage`, { headers: { Authorization: "Bearer guess" } })).status
        )
      }
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429])
    } finally {
      await strict.close()
    }
  })

  it("honours a key's own rate-limit policy in headers", async () => {
    const res = await get("/api/v1/usage", auth())
    expect(res.headers.get("ratelimit-policy")).toBe('"default";q=100000;w=60')
  })
})

describe("request size limits", () => {
  it("answers 414 to an oversized request target", async () => {
    await expectError(await get(`/api/v1/docs?section=${"a".repeat(9000)}`), 414, "uri_too_long")
  })

  it("answers 414 from the first byte over the limit, not before", async () => {
    const target = (bytes: number) => {
      const start = "/api/v1/docs?section="
      return `${start}${"a".repeat(bytes - start.length)}`
    }
    expect((await get(target(8192))).status).not.toBe(414)
    await expectError(await get(target(8193)), 414, "uri_too_long")
  })

  it("answers 431 to oversized headers, below and above Node's own limit", async () => {
    await expectError(await get("/api/v1/docs", { "X-Filler": "a".repeat(20_000) }), 431, "headers_too_large")
    const res = await rawRequest(
      server.port,
      `GET /api/v1/docs HTTP/1.1\r\nHost: x\r\nX-Filler: ${"a".repeat(70_000)}\r\n\r\n`
    )
    expect(res.status).toBe(431)
    expect(JSON.parse(res.body).error.code).toBe("headers_too_large")
  })

  it("answers a malformed request line with a typed 400", async () => {
    const res = await rawRequest(server.port, "GARBAGE\r\n\r\n")
    expect(res.status).toBe(400)
    expect(isErrorBody(JSON.parse(res.body))).toBe(true)
  })
})
