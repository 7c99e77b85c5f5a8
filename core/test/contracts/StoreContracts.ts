/**
 * Contract suites for the store ports. Every implementation (memory, PGlite, PostgreSQL) runs these same
 * suites: `storeContracts("memory", () => memoryStores())`. Each test gets a fresh layer from `make`.
 */
import { Effect, type Layer } from "effect"
import { describe, expect, it } from "vitest"
import {
  IDEMPOTENCY_LEASE_MS,
  IdempotencyStore,
  type MeteredBeginResult,
  meteredBegin,
  REPLAY_WINDOW_MS,
  type StoredAnswer
} from "../../src/Idempotency.ts"
import { type KeyRecord, KeyStore } from "../../src/Keys.ts"
import { HOLD_LEASE_MS, Ledger } from "../../src/Ledger.ts"
import type { StorePorts } from "../../src/Pipeline.ts"
import { BUCKET_MS, RateLimiter, WINDOW_MS } from "../../src/RateLimit.ts"

const T0 = Date.UTC(2026, 0, 1)

const record = (n: number): KeyRecord => ({
  id: `key_contract${String(n).padStart(4, "0")}`,
  hash: n.toString(16).padStart(64, "0"),
  prefix: "mdk_abcd",
  label: n % 2 === 0 ? null : `label ${n}`,
  createdAt: new Date(T0 + n * 1000),
  revokedAt: null,
  rateLimitPerMinute: n % 3 === 0 ? 120 : null
})

const answer = (body: string): StoredAnswer => ({
  status: 200,
  headers: { "content-type": "application/json", "x-credits-charged": "3", etag: '"abc"' },
  body
})

