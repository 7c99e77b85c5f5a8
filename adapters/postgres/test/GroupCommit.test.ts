/**
 * Group commit on server PostgreSQL (`GroupCommit.ts`, `md_batch`): exactness over two service instances whose
 * store calls go out in batches; a member's SQL error fails that member alone; batches touching the same rows in
 * opposite orders do not deadlock; and a batch whose backend is terminated mid-statement fails all its members
 * the transient way (503), frees what they held, and their retries run once and are charged once.
 * Runs when TEST_DATABASE_URL is set; says so when skipped.
 */
import { randomUUID } from "node:crypto"
import { createKey, type Handler, Handlers, handle, type PipelineServices, Settings, statusOf } from "@market-data/core"
import { type Context, Deferred, Effect, Layer } from "effect"
import * as Digest from "effect/crypto/Digest"
import * as SecureRandom from "effect/crypto/SecureRandom"
import { sql } from "kysely"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeTestPlane } from "../../../core/test/support/TestPlane.ts"
import { type Database, openPostgres } from "../src/Database.ts"
import { BatchMemberError, type GroupCommit, type GroupCommitOptions } from "../src/GroupCommit.ts"
import { makePgMoneyStore } from "../src/PgMoneyStore.ts"
import { layerPgStores } from "../src/PgStores.ts"
import { postgresTestDatabase, TEST_DATABASE_URL, type TestDatabase } from "./support.ts"

/** A URL on the test schema whose connections carry `applicationName` (to find their backends). */
const tagged = (url: string, applicationName: string): string => {
  const u = new URL(url)
  u.searchParams.set("application_name", applicationName)
  return u.toString()
}

const services = async (database: Database, handlers: ReadonlyMap<string, Handler>) =>
  Effect.runPromise(
    Layer.build(
      Layer.mergeAll(
        layerPgStores(database),
        Layer.succeed(Settings)({ rateLimitPerMinute: 100_000 }),
        Digest.layerWebCrypto,
        SecureRandom.layerWebCrypto,
        Layer.succeed(Handlers)(handlers)
      )
    ).pipe(Effect.scoped)
  )

