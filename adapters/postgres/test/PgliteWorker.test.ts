/**
 * PGlite on its worker thread (`openPglite` with `worker`, the default; `PgliteProxy.ts`) against PGlite in this
 * thread (`worker: false`): every column type the stores read comes back the same (numeric strings, int8, dates,
 * bytea, json, arrays, null); PostgreSQL's errors keep their name and fields (`code`, `detail`, `constraint`) so
 * typed errors stay typed; transactions commit, roll back on a thrown error and on an aborted statement as in one
 * thread; `COPY ... FROM '/dev/blob'` loads; `close` drains the calls under way and what was committed is there
 * when the directory is reopened; a worker that dies fails the calls under way and every later one with a clear
 * error (the stores answer `StoreUnavailable`) instead of hanging.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { StoreUnavailable } from "@market-data/core"
import { Cause, Effect, Exit } from "effect"
import { sql } from "kysely"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { copyRows } from "../src/Copy.ts"
import { type Database, openPglite } from "../src/Database.ts"
import { query } from "../src/Errors.ts"
import { type PgliteHandle, PgliteWorkerStopped } from "../src/PgliteProxy.ts"
import { migratedTemplate, seedDataDir } from "./support.ts"

const TYPES_TABLE = `create table types_probe (
  id int primary key,
  n numeric, i8 int8, i4 int4, i2 int2, f8 float8, b bool, t text, v varchar(10),
  ts timestamptz, tsl timestamp, d date, by bytea, j json, jb jsonb,
  ta text[], ia int8[], na numeric[], u uuid
)`

const TYPES_ROWS = `insert into types_probe values
  (1, 12345678901234567890.123456789, 9007199254740993, -2147483648, 32767, 1.5e300, true, 'héllo', 'x',
   '2026-11-26T05:00:00.123456Z', '2026-11-26 05:00:00.5', '2026-02-28', '\\x00ff10'::bytea,
   '{"a":[1,2.5,"x"],"b":null}', '{"z":{"deep":[true,false]},"n":1e3}',
   array['a','b c',null], array[1,9007199254740993], array[1.10,2.000], '0e0a8ec7-2f38-4b8d-a3a8-3c1f1b1d6a2c'),
  (2, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null)`

const opened: Array<Database> = []
/**
 * PGlite in `dir`, or in memory started from the test worker's migrated dump (`migratedTemplate`: a new cluster
 * costs seconds; the probes below make tables of their own).
 */
const open = async (worker: boolean, dir?: string, groupCommit = false) => {
  const d = await openPglite(dir, {
    worker,
    ...(dir === undefined ? { loadDataDir: await migratedTemplate() } : {}),
    ...(groupCommit ? { groupCommit: { windowMs: 1, maxBatch: 64, maxInFlight: 1 } } : {})
  })
  opened.push(d)
  return d
}
const handle = (d: Database) => (d.native as { pglite: PgliteHandle }).pglite
const constructors = (rows: ReadonlyArray<Record<string, unknown>>) =>
  rows.map((r) =>
    Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v === null ? "null" : (v as object).constructor.name]))
  )

afterAll(async () => {
  for (const d of opened) await d.close().catch(() => {})
})

