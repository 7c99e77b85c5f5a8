/**
 * Model-based property test of the money path: ledger + idempotency through the real pipeline (`handle`)
 * over the in-memory stores, on the TestClock, against a small reference model of the contract's state
 * table (CONTRACT "States and transitions", DECISIONS "Idempotency" and "Billing").
 *
 * fast-check generates programs: paid requests (delivered, refused in a batch, unknown asset, transient
 * failure) with or without an idempotency key from a small pool (so duplicates and different requests under
 * one key are frequent), repeats, bursts of identical concurrent requests (duplicates in flight under one
 * key, or a race for the balance without one), top-ups, crashes (a request left in flight holding credits and
 * its idempotency record, as if its process died), interruptions of such requests, and TestClock jumps around
 * the 60 s lease and the 24 h replay window (+-1 s). After every step the service must agree with the model:
 *
 * - each answer's status, error code and charge are the model's;
 * - an idempotency key executes at most once per 24 h window unless released (transient failure, 402,
 *   interruption, lease expiry, window end): a replay, conflict or in-progress answer executes nothing;
 * - every settled charge is one ledger entry, once; replays charge nothing new and report the original charge;
 * - replays are byte-identical to the stored answer;
 * - balance = grants - settled charges - live holds, and never below zero.
 *
 * The stores are driven through the money port (`MoneyStore`: admit, finish, charge) as the pipeline calls it.
 *
 * Not modelled: a request that is slow rather than dead and completes after its 60 s lease, once a retry under
 * the same key has taken the record over (`finish` answers it `Superseded`; store contract tests cover it).
 * The "catches a broken store" tests show the property can fail.
 */
import { expect } from "@effect/vitest"
import { Context, Effect, Fiber, Layer } from "effect"
import * as Digest from "effect/crypto/Digest"
import * as SecureRandom from "effect/crypto/SecureRandom"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import { createKey } from "../../src/Admin.ts"
import { HOLD_LEASE_MS, IDEMPOTENCY_LEASE_MS, REPLAY_WINDOW_MS } from "../../src/Money.ts"
import { MoneyStore } from "../../src/MoneyStore.ts"
import { type Answer, Handlers, handle, Settings, type StorePorts, statusOf } from "../../src/Pipeline.ts"
import { makeTestPlane } from "../support/TestPlane.ts"

export const SECOND = 1000
export const DAY = REPLAY_WINDOW_MS

// ---------------------------------------------------------------------------------------------------------------
// The requests a program can make, with what the contract says they cost and answer
// ---------------------------------------------------------------------------------------------------------------

type Natural =
  | { readonly status: 200; readonly charge: number }
  | { readonly status: 404; readonly code: "unknown_asset" }
  | { readonly status: 503; readonly code: "source_unavailable" }

interface PaidRequest {
  readonly op: string
  readonly query: string
  /** Credits held before it runs: the price of every requested asset. */
  readonly hold: number
  /** What it answers when it runs. */
  readonly natural: Natural
  /** Assets the plane computes when it runs (a batch stops at its first failing asset). */
  readonly computes: number
}

const REQUESTS: ReadonlyArray<PaidRequest> = [
  { op: "price", query: "id=crypto:bitcoin", hold: 1, natural: { status: 200, charge: 1 }, computes: 1 },
  { op: "price", query: "id=crypto:ethereum", hold: 1, natural: { status: 200, charge: 1 }, computes: 1 },
  { op: "read", query: "id=eq:320193:AAPL", hold: 5, natural: { status: 200, charge: 5 }, computes: 1 },
  { op: "funding", query: "id=crypto:solana", hold: 3, natural: { status: 200, charge: 3 }, computes: 1 },
  // A batch with one unknown asset: holds both, charges the delivered one.
  {
    op: "funding",
    query: "ids=crypto:bitcoin,crypto:nope",
    hold: 6,
    natural: { status: 200, charge: 3 },
    computes: 2
  },
  // A single unknown asset: an error answer, uncharged, and (not transient) stored under its key.
  { op: "price", query: "id=crypto:nope", hold: 1, natural: { status: 404, code: "unknown_asset" }, computes: 1 },
  // A transient failure: the hold and the idempotency record are released.
  {
    op: "price",
    query: "id=crypto:flaky",
    hold: 1,
    natural: { status: 503, code: "source_unavailable" },
    computes: 1
  },
  {
    op: "read",
    query: "ids=crypto:flaky,crypto:bitcoin",
    hold: 2,
    natural: { status: 503, code: "source_unavailable" },
    computes: 1
  }
]
/** The request a crash leaves in flight: it waits forever (the test plane's gate is never opened). */
const SLOW: PaidRequest = {
  op: "price",
  query: "id=crypto:slow",
  hold: 1,
  natural: { status: 200, charge: 1 },
  computes: 1
}

