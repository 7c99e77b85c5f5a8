/**
 * Contract suites for the store ports. Every implementation (memory, PGlite, PostgreSQL) runs these same
 * suites: `storeContracts("memory", () => memoryStores())`. Each test gets a fresh layer from `make`.
 */
import { Effect, type Layer } from "effect"
import { describe, expect, it } from "vitest"
import { type KeyRecord, KeyStore } from "../../src/Keys.ts"
import { HOLD_LEASE_MS, IDEMPOTENCY_LEASE_MS, REPLAY_WINDOW_MS, type StoredAnswer } from "../../src/Money.ts"
import { type AdmitResult, MoneyStore, type Ticket } from "../../src/MoneyStore.ts"
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

  describe(`${name}: MoneyStore`, () => {
    /** A meter whose limit never refuses, on its own scope (the tests of the rate unit use their own). */
    const free = (keyId: string) => ({ scope: `free:${keyId}`, limit: 1_000_000 })
    /** Admits a request holding `amount` (optionally under an Idempotency-Key): its ticket, or undefined. */
    const hold = (keyId: string, amount: number, nowMs: number, idempotency?: { key: string; fingerprint: string }) =>
      Effect.flatMap(MoneyStore, (m) =>
        Effect.map(
          m.admit({ keyId, nowMs, meter: free(keyId), hold: amount, ...(idempotency ? { idempotency } : {}) }),
          (r) => (r._tag === "Admitted" ? r.ticket : undefined)
        )
      )
    const settle = (ticket: Ticket, charge: number, nowMs: number, body = "{}", required = ticket.held) =>
      Effect.flatMap(MoneyStore, (m) =>
        m.finish(ticket, { _tag: "Settle", charge, required, reason: "price", answer: answer(body) }, nowMs)
      )
    const release = (ticket: Ticket, nowMs: number) =>
      Effect.flatMap(MoneyStore, (m) => m.finish(ticket, { _tag: "Release" }, nowMs))
    /** What admitting under an Idempotency-Key finds, holding nothing. */
    const begin = (keyId: string, key: string, fingerprint: string, nowMs: number) =>
      Effect.flatMap(MoneyStore, (m) =>
        m.admit({ keyId, nowMs, meter: free(keyId), hold: 0, idempotency: { key, fingerprint } })
      )

    it("balance is grants minus charges minus live holds, never below zero", () =>
      run(
        Effect.gen(function* () {
          const money = yield* MoneyStore
          expect(yield* money.balance("k", T0)).toBe(0)
          expect(yield* money.grant("k", 10, "grant", T0)).toBe(10)
          const h = yield* hold("k", 7, T0)
          expect(h?.held).toBe(7)
          expect(yield* money.balance("k", T0)).toBe(3)
          expect(yield* hold("k", 4, T0)).toBeUndefined()
          const short = yield* money.admit({ keyId: "k", nowMs: T0, meter: free("k"), hold: 4 })
          expect(short).toMatchObject({ _tag: "Insufficient", available: 3, rate: { allowed: true } })
          expect(yield* settle(h!, 5, T0 + 10)).toEqual({ _tag: "Settled", charged: 5 })
          expect(yield* money.balance("k", T0 + 10)).toBe(5)
          const entries = yield* money.entries("k")
          expect(entries.map((e) => [e.kind, e.amount, e.reason])).toEqual([
            ["grant", 10, "grant"],
            ["charge", 5, "price"]
          ])
          // A charge above the hold or the required amount is a bug, refused without charging.
          const h2 = (yield* hold("k", 2, T0 + 10))!
          expect((yield* Effect.exit(settle(h2, 3, T0 + 10)))._tag).toBe("Failure")
          expect((yield* Effect.exit(settle(h2, 2, T0 + 10, "{}", 1)))._tag).toBe("Failure")
          expect((yield* Effect.exit(money.admit({ keyId: "k", nowMs: T0, meter: free("k"), hold: -1 })))._tag).toBe(
            "Failure"
          )
          expect(yield* money.balance("k", T0 + 10)).toBe(3)
        })
      ))

    it("resolves a hold exactly once", () =>
      run(
        Effect.gen(function* () {
          const money = yield* MoneyStore
          yield* money.grant("k", 10, "grant", T0)
          const h = (yield* hold("k", 4, T0))!
          expect((yield* settle(h, 4, T0))._tag).toBe("Settled")
          expect((yield* settle(h, 4, T0))._tag).toBe("AlreadyResolved")
          yield* release(h, T0)
          expect(yield* money.balance("k", T0)).toBe(6)
          const r = (yield* hold("k", 6, T0))!
          expect(yield* release(r, T0)).toEqual({ _tag: "Released" })
          expect((yield* settle(r, 6, T0))._tag).toBe("AlreadyResolved")
          expect(yield* money.balance("k", T0)).toBe(6)
          expect((yield* money.entries("k")).filter((e) => e.kind === "charge").length).toBe(1)
        })
      ))

    it("an expired hold stops reserving at its lease, and settles only if the balance still covers it", () =>
      run(
        Effect.gen(function* () {
          const money = yield* MoneyStore
          yield* money.grant("k", 5, "grant", T0)
          const h = (yield* hold("k", 5, T0))!
          expect(yield* money.balance("k", T0 + HOLD_LEASE_MS - 1)).toBe(0)
          expect(yield* money.balance("k", T0 + HOLD_LEASE_MS)).toBe(5)
          const other = (yield* hold("k", 3, T0 + HOLD_LEASE_MS))!
          expect(other).toBeDefined()
          expect((yield* settle(h, 5, T0 + HOLD_LEASE_MS + 1))._tag).toBe("Expired")
          expect((yield* settle(other, 3, T0 + HOLD_LEASE_MS + 1))._tag).toBe("Settled")
          expect(yield* money.balance("k", T0 + HOLD_LEASE_MS + 1)).toBe(2)
        })
      ))

    it("settles an expired hold when the balance still covers it", () =>
      run(
        Effect.gen(function* () {
          const money = yield* MoneyStore
          yield* money.grant("k", 5, "grant", T0)
          const h = (yield* hold("k", 2, T0))!
          expect(yield* settle(h, 2, T0 + HOLD_LEASE_MS + 5)).toEqual({ _tag: "Settled", charged: 2 })
          expect(yield* money.balance("k", T0 + HOLD_LEASE_MS + 5)).toBe(3)
        })
      ))

    it("never lets concurrent admissions overdraw", () =>
      run(
        Effect.gen(function* () {
          const money = yield* MoneyStore
          yield* money.grant("k", 50, "grant", T0)
          const holds = yield* Effect.forEach(Array.from({ length: 100 }), () => hold("k", 1, T0), {
            concurrency: "unbounded"
          })
          expect(holds.filter((h) => h !== undefined).length).toBe(50)
          expect(yield* money.balance("k", T0)).toBe(0)
        })
      ))

    it("admits in order: rate unit, key revoked, Idempotency-Key, hold; a refused hold leaves the key free", () =>
      run(
        Effect.gen(function* () {
          const money = yield* MoneyStore
          const keys = yield* KeyStore
          const meter = { scope: "k", limit: 3 }
          const idempotency = { key: "R", fingerprint: "price?id=a" }
          // No credits: the hold is refused after the unit is spent, and the key stays free.
          const short = yield* money.admit({ keyId: "k", nowMs: T0, meter, hold: 2, idempotency })
          expect(short).toMatchObject({ _tag: "Insufficient", available: 0, rate: { allowed: true, remaining: 2 } })
          yield* money.grant("k", 2, "top-up", T0)
          const ok = yield* money.admit({ keyId: "k", nowMs: T0 + 1, meter, hold: 2, idempotency })
          expect(ok).toMatchObject({ _tag: "Admitted", rate: { remaining: 1 }, ticket: { keyId: "k", held: 2 } })
          // The same request now: in progress (nothing held); a different one: conflict.
          expect((yield* money.admit({ keyId: "k", nowMs: T0 + 2, meter, hold: 2, idempotency }))._tag).toBe(
            "InProgress"
          )
          // The window is spent: refused before anything else is looked at.
          const limited = yield* money.admit({ keyId: "k", nowMs: T0 + 3, meter, hold: 2, idempotency })
          expect(limited).toMatchObject({ _tag: "RateLimited", rate: { allowed: false, remaining: 0 } })
          expect(money.hint("k").rateBlockedUntilMs).toBeGreaterThan(T0 + 3)
          const wide = { scope: "k2", limit: 100 }
          const other = { key: "R", fingerprint: "price?id=b" }
          expect(
            (yield* money.admit({ keyId: "k", nowMs: T0 + 4, meter: wide, hold: 0, idempotency: other }))._tag
          ).toBe("Conflict")
          // A revoked key is refused after its unit, before its Idempotency-Key: nothing begun, nothing held.
          const rec = record(42)
          yield* keys.insert(rec)
          yield* money.grant(rec.id, 5, "grant", T0)
          yield* keys.revoke(rec.id, new Date(T0 + 5))
          const revoked = yield* money.admit({ keyId: rec.id, nowMs: T0 + 6, meter: wide, hold: 1, idempotency })
          expect(revoked).toMatchObject({ _tag: "KeyRevoked", rate: { allowed: true } })
          const charged = yield* money.charge({
            keyId: rec.id,
            required: 1,
            charge: 1,
            reason: "price",
            nowMs: T0 + 6,
            meter: wide
          })
          expect(charged._tag).toBe("KeyRevoked")
          expect(yield* money.balance(rec.id, T0 + 6)).toBe(5)
        })
      ))

    it("a settlement under an Idempotency-Key stores the answer in the same step; it replays for 24 h", () =>
      run(
        Effect.gen(function* () {
          const money = yield* MoneyStore
          yield* money.grant("k", 10, "grant", T0)
          const t = (yield* hold("k", 3, T0, { key: "R", fingerprint: "price?id=a" }))!
          expect(t.idempotency?.key).toBe("R")
          expect(yield* settle(t, 3, T0 + 5, '{"paid":true}')).toEqual({ _tag: "Settled", charged: 3 })
          const replay = yield* begin("k", "R", "price?id=a", T0 + 6)
          expect(replay._tag === "Replay" && replay.answer).toEqual(answer('{"paid":true}'))
          expect((yield* begin("k", "R", "price?id=b", T0 + 6))._tag).toBe("Conflict")
          expect((yield* begin("k", "R", "price?id=a", T0 + 5 + REPLAY_WINDOW_MS - 1))._tag).toBe("Replay")
          expect((yield* begin("k", "R", "price?id=a", T0 + 5 + REPLAY_WINDOW_MS))._tag).toBe("Admitted")
          expect(yield* money.balance("k", T0 + 6)).toBe(7)
        })
      ))

    it("Keep stores a failure's answer and releases; Release frees the key and the hold", () =>
      run(
        Effect.gen(function* () {
          const money = yield* MoneyStore
          yield* money.grant("k", 10, "grant", T0)
          const failed = { status: 404, headers: { "x-credits-charged": "0" }, body: '{"error":"unknown_asset"}' }
          const a = (yield* hold("k", 4, T0, { key: "A", fingerprint: "f" }))!
          expect(yield* money.finish(a, { _tag: "Keep", answer: failed }, T0 + 1)).toEqual({ _tag: "Released" })
          const replay = yield* begin("k", "A", "f", T0 + 2)
          expect(replay._tag === "Replay" && replay.answer).toEqual(failed)
          const b = (yield* hold("k", 4, T0, { key: "B", fingerprint: "f" }))!
          expect(yield* money.balance("k", T0 + 1)).toBe(6)
          expect(yield* release(b, T0 + 1)).toEqual({ _tag: "Released" })
          expect(yield* money.balance("k", T0 + 1)).toBe(10)
          expect((yield* begin("k", "B", "f", T0 + 2))._tag).toBe("Admitted")
          expect((yield* money.entries("k")).filter((e) => e.kind === "charge")).toEqual([])
        })
      ))

    it("without a hold (compared first), a settlement charges only if the balance covers the required amount", () =>
      run(
        Effect.gen(function* () {
          const money = yield* MoneyStore
          // No credits: admitted holding nothing (a 304 would cost nothing).
          const t = (yield* hold("k", 0, T0, { key: "C", fingerprint: "read?id=a" }))!
          expect(t).toMatchObject({ holdId: undefined, held: 0 })
          // Changed data, not covered: refused, nothing charged, the key free for a retry after a top-up.
          const short = yield* settle(t, 5, T0 + 1, "{}", 5)
          expect(short).toEqual({ _tag: "Insufficient", available: 0 })
          expect((yield* begin("k", "C", "read?id=a", T0 + 2))._tag).toBe("Admitted")
          yield* money.grant("k", 5, "top-up", T0 + 2)
          const u = (yield* hold("k", 0, T0 + 3, { key: "D", fingerprint: "read?id=a" }))!
          expect(yield* settle(u, 5, T0 + 4, '{"v":1}', 5)).toEqual({ _tag: "Settled", charged: 5 })
          expect(yield* money.balance("k", T0 + 4)).toBe(0)
          const replay = yield* begin("k", "D", "read?id=a", T0 + 5)
          expect(replay._tag === "Replay" && replay.answer.body).toBe('{"v":1}')
        })
      ))

    it("a request whose Idempotency-Key passed to a retry charges nothing and stores nothing", () =>
      run(
        Effect.gen(function* () {
          const money = yield* MoneyStore
          yield* money.grant("k", 10, "grant", T0)
          // Attempt A is admitted, then outlives its lease; retry B takes the record, is charged, stored.
          const a = (yield* hold("k", 2, T0, { key: "R", fingerprint: "price?id=a" }))!
          const later = T0 + IDEMPOTENCY_LEASE_MS + 1
          expect((yield* begin("k", "R", "price?id=a", T0 + IDEMPOTENCY_LEASE_MS - 1))._tag).toBe("InProgress")
          const b = (yield* hold("k", 2, later, { key: "R", fingerprint: "price?id=a" }))!
          expect(b.idempotency?.token).not.toBe(a.idempotency?.token)
          expect((yield* settle(b, 2, later + 1, '{"by":"B"}'))._tag).toBe("Settled")
          // A finally settles: superseded, nothing charged, B's answer kept; its late release frees nothing.
          expect(yield* settle(a, 2, later + 2, '{"by":"A"}')).toEqual({ _tag: "Superseded" })
          yield* release(a, later + 2)
          expect(yield* money.balance("k", later + 2)).toBe(8)
          const replay = yield* begin("k", "R", "price?id=a", later + 3)
          expect(replay._tag === "Replay" && replay.answer.body).toBe('{"by":"B"}')
          // The same while B is still in flight: A's settlement is refused, B's record untouched.
          const c = (yield* hold("k", 1, T0, { key: "S", fingerprint: "price?id=c" }))!
          expect((yield* begin("k", "S", "price?id=c", later))._tag).toBe("Admitted")
          expect(yield* settle(c, 1, later + 1)).toEqual({ _tag: "Superseded" })
          yield* release(c, later + 1)
          expect((yield* begin("k", "S", "price?id=c", later + 2))._tag).toBe("InProgress")
          expect(yield* money.balance("k", later + 2)).toBe(8)
        })
      ))

    it("a metered charge spends one rate unit and charges only when the balance covers the hold amount", () =>
      run(
        Effect.gen(function* () {
          const money = yield* MoneyStore
          const limiter = yield* RateLimiter
          const meter = { scope: "k", limit: 3 }
          const charge = (required: number, amount: number, nowMs: number) =>
            money.charge({ keyId: "k", required, charge: amount, reason: "price", nowMs, meter })
          yield* money.grant("k", 10, "grant", T0)
          const h = (yield* hold("k", 4, T0))!
          // 10 booked, 4 held: 6 available. Requires 7: refused, the unit still spent.
          const short = yield* charge(7, 7, T0)
          expect(short._tag).toBe("Insufficient")
          expect(short._tag === "Insufficient" && short.available).toBe(6)
          expect(short.rate).toMatchObject({ allowed: true, remaining: 2 })
          // Requires 6 (a batch), delivered 5: charges 5.
          const ok = yield* charge(6, 5, T0 + 1)
          expect(ok).toMatchObject({ _tag: "Charged", available: 1, rate: { allowed: true, remaining: 1 } })
          expect(yield* money.balance("k", T0 + 1)).toBe(1)
          // A zero charge spends the unit and nothing else.
          expect((yield* charge(0, 0, T0 + 2))._tag).toBe("Charged")
          // The window is spent: refused before any charge, and the limiter agrees.
          const limited = yield* charge(1, 1, T0 + 3)
          expect(limited._tag).toBe("RateLimited")
          expect(limited.rate.allowed).toBe(false)
          expect((yield* limiter.peek("k", 3, T0 + 3)).remaining).toBe(0)
          expect(money.hint("k").rateBlockedUntilMs).toBeGreaterThan(T0 + 3)
          // Units return as the window rolls; the released hold frees its credits.
          yield* release(h, T0 + 3)
          const later = T0 + WINDOW_MS + 2 * BUCKET_MS
          expect(yield* charge(5, 5, later)).toMatchObject({ _tag: "Charged", available: 0 })
          expect((yield* money.entries("k")).map((e) => [e.kind, e.amount])).toEqual([
            ["grant", 10],
            ["charge", 5],
            ["charge", 5]
          ])
          expect((yield* Effect.exit(charge(1, 2, later)))._tag).toBe("Failure")
        })
      ))

    it("never lets concurrent charges and admissions overdraw or exceed the rate limit", () =>
      run(
        Effect.gen(function* () {
          const money = yield* MoneyStore
          yield* money.grant("k", 50, "grant", T0)
          yield* money.grant("j", 1000, "grant", T0)
          const results = yield* Effect.forEach(
            Array.from({ length: 100 }),
            (_, i) =>
              i % 2 === 0
                ? money.charge({ keyId: "k", required: 1, charge: 1, reason: "price", nowMs: T0, meter: free("k") })
                : hold("k", 1, T0).pipe(Effect.map((h) => ({ _tag: h === undefined ? "Short" : "Held" }))),
            { concurrency: "unbounded" }
          )
          const taken = results.filter((r) => r._tag === "Charged" || r._tag === "Held").length
          expect(taken).toBe(50)
          expect(yield* money.balance("k", T0)).toBe(0)
          const rated = yield* Effect.forEach(
            Array.from({ length: 40 }),
            () =>
              money.charge({
                keyId: "j",
                required: 1,
                charge: 1,
                reason: "price",
                nowMs: T0,
                meter: { scope: "j", limit: 25 }
              }),
            { concurrency: "unbounded" }
          )
          expect(rated.filter((r) => r._tag === "Charged").length).toBe(25)
          expect(yield* money.balance("j", T0)).toBe(975)
        })
      ))

    it("spends the same units as RateLimiter.consume", () =>
      run(
        Effect.gen(function* () {
          const money = yield* MoneyStore
          const rl = yield* RateLimiter
          const meter = { scope: "k", limit: 4 }
          const admit = (key: string, nowMs: number) =>
            money.admit({ keyId: "k", nowMs, meter, hold: 0, idempotency: { key, fingerprint: "f" } })
          expect((yield* rl.consume("k", 4, T0)).allowed).toBe(true)
          expect((yield* admit("A", T0 + 1))._tag).toBe("Admitted")
          expect((yield* rl.consume("k", 4, T0 + 2)).remaining).toBe(1)
          const last = yield* admit("B", T0 + 1_500)
          expect([last._tag, last.rate.remaining]).toEqual(["Admitted", 0])
          expect((yield* rl.consume("k", 4, T0 + 1_600)).allowed).toBe(false)
          expect((yield* admit("C", T0 + 1_700))._tag).toBe("RateLimited")
          // Units return bucket by bucket: the first second's three come back, the next second's one counts.
          const first = T0 + WINDOW_MS + BUCKET_MS
          expect((yield* admit("C", first)).rate.remaining).toBe(2)
          expect((yield* rl.consume("k", 4, first)).remaining).toBe(1)
          const d = yield* admit("D", first)
          expect([d._tag, d.rate.remaining]).toEqual(["Admitted", 0])
          expect((yield* admit("E", first))._tag).toBe("RateLimited")
        })
      ))

    it("under concurrency: at most `limit` admitted units, exactly one request begins, replays are byte for byte", () =>
      run(
        Effect.gen(function* () {
          const money = yield* MoneyStore
          const rl = yield* RateLimiter
          yield* money.grant("k", 100, "grant", T0)
          const meter = { scope: "k", limit: 20 }
          const all = yield* Effect.forEach(
            Array.from({ length: 30 }, (_, i) => i),
            (i) =>
              money.admit({
                keyId: "k",
                nowMs: T0,
                meter,
                hold: 1,
                idempotency: { key: "D", fingerprint: i % 3 === 0 ? "other" : "f" }
              }),
            { concurrency: "unbounded" }
          )
          expect(all.filter((r) => r._tag === "RateLimited").length).toBe(10)
          const admitted = all.filter((r) => r._tag === "Admitted")
          expect(admitted.length).toBe(1)
          expect(all.every((r) => ["RateLimited", "Admitted", "InProgress", "Conflict"].includes(r._tag))).toBe(true)
          expect((yield* rl.peek("k", 20, T0)).remaining).toBe(0)
          expect(yield* money.balance("k", T0)).toBe(99)
          // Concurrent replays of the stored answer each spend a unit and replay it byte for byte.
          const owner = admitted[0] as Extract<AdmitResult, { _tag: "Admitted" }>
          const fp = all.indexOf(owner) % 3 === 0 ? "other" : "f"
          expect((yield* settle(owner.ticket, 1, T0 + 1, '{"x":"1.50"}'))._tag).toBe("Settled")
          const later = T0 + WINDOW_MS + BUCKET_MS
          const replays = yield* Effect.forEach(
            Array.from({ length: 12 }),
            () =>
              money.admit({
                keyId: "k",
                nowMs: later,
                meter: { scope: "k", limit: 10 },
                hold: 1,
                idempotency: { key: "D", fingerprint: fp }
              }),
            { concurrency: "unbounded" }
          )
          expect(replays.filter((r) => r._tag === "RateLimited").length).toBe(2)
          for (const r of replays.filter((r) => r._tag !== "RateLimited")) {
            expect(r._tag === "Replay" && r.answer).toEqual(answer('{"x":"1.50"}'))
          }
          expect(yield* money.balance("k", later)).toBe(99)
        })
      ))

    it("keeps keys apart and refuses non-positive grants", () =>
      run(
        Effect.gen(function* () {
          const money = yield* MoneyStore
          yield* money.grant("a", 3, "grant", T0)
          expect(yield* money.balance("b", T0)).toBe(0)
          expect((yield* Effect.exit(money.grant("a", 0, "zero", T0)))._tag).toBe("Failure")
          expect((yield* Effect.exit(money.grant("a", -1, "neg", T0)))._tag).toBe("Failure")
          expect(yield* money.balance("a", T0)).toBe(3)
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