if (TEST_DATABASE_URL === undefined) {
  console.warn("group commit tests SKIPPED: set TEST_DATABASE_URL=postgres://... to run them")
  describe.skip("group commit (skipped: TEST_DATABASE_URL is not set)", () => {})
} else {
  describe("group commit on server PostgreSQL", () => {
    let t: TestDatabase
    const opened: Array<Database> = []
    const open = (options: GroupCommitOptions, applicationName = "md_gc_test", poolSize = 6): Database => {
      const d = openPostgres(tagged(t.url as string, applicationName), { poolSize, groupCommit: options })
      opened.push(d)
      return d
    }
    beforeAll(async () => {
      t = await postgresTestDatabase(TEST_DATABASE_URL as string, 4)
    }, 60_000)
    afterAll(async () => {
      for (const d of opened) await d.close()
      await t?.drop()
    })

    const newKey = async (credits: number) => {
      const built = await services(t.database, new Map())
      const k = await Effect.runPromise(createKey({ credits, rateLimitPerMinute: 100_000 }).pipe(Effect.provide(built)))
      return { key: k.key, id: k.record.id }
    }
    const direct = () => makePgMoneyStore(t.database)
    const books = async (keyId: string) => ({
      balance: await Effect.runPromise(direct().balance(keyId, Date.now())),
      charges: (await Effect.runPromise(direct().entries(keyId))).filter((e) => e.kind === "charge").length,
      activeHolds: Number(
        (
          await sql<{ n: string }>`select count(*) as n from ledger_holds
            where key_id = ${keyId} and state = 'active'`.execute(t.database.db)
        ).rows[0]?.n
      ),
      inFlight: Number(
        (
          await sql<{ n: string }>`select count(*) as n from idempotency_records
            where key_id = ${keyId} and state = 'in_flight'`.execute(t.database.db)
        ).rows[0]?.n
      )
    })
    /** An `md_admit` call holding `hold` credits, without an Idempotency-Key. */
    const admit = (keyId: string, hold: number, now: number) => ({
      f: "admit",
      k: keyId,
      a: {
        key: keyId,
        now,
        scope: keyId,
        limit: 100_000,
        bucket: now,
        since: 0,
        hold,
        hold_id: `hold_${randomUUID()}`,
        hold_until: now + 60_000,
        idem_key: null,
        fingerprint: null,
        token: null,
        lease_until: now
      }
    })
    const gc = (d: Database): GroupCommit => {
      if (d.groupCommit === undefined) throw new Error("group commit is off")
      return d.groupCommit
    }

    it("200 concurrent paid requests over two instances with 100 credits: exactly 100 served, balance 0, in batches", async () => {
      const k = await newKey(100)
      const plane = await Effect.runPromise(makeTestPlane())
      const options = { windowMs: 1, maxBatch: 64, maxInFlight: 4 }
      const instances = [open(options), open(options)]
      const contexts = await Promise.all(instances.map((d) => services(d, plane.handlers)))
      const before = instances.map((d) => d.statements?.() ?? 0)
      const answers = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          Effect.runPromise(
            handle({
              operation: "price",
              params: [["id", "crypto:bitcoin"]],
              authorization: [`Bearer ${k.key}`],
              // Half of them with an Idempotency-Key (hold and settle), half without (the metered charge).
              ...(i % 4 < 2 ? { idempotencyKey: [`gc-${i}`] } : {}),
              client: "test"
            }).pipe(Effect.provide(contexts[i % 2] as Context.Context<PipelineServices>))
          )
        )
      )
      const statuses = answers.map((a) => statusOf(a.outcome))
      expect(statuses.filter((s) => s === 200).length).toBe(100)
      expect(statuses.filter((s) => s === 402).length).toBe(100)
      expect(await books(k.id)).toEqual({ balance: 0, charges: 100, activeHolds: 0, inFlight: 0 })
      // The calls went out in batches: fewer statements than calls, on both instances.
      for (const [i, d] of instances.entries()) {
        const stats = gc(d).stats()
        expect(stats.failedBatches).toBe(0)
        expect(stats.largest).toBeGreaterThan(1)
        expect((d.statements?.() ?? 0) - (before[i] ?? 0)).toBeLessThan(stats.calls)
      }
    }, 60_000)

    it("a member whose SQL fails is answered its error alone; the others in the same statement commit", async () => {
      const k1 = await newKey(10)
      const k2 = await newKey(10)
      // Four calls fill the batch: they go out as one statement.
      const d = open({ windowMs: 60_000, maxBatch: 4, maxInFlight: 1 })
      const now = Date.now()
      const results = await Promise.allSettled([
        gc(d).call(admit(k1.id, 3, now)),
        // md_charge refuses a charge above the required amount (`raise exception`, SQLSTATE P0001).
        gc(d).call({
          f: "charge",
          k: k1.id,
          a: {
            key: k1.id,
            required: 1,
            charge: 5,
            reason: "price",
            now,
            scope: k1.id,
            limit: 100,
            bucket: now,
            since: 0
          }
        }),
        gc(d).call({ f: "no_such_call", k: k2.id, a: {} }),
        gc(d).call(admit(k2.id, 3, now))
      ])
      expect(gc(d).stats()).toMatchObject({ batches: 1, calls: 4, failedBatches: 0 })
      expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "rejected", "fulfilled"])
      expect(results[0]).toMatchObject({ status: "fulfilled", value: { outcome: "admitted" } })
      expect(results[3]).toMatchObject({ status: "fulfilled", value: { outcome: "admitted" } })
      const codes = results.map((r) =>
        r.status === "rejected" && r.reason instanceof BatchMemberError ? r.reason.code : undefined
      )
      expect(codes).toEqual([undefined, "P0001", "22023", undefined])
      // The holds of the good members committed; the failed charge left no trace (its rate unit, no charge):
      // k1 spent one unit, the admission's.
      expect((await books(k1.id)).activeHolds).toBe(1)
      expect((await books(k2.id)).activeHolds).toBe(1)
      expect((await books(k1.id)).charges).toBe(0)
      const units = await sql<{ n: string }>`select coalesce(sum(count), 0) as n from rate_limit_buckets
        where scope = ${k1.id}`.execute(t.database.db)
      expect(Number(units.rows[0]?.n)).toBe(1)
    })

    it("batches taking the same rows in opposite orders do not deadlock: members run in lock order", async () => {
      const keys = await Promise.all([newKey(1_000), newKey(1_000), newKey(1_000)])
      const options = { windowMs: 60_000, maxBatch: 6, maxInFlight: 1 }
      const a = open(options)
      const b = open(options)
      const rejected: Array<unknown> = []
      for (let round = 0; round < 30; round++) {
        const now = Date.now()
        const member = (key: { id: string }) => [
          admit(key.id, 1, now),
          {
            f: "charge",
            k: key.id,
            a: {
              key: key.id,
              required: 1,
              charge: 1,
              reason: "price",
              now,
              scope: key.id,
              limit: 100_000,
              bucket: now,
              since: 0
            }
          }
        ]
        // Each batch sends the keys in the opposite order of the other: without the lock order in md_batch they
        // would wait on each other's scope and account rows.
        const forward = keys.flatMap((key) => member(key).reverse())
        const backward = [...keys].reverse().flatMap((key) => member(key))
        const settled = await Promise.allSettled([
          ...forward.map((c) => gc(a).call(c)),
          ...backward.map((c) => gc(b).call(c))
        ])
        for (const s of settled) if (s.status === "rejected") rejected.push(s.reason)
      }
      expect(rejected).toEqual([])
      for (const key of keys) {
        const b = await books(key.id)
        expect(b.charges).toBe(60)
        expect(b.activeHolds).toBe(60)
      }
    }, 60_000)

    it("a backend terminated during a batch: every member answers 503, holds are freed, each retry runs once", async () => {
      const k = await newKey(10)
      const app = `md_gc_kill_${randomUUID().slice(0, 8)}`
      const d = open({ windowMs: 1, maxBatch: 64, maxInFlight: 4 }, app)
      const state = { runs: 0, waiting: 0 }
      let gate = await Effect.runPromise(Deferred.make<void>())
      const price: Handler = () =>
        Effect.gen(function* () {
          state.runs++
          state.waiting++
          yield* Deferred.await(gate)
          state.waiting--
          return { _tag: "Json" as const, body: { data: { usd: 1 } }, creditsCharged: 1 }
        })
      const ctx = await services(d, new Map([["price", price]]))
      const call = (idem: string) =>
        Effect.runPromise(
          handle({
            operation: "price",
            params: [["id", "crypto:bitcoin"]],
            authorization: [`Bearer ${k.key}`],
            idempotencyKey: [idem],
            client: "test"
          }).pipe(Effect.provide(ctx))
        )
      const N = 5
      const until = async (what: string, ok: () => boolean | Promise<boolean>) => {
        const deadline = Date.now() + 20_000
        while (!(await ok())) {
          if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
          await new Promise((r) => setTimeout(r, 10))
        }
      }
      const pending = Array.from({ length: N }, (_, i) => call(`kill-${i}`))
      let done = 0
      for (const p of pending) void p.then(() => done++)
      // Every request holds its credit and waits in its handler.
      await until("the holds", () => state.waiting === N)
      expect((await books(k.id)).activeHolds).toBe(N)
      // The account row is taken elsewhere, so the settlements' batch waits on it; then its backend is killed.
      const blocker = new pg.Client({ connectionString: t.url as string })
      await blocker.connect()
      await blocker.query("begin")
      await blocker.query("select 1 from ledger_accounts where key_id = $1 for update", [k.id])
      await Effect.runPromise(Deferred.succeed(gate, undefined))
      // Watched from another connection: inside its transaction the blocker sees one snapshot of pg_stat_activity.
      const monitor = new pg.Client({ connectionString: t.url as string })
      await monitor.connect()
      let terminated = 0
      await until("every member answered", async () => {
        const killed = await monitor.query(
          `select pg_terminate_backend(pid) as ok from pg_stat_activity
            where application_name = $1 and query like 'select md_batch%' and wait_event_type = 'Lock'`,
          [app]
        )
        terminated += killed.rowCount ?? 0
        return done === N
      })
      await blocker.query("rollback")
      await blocker.end()
      await monitor.end()
      expect(terminated).toBeGreaterThan(0)
      const answers = await Promise.all(pending)
      expect(answers.map((a) => (a.outcome._tag === "Failure" ? a.outcome.error.code : a.outcome._tag))).toEqual(
        Array.from({ length: N }, () => "source_unavailable")
      )
      expect(gc(d).stats().failedBatches).toBeGreaterThan(0)
      // Nothing charged. Each retry first makes the releases the failure could not (pending releases), then runs
      // once and is charged once; a second retry replays.
      expect((await books(k.id)).charges).toBe(0)
      gate = await Effect.runPromise(Deferred.make<void>())
      await Effect.runPromise(Deferred.succeed(gate, undefined))
      // All at once: the first retry makes the key's pending releases and the others wait for it (Pipeline.ts
      // `retryPendingReleases`), so none meets its record still in flight (`request_in_progress`).
      const retries = await Promise.all(Array.from({ length: N }, (_, i) => call(`kill-${i}`)))
      expect(retries.map((a) => (a.outcome._tag === "Failure" ? a.outcome.error.code : a.outcome._tag))).toEqual(
        Array.from({ length: N }, () => "Json")
      )
      const replays = await Promise.all(Array.from({ length: N }, (_, i) => call(`kill-${i}`)))
      expect(replays.map((a) => a.outcome._tag)).toEqual(Array.from({ length: N }, () => "Replay"))
      expect(state.runs).toBe(2 * N)
      expect(await books(k.id)).toEqual({ balance: 10 - N, charges: N, activeHolds: 0, inFlight: 0 })
    }, 60_000)

    it("a call that cannot be serialized fails alone, before anything is sent", async () => {
      const k = await newKey(7)
      const d = open({ windowMs: 0, maxBatch: 64, maxInFlight: 1 })
      const cyclic: Record<string, unknown> = {}
      cyclic.self = cyclic
      const r = await Promise.allSettled([
        gc(d).call({ f: "available", k: k.id, a: { key: cyclic } }),
        gc(d).call({ f: "available", k: k.id, a: { key: k.id, now: Date.now() } })
      ])
      expect(r[0]?.status).toBe("rejected")
      expect(r[1]).toEqual({ status: "fulfilled", value: 7 })
      expect(gc(d).stats()).toMatchObject({ batches: 1, calls: 1 })
    })
  })
}
