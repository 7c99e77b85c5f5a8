/**
 * Daily bars keyed by ticker, end to end on memory, PGlite and server PostgreSQL (when TEST_DATABASE_URL is set):
 * a company with two share classes (BRK-A and BRK-B, as Berkshire Hathaway) gets one series per class from
 * `ingest prices` (a file names its ticker, by an `id`/`ticker` column or `--id`), and its two assets answer
 * `price`, `technicals`, `valuation` and the `read` headline from their own series; a ticker the company does not
 * trade under is refused with the reason. On the databases, the migration keying bars by ticker first assigns the
 * rows already there to each company's primary ticker (its company row's first, else its first ticker-list row).
 */
import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type Company, Equity, type EquityStore } from "@market-data/core"
import { makeMemoryEquityStore } from "@market-data/memory"
import { type Database, makePgEquityStore, openPglite, openPostgres } from "@market-data/postgres"
import { Effect } from "effect"
import { sql } from "kysely"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { TEST_DATABASE_URL, withSchema } from "../../adapters/postgres/test/support.ts"
import { makeEquityPlane } from "../../core/src/equity/EquityPlane.ts"
import { callPlanes, dataOf } from "../../core/test/support/PlaneCall.ts"
import { ingestPrices } from "../src/Ingest.ts"
import { migrateToLatest, migrations, migrator } from "../src/Migrate.ts"

const BERKSHIRE: Company = {
  cik: "1067983",
  name: "Berkshire Hathaway Inc",
  tickers: ["BRK-A", "BRK-B"],
  exchanges: ["NYSE", "NYSE"],
  sic: "6331",
  sicDescription: "Fire, Marine & Casualty Insurance",
  fiscalYearEnd: "1231",
  formerNames: []
}
const A = "eq:1067983:BRK-A"
const B = "eq:1067983:BRK-B"
/** Monday 2026-11-23, 10:00 New York: the last closed session is Friday the 20th. */
const NOW = Date.UTC(2026, 10, 23, 15, 0)

/** The 40 weekdays through Friday 2026-11-20 (no US holiday among them). */
const DAYS: ReadonlyArray<string> = (() => {
  const out: Array<string> = []
  for (let t = Date.UTC(2026, 10, 20); out.length < 40; t -= 86_400_000) {
    const d = new Date(t)
    if (d.getUTCDay() !== 0 && d.getUTCDay() !== 6) out.unshift(d.toISOString().slice(0, 10))
  }
  return out
})()
const closeA = (i: number) => 700_000 + 150 * i + (i % 4) * 900
const closeB = (i: number) => Number((466 + 0.11 * i - (i % 3) * 0.7).toFixed(2))
const csvRow = (date: string, c: number) => `${date},${c},${(c * 1.01).toFixed(2)},${(c * 0.99).toFixed(2)},${c},1000`

const call = (plane: Effect.Success<ReturnType<typeof makeEquityPlane>>, name: string, id: string) =>
  Effect.runPromise(Effect.map(callPlanes([plane], name, [["id", id]], NOW), dataOf<Record<string, any>>))

