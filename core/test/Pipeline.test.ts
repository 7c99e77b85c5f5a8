/**
 * The money pipeline over in-memory stores and the TestClock: credits, idempotency (the contract's state
 * table), conditional requests and the rate limit.
 */
import { assert, describe, it } from "@effect/vitest"
import { memoryStores } from "@market-data/memory"
import { Clock, Context, Effect, Fiber, Layer } from "effect"
import * as Digest from "effect/crypto/Digest"
import * as SecureRandom from "effect/crypto/SecureRandom"
import { TestClock } from "effect/testing"
import { createKey } from "../src/Admin.ts"
import { cachedKeyStore, KeyStore } from "../src/Keys.ts"
import { MoneyStore } from "../src/MoneyStore.ts"
import {
  type Answer,
  type ApiRequest,
  creditsChargedOf,
  creditsHeaderOf,
  Handlers,
  handle,
  type Outcome,
  Settings,
  statusOf
} from "../src/Pipeline.ts"
import { makeTestPlane } from "./support/TestPlane.ts"

const setup = (
  credits = 100,
  options: { readonly nextUpdateAtMs?: number; readonly rateLimitPerMinute?: number } = {}
) =>
  Effect.gen(function* () {
    const plane = yield* makeTestPlane(options)
    const layer = Layer.mergeAll(
      memoryStores(),
      Layer.succeed(Settings)({ rateLimitPerMinute: options.rateLimitPerMinute ?? 1000 }),
      Digest.layerWebCrypto,
      SecureRandom.layerWebCrypto,
      Layer.succeed(Handlers)(plane.handlers)
    )
    const ctx = yield* Layer.build(layer)
    const key = yield* createKey({ credits }).pipe(Effect.provide(ctx))
    const callIn = (
      context: Context.Context<never>,
      req: { operation: string; query?: string } & Partial<Omit<ApiRequest, "operation" | "params">>
    ) =>
      handle({
        authorization: [`Bearer ${key.key}`],
        client: "test",
        ...req,
        params: (req.query ?? "")
          .split("&")
          .filter((p) => p !== "")
          .map((p) => {
            const i = p.indexOf("=")
            return [p.slice(0, i), p.slice(i + 1)] as const
          })
      }).pipe(Effect.provide(context as typeof ctx))
    const call = (req: { operation: string; query?: string } & Partial<Omit<ApiRequest, "operation" | "params">>) =>
      callIn(ctx, req)
    const ledger = Context.get(ctx, MoneyStore)
    const balance = Effect.flatMap(Clock.currentTimeMillis, (ms) => ledger.balance(key.record.id, ms))
    return { plane, ctx, key, call, callIn, balance, ledger }
  })

const code = (a: Answer): string | undefined => (a.outcome._tag === "Failure" ? a.outcome.error.code : undefined)
const charged = (o: Outcome): number =>
  o._tag === "Json" || o._tag === "Failure"
    ? o.creditsCharged
    : o._tag === "Replay"
      ? Number(o.answer.headers["x-credits-charged"])
      : 0
const bodyOf = (a: Answer): string => {
  const o = a.outcome
  if (o._tag === "Json") return o.body
  if (o._tag === "Replay") return o.answer.body
  throw new Error(`no body: ${o._tag}`)
}

