/**
 * The Node HTTP server behind the transport: header and request-size limits, JSON answers for requests Node
 * refuses before they reach the application, and the layer that listens (`layerHttpServer`).
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import type { Duplex } from "node:stream"
import { type ApiError, apiError, type PipelineServices, Settings } from "@market-data/core"
import { Context, Data, Duration, Effect, Exit, Layer, Scope } from "effect"
import {
  type ConnectionGuard,
  type ConnectionLimits,
  DEFAULT_CONNECTION_LIMITS,
  guardConnections
} from "./ConnectionLimits.ts"
import { type HttpRoutes, httpStatus, type MountedRoute, makeRequestHandler } from "./HttpApp.ts"

/** Longest wait for in-flight requests at shutdown. */
const DRAIN_SECONDS = 20

/** Node's own parser limit; between MAX_HEADER_BYTES and this the application answers 431 itself. */
const NODE_MAX_HEADER_SIZE = 64 * 1024

const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: "Bad Request",
  408: "Request Timeout",
  431: "Request Header Fields Too Large"
}

const rawAnswer = (socket: Duplex, error: ApiError, status = httpStatus(error.code)) => {
  const body = JSON.stringify(error.toBody())
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? "Error"}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  )
}

/** Per-connection state of `oneAtATimePerConnection`. */
interface ConnectionTurn {
  /** Whether a request of this connection is being answered (its response not yet handed to the kernel). */
  busy: boolean
  /** Requests received behind it (pipelined), in order: request, response, request, response, ... */
  readonly waiting: Array<http.IncomingMessage | http.ServerResponse>
}

const TURN = Symbol("market-data/connection-turn")

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void

/**
 * Backpressure: a connection's requests are answered one at a time, and the next is started only when the
 * previous answer has been handed to the kernel (its response closed) and the socket's write buffer is below
 * its high-water mark. While a request waits the socket is paused, so a client that sends requests (pipelined)
 * and never reads the answers is not read further: it holds at most one answer in this process, never one per
 * request it sent. A client that reads its answers never waits (keep-alive clients send one request at a time).
 */
export const oneAtATimePerConnection = (handler: Handler): Handler => {
  const start = (turn: ConnectionTurn, req: http.IncomingMessage, res: http.ServerResponse) => {
    turn.busy = true
    res.once("close", () => next(req.socket, turn))
    handler(req, res)
  }
  const next = (socket: http.IncomingMessage["socket"], turn: ConnectionTurn) => {
    turn.busy = false
    if (turn.waiting.length === 0) {
      if (!socket.destroyed) socket.resume()
      return
    }
    if (socket.destroyed) {
      turn.waiting.length = 0
      return
    }
    if (socket.writableNeedDrain) {
      // Still busy (later requests keep queueing) until the write buffer drains.
      turn.busy = true
      socket.once("drain", () => next(socket, turn))
      return
    }
    const req = turn.waiting.shift() as http.IncomingMessage
    const res = turn.waiting.shift() as http.ServerResponse
    // After the I/O of this turn: a connection's queued (pipelined) requests go behind other connections' new ones.
    turn.busy = true
    setImmediate(() => {
      if (socket.destroyed) {
        turn.waiting.length = 0
        return
      }
      start(turn, req, res)
    })
  }
  return (req, res) => {
    const socket = req.socket as http.IncomingMessage["socket"] & { [TURN]?: ConnectionTurn }
    let turn = socket[TURN]
    if (turn === undefined) {
      turn = { busy: false, waiting: [] }
      socket[TURN] = turn
      const own = turn
      socket.once("close", () => {
        own.waiting.length = 0
      })
    }
    if (turn.busy) {
      turn.waiting.push(req, res)
      socket.pause()
      return
    }
    start(turn, req, res)
  }
}

/** A Node server with this service's limits (the connection and body limits: `ConnectionLimits.ts`). */
export const makeNodeServer = (
  limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS
): http.Server & { readonly guard: ConnectionGuard } => {
  const server = http.createServer({
    maxHeaderSize: NODE_MAX_HEADER_SIZE,
    headersTimeout: 20_000,
    requestTimeout: 60_000,
    keepAliveTimeout: 5_000,
    // Node checks the header and request timeouts on this interval (30 s by default, which let a slow client
    // hold its connection for up to 30 s past them).
    connectionsCheckingInterval: 1_000
  })
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable) {
      socket.destroy()
      return
    }
    if (err.code === "HPE_HEADER_OVERFLOW") {
      rawAnswer(socket, apiError("headers_too_large", "request headers are too large"))
    } else if (err.code === "ERR_HTTP_REQUEST_TIMEOUT") {
      rawAnswer(socket, apiError("invalid_header", "the request was not received in time"), 408)
    } else {
      rawAnswer(socket, apiError("invalid_header", "malformed HTTP request"))
    }
  })
  return Object.assign(server, { guard: guardConnections(server, limits) })
}

