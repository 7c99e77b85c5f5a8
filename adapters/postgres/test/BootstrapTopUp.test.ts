/**
 * The start-up bootstrap key on server PostgreSQL: instances starting together with one
 * `MARKET_DATA_BOOTSTRAP_KEY` each run `ensureBootstrapKey`. Each instance here is its own connection pool on one
 * schema, all started at once. Whatever the interleaving, the database ends with one key for the secret and its
 * balance exactly the configured credits (the top-up is one locked decision, `md_top_up`); a read-then-grant
 * would let several instances grant the full amount each. After spending, a second concurrent start tops the key
 * up to the same amount again, once.
 */
import { ensureBootstrapKey, hashKey, KeyStore, MoneyStore } from "@market-data/core"
import { type Context, Effect, Layer } from "effect"
import * as Digest from "effect/crypto/Digest"
import * as SecureRandom from "effect/crypto/SecureRandom"
import { sql } from "kysely"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Database, openPostgres } from "../src/Database.ts"
import { layerPgStores } from "../src/PgStores.ts"
import { postgresTestDatabase, TEST_DATABASE_URL, type TestDatabase } from "./support.ts"

const INSTANCES = 8
const CREDITS = 100

const secretFor = (round: number) => `mdk_${`boot${round}`.padEnd(32, "x").slice(0, 32)}`

if (TEST_DATABASE_URL === undefined) {
  describe.skip("postgresql bootstrap top-up (skipped: TEST_DATABASE_URL is not set)", () => {})
} else {
  describe("postgresql: instances starting together with one bootstrap key", () => {
    let t: TestDatabase
    const pools: Array<Database> = []
    const contexts: Array<Context.Context<KeyStore | MoneyStore | Digest.Digest | SecureRandom.SecureRandom>> = []
    beforeAll(async () => {
      t = await postgresTestDatabase(TEST_DATABASE_URL as string, 2)
      for (let i = 0; i < INSTANCES; i++) {
        const database = openPostgres(t.url as string, { poolSize: 2 })
        pools.push(database)
        contexts.push(
          await Effect.runPromise(
            Layer.build(
              Layer.mergeAll(
                layerPgStores(database, { keyCacheMs: 0 }),
                Digest.layerWebCrypto,
                SecureRandom.layerWebCrypto
              )
            ).pipe(Effect.scoped)
          )
        )
      }
      // Open every pool's connections first, so the starts below meet in the database, not in connecting.
      await Promise.all(pools.map((p) => sql`select 1`.execute(p.db)))
    }, 120_000)
    afterAll(async () => {
      for (const p of pools) await p.close()
      await t?.drop()
    })

    const startAll = (secret: string) =>
      Promise.all(
        contexts.map((ctx) => Effect.runPromise(ensureBootstrapKey(secret, CREDITS).pipe(Effect.provide(ctx))))
      )

    const stateOf = async (secret: string) => {
      const ctx = contexts[0] as (typeof contexts)[number]
      return Effect.runPromise(
        Effect.gen(function* () {
          const hash = yield* hashKey(secret)
          const keys = yield* Effect.promise(() =>
            sql<{ id: string }>`select id from api_keys where hash = ${hash}`.execute(t.database.db)
          )
          const id = keys.rows[0]?.id as string
          const ledger = yield* MoneyStore
          const entries = yield* ledger.entries(id)
          return {
            keys: keys.rows.length,
            id,
            balance: yield* ledger.balance(id, Date.now()),
            granted: entries.filter((e) => e.kind === "grant").reduce((s, e) => s + e.amount, 0)
          }
        }).pipe(Effect.provide(ctx))
      )
    }

    it("every round: one key, one creator, the balance exactly the configured credits", async () => {
      for (let round = 0; round < 5; round++) {
        const secret = secretFor(round)
        const results = await startAll(secret)
        const state = await stateOf(secret)
        expect(state.keys, `round ${round}: keys for the secret`).toBe(1)
        expect(new Set(results.map((r) => r.record.id)), `round ${round}: one key ID`).toEqual(new Set([state.id]))
        expect(results.filter((r) => r.created).length, `round ${round}: one creator`).toBe(1)
        expect(
          results.reduce((s, r) => s + r.granted, 0),
          `round ${round}: granted in all`
        ).toBe(CREDITS)
        expect(state.balance, `round ${round}: balance`).toBe(CREDITS)
        expect(state.granted, `round ${round}: ledger grants`).toBe(CREDITS)
      }
    })

    it("after spending, a concurrent restart tops up the missing credits once", async () => {
      const secret = secretFor(99)
      await startAll(secret)
      const { id } = await stateOf(secret)
      const ctx = contexts[1] as (typeof contexts)[number]
      await Effect.runPromise(
        Effect.gen(function* () {
          const money = yield* MoneyStore
          const spent = yield* money.charge({
            keyId: id,
            required: 30,
            charge: 30,
            reason: "spent",
            nowMs: Date.now(),
            meter: { scope: id, limit: 1_000 }
          })
          expect(spent._tag).toBe("Charged")
        }).pipe(Effect.provide(ctx))
      )
      expect((await stateOf(secret)).balance).toBe(CREDITS - 30)
      const results = await startAll(secret)
      expect(results.reduce((s, r) => s + r.granted, 0)).toBe(30)
      expect(results.every((r) => !r.created)).toBe(true)
      const state = await stateOf(secret)
      expect(state.balance).toBe(CREDITS)
      expect(state.granted).toBe(CREDITS + 30)
      // KeyStore is part of the context: the store answers the one key for the secret.
      const found = await Effect.runPromise(
        Effect.gen(function* () {
          return yield* (yield* KeyStore).findByHash(yield* hashKey(secret))
        }).pipe(Effect.provide(ctx))
      )
      expect(found._tag === "Some" && found.value.id).toBe(id)
    })
  })
}
