/**
 * The connection and body limits on a real Node server (`makeNodeServer`): a connection past the per-client or
 * the total cap is answered at once and none of its bytes is read; behind a trusted proxy the per-client cap
 * counts requests in flight per forwarded client, not the proxy's connections; a body that does not arrive in
 * time is 408 and its connection closed.
 */
import { EventEmitter } from "node:events"
import * as net from "node:net"
import { parseTrustedProxies } from "@market-data/core"
import { afterEach, describe, expect, it } from "vitest"
import { type ConnectionLimits, makeNodeServer } from "../src/index.ts"

let server: ReturnType<typeof makeNodeServer> | undefined
/** Fires on every event the tests' conditions read: a connection opened or closed, bytes received. */
const changes = new EventEmitter()
const changed = () => changes.emit("change")
afterEach(async () => {
  server?.closeAllConnections()
  server?.guard.dropRefused()
  await new Promise((r) => (server === undefined ? r(undefined) : server.close(r)))
  server = undefined
})

/** A server with `limits` whose handler answers a request once its body has arrived, or never when `hold`. */
const serve = async (limits: ConnectionLimits, options: { readonly hold?: boolean } = {}) => {
  const node = makeNodeServer(limits)
  server = node
  const sockets: Array<net.Socket> = []
  node.on("connection", (s: net.Socket) => {
    sockets.push(s)
    s.on("close", changed)
    changed()
  })
  node.on(
    "request",
    node.guard.requests((req, res) => {
      let n = 0
      req.on("data", (d: Buffer) => {
        n += d.length
      })
      req.on("end", () => {
        if (options.hold !== true) res.end(String(n))
      })
    })
  )
  await new Promise<void>((r) => node.listen(0, "127.0.0.1", r))
  return { node, port: (node.address() as net.AddressInfo).port, sockets }
}

/** A raw connection: what it received, and a promise of its close. */
const connect = (port: number, payload: string) => {
  const socket = net.connect({ port, host: "127.0.0.1" })
  const state = { received: "", closed: new Promise<void>((r) => socket.on("close", () => r())) }
  socket.on("data", (d) => {
    state.received += d
    changed()
  })
  socket.on("close", changed)
  socket.on("error", () => {})
  socket.on("connect", () => socket.write(payload))
  return { socket, state }
}

const post = (body: string, declared = body.length, headers = "") =>
  `POST /x HTTP/1.1\r\nHost: x\r\n${headers}Content-Length: ${declared}\r\n\r\n${body}`

/** Waits until `check` holds, re-checked at each change of what it reads (the test's timeout bounds it). */
const waitFor = async (check: () => boolean) => {
  while (!check()) await new Promise<void>((r) => changes.once("change", () => r()))
}

describe("connection caps", () => {
  it("past the per-client cap: 429 with Retry-After before the request is read, nothing of it read", async () => {
    const { port, sockets } = await serve({ maxConnections: 10, maxConnectionsPerClient: 2, bodyTimeoutMs: 5_000 })
    const held = [connect(port, post("x", 100)), connect(port, post("x", 100))]
    await waitFor(() => sockets.length === 2)
    const third = connect(port, post("y".repeat(50_000), 50_000))
    await waitFor(() => third.state.received.endsWith("}}"))
    expect(third.state.received).toMatch(/^HTTP\/1\.1 429 Too Many Requests\r\n/)
    expect(third.state.received).toContain("retry-after: 1\r\n")
    expect(third.state.received).toContain('"code":"rate_limited"')
    expect(sockets[2]?.bytesRead).toBe(0)
    for (const h of [...held, third]) h.socket.destroy()
  })

  it("past the total cap: 503 with Retry-After", async () => {
    const { node, port, sockets } = await serve({ maxConnections: 2, maxConnectionsPerClient: 2, bodyTimeoutMs: 5_000 })
    const held = [connect(port, post("x", 100)), connect(port, post("x", 100))]
    await waitFor(() => sockets.length === 2)
    const third = connect(port, post("y"))
    await waitFor(() => third.state.received.endsWith("}}"))
    expect(third.state.received).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/)
    expect(third.state.received).toContain('"code":"source_unavailable"')
    for (const h of [...held, third]) h.socket.destroy()
    // A connection closed frees its place.
    await waitFor(() => node.guard.open() === 0)
    const next = connect(port, post("z"))
    await waitFor(() => next.state.received.includes("\r\n\r\n1"))
    expect(next.state.received).toMatch(/^HTTP\/1\.1 200 OK/)
    next.socket.destroy()
  })

  it("behind a trusted proxy: its connections are not capped per client; requests in flight per forwarded client are", async () => {
    const { node, port } = await serve(
      { maxConnections: 10, maxConnectionsPerClient: 2, bodyTimeoutMs: 5_000 },
      { hold: true }
    )
    const trusted = parseTrustedProxies("127.0.0.1")
    if (trusted._tag === "Problem") throw new Error(trusted.problem)
    node.guard.trusted = trusted.value
    const from = (client: string) => connect(port, post("x", 1, `X-Forwarded-For: ${client}\r\n`))
    // Three connections from the proxy: two requests in flight for one client, one for another.
    const a1 = from("203.0.113.1")
    const a2 = from("203.0.113.1")
    const b1 = from("203.0.113.2")
    // The first client's third request in flight is refused; the proxy's connection count is not the cap.
    const a3 = from("203.0.113.1")
    await waitFor(() => a3.state.received.length > 0)
    expect(a3.state.received).toMatch(/^HTTP\/1\.1 429 /)
    expect(a3.state.received).toContain("too many requests in flight from your address")
    for (const c of [a1, a2, b1]) expect(c.state.received).toBe("")
    for (const c of [a1, a2, b1, a3]) c.socket.destroy()
  })
})

describe("body deadline", () => {
  it("a body still arriving past the deadline: 408, then the connection is closed", async () => {
    const { port } = await serve({ maxConnections: 10, maxConnectionsPerClient: 10, bodyTimeoutMs: 200 })
    const slow = connect(port, post("partial", 1_000))
    await slow.state.closed
    expect(slow.state.received).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/)
    expect(slow.state.received).toContain("did not arrive within 0.2 s")
    // A whole body in time is answered as usual.
    const whole = connect(port, post("abc"))
    await waitFor(() => whole.state.received.endsWith("\r\n\r\n3"))
    whole.socket.destroy()
  })
})
