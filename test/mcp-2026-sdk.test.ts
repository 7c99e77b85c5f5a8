/**
 * MCP 2026-07-28 with the official TypeScript client v2 (`@modelcontextprotocol/client`, which speaks the revision
 * when asked to: `versionNegotiation`): the version probe (`server/discover`), tools, a paid asset read with its
 * caching hints, and push with `listen()` over a plane whose data changes every 300 ms.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startServer, type TestServer } from "./support/server.ts"
import { makeTickingPlane } from "./support/ticking-plane.ts"

let server: TestServer

beforeAll(async () => {
  server = await startServer({ rateLimitPerMinute: 10_000 }, [makeTickingPlane({ slotMs: 300 }).handlers])
})
afterAll(() => server.close())

const connect = async (key: string, mode: "auto" | { readonly pin: "2026-07-28" }) => {
  const client = new Client({ name: "sdk-v2-test", version: "1.0.0" }, { versionNegotiation: { mode } })
  const transport = new StreamableHTTPClientTransport(new URL(`${server.base}/api/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } }
  })
  await client.connect(transport)
  return client
}

describe("the official client v2 at 2026-07-28", () => {
  it("negotiates 2026-07-28 on its own (server/discover) and calls a paid tool", async () => {
    const { key } = await server.newKey(5)
    const client = await connect(key, "auto")
    try {
      expect(client.getProtocolEra()).toBe("modern")
      expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28")
      expect(client.getServerVersion()).toMatchObject({ name: "service-market-data", version: "1.0.0" })
      const tools = await client.listTools()
      expect(tools.tools).toHaveLength(23)
      const result = await client.callTool({ name: "read", arguments: { id: "crypto:bitcoin" } })
      expect(result.isError).toBe(false)
      expect(result._meta).toMatchObject({ credits_charged: 1 })
    } finally {
      await client.close()
    }
  })

  it("reads an asset resource for one credit and is told of its changes with listen()", async () => {
    const { key } = await server.newKey(5)
    const client = await connect(key, { pin: "2026-07-28" })
    try {
      expect(client.getProtocolEra()).toBe("modern")
      const uri = "service://read/crypto:ethereum"
      const read = await client.readResource({ uri })
      expect(read._meta).toMatchObject({ credits_charged: 1 })
      const first = JSON.parse((read.contents[0] as { text: string }).text).data
      expect(first.asset_id).toBe("crypto:ethereum")
      const updated: Array<string> = []
      let announce: () => void = () => {}
      const announced = new Promise<void>((resolve) => {
        announce = resolve
      })
      client.setNotificationHandler("notifications/resources/updated", (n) => {
        updated.push(n.params.uri)
        announce()
      })
      const subscription = await client.listen({ resourceSubscriptions: [uri] })
      expect(subscription.honoredFilter).toEqual({ resourceSubscriptions: [uri] })
      await announced
      expect(updated[0]).toBe(uri)
      await subscription.close()
      expect(await subscription.closed).toBe("local")
    } finally {
      await client.close()
    }
  })
})