/** Loads the two classes' files through `ingest prices` and checks both assets answer their own prices. */
const twoClassesAnswerApart = async (store: EquityStore["Service"], existingA?: number) => {
  const dir = mkdtempSync(join(tmpdir(), "md-share-classes-"))
  try {
    // BRK-B named by a ticker column; BRK-A by --id; a class the company does not have (by ID), and a ticker no
    // company in the store trades under.
    writeFileSync(
      join(dir, "brk-b.csv"),
      ["ticker,date,open,high,low,close,volume", ...DAYS.map((d, i) => `BRK-B,${csvRow(d, closeB(i))}`)].join("\n")
    )
    writeFileSync(
      join(dir, "brk-a.csv"),
      ["date,open,high,low,close,volume", ...DAYS.map((d, i) => csvRow(d, closeA(i)))].join("\n")
    )
    writeFileSync(
      join(dir, "brk-c.csv"),
      ["id,date,open,high,low,close,volume", `eq:1067983:BRK-C,${csvRow("2026-11-20", 1)}`].join("\n")
    )
    writeFileSync(
      join(dir, "brk-d.csv"),
      ["ticker,date,open,high,low,close,volume", `BRK-D,${csvRow("2026-11-20", 1)}`].join("\n")
    )
    const b = await Effect.runPromise(ingestPrices(store, join(dir, "brk-b.csv"), undefined))
    expect(b.results.map((r) => [r.status, r.records])).toEqual([["loaded", DAYS.length]])
    const a = await Effect.runPromise(ingestPrices(store, join(dir, "brk-a.csv"), A))
    expect(a.results.map((r) => [r.status, r.records])).toEqual([["loaded", DAYS.length]])
    const c = await Effect.runPromise(ingestPrices(store, join(dir, "brk-c.csv"), undefined))
    expect(c.results[0]?.status).toBe("failed")
    expect(c.results[0]?.refusedRows[0]?.detail).toBe(
      "Berkshire Hathaway Inc (CIK 1067983) trades as BRK-A, BRK-B, not BRK-C"
    )
    const d = await Effect.runPromise(ingestPrices(store, join(dir, "brk-d.csv"), undefined))
    expect(d.results[0]?.status).toBe("failed")
    expect(d.results[0]?.refusedRows[0]?.reason).toBe("unknown_company")
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }

  const barsA = await Effect.runPromise(store.bars(BERKSHIRE.cik, "BRK-A", {}))
  const barsB = await Effect.runPromise(store.bars(BERKSHIRE.cik, "BRK-B", {}))
  expect(barsB.map((x) => x.c)).toEqual(DAYS.map((_, i) => closeB(i)))
  // The file's days replace what was there on the same days; an older row (from before the migration) stays.
  expect(barsA.length).toBe(DAYS.length + (existingA === undefined ? 0 : 1))
  expect(barsA.slice(-DAYS.length).map((x) => x.c)).toEqual(DAYS.map((_, i) => closeA(i)))
  expect(await Effect.runPromise(store.bars(BERKSHIRE.cik, "BRK-C", {}))).toEqual([])

  const plane = await Effect.runPromise(
    makeEquityPlane({ source: "sec" }).pipe(Effect.provideService(Equity.EquityStore, store))
  )
  const last = DAYS.length - 1
  const priceA = await call(plane, "price", A)
  const priceB = await call(plane, "price", B)
  expect([priceA.usd, priceB.usd]).toEqual([closeA(last), closeB(last)])
  // One filed share count for both classes: no market cap from one class's price.
  expect(priceA.market.market_cap_usd).toBeNull()
  expect(priceA.unavailable.market_cap_usd.reason).toBe("not_applicable")

  const readA = await call(plane, "read", A)
  const readB = await call(plane, "read", B)
  expect([readA.headline.price_usd, readB.headline.price_usd]).toEqual([closeA(last), closeB(last)])
  expect([readA.class, readB.class]).toEqual(["full", "full"])

  const sma20 = (close: (i: number) => number) =>
    Array.from({ length: 20 }, (_, k) => close(last - k)).reduce((s, c) => s + c, 0) / 20
  const techA = await call(plane, "technicals", A)
  const techB = await call(plane, "technicals", B)
  expect(techA.moving_averages.sma_20).toBeCloseTo(sma20(closeA), 4)
  expect(techB.moving_averages.sma_20).toBeCloseTo(sma20(closeB), 4)

  const valA = await call(plane, "valuation", A)
  const valB = await call(plane, "valuation", B)
  expect([valA.price_usd, valB.price_usd]).toEqual([closeA(last), closeB(last)])
  for (const v of [valA, valB]) {
    expect([v.pe_ttm, v.ps_ttm, v.ev_ebitda_ttm]).toEqual([null, null, null])
    expect(v.unavailable.pe_ttm.reason).toBe("not_applicable")
    expect(v.unavailable.pe_ttm.detail).toContain("BRK-A, BRK-B")
  }

  const coverage = (await Effect.runPromise(store.issuer(BERKSHIRE.cik)))?.coverage
  expect(coverage?.tickerBars.map((t) => [t.ticker, t.bars])).toEqual([
    ["BRK-A", barsA.length],
    ["BRK-B", DAYS.length]
  ])
}

describe("memory: two share classes, two series", () => {
  it("each class's file loads into its ticker; each asset answers its own prices", async () => {
    const store = makeMemoryEquityStore()
    await Effect.runPromise(store.putCompany(BERKSHIRE))
    await twoClassesAnswerApart(store)
  })
})

/** The migration before the one keying bars by ticker. */
const BEFORE = (() => {
  const names = Object.keys(migrations).sort()
  return names[names.indexOf("2026-11-26T0300_bars_ticker") - 1] as string
})()

