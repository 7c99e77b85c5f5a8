/**
 * The port a start opens before the service is open (EarlyListener.ts), on a real socket: `/healthz` alive,
 * `/readyz` and every other request 503 naming the step under way, each API refusal typed, retryable and
 * uncharged; then the socket handed over to another server, which answers on the same port from then on, and which
 * the listener's scope leaves open.
 */
import * as http from "node:http"
import { describe, expect, it } from "@effect/vitest"
import { ErrorBody } from "@market-data/core"
import { Effect, Exit, Schema, Scope } from "effect"
import { listenEarly } from "../src/EarlyListener.ts"

const steps = ["opening the embedded database in ./.market-data (migration 0007_keys)"]

const ask = (port: number, path: string, init: RequestInit = {}) =>
  Effect.promise(async () => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, init)
    return { status: res.status, headers: res.headers, body: await res.text() }
  })

describe("the early listener", () => {
  it.effect("answers /healthz, /readyz and the API while the service opens, then hands its socket over", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const early = yield* listenEarly("127.0.0.1", 0, 511, () => steps).pipe(Scope.provide(scope))
      expect(early.port).toBeGreaterThan(0)

      const health = yield* ask(early.port, "/healthz")
      expect(health.status).toBe(200)
      expect(JSON.parse(health.body)).toEqual({ status: "ok" })

      const ready = yield* ask(early.port, "/readyz")
      expect(ready.status).toBe(503)
      expect(JSON.parse(ready.body)).toEqual({
        status: "not_ready",
        missing: [`the service is starting: ${steps[0]}`]
      })

      const paid = yield* ask(early.port, "/api/v1/price?id=crypto:bitcoin", {
        headers: { authorization: "Bearer mdk_0123456789abcdefghijklmnopqrstuv", "idempotency-key": "k-1" }
      })
      expect(paid.status).toBe(503)
      expect(paid.headers.get("retry-after")).toBe("1")
      expect(paid.headers.get("x-credits-charged")).toBe("0")
      expect(paid.headers.get("cache-control")).toBe("no-store")
      expect(paid.headers.get("connection")).toBe("close")
      const refusal = Schema.decodeUnknownSync(ErrorBody)(JSON.parse(paid.body))
      expect(refusal.error.code).toBe("source_unavailable")
      expect(refusal.error.retryable).toBe(true)
      expect(refusal.error.message).toContain(steps[0])
      expect(refusal.error.message).toContain("nothing was executed or charged")

      // MCP and the docs page get the same refusal; a body sent along is not waited for.
      const mcp = yield* ask(early.port, "/api/mcp", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
      })
      expect(mcp.status).toBe(503)
      expect((yield* ask(early.port, "/")).status).toBe(503)
      const head = yield* ask(early.port, "/api/v1/docs", { method: "HEAD" })
      expect([head.status, head.body]).toEqual([503, ""])

      // The transport takes the socket over: the same port, its answers.
      const real = http.createServer((_req, res) => res.end("served"))
      yield* Effect.callback<void>((resume) => {
        real.listen({ handle: early.handOver() } as unknown as { readonly port: number }, () => resume(Effect.void))
      })
      expect((real.address() as { readonly port: number }).port).toBe(early.port)
      expect((yield* ask(early.port, "/api/v1/price?id=crypto:bitcoin")).body).toBe("served")
      // The early listener's end leaves the socket to the server that took it.
      yield* Scope.close(scope, Exit.void)
      expect((yield* ask(early.port, "/healthz")).body).toBe("served")
      yield* Effect.callback<void>((resume) => {
        real.close(() => resume(Effect.void))
      })
    })
  )

  it.effect("closes its port when the start ends before handing it over", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const early = yield* listenEarly("127.0.0.1", 0, 511, () => []).pipe(Scope.provide(scope))
      expect(JSON.parse((yield* ask(early.port, "/readyz")).body).missing).toEqual([
        "the service is starting: opening the service"
      ])
      yield* Scope.close(scope, Exit.void)
      const refused = yield* Effect.promise(() =>
        fetch(`http://127.0.0.1:${early.port}/healthz`).then(
          () => "answered",
          (e: unknown) => String((e as { readonly cause?: { readonly code?: string } }).cause?.code)
        )
      )
      expect(refused).toBe("ECONNREFUSED")
    })
  )

  it.effect("fails with Node's error when the port is taken", () =>
    Effect.gen(function* () {
      const taken = yield* listenEarly("127.0.0.1", 0, 511, () => [])
      const again = yield* Effect.exit(listenEarly("127.0.0.1", taken.port, 511, () => []))
      expect(Exit.isFailure(again)).toBe(true)
      expect(String(Exit.isFailure(again) ? again.cause : "")).toContain("EADDRINUSE")
    }).pipe(Effect.scoped)
  )
})
