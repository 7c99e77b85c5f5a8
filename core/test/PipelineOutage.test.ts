/**
 * A store outage under a paid request with an Idempotency-Key: the request's own releases (its credit hold, its
 * idempotency record) cannot reach the store either. The money store's decorator (`releaseAfterOutage`) keeps
 * them and makes them before the key's next request and in the background once the store is back, so the retry
 * of the same key runs at once, here or on another instance (not `409 request_in_progress` for the 60 s lease),
 * and money stays exact: charged once, or, when the settlement did commit before the store failed, replayed and
 * not charged again.
 * Memory stores wrapped so that every call fails (`StoreUnavailable`) while `down`; the same scenarios run on
 * server PostgreSQL with a real outage in `adapters/postgres/test/ReleaseAfterOutage.test.ts`.
 */
import { assert, describe, it } from "@effect/vitest"
import { memoryStores } from "@market-data/memory"
import { Clock, Context, Deferred, Effect, Fiber, Layer } from "effect"
import * as Digest from "effect/crypto/Digest"
import * as SecureRandom from "effect/crypto/SecureRandom"
import { TestClock } from "effect/testing"
import { createKey } from "../src/Admin.ts"
import { apiError, StoreUnavailable } from "../src/Errors.ts"
import { HOLD_LEASE_MS, IDEMPOTENCY_LEASE_MS } from "../src/Money.ts"
import { AdmissionUnconfirmed, MoneyStore } from "../src/MoneyStore.ts"
import { type Answer, type Handler, Handlers, handle, Settings, statusOf } from "../src/Pipeline.ts"
import { RELEASE_RETRY_MS, releaseAfterOutage } from "../src/ReleaseAfterOutage.ts"

type Mode = "fail" | "serve" | "lose-settle-ack"