const KEYS = ["k1", "k2", "k3"] as const

export type Action =
  | { readonly _tag: "Call"; readonly request: number; readonly key: string | undefined }
  | { readonly _tag: "Crash"; readonly key: string }
  /** The previous call again, same request and key: a duplicate (a client's retry). */
  | { readonly _tag: "Repeat" }
  /** `n` identical requests at once (concurrent duplicates when keyed; a race for the balance when not). */
  | { readonly _tag: "Burst"; readonly request: number; readonly key: string | undefined; readonly n: number }
  | { readonly _tag: "Interrupt" }
  | { readonly _tag: "Jump"; readonly ms: number }
  | { readonly _tag: "Grant"; readonly credits: number }

/** Jumps that land just before, on and just after the lease and the replay window. */
const around = (ms: number) => [ms - SECOND, ms, ms + SECOND]
const JUMPS = [
  ...around(IDEMPOTENCY_LEASE_MS),
  ...around(DAY),
  ...around(DAY - IDEMPOTENCY_LEASE_MS),
  SECOND,
  30 * SECOND
]

export const actionArb: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc.record({
      _tag: fc.constant("Call" as const),
      request: fc.integer({ min: 0, max: REQUESTS.length - 1 }),
      key: fc.option(fc.constantFrom(...KEYS), { nil: undefined, freq: 4 })
    })
  },
  { weight: 5, arbitrary: fc.constant({ _tag: "Repeat" as const }) },
  {
    weight: 2,
    arbitrary: fc.record({
      _tag: fc.constant("Burst" as const),
      request: fc.integer({ min: 0, max: REQUESTS.length - 1 }),
      key: fc.option(fc.constantFrom(...KEYS), { nil: undefined, freq: 3 }),
      n: fc.integer({ min: 2, max: 6 })
    })
  },
  { weight: 2, arbitrary: fc.record({ _tag: fc.constant("Crash" as const), key: fc.constantFrom(...KEYS) }) },
  { weight: 1, arbitrary: fc.constant({ _tag: "Interrupt" as const }) },
  {
    weight: 4,
    arbitrary: fc.record({
      _tag: fc.constant("Jump" as const),
      ms: fc.oneof(fc.constantFrom(...JUMPS), fc.integer({ min: 1, max: 2 * DAY }))
    })
  },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("Grant" as const), credits: fc.integer({ min: 1, max: 12 }) }) }
)

// ---------------------------------------------------------------------------------------------------------------
// The reference model
// ---------------------------------------------------------------------------------------------------------------

type ModelRecord =
  | { readonly state: "in_flight"; readonly fingerprint: string; readonly leaseUntilMs: number; readonly owner: number }
  | {
      readonly state: "stored"
      readonly fingerprint: string
      readonly expiresAtMs: number
      readonly status: number
      readonly body: string
      readonly charged: number
    }

/** What the model expects of one request. */
type Expected =
  | { readonly _tag: "Replay"; readonly status: number; readonly body: string; readonly charged: number }
  | { readonly _tag: "Refused"; readonly code: "idempotency_conflict" | "request_in_progress" | "insufficient_credits" }
  | { readonly _tag: "Runs"; readonly natural: Natural }

class Model {
  nowMs = 0
  grants: number
  charged = 0
  chargeEntries = 0
  /** Credits held by requests left in flight, by crash number. */
  readonly holds = new Map<number, { readonly amount: number; readonly untilMs: number }>()
  readonly records = new Map<string, ModelRecord>()

  constructor(credits: number) {
    this.grants = credits
  }

  /** Grants - settled charges - holds within their lease. */
  available(): number {
    let held = 0
    for (const h of this.holds.values()) if (h.untilMs > this.nowMs) held += h.amount
    return this.grants - this.charged - held
  }

  /** The key's record if it still binds the key (in flight within its lease, or stored within 24 h). */
  live(key: string): ModelRecord | undefined {
    const r = this.records.get(key)
    if (r === undefined) return undefined
    const until = r.state === "in_flight" ? r.leaseUntilMs : r.expiresAtMs
    return until > this.nowMs ? r : undefined
  }