describe("PGlite on a worker thread and in this thread answer alike", () => {
  let worker: Database
  let inThread: Database
  beforeAll(async () => {
    ;[worker, inThread] = await Promise.all([open(true), open(false)])
    for (const d of [worker, inThread]) {
      await handle(d).exec(TYPES_TABLE)
      await handle(d).exec(TYPES_ROWS)
    }
  }, 120_000)

  it("every column type comes back the same, by kysely and by the driver", async () => {
    const byKysely = async (d: Database) =>
      (await sql<Record<string, unknown>>`select * from types_probe order by id`.execute(d.db)).rows
    const a = await byKysely(worker)
    const b = await byKysely(inThread)
    expect(a).toEqual(b)
    expect(constructors(a)).toEqual(constructors(b))
    // The values themselves, so that "the same" is not "the same and both wrong".
    const row = a[0] as Record<string, unknown>
    expect(typeof row.n).toBe("string")
    expect(row.n).toBe("12345678901234567890.123456789")
    expect(row.ts).toBeInstanceOf(Date)
    expect((row.ts as Date).toISOString()).toBe("2026-11-26T05:00:00.123Z")
    expect(row.by).toBeInstanceOf(Uint8Array)
    expect([...(row.by as Uint8Array)]).toEqual([0, 255, 16])
    expect(row.jb).toEqual({ z: { deep: [true, false] }, n: 1000 })
    expect(row.ta).toEqual(["a", "b c", null])
    expect(a[1]).toEqual(Object.fromEntries(Object.keys(row).map((k) => [k, k === "id" ? 2 : null])))
    const byDriver = async (d: Database) => {
      const r = await handle(d).query("select * from types_probe where id = $1", [1], { rowMode: "array" })
      return { rows: r.rows, fields: r.fields.map((f) => [f.name, f.dataTypeID]), affected: r.affectedRows }
    }
    expect(await byDriver(worker)).toEqual(await byDriver(inThread))
    const execs = async (d: Database) =>
      (await handle(d).exec("select 1 as one; select 'x'::text as t")).map((r) => r.rows)
    expect(await execs(worker)).toEqual(await execs(inThread))
  })

  it("parameters of every type go in the same (Date, Uint8Array, bigint-sized strings, json, arrays, null)", async () => {
    const params = [
      new Date("2026-01-02T03:04:05.678Z"),
      new Uint8Array([1, 2, 3]),
      "9007199254740993",
      JSON.stringify({ k: [1, "two"] }),
      [1, 2, 3],
      null
    ]
    const run = async (d: Database) =>
      (
        await handle(d).query(
          "select $1::timestamptz as d, $2::bytea as b, $3::int8 as i, $4::jsonb as j, $5::int4[] as a, $6::text as n",
          params
        )
      ).rows
    expect(await run(worker)).toEqual(await run(inThread))
  })

  it("errors keep their name and fields: a unique violation, a raised exception, a syntax error", async () => {
    const failure = async (d: Database, text: string) => {
      const e = (await handle(d)
        .query(text)
        .then(
          () => undefined,
          (x: unknown) => x
        )) as Record<string, unknown> & Error
      expect(e).toBeInstanceOf(Error)
      return {
        name: e.name,
        message: e.message,
        code: e.code,
        detail: e.detail,
        constraint: e.constraint,
        table: e.table,
        severity: e.severity
      }
    }
    for (const text of [
      "insert into types_probe (id) values (1)",
      "do $$ begin raise exception 'refused: %', 42 using errcode = 'P0001'; end $$",
      "selec 1"
    ]) {
      const a = await failure(worker, text)
      expect(a).toEqual(await failure(inThread, text))
      expect(a.code).toMatch(/^[0-9A-Z]{5}$/)
    }
    expect((await failure(worker, "insert into types_probe (id) values (1)")).detail).toBe(
      "Key (id)=(1) already exists."
    )
  })

  it("transactions: commit, rollback on a thrown error, an aborted statement, an explicit rollback", async () => {
    const scenario = async (d: Database) => {
      await handle(d).exec("create table if not exists tx_probe (k text primary key)")
      await handle(d).exec("delete from tx_probe")
      await d.db.transaction().execute(async (trx) => {
        await sql`insert into tx_probe values ('committed')`.execute(trx)
        await sql`insert into tx_probe values ('committed too')`.execute(trx)
      })
      const thrown = await d.db
        .transaction()
        .execute(async (trx) => {
          await sql`insert into tx_probe values ('rolled back')`.execute(trx)
          throw new Error("the caller's own failure")
        })
        .catch((e: Error) => e.message)
      // A statement fails inside the transaction; the callback swallows it and goes on: COMMIT then rolls back.
      const aborted = await handle(d)
        .transaction(async (tx) => {
          await tx.query("insert into tx_probe values ('aborted')")
          await tx.query("insert into tx_probe values ('committed')").catch(() => {})
          return "callback done"
        })
        .catch((e: Record<string, unknown>) => `${e.name} ${e.code}`)
      const explicit = await handle(d).transaction(async (tx) => {
        await tx.query("insert into tx_probe values ('explicitly rolled back')")
        await tx.rollback()
        return tx.closed
      })
      const afterClose = await handle(d)
        .transaction(async (tx) => {
          await tx.rollback()
          return tx.query("select 1")
        })
        .catch((e: Error) => e.message)
      const rows = (await handle(d).query<{ k: string }>("select k from tx_probe order by k")).rows.map((r) => r.k)
      return { thrown, aborted, explicit, afterClose, rows }
    }
    const a = await scenario(worker)
    expect(a).toEqual(await scenario(inThread))
    expect(a.rows).toEqual(["committed", "committed too"])
    expect(a.thrown).toBe("the caller's own failure")
    expect(a.aborted).toContain("25P02")
    expect(a.explicit).toBe(true)
  })

  it("COPY FROM '/dev/blob' loads the same rows", async () => {
    const load = async (d: Database) => {
      await handle(d).exec("create table if not exists copy_probe (a int8, b text, c numeric)")
      const n = await Effect.runPromise(
        copyRows(
          d,
          "copy_probe",
          ["a", "b", "c"],
          [
            [1, "one\ttab", "1.50"],
            [2, null, "-0.000001"],
            ["9007199254740993", "naïve\\slash", null]
          ]
        )
      )
      return { n, rows: (await handle(d).query("select * from copy_probe order by a")).rows }
    }
    const a = await load(worker)
    expect(a).toEqual(await load(inThread))
    expect(a.rows).toHaveLength(3)
  })

  it("counts its statements and batches the stores' calls in one md_batch statement", async () => {
    const before = worker.statements?.() ?? 0
    await handle(worker).query("select 1")
    await handle(worker).transaction(async (tx) => {
      await tx.query("select 1")
      await tx.exec("select 2")
    })
    expect((worker.statements?.() ?? 0) - before).toBe(3)
  })
})

