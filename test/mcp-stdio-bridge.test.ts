/**
 * The stdio bridge (`adapters/mcp/bin/stdio-bridge.mjs`) for MCP hosts that cannot send a header, driven by
 * the official SDK client over its stdio transport exactly as such a host launches a local server.
 */
import { fileURLToPath } from "node:url"
import { MCP_STDIO_BRIDGE_PATH } from "@market-data/core"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeTestPlane } from "../core/test/support/TestPlane.ts"
import { startServer, type TestServer } from "./support/server.ts"

// The path the `mcp` docs section tells hosts to run.
/** The Node that runs the bridge: this one, or another to check (`BRIDGE_TEST_NODE=/usr/bin/node`, e.g. Node 20). */
const NODE = process.env.BRIDGE_TEST_NODE ?? process.execPath
const BRIDGE = fileURLToPath(new URL(`../${MCP_STDIO_BRIDGE_PATH}`, import.meta.url))

let server: TestServer
beforeAll(async () => {
  const plane = await Effect.runPromise(makeTestPlane())
  server = await startServer({ rateLimitPerMinute: 100_000 }, [plane.handlers])
})
afterAll(() => server?.close())

/** An SDK client whose "server" is the bridge, started as a host would start it. */
const bridged = async (env: Record<string, string>, url = `${server.base}/api/mcp`) => {
  const transport = new StdioClientTransport({
    command: NODE,
    args: [BRIDGE, url],
    env: { PATH: process.env.PATH ?? "", ...env },
    stderr: "pipe"
  })
  const client = new Client({ name: "bridge-e2e", version: "1.0.0" })
  await client.connect(transport)
  return client
}

describe("the stdio bridge", () => {
  it("lists the tools and calls paid, keyless and failing tools with the key from the environment", async () => {
    const { key } = await server.newKey(10)
    const client = await bridged({ MARKET_DATA_API_KEY: key })
    try {
      expect(client.getServerVersion()).toMatchObject({ name: "service-market-data" })
      const { tools } = await client.listTools()
      expect(tools).toHaveLength(23)
      const price = await client.callTool({ name: "price", arguments: { id: "crypto:bitcoin" } })
      expect(price.isError).toBe(false)
      expect(price._meta).toMatchObject({ credits_charged: 1 })
      const docs = await client.callTool({ name: "docs", arguments: { section: "quickstart" } })
      expect((docs.structuredContent as { data: { section: string } }).data.section).toBe("quickstart")
      const invalid = await client.callTool({ name: "price", arguments: { id: "nope" } })
      expect(invalid.isError).toBe(true)
      expect((invalid.structuredContent as { error: { code: string } }).error.code).toBe("invalid_parameter")
      const usage = await client.callTool({ name: "usage", arguments: {} })
      expect((usage.structuredContent as { data: { credits_remaining: number } }).data.credits_remaining).toBe(9)
      expect((await client.readResource({ uri: "service://docs/index" })).contents).toHaveLength(1)
    } finally {
      await client.close()
    }
  })

  it("without a key serves the keyless tools and answers a paid one unauthenticated", async () => {
    const client = await bridged({})
    try {
      expect((await client.callTool({ name: "schema", arguments: {} })).isError).toBe(false)
      const paid = await client.callTool({ name: "price", arguments: { id: "crypto:bitcoin" } })
      expect(paid.isError).toBe(true)
      expect((paid.structuredContent as { error: { code: string } }).error.code).toBe("unauthenticated")
    } finally {
      await client.close()
    }
  })

  it("answers a request with a JSON-RPC error carrying its id when the endpoint refuses the POST", async () => {
    // `?output_schemas=maybe` makes the endpoint refuse every POST with HTTP 400 and an id-less error.
    const transport = new StdioClientTransport({
      command: NODE,
      args: [BRIDGE, `${server.base}/api/mcp?output_schemas=maybe`],
      env: { PATH: process.env.PATH ?? "" },
      stderr: "pipe"
    })
    const client = new Client({ name: "bridge-e2e", version: "1.0.0" })
    const refused = await client.connect(transport).then(
      () => undefined,
      (e: unknown) => e
    )
    expect(String(refused)).toContain("output_schemas")
    await client.close()
  })
})
