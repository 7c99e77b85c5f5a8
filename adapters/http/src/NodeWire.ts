/**
 * Node's request and response as the core's wire records, both ways. `wireRequestOf` gives a mounted route
 * (the MCP endpoint) what it reads of a request, its body included. `writeAnswer` is where every answer of the
 * HTTP transport reaches the socket (the API's, the docs page's, the mounted routes', SSE streams included): one
 * `writeHead` (the request ID first, the composition's headers last, the length of a text or byte body) and
 * the body, or a streamed body pumped chunk by chunk as the socket drains.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import type { BodyRead, WireRequest, WireResponse, WireStream } from "@market-data/core"
import { Effect } from "effect"
import { REQUEST_ID_HEADER } from "./Telemetry.ts"

/** Header values by lower-case name, keeping repeats (Node folds or drops some duplicates). */
export const rawHeaderValues = (raw: ReadonlyArray<string>, name: string): Array<string> => {
  const out: Array<string> = []
  for (let i = 0; i + 1 < raw.length; i += 2)
    if ((raw[i] as string).toLowerCase() === name) out.push(raw[i + 1] as string)
  return out
}

/** A Node request as a `WireRequest`. */
export const wireRequestOf = (req: IncomingMessage): WireRequest => ({
  method: (req.method ?? "GET").toUpperCase(),
  url: req.url ?? "/",
  header: (name) => {
    const value = req.headers[name]
    return Array.isArray(value) ? value.join(", ") : value
  },
  headerValues: (name) => rawHeaderValues(req.rawHeaders, name),
  remoteAddress: req.socket.remoteAddress,
  readBody: (maxBytes) => readBody(req, maxBytes)
})

/**
 * Reads a request's body whole as UTF-8 (a byte-order mark dropped, malformed bytes replaced), at most `maxBytes`:
 * a larger declared `Content-Length` is refused before reading, a body counted past the limit as it arrives is
 * refused there (the rest is left unread, and the answer closes the connection: `writeAnswer`). Interrupted
 * (the client gone), it stops listening.
 */
const readBody = (req: IncomingMessage, maxBytes: number): Effect.Effect<BodyRead> => {
  const declared = req.headers["content-length"]
  if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > maxBytes)
    return Effect.succeed({ _tag: "TooLarge" })
  return Effect.callback<BodyRead>((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    const finish = (read: BodyRead) => {
      stop()
      resume(Effect.succeed(read))
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBytes) {
        req.pause()
        finish({ _tag: "TooLarge" })
      } else chunks.push(chunk)
    }
    const onEnd = () => finish({ _tag: "Body", text: new TextDecoder().decode(Buffer.concat(chunks, size)) })
    const onFail = () => finish({ _tag: "Unreadable" })
    const stop = () => {
      req.off("data", onData)
      req.off("end", onEnd)
      req.off("error", onFail)
      req.off("close", onFail)
    }
    req.on("data", onData)
    req.on("end", onEnd)
    req.on("error", onFail)
    // Closed before its end (the client gone): `end` comes before `close` when the body did arrive.
    req.on("close", onFail)
    return Effect.sync(stop)
  })
}

/**
 * Writes one answer. Headers go to `writeHead` as a flat name/value list, no header set on the response
 * beforehand, so Node takes its fast path instead of a `setHeader` per header; the list is what the object
 * `{ "x-request-id": requestId, ...wire.headers, ...extra, "content-length": n }` would hold, in its order (a name
 * met again keeps its first place and takes the later value), without building that object.
 */