const databaseSuite = (name: string, open: () => Promise<{ database: Database; close: () => Promise<void> }>) =>
  describe(`${name}: bars keyed by ticker`, () => {
    let db: { database: Database; close: () => Promise<void> } | undefined
    beforeAll(async () => {
      db = await open()
    }, 120_000)
    afterAll(() => db?.close())

    it("the migration gives existing rows the primary ticker; then each class loads and answers apart", async () => {
      const database = (db as { database: Database }).database
      const k = database.db
      const migrated = await (await migrator(k)).migrateTo(BEFORE)
      expect(migrated.error).toBeUndefined()
      const store = makePgEquityStore(database)
      // Before: one series per company. Berkshire (a company row listing BRK-A first), a CIK known only from
      // ticker rows (ZZB and ZZA: its primary is ZZA), and a CIK nothing names.
      await Effect.runPromise(
        Effect.gen(function* () {
          yield* store.putCompany(BERKSHIRE)
          yield* store.putTickers([
            { cik: "1067983", ticker: "BRK-B", name: "Berkshire Hathaway Inc", exchange: "NYSE" },
            { cik: "2000002", ticker: "ZZB", name: "Zed Co", exchange: "NYSE" },
            { cik: "2000002", ticker: "ZZA", name: "Zed Co", exchange: "NYSE" }
          ])
        })
      )
      const old = Equity.sessionOpenMs("2026-09-01")
      for (const cik of ["1067983", "2000002", "3000003"]) {
        await sql`insert into equity_bars (cik, t_ms, o, h, l, c, v) values (${cik}, ${old}, 1, 2, 0.5, 1.5, 10)`.execute(
          k
        )
      }
      await sql`insert into equity_bars (cik, t_ms, o, h, l, c, v)
        values ('1067983', ${Equity.sessionOpenMs(DAYS[0] as string)}, 1, 2, 0.5, 1.5, 10)`.execute(k)
      await migrateToLatest(k)
      const rows = await sql<{ cik: string; ticker: string; n: string }>`
        select cik, ticker, count(*)::text as n from equity_bars group by cik, ticker order by cik`.execute(k)
      expect(rows.rows).toEqual([
        { cik: "1067983", ticker: "BRK-A", n: "2" },
        { cik: "2000002", ticker: "ZZA", n: "1" },
        { cik: "3000003", ticker: "", n: "1" }
      ])
      // Rows of another class on the same day now coexist (the key holds the ticker).
      await Effect.runPromise(store.putBars("2000002", "ZZB", [{ tMs: old, o: 9, h: 9, l: 9, c: 9, v: 1 }]))
      expect((await Effect.runPromise(store.bars("2000002", "ZZA", {}))).map((b) => b.c)).toEqual([1.5])
      expect((await Effect.runPromise(store.bars("2000002", "ZZB", {}))).map((b) => b.c)).toEqual([9])

      await twoClassesAnswerApart(store, 1)

      // Down: one series per company again, each day keeping the first ticker's row (BRK-A before BRK-B).
      const down = await (await migrator(k)).migrateTo(BEFORE)
      expect(down.error).toBeUndefined()
      const kept = await sql<{ c: number }>`
        select c from equity_bars where cik = '1067983' order by t_ms`.execute(k)
      expect(kept.rows.map((r) => r.c)).toEqual([1.5, ...DAYS.map((_, i) => closeA(i))])
      await migrateToLatest(k)
    }, 120_000)
  })

databaseSuite("pglite", async () => {
  const database = await openPglite(undefined)
  return { database, close: () => database.close() }
})

if (TEST_DATABASE_URL === undefined) {
  describe.skip("postgresql (skipped: TEST_DATABASE_URL is not set)", () => {})
} else {
  const url = TEST_DATABASE_URL
  databaseSuite("postgresql", async () => {
    const schema = `md_test_bars_${randomUUID().replace(/-/g, "").slice(0, 12)}`
    const admin = openPostgres(url, { poolSize: 1 })
    await sql.raw(`create schema ${schema}`).execute(admin.db)
    await admin.close()
    const database = openPostgres(withSchema(url, schema), { poolSize: 4 })
    return {
      database,
      close: async () => {
        await database.close()
        const a = openPostgres(url, { poolSize: 1 })
        await sql.raw(`drop schema ${schema} cascade`).execute(a.db)
        await a.close()
      }
    }
  })
}
