/**
 * The simulated companies written at start with `COPY` (`loadSimulatedEquityOnDatabase` through `copyEquityRows`)
 * leave exactly the rows the store's own writes leave (`loadSimulatedEquity` through `PgEquityStore`), compared by
 * an MD5 of every equity table's rows in key order, beside a company that is not simulated (untouched); the same day
 * again writes nothing; `copyEquityRows` over rows already there takes its staging path and changes nothing. On
 * PGlite (the embedded store, where the start's load runs) and on server PostgreSQL when TEST_DATABASE_URL is set.
 */
import { type Company, Equity } from "@market-data/core"
import { copyEquityRows, inBulkTransaction, makePgEquityStore } from "@market-data/postgres"
import { loadSimulatedEquity, simulatedBarsByTicker, simulatedEquity } from "@market-data/sources"
import { Effect } from "effect"
import { sql } from "kysely"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  pgliteTestDatabase,
  postgresTestDatabase,
  TEST_DATABASE_URL,
  type TestDatabase
} from "../../adapters/postgres/test/support.ts"
import { loadSimulatedEquityOnDatabase } from "../src/Planes.ts"

const TABLES: ReadonlyArray<readonly [string, string]> = [
  ["equity_companies", "cik"],
  ["equity_tickers", "cik, ticker"],
  ["equity_facts", "cik, concept, taxonomy, unit, start_date, end_date, accession"],
  ["equity_filings", "cik, accession"],
  ["equity_securities", "cusip"],
  ["equity_bars", "cik, ticker, t_ms"],
  ["equity_ownership_reports", "accession"],
  ["equity_insider_transactions", "accession, seq"],
  ["equity_holdings_reports", "accession"],
  ["equity_holdings", "accession, seq"]
]

// Two generated companies beside the five hand-made ones: both kinds of company take each path.
const INPUTS = { seed: 7, asOf: "2026-11-20", generated: 2 }

const REAL: Company = {
  cik: "320193",
  name: "Apple Inc.",
  tickers: ["AAPL"],
  exchanges: ["Nasdaq"],
  sic: "3571",
  sicDescription: "Electronic Computers",
  fiscalYearEnd: "0926",
  formerNames: []
}

const suite = (name: string, open: () => Promise<TestDatabase>) =>
  describe(`${name}: the simulated companies written with COPY`, () => {
    let t: TestDatabase
    beforeAll(async () => {
      t = await open()
    }, 120_000)
    afterAll(() => t?.drop())

    const contents = async () => {
      const out: Record<string, string> = {}
      for (const [table, key] of TABLES) {
        const r = await sql<{ n: string; md5: string | null }>`
          select count(*) as n, md5(string_agg(t::text, '|' order by ${sql.raw(key)})) as md5
          from ${sql.table(table)} t`.execute(t.database.db)
        out[table] = `${r.rows[0]?.n} ${r.rows[0]?.md5}`
      }
      return out
    }

    it("leaves the rows the store's writes leave; the same day again writes nothing; staged rewrites change nothing", async () => {
      const store = makePgEquityStore(t.database)
      const sim = simulatedEquity(INPUTS.seed, { asOf: INPUTS.asOf, generated: INPUTS.generated })
      // A company that is not simulated, with a bar: both paths leave it alone.
      await Effect.runPromise(
        Effect.gen(function* () {
          yield* store.putCompany(REAL)
          yield* store.putBars(REAL.cik, "AAPL", [
            { tMs: Equity.sessionOpenMs("2026-11-19"), o: 1, h: 2, l: 0.5, c: 1.5, v: 10 }
          ])
        })
      )
      await t.database.db.transaction().execute(async (trx) => {
        const inTrx = makePgEquityStore({ ...t.database, db: trx })
        await Effect.runPromise(loadSimulatedEquity(sim).pipe(Effect.provideService(Equity.EquityStore, inTrx)))
      })
      const byStore = await contents()
      expect(Number(byStore.equity_facts?.split(" ")[0])).toBeGreaterThan(1_000)

      // No simulation named in the database yet: the start deletes the simulated rows and writes them with COPY.
      const report = await Effect.runPromise(loadSimulatedEquityOnDatabase(t.database, INPUTS))
      expect(report).not.toBe("unchanged")
      if (report !== "unchanged") {
        expect(report.companies).toBe(INPUTS.generated + 5)
        expect(report.facts).toBe(Number(byStore.equity_facts?.split(" ")[0]))
      }
      expect(await contents()).toEqual(byStore)

      // The same day again: nothing generated or written.
      expect(await Effect.runPromise(loadSimulatedEquityOnDatabase(t.database, INPUTS))).toBe("unchanged")
      expect(await contents()).toEqual(byStore)

      // Over rows already there, every table goes through staging with the store's rule: nothing new.
      const again = await inBulkTransaction(t.database, (s) =>
        copyEquityRows(s, {
          companies: sim.companies,
          tickers: sim.tickers,
          factsByCik: sim.factsByCik,
          filingsByCik: new Map([...sim.submissions].map(([cik, sub]) => [cik, sub.filings])),
          securitiesByCik: sim.securities,
          barsByCik: simulatedBarsByTicker(sim),
          ownershipReports: sim.ownershipReports,
          holdingsReports: sim.holdingsReports
        })
      )
      expect([again.facts, again.filings, again.ownershipReports, again.holdingsReports, again.holdings]).toEqual([
        0, 0, 0, 0, 0
      ])
      expect(await contents()).toEqual(byStore)

      // Another day is another simulation: replaced whole, the other company still untouched.
      const next = await Effect.runPromise(loadSimulatedEquityOnDatabase(t.database, { ...INPUTS, asOf: "2026-11-23" }))
      expect(next).not.toBe("unchanged")
      const real = await Effect.runPromise(store.bars(REAL.cik, "AAPL", {}))
      expect(real).toHaveLength(1)
      expect((await Effect.runPromise(store.company(REAL.cik)))?.name).toBe("Apple Inc.")
    }, 120_000)
  })

suite("pglite", () => pgliteTestDatabase())
if (TEST_DATABASE_URL === undefined) {
  describe.skip("postgresql (skipped: TEST_DATABASE_URL is not set)", () => {})
} else {
  suite("postgresql", () => postgresTestDatabase(TEST_DATABASE_URL as string))
}
