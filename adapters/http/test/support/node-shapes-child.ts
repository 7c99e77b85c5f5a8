/**
 * Run by `NodeShapes.test.ts` as `node --allow-natives-syntax --expose-gc node-shapes-child.ts [settle]`: the
 * first requests of a starting service (one at a time, each on a connection of its own, a full collection after
 * each), then prints, for each request, whether V8 made its request and response objects with fast properties
 * (`%HasFastProperties`) or as hash tables. With `settle`, `settleNodeHttpShapes` runs first.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as net from "node:net"
import { settleNodeHttpShapes } from "../../src/NodeShapes.ts"

const hasFastProperties = new Function("o", "return %HasFastProperties(o)") as (o: object) => boolean
const collect = (globalThis as { gc?: () => void }).gc
if (collect === undefined) throw new Error("run with --expose-gc")

if (process.argv[2] === "settle") await settleNodeHttpShapes()

const seen: Array<{ readonly request: boolean; readonly response: boolean }> = []
const server = http.createServer((req, res) => {
  seen.push({ request: hasFastProperties(req), response: hasFastProperties(res) })
  res.writeHead(503, ["content-type", "application/json", "retry-after", "1", "connection", "close"])
  res.end('{"status":"starting"}')
})
await new Promise<void>((resolve) => server.listen({ host: "127.0.0.1", port: 0 }, resolve))
const { port } = server.address() as AddressInfo

/** One request on a connection of its own, resolved when the server has closed it. */
const ask = () =>
  new Promise<void>((resolve, reject) => {
    const socket = net.connect({ host: "127.0.0.1", port }, () =>
      socket.write("GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    )
    socket.resume()
    socket.on("error", reject)
    socket.on("close", () => resolve())
  })

for (let i = 0; i < 12; i++) {
  await ask()
  collect()
}
server.close()
process.stdout.write(`${JSON.stringify(seen)}\n`)
