/**
 * Group commit on the embedded PGlite store (`openPglite` with `groupCommit`, as `serve` opens it by default):
 * concurrent paid requests against a limited balance serve exactly the balance, in batches; replays and `304`s
 * in the same batches as paid calls answer as they do alone; a member whose SQL fails is answered its error
 * alone while the others commit; the store contract suites and the money model pass with every per-request call
 * batched. The first suite runs with PGlite on its worker thread (the default) and on the main thread.
 * (Kill safety of a batched commit: `test/embedded-kill.test.ts`.)
 */
import { randomUUID } from "node:crypto"
import {
  type ApiRequest,
  createKey,
  type Handler,
  Handlers,
  handle,
  type PipelineServices,
  Settings,
  statusOf
} from "@market-data/core"
import { type Context, Effect, Layer } from "effect"
import * as Digest from "effect/crypto/Digest"
import * as SecureRandom from "effect/crypto/SecureRandom"
import fc from "fast-check"
import { sql } from "kysely"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { actionArb, runProgram } from "../../../core/test/contracts/MoneyModel.ts"
import { storeContracts } from "../../../core/test/contracts/StoreContracts.ts"
import { makeTestPlane } from "../../../core/test/support/TestPlane.ts"
import type { Database } from "../src/Database.ts"
import { BatchMemberError, type GroupCommit, type GroupCommitOptions } from "../src/GroupCommit.ts"
import { makePgMoneyStore } from "../src/PgMoneyStore.ts"
import { layerPgStores } from "../src/PgStores.ts"
import { pgliteTestDatabase, type TestDatabase } from "./support.ts"

/** As `serve` opens the embedded store: `DATABASE_BATCH_MAX=64`, `DATABASE_BATCH_WINDOW_MS=1`. */
const SERVE_DEFAULTS: GroupCommitOptions = { windowMs: 1, maxBatch: 64, maxInFlight: 4 }

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

const gc = (d: Database): GroupCommit => {
  if (d.groupCommit === undefined) throw new Error("group commit is off")
  return d.groupCommit
}

const books = async (database: Database, keyId: string) => {
  const money = makePgMoneyStore(database)
  const count = async (query: ReturnType<typeof sql<{ n: string }>>) =>
    Number((await query.execute(database.db)).rows[0]?.n)
  return {
    balance: await Effect.runPromise(money.balance(keyId, Date.now())),
    charges: (await Effect.runPromise(money.entries(keyId))).filter((e) => e.kind === "charge").length,
    activeHolds: await count(
      sql<{ n: string }>`select count(*) as n from ledger_holds where key_id = ${keyId} and state = 'active'`
    ),
    inFlight: await count(
      sql<{ n: string }>`select count(*) as n from idempotency_records where key_id = ${keyId} and state = 'in_flight'`
    )
  }
}

