/**
 * Limits an outsider cannot exhaust: how many connections the server holds open at once, in total and per client
 * address, and how long a request's body may take to arrive. Together with the body size each route accepts
 * (the MCP endpoint reads at most its `MAX_MCP_BODY_BYTES`; the API routes read no body), they bound what
 * connections that trickle bytes can hold: memory, sockets, time.
 *
 * - A connection past either cap is answered at once, before its request is read, with one JSON error and
 *   `Connection: close`: `429 rate_limited` past the per-client cap, `503 source_unavailable` past the total,
 *   both with `Retry-After: 1`. A client is counted by its address (an IPv6 one by its /64, as the keyless rate
 *   limit counts it).
 * - A trusted proxy's connections (`MARKET_DATA_TRUSTED_PROXIES`) carry many clients: they count toward the
 *   total only, and the per-client cap applies to the requests in flight from each client the proxy names in
 *   `X-Forwarded-For` (the same client address the keyless rate limit uses); one past it is answered 429.
 * - A request's body must arrive whole within `bodyTimeoutMs` of its turn starting (its headers read); otherwise
 *   it is answered `408` (when nothing was answered yet) and its connection is closed.
 */
import type * as http from "node:http"
import type { Duplex } from "node:stream"
import {
  type ApiError,
  apiError,
  clientAddress,
  DEFAULT_BODY_TIMEOUT_MS,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
  isTrustedProxy,
  keylessBudget,
  NO_TRUSTED_PROXIES,
  type TrustedProxies
} from "@market-data/core"

export interface ConnectionLimits {
  /** Most connections open at once, from every client together. */
  readonly maxConnections: number
  /** Most connections (behind a trusted proxy: requests in flight) at once from one client address. */
  readonly maxConnectionsPerClient: number
  /** Longest time, in milliseconds, from a request's turn to the last byte of its body. */
  readonly bodyTimeoutMs: number
}

/**
 * The defaults: 1,024 connections in all, 128 per client address, 5 s for a body. 128 bodies of the MCP
 * endpoint's 256 KiB are 32 MiB: what one address can make the server buffer at once.
 */
export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  maxConnections: DEFAULT_MAX_CONNECTIONS,
  maxConnectionsPerClient: DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
  bodyTimeoutMs: DEFAULT_BODY_TIMEOUT_MS
}

/**
 * How long a refused connection is kept for the client to read its refusal before it is destroyed (a destroy
 * with its unread bytes resets the connection, and a reset can discard the refusal before the client reads it).
 * It holds a socket and nothing else; past `maxConnections` of them waiting, a refusal is destroyed at once.
 */
const REFUSAL_GRACE_MS = 5_000

const REFUSED = Symbol("market-data/connection-refused")
const PROXIED = Symbol("market-data/connection-proxied")

type GuardedSocket = Duplex & { [REFUSED]?: true; [PROXIED]?: true; remoteAddress?: string | undefined }

const STATUS_TEXT: Readonly<Record<number, string>> = {
  408: "Request Timeout",
  429: "Too Many Requests",
  503: "Service Unavailable"
}

const errorHeaders = (error: ApiError, body: string): Record<string, string> => ({
  "content-type": "application/json",
  "cache-control": "no-store",
  "content-length": String(Buffer.byteLength(body)),
  ...(error.retryAfterSeconds === undefined ? {} : { "retry-after": String(error.retryAfterSeconds) }),
  connection: "close"
})

/** Answers on the socket itself (no request read yet), then closes it once the client had time to read it. */
const refuseConnection = (
  socket: GuardedSocket,
  status: number,
  error: ApiError,
  lingering: { readonly sockets: Set<Duplex>; readonly max: number }
) => {
  socket[REFUSED] = true
  const body = JSON.stringify(error.toBody())
  const head = Object.entries(errorHeaders(error, body))
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("")
  // Nothing it sends is read (it arrived paused): no request is parsed, no body buffered.
  socket.end(`HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\n${head}\r\n${body}`)
  if (lingering.sockets.size >= lingering.max) {
    socket.destroy()
    return
  }
  lingering.sockets.add(socket)
  const timer = setTimeout(() => socket.destroy(), REFUSAL_GRACE_MS)
  socket.once("close", () => {
    lingering.sockets.delete(socket)
    clearTimeout(timer)
  })
}

/** Answers a request with an error and closes its connection once the answer is written. */
const refuseRequest = (res: http.ServerResponse, status: number, error: ApiError) => {
  if (res.headersSent || res.writableEnded) return
  const body = JSON.stringify(error.toBody())
  res.writeHead(status, errorHeaders(error, body))
  res.end(body)
}

const tooManyFromClient = (limit: number, what: string) =>
  apiError(
    "rate_limited",
    `too many ${what} from your address: at most ${limit} at once; close some, or retry in 1 s (see docs section access)`,
    { retryAfterSeconds: 1 }
  )

/** Header values by lower-case name, keeping repeats. */
const rawHeaderValues = (raw: ReadonlyArray<string>, name: string): Array<string> => {
  const out: Array<string> = []
  for (let i = 0; i + 1 < raw.length; i += 2)
    if ((raw[i] as string).toLowerCase() === name) out.push(raw[i + 1] as string)
  return out
}

const decrement = (counts: Map<string, number>, key: string) => {
  const n = (counts.get(key) ?? 1) - 1
  if (n <= 0) counts.delete(key)
  else counts.set(key, n)
}