describe("credits", () => {
  it.effect("charges the registry price per delivered asset and reports it", () =>
    Effect.gen(function* () {
      const t = yield* setup(100)
      const read = yield* t.call({ operation: "read", query: "id=crypto:bitcoin" })
      assert.strictEqual(charged(read.outcome), 1)
      const equity = yield* t.call({ operation: "read", query: "id=eq:320193:AAPL" })
      assert.strictEqual(charged(equity.outcome), 5)
      const funding = yield* t.call({ operation: "funding", query: "id=crypto:ethereum" })
      assert.strictEqual(charged(funding.outcome), 3)
      const entries = yield* t.ledger.entries(t.key.record.id)
      assert.deepStrictEqual(
        entries.map((e) => [e.kind, e.amount]),
        [
          ["grant", 100],
          ["charge", 1],
          ["charge", 5],
          ["charge", 3]
        ]
      )
    }).pipe(Effect.scoped)
  )

  it.effect("a batch of 10 with 3 unknown IDs delivers 7, refuses 3 and charges exactly 7 x price", () =>
    Effect.gen(function* () {
      const t = yield* setup(100)
      const ids = [
        "crypto:bitcoin",
        "crypto:nope-one",
        "crypto:ethereum",
        "crypto:solana",
        "crypto:nope-two",
        "crypto:dogecoin",
        "crypto:cardano",
        "crypto:ripple",
        "crypto:nope-three",
        "crypto:litecoin"
      ]
      const a = yield* t.call({ operation: "funding", query: `ids=${ids.join(",")}` })
      const body = JSON.parse(bodyOf(a))
      assert.strictEqual(body.data.length, 7)
      assert.deepStrictEqual(
        body.data.map((d: { asset_id: string }) => d.asset_id),
        ids.filter((id) => !id.includes("nope"))
      )
      assert.deepStrictEqual(body.refused, [
        { id: "crypto:nope-one", reason: "unknown_asset" },
        { id: "crypto:nope-two", reason: "unknown_asset" },
        { id: "crypto:nope-three", reason: "unknown_asset" }
      ])
      assert.strictEqual(charged(a.outcome), 21)
      assert.strictEqual(yield* t.balance, 79)
    }).pipe(Effect.scoped)
  )

  it.effect("a refused single id is its error, uncharged", () =>
    Effect.gen(function* () {
      const t = yield* setup(10)
      const a = yield* t.call({ operation: "price", query: "id=crypto:nope" })
      assert.strictEqual(code(a), "unknown_asset")
      assert.strictEqual(charged(a.outcome), 0)
      assert.strictEqual(yield* t.balance, 10)
    }).pipe(Effect.scoped)
  )

  it.effect("insufficient balance is 402 with nothing executed and nothing charged", () =>
    Effect.gen(function* () {
      const t = yield* setup(4)
      const a = yield* t.call({ operation: "read", query: "id=eq:320193:AAPL" })
      assert.strictEqual(code(a), "insufficient_credits")
      assert.strictEqual(yield* t.plane.executions, 0)
      assert.strictEqual(yield* t.balance, 4)
      // A batch holds the price of every requested asset.
      const b = yield* t.call({ operation: "funding", query: "ids=crypto:bitcoin,crypto:ethereum" })
      assert.strictEqual(code(b), "insufficient_credits")
      // The message says how to get more: the operator's top-up command and where the key ID is.
      const message = a.outcome._tag === "Failure" ? a.outcome.error.message : ""
      assert.include(message, "market-data credits grant <key-id> <n>")
      assert.include(message, "`usage`")
    }).pipe(Effect.scoped)
  )

  it.effect("the balance never goes below zero under 200 concurrent requests", () =>
    Effect.gen(function* () {
      const t = yield* setup(100)
      const answers = yield* Effect.forEach(
        Array.from({ length: 200 }),
        () => t.call({ operation: "price", query: "id=crypto:bitcoin" }),
        { concurrency: "unbounded" }
      )
      const served = answers.filter((a) => a.outcome._tag === "Json").length
      const refused = answers.filter((a) => code(a) === "insufficient_credits").length
      assert.strictEqual(served, 100)
      assert.strictEqual(refused, 100)
      assert.strictEqual(yield* t.balance, 0)
    }).pipe(Effect.scoped)
  )

  it.effect("a transient failure releases the hold and charges nothing", () =>
    Effect.gen(function* () {
      const t = yield* setup(10)
      const a = yield* t.call({ operation: "price", query: "id=crypto:flaky" })
      assert.strictEqual(code(a), "source_unavailable")
      assert.strictEqual(statusOf(a.outcome), 503)
      assert.strictEqual(yield* t.balance, 10)
    }).pipe(Effect.scoped)
  )
})