// PGlite on its worker thread (`DATABASE_PGLITE_WORKER=on`, the default) and on the main thread (`off`).
describe.each([
  ["on its worker thread", true],
  ["on the main thread", false]
])("group commit on PGlite %s", (_, worker) => {
  let t: TestDatabase
  beforeAll(async () => {
    t = await pgliteTestDatabase(undefined, { groupCommit: SERVE_DEFAULTS, worker })
  }, 120_000)
  afterAll(() => t?.drop())

  it("is on, and counts its statements", () => {
    expect(t.database.groupCommit).toBeDefined()
    expect(t.database.statements?.()).toBeGreaterThan(0)
  })

  it("200 concurrent paid requests with 100 credits: exactly 100 served, balance 0, in batches", async () => {
    const plane = await Effect.runPromise(makeTestPlane())
    const context = await services(t.database, plane.handlers)
    const k = await Effect.runPromise(
      createKey({ credits: 100, rateLimitPerMinute: 100_000 }).pipe(Effect.provide(context))
    )
    const before = { stats: gc(t.database).stats(), statements: t.database.statements?.() ?? 0 }
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
          }).pipe(Effect.provide(context))
        )
      )
    )
    const statuses = answers.map((a) => statusOf(a.outcome))
    expect(statuses.filter((s) => s === 200).length).toBe(100)
    expect(statuses.filter((s) => s === 402).length).toBe(100)
    expect(await books(t.database, k.record.id)).toEqual({ balance: 0, charges: 100, activeHolds: 0, inFlight: 0 })
    const after = gc(t.database).stats()
    const calls = after.calls - before.stats.calls
    expect(after.failedBatches).toBe(before.stats.failedBatches)
    expect(after.largest).toBeGreaterThan(1)
    // Every paid call went through a batch (at least one per request), in fewer statements than calls.
    expect(calls).toBeGreaterThanOrEqual(200)
    expect((t.database.statements?.() ?? 0) - before.statements).toBeLessThan(calls)
  }, 60_000)

  it("replays and 304s batched with paid calls answer as alone: same bodies, no charge, exact books", async () => {
    const plane = await Effect.runPromise(makeTestPlane())
    const context = await services(t.database, plane.handlers)
    const k = await Effect.runPromise(
      createKey({ credits: 3, rateLimitPerMinute: 100_000 }).pipe(Effect.provide(context))
    )
    const call = (extra: Partial<ApiRequest>) =>
      Effect.runPromise(
        handle({
          operation: "read",
          params: [["id", "crypto:bitcoin"]],
          authorization: [`Bearer ${k.key}`],
          client: "test",
          ...extra
        }).pipe(Effect.provide(context as Context.Context<PipelineServices>))
      )
    const first = await call({ idempotencyKey: ["first"] })
    expect(first.outcome._tag).toBe("Json")
    const body = first.outcome._tag === "Json" ? first.outcome.body : "?"
    const etag = first.outcome._tag === "Json" ? (first.outcome.etag as string) : "?"
    const before = gc(t.database).stats()
    // One burst: replays of the first request, conditional reads with and without a key, and three paid reads
    // for the two credits left.
    const burst = await Promise.all([
      ...Array.from({ length: 5 }, () => call({ idempotencyKey: ["first"] })),
      ...Array.from({ length: 5 }, () => call({ ifNoneMatch: etag })),
      ...Array.from({ length: 5 }, (_, i) => call({ ifNoneMatch: etag, idempotencyKey: [`cond-${i}`] })),
      ...Array.from({ length: 3 }, (_, i) => call({ idempotencyKey: [`paid-${i}`] }))
    ])
    const tags = burst.map((a) => a.outcome._tag)
    expect(tags.slice(0, 5)).toEqual(Array.from({ length: 5 }, () => "Replay"))
    for (const a of burst.slice(0, 5)) expect(a.outcome._tag === "Replay" && a.outcome.answer.body).toBe(body)
    expect(tags.slice(5, 15)).toEqual(Array.from({ length: 10 }, () => "NotModified"))
    const paid = burst.slice(15).map((a) => statusOf(a.outcome))
    expect(paid.filter((s) => s === 200).length).toBe(2)
    expect(paid.filter((s) => s === 402).length).toBe(1)
    const after = gc(t.database).stats()
    expect(after.largest).toBeGreaterThan(1)
    expect(after.batches - before.batches).toBeLessThan(after.calls - before.calls)
    // The first read and the two paid ones: three charges, nothing held, nothing in flight.
    expect(await books(t.database, k.record.id)).toEqual({ balance: 0, charges: 3, activeHolds: 0, inFlight: 0 })
  }, 60_000)

  it("a member whose SQL fails is answered its error alone; the others in the same statement commit", async () => {
    const d = (
      await pgliteTestDatabase(undefined, { groupCommit: { windowMs: 60_000, maxBatch: 4, maxInFlight: 4 }, worker })
    ).database
    try {
      const context = await services(d, new Map())
      const [k1, k2] = await Promise.all(
        [10, 10].map((credits) =>
          Effect.runPromise(createKey({ credits, rateLimitPerMinute: 100_000 }).pipe(Effect.provide(context)))
        )
      )
      const id1 = k1?.record.id as string
      const id2 = k2?.record.id as string
      const now = Date.now()
      const admit = (keyId: string) => ({
        f: "admit",
        k: keyId,
        a: {
          key: keyId,
          now,
          scope: keyId,
          limit: 100_000,
          bucket: now,
          since: 0,
          hold: 3,
          hold_id: `hold_${randomUUID()}`,
          hold_until: now + 60_000,
          idem_key: null,
          fingerprint: null,
          token: null,
          lease_until: now
        }
      })
      const before = gc(d).stats()
      // Four calls fill the batch: they go out as one statement.
      const results = await Promise.allSettled([
        gc(d).call(admit(id1)),
        // md_charge refuses a charge above the required amount (`raise exception`, SQLSTATE P0001).
        gc(d).call({
          f: "charge",
          k: id1,
          a: { key: id1, required: 1, charge: 5, reason: "price", now, scope: id1, limit: 100, bucket: now, since: 0 }
        }),
        gc(d).call({ f: "no_such_call", k: id2, a: {} }),
        gc(d).call(admit(id2))
      ])
      expect(gc(d).stats().batches - before.batches).toBe(1)
      expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "rejected", "fulfilled"])
      expect(results[0]).toMatchObject({ status: "fulfilled", value: { outcome: "admitted" } })
      expect(results[3]).toMatchObject({ status: "fulfilled", value: { outcome: "admitted" } })
      expect(
        results.map((r) =>
          r.status === "rejected" && r.reason instanceof BatchMemberError ? r.reason.code : undefined
        )
      ).toEqual([undefined, "P0001", "22023", undefined])
      expect(await books(d, id1)).toMatchObject({ activeHolds: 1, charges: 0, balance: 7 })
      expect(await books(d, id2)).toMatchObject({ activeHolds: 1, charges: 0, balance: 7 })
    } finally {
      await d.close()
    }
  }, 60_000)

  it("a member sending its arguments by position (a process older than named arguments) is refused, not run", async () => {
    const d = (
      await pgliteTestDatabase(undefined, { groupCommit: { windowMs: 60_000, maxBatch: 2, maxInFlight: 4 }, worker })
    ).database
    try {
      const context = await services(d, new Map())
      const k = await Effect.runPromise(
        createKey({ credits: 10, rateLimitPerMinute: 100_000 }).pipe(Effect.provide(context))
      )
      const id = k.record.id
      const now = Date.now()
      const named = {
        key: id,
        required: 1,
        charge: 1,
        reason: "price",
        now,
        scope: id,
        limit: 100,
        bucket: now,
        since: 0
      }
      const results = await Promise.allSettled([
        // As md_batch_call took them before 2026-12-06T0100_named_batch_arguments: the same charge, by position.
        gc(d).call({ f: "charge", k: id, a: [id, 1, 1, "price", now, id, 100, now, 0] as never }),
        gc(d).call({ f: "charge", k: id, a: named })
      ])
      expect(results.map((r) => r.status)).toEqual(["rejected", "fulfilled"])
      expect(results[0]?.status === "rejected" && (results[0].reason as BatchMemberError).code).toBe("22023")
      expect(results[1]).toMatchObject({ status: "fulfilled", value: { outcome: "charged" } })
      // Only the named call charged.
      expect(await books(d, id)).toMatchObject({ charges: 1, balance: 9 })
    } finally {
      await d.close()
    }
  }, 60_000)
})

describe("PGlite with group commit: the store contracts and the money model", () => {
  let t: TestDatabase
  beforeAll(async () => {
    t = await pgliteTestDatabase(undefined, { groupCommit: SERVE_DEFAULTS })
  }, 120_000)
  afterAll(() => t?.drop())
  // Each test starts from empty tables.
  storeContracts("pglite with group commit", () =>
    Layer.effectDiscard(Effect.promise(() => t.truncate())).pipe(Layer.provideMerge(layerPgStores(t.database)))
  )

  it("agrees with the money model on random programs", async () => {
    const before = gc(t.database).stats().calls
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 25 }),
        fc.array(actionArb, { minLength: 1, maxLength: 25 }),
        (credits, actions) => Effect.runPromise(runProgram(layerPgStores(t.database), credits, actions))
      ),
      { numRuns: 30 }
    )
    // The calls did go through batches.
    expect(gc(t.database).stats().calls).toBeGreaterThan(before)
  }, 300_000)
})
