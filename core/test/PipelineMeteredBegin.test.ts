/**
 * The pipeline's idempotent paid path over the money port: a paid request with a valid Idempotency-Key spends its
 * rate unit, begins under its key and holds in one store call (`MoneyStore.admit`), and ends in one
 * (`MoneyStore.finish`). The store calls are counted: a replay, a 429, a conflict and a request in progress are one
 * `admit` each and nothing else; a bad parameter or a bad Idempotency-Key spends its unit alone
 * (`RateLimiter.consume`) and begins nothing.
 */
import { assert, describe, it } from "@effect/vitest"
import { memoryStores } from "@market-data/memory"
import { Clock, Context, Effect, Fiber, Layer } from "effect"
import * as Digest from "effect/crypto/Digest"
import * as SecureRandom from "effect/crypto/SecureRandom"
import { TestClock } from "effect/testing"
import { createKey } from "../src/Admin.ts"
import { MoneyStore } from "../src/MoneyStore.ts"
import { type Answer, type ApiRequest, Handlers, handle, Settings, statusOf } from "../src/Pipeline.ts"
import { RateLimiter } from "../src/RateLimit.ts"
import { makeTestPlane } from "./support/TestPlane.ts"

interface Calls {
  consume: number
  admit: number
  finish: number
}

const setup = (rateLimitPerMinute: number, credits = 100) =>
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
    const calls: Calls = { consume: 0, admit: 0, finish: 0 }
    const counting = <A>(name: keyof Calls, effect: () => Effect.Effect<A>): Effect.Effect<A> =>
      Effect.suspend(() => {
        calls[name]++
        return effect()
      })
    const rl = Context.get(built, RateLimiter)
    const money = Context.get(built, MoneyStore)
    const limiter: RateLimiter["Service"] = {
      ...rl,
      consume: (...args) => counting("consume", () => rl.consume(...args))
    }
    const counted: MoneyStore["Service"] = {
      ...money,
      admit: (a) => counting("admit", () => money.admit(a)),
      finish: (...args) => counting("finish", () => money.finish(...args))
    }
    const ctx = built.pipe(Context.add(RateLimiter, limiter), Context.add(MoneyStore, counted))
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
    const balance = Effect.flatMap(Clock.currentTimeMillis, (ms) => money.balance(key.record.id, ms))
    const reset = () => {
      calls.consume = 0
      calls.admit = 0
      calls.finish = 0
    }
    return { plane, call, calls, reset, balance }
  })

const code = (a: Answer) => (a.outcome._tag === "Failure" ? a.outcome.error.code : a.outcome._tag)
const body = (a: Answer) =>
  a.outcome._tag === "Json" ? a.outcome.body : a.outcome._tag === "Replay" ? a.outcome.answer.body : undefined

{
  // The store calls: `admitted` requests took admit and finish, `refused` only admit, `alone` spent their unit alone.
  const expectCalls = (calls: Calls, admitted: number, refused: number, alone: number) =>
    assert.deepStrictEqual(calls, { consume: alone, admit: admitted + refused, finish: admitted })

  describe("idempotent paid requests on the money port", () => {
    it.effect("a replay spends its unit and answers the stored body in one admit; nothing executes or is charged", () =>
      Effect.gen(function* () {
        const t = yield* setup(60)
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
        expectCalls(t.calls, 0, 1, 0)
        assert.strictEqual(yield* t.plane.executions, 1)
        assert.strictEqual(yield* t.balance, 99)
      }).pipe(Effect.scoped)
    )

    it.effect("over the limit a replay, a conflict and a fresh key are all 429 first, and begin nothing", () =>
      Effect.gen(function* () {
        const t = yield* setup(3)
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
        const t = yield* setup(60)
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

    it.effect("in progress and conflict are one admit each; an admitted request holds, executes and finishes", () =>
      Effect.gen(function* () {
        const t = yield* setup(60, 10)
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
