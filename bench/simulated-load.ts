/**
 * The first start of a day on the embedded store: the simulated companies (`MARKET_DATA_SIMULATED_COMPANIES`,
 * default 520, plus the five hand-made) written into a fresh PGlite data directory, side by side:
 *
 * 1. the simulation generated alone (no database);
 * 2. the store path (how a start wrote them before: generated, then written company by company through
 *    `PgEquityStore`'s batched inserts, in one transaction);
 * 3. the start's path, `loadSimulatedEquityOnDatabase` (generated, then written with `COPY FROM '/dev/blob'`, the
 *    SEC bulk ingest's path), then the same call again: the reopen of the same day, which must write nothing.
 *
 * Wall and CPU time of each (PGlite runs in this process, so CPU covers the database's work too), and a check that
 * both paths left the same rows (an MD5 of every equity table's rows in key order).
 *
 * Alone: `BENCH_ONLY=simload node bench/run.ts` (no PostgreSQL needed); `BENCH_SIM_COMPANIES` sets the count.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Equity } from "@market-data/core"
import { type Database, makePgEquityStore, openPglite } from "@market-data/postgres"
import { loadSimulatedEquity, simulatedEquity } from "@market-data/sources"
import { Effect } from "effect"
import { sql } from "kysely"
import { migrateToLatest } from "../infra/src/Migrate.ts"
import { loadSimulatedEquityOnDatabase } from "../infra/src/Planes.ts"

/** Every equity table with its key, for the content digest. */
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

interface Timed {
  readonly wallMs: number
  readonly cpuMs: number
}

const timed = async <A>(run: () => Promise<A>): Promise<Timed & { readonly value: A }> => {
  const cpu = process.cpuUsage()
  const t = performance.now()
  const value = await run()
  const used = process.cpuUsage(cpu)
  return { value, wallMs: performance.now() - t, cpuMs: (used.user + used.system) / 1000 }
}

/** Rows and an MD5 of the rows in key order, per table. */
const contents = async (database: Database) => {
  const out: Record<string, { readonly rows: number; readonly md5: string }> = {}
  for (const [table, key] of TABLES) {
    const r = await sql<{ n: string; md5: string | null }>`
      select count(*) as n, md5(string_agg(t::text, '|' order by ${sql.raw(key)})) as md5
      from ${sql.table(table)} t`.execute(database.db)
    out[table] = { rows: Number(r.rows[0]?.n ?? 0), md5: r.rows[0]?.md5 ?? "" }
  }
  return out
}

const withFreshStore = async <A>(body: (database: Database) => Promise<A>): Promise<A> => {
  const dir = mkdtempSync(join(tmpdir(), "md-simload-"))
  const database = await openPglite(dir)
  try {
    await migrateToLatest(database.db)
    return await body(database)
  } finally {
    await database.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

export interface SimulatedLoadResult {
  readonly companies: number
  readonly rows: number
  readonly generate: Timed
  readonly storePath: Timed
  readonly copyPath: Timed
  readonly reopen: Timed
  readonly reopenUnchanged: boolean
  readonly sameRows: boolean
}

export const simulatedLoadBench = async (
  generated: number,
  log: (line: string) => void = (line) => process.stdout.write(line)
): Promise<SimulatedLoadResult> => {
  const asOf = new Date().toISOString().slice(0, 10)
  const seed = 20261123
  const inputs = { seed, asOf, generated }
  const generate = await timed(async () => simulatedEquity(seed, { asOf, generated }))

  const store = await withFreshStore(async (database) => {
    const t = await timed(() =>
      database.db.transaction().execute(async (trx) => {
        const sim = simulatedEquity(seed, { asOf, generated })
        const equity = makePgEquityStore({ ...database, db: trx })
        await Effect.runPromise(loadSimulatedEquity(sim).pipe(Effect.provideService(Equity.EquityStore, equity)))
      })
    )
    return { ...t, contents: await contents(database) }
  })

  const copy = await withFreshStore(async (database) => {
    const t = await timed(() => Effect.runPromise(loadSimulatedEquityOnDatabase(database, inputs)))
    const reopen = await timed(() => Effect.runPromise(loadSimulatedEquityOnDatabase(database, inputs)))
    return { ...t, reopen, contents: await contents(database) }
  })

  const rows = Object.values(copy.contents).reduce((s, c) => s + c.rows, 0)
  const sameRows = TABLES.every(([table]) => {
    const a = store.contents[table]
    const b = copy.contents[table]
    return a !== undefined && b !== undefined && a.rows === b.rows && a.md5 === b.md5
  })
  const result: SimulatedLoadResult = {
    companies: generated + 5,
    rows,
    generate: { wallMs: generate.wallMs, cpuMs: generate.cpuMs },
    storePath: { wallMs: store.wallMs, cpuMs: store.cpuMs },
    copyPath: { wallMs: copy.wallMs, cpuMs: copy.cpuMs },
    reopen: { wallMs: copy.reopen.wallMs, cpuMs: copy.reopen.cpuMs },
    reopenUnchanged: copy.reopen.value === "unchanged",
    sameRows
  }
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`
  const both = (t: Timed) => `${s(t.wallMs)} wall, ${s(t.cpuMs)} CPU`
  log(
    `\nsimulated companies into a fresh PGlite data dir: ${result.companies} companies, ${rows.toLocaleString("en-US")} rows\n`
  )
  log(`  generate alone (no database):          ${both(result.generate)}\n`)
  log(`  store path (before; generate + write): ${both(result.storePath)}\n`)
  log(`  COPY path (start's; generate + write): ${both(result.copyPath)}\n`)
  // Wall time minus generation is meaningless on a busy machine (each generation's wall varies); CPU is not.
  log(
    `  writing alone (CPU minus generation):  store ${s(result.storePath.cpuMs - result.generate.cpuMs)}, COPY ${s(result.copyPath.cpuMs - result.generate.cpuMs)}\n`
  )
  log(`  reopen of the same day:                ${both(result.reopen)}, wrote nothing: ${result.reopenUnchanged}\n`)
  log(`  both paths left the same rows (per-table MD5): ${result.sameRows}\n`)
  return result
}

if (import.meta.main) {
  const r = await simulatedLoadBench(Number(process.env.BENCH_SIM_COMPANIES ?? "520"))
  if (!r.sameRows || !r.reopenUnchanged) process.exitCode = 1
}
