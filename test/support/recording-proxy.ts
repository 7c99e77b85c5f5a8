/**
 * An HTTP proxy for end-to-end tests of client programs: it forwards every request to `target` and records
 * what passed (arrival and answer times, method, path, request headers, status, response headers and body),
 * so a test can prove when a client asked and what it was told. `inject` can answer a request itself instead
 * of forwarding it (e.g. a 429 with `Retry-After`), to drive a client through answers that are slow or
 * awkward to provoke on a real server.
 */
import * as http from "node:http"

export interface Exchange {
  /** 1-based order of arrival. */
  readonly n: number
  /** Epoch ms when the request arrived / when the answer was sent. */
  readonly arrivedAt: number
  readonly answeredAt: number
  readonly method: string
  readonly path: string
  readonly requestHeaders: http.IncomingHttpHeaders
  readonly status: number
  readonly responseHeaders: Record<string, string>
  readonly body: string
  readonly injected: boolean
}

export interface Injected {
  readonly status: number
  readonly headers?: Record<string, string>
  readonly body?: string
}

export interface RecordingProxy {
  readonly base: string
  readonly exchanges: ReadonlyArray<Exchange>
  readonly close: () => Promise<void>
}

const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "content-length", "host"])

export const startRecordingProxy = async (
  target: string,
  inject?: (n: number, request: { readonly method: string; readonly path: string }) => Injected | undefined
): Promise<RecordingProxy> => {
  const exchanges: Array<Exchange> = []
  let count = 0
  const server = http.createServer((req, res) => {
    const arrivedAt = Date.now()
    const n = ++count
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", async () => {
      const method = req.method ?? "GET"
      const path = req.url ?? "/"
      const record = (status: number, responseHeaders: Record<string, string>, body: string, injected: boolean) => {
        exchanges.push({
          n,
          arrivedAt,
          answeredAt: Date.now(),
          method,
          path,
          requestHeaders: req.headers,
          status,
          responseHeaders,
          body,
          injected
        })
        res.writeHead(status, responseHeaders)
        res.end(body)
      }
      const injected = inject?.(n, { method, path })
      if (injected !== undefined) {
        record(injected.status, injected.headers ?? {}, injected.body ?? "", true)
        return
      }
      try {
        const headers = new Headers()
        for (const [name, value] of Object.entries(req.headers)) {
          if (value === undefined || HOP_BY_HOP.has(name)) continue
          for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v)
        }
        const upstream = await fetch(`${target}${path}`, {
          method,
          headers,
          ...(method === "GET" || method === "HEAD" ? {} : { body: Buffer.concat(chunks) })
        })
        const body = await upstream.text()
        const responseHeaders: Record<string, string> = {}
        upstream.headers.forEach((value, name) => {
          if (!HOP_BY_HOP.has(name) && name !== "content-encoding") responseHeaders[name] = value
        })
        record(upstream.status, responseHeaders, body, false)
      } catch (e) {
        record(502, { "content-type": "text/plain" }, `proxy: ${String(e)}`, true)
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  return {
    base: `http://127.0.0.1:${port}`,
    exchanges,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((e) => (e ? reject(e) : resolve()))
      })
  }
}
