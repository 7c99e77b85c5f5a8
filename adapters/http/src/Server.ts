/**
 * The Node HTTP server behind the transport: header and request-size limits, JSON answers for requests Node
 * refuses before they reach the application, and the Effect server layer.
 */
import * as http from "node:http"
import type { Duplex } from "node:stream"
import { NodeHttpServer } from "@effect/platform-node"
import { type ApiError, apiError, type PipelineServices } from "@market-data/core"
import { Duration, Effect, Layer, Scope } from "effect"
import { httpApp, httpStatus, nodeApiHandler } from "./HttpApp.ts"

/** Longest wait for in-flight requests at shutdown. */
const DRAIN_SECONDS = 20

/** Node's own parser limit; between MAX_HEADER_BYTES and this the application answers 431 itself. */
const NODE_MAX_HEADER_SIZE = 64 * 1024

const STATUS_TEXT: Record<number, string> = {
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

/** A Node server with this service's limits. */
export const makeNodeServer = (): http.Server => {
  const server = http.createServer({
    maxHeaderSize: NODE_MAX_HEADER_SIZE,
    headersTimeout: 20_000,
    requestTimeout: 60_000,
    keepAliveTimeout: 5_000
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
  return server
}

/**
 * Serves the HTTP transport on `host:port`: the API routes straight on Node's `request` event
 * (`nodeApiHandler`), the MCP endpoint and the docs page through the Effect HTTP application. Closing the
 * layer's scope stops accepting connections and drains in-flight requests.
 */
export const layerHttpServer = (options: { readonly host: string; readonly port: number }) => {
  let server: http.Server | undefined
  const make = () => {
    server = makeNodeServer()
    return server
  }
  const dispatch = Layer.effectDiscard(
    Effect.gen(function* () {
      const node = server
      if (node === undefined) return yield* Effect.die(new Error("the Node server was not created"))
      const context = yield* Effect.context<PipelineServices>()
      // The Effect application's request fibers live in a child scope, closed only after the server has
      // stopped and drained (the finalizer below runs first), so in-flight requests finish.
      const scope = Scope.forkUnsafe(yield* Effect.scope, "parallel")
      const api = nodeApiHandler(context)
      const application = yield* NodeHttpServer.makeHandler(httpApp, { scope, middleware: undefined })
      node.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
        if (!api(req, res)) application(req, res)
      })
      yield* Effect.addFinalizer(() =>
        Effect.callback<void>((resume) => {
          if (!node.listening) return resume(Effect.void)
          node.close(() => resume(Effect.void))
        }).pipe(Effect.timeoutOrElse({ duration: Duration.seconds(DRAIN_SECONDS), orElse: () => Effect.void }))
      )
    })
  )
  return dispatch.pipe(Layer.provideMerge(NodeHttpServer.layer(make, { host: options.host, port: options.port })))
}