describe("idempotency", () => {
  it.effect("20 concurrent identical requests with one key: one execution, 19 request_in_progress, one charge", () =>
    Effect.gen(function* () {
      const t = yield* setup(100)
      const fiber = yield* Effect.forEach(
        Array.from({ length: 20 }),
        () => t.call({ operation: "price", query: "id=crypto:slow", idempotencyKey: ["k-concurrent"] }),
        { concurrency: "unbounded" }
      ).pipe(Effect.forkChild)
      while ((yield* t.plane.executions) < 1) yield* Effect.yieldNow
      for (let i = 0; i < 50; i++) yield* Effect.yieldNow
      yield* t.plane.release
      const answers = yield* Fiber.join(fiber)
      const inProgress = answers.filter((a) => code(a) === "request_in_progress")
      assert.strictEqual(inProgress.length, 19)
      for (const a of inProgress) {
        assert.strictEqual(a.outcome._tag === "Failure" && a.outcome.error.retryAfterSeconds, 1)
      }
      assert.strictEqual(answers.filter((a) => a.outcome._tag === "Json").length, 1)
      assert.strictEqual(yield* t.plane.executions, 1)
      assert.strictEqual(yield* t.balance, 99)
    }).pipe(Effect.scoped)
  )

  it.effect("replays the stored body byte for byte within 24 h, without a second charge", () =>
    Effect.gen(function* () {
      const t = yield* setup(100)
      const first = yield* t.call({
        operation: "funding",
        query: "ids=crypto:bitcoin,crypto:nope",
        idempotencyKey: ["abc"]
      })
      yield* TestClock.adjust("23 hours")
      const again = yield* t.call({
        operation: "funding",
        query: "ids=crypto:bitcoin,crypto:nope",
        idempotencyKey: ["abc"]
      })
      assert.strictEqual(again.outcome._tag, "Replay")
      assert.strictEqual(bodyOf(again), bodyOf(first))
      assert.strictEqual(charged(again.outcome), 3)
      assert.strictEqual(yield* t.plane.executions, 2)
      assert.strictEqual(yield* t.balance, 97)
    }).pipe(Effect.scoped)
  )

  it.effect("normalizes the request: parameter order does not matter; a different request conflicts", () =>
    Effect.gen(function* () {
      const t = yield* setup(100)
      yield* t.call({ operation: "technicals", query: "id=crypto:bitcoin&timeframe=1h", idempotencyKey: ["n"] })
      const same = yield* t.call({
        operation: "technicals",
        query: "timeframe=1h&id=crypto:bitcoin",
        idempotencyKey: ["n"]
      })
      // technicals has no handler in the test plane: the 501 is transient (5xx) and not stored, so it runs again.
      assert.strictEqual(code(same), "not_implemented")
      yield* t.call({ operation: "price", query: "id=crypto:bitcoin", idempotencyKey: ["m"] })
      const other = yield* t.call({ operation: "price", query: "id=crypto:ethereum", idempotencyKey: ["m"] })
      assert.strictEqual(code(other), "idempotency_conflict")
      const otherOp = yield* t.call({ operation: "read", query: "id=crypto:bitcoin", idempotencyKey: ["m"] })
      assert.strictEqual(code(otherOp), "idempotency_conflict")
      const defaults = yield* t.call({ operation: "price", query: "id=crypto:bitcoin", idempotencyKey: ["m"] })
      assert.strictEqual(defaults.outcome._tag, "Replay")
    }).pipe(Effect.scoped)
  )

  it.effect("after 24 h the key may be used again", () =>
    Effect.gen(function* () {
      const t = yield* setup(100)
      yield* t.call({ operation: "price", query: "id=crypto:bitcoin", idempotencyKey: ["day"] })
      yield* TestClock.adjust("24 hours")
      const other = yield* t.call({ operation: "price", query: "id=crypto:ethereum", idempotencyKey: ["day"] })
      assert.strictEqual(other.outcome._tag, "Json")
      assert.strictEqual(yield* t.balance, 98)
    }).pipe(Effect.scoped)
  )

  it.effect("a transient outcome releases the record: the retry executes and settles once", () =>
    Effect.gen(function* () {
      const t = yield* setup(100)
      const first = yield* t.call({ operation: "price", query: "id=crypto:flaky", idempotencyKey: ["t"] })
      assert.strictEqual(code(first), "source_unavailable")
      const retry = yield* t.call({ operation: "price", query: "id=crypto:flaky", idempotencyKey: ["t"] })
      assert.strictEqual(code(retry), "source_unavailable")
      assert.strictEqual(yield* t.plane.executions, 2)
      assert.strictEqual(yield* t.balance, 100)
    }).pipe(Effect.scoped)
  )

  it.effect("an in-flight record older than its 60 s lease counts as released; the hold too", () =>
    Effect.gen(function* () {
      const t = yield* setup(1)
      // A request that never finishes (as if its process died): it holds the key and the only credit.
      yield* t.call({ operation: "price", query: "id=crypto:slow", idempotencyKey: ["crash"] }).pipe(Effect.forkChild)
      while ((yield* t.plane.executions) < 1) yield* Effect.yieldNow
      const during = yield* t.call({ operation: "price", query: "id=crypto:slow", idempotencyKey: ["crash"] })
      assert.strictEqual(code(during), "request_in_progress")
      const starved = yield* t.call({ operation: "price", query: "id=crypto:bitcoin" })
      assert.strictEqual(code(starved), "insufficient_credits")
      yield* TestClock.adjust("59 seconds")
      assert.strictEqual(yield* t.ledger.balance(t.key.record.id, 59_000), 0)
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* t.ledger.balance(t.key.record.id, 60_000), 1)
      yield* t.plane.release
    }).pipe(Effect.scoped)
  )

  it.effect("a slow attempt that outlives its lease while a retry runs is never charged a second time", () =>
    Effect.gen(function* () {
      const t = yield* setup(10)
      const req = { operation: "price", query: "id=crypto:slow", idempotencyKey: ["slow-k"] }
      // Attempt A runs past its 60 s lease; the retry B takes the key over; both finish after that.
      const a = yield* t.call(req).pipe(Effect.forkChild)
      while ((yield* t.plane.executions) < 1) yield* Effect.yieldNow
      yield* TestClock.adjust("61 seconds")
      const b = yield* t.call(req).pipe(Effect.forkChild)
      while ((yield* t.plane.executions) < 2) yield* Effect.yieldNow
      yield* t.plane.release
      const answers = [yield* Fiber.join(a), yield* Fiber.join(b)]
      const served = answers.filter((x) => x.outcome._tag === "Json")
      assert.strictEqual(served.length, 1)
      // The attempt that lost the record answers a retryable 503 and charges nothing.
      assert.deepStrictEqual(
        answers.filter((x) => x.outcome._tag === "Failure").map((x) => code(x)),
        ["source_unavailable"]
      )
      assert.strictEqual(yield* t.balance, 9)
      const again = yield* t.call(req)
      assert.strictEqual(again.outcome._tag, "Replay")
      assert.strictEqual(bodyOf(again), bodyOf(served[0] as Answer))
      assert.strictEqual(yield* t.balance, 9)
    }).pipe(Effect.scoped)
  )

  it.effect("validates the Idempotency-Key: lengths, whitespace, control and non-ASCII characters, repeats", () =>
    Effect.gen(function* () {
      const t = yield* setup(100)
      const cases: Array<[ReadonlyArray<string>, string | undefined]> = [
        [[""], "invalid_idempotency_key"],
        [["a"], undefined],
        [["a".repeat(128)], undefined],
        [["a".repeat(129)], "invalid_idempotency_key"],
        [[" a"], "invalid_idempotency_key"],
        [["a "], "invalid_idempotency_key"],
        [["a b"], undefined],
        [["a\tb"], "invalid_idempotency_key"],
        [["a\u007fb"], "invalid_idempotency_key"],
        [["café"], "invalid_idempotency_key"],
        [["x", "x"], "invalid_idempotency_key"]
      ]
      for (const [values, expected] of cases) {
        const a = yield* t.call({ operation: "price", query: "id=crypto:bitcoin", idempotencyKey: values })
        assert.strictEqual(code(a), expected, JSON.stringify(values))
      }
    }).pipe(Effect.scoped)
  )
})