export const storeContracts = (name: string, make: () => Layer.Layer<StorePorts>) => {
  const run = <A, E>(effect: Effect.Effect<A, E, StorePorts>) => Effect.runPromise(Effect.provide(effect, make()))

  describe(`${name}: KeyStore`, () => {
    it("inserts, finds by hash and ID, lists oldest first, revokes once", () =>
      run(
        Effect.gen(function* () {
          const keys = yield* KeyStore
          yield* keys.insert(record(2))
          yield* keys.insert(record(1))
          const byHash = yield* keys.findByHash(record(1).hash)
          expect(byHash._tag === "Some" && byHash.value).toEqual(record(1))
          const byId = yield* keys.findById(record(2).id)
          expect(byId._tag === "Some" && byId.value.hash).toBe(record(2).hash)
          expect((yield* keys.findByHash("f".repeat(64)))._tag).toBe("None")
          expect((yield* keys.list).map((k) => k.id)).toEqual([record(1).id, record(2).id])
          expect(yield* keys.revoke(record(1).id, new Date(T0 + 5000))).toBe(true)
          expect(yield* keys.revoke(record(1).id, new Date(T0 + 6000))).toBe(false)
          expect(yield* keys.revoke("key_missing", new Date(T0))).toBe(false)
          const revoked = yield* keys.findByHash(record(1).hash)
          expect(revoked._tag === "Some" && revoked.value.revokedAt?.getTime()).toBe(T0 + 5000)
        })
      ))

    it("refuses a second key with the same hash", () =>
      run(
        Effect.gen(function* () {
          const keys = yield* KeyStore
          yield* keys.insert(record(7))
          const again = yield* Effect.exit(keys.insert({ ...record(7), id: "key_other" }))
          expect(again._tag).toBe("Failure")
        })
      ))
  })

  describe(`${name}: Ledger`, () => {
    it("balance is grants minus charges minus live holds, never below zero", () =>
      run(
        Effect.gen(function* () {
          const ledger = yield* Ledger
          expect(yield* ledger.balance("k", T0)).toBe(0)
          expect(yield* ledger.grant("k", 10, "grant", T0)).toBe(10)
          const h = yield* ledger.hold("k", 7, T0)
          expect(h?.amount).toBe(7)
          expect(yield* ledger.balance("k", T0)).toBe(3)
          expect(yield* ledger.hold("k", 4, T0)).toBeUndefined()
          const s = yield* ledger.settle(h!, 5, "price", T0 + 10)
          expect(s).toEqual({ _tag: "Settled", charged: 5 })
          expect(yield* ledger.balance("k", T0 + 10)).toBe(5)
          const entries = yield* ledger.entries("k")
          expect(entries.map((e) => [e.kind, e.amount])).toEqual([
            ["grant", 10],
            ["charge", 5]
          ])
        })
      ))

    it("resolves a hold exactly once", () =>
      run(
        Effect.gen(function* () {
          const ledger = yield* Ledger
          yield* ledger.grant("k", 10, "grant", T0)
          const h = (yield* ledger.hold("k", 4, T0))!
          expect((yield* ledger.settle(h, 4, "x", T0))._tag).toBe("Settled")
          expect((yield* ledger.settle(h, 4, "x", T0))._tag).toBe("AlreadyResolved")
          yield* ledger.release(h)
          expect(yield* ledger.balance("k", T0)).toBe(6)
          const r = (yield* ledger.hold("k", 6, T0))!
          yield* ledger.release(r)
          expect((yield* ledger.settle(r, 6, "x", T0))._tag).toBe("AlreadyResolved")
          expect(yield* ledger.balance("k", T0)).toBe(6)
          expect((yield* ledger.entries("k")).filter((e) => e.kind === "charge").length).toBe(1)
        })
      ))

    it("an expired hold stops reserving at its lease, and settles only if the balance still covers it", () =>
      run(
        Effect.gen(function* () {
          const ledger = yield* Ledger
          yield* ledger.grant("k", 5, "grant", T0)
          const h = (yield* ledger.hold("k", 5, T0))!
          expect(yield* ledger.balance("k", T0 + HOLD_LEASE_MS - 1)).toBe(0)
          expect(yield* ledger.balance("k", T0 + HOLD_LEASE_MS)).toBe(5)
          const other = (yield* ledger.hold("k", 3, T0 + HOLD_LEASE_MS))!
          expect(other).toBeDefined()
          expect((yield* ledger.settle(h, 5, "late", T0 + HOLD_LEASE_MS + 1))._tag).toBe("Expired")
          expect((yield* ledger.settle(other, 3, "ok", T0 + HOLD_LEASE_MS + 1))._tag).toBe("Settled")
          expect(yield* ledger.balance("k", T0 + HOLD_LEASE_MS + 1)).toBe(2)
        })
      ))

    it("settles an expired hold when the balance still covers it", () =>
      run(
        Effect.gen(function* () {
          const ledger = yield* Ledger
          yield* ledger.grant("k", 5, "grant", T0)
          const h = (yield* ledger.hold("k", 2, T0))!
          expect(yield* ledger.settle(h, 2, "late", T0 + HOLD_LEASE_MS + 5)).toEqual({ _tag: "Settled", charged: 2 })
          expect(yield* ledger.balance("k", T0 + HOLD_LEASE_MS + 5)).toBe(3)
        })
      ))

    it("never lets concurrent holds overdraw", () =>
      run(
        Effect.gen(function* () {
          const ledger = yield* Ledger
          yield* ledger.grant("k", 50, "grant", T0)
          const holds = yield* Effect.forEach(Array.from({ length: 100 }), () => ledger.hold("k", 1, T0), {
            concurrency: "unbounded"
          })
          expect(holds.filter((h) => h !== undefined).length).toBe(50)
          expect(yield* ledger.balance("k", T0)).toBe(0)
        })
      ))

    it("a settlement with a receipt stores the idempotent answer in the same step", () =>
      run(
        Effect.gen(function* () {
          const ledger = yield* Ledger
          const idem = yield* IdempotencyStore
          yield* ledger.grant("k", 10, "grant", T0)
          const begun = yield* idem.begin("k", "R", "price?id=a", T0)
          const token = begun._tag === "Started" ? begun.token : ""
          const h = (yield* ledger.hold("k", 3, T0))!
          const receipt = { keyId: "k", idempotencyKey: "R", token, answer: answer('{"paid":true}') }
          expect(yield* ledger.settle(h, 3, "price", T0 + 5, receipt)).toEqual({ _tag: "Settled", charged: 3 })
          const replay = yield* idem.begin("k", "R", "price?id=a", T0 + 6)
          expect(replay._tag === "Replay" && replay.answer.body).toBe('{"paid":true}')
          expect((yield* idem.begin("k", "R", "price?id=a", T0 + 5 + REPLAY_WINDOW_MS))._tag).toBe("Started")
          // A receipt whose token does not own the record completes nothing and charges nothing.
          const h2 = (yield* ledger.hold("k", 1, T0))!
          const stale = { keyId: "k", idempotencyKey: "Q", token: "not-the-owner", answer: answer("x") }
          expect((yield* ledger.settle(h2, 1, "price", T0, stale))._tag).toBe("Superseded")
          expect((yield* idem.begin("k", "Q", "f", T0 + 1))._tag).toBe("Started")
          expect(yield* ledger.balance("k", T0 + 1)).toBe(7)
        })
      ))

    it("a settlement whose idempotency record passed to a retry charges nothing and stores nothing", () =>
      run(
        Effect.gen(function* () {
          const ledger = yield* Ledger
          const idem = yield* IdempotencyStore
          yield* ledger.grant("k", 10, "grant", T0)
          // Attempt A begins and holds, then outlives its lease; retry B takes the record, is charged, stored.
          const a = yield* idem.begin("k", "R", "price?id=a", T0)
          const tokenA = a._tag === "Started" ? a.token : ""
          const holdA = (yield* ledger.hold("k", 2, T0))!
          const later = T0 + IDEMPOTENCY_LEASE_MS + 1
          const b = yield* idem.begin("k", "R", "price?id=a", later)
          const tokenB = b._tag === "Started" ? b.token : ""
          expect(tokenB).not.toBe("")
          const holdB = (yield* ledger.hold("k", 2, later))!
          const receiptB = { keyId: "k", idempotencyKey: "R", token: tokenB, answer: answer('{"by":"B"}') }
          expect((yield* ledger.settle(holdB, 2, "price", later + 1, receiptB))._tag).toBe("Settled")
          // A finally settles: superseded, nothing charged, B's answer kept.
          const receiptA = { keyId: "k", idempotencyKey: "R", token: tokenA, answer: answer('{"by":"A"}') }
          expect(yield* ledger.settle(holdA, 2, "price", later + 2, receiptA)).toEqual({ _tag: "Superseded" })
          expect(yield* ledger.balance("k", later + 2)).toBe(8)
          const replay = yield* idem.begin("k", "R", "price?id=a", later + 3)
          expect(replay._tag === "Replay" && replay.answer.body).toBe('{"by":"B"}')
          // The same while B is still in flight: A's settlement is refused, B's record untouched.
          const c = yield* idem.begin("k", "S", "price?id=c", T0)
          const tokenC = c._tag === "Started" ? c.token : ""
          const holdC = (yield* ledger.hold("k", 1, T0))!
          expect((yield* idem.begin("k", "S", "price?id=c", later))._tag).toBe("Started")
          const receiptC = { keyId: "k", idempotencyKey: "S", token: tokenC, answer: answer("{}") }
          expect(yield* ledger.settle(holdC, 1, "price", later + 1, receiptC)).toEqual({ _tag: "Superseded" })
          expect((yield* idem.begin("k", "S", "price?id=c", later + 2))._tag).toBe("InProgress")
          expect(yield* ledger.balance("k", later + 2)).toBe(8)
        })
      ))

    it("a metered charge spends one rate unit and charges only when the balance covers the hold amount", () =>
      run(
        Effect.gen(function* () {
          const ledger = yield* Ledger
          const limiter = yield* RateLimiter
          const meter = { scope: "k", limit: 3 }
          yield* ledger.grant("k", 10, "grant", T0)
          const h = (yield* ledger.hold("k", 4, T0))!
          // 10 booked, 4 held: 6 available. Requires 7: refused, the unit still spent.
          const short = yield* ledger.meteredCharge("k", 7, 7, "price", T0, meter)
          expect(short._tag).toBe("Insufficient")
          expect(short._tag === "Insufficient" && short.available).toBe(6)
          expect(short.rate).toMatchObject({ allowed: true, remaining: 2 })
          // Requires 6 (a batch), delivered 5: charges 5.
          const ok = yield* ledger.meteredCharge("k", 6, 5, "price", T0 + 1, meter)
          expect(ok).toMatchObject({ _tag: "Charged", available: 1, rate: { allowed: true, remaining: 1 } })
          expect(yield* ledger.balance("k", T0 + 1)).toBe(1)
          // A zero charge (a 304) spends the unit and nothing else.
          expect((yield* ledger.meteredCharge("k", 0, 0, "read", T0 + 2, meter))._tag).toBe("Charged")
          // The window is spent: refused before any charge, and the limiter agrees.
          const limited = yield* ledger.meteredCharge("k", 1, 1, "price", T0 + 3, meter)
          expect(limited._tag).toBe("RateLimited")
          expect(limited.rate.allowed).toBe(false)
          expect((yield* limiter.peek("k", 3, T0 + 3)).remaining).toBe(0)
          expect(ledger.hint("k").rateBlockedUntilMs).toBeGreaterThan(T0 + 3)
          // Units return as the window rolls; the released hold frees its credits.
          yield* ledger.release(h)
          const later = T0 + WINDOW_MS + 2 * BUCKET_MS
          expect(yield* ledger.meteredCharge("k", 5, 5, "price", later, meter)).toMatchObject({
            _tag: "Charged",
            available: 0
          })
          expect((yield* ledger.entries("k")).map((e) => [e.kind, e.amount])).toEqual([
            ["grant", 10],
            ["charge", 5],
            ["charge", 5]
          ])
          expect((yield* Effect.exit(ledger.meteredCharge("k", 1, 2, "price", later, meter)))._tag).toBe("Failure")
        })
      ))

    it("never lets concurrent metered charges overdraw or exceed the rate limit", () =>
      run(
        Effect.gen(function* () {
          const ledger = yield* Ledger
          yield* ledger.grant("k", 50, "grant", T0)
          yield* ledger.grant("j", 1000, "grant", T0)
          const results = yield* Effect.forEach(
            Array.from({ length: 100 }),
            (_, i) =>
              i % 2 === 0
                ? ledger.meteredCharge("k", 1, 1, "price", T0, { scope: "k", limit: 1000 })
                : ledger.hold("k", 1, T0).pipe(Effect.map((h) => ({ _tag: h === undefined ? "Short" : "Held" }))),
            { concurrency: "unbounded" }
          )
          const taken = results.filter((r) => r._tag === "Charged" || r._tag === "Held").length
          expect(taken).toBe(50)
          expect(yield* ledger.balance("k", T0)).toBe(0)
          const rated = yield* Effect.forEach(
            Array.from({ length: 40 }),
            () => ledger.meteredCharge("j", 1, 1, "price", T0, { scope: "j", limit: 25 }),
            { concurrency: "unbounded" }
          )
          expect(rated.filter((r) => r._tag === "Charged").length).toBe(25)
          expect(yield* ledger.balance("j", T0)).toBe(975)
        })
      ))

    it("keeps keys apart and refuses non-positive grants", () =>
      run(
        Effect.gen(function* () {
          const ledger = yield* Ledger
          yield* ledger.grant("a", 3, "grant", T0)
          expect(yield* ledger.balance("b", T0)).toBe(0)
          expect((yield* Effect.exit(ledger.grant("a", 0, "zero", T0)))._tag).toBe("Failure")
          expect((yield* Effect.exit(ledger.grant("a", -1, "neg", T0)))._tag).toBe("Failure")
          expect(yield* ledger.balance("a", T0)).toBe(3)
        })
      ))
  })

  describe(`${name}: IdempotencyStore`, () => {
    it("walks the contract's state table", () =>
      run(
        Effect.gen(function* () {
          const s = yield* IdempotencyStore
          const started = yield* s.begin("k", "K", "price?id=a", T0)
          expect(started._tag).toBe("Started")
          expect((yield* s.begin("k", "K", "price?id=a", T0 + 1))._tag).toBe("InProgress")
          expect((yield* s.begin("k", "K", "price?id=b", T0 + 1))._tag).toBe("Conflict")
          expect((yield* s.begin("other", "K", "price?id=b", T0 + 1))._tag).toBe("Started")
          yield* s.complete("k", "K", started._tag === "Started" ? started.token : "", answer('{"data":1}'), T0 + 2)
          const replay = yield* s.begin("k", "K", "price?id=a", T0 + 3)
          expect(replay).toEqual({ _tag: "Replay", answer: answer('{"data":1}') })
          expect((yield* s.begin("k", "K", "price?id=b", T0 + 3))._tag).toBe("Conflict")
          expect((yield* s.begin("k", "K", "price?id=a", T0 + 2 + REPLAY_WINDOW_MS - 1))._tag).toBe("Replay")
          expect((yield* s.begin("k", "K", "price?id=b", T0 + 2 + REPLAY_WINDOW_MS))._tag).toBe("Started")
        })
      ))

    it("abandon frees the key; an in-flight record expires with its lease", () =>
      run(
        Effect.gen(function* () {
          const s = yield* IdempotencyStore
          const a = yield* s.begin("k", "A", "f", T0)
          yield* s.abandon("k", "A", a._tag === "Started" ? a.token : "")
          expect((yield* s.begin("k", "A", "f", T0 + 1))._tag).toBe("Started")
          yield* s.begin("k", "B", "f", T0)
          expect((yield* s.begin("k", "B", "f", T0 + IDEMPOTENCY_LEASE_MS - 1))._tag).toBe("InProgress")
          expect((yield* s.begin("k", "B", "f", T0 + IDEMPOTENCY_LEASE_MS))._tag).toBe("Started")
        })
      ))

    it("a stale owner can neither complete nor abandon a record taken over after its lease", () =>
      run(
        Effect.gen(function* () {
          const s = yield* IdempotencyStore
          const old = yield* s.begin("k", "C", "f", T0)
          const fresh = yield* s.begin("k", "C", "f", T0 + IDEMPOTENCY_LEASE_MS)
          expect(fresh._tag).toBe("Started")
          yield* s.complete(
            "k",
            "C",
            old._tag === "Started" ? old.token : "",
            answer("old"),
            T0 + IDEMPOTENCY_LEASE_MS + 1
          )
          yield* s.abandon("k", "C", old._tag === "Started" ? old.token : "")
          expect((yield* s.begin("k", "C", "f", T0 + IDEMPOTENCY_LEASE_MS + 2))._tag).toBe("InProgress")
          yield* s.complete(
            "k",
            "C",
            fresh._tag === "Started" ? fresh.token : "",
            answer("new"),
            T0 + IDEMPOTENCY_LEASE_MS + 3
          )
          const r = yield* s.begin("k", "C", "f", T0 + IDEMPOTENCY_LEASE_MS + 4)
          expect(r._tag === "Replay" && r.answer.body).toBe("new")
        })
      ))

    it("of concurrent begins on a free key exactly one starts", () =>
      run(
        Effect.gen(function* () {
          const s = yield* IdempotencyStore
          const results = yield* Effect.forEach(Array.from({ length: 20 }), () => s.begin("k", "D", "f", T0), {
            concurrency: "unbounded"
          })
          expect(results.filter((r) => r._tag === "Started").length).toBe(1)
          expect(results.filter((r) => r._tag === "InProgress").length).toBe(19)
        })
      ))
  })

  describe(`${name}: rate unit and idempotency begin in one step (meteredBegin)`, () => {
    const stores = Effect.all({ s: IdempotencyStore, rl: RateLimiter })
    const tag = (r: MeteredBeginResult) => (r._tag === "RateLimited" ? "RateLimited" : r.begun._tag)
    const tokenOf = (r: MeteredBeginResult) => (r._tag === "Begun" && r.begun._tag === "Started" ? r.begun.token : "")

    it("spends one unit and walks the state table; over the limit it answers 429 first and begins nothing", () =>
      run(
        Effect.gen(function* () {
          const { s, rl } = yield* stores
          const meter = { scope: "k", limit: 4 }
          const go = (key: string, fp: string, at: number) => meteredBegin(s, rl, "k", key, fp, at, meter)
          const started = yield* go("K", "price?id=a", T0)
          expect(started._tag === "Begun" && started.begun._tag).toBe("Started")
          expect(started.rate).toEqual({ limit: 4, remaining: 3, resetAtMs: T0 + WINDOW_MS + BUCKET_MS, allowed: true })
          const inProgress = yield* go("K", "price?id=a", T0 + 1)
          expect(tag(inProgress)).toBe("InProgress")
          expect(inProgress.rate.remaining).toBe(2)
          const conflict = yield* go("K", "price?id=b", T0 + 2)
          expect(tag(conflict)).toBe("Conflict")
          expect(conflict.rate.remaining).toBe(1)
          // Other API keys' records are apart; the unit is the scope's.
          expect(tag(yield* meteredBegin(s, rl, "other", "K", "price?id=b", T0 + 3, meter))).toBe("Started")
          expect((yield* rl.peek("k", 4, T0 + 3)).remaining).toBe(0)
          // Over the limit: refused before anything else, for a free key, an in-flight one and a conflict alike,
          // and neither a unit spent nor a record touched.
          for (const [key, fp] of [
            ["FREE", "price?id=a"],
            ["K", "price?id=a"],
            ["K", "price?id=c"]
          ] as const) {
            const refused = yield* go(key, fp, T0 + 4)
            expect(refused).toEqual({
              _tag: "RateLimited",
              rate: { limit: 4, remaining: 0, resetAtMs: T0 + WINDOW_MS + BUCKET_MS, allowed: false }
            })
          }
          expect((yield* s.begin("k", "FREE", "price?id=z", T0 + 5))._tag).toBe("Started")
          expect((yield* s.begin("k", "K", "price?id=a", T0 + 5))._tag).toBe("InProgress")

          // Stored: a replay (spending its unit) once the window has room again; a different request conflicts.
          yield* s.complete("k", "K", tokenOf(started), answer('{"data":1}'), T0 + 6)
          const later = T0 + WINDOW_MS + BUCKET_MS
          const replay = yield* go("K", "price?id=a", later)
          expect(replay).toEqual({
            _tag: "Begun",
            rate: { limit: 4, remaining: 3, resetAtMs: later + WINDOW_MS + BUCKET_MS, allowed: true },
            begun: { _tag: "Replay", answer: answer('{"data":1}') }
          })
          expect(tag(yield* go("K", "price?id=b", later + 1))).toBe("Conflict")
          expect((yield* rl.peek("k", 4, later + 1)).remaining).toBe(2)
          // The replay window ends: the key starts afresh.
          expect(tag(yield* go("K", "price?id=b", T0 + 6 + REPLAY_WINDOW_MS))).toBe("Started")
        })
      ))

    it("spends the same units as RateLimiter.consume", () =>
      run(
        Effect.gen(function* () {
          const { s, rl } = yield* stores
          const meter = { scope: "k", limit: 4 }
          expect((yield* rl.consume("k", 4, T0)).allowed).toBe(true)
          expect(tag(yield* meteredBegin(s, rl, "k", "A", "f", T0 + 1, meter))).toBe("Started")
          expect((yield* rl.consume("k", 4, T0 + 2)).remaining).toBe(1)
          const last = yield* meteredBegin(s, rl, "k", "B", "f", T0 + 1_500, meter)
          expect(tag(last)).toBe("Started")
          expect(last.rate.remaining).toBe(0)
          expect((yield* rl.consume("k", 4, T0 + 1_600)).allowed).toBe(false)
          expect(tag(yield* meteredBegin(s, rl, "k", "C", "f", T0 + 1_700, meter))).toBe("RateLimited")
          // Units return bucket by bucket: the first second's three come back, the next second's one counts.
          const first = T0 + WINDOW_MS + BUCKET_MS
          expect((yield* meteredBegin(s, rl, "k", "C", "f", first, meter)).rate.remaining).toBe(2)
          expect((yield* rl.consume("k", 4, first)).remaining).toBe(1)
          const d = yield* meteredBegin(s, rl, "k", "D", "f", first, meter)
          expect([tag(d), d.rate.remaining]).toEqual(["Started", 0])
          expect(tag(yield* meteredBegin(s, rl, "k", "E", "f", first, meter))).toBe("RateLimited")
        })
      ))

    it("after a lease runs out a new attempt takes the key over; the stale owner can no longer complete", () =>
      run(
        Effect.gen(function* () {
          const { s, rl } = yield* stores
          const meter = { scope: "k", limit: 100 }
          const old = yield* meteredBegin(s, rl, "k", "L", "f", T0, meter)
          expect(tag(yield* meteredBegin(s, rl, "k", "L", "f", T0 + IDEMPOTENCY_LEASE_MS - 1, meter))).toBe(
            "InProgress"
          )
          const fresh = yield* meteredBegin(s, rl, "k", "L", "f", T0 + IDEMPOTENCY_LEASE_MS, meter)
          expect(tag(fresh)).toBe("Started")
          expect(tokenOf(fresh)).not.toBe(tokenOf(old))
          yield* s.complete("k", "L", tokenOf(old), answer("old"), T0 + IDEMPOTENCY_LEASE_MS + 1)
          expect(tag(yield* meteredBegin(s, rl, "k", "L", "f", T0 + IDEMPOTENCY_LEASE_MS + 2, meter))).toBe(
            "InProgress"
          )
          yield* s.complete("k", "L", tokenOf(fresh), answer("new"), T0 + IDEMPOTENCY_LEASE_MS + 3)
          const r = yield* meteredBegin(s, rl, "k", "L", "f", T0 + IDEMPOTENCY_LEASE_MS + 4, meter)
          expect(r._tag === "Begun" && r.begun._tag === "Replay" && r.begun.answer.body).toBe("new")
        })
      ))

    it("under concurrency: at most `limit` admitted, exactly one of them starts, the rest never overdraw the window", () =>
      run(
        Effect.gen(function* () {
          const { s, rl } = yield* stores
          const meter = { scope: "k", limit: 20 }
          const all = yield* Effect.forEach(
            Array.from({ length: 30 }, (_, i) => i),
            (i) => meteredBegin(s, rl, "k", "D", i % 3 === 0 ? "other" : "f", T0, meter),
            { concurrency: "unbounded" }
          )
          expect(all.filter((r) => r._tag === "RateLimited").length).toBe(10)
          const begun = all.filter((r) => r._tag === "Begun")
          expect(begun.length).toBe(20)
          expect(begun.filter((r) => tag(r) === "Started").length).toBe(1)
          expect(begun.every((r) => ["Started", "InProgress", "Conflict"].includes(tag(r)))).toBe(true)
          expect((yield* rl.peek("k", 20, T0)).remaining).toBe(0)
          // Concurrent replays of the stored answer each spend a unit and replay it byte for byte.
          const owner = begun.find((r) => tag(r) === "Started") as MeteredBeginResult
          const fp = all.indexOf(owner) % 3 === 0 ? "other" : "f"
          yield* s.complete("k", "D", tokenOf(owner), answer('{"x":"1.50"}'), T0 + 1)
          const later = T0 + WINDOW_MS + BUCKET_MS
          const replays = yield* Effect.forEach(
            Array.from({ length: 12 }),
            () => meteredBegin(s, rl, "k", "D", fp, later, { scope: "k", limit: 10 }),
            { concurrency: "unbounded" }
          )
          expect(replays.filter((r) => r._tag === "RateLimited").length).toBe(2)
          for (const r of replays.filter((r) => r._tag === "Begun")) {
            expect(r._tag === "Begun" && r.begun).toEqual({ _tag: "Replay", answer: answer('{"x":"1.50"}') })
          }
        })
      ))
  })

  describe(`${name}: RateLimiter`, () => {
    it("admits `limit` in any rolling window and returns units as they age out", () =>
      run(
        Effect.gen(function* () {
          const rl = yield* RateLimiter
          // Two admissions per one-second bucket over 30 s.
          for (let i = 0; i < 60; i++) expect((yield* rl.consume("k", 60, T0 + i * 500)).allowed).toBe(true)
          const over = yield* rl.consume("k", 60, T0 + 30_000)
          expect(over.allowed).toBe(false)
          expect(over.remaining).toBe(0)
          expect(over.resetAtMs).toBe(T0 + WINDOW_MS + BUCKET_MS)
          expect((yield* rl.consume("k", 60, T0 + WINDOW_MS)).allowed).toBe(false)
          expect((yield* rl.consume("k", 60, T0 + WINDOW_MS + BUCKET_MS - 1)).allowed).toBe(false)
          const back = yield* rl.consume("k", 60, T0 + WINDOW_MS + BUCKET_MS)
          expect(back.allowed).toBe(true)
          expect(back.remaining).toBe(1)
          expect((yield* rl.peek("k", 60, T0 + WINDOW_MS + 2 * BUCKET_MS)).remaining).toBe(3)
          expect((yield* rl.peek("other", 60, T0)).remaining).toBe(60)
        })
      ))

    it("never admits more than `limit` in any rolling 60 s window", () =>
      run(
        Effect.gen(function* () {
          const rl = yield* RateLimiter
          const admitted: Array<number> = []
          // A request every 250 ms for 3 minutes against a limit of 60.
          for (let t = 0; t < 180_000; t += 250) {
            if ((yield* rl.consume("k", 60, T0 + t)).allowed) admitted.push(t)
          }
          for (const start of admitted) {
            const inWindow = admitted.filter((t) => t >= start && t < start + WINDOW_MS).length
            expect(inWindow).toBeLessThanOrEqual(60)
          }
          expect(admitted.length).toBeGreaterThanOrEqual(170)
        })
      ))

    it("admits at most `limit` of many concurrent requests", () =>
      run(
        Effect.gen(function* () {
          const rl = yield* RateLimiter
          const all = yield* Effect.forEach(Array.from({ length: 100 }), () => rl.consume("k", 60, T0), {
            concurrency: "unbounded"
          })
          expect(all.filter((w) => w.allowed).length).toBe(60)
        })
      ))
  })
}