/** The server could not listen on its address (taken, not this host's, not allowed). */
export class ListenError extends Data.TaggedError("ListenError")<{ readonly cause: Error }> {}

/** Where a `layerHttpServer` listens: its host as configured and the port it got (`0` asks for a free one). */
export class HttpServerAddress extends Context.Service<
  HttpServerAddress,
  { readonly host: string; readonly port: number }
>()("@market-data/http/HttpServerAddress") {}

/**
 * Serves the HTTP transport on `host:port`: every request (the API, the docs page, the mounted routes, which the
 * composition root hands in) through the one handler of `makeRequestHandler`, after the operator's routes when
 * given. Closing the layer's scope ends the mounted routes' long-lived answers, stops accepting connections and
 * drains in-flight requests (at most `DRAIN_SECONDS`), then interrupts what is still running.
 */
export const layerHttpServer = (options: {
  readonly host: string
  readonly port: number
  /** Transports served beside the API at their own paths (`HttpApp.ts` `MountedRoute`); none by default. */
  readonly mounts?: ReadonlyArray<MountedRoute> | undefined
  /** Headers every answer carries (the catalog-version beacon); none by default. */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /**
   * Routes answered before anything else, outside the API (no rate unit, no credit, no request log line): the
   * operator's `/healthz`, `/readyz`, `/metrics`. Returns false for a request it does not answer.
   */
  readonly operational?: ((req: http.IncomingMessage, res: http.ServerResponse) => boolean) | undefined
  /** Connection caps and the body deadline; `DEFAULT_CONNECTION_LIMITS` when absent. */
  readonly limits?: ConnectionLimits | undefined
  /**
   * A socket already listening on `host:port` to take over instead of binding anew (Node's `listen({ handle })`):
   * a start opens its port before the service is open (infra's `EarlyListener.ts`) and hands it over here, so no
   * connection is refused in between.
   */
  readonly listening?: unknown
}): Layer.Layer<HttpServerAddress, ListenError, PipelineServices> =>
  Layer.effect(HttpServerAddress)(
    Effect.gen(function* () {
      const context = yield* Effect.context<PipelineServices>()
      const limits = options.limits ?? DEFAULT_CONNECTION_LIMITS
      const node = makeNodeServer(limits)
      // A trusted proxy's connections carry many clients: capped per client by request (`ConnectionLimits.ts`).
      const trusted = Context.get(context, Settings).trustedProxies
      if (trusted !== undefined) node.guard.trusted = trusted
      // Request fibers that outlive their turn are kept here; closed after the server stopped and drained.
      const requests = yield* Scope.make("parallel")
      const routes: HttpRoutes = { mounts: options.mounts ?? [], headers: options.headers ?? {} }
      const handler = makeRequestHandler(context, routes, requests)
      const operational = options.operational
      node.on(
        "request",
        oneAtATimePerConnection(
          node.guard.requests(
            operational === undefined
              ? handler
              : (req: http.IncomingMessage, res: http.ServerResponse) => {
                  if (!operational(req, res)) handler(req, res)
                }
          )
        )
      )
      // A listen backlog deep enough for a burst of connections up to the cap: they are accepted (and refused
      // past it) at once rather than left to the clients' SYN retries.
      const backlog = Math.max(511, limits.maxConnections)
      yield* Effect.callback<void, ListenError>((resume) => {
        const failed = (cause: Error) => resume(Effect.fail(new ListenError({ cause })))
        node.once("error", failed)
        // Node's `listen` takes over a listening socket given as `handle` (its option type does not name it).
        const at =
          options.listening === undefined
            ? { host: options.host, port: options.port, backlog }
            : ({ handle: options.listening, backlog } as unknown as { readonly port: number; readonly backlog: number })
        node.listen(at, () => {
          node.off("error", failed)
          resume(Effect.void)
        })
      })
      const shutdowns = (options.mounts ?? []).flatMap((m) => (m.shutdown === undefined ? [] : [m.shutdown]))
      yield* Effect.addFinalizer(() =>
        Effect.forEach(shutdowns, (shutdown) => Effect.provide(shutdown, context), { discard: true }).pipe(
          Effect.andThen(
            Effect.callback<void>((resume) => {
              if (!node.listening) return resume(Effect.void)
              node.close(() => resume(Effect.void))
              // Refused connections are not waited for: they were answered, and nothing of theirs is running.
              node.guard.dropRefused()
            }).pipe(Effect.timeoutOrElse({ duration: Duration.seconds(DRAIN_SECONDS), orElse: () => Effect.void }))
          ),
          Effect.andThen(Scope.close(requests, Exit.void))
        )
      )
      return { host: options.host, port: (node.address() as AddressInfo).port }
    })
  )