export const writeAnswer = (
  res: ServerResponse,
  wire: WireResponse,
  extra: Readonly<Record<string, string>>,
  requestId: string
): void => {
  const list = responseHeaderList(wire.headers, extra, requestId)
  const body = wire.body
  // A request whose body was being read and is not whole (a body over its limit): the rest is not read, so the
  // connection cannot carry another request. Node closes it once the answer is out.
  const req = res.req as ServerResponse["req"] | undefined
  if (req !== undefined && !req.complete && req.readableDidRead) set(list, "connection", "close")
  if (body === undefined) {
    // An empty body has its length said (not sent chunked), but where the status has no body at all.
    if (wire.status >= 200 && wire.status !== 204 && wire.status !== 304) set(list, "content-length", 0)
    res.writeHead(wire.status, list)
    res.end()
    return
  }
  if (typeof body === "string") {
    set(list, "content-length", Buffer.byteLength(body))
    res.writeHead(wire.status, list)
    res.end(body)
    return
  }
  if (body instanceof Uint8Array) {
    set(list, "content-length", body.byteLength)
    res.writeHead(wire.status, list)
    res.end(body)
    return
  }
  res.writeHead(wire.status, list)
  pump(res, body)
}

/**
 * A streamed body: the next chunk is asked for only once the previous one is in the socket's buffer below its
 * high-water mark (`write` returned true, or `drain`), so a slow reader holds one chunk here, never a queue. The
 * stream is closed once, however the answer ends: its last chunk, the client gone, the server stopping.
 */
const pump = (res: ServerResponse, stream: WireStream) => {
  let closed = false
  res.once("close", () => {
    closed = true
    stream.close()
  })
  stream.open()
  const step = (): void => {
    stream.next().then(
      (chunk) => {
        if (closed) return
        if (chunk === undefined) res.end()
        else if (res.write(chunk)) step()
        else res.once("drain", step)
      },
      () => {
        if (!closed) res.destroy()
      }
    )
  }
  step()
}

/**
 * Answers computed synchronously in one event-loop turn are written together when the turn's I/O is done
 * (`setImmediate`), not one by one between the computations. Under load a turn handles many requests; writing
 * their answers back to back wakes a waiting client process once per burst instead of once per answer, which
 * on a virtual machine (where waking another CPU is a costly exit to the hypervisor) was a third of the time
 * of each answer on loopback. A lone request is written at the end of its own turn, microseconds later.
 * One batch per request handler (`makeRequestHandler`): a server's, never the module's.
 */
export const makeAnswerBatch = () => {
  let pending: Array<ServerResponse | WireResponse | Readonly<Record<string, string>> | string> = []
  const flush = () => {
    const batch = pending
    pending = []
    for (let i = 0; i < batch.length; i += 4) {
      const res = batch[i] as ServerResponse
      if (res.writableEnded || res.destroyed) continue
      try {
        writeAnswer(
          res,
          batch[i + 1] as WireResponse,
          batch[i + 2] as Readonly<Record<string, string>>,
          batch[i + 3] as string
        )
      } catch {
        // One answer Node refuses to write (it validated its headers) must not keep the others unwritten.
        res.destroy()
      }
    }
  }
  return {
    /** Writes `wire` after this turn's I/O, with the other answers of the turn. */
    writeSoon: (
      res: ServerResponse,
      wire: WireResponse,
      extra: Readonly<Record<string, string>>,
      requestId: string
    ): void => {
      if (pending.length === 0) setImmediate(flush)
      pending.push(res, wire, extra, requestId)
    }
  }
}

/** Sets `name` in a flat name/value list as an object assignment would: in its place if present, else last. */
const set = (list: Array<string | number>, name: string, value: string | number) => {
  for (let i = 0; i < list.length; i += 2) {
    if (list[i] === name) {
      list[i + 1] = value
      return
    }
  }
  list.push(name, value)
}

/** The flat list of `{ [REQUEST_ID_HEADER]: requestId, ...headers, ...extra }`. */
export const responseHeaderList = (
  headers: Readonly<Record<string, string>>,
  extra: Readonly<Record<string, string>>,
  requestId: string
): Array<string | number> => {
  const list: Array<string | number> = [REQUEST_ID_HEADER, requestId]
  for (const name in headers) {
    if (name === REQUEST_ID_HEADER) list[1] = headers[name] as string
    else list.push(name, headers[name] as string)
  }
  for (const name in extra) set(list, name, extra[name] as string)
  return list
}
