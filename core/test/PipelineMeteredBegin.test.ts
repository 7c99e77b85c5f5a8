/**
 * The pipeline's idempotent path with `IdempotencyStore.beginMetered` (one round trip on PostgreSQL): a paid
 * request with a valid Idempotency-Key spends its rate unit and begins under its key in one store call, and
 * every answer and its order are what the two calls (`RateLimiter.consume`, then `IdempotencyStore.begin`)
 * give. The same scenarios run on the memory stores as they are (no `beginMetered`: the two calls) and on
 * the same stores given a `beginMetered`, which counts its calls; the answers must agree and, with it, a
 * replay must make exactly one store call.
 */
import { assert, describe, it } from "@effect/vitest"
import { memoryStores } from "@market-data/memory"
import { Clock, Context, Effect, Fiber, Layer } from "effect"
import * as Digest from "effect/crypto/Digest"
import * as SecureRandom from "effect/crypto/SecureRandom"
import { TestClock } from "effect/testing"
import { createKey } from "../src/Admin.ts"
import { IdempotencyStore, meteredBegin } from "../src/Idempotency.ts"
import { Ledger } from "../src/Ledger.ts"
import { type Answer, type ApiRequest, Handlers, handle, Settings, statusOf } from "../src/Pipeline.ts"
import { RateLimiter } from "../src/RateLimit.ts"
import { makeTestPlane } from "./support/TestPlane.ts"

interface Calls {
  consume: number
  begin: number
  beginMetered: number
}

const setup = (native: boolean, rateLimitPerMinute: number, credits = 100) =>
  Effect.gen(function* () {
    const plane = yield* makeTestPlane()
    const built = yield* Layer.build(
      Layer.mergeAll(
        memoryStores(),
        Layer.succeed(Settings)({ rateLimitPerMinute }),
        Digest.layerWebCrypto,
        SecureRandom.layerWebCrypto,
        Layer.succeed(Handlers)(plane.handlers)
      )
    )
    const calls: Calls = { consume: 0, begin: 0, beginMetered: 0 }
    const counting = <A>(name: keyof Calls, effect: () => Effect.Effect<A>): Effect.Effect<A> =>
      Effect.suspend(() => {
        calls[name]++
        return effect()
      })
    const rl = Context.get(built, RateLimiter)
    const store = Context.get(built, IdempotencyStore)
    assert.isUndefined(store.beginMetered)
    const limiter: RateLimiter["Service"] = {
      ...rl,
      consume: (...args) => counting("consume", () => rl.consume(...args))
    }
    const idempotency: IdempotencyStore["Service"] = {
      ...store,
      begin: (...args) => counting("begin", () => store.begin(...args)),
      ...(native
        ? {
            beginMetered: (keyId, key, fingerprint, nowMs, meter) =>
              counting("beginMetered", () => meteredBegin(store, rl, keyId, key, fingerprint, nowMs, meter))
          }
        : {})
    }
    const ctx = built.pipe(Context.add(RateLimiter, limiter), Context.add(IdempotencyStore, idempotency))
    const key = yield* createKey({ credits }).pipe(Effect.provide(ctx))
    const call = (query: string, more: Partial<Omit<ApiRequest, "operation" | "params">> = {}, operation = "price") =>
      handle({
        operation,
        authorization: [`Bearer ${key.key}`],
        client: "test",
        ...more,
        params: query
          .split("&")
          .filter((p) => p !== "")
          .map((p) => [p.slice(0, p.indexOf("=")), p.slice(p.indexOf("=") + 1)] as const)
      }).pipe(Effect.provide(ctx))
    const ledger = Context.get(ctx, Ledger)
    const balance = Effect.flatMap(Clock.currentTimeMillis, (ms) => ledger.balance(key.record.id, ms))
    const reset = () => {
      calls.consume = 0
      calls.begin = 0
      calls.beginMetered = 0
    }
    return { plane, call, calls, reset, balance }
  })

const code = (a: Answer) => (a.outcome._tag === "Failure" ? a.outcome.error.code : a.outcome._tag)
const body = (a: Answer) =>
  a.outcome._tag === "Json" ? a.outcome.body : a.outcome._tag === "Replay" ? a.outcome.answer.body : undefined

