/**
 * The layout V8 gives Node's HTTP objects (`IncomingMessage`, `ServerResponse`, their sockets and stream states),
 * settled once at the start of a server process, before its first real request.
 *
 * V8 sizes the objects a constructor makes by watching its first seven: when the seventh is made it keeps room
 * inside each new object for the most properties any of them has gained so far ("in-object slack tracking"). It
 * reads that from the shapes still alive at that moment. A service that is starting does heavy work between its
 * first requests (a health check every second or so, each on a connection of its own), and its full garbage
 * collections drop the shapes of the finished requests; when the seventh request then comes, no grown shape is
 * left, and V8 keeps no room inside the object at all. From then on Node's constructors, which set their
 * properties by symbol, pass V8's limit for properties kept outside an object, and every request's request and
 * response objects are made as hash tables ("dictionary mode"): each property read and write on them misses V8's
 * inline caches for the rest of the process's life. Measured on the paid `read` of the memory store (`serve`,
 * 50 connections, docs/performance-log.md "Node's HTTP objects as hash tables"): three starts of twelve fell into
 * it, and answered about a fifth slower, a fifth of their CPU time in those misses.
 *
 * So the process answers sixteen requests of its own first, on a throwaway loopback server, four connections of
 * four requests each, with a short answer written as the transport writes its answers, and keeps every request
 * and response alive until the last one is done: the seventh of each kind is then made while grown shapes are
 * alive, whatever the collector does. It costs a few milliseconds. A failure (no loopback, say) is not the
 * start's business: it only means the objects keep V8's own timing.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as net from "node:net"

const CONNECTIONS = 4
const REQUESTS_PER_CONNECTION = 4
/** Longest the settling may take; past it the start goes on (the objects keep V8's own timing). */
const DEADLINE_MS = 2_000

const ANSWER = '{"ok":true}'
const REQUEST = "GET /settle?shape=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n\r\n"

/** Answers `REQUESTS_PER_CONNECTION` requests on one connection in turn; resolves when the last answer is in. */
const askInTurn = (port: number, kept: Array<unknown>): Promise<void> =>
  new Promise((resolve, reject) => {
    const socket = net.connect({ host: "127.0.0.1", port })
    kept.push(socket)
    let answered = 0
    let received = ""
    socket.setEncoding("latin1")
    socket.on("connect", () => socket.write(REQUEST))
    socket.on("data", (chunk: string) => {
      received += chunk
      // Each answer ends with its body: count the bodies whole, then ask again.
      for (let at = received.indexOf(ANSWER); at >= 0; at = received.indexOf(ANSWER)) {
        received = received.slice(at + ANSWER.length)
        answered++
        if (answered === REQUESTS_PER_CONNECTION) {
          socket.end()
          resolve()
          return
        }
        socket.write(REQUEST)
      }
    })
    socket.on("error", reject)
    socket.on("close", () => (answered < REQUESTS_PER_CONNECTION ? reject(new Error("closed early")) : undefined))
  })

/**
 * Runs the sixteen requests (see above). Never rejects: resolves when they are done, when the deadline passes,
 * or at once when the loopback server cannot be had.
 */
export const settleNodeHttpShapes = (): Promise<void> =>
  new Promise((resolve) => {
    // Every request, response and socket of the settling, alive until the end (the point of the exercise).
    const kept: Array<unknown> = []
    const server = http.createServer((req, res) => {
      kept.push(req, res)
      res.writeHead(200, ["content-type", "application/json", "cache-control", "no-store", "content-length", 11])
      res.end(ANSWER)
    })
    let done = false
    const finish = () => {
      if (done) return
      done = true
      clearTimeout(deadline)
      server.close()
      server.closeAllConnections()
      kept.length = 0
      resolve()
    }
    const deadline = setTimeout(finish, DEADLINE_MS)
    server.once("error", finish)
    server.listen({ host: "127.0.0.1", port: 0 }, () => {
      const { port } = server.address() as AddressInfo
      const asks: Array<Promise<void>> = []
      for (let i = 0; i < CONNECTIONS; i++) asks.push(askInTurn(port, kept))
      Promise.all(asks).then(finish, finish)
    })
  })
