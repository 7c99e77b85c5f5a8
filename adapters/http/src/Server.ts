/**
 * The Node HTTP server behind the transport: header and request-size limits, JSON answers for requests Node
 * refuses before they reach the application, and the Effect server layer.
 */
import * as http from "node:http"
import type { Duplex } from "node:stream"
import { NodeHttpServer } from "@effect/platform-node"
import { type ApiError, apiError } from "@market-data/core"
import { Layer } from "effect"
import { HttpServer } from "effect/http"
import { httpApp, httpStatus } from "./HttpApp.ts"

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

/** Serves the HTTP application on `host:port`. Closing the layer's scope drains in-flight requests. */
export const layerHttpServer = (options: { readonly host: string; readonly port: number }) =>
  HttpServer.serve()(httpApp).pipe(
    Layer.provideMerge(NodeHttpServer.layer(makeNodeServer, { host: options.host, port: options.port }))
  )
