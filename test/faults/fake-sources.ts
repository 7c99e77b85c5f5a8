/**
 * Fake venue and EDGAR servers for a live-feed service process, on 127.0.0.1 (nothing leaves the machine):
 * each answers from a recorded-format route of the live connector tests (`adapters/sources/test/live/fixtures`),
 * and can be made to hang (accept the request, never answer) or to answer only after a delay. Requests are
 * counted, and those still unanswered are visible, so a test can prove the fault was exercised.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { Socket } from "node:net"
import type { FakeRequest, Reply, Route } from "../../adapters/sources/test/live/FakeServer.ts"

export type Behaviour =
  | { readonly _tag: "Answer"; readonly route: Route }
  /** Accept and never answer (the connector's timeout is the only way out). */
  | { readonly _tag: "Hang" }
  /** Answer from `route`, but only after `delayMs`. */
  | { readonly _tag: "Slow"; readonly route: Route; readonly delayMs: number }

export interface FakeSource {
  readonly url: string
  /** Requests received so far. */
  readonly received: () => number
  /** Requests received and not answered yet. */
  readonly pending: () => number
  readonly close: () => Promise<void>
}

const send = (res: ServerResponse, reply: Reply) => {
  if (reply === "hang") return
  if (reply === "truncate") {
    res.writeHead(200, { "Content-Type": "application/json", "Content-Length": "1000" })
    res.write('{"data": [')
    setTimeout(() => res.socket?.destroy(), 5)
    return
  }
  const text = "json" in reply ? JSON.stringify(reply.json) : reply.text
  res.writeHead(reply.status ?? 200, { "Content-Type": "application/json", ...reply.headers })
  res.end(text)
}

export const startFakeSource = (behaviour: Behaviour): Promise<FakeSource> =>
  new Promise((resolve) => {
    let received = 0
    let pending = 0
    const sockets = new Set<Socket>()
    const timers = new Set<NodeJS.Timeout>()
    const answer = (req: IncomingMessage, res: ServerResponse, raw: string) => {
      received += 1
      const u = new URL(req.url ?? "/", "http://127.0.0.1")
      let body: unknown
      try {
        body = raw === "" ? undefined : JSON.parse(raw)
      } catch {
        body = raw
      }
      const request: FakeRequest = {
        method: req.method ?? "GET",
        path: u.pathname,
        query: u.searchParams,
        headers: req.headers,
        body
      }
      if (behaviour._tag === "Hang") {
        pending += 1
        res.on("close", () => {
          pending -= 1
        })
        return
      }
      if (behaviour._tag === "Answer") return send(res, behaviour.route(request))
      pending += 1
      const timer = setTimeout(() => {
        timers.delete(timer)
        pending -= 1
        if (!res.destroyed) send(res, behaviour.route(request))
      }, behaviour.delayMs)
      timers.add(timer)
    }
    const server = createServer((req, res) => {
      let raw = ""
      req.setEncoding("utf8")
      req.on("data", (chunk: string) => {
        raw += chunk
      })
      req.on("end", () => answer(req, res, raw))
    })
    server.on("connection", (s) => {
      sockets.add(s)
      s.on("close", () => sockets.delete(s))
    })
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      resolve({
        url: `http://127.0.0.1:${port}`,
        received: () => received,
        pending: () => pending,
        close: () =>
          new Promise<void>((done) => {
            for (const t of timers) clearTimeout(t)
            for (const s of sockets) s.destroy()
            server.close(() => done())
          })
      })
    })
  })
