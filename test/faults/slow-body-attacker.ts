/**
 * The slow-body attacker of `slow-bodies.test.ts`, run as a process of its own so that its 1,000 sockets and
 * 250 MB of writes do not share an event loop with the paid probe that measures the server:
 * `node slow-body-attacker.ts <port> <sockets> <local address> <declared bytes> <sent bytes>`. Each socket
 * sends a keyless `POST /api/mcp` announcing `declared` bytes, writes `sent` of them, then a byte a second until
 * the server cuts it. Prints one JSON line per socket once it is closed: `{"openMs", "closedMs", "status"}` (ms
 * since the start; `status` the one the server answered, or null), then `{"done": true}`.
 */
import * as net from "node:net"

const [port, sockets, localAddress, declared, sent] = process.argv.slice(2)
const body = Buffer.alloc(Number(sent), "x")
const t0 = performance.now()
let open = Number(sockets)

for (let i = 0; i < Number(sockets); i++) {
  let openMs: number | undefined
  let status: number | null = null
  let seen = ""
  let trickle: NodeJS.Timeout | undefined
  const socket = net.connect({ port: Number(port), host: "127.0.0.1", localAddress })
  socket.on("connect", () => {
    openMs = performance.now() - t0
    socket.write(
      `POST /api/mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
        `Accept: application/json, text/event-stream\r\nContent-Length: ${declared}\r\n\r\n`
    )
    socket.write(body)
    trickle = setInterval(() => {
      if (!socket.destroyed) socket.write(" ")
    }, 1_000)
  })
  socket.on("data", (d) => {
    if (status !== null) return
    seen += d
    const m = /^HTTP\/1\.1 (\d{3})/.exec(seen)
    if (m !== null) status = Number(m[1])
  })
  socket.on("error", () => {})
  socket.on("close", () => {
    clearInterval(trickle)
    process.stdout.write(`${JSON.stringify({ openMs: openMs ?? null, closedMs: performance.now() - t0, status })}\n`)
    if (--open === 0) process.stdout.write(`${JSON.stringify({ done: true })}\n`)
  })
}
