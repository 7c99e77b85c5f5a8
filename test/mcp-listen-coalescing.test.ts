/**
 * A slow listener is never given an unbounded buffer: the `subscriptions/listen` stream's body is pulled by hand
 * (as a client that stops reading would leave it), over a plane whose three assets change every 10 ms. While
 * nothing is pulled, the stream produces nothing ahead of the reader: the changes made meanwhile wait coalesced,
 * one per URI; once pulled again, each subscribed URI is announced.
 */
import { createKey, type PipelineServices } from "@market-data/core"
import { layerCore } from "@market-data/infra"
import { listen, listenStats } from "@market-data/mcp"
import { layerMemoryStores } from "@market-data/memory"
import { type Context, Effect, Exit, Layer, Scope } from "effect"
import type * as SecureRandom from "effect/crypto/SecureRandom"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { testConfig } from "./support/server.ts"
import { makeTickingPlane } from "./support/ticking-plane.ts"

const SLOT_MS = 10
const URIS = ["service://read/crypto:bitcoin", "service://read/crypto:ethereum", "service://read/crypto:solana"]

let scope: Scope.Closeable
let context: Context.Context<PipelineServices | SecureRandom.SecureRandom>
const run = <A>(effect: Effect.Effect<A, never, PipelineServices>) => Effect.runPromise(Effect.provide(effect, context))

beforeAll(async () => {
  scope = Effect.runSync(Scope.make())
  const plane = makeTickingPlane({ slotMs: SLOT_MS })
  context = await Effect.runPromise(
    Layer.buildWithScope(
      layerCore(testConfig({ rateLimitPerMinute: 10_000 }), layerMemoryStores, [plane.handlers]),
      scope
    )
  )
})
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

const decoder = new TextDecoder()

describe("a slow listener", () => {
  it("holds at most one pending notification per URI, and catches up when read", async () => {
    const { key } = await Effect.runPromise(
      Effect.provide(Effect.orDie(createKey({ credits: 1, rateLimitPerMinute: null })), context)
    )
    const answered = await run(
      listen(
        1,
        { notifications: { resourceSubscriptions: URIS } },
        {
          authorization: [`Bearer ${key}`],
          client: "127.0.0.1",
          forwardedFor: [],
          headers: {}
        }
      )
    )
    expect(answered._tag).toBe("Stream")
    if (answered._tag !== "Stream") return
    const body = answered.response.body
    if (body === undefined || typeof body === "string" || body instanceof Uint8Array) throw new Error("not a stream")
    // As the HTTP transport pumps it: opened with its head, each chunk pulled when the reader wants one.
    body.open()
    const next = async () => decoder.decode((await body.next()) as Uint8Array)
    try {
      const ack = JSON.parse((await next()).slice(6))
      expect(ack.method).toBe("notifications/subscriptions/acknowledged")
      const before = (await run(listenStats)).notificationsSent
      // Nothing is pulled for 1.5 s: each asset changes about 150 times meanwhile.
      const startMs = Date.now()
      await new Promise((r) => setTimeout(r, 1_500))
      const changes = Math.floor((Date.now() - startMs) / SLOT_MS) * URIS.length
      const produced = (await run(listenStats)).notificationsSent - before
      expect(changes).toBeGreaterThan(300)
      // Nothing is produced ahead of the reader: the changes wait, one entry per URI.
      expect(produced).toBeLessThanOrEqual(URIS.length)
      // Reading again: every subscribed URI is announced (the coalesced changes were not lost).
      const seen = new Set<string>()
      while (seen.size < URIS.length) {
        const chunk = await next()
        if (!chunk.startsWith("data: ")) continue
        const message = JSON.parse(chunk.slice(6))
        if (message.method === "notifications/resources/updated") seen.add(message.params.uri)
      }
      expect([...seen].sort()).toEqual([...URIS].sort())
    } finally {
      body.close()
    }
  })
})