describe("credits reported", () => {
  it.effect("every transport reads a charge the same way: replays report the original, 304 nothing", () =>
    Effect.gen(function* () {
      const t = yield* setup(100)
      const first = yield* t.call({ operation: "funding", query: "id=crypto:bitcoin", idempotencyKey: ["c"] })
      assert.strictEqual(creditsChargedOf(first.outcome), 3)
      assert.strictEqual(creditsHeaderOf(first), "3")
      const replay = yield* t.call({ operation: "funding", query: "id=crypto:bitcoin", idempotencyKey: ["c"] })
      assert.strictEqual(replay.outcome._tag, "Replay")
      assert.strictEqual(creditsChargedOf(replay.outcome), 3)
      // The replay's stored headers carry the charge already: no second header.
      assert.strictEqual(creditsHeaderOf(replay), undefined)
      const read = yield* t.call({ operation: "read", query: "id=crypto:bitcoin" })
      const etag = read.outcome._tag === "Json" ? (read.outcome.etag as string) : ""
      const same = yield* t.call({ operation: "read", query: "id=crypto:bitcoin", ifNoneMatch: etag })
      assert.strictEqual(creditsChargedOf(same.outcome), 0)
      assert.strictEqual(creditsHeaderOf(same), "0")
      const refused = yield* t.call({ operation: "price", query: "id=crypto:nope" })
      assert.strictEqual(creditsHeaderOf(refused), "0")
      // Free operations carry no credit header.
      assert.strictEqual(creditsHeaderOf(yield* t.call({ operation: "usage" })), undefined)
    }).pipe(Effect.scoped)
  )
})

