/**
 * The request path's process-local memory belongs to the service instance that builds it (`layerRequestCaches`):
 * two instances in one process remember apart, and a context without it remembers nothing.
 */
import { assert, describe, it } from "@effect/vitest"
import { memoryStores } from "@market-data/memory"
import { Context, Effect, Layer } from "effect"
import * as Digest from "effect/crypto/Digest"
import { type Handler, Handlers, handle, type PipelineServices, Settings } from "../src/Pipeline.ts"
import { layerRequestCaches, RequestCaches } from "../src/RequestCaches.ts"

const docs: Handler = () => Effect.succeed({ _tag: "Markdown", section: "errors", markdown: "# Errors" })

const instance = (withCaches: boolean) =>
  Layer.build(
    Layer.mergeAll(
      memoryStores(),
      Layer.succeed(Settings)({ rateLimitPerMinute: 1_000 }),
      Digest.layerWebCrypto,
      Layer.succeed(Handlers)(new Map([["docs", docs]])),
      withCaches ? layerRequestCaches() : Layer.empty
    )
  )

const ask = (context: Context.Context<PipelineServices>) =>
  handle({ operation: "docs", params: [["section", "errors"]], authorization: [], client: "203.0.113.9" }).pipe(
    Effect.provide(context)
  )

describe("request caches", () => {
  it.effect("each service instance remembers in its own caches", () =>
    Effect.gen(function* () {
      const a = yield* instance(true)
      const b = yield* instance(true)
      const cachesA = Context.get(a, RequestCaches)
      const cachesB = Context.get(b, RequestCaches)
      assert.isDefined(cachesA)
      assert.notStrictEqual(cachesA, cachesB)
      const answer = yield* ask(a)
      assert.strictEqual(answer.outcome._tag, "Markdown")
      assert.strictEqual(cachesA?.decodedParams.size(), 1)
      assert.strictEqual(cachesB?.decodedParams.size(), 0)
    })
  )

  it.effect("a context without them answers the same and remembers nothing", () =>
    Effect.gen(function* () {
      const bare = yield* instance(false)
      assert.isUndefined(Context.get(bare, RequestCaches))
      assert.strictEqual((yield* ask(bare)).outcome._tag, "Markdown")
    })
  )
})