describe("PGlite's worker thread: close, and a worker that dies", () => {
  let dir: string
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "pglite-worker-"))
    // An existing cluster (a new one's creation: PgliteCreation.test.ts, CliSources.test.ts).
    await seedDataDir(dir)
  }, 120_000)
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it("close waits for the calls under way; what they committed is there after a reopen", async () => {
    const d = await openPglite(dir)
    await handle(d).exec("create table kept (k int primary key)")
    const writes = Array.from({ length: 50 }, (_, i) => handle(d).query("insert into kept values ($1)", [i]))
    const closed = d.close()
    const results = await Promise.allSettled(writes)
    await closed
    expect(results.every((r) => r.status === "fulfilled")).toBe(true)
    expect(handle(d).closed).toBe(true)
    await expect(handle(d).query("select 1")).rejects.toThrow()
    const again = await openPglite(dir)
    opened.push(again)
    expect((await handle(again).query<{ n: number }>("select count(*)::int as n from kept")).rows).toEqual([{ n: 50 }])
    await again.close()
  }, 120_000)

  it("a worker that dies fails the calls under way and every later one, and the store answers unavailable", async () => {
    const d = await open(true, undefined, true)
    const proxy = handle(d) as PgliteHandle & { crashForTest: (m: string) => void }
    await proxy.query("select 1")
    await sql`select 1`.execute(d.db)
    proxy.crashForTest("injected fault")
    const underWay = proxy.query("select 2")
    const batched = d.groupCommit?.call({ f: "md_balance", k: "x", a: { key: "x", now: 0 } })
    await expect(underWay).rejects.toBeInstanceOf(PgliteWorkerStopped)
    await expect(underWay).rejects.toThrow(/worker thread stopped \(uncaught Error: injected fault\)/)
    await expect(batched).rejects.toBeInstanceOf(PgliteWorkerStopped)
    await expect(sql`select 3`.execute(d.db)).rejects.toBeInstanceOf(PgliteWorkerStopped)
    const exit = await Effect.runPromiseExit(query("probe", () => proxy.query("select 4")))
    expect(Exit.isFailure(exit)).toBe(true)
    if (Exit.isFailure(exit)) {
      const defect = Cause.squash(exit.cause)
      expect(defect).toBeInstanceOf(StoreUnavailable)
    }
    // Closing a dead store ends at once.
    await d.close()
  }, 120_000)

  it("the in-thread path (DATABASE_PGLITE_WORKER=off) opens the same directory", async () => {
    const d = await open(false, dir)
    expect((await handle(d).query<{ n: number }>("select count(*)::int as n from kept")).rows).toEqual([{ n: 50 }])
    await d.close()
  }, 120_000)
})
