/**
 * Source health persists: the last success and the last error of each source component (migration
 * `2026-11-23T0300_source_errors`) round-trip through the PostgreSQL market store, are cleared when a later
 * write omits them, and reach another instance's hot store when it warms from the database (so every instance
 * and the `sources` CLI see what the ingesting leader saw). On PGlite and, with TEST_DATABASE_URL, on PostgreSQL.
 */
import type { SourceStatus } from "@market-data/core"
import { makeMemoryMarketStore, warmMarketStore } from "@market-data/memory"
import { Effect } from "effect"
import { sql } from "kysely"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makePgMarketStore } from "../src/PgMarketStore.ts"
import { pgliteTestDatabase, postgresTestDatabase, TEST_DATABASE_URL, type TestDatabase } from "./support.ts"

const failing: SourceStatus = {
  source: "live",
  venue: "sec",
  component: "filings",
  newestMs: 1_700_000_000_000,
  cadenceMs: 600_000,
  checkedMs: 1_700_000_900_000,
  failing: true,
  detail: "status: GET /submissions/CIK0000320193.json: HTTP 503: down",
  lastError: "status: GET /submissions/CIK0000320193.json: HTTP 503: down",
  lastSuccessMs: 1_700_000_000_000
}
const recovered: SourceStatus = {
  source: "live",
  venue: "sec",
  component: "filings",
  newestMs: 1_700_001_000_000,
  cadenceMs: 600_000,
  checkedMs: 1_700_001_000_000,
  failing: false,
  lastSuccessMs: 1_700_001_000_000
}
const legacy: SourceStatus = {
  source: "live",
  venue: "binance",
  component: "bars",
  newestMs: 1_700_000_000_000,
  cadenceMs: 900_000,
  checkedMs: 1_700_000_000_000,
  failing: false
}

const suite = (name: string, open: () => Promise<TestDatabase>) =>
  describe(name, () => {
    let t: TestDatabase
    beforeAll(async () => {
      t = await open()
    }, 120_000)
    afterAll(() => t?.drop())

    it("round-trips last success and last error, clears them, and warms another instance's hot store", async () => {
      await sql.raw("delete from market_source_status").execute(t.database.db)
      const store = makePgMarketStore(t.database)
      await Effect.runPromise(store.putStatus([failing, legacy]))
      expect(await Effect.runPromise(store.status)).toEqual([legacy, failing])

      const hot = makeMemoryMarketStore()
      await Effect.runPromise(warmMarketStore(hot, store, [], 0, 1))
      expect(await Effect.runPromise(hot.status)).toEqual([legacy, failing])

      await Effect.runPromise(store.putStatus([recovered]))
      const after = await Effect.runPromise(store.status)
      expect(after).toEqual([legacy, recovered])
      expect(after[1]).not.toHaveProperty("lastError")
      expect(after[1]).not.toHaveProperty("detail")
    })
  })

suite("source status on PGlite", () => pgliteTestDatabase())
if (TEST_DATABASE_URL !== undefined) {
  suite("source status on PostgreSQL", () => postgresTestDatabase(TEST_DATABASE_URL as string))
}