  expect(request: PaidRequest, key: string | undefined): Expected {
    const fingerprint = `${request.op}?${request.query}`
    if (key !== undefined) {
      const r = this.live(key)
      if (r !== undefined) {
        if (r.fingerprint !== fingerprint) return { _tag: "Refused", code: "idempotency_conflict" }
        if (r.state === "in_flight") return { _tag: "Refused", code: "request_in_progress" }
        return { _tag: "Replay", status: r.status, body: r.body, charged: r.charged }
      }
    }
    if (this.available() < request.hold) return { _tag: "Refused", code: "insufficient_credits" }
    return { _tag: "Runs", natural: request.natural }
  }

  /** Records a request that ran to its natural answer (whose body the service produced). */
  ran(request: PaidRequest, key: string | undefined, body: string): void {
    const n = request.natural
    if (n.status === 200 && n.charge > 0) {
      this.charged += n.charge
      this.chargeEntries++
    }
    if (key !== undefined && n.status !== 503) {
      this.records.set(key, {
        state: "stored",
        fingerprint: `${request.op}?${request.query}`,
        expiresAtMs: this.nowMs + DAY,
        status: n.status,
        body,
        charged: n.status === 200 ? n.charge : 0
      })
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Running a program against the service and the model side by side
// ---------------------------------------------------------------------------------------------------------------

const bodyOf = (a: Answer): string => {
  const o = a.outcome
  switch (o._tag) {
    case "Json":
      return o.body
    case "Failure":
      return JSON.stringify(o.error.toBody())
    case "Replay":
      return o.answer.body
    default:
      return ""
  }
}
const codeOf = (a: Answer) => (a.outcome._tag === "Failure" ? a.outcome.error.code : undefined)
const chargedOf = (a: Answer): number => {
  const o = a.outcome
  if (o._tag === "Json" || o._tag === "Failure") return o.creditsCharged
  if (o._tag === "Replay") return Number(o.answer.headers["x-credits-charged"])
  return 0
}

/**
 * Deliberately broken stores, to show the property can fail: a settlement that charges twice, replay records
 * that expire one second early, and a transient failure that keeps its idempotency key.
 */
export type Fault = "double_charge" | "early_expiry" | "sticky_transient"

const withFault = (money: MoneyStore["Service"], fault: Fault | undefined): MoneyStore["Service"] => {
  switch (fault) {
    case undefined:
      return money
    case "double_charge":
      // A settlement followed by a second charge of the same amount.
      return {
        ...money,
        finish: (ticket, end, nowMs) =>
          Effect.tap(money.finish(ticket, end, nowMs), (r) =>
            r._tag === "Settled" && end._tag === "Settle" && end.charge > 0
              ? money.charge({
                  keyId: ticket.keyId,
                  required: end.charge,
                  charge: end.charge,
                  reason: end.reason,
                  nowMs,
                  meter: { scope: `double:${ticket.keyId}`, limit: 1_000_000 }
                })
              : Effect.void
          )
      }
    case "early_expiry":
      // Records judged one second late, so they expire one second early.
      return {
        ...money,
        admit: (a) => money.admit(a.idempotency === undefined ? a : { ...a, nowMs: a.nowMs + SECOND })
      }
    case "sticky_transient":
      // A release that frees the hold but keeps the Idempotency-Key.
      return {
        ...money,
        finish: (ticket, end, nowMs) =>
          money.finish(end._tag === "Release" ? { ...ticket, idempotency: undefined } : ticket, end, nowMs)
      }
  }
}

/**
 * Runs one program through the pipeline over `stores` (a fresh set, or a shared database: each program mints its
 * own API key, so programs never see each other's money) and checks every step against the model.
 */
export const runProgram = (
  stores: Layer.Layer<StorePorts>,
  credits: number,
  actions: ReadonlyArray<Action>,
  fault?: Fault
) =>
  Effect.gen(function* () {
    const plane = yield* makeTestPlane()
    const built = yield* Layer.build(
      Layer.mergeAll(
        stores,
        Layer.succeed(Settings)({ rateLimitPerMinute: 1_000_000 }),
        Digest.layerWebCrypto,
        SecureRandom.layerWebCrypto,
        Layer.succeed(Handlers)(plane.handlers)
      )
    )
    const ctx = built.pipe(Context.add(MoneyStore, withFault(Context.get(built, MoneyStore), fault)))
    const key = yield* createKey({ credits }).pipe(Effect.provide(ctx))
    const keyId = key.record.id
    const ledger = Context.get(ctx, MoneyStore)
    const model = new Model(credits)
    const inFlight: Array<{ readonly id: number; readonly key: string; readonly fiber: Fiber.Fiber<Answer> }> = []
    let crashes = 0
    let previous: { readonly request: PaidRequest; readonly key: string | undefined } | undefined
    const log: Array<string> = []

    const call = (request: PaidRequest, idempotencyKey: string | undefined) =>
      handle({
        operation: request.op,
        params: request.query.split("&").map((p) => p.split("=") as [string, string]),
        authorization: [`Bearer ${key.key}`],
        client: "model",
        ...(idempotencyKey === undefined ? {} : { idempotencyKey: [idempotencyKey] })
      }).pipe(Effect.provide(ctx))

    /** Checks an answer against the model's expectation and advances the model. */
    const check = (
      request: PaidRequest,
      idemKey: string | undefined,
      expected: Expected,
      answer: Answer,
      executed: number
    ) => {
      const what = `${log.join(" | ")} => ${request.op}?${request.query} key=${idemKey}`
      const status = statusOf(answer.outcome)
      switch (expected._tag) {
        case "Replay":
          expect(answer.outcome._tag, what).toBe("Replay")
          expect(status, what).toBe(expected.status)
          // Byte for byte, with the original charge reported and nothing new charged.
          expect(bodyOf(answer), what).toBe(expected.body)
          expect(chargedOf(answer), what).toBe(expected.charged)
          expect(executed, `${what}: a replay executes nothing`).toBe(0)
          return
        case "Refused":
          expect(codeOf(answer), what).toBe(expected.code)
          expect(chargedOf(answer), what).toBe(0)
          if (idemKey !== undefined) expect(executed, `${what}: a refusal executes nothing`).toBe(0)
          return
        case "Runs": {
          const n = expected.natural
          expect(status, what).toBe(n.status)
          if (n.status !== 200) expect(codeOf(answer), what).toBe(n.code)
          expect(chargedOf(answer), what).toBe(n.status === 200 ? n.charge : 0)
          expect(executed, `${what}: executed once`).toBe(request.computes)
          model.ran(request, idemKey, bodyOf(answer))
          return
        }
      }
    }

    /**
     * Checks the answers of concurrent identical requests. Which of them runs first is the scheduler's choice,
     * so the model allows each interleaving's answers and advances by what happened.
     */
    const burst = (
      request: PaidRequest,
      idemKey: string | undefined,
      expected: Expected,
      answers: ReadonlyArray<Answer>,
      executed: number
    ) => {
      const what = `${log.join(" | ")} => ${answers.length} x ${request.op}?${request.query} key=${idemKey}`
      const n = request.natural
      const isNatural = (a: Answer) =>
        a.outcome._tag !== "Replay" &&
        statusOf(a.outcome) === n.status &&
        (n.status === 200 ? chargedOf(a) === n.charge : codeOf(a) === n.code && chargedOf(a) === 0)
      const count = (p: (a: Answer) => boolean) => answers.filter(p).length
      const inProgress = (a: Answer) => codeOf(a) === "request_in_progress"
      const insufficient = (a: Answer) => codeOf(a) === "insufficient_credits"
      if (expected._tag === "Replay" || (expected._tag === "Refused" && expected.code !== "insufficient_credits")) {
        // The key is bound: every duplicate gets the same answer and nothing runs.
        for (const a of answers) check(request, idemKey, expected, a, 0)
        expect(executed, `${what}: nothing runs`).toBe(0)
        return
      }
      if (expected._tag === "Refused") {
        expect(count(insufficient), `${what}: 402`).toBeGreaterThan(0)
        expect(
          count((a) => insufficient(a) || (idemKey !== undefined && inProgress(a))),
          what
        ).toBe(answers.length)
        expect(executed, `${what}: nothing runs`).toBe(0)
        return
      }
      const ran = count(isNatural)
      expect(ran, `${what}: at least one runs`).toBeGreaterThan(0)
      if (idemKey === undefined) {
        // Independent requests racing for the balance: each runs or is refused for credits. (Without a key a
        // request may compute before its charge is refused, so the plane may compute more than the runs.)
        expect(
          count((a) => isNatural(a) || insufficient(a)),
          what
        ).toBe(answers.length)
        expect(executed, `${what}: computed`).toBeGreaterThanOrEqual(ran * request.computes)
        for (const a of answers) if (isNatural(a)) model.ran(request, undefined, bodyOf(a))
        return
      }
      expect(executed, `${what}: the plane computed exactly the runs`).toBe(ran * request.computes)
      if (n.status === 503) {
        // A transient failure frees the key at once: a duplicate may run (and fail) again.
        expect(
          count((a) => isNatural(a) || inProgress(a)),
          what
        ).toBe(answers.length)
        return
      }
      // One execution under the key; the others are in progress or replay it byte for byte.
      expect(ran, `${what}: one execution under one key`).toBe(1)
      const first = answers.find(isNatural) as Answer
      for (const a of answers) {
        if (a === first || inProgress(a)) continue
        expect(a.outcome._tag, what).toBe("Replay")
        expect(bodyOf(a), `${what}: replay body`).toBe(bodyOf(first))
        expect(chargedOf(a), `${what}: replay charge`).toBe(chargedOf(first))
      }
      model.ran(request, idemKey, bodyOf(first))
    }

    /** The service's money state must be the model's after every step. */
    const invariants = Effect.gen(function* () {
      const what = log.join(" | ")
      const balance = yield* ledger.balance(keyId, model.nowMs)
      expect(balance, `${what}: balance`).toBe(model.available())
      expect(balance, `${what}: never negative`).toBeGreaterThanOrEqual(0)
      const entries = yield* ledger.entries(keyId)
      const charges = entries.filter((e) => e.kind === "charge")
      const grants = entries.filter((e) => e.kind === "grant")
      expect(charges.length, `${what}: each settlement is one charge entry`).toBe(model.chargeEntries)
      expect(
        charges.reduce((s, e) => s + e.amount, 0),
        `${what}: settled charges`
      ).toBe(model.charged)
      expect(
        grants.reduce((s, e) => s + e.amount, 0),
        `${what}: grants`
      ).toBe(model.grants)
    })

    for (const action of actions) {
      log.push(JSON.stringify(action))
      switch (action._tag) {
        case "Call":
        case "Repeat": {
          const target =
            action._tag === "Call" ? { request: REQUESTS[action.request] as PaidRequest, key: action.key } : previous
          if (target === undefined) break
          previous = target
          const expected = model.expect(target.request, target.key)
          const before = yield* plane.executions
          const answer = yield* call(target.request, target.key)
          check(target.request, target.key, expected, answer, (yield* plane.executions) - before)
          break
        }
        case "Burst": {
          const request = REQUESTS[action.request] as PaidRequest
          previous = { request, key: action.key }
          const expected = model.expect(request, action.key)
          const before = yield* plane.executions
          const answers = yield* Effect.forEach(Array.from({ length: action.n }), () => call(request, action.key), {
            concurrency: "unbounded"
          })
          burst(request, action.key, expected, answers, (yield* plane.executions) - before)
          break
        }
        case "Crash": {
          const expected = model.expect(SLOW, action.key)
          const before = yield* plane.executions
          const fiber = yield* Effect.forkChild(call(SLOW, action.key))
          // Either it reaches the plane (and stays there), or it is answered without running.
          for (let i = 0; i < 100_000 && fiber.pollUnsafe() === undefined; i++) {
            if ((yield* plane.executions) > before) break
            // A macrotask turn, so a store's I/O (PostgreSQL) progresses too; bounded by the iteration count.
            yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
          }
          const executed = (yield* plane.executions) - before
          if (expected._tag === "Runs") {
            expect(executed, `${log.join(" | ")}: the crashed request reached the plane`).toBe(1)
            const id = ++crashes
            inFlight.push({ id, key: action.key, fiber })
            model.holds.set(id, { amount: SLOW.hold, untilMs: model.nowMs + HOLD_LEASE_MS })
            model.records.set(action.key, {
              state: "in_flight",
              fingerprint: `${SLOW.op}?${SLOW.query}`,
              leaseUntilMs: model.nowMs + IDEMPOTENCY_LEASE_MS,
              owner: id
            })
          } else {
            // Answered without running; if it ran instead, it waits at the gate: report it, do not wait.
            expect(executed, `${log.join(" | ")}: ${expected._tag} expected, but the request ran`).toBe(0)
            check(SLOW, action.key, expected, yield* Fiber.join(fiber), executed)
          }
          break
        }
        case "Interrupt": {
          // An interrupted request (client gone, shutdown) releases its hold and its key at once.
          const oldest = inFlight.shift()
          if (oldest === undefined) break
          yield* Fiber.interrupt(oldest.fiber)
          model.holds.delete(oldest.id)
          const r = model.records.get(oldest.key)
          if (r?.state === "in_flight" && r.owner === oldest.id) model.records.delete(oldest.key)
          break
        }
        case "Jump": {
          yield* TestClock.adjust(action.ms)
          model.nowMs += action.ms
          break
        }
        case "Grant": {
          yield* ledger.grant(keyId, action.credits, "top-up", model.nowMs)
          model.grants += action.credits
          break
        }
      }
      yield* invariants
    }
  }).pipe(Effect.scoped, Effect.provide(TestClock.layer()))
