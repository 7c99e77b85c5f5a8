/**
 * The store contract suites and the money model on server PostgreSQL with group commit on (every per-request
 * call through `md_batch`): the very suites the memory twin and the lone-statement stores pass. Runs when
 * TEST_DATABASE_URL is set; says so when skipped.
 */
import { Effect, Layer } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { actionArb, runProgram } from "../../../core/test/contracts/MoneyModel.ts"
import { storeContracts } from "../../../core/test/contracts/StoreContracts.ts"
import { type Database, openPostgres } from "../src/Database.ts"
import { layerPgStores } from "../src/PgStores.ts"
import { postgresTestDatabase, TEST_DATABASE_URL, type TestDatabase } from "./support.ts"

if (TEST_DATABASE_URL === undefined) {
  describe.skip("postgresql with group commit (skipped: TEST_DATABASE_URL is not set)", () => {})
  console.warn("PostgreSQL group-commit contract suites SKIPPED: set TEST_DATABASE_URL=postgres://... to run them")
} else {
  describe("postgresql with group commit", () => {
    let t: TestDatabase
    let grouped: Database
    beforeAll(async () => {
      t = await postgresTestDatabase(TEST_DATABASE_URL as string, 2)
      grouped = openPostgres(t.url as string, {
        poolSize: 8,
        groupCommit: { windowMs: 1, maxBatch: 64, maxInFlight: 4 }
      })
    }, 120_000)
    afterAll(async () => {
      await grouped?.close()
      await t?.drop()
    })
    // Each test starts from empty tables.
    storeContracts("postgresql with group commit", () =>
      Layer.effectDiscard(Effect.promise(() => t.truncate())).pipe(Layer.provideMerge(layerPgStores(grouped)))
    )

    it("agrees with the money model on random programs", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: 25 }),
          fc.array(actionArb, { minLength: 1, maxLength: 25 }),
          (credits, actions) => Effect.runPromise(runProgram(layerPgStores(grouped), credits, actions))
        ),
        { numRuns: 50 }
      )
      // The calls did go through batches.
      expect(grouped.groupCommit?.stats().calls ?? 0).toBeGreaterThan(0)
    }, 300_000)
  })
}