describe("conditional requests", () => {
  it.effect("answers a strong ETag from the content; a matching If-None-Match is 304 at zero credits", () =>
    Effect.gen(function* () {
      const t = yield* setup(100)
      const first = yield* t.call({ operation: "read", query: "id=crypto:bitcoin" })
      const etag = first.outcome._tag === "Json" ? first.outcome.etag : undefined
      assert.match(etag ?? "", /^"[0-9a-f]{40}"$/)
      yield* TestClock.adjust("5 seconds")
      for (const header of [etag as string, `"other", ${etag}`, "*", `W/${etag}`]) {
        const again = yield* t.call({ operation: "read", query: "id=crypto:bitcoin", ifNoneMatch: header })
        assert.strictEqual(again.outcome._tag, "NotModified", header)
        assert.strictEqual(charged(again.outcome), 0)
      }
      const miss = yield* t.call({ operation: "read", query: "id=crypto:bitcoin", ifNoneMatch: '"nope"' })
      assert.strictEqual(miss.outcome._tag, "Json")
      assert.strictEqual(yield* t.balance, 98)
      // 304s still spend rate units: 6 requests so far.
      assert.strictEqual(miss.rate?.remaining, 1000 - 6)
    }).pipe(Effect.scoped)
  )

  it.effect("an unchanged read is 304 at zero credits whatever the balance; a changed one is 402", () =>
    Effect.gen(function* () {
      // One credit: the first read spends it, leaving a key that cannot pay for another body.
      const t = yield* setup(1)
      const first = yield* t.call({ operation: "read", query: "id=crypto:bitcoin" })
      const etag = first.outcome._tag === "Json" ? (first.outcome.etag as string) : ""
      assert.strictEqual(yield* t.balance, 0)
      // Without an Idempotency-Key (the metered path) and with one (begin, then hold and settle).
      const variants = [{}, { idempotencyKey: ["k-current"] }]
      for (const extra of variants) {
        const same = yield* t.call({ operation: "read", query: "id=crypto:bitcoin", ifNoneMatch: etag, ...extra })
        assert.strictEqual(same.outcome._tag, "NotModified", JSON.stringify(extra))
        assert.strictEqual(charged(same.outcome), 0)
      }
      const stale = [{}, { idempotencyKey: ["k-stale"] }]
      for (const extra of stale) {
        const changed = yield* t.call({ operation: "read", query: "id=crypto:bitcoin", ifNoneMatch: '"old"', ...extra })
        assert.strictEqual(code(changed), "insufficient_credits", JSON.stringify(extra))
        assert.strictEqual(charged(changed.outcome), 0)
      }
      assert.strictEqual(yield* t.balance, 0)
      const entries = yield* t.ledger.entries(t.key.record.id)
      assert.deepStrictEqual(
        entries.map((e) => [e.kind, e.amount]),
        [
          ["grant", 1],
          ["charge", 1]
        ]
      )
      // The 304 under an Idempotency-Key stored nothing: the same key later (after a top-up) serves the body.
      yield* t.ledger.grant(t.key.record.id, 1, "top-up", 0)
      const body = yield* t.call({ operation: "read", query: "id=crypto:bitcoin", idempotencyKey: ["k-current"] })
      assert.strictEqual(body.outcome._tag, "Json")
      assert.strictEqual(yield* t.balance, 0)
    }).pipe(Effect.scoped)
  )

  it.effect("the ETag is compared before any credit is held", () =>
    Effect.gen(function* () {
      const t = yield* setup(100)
      const first = yield* t.call({ operation: "read", query: "id=crypto:bitcoin" })
      const etag = first.outcome._tag === "Json" ? (first.outcome.etag as string) : ""
      let holds = 0
      let settles = 0
      const counted = Context.add(t.ctx, MoneyStore, {
        ...t.ledger,
        admit: (a) =>
          Effect.suspend(() => {
            if (a.hold > 0) holds += 1
            return t.ledger.admit(a)
          }),
        finish: (ticket, end, nowMs) =>
          Effect.suspend(() => {
            if (end._tag === "Settle") settles += 1
            return t.ledger.finish(ticket, end, nowMs)
          })
      })
      const same = yield* t.callIn(counted, {
        operation: "read",
        query: "id=crypto:bitcoin",
        ifNoneMatch: etag,
        idempotencyKey: ["k1"]
      })
      assert.strictEqual(same.outcome._tag, "NotModified")
      assert.strictEqual(holds, 0)
      assert.strictEqual(settles, 0)
      // A changed one holds nothing either and is charged once when it finishes, from the one execution.
      const executions = yield* t.plane.executions
      const changed = yield* t.callIn(counted, {
        operation: "read",
        query: "id=crypto:bitcoin",
        ifNoneMatch: '"old"',
        idempotencyKey: ["k2"]
      })
      assert.strictEqual(changed.outcome._tag, "Json")
      assert.strictEqual(holds, 0)
      assert.strictEqual(settles, 1)
      assert.strictEqual((yield* t.plane.executions) - executions, 1)
      assert.strictEqual(yield* t.balance, 98)
    }).pipe(Effect.scoped)
  )

  it.effect("the same data gives the same ETag in another instance", () =>
    Effect.gen(function* () {
      const a = yield* setup(10)
      const b = yield* setup(10)
      const ea = yield* a.call({ operation: "read", query: "ids=crypto:bitcoin,eq:320193:AAPL" })
      const eb = yield* b.call({ operation: "read", query: "ids=crypto:bitcoin,eq:320193:AAPL" })
      assert.isDefined(ea.outcome._tag === "Json" && ea.outcome.etag)
      assert.strictEqual(ea.outcome._tag === "Json" && ea.outcome.etag, eb.outcome._tag === "Json" && eb.outcome.etag)
    }).pipe(Effect.scoped)
  )

  it.effect("sets max-age to the seconds until next_update_at", () =>
    Effect.gen(function* () {
      const t = yield* setup(10, { nextUpdateAtMs: 90_000 })
      yield* TestClock.adjust("30 seconds")
      const a = yield* t.call({ operation: "price", query: "id=crypto:bitcoin" })
      assert.strictEqual(a.outcome._tag === "Json" && a.outcome.maxAgeSeconds, 60)
    }).pipe(Effect.scoped)
  )
})

