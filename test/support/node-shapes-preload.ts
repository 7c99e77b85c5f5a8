/**
 * Preloaded (`NODE_OPTIONS=--expose-gc --import=<this file>`) into a `serve` process by test/serve-node-shapes.test.ts:
 * a full collection as each new connection reaches any HTTP server of the process, before its request objects are
 * made (the previous request's objects are gone by then: the pattern of a start whose first requests straddle
 * the history's collections), and one stderr line per request, `shape <url> <request fast> <response fast>`, from
 * V8's `%HasFastProperties` (hash-table objects answer false).
 */
import { subscribe } from "node:diagnostics_channel"
import * as http from "node:http"
import { setFlagsFromString } from "node:v8"

setFlagsFromString("--allow-natives-syntax")
const hasFastProperties = new Function("o", "return %HasFastProperties(o)") as (o: object) => boolean
const collect = (globalThis as { gc?: () => void }).gc
if (collect === undefined) throw new Error("node-shapes-preload needs --expose-gc")

const emit = http.Server.prototype.emit as (
  this: http.Server,
  event: string | symbol,
  ...args: Array<unknown>
) => boolean
http.Server.prototype.emit = function (this: http.Server, event: string | symbol, ...args: Array<unknown>) {
  if (event === "connection") collect()
  return emit.call(this, event, ...args)
} as typeof http.Server.prototype.emit

subscribe("http.server.request.start", (message) => {
  const { request, response } = message as { request: http.IncomingMessage; response: http.ServerResponse }
  process.stderr.write(`shape ${request.url} ${hasFastProperties(request)} ${hasFastProperties(response)}\n`)
})