/** What `guardConnections` counts, readable by tests and metrics. */
export interface ConnectionGuard {
  /** Connections open now (refused ones not counted). */
  readonly open: () => number
  /** Destroys the refused connections still given time to read their refusal (at shutdown). */
  readonly dropRefused: () => void
  /** The trusted proxies, once the server's settings are known (none before). */
  trusted: TrustedProxies
  /**
   * Wraps a request handler: requests on a refused connection are dropped (their refusal is written), a request
   * past its client's cap behind a trusted proxy is refused, and every body gets its deadline.
   */
  readonly requests: (
    handler: (req: http.IncomingMessage, res: http.ServerResponse) => void
  ) => (req: http.IncomingMessage, res: http.ServerResponse) => void
}

/** Counts and caps the connections of `server` (see the module comment). */
export const guardConnections = (server: http.Server, limits: ConnectionLimits): ConnectionGuard => {
  let open = 0
  const lingering = { sockets: new Set<Duplex>(), max: limits.maxConnections }
  const perClient = new Map<string, number>()
  const inFlight = new Map<string, number>()
  const guard: ConnectionGuard = {
    open: () => open,
    dropRefused: () => {
      for (const socket of lingering.sockets) socket.destroy()
    },
    trusted: NO_TRUSTED_PROXIES,
    requests: (handler) => {
      const withDeadline = bodyDeadline(handler, limits.bodyTimeoutMs)
      return (req, res) => {
        const socket = req.socket as GuardedSocket
        // Never reached by a refused connection's requests (they are not read); kept as a guard.
        if (socket[REFUSED] === true) return
        if (socket[PROXIED] === true) {
          const client = keylessBudget(
            clientAddress(socket.remoteAddress, rawHeaderValues(req.rawHeaders, "x-forwarded-for"), guard.trusted)
          )
          const n = inFlight.get(client) ?? 0
          if (n >= limits.maxConnectionsPerClient) {
            refuseRequest(res, 429, tooManyFromClient(limits.maxConnectionsPerClient, "requests in flight"))
            return
          }
          inFlight.set(client, n + 1)
          res.once("close", () => decrement(inFlight, client))
        }
        withDeadline(req, res)
      }
    }
  }
  // A refused connection must cost nothing more than its refusal: nothing it sends may be read. Node's HTTP
  // layer reads a connection from the moment it sees it (in native code, which `pause()` does not stop), so the
  // server hands new connections over paused, and they meet the HTTP layer (its `connection` listeners, taken
  // here) only once admitted.
  const http = server.listeners("connection") as Array<(socket: Duplex) => void>
  server.removeAllListeners("connection")
  ;(server as unknown as { pauseOnConnect: boolean }).pauseOnConnect = true
  const admit = (socket: GuardedSocket) => {
    for (const listener of http) listener.call(server, socket)
    socket.resume()
  }
  server.on("connection", (socket: GuardedSocket) => {
    if (open >= limits.maxConnections) {
      refuseConnection(
        socket,
        503,
        apiError(
          "source_unavailable",
          `the server holds its limit of ${limits.maxConnections} open connections; retry in 1 s`,
          { retryAfterSeconds: 1 }
        ),
        lingering
      )
      return
    }
    let client: string | undefined
    if (isTrustedProxy(socket.remoteAddress, guard.trusted)) socket[PROXIED] = true
    else {
      client = keylessBudget(socket.remoteAddress ?? "unknown")
      const n = perClient.get(client) ?? 0
      if (n >= limits.maxConnectionsPerClient) {
        refuseConnection(socket, 429, tooManyFromClient(limits.maxConnectionsPerClient, "open connections"), lingering)
        return
      }
      perClient.set(client, n + 1)
    }
    open++
    socket.once("close", () => {
      open--
      if (client !== undefined) decrement(perClient, client)
    })
    admit(socket)
  })
  return guard
}

/** Whether a request announces a body (a non-zero `Content-Length`, or any `Transfer-Encoding`). */
const announcesBody = (req: http.IncomingMessage): boolean => {
  const length = req.headers["content-length"]
  return (length !== undefined && length !== "0") || req.headers["transfer-encoding"] !== undefined
}

/**
 * Gives a request's body `timeoutMs` to arrive whole. Past it: `408` when nothing was answered yet, and the
 * connection is closed either way (a body still arriving after its answer holds the connection too).
 */
export const bodyDeadline =
  (handler: (req: http.IncomingMessage, res: http.ServerResponse) => void, timeoutMs: number) =>
  (req: http.IncomingMessage, res: http.ServerResponse): void => {
    if (announcesBody(req) && !req.complete) {
      const socket = req.socket
      const expire = () => {
        if (req.complete || socket.destroyed) return
        refuseRequest(
          res,
          408,
          apiError(
            "invalid_header",
            `the request body did not arrive within ${timeoutMs / 1000} s of its headers; send the body at once`
          )
        )
        // The answer has a moment to reach the client; the body still coming is not read.
        const cut = setTimeout(() => socket.destroy(), 500)
        socket.once("close", () => clearTimeout(cut))
      }
      // Decided after the I/O of the turn the deadline falls in: after an event loop stalled past the deadline,
      // timers run before the bytes that arrived meanwhile are read, and a body that did arrive is not cut.
      const timer = setTimeout(() => setImmediate(expire), timeoutMs)
      const onClose = () => clearTimeout(timer)
      socket.once("close", onClose)
      req.once("end", () => {
        clearTimeout(timer)
        socket.off("close", onClose)
      })
    }
    handler(req, res)
  }