const setup = Effect.gen(function* () {
  const state = { down: false, mode: "serve" as Mode, runs: 0, waiting: 0, releasesHeld: 0 }
  // When set, a handler waits for it to open (so several requests of a key are in flight at once).
  let gate: Deferred.Deferred<void> | undefined
  const price: Handler = () =>
    Effect.suspend(() => {
      state.runs++
      if (gate !== undefined) {
        const open = gate
        state.waiting++
        return Effect.andThen(Deferred.await(open), () => {
          state.waiting--
          if (state.mode !== "fail")
            return Effect.succeed({ _tag: "Json" as const, body: { data: { usd: 1 } }, creditsCharged: 1 })
          state.down = true
          return Effect.fail(apiError("source_unavailable", "upstream down", { retryAfterSeconds: 1 }))
        })
      }
      if (state.mode === "fail") {
        // The database goes away while the request runs; the handler's own source fails transiently.
        state.down = true
        return Effect.fail(apiError("source_unavailable", "upstream down", { retryAfterSeconds: 1 }))
      }
      if (state.mode === "lose-settle-ack") state.mode = "serve"
      return Effect.succeed({ _tag: "Json" as const, body: { data: { usd: 1 } }, creditsCharged: 1 })
    })
  const built = yield* Layer.build(
    Layer.mergeAll(
      memoryStores(),
      Layer.succeed(Settings)({ rateLimitPerMinute: 1_000 }),
      Digest.layerWebCrypto,
      SecureRandom.layerWebCrypto,
      Layer.succeed(Handlers)(new Map([["price", price]]))
    )
  )
  // Every store call takes a turn of the scheduler first, as a round trip to a real store would: requests of one
  // key interleave there.
  const guard = <A>(operation: string, effect: () => Effect.Effect<A>): Effect.Effect<A> =>
    Effect.andThen(Effect.yieldNow, () =>
      state.down ? Effect.die(new StoreUnavailable({ operation, cause: new Error("connection refused") })) : effect()
    )
  const money = Context.get(built, MoneyStore)
  let loseNextSettleAck = false
  let loseNextAdmitAck = false
  // When set, a release waits for it to open before reaching the store (`state.releasesHeld` count the waiting).
  let releaseGate: Deferred.Deferred<void> | undefined
  const releaseHeld = (end: { readonly _tag: string }): Effect.Effect<void> => {
    const g = releaseGate
    if (g === undefined || end._tag !== "Release") return Effect.void
    return Effect.suspend(() => {
      state.releasesHeld++
      return Deferred.await(g).pipe(Effect.ensuring(Effect.sync(() => state.releasesHeld--)))
    })
  }
  const failing: MoneyStore["Service"] = {
    ...money,
    admit: (a) =>
      guard("money.admit", () =>
        Effect.flatMap(money.admit(a), (r) => {
          if (!loseNextAdmitAck || r._tag !== "Admitted") return Effect.succeed(r)
          // The admission committed, then the connection dropped before its answer came back: the store says
          // which ticket it may have made, as the PostgreSQL store does.
          loseNextAdmitAck = false
          state.down = true
          return Effect.die(
            new AdmissionUnconfirmed({ operation: "money.admit", cause: new Error("reset"), admitted: r.ticket })
          )
        })
      ),
    finish: (ticket, end, nowMs) =>
      guard("money.finish", () =>
        Effect.flatMap(releaseHeld(end), () =>
          Effect.flatMap(money.finish(ticket, end, nowMs), (r) => {
            if (!loseNextSettleAck || end._tag !== "Settle") return Effect.succeed(r)
            // The settlement committed, then the connection dropped before its answer came back.
            loseNextSettleAck = false
            state.down = true
            return Effect.die(new StoreUnavailable({ operation: "money.finish", cause: new Error("reset") }))
          })
        )
      ),
    charge: (c) => guard("money.charge", () => money.charge(c)),
    balance: (...a) => guard("money.balance", () => money.balance(...a))
  }
  // Two instances of the service on one store: each its own decorator, as two processes on one database.
  const decorated = yield* releaseAfterOutage(failing)
  const elsewhere = yield* releaseAfterOutage(failing)
  const ctx = built.pipe(Context.add(MoneyStore, decorated))
  const ctxElsewhere = built.pipe(Context.add(MoneyStore, elsewhere))
  const key = yield* createKey({ credits: 10 }).pipe(Effect.provide(ctx))
  const other = yield* createKey({ credits: 10 }).pipe(Effect.provide(ctx))
  const callAs =
    (bearer: string, on = ctx) =>
    (idem: string) =>
      handle({
        operation: "price",
        params: [["id", "crypto:bitcoin"]],
        authorization: [`Bearer ${bearer}`],
        idempotencyKey: [idem],
        client: "test"
      }).pipe(Effect.provide(on))
  const call = callAs(key.key)
  const balance = Effect.flatMap(Clock.currentTimeMillis, (ms) => money.balance(key.record.id, ms))
  const pending = () => decorated.pendingReleases(key.record.id)
  return {
    state,
    call,
    /** The same key's request on another instance of the service. */
    callElsewhere: callAs(key.key, ctxElsewhere),
    /** A paid request of another key on the same store. */
    callOther: callAs(other.key),
    balance,
    pending,
    gate: (g: Deferred.Deferred<void> | undefined) => {
      gate = g
    },
    holdReleases: (g: Deferred.Deferred<void> | undefined) => {
      releaseGate = g
    },
    loseSettleAck: () => {
      loseNextSettleAck = true
    },
    loseAdmitAck: () => {
      loseNextAdmitAck = true
    }
  }
})

const code = (a: Answer) => (a.outcome._tag === "Failure" ? a.outcome.error.code : a.outcome._tag)