describe("key revocation", () => {
  it.effect("a key revoked elsewhere while this instance still remembers it is refused at admit and at charge", () =>
    Effect.gen(function* () {
      const t = yield* setup(10)
      // This instance remembers valid keys for a minute (as a database instance does for 5 s); another instance
      // revokes the key in the shared store, which this one's cache does not see.
      const shared = Context.get(t.ctx, KeyStore)
      const ctx = Context.add(t.ctx, KeyStore, cachedKeyStore(shared, 60_000))
      const warm = yield* t.callIn(ctx, { operation: "price", query: "id=crypto:bitcoin" })
      assert.strictEqual(warm.outcome._tag, "Json")
      assert.strictEqual(yield* t.balance, 9)
      yield* shared.revoke(t.key.record.id, new Date(0))
      // Metered (no Idempotency-Key): executed first, then refused by the charge step; nothing charged.
      const metered = yield* t.callIn(ctx, { operation: "price", query: "id=crypto:bitcoin" })
      assert.strictEqual(code(metered), "unauthenticated")
      // With an Idempotency-Key: refused by admit, nothing held, nothing executed.
      const executions = yield* t.plane.executions
      const admitted = yield* t.callIn(ctx, { operation: "price", query: "id=crypto:bitcoin", idempotencyKey: ["r"] })
      assert.strictEqual(code(admitted), "unauthenticated")
      assert.strictEqual(yield* t.plane.executions, executions)
      assert.strictEqual(yield* t.balance, 9)
      assert.strictEqual((yield* t.ledger.entries(t.key.record.id)).filter((e) => e.kind === "charge").length, 1)
    }).pipe(Effect.scoped)
  )
})

