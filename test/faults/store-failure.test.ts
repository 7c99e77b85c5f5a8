/**
 * A store that fails inside an operation (the equity plane reading PostgreSQL, `usage` reading the ledger,
 * at the moment the database goes away) answers the typed, transient `503 source_unavailable` over HTTP and
 * MCP, never `500 internal_error`; nothing is charged, and an idempotency key it used is free again, so the
 * retry runs. The restart scenario hits this only when the database dies between a request's first store
 * call and its handler's; this makes it deterministic: the handler's store is down on every call.
 */
import { MoneyStore, StoreUnavailable } from "@market-data/core"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startServer, type TestServer } from "../support/server.ts"
import { httpCall, mcpCall } from "./calls.ts"

let storeDown = true
const failingStore = () =>
  storeDown
    ? Effect.die(new StoreUnavailable({ operation: "equity.read", cause: new Error("connection refused") }))
    : Effect.succeed({
        _tag: "Json" as const,
        body: { data: { asset_id: "crypto:bitcoin", usd: 1 } },
        creditsCharged: 1
      })

let server: TestServer
const balance = (keyId: string) =>
  server.run(
    Effect.gen(function* () {
      return yield* (yield* MoneyStore).balance(keyId, Date.now())
    })
  )
beforeAll(async () => {
  server = await startServer({ rateLimitPerMinute: 100_000 }, [
    new Map([
      ["price", failingStore],
      ["read", failingStore]
    ])
  ])
})
afterAll(() => server.close())

describe("a store failing inside an operation", () => {
  it("answers 503 source_unavailable (HTTP and MCP, with and without an Idempotency-Key), charges nothing, frees the key", async () => {
    storeDown = true
    const key = await server.newKey(10)
    const calls = [
      await httpCall(server.base, "price", "id=crypto:bitcoin", { key }),
      await httpCall(server.base, "price", "id=crypto:bitcoin", { key, idem: "store-down" }),
      await mcpCall(server.base, "read", { id: "crypto:bitcoin" }, { key }),
      await mcpCall(server.base, "read", { id: "crypto:bitcoin" }, { key, idem: "store-down-mcp" })
    ]
    for (const c of calls) {
      expect(c.code, `${c.transport} ${c.body}`).toBe("source_unavailable")
      expect(c.status).toBe(c.transport === "http" ? 503 : 200)
      expect(c.retryable).toBe(true)
      expect(c.charged).toBe(0)
    }
    expect(await balance(key.id)).toBe(10)

    // The store is back: the same idempotency key runs (it was released, not stored) and is charged once.
    storeDown = false
    const retry = await httpCall(server.base, "price", "id=crypto:bitcoin", { key, idem: "store-down" })
    expect(retry.status, retry.body).toBe(200)
    expect(retry.replayed).toBe(false)
    expect(await balance(key.id)).toBe(9)
  })
})