describe("after a store outage, a retried idempotent request is not left in flight", () => {
  it.effect("the release that could not reach the store is made before the retry: it runs at once, charged once", () =>
    Effect.gen(function* () {
      const t = yield* setup
      t.state.mode = "fail"
      const cut = yield* t.call("k-1")
      // The handler failed transiently, and releasing its hold and record met the store down: 503.
      assert.strictEqual(code(cut), "source_unavailable")
      assert.strictEqual(statusOf(cut.outcome), 503)
      assert.strictEqual(t.pending(), 1)
      // The store is back; the client retries the same key.
      t.state.down = false
      t.state.mode = "serve"
      const retry = yield* t.call("k-1")
      assert.strictEqual(code(retry), "Json")
      assert.strictEqual(t.pending(), 0)
      assert.strictEqual(yield* t.balance, 9)
      const replay = yield* t.call("k-1")
      assert.strictEqual(code(replay), "Replay")
      assert.strictEqual(yield* t.balance, 9)
      assert.strictEqual(t.state.runs, 2)
    })
  )

  it.effect("while the store is still down the retry fails on it too and the release keeps waiting", () =>
    Effect.gen(function* () {
      const t = yield* setup
      t.state.mode = "fail"
      yield* t.call("k-2")
      t.state.mode = "serve"
      const stillDown = yield* t.call("k-2")
      assert.strictEqual(code(stillDown), "source_unavailable")
      assert.strictEqual(t.pending(), 1)
      t.state.down = false
      assert.strictEqual(code(yield* t.call("k-2")), "Json")
      assert.strictEqual(yield* t.balance, 9)
    })
  )

  it.effect("a settlement that committed before the store failed replays on the retry: never charged twice", () =>
    Effect.gen(function* () {
      const t = yield* setup
      t.loseSettleAck()
      const lost = yield* t.call("k-3")
      assert.strictEqual(code(lost), "source_unavailable")
      assert.strictEqual(t.pending(), 1)
      t.state.down = false
      // The late release frees neither the settled hold nor the stored record.
      const retry = yield* t.call("k-3")
      assert.strictEqual(code(retry), "Replay")
      assert.strictEqual(yield* t.balance, 9)
      assert.strictEqual(t.state.runs, 1)
      assert.strictEqual(t.pending(), 0)
    })
  )

  it.effect("several requests of a key cut by an outage, retried all at once: each runs once, none 409", () =>
    Effect.gen(function* () {
      const t = yield* setup
      const N = 5
      const idems = Array.from({ length: N }, (_, i) => `k-many-${i}`)
      const all = () => Effect.all(idems.map(t.call), { concurrency: "unbounded" })
      const codes = (answers: ReadonlyArray<Answer>) => answers.map(code)
      const each = (c: string) => Array.from({ length: N }, () => c)
      // N requests of the key are admitted and wait in their handler; the store goes down under all of them.
      const open = yield* Deferred.make<void>()
      t.gate(open)
      t.state.mode = "fail"
      const cut = yield* Effect.forkChild(all())
      while (t.state.waiting < N) yield* Effect.yieldNow
      yield* Deferred.succeed(open, undefined)
      assert.deepStrictEqual(codes(yield* Fiber.join(cut)), each("source_unavailable"))
      assert.strictEqual(t.pending(), N)
      // Retried all at once while the store is still down: each fails on it, and every release keeps waiting.
      t.gate(undefined)
      t.state.mode = "serve"
      assert.deepStrictEqual(codes(yield* all()), each("source_unavailable"))
      assert.strictEqual(t.pending(), N)
      assert.strictEqual(t.state.runs, N)
      // The store is back; the clients retry all at once. The first retry makes the pending releases and the
      // others wait for it rather than finding their record still in flight.
      t.state.down = false
      assert.deepStrictEqual(codes(yield* all()), each("Json"))
      assert.strictEqual(t.pending(), 0)
      assert.strictEqual(yield* t.balance, 10 - N)
      assert.strictEqual(t.state.runs, 2 * N)
      assert.deepStrictEqual(codes(yield* all()), each("Replay"))
      assert.strictEqual(yield* t.balance, 10 - N)
      assert.strictEqual(t.state.runs, 2 * N)
    })
  )

  it.effect("the request making the key's releases goes away: a request waiting for it makes them and runs", () =>
    Effect.gen(function* () {
      const t = yield* setup
      // Two requests of the key cut by the outage.
      const open = yield* Deferred.make<void>()
      t.gate(open)
      t.state.mode = "fail"
      const cut = yield* Effect.forkChild(Effect.all([t.call("k-gone-0"), t.call("k-gone-1")], { concurrency: 2 }))
      while (t.state.waiting < 2) yield* Effect.yieldNow
      yield* Deferred.succeed(open, undefined)
      assert.deepStrictEqual((yield* Fiber.join(cut)).map(code), ["source_unavailable", "source_unavailable"])
      assert.strictEqual(t.pending(), 2)
      t.gate(undefined)
      t.state.mode = "serve"
      t.state.down = false
      // The first retry starts making the releases and is held at the store; the second waits for it.
      const held = yield* Deferred.make<void>()
      t.holdReleases(held)
      const first = yield* Effect.forkChild(t.call("k-gone-0"))
      while (t.state.releasesHeld < 1) yield* Effect.yieldNow
      const second = yield* Effect.forkChild(t.call("k-gone-1"))
      for (let i = 0; i < 10; i++) yield* Effect.yieldNow
      // Still waiting (it does not go on to find its record in flight).
      assert.strictEqual(second.pollUnsafe(), undefined)
      assert.strictEqual(t.state.runs, 2)
      // The first client goes away: its releases are not made, and the waiting request makes them itself.
      yield* Fiber.interrupt(first)
      t.holdReleases(undefined)
      yield* Deferred.succeed(held, undefined)
      assert.strictEqual(code(yield* Fiber.join(second)), "Json")
      assert.strictEqual(t.pending(), 0)
      assert.strictEqual(code(yield* t.call("k-gone-0")), "Json")
      assert.strictEqual(yield* t.balance, 8)
      assert.strictEqual(t.state.runs, 4)
    })
  )

  it.effect("a key that never comes back: its pending release is swept once the leases it would free have ended", () =>
    Effect.gen(function* () {
      const t = yield* setup
      t.state.mode = "fail"
      assert.strictEqual(code(yield* t.call("k-away")), "source_unavailable")
      assert.strictEqual(t.pending(), 1)
      t.state.down = false
      t.state.mode = "serve"
      // Another key's request while the leases run leaves the release waiting for its key.
      assert.strictEqual(code(yield* t.callOther("o-1")), "Json")
      assert.strictEqual(t.pending(), 1)
      // Past both leases (the hold's and the idempotency record's) the next paid request on the store sweeps it.
      yield* TestClock.adjust(HOLD_LEASE_MS + IDEMPOTENCY_LEASE_MS + 1)
      assert.strictEqual(code(yield* t.callOther("o-2")), "Json")
      assert.strictEqual(t.pending(), 0)
      // The key comes back after all: its lease has ended, so its retry takes the record over and runs once.
      assert.strictEqual(code(yield* t.call("k-away")), "Json")
      assert.strictEqual(yield* t.balance, 9)
      assert.strictEqual(code(yield* t.call("k-away")), "Replay")
    })
  )

  it.effect("an admission that committed before the store was lost is released when it is back: the retry runs", () =>
    Effect.gen(function* () {
      const t = yield* setup
      t.loseAdmitAck()
      const cut = yield* t.call("k-admit")
      assert.strictEqual(code(cut), "source_unavailable")
      assert.strictEqual(t.pending(), 1)
      // The hold the admission made is kept from the balance until it is released.
      t.state.down = false
      assert.strictEqual(yield* t.balance, 9)
      const retry = yield* t.call("k-admit")
      assert.strictEqual(code(retry), "Json")
      assert.strictEqual(t.pending(), 0)
      assert.strictEqual(yield* t.balance, 9)
      assert.strictEqual(code(yield* t.call("k-admit")), "Replay")
      assert.strictEqual(t.state.runs, 1)
    })
  )

  it.effect("the instance that made the hold releases it in the background: a retry on another instance runs", () =>
    Effect.gen(function* () {
      const t = yield* setup
      t.state.mode = "fail"
      assert.strictEqual(code(yield* t.call("k-elsewhere")), "source_unavailable")
      t.state.mode = "serve"
      assert.strictEqual(t.pending(), 1)
      // Still down at the first background try: the release stays kept.
      yield* TestClock.adjust(RELEASE_RETRY_MS)
      assert.strictEqual(t.pending(), 1)
      // The store is back; before the next try, another instance meets the record in flight.
      t.state.down = false
      assert.strictEqual(code(yield* t.callElsewhere("k-elsewhere")), "request_in_progress")
      // The next background try releases it, with no request of the key on this instance.
      yield* TestClock.adjust(RELEASE_RETRY_MS)
      assert.strictEqual(t.pending(), 0)
      assert.strictEqual(yield* t.balance, 10)
      assert.strictEqual(code(yield* t.callElsewhere("k-elsewhere")), "Json")
      assert.strictEqual(yield* t.balance, 9)
      assert.strictEqual(code(yield* t.call("k-elsewhere")), "Replay")
      assert.strictEqual(yield* t.balance, 9)
      assert.strictEqual(t.state.runs, 2)
    })
  )
})
