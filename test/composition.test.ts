/**
 * The house has one composition root: adapters depend on the core only (they are siblings that know nothing of
 * each other), infra composes them (it mounts MCP beside HTTP), and the in-process library sits above infra.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import {
  HttpServerAddress,
  layerHttpServer,
  type MountedRoute,
  type RequestRecord,
  RequestTelemetry
} from "@market-data/http"
import { layerCore, layerTransports } from "@market-data/infra"
import { CATALOG_VERSION_HEADER, catalogVersion } from "@market-data/mcp"
import { layerMemoryStores } from "@market-data/memory"
import { Context, Effect, Exit, Layer, References, Scope } from "effect"
import { describe, expect, it } from "vitest"
import { testConfig } from "./support/server.ts"

const ROOT = resolve(import.meta.dirname, "..")

interface Manifest {
  readonly name: string
  readonly dependencies?: Record<string, string>
}

const manifest = (dir: string): Manifest => JSON.parse(readFileSync(join(ROOT, dir, "package.json"), "utf8"))

describe("package dependencies", () => {
  it("every adapter depends on the core alone among the workspace packages", () => {
    const adapters = readdirSync(join(ROOT, "adapters"))
    expect(adapters.length).toBeGreaterThan(4)
    const upward: Array<string> = []
    for (const dir of adapters) {
      const m = manifest(join("adapters", dir))
      for (const dep of Object.keys(m.dependencies ?? {}))
        if (dep.startsWith("@market-data/") && dep !== "@market-data/core") upward.push(`adapters/${dir} -> ${dep}`)
    }
    expect(upward).toEqual([])
  })

  it("the in-process library is a package above infra, not an adapter", () => {
    const adapterNames = readdirSync(join(ROOT, "adapters")).map((dir) => manifest(join("adapters", dir)).name)
    expect(adapterNames).not.toContain("@market-data/embedded")
    const embedded = manifest("embedded")
    expect(embedded.name).toBe("@market-data/embedded")
    expect(Object.keys(embedded.dependencies ?? {})).toContain("@market-data/infra")
  })
})

/** A server of the given transport layer over in-memory stores; answers its base URL and recorded requests. */
const serveWith = async (
  transport: Layer.Layer<HttpServerAddress, unknown, any>,
  run: (base: string, records: ReadonlyArray<RequestRecord>) => Promise<void>
) => {
  const config = testConfig()
  const records: Array<RequestRecord> = []
  const scope = Effect.runSync(Scope.make())
  try {
    const layer = transport.pipe(
      Layer.provideMerge(layerCore(config, layerMemoryStores, [])),
      Layer.provide(Layer.succeed(RequestTelemetry)({ record: (r) => records.push(r), tracing: false })),
      Layer.provide(Layer.succeed(References.MinimumLogLevel)("None"))
    )
    const context = (await Effect.runPromise(
      Layer.buildWithScope(layer, scope) as Effect.Effect<Context.Context<HttpServerAddress>>
    )) as Context.Context<HttpServerAddress>
    const port = Context.get(context, HttpServerAddress).port
    await run(`http://127.0.0.1:${port}`, records)
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

const initialize = (base: string) =>
  fetch(`${base}/api/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } }
    })
  })

describe("the HTTP transport takes its mounted routes from the composition root", () => {
  it("alone it serves the API and no MCP endpoint", async () => {
    await serveWith(layerHttpServer({ host: "127.0.0.1", port: 0 }), async (base) => {
      const root = await fetch(`${base}/api/v1`)
      expect(root.status).toBe(200)
      expect(root.headers.get(CATALOG_VERSION_HEADER)).toBeNull()
      const mcp = await initialize(base)
      expect(mcp.status).toBe(404)
      expect(((await mcp.json()) as any).error.code).toBe("unknown_operation")
    })
  })

  it("serves an injected route at its path, with the given headers, the request ID and its transport's metrics", async () => {
    const echo: MountedRoute = {
      path: "/x/echo",
      transport: "mcp",
      handle: (request) =>
        Effect.map(request.readBody(16), (body) => ({
          response: {
            status: 201,
            headers: { "content-type": "text/plain" },
            body: `echo ${request.method} ${body._tag === "Body" ? body.text : body._tag}`
          },
          op: "echo",
          credits: 3,
          keyId: undefined
        }))
    }
    const layer = layerHttpServer({ host: "127.0.0.1", port: 0, mounts: [echo], headers: { "x-house": "one" } })
    await serveWith(layer, async (base, records) => {
      const res = await fetch(`${base}/x/echo`, { method: "POST", headers: { "x-request-id": "req-1" }, body: "hi" })
      expect(res.status).toBe(201)
      expect(await res.text()).toBe("echo POST hi")
      // The route's body reader holds to its limit.
      const long = await fetch(`${base}/x/echo`, { method: "POST", body: "x".repeat(17) })
      expect(await long.text()).toBe("echo POST TooLarge")
      expect(res.headers.get("x-house")).toBe("one")
      expect(res.headers.get("x-request-id")).toBe("req-1")
      // The API routes carry the composition's headers too.
      const root = await fetch(`${base}/api/v1`)
      expect(root.headers.get("x-house")).toBe("one")
      expect(records).toContainEqual(expect.objectContaining({ transport: "mcp", operation: "echo", status: 201 }))
      // A path next to the mount is the API's: unknown_operation.
      expect((await fetch(`${base}/x/echo/more`)).status).toBe(404)
    })
  })

  it("infra mounts MCP beside HTTP, with the catalog version on every answer", async () => {
    await serveWith(layerTransports({ host: "127.0.0.1", port: 0 }), async (base, records) => {
      const mcp = await initialize(base)
      expect(mcp.status).toBe(200)
      expect(((await mcp.json()) as any).result.protocolVersion).toBe("2025-11-25")
      expect(mcp.headers.get(CATALOG_VERSION_HEADER)).toBe(catalogVersion)
      const root = await fetch(`${base}/api/v1`)
      expect(root.headers.get(CATALOG_VERSION_HEADER)).toBe(catalogVersion)
      expect(records.find((r) => r.operation.startsWith("mcp"))?.transport).toBe("mcp")
    })
  })
})