for (const native of [false, true]) {
  const name = native ? "with beginMetered (one store call)" : "without it (consume, then begin)"
  // The store calls the rate unit and the begin cost: `admitted` and `refused` requests took the combined step,
  // `alone` spent their unit without beginning.
  const expectCalls = (calls: Calls, admitted: number, refused: number, alone: number) =>
    assert.deepStrictEqual(
      calls,
      native
        ? { consume: alone, begin: 0, beginMetered: admitted + refused }
        : { consume: admitted + refused + alone, begin: admitted, beginMetered: 0 }
    )

  describe(`idempotent paid requests ${name}`, () => {
    it.effect("a replay spends its unit and answers the stored body in one step; nothing executes or is charged", () =>
      Effect.gen(function* () {
        const t = yield* setup(native, 60)
        const first = yield* t.call("id=crypto:bitcoin", { idempotencyKey: ["r"] })
        assert.strictEqual(code(first), "Json")
        assert.strictEqual(first.rate?.remaining, 59)
        expectCalls(t.calls, 1, 0, 0)
        t.reset()
        yield* TestClock.adjust("2 seconds")
        const replay = yield* t.call("id=crypto:bitcoin", { idempotencyKey: ["r"] })
        assert.strictEqual(code(replay), "Replay")
        assert.strictEqual(body(replay), body(first))
        assert.strictEqual(replay.rate?.remaining, 58)
        assert.isTrue(replay.rate?.allowed)
        expectCalls(t.calls, 1, 0, 0)
        assert.strictEqual(yield* t.plane.executions, 1)
        assert.strictEqual(yield* t.balance, 99)
      }).pipe(Effect.scoped)
    )

    it.effect("over the limit a replay, a conflict and a fresh key are all 429 first, and begin nothing", () =>
      Effect.gen(function* () {
        const t = yield* setup(native, 3)
        yield* t.call("id=crypto:bitcoin", { idempotencyKey: ["a"] })
        yield* t.call("id=crypto:bitcoin", { idempotencyKey: ["a"] })
        const conflict = yield* t.call("id=crypto:ethereum", { idempotencyKey: ["a"] })
        assert.strictEqual(code(conflict), "idempotency_conflict")
        assert.strictEqual(conflict.rate?.remaining, 0)
        t.reset()
        for (const [query, idem] of [
          ["id=crypto:bitcoin", "a"],
          ["id=crypto:ethereum", "a"],
          ["id=crypto:bitcoin", "fresh"],
          // a 429 comes before a parameter error too
          ["id=crypto:", "a"]
        ] as const) {
          const over = yield* t.call(query, { idempotencyKey: [idem] })
          assert.strictEqual(code(over), "rate_limited")
          assert.strictEqual(statusOf(over.outcome), 429)
          assert.strictEqual(over.outcome._tag === "Failure" && over.outcome.error.retryAfterSeconds, 61)
          assert.isFalse(over.rate?.allowed)
        }
        // The bad parameter does not reach the combined step: its unit is spent alone.
        expectCalls(t.calls, 0, 3, 1)
        yield* TestClock.adjust("61 seconds")
        // "fresh" was never begun: it starts now.
        const fresh = yield* t.call("id=crypto:bitcoin", { idempotencyKey: ["fresh"] })
        assert.strictEqual(code(fresh), "Json")
        assert.strictEqual(yield* t.plane.executions, 2)
        assert.strictEqual(yield* t.balance, 98)
      }).pipe(Effect.scoped)
    )

    it.effect("a bad parameter or a bad Idempotency-Key spends the unit and answers 400 without beginning", () =>
      Effect.gen(function* () {
        const t = yield* setup(native, 60)
        const badParam = yield* t.call("id=crypto:", { idempotencyKey: ["p"] })
        assert.strictEqual(statusOf(badParam.outcome), 400)
        const badKey = yield* t.call("id=crypto:bitcoin", { idempotencyKey: [" p"] })
        assert.strictEqual(code(badKey), "invalid_idempotency_key")
        assert.strictEqual(badKey.rate?.remaining, 58)
        expectCalls(t.calls, 0, 0, 2)
        // Neither took the key.
        assert.strictEqual(code(yield* t.call("id=crypto:ethereum", { idempotencyKey: ["p"] })), "Json")
      }).pipe(Effect.scoped)
    )

    it.effect("in progress and conflict answer as before; a started request holds, executes and settles", () =>
      Effect.gen(function* () {
        const t = yield* setup(native, 60, 10)
        const slow = yield* t.call("id=crypto:slow", { idempotencyKey: ["s"] }).pipe(Effect.forkChild)
        while ((yield* t.plane.executions) < 1) yield* Effect.yieldNow
        const inProgress = yield* t.call("id=crypto:slow", { idempotencyKey: ["s"] })
        assert.strictEqual(code(inProgress), "request_in_progress")
        assert.strictEqual(code(yield* t.call("id=crypto:bitcoin", { idempotencyKey: ["s"] })), "idempotency_conflict")
        // The hold is live while it runs.
        assert.strictEqual(yield* t.balance, 9)
        yield* t.plane.release
        assert.strictEqual(code(yield* Fiber.join(slow)), "Json")
        assert.strictEqual(yield* t.balance, 9)
        // Not a paid operation (the test plane has no handler for it): no idempotency, just the unit.
        t.reset()
        assert.strictEqual(code(yield* t.call("", { idempotencyKey: ["u"] }, "usage")), "not_implemented")
        expectCalls(t.calls, 0, 0, 1)
      }).pipe(Effect.scoped)
    )
  })
}
