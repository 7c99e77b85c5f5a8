/**
 * The keyless rate limit behind a reverse proxy, through the real HTTP and MCP transports: with the socket peer
 * (127.0.0.1 here) listed in `MARKET_DATA_TRUSTED_PROXIES`, each client address the proxy reports in
 * `X-Forwarded-For` has its own budget; without it, or from a peer not listed, the header is ignored and every
 * caller spends the peer's budget whatever it claims.
 */
import { clientAddress, NO_TRUSTED_PROXIES, parseTrustedProxies, type TrustedProxies } from "@market-data/core"
import { loadConfig } from "@market-data/infra"
import { ConfigProvider, Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { mcpPost } from "./support/mcp.ts"
import { startServer, type TestServer } from "./support/server.ts"

let server: TestServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const proxies = (text: string): TrustedProxies => {
  const parsed = parseTrustedProxies(text)
  if (parsed._tag === "Problem") throw new Error(parsed.problem)
  return parsed.value
}

/** A keyless `schema` call claiming `forwardedFor`; its status and remaining units. */
const call = async (base: string, forwardedFor?: string) => {
  const res = await fetch(`${base}/api/v1/schema`, {
    headers: forwardedFor === undefined ? {} : { "x-forwarded-for": forwardedFor }
  })
  await res.arrayBuffer()
  const m = /;r=(\d+);/.exec(res.headers.get("ratelimit") ?? "")
  return { status: res.status, remaining: m === null ? undefined : Number(m[1]) }
}

describe("keyless rate limit and X-Forwarded-For", () => {
  it("behind a trusted proxy, each reported client has its own budget; a client's own entry is not believed", async () => {
    server = await startServer({ rateLimitPerMinute: 2, trustedProxies: proxies("127.0.0.1,::1") })
    const base = server.base
    expect(await call(base, "203.0.113.1")).toEqual({ status: 200, remaining: 1 })
    expect(await call(base, "203.0.113.1")).toEqual({ status: 200, remaining: 0 })
    expect((await call(base, "203.0.113.1")).status).toBe(429)
    // Another client behind the same proxy is not refused.
    expect(await call(base, "203.0.113.2")).toEqual({ status: 200, remaining: 1 })
    // A client writing someone else's address first: the proxy appended its real one, the right-most.
    expect(await call(base, "203.0.113.2, 198.51.100.50")).toEqual({ status: 200, remaining: 1 })
    // Without the header the proxy itself is the client.
    expect(await call(base)).toEqual({ status: 200, remaining: 1 })
    // The MCP transport and the documents resolve the address the same way.
    const ping = await mcpPost(base, { jsonrpc: "2.0", id: 1, method: "ping" }, { "x-forwarded-for": "203.0.113.1" })
    expect(ping.body.error?.data?.error?.code).toBe("rate_limited")
    const pingOther = await mcpPost(
      base,
      { jsonrpc: "2.0", id: 1, method: "ping" },
      { "x-forwarded-for": "203.0.113.3" }
    )
    expect(pingOther.body.result).toEqual({})
    const root = await fetch(`${base}/api/v1`, { headers: { "x-forwarded-for": "203.0.113.1" } })
    expect(root.status).toBe(429)
    const page = await fetch(`${base}/`, { headers: { "x-forwarded-for": "203.0.113.1" } })
    expect(page.status).toBe(429)
    const pageOther = await fetch(`${base}/`, { headers: { "x-forwarded-for": "203.0.113.4" } })
    expect(pageOther.status).toBe(200)
  })

  it("IPv6 clients share the budget of their /64: rotating addresses inside it gains nothing", async () => {
    server = await startServer({ rateLimitPerMinute: 2, trustedProxies: proxies("127.0.0.1,::1") })
    const base = server.base
    expect(await call(base, "2001:db8:aa:1::10")).toEqual({ status: 200, remaining: 1 })
    expect(await call(base, "2001:db8:aa:1:ffff::20")).toEqual({ status: 200, remaining: 0 })
    expect((await call(base, "2001:db8:aa:1::30")).status).toBe(429)
    // Another /64 has its own budget.
    expect(await call(base, "2001:db8:aa:2::10")).toEqual({ status: 200, remaining: 1 })
  })

  it("with no trusted proxy (the default), a claimed X-Forwarded-For changes nothing", async () => {
    server = await startServer({ rateLimitPerMinute: 2, trustedProxies: NO_TRUSTED_PROXIES })
    const base = server.base
    expect(await call(base, "203.0.113.1")).toEqual({ status: 200, remaining: 1 })
    expect(await call(base, "203.0.113.2")).toEqual({ status: 200, remaining: 0 })
    expect((await call(base, "203.0.113.3")).status).toBe(429)
    const ping = await mcpPost(base, { jsonrpc: "2.0", id: 1, method: "ping" }, { "x-forwarded-for": "203.0.113.9" })
    expect(ping.body.error?.data?.error?.code).toBe("rate_limited")
  })

  it("from a peer that is not a listed proxy, the header is ignored (spoofing)", async () => {
    server = await startServer({ rateLimitPerMinute: 2, trustedProxies: proxies("10.0.0.0/8,fd00::/8") })
    const base = server.base
    expect(await call(base, "203.0.113.1")).toEqual({ status: 200, remaining: 1 })
    expect(await call(base, "10.0.0.1")).toEqual({ status: 200, remaining: 0 })
    expect((await call(base, "203.0.113.7")).status).toBe(429)
  })
})

describe("MARKET_DATA_TRUSTED_PROXIES", () => {
  const load = (env: Record<string, string>) =>
    Effect.runPromise(
      Effect.result(loadConfig.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env)))))
    )

  it("is read at start (default: none) and a bad entry stops the start naming it", async () => {
    const unset = await load({})
    expect(unset._tag).toBe("Success")
    if (unset._tag === "Success") {
      expect(clientAddress("127.0.0.1", ["203.0.113.1"], unset.success.trustedProxies ?? NO_TRUSTED_PROXIES)).toBe(
        "127.0.0.1"
      )
    }
    const set = await load({ MARKET_DATA_TRUSTED_PROXIES: "10.0.0.0/8, 127.0.0.1" })
    expect(set._tag).toBe("Success")
    if (set._tag === "Success") {
      expect(clientAddress("127.0.0.1", ["203.0.113.1"], set.success.trustedProxies ?? NO_TRUSTED_PROXIES)).toBe(
        "203.0.113.1"
      )
    }
    const bad = await load({ MARKET_DATA_TRUSTED_PROXIES: "10.0.0.0/8,caddy" })
    expect(bad._tag).toBe("Failure")
    if (bad._tag === "Failure") expect(bad.failure.message).toContain('"caddy"')
  })
})
