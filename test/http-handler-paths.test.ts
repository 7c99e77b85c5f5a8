/**
 * The request handler (`makeRequestHandler`) answers a request whose pipeline completes in the same turn at once (the
 * fiber's exit read synchronously), and one whose pipeline suspends when its fiber ends. Both must give the same
 * answer and book it once: one charge, one telemetry record. Here the same paid `read` runs on two services that
 * differ only in that one's handler yields to the scheduler before it answers (so its fiber suspends).
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { createKey, type Handler, MoneyStore } from "@market-data/core"
import { makeRequestHandler, type RequestRecord, RequestTelemetry } from "@market-data/http"
import { layerCore } from "@market-data/infra"
import { layerMemoryStores } from "@market-data/memory"
import { Clock, Context, Effect, Exit, Layer, Scope } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { makeTestPlane } from "../core/test/support/TestPlane.ts"
import { testConfig } from "./support/server.ts"

interface Written {
  readonly status: number
  readonly headers: Record<string, string | number>
  readonly body: string | undefined
}

const scopes: Array<Scope.Closeable> = []
afterAll(() => Promise.all(scopes.map((s) => Effect.runPromise(Scope.close(s, Exit.void)))))

/** A service on memory stores with the test plane; `suspending`: its handlers yield before answering. */
const service = async (suspending: boolean) => {
  const plane = await Effect.runPromise(makeTestPlane())
  const handlers = new Map<string, Handler>(
    [...plane.handlers].map(([name, h]) => [
      name,
      suspending ? (input) => Effect.andThen(Effect.yieldNow, h(input)) : h
    ])
  )
  const scope = Effect.runSync(Scope.make())
  scopes.push(scope)
  const context = await Effect.runPromise(
    Layer.buildWithScope(layerCore(testConfig({ rateLimitPerMinute: 1000 }), layerMemoryStores, [handlers]), scope)
  )
  const records: Array<RequestRecord> = []
  const api = makeRequestHandler(
    Context.add(context, RequestTelemetry, { record: (r) => records.push(r), tracing: false }),
    { mounts: [], headers: { "x-catalog-version": "test" } }
  )
  const run = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.runPromise(Effect.provide(effect, context) as Effect.Effect<A, E, never>)
  const created = await run(createKey({ credits: 10, rateLimitPerMinute: null }))
  const balance = () =>
    run(
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.flatMap(MoneyStore, (m) => m.balance(created.record.id, now))
      )
    )
  /**
   * One request through the handler; resolves with what it wrote and whether the handler waited for the fiber
   * (it watches the response's `close` only then, to interrupt the work of a client gone).
   */
  const request = (url: string, headers: Record<string, string> = {}) =>
    new Promise<{ written: Written; waited: boolean }>((resolve) => {
      const raw = ["Host", "x", "Authorization", `Bearer ${created.key}`, "X-Request-Id", "same-id"]
      for (const [k, v] of Object.entries(headers)) raw.push(k, v)
      let waited = false
      let status = 0
      let head: Record<string, string | number> = {}
      const res = {
        writableEnded: false,
        destroyed: false,
        writeHead(code: number, h: Record<string, string | number> | Array<string | number>) {
          status = code
          // A flat name/value list as Node writes it, pair by pair (or an object, property by property).
          head = Array.isArray(h)
            ? Object.fromEntries(
                Array.from({ length: h.length / 2 }, (_, i) => [String(h[2 * i]), h[2 * i + 1] as string | number])
              )
            : h
          return res
        },
        end(body?: string) {
          res.writableEnded = true
          resolve({ written: { status, headers: head, body }, waited })
          return res
        },
        on(event: string) {
          if (event === "close") waited = true
          return res
        }
      }
      const req = { method: "GET", url, headers: {}, rawHeaders: raw, socket: { remoteAddress: "127.0.0.1" } }
      api(req as unknown as IncomingMessage, res as unknown as ServerResponse)
    })
  return { request, balance, records, executions: () => Effect.runPromise(plane.executions) }
}

/** The rate-limit reset (`t=`) counts seconds on the clock; everything else must be equal. */
const comparable = (w: Written) => ({
  ...w,
  headers: { ...w.headers, ratelimit: String(w.headers.ratelimit).replace(/;t=\d+$/, ";t=?") }
})

describe("the API handler's synchronous and suspended answers", () => {
  it("give the same paid read, charged once and recorded once", async () => {
    const now = await service(false)
    const later = await service(true)
    expect(await now.balance()).toBe(10)
    expect(await later.balance()).toBe(10)
    const a = await now.request("/api/v1/read?id=crypto:bitcoin")
    const b = await later.request("/api/v1/read?id=crypto:bitcoin")
    expect([a.waited, b.waited]).toEqual([false, true])
    expect(a.written.status).toBe(200)
    expect(comparable(b.written)).toEqual(comparable(a.written))
    // Header order is part of the answer too: as written before the list (the request ID first, the catalog
    // header after the answer's own, the length last).
    expect(Object.keys(a.written.headers)).toEqual([
      "x-request-id",
      "access-control-allow-origin",
      "access-control-expose-headers",
      "content-type",
      "cache-control",
      "etag",
      "ratelimit-policy",
      "ratelimit",
      "x-credits-charged",
      "x-catalog-version",
      "content-length"
    ])
    expect(Object.keys(b.written.headers)).toEqual(Object.keys(a.written.headers))
    expect(a.written.headers["x-request-id"]).toBe("same-id")
    expect(a.written.headers["x-credits-charged"]).toBe("1")
    expect(await now.balance()).toBe(9)
    expect(await later.balance()).toBe(9)
    expect(await now.executions()).toBe(1)
    expect(await later.executions()).toBe(1)
    expect(now.records.map((r) => [r.operation, r.status])).toEqual([["read", 200]])
    expect(later.records.map((r) => [r.operation, r.status])).toEqual([["read", 200]])
  })

  it("give the same free 304 on an unchanged read, charging nothing", async () => {
    const now = await service(false)
    const later = await service(true)
    const etag = String((await now.request("/api/v1/read?id=crypto:bitcoin")).written.headers.etag)
    await later.request("/api/v1/read?id=crypto:bitcoin")
    const a = await now.request("/api/v1/read?id=crypto:bitcoin", { "If-None-Match": etag })
    const b = await later.request("/api/v1/read?id=crypto:bitcoin", { "If-None-Match": etag })
    expect([a.waited, b.waited]).toEqual([false, true])
    expect(a.written.status).toBe(304)
    expect(a.written.body).toBeUndefined()
    expect(comparable(b.written)).toEqual(comparable(a.written))
    expect(await now.balance()).toBe(9)
    expect(await later.balance()).toBe(9)
    expect(now.records.map((r) => r.status)).toEqual([200, 304])
    expect(later.records.map((r) => r.status)).toEqual([200, 304])
  })
})
