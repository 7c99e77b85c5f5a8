/**
 * The crypto plane behind the whole request pipeline (keys, credits, holds, idempotency) on the in-memory
 * stores: what each crypto operation charges, that refusals are free, that `Cache-Control` follows
 * `next_update_at`, and that `resolve` and `coverage` see the plane's directory.
 */
import { assert, describe, it } from "@effect/vitest"
import { makeMemoryMarketStore, memoryStores } from "@market-data/memory"
import { Effect, Layer } from "effect"
import * as Digest from "effect/crypto/Digest"
import * as SecureRandom from "effect/crypto/SecureRandom"
import { TestClock } from "effect/testing"
import { createKey } from "../../src/Admin.ts"
import { cryptoAsset } from "../../src/crypto/Assets.ts"
import { makeCryptoPlane } from "../../src/crypto/CryptoPlane.ts"
import { MarketStore } from "../../src/crypto/Market.ts"
import { layerHandlers } from "../../src/Discovery.ts"
import { type Answer, handle, Settings } from "../../src/Pipeline.ts"
import { buildFixture, writeFixture } from "./support/MarketFixture.ts"

const H = 3_600_000
const END = Date.UTC(2026, 10, 20, 12, 0)
const NOW = END + 60_000
const IDS = ["crypto:bitcoin", "crypto:sui", "crypto:compound"]
const fixture = buildFixture(
  IDS.map((id) => cryptoAsset(id) as NonNullable<ReturnType<typeof cryptoAsset>>),
  END,
  40,
  9
)

const service = Effect.gen(function* () {
  yield* TestClock.setTime(NOW)
  const store = makeMemoryMarketStore()
  yield* writeFixture(store, fixture, END)
  const plane = yield* makeCryptoPlane.pipe(Effect.provideService(MarketStore, store))
  const base = Layer.mergeAll(
    memoryStores(),
    Layer.succeed(Settings)({ rateLimitPerMinute: 100_000 }),
    Digest.layerWebCrypto,
    SecureRandom.layerWebCrypto
  )
  const ctx = yield* Layer.build(layerHandlers([], [plane]).pipe(Layer.provideMerge(base)))
  const key = yield* createKey({ credits: 1000 }).pipe(Effect.provide(ctx))
  const call = (operation: string, params: ReadonlyArray<readonly [string, string]>) =>
    handle({ operation, params, authorization: [`Bearer ${key.key}`], client: "test" }).pipe(Effect.provide(ctx))
  return { call }
})

const charged = (a: Answer): number =>
  a.outcome._tag === "Json" || a.outcome._tag === "Failure" ? a.outcome.creditsCharged : Number.NaN
const code = (a: Answer) => (a.outcome._tag === "Failure" ? a.outcome.error.code : undefined)
const body = (a: Answer): any => {
  if (a.outcome._tag !== "Json") assert.fail(`not JSON: ${a.outcome._tag} ${code(a)}`)
  return JSON.parse((a.outcome as { body: string }).body)
}

describe("crypto operations through the pipeline", () => {
  it.effect("charge per delivered asset at the registry's prices; refusals are free", () =>
    Effect.gen(function* () {
      const { call } = yield* service
      assert.strictEqual(charged(yield* call("price", [["id", "crypto:bitcoin"]])), 1)
      assert.strictEqual(charged(yield* call("funding", [["id", "crypto:bitcoin"]])), 3)
      const batch = yield* call("funding", [["ids", "crypto:bitcoin,crypto:compound,crypto:sui"]])
      assert.strictEqual(charged(batch), 6)
      assert.deepStrictEqual(body(batch).refused, [{ id: "crypto:compound", reason: "not_covered" }])
      const refused = yield* call("funding", [["id", "crypto:compound"]])
      assert.strictEqual(code(refused), "not_covered")
      assert.strictEqual(charged(refused), 0)
      assert.strictEqual(code(yield* call("read", [["id", "crypto:nope"]])), "unknown_asset")
    })
  )

  it.effect("series costs one per call, rank one per returned row", () =>
    Effect.gen(function* () {
      const { call } = yield* service
      assert.strictEqual(
        charged(
          yield* call("series", [
            ["id", "crypto:bitcoin"],
            ["limit", "500"]
          ])
        ),
        1
      )
      const rank = yield* call("rank", [["limit", "50"]])
      assert.strictEqual(body(rank).data.rows.length, 2)
      assert.strictEqual(charged(rank), 2)
    })
  )

  it.effect("Cache-Control follows next_update_at: a 4 h technicals answer is good until its bar closes", () =>
    Effect.gen(function* () {
      const { call } = yield* service
      const t = yield* call("technicals", [["id", "crypto:bitcoin"]])
      assert.strictEqual(t.outcome._tag, "Json")
      assert.strictEqual((t.outcome as { maxAgeSeconds?: number }).maxAgeSeconds, (4 * H - 60_000) / 1000)
      assert.strictEqual(body(t).data.next_update_at, new Date(END + 4 * H).toISOString())
    })
  )

  it.effect("resolve and coverage see the plane's directory with liveness", () =>
    Effect.gen(function* () {
      const { call } = yield* service
      const cov = body(yield* call("coverage", [["id", "crypto:bitcoin"]]))
      assert.strictEqual(cov.data.tier, "core")
      assert.isTrue(cov.data.alive)
      const dead = body(yield* call("coverage", [["id", "crypto:ethereum"]]))
      assert.isFalse(dead.data.alive)
      const r = body(yield* call("resolve", [["q", "BTC"]]))
      assert.strictEqual(r.data.best?.asset_id, "crypto:bitcoin")
    })
  )
})
