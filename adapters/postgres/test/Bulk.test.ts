import { Effect } from "effect"
import { type Kysely, sql } from "kysely"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { insertInChunks } from "../src/Bulk.ts"
import { pgliteTestDatabase, type TestDatabase } from "./support.ts"

let t: TestDatabase
beforeAll(async () => {
  t = await pgliteTestDatabase()
  await sql`create table bars (asset_id text, venue text, t_ms bigint, c double precision, primary key (asset_id, venue, t_ms))`.execute(
    t.database.db
  )
}, 120_000)
afterAll(() => t?.drop())

describe("insertInChunks", () => {
  it("writes many rows in parameter-bounded chunks, idempotently on the natural key", async () => {
    const rows = Array.from({ length: 25_000 }, (_, i) => ({
      asset_id: "crypto:bitcoin",
      venue: "v1",
      t_ms: i * 900_000,
      c: i
    }))
    const db = t.database.db as unknown as Kysely<{
      bars: { asset_id: string; venue: string; t_ms: number; c: number }
    }>
    expect(await Effect.runPromise(insertInChunks(db, "bars", rows, { key: ["asset_id", "venue", "t_ms"] }))).toBe(
      25_000
    )
    expect(
      await Effect.runPromise(insertInChunks(db, "bars", rows.slice(0, 10), { key: ["asset_id", "venue", "t_ms"] }))
    ).toBe(0)
    const changed = rows.slice(0, 3).map((r) => ({ ...r, c: -1 }))
    expect(
      await Effect.runPromise(
        insertInChunks(db, "bars", changed, { key: ["asset_id", "venue", "t_ms"], update: ["c"] })
      )
    ).toBe(3)
    const count = await sql<{ n: string; m: number }>`select count(*) as n, min(c) as m from bars`.execute(
      t.database.db
    )
    expect(Number(count.rows[0]?.n)).toBe(25_000)
    expect(count.rows[0]?.m).toBe(-1)
  }, 60_000)
})
