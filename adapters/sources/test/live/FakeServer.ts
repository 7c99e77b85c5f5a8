/**
 * Local fake venue and EDGAR servers for the live connector tests: `node:http` on 127.0.0.1, port 0, answering
 * from a route function that the test can swap at any time (to break a source and mend it again). Nothing is
 * ever sent anywhere but 127.0.0.1. Also where the tests find the real recorded responses
 * (`../shared/data/crypto`, `../shared/data/sec`), read in place, never copied.
 */
import { existsSync, readFileSync } from "node:fs"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { Socket } from "node:net"
import { fileURLToPath } from "node:url"
import { Effect, type Scope } from "effect"
import { TestClock } from "effect/testing"

const sharedDataDir = fileURLToPath(new URL("../../../../../shared/data/", import.meta.url))

/** True when the recorded data folder exists (CI always has it). */
export const sharedCryptoPresent = existsSync(`${sharedDataDir}crypto`)
export const sharedSecPresent = existsSync(`${sharedDataDir}sec`)

/** A recorded file's text, as recorded. */
export const sharedText = (relative: string): string => readFileSync(sharedDataDir + relative, "utf8")

export interface FakeRequest {
  readonly method: string
  readonly path: string
  readonly query: URLSearchParams
  readonly headers: IncomingMessage["headers"]
  /** Parsed JSON body of a POST, else undefined. */
  readonly body: unknown
}

/** How to answer: a JSON value or text with a status and headers; or misbehave. */
export type Reply =
  | { readonly status?: number; readonly headers?: Readonly<Record<string, string>>; readonly json: unknown }
  | { readonly status?: number; readonly headers?: Readonly<Record<string, string>>; readonly text: string }
  /** Never answer. */
  | "hang"
  /** Promise 1,000 bytes, send a few, cut the connection. */
  | "truncate"

export type Route = (request: FakeRequest) => Reply

export interface FakeServer {
  readonly url: string
  readonly requests: Array<FakeRequest>
  setRoute(route: Route): void
}

export const notFound: Reply = { status: 404, json: { error: "not found" } }

/** Writes `reply` to `res`, or misbehaves as it says ("hang": nothing; "truncate": a cut body). */
export const sendReply = (res: ServerResponse, reply: Reply): void => {
  if (reply === "hang") return
  if (reply === "truncate") {
    res.writeHead(200, { "Content-Type": "application/json", "Content-Length": "1000" })
    res.write('{"symbols": [')
    setTimeout(() => res.socket?.destroy(), 5)
    return
  }
  const text = "json" in reply ? JSON.stringify(reply.json) : reply.text
  res.writeHead(reply.status ?? 200, { "Content-Type": "application/json", ...reply.headers })
  res.end(text)
}

/**
 * A `node:http` server on 127.0.0.1 (port 0) handing each request, read whole and parsed (a JSON body as its
 * value), to `onRequest`. `close` cuts every open connection, so hanging requests do not hold it up.
 */
export const listenFake = (
  onRequest: (request: FakeRequest, res: ServerResponse) => void
): Promise<{ readonly url: string; readonly close: () => Promise<void> }> =>
  new Promise((resolve) => {
    const sockets = new Set<Socket>()
    const answer = (req: IncomingMessage, res: ServerResponse, raw: string) => {
      const u = new URL(req.url ?? "/", "http://127.0.0.1")
      let body: unknown
      try {
        body = raw === "" ? undefined : JSON.parse(raw)
      } catch {
        body = raw
      }
      onRequest(
        { method: req.method ?? "GET", path: u.pathname, query: u.searchParams, headers: req.headers, body },
        res
      )
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
        close: () =>
          new Promise<void>((done) => {
            for (const s of sockets) s.destroy()
            server.close(() => done())
          })
      })
    })
  })

/** A fake server for the life of the scope. */
export const fakeServer = (initial: Route): Effect.Effect<FakeServer, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      let route = initial
      const requests: Array<FakeRequest> = []
      const listening = await listenFake((request, res) => {
        requests.push(request)
        sendReply(res, route(request))
      })
      return {
        url: listening.url,
        requests,
        setRoute: (r: Route) => {
          route = r
        },
        close: listening.close
      }
    }),
    (s) => Effect.promise(() => s.close())
  )

/** A 127.0.0.1 address where nothing listens (a port taken and released). */
export const refusedUrl: Effect.Effect<string> = Effect.promise(
  () =>
    new Promise<string>((resolve) => {
      const server = createServer()
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        const port = typeof address === "object" && address !== null ? address.port : 0
        server.close(() => resolve(`http://127.0.0.1:${port}`))
      })
    })
)

/** Lets real I/O (the fake server, fetch) progress while a test runs on the TestClock. */
export const realPause = (ms = 20): Effect.Effect<void> =>
  Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)))

/**
 * Waits (real time) until `condition` holds: true as soon as it does, false after 30 s. The bound is a deadline for
 * a broken run, not a measure: a loaded CI machine can take seconds where a quiet one takes milliseconds.
 */
export const eventually = (condition: () => boolean | Effect.Effect<boolean>): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    for (let i = 0; i < 1_500; i++) {
      const c = condition()
      if (typeof c === "boolean" ? c : yield* c) return true
      yield* realPause(20)
    }
    return false
  })

/**
 * Moves the TestClock on by `stepMs` every few real milliseconds while a test waits on real I/O, so limiter
 * waits (which sleep on the Clock) pass; interrupted with the test's scope.
 */
export const pumpClock = (stepMs = 100) =>
  Effect.forkScoped(Effect.forever(Effect.andThen(TestClock.adjust(stepMs), realPause(2))))