describe("rate limit", () => {
  it.effect("the 60th request passes, the 61st is 429 with Retry-After, and units return as the window rolls", () =>
    Effect.gen(function* () {
      const t = yield* setup(1000, { rateLimitPerMinute: 60 })
      for (let i = 0; i < 30; i++) yield* t.call({ operation: "price", query: "id=crypto:bitcoin" })
      yield* TestClock.adjust("30 seconds")
      let last: Answer | undefined
      for (let i = 0; i < 30; i++) last = yield* t.call({ operation: "price", query: "id=crypto:bitcoin" })
      assert.strictEqual(last?.outcome._tag, "Json")
      assert.strictEqual(last?.rate?.remaining, 0)
      const over = yield* t.call({ operation: "price", query: "id=crypto:bitcoin" })
      assert.strictEqual(code(over), "rate_limited")
      assert.strictEqual(over.outcome._tag === "Failure" && over.outcome.error.retryAfterSeconds, 31)
      assert.strictEqual(charged(over.outcome), 0)
      // Rolling, not a fixed minute: at 60 s the first 30 (second 0) still count; they return at 61 s.
      yield* TestClock.adjust("30 seconds")
      assert.strictEqual(code(yield* t.call({ operation: "price", query: "id=crypto:bitcoin" })), "rate_limited")
      yield* TestClock.adjust("1 second")
      const back = yield* t.call({ operation: "price", query: "id=crypto:bitcoin" })
      assert.strictEqual(back.outcome._tag, "Json")
      assert.strictEqual(back.rate?.remaining, 29)
      assert.strictEqual(yield* t.balance, 1000 - 61)
    }).pipe(Effect.scoped)
  )
})
