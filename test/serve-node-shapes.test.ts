/**
 * `serve` settles V8's layout of Node's HTTP objects before its port opens (`adapters/http/src/NodeShapes.ts`): a
 * real `serve` process, a full collection forced as each connection arrives (test/support/node-shapes-preload.ts),
 * and twelve requests one at a time, each on a connection of its own, as an orchestrator's health checks come
 * during a start. Every request and response keeps fast properties; without the settling, the seventh request's
 * and every later one's are hash tables (adapters/http/test/NodeShapes.test.ts shows that pattern on its own).
 */
import * as net from "node:net"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { SERVE_ENTRY, type ServerProcess, startServerProcess, stopServerProcess } from "./support/server-process.ts"

const PRELOAD = join(import.meta.dirname, "support", "node-shapes-preload.ts")

/** One request on a connection of its own; resolves when the server has closed the connection. */
const ask = (port: number, path: string) =>
  new Promise<void>((resolve, reject) => {
    const socket = net.connect({ host: "127.0.0.1", port }, () =>
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`)
    )
    socket.resume()
    socket.on("error", reject)
    socket.on("close", () => resolve())
  })

const shapes = (stderr: string, path: string) =>
  stderr
    .split("\n")
    .filter((line) => line.startsWith(`shape ${path} `))
    .map((line) => line.split(" ").slice(2).join(" "))

describe("serve and V8's layout of Node's HTTP objects", () => {
  let server: ServerProcess | undefined
  afterAll(async () => {
    if (server !== undefined) await stopServerProcess(server)
  })

  it("keeps every request and response out of dictionary mode through a start's first requests", async () => {
    server = await startServerProcess(
      {
        DATABASE_URL: "memory",
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --expose-gc --import=${PRELOAD}`.trim()
      },
      { entry: SERVE_ENTRY, args: ["serve"] }
    )
    for (let i = 0; i < 12; i++) await ask(server.port, "/healthz")
    // The settling's own sixteen requests came first, then the twelve, all with fast properties.
    expect(shapes(server.stderr(), "/settle?shape=1")).toHaveLength(16)
    const seen = shapes(server.stderr(), "/healthz")
    expect(seen).toHaveLength(12)
    expect(seen).toEqual(seen.map(() => "true true"))
  })
})
