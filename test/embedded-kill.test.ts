/**
 * A committed charge on the embedded PGlite store survives SIGKILL, with group commit on, PGlite on the main thread
 * (as `serve` opens the store by default) and on its worker thread (`DATABASE_PGLITE_WORKER=on`): a server process on a data folder serves paid requests from ten connections at once (their
 * charges go out in batches) and is killed mid-load, three times; after each kill the folder is opened again.
 * Asserted after the last: every answer that was served (a 200 with its charge) is in the ledger, at most one
 * charge more per request the kill cut, and the balance is the grants less the charges. No hold or in-flight
 * record is involved: the requests carry no Idempotency-Key (one `md_charge` each).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { openPglite } from "@market-data/postgres"
import { sql } from "kysely"
import { afterAll, describe, expect, it } from "vitest"
import {
  killServerProcess,
  type ServerProcess,
  startServerProcess,
  stopServerProcess
} from "./support/server-process.ts"

const KEY = `mdk_${"Kill".repeat(8)}`
const CREDITS = 1_000_000
const KILLS = 3
const CONNECTIONS = 10

describe.each([
  { worker: "off", line: /on the main thread, group commit up to 64 calls/ },
  { worker: "on", line: /on its worker thread, group commit up to 64 calls/ }
])("the embedded store under SIGKILL, group commit on, DATABASE_PGLITE_WORKER=$worker", ({ worker, line }) => {
  const dir = mkdtempSync(join(tmpdir(), "embedded-kill-"))
  const started: Array<ServerProcess> = []
  afterAll(async () => {
    await Promise.all(started.map((s) => stopServerProcess(s)))
    rmSync(dir, { recursive: true, force: true })
  })

  const start = async () => {
    // The embedded store: no DATABASE_URL, whatever the suite's environment says.
    const { DATABASE_URL: _db, DATABASE_BATCH_MAX: _max, DATABASE_PGLITE_WORKER: _worker, ...inherited } = process.env
    const s = await startServerProcess(
      {
        ...inherited,
        MARKET_DATA_DIR: dir,
        DATABASE_PGLITE_WORKER: worker,
        MARKET_DATA_BOOTSTRAP_KEY: KEY,
        MARKET_DATA_BOOTSTRAP_CREDITS: String(CREDITS),
        MARKET_DATA_RATE_LIMIT_PER_MINUTE: "100000000",
        TEST_SLOW_MS: "0"
      },
      { startTimeoutMs: 120_000 }
    )
    started.push(s)
    return s
  }

  it(`${KILLS} kills under paid load: every served charge is in the ledger, at most one more per cut request`, async () => {
    let served = 0
    let cut = 0
    let charged = 0
    const refused: Array<number> = []
    for (let kill = 0; kill < KILLS; kill++) {
      const s = await start()
      expect(s.stdout()).toMatch(line)
      let stop = false
      let answered = 0
      // Resolved when the server has served a few hundred requests: the kill comes mid-load.
      const midLoad = Promise.withResolvers<void>()
      const loops = Array.from({ length: CONNECTIONS }, async () => {
        while (!stop) {
          try {
            const r = await fetch(`${s.base}/api/v1/price?id=crypto:bitcoin`, {
              headers: { authorization: `Bearer ${KEY}` }
            })
            await r.text()
            if (r.status !== 200) {
              refused.push(r.status)
              continue
            }
            served++
            answered++
            if (answered === 300) midLoad.resolve()
            charged += Number(r.headers.get("x-credits-charged") ?? Number.NaN)
          } catch {
            // The connection was cut by the kill: the request may or may not have been charged.
            cut++
            return
          }
        }
      })
      // Killed once it has served a few hundred requests (or, should every loop end first, at once: the
      // assertions below then fail on the count served).
      await Promise.race([midLoad.promise, Promise.all(loops)])
      await killServerProcess(s)
      stop = true
      await Promise.all(loops)
    }
    // Opened once more by a server (recovery after the last kill), stopped cleanly, then read.
    await stopServerProcess(await start())
    const database = await openPglite(dir)
    try {
      const rows = await sql<{ kind: string; n: string; amount: string }>`select kind, count(*) as n,
        sum(amount) as amount from ledger_entries group by kind order by kind`.execute(database.db)
      const byKind = Object.fromEntries(rows.rows.map((r) => [r.kind, { n: Number(r.n), amount: Number(r.amount) }]))
      const charges = byKind.charge ?? { n: 0, amount: 0 }
      // Each start tops the bootstrap key up to CREDITS again: the grants are CREDITS and the top-ups.
      const granted = byKind.grant?.amount ?? 0
      expect(granted).toBeGreaterThanOrEqual(CREDITS)
      expect(refused).toEqual([])
      expect(served).toBeGreaterThanOrEqual(KILLS * 300)
      expect(charged).toBeGreaterThan(0)
      // A served answer's charge committed before the answer was released: it is there after the kill.
      expect(charges.n).toBeGreaterThanOrEqual(served)
      expect(charges.amount).toBeGreaterThanOrEqual(charged)
      // A cut request may have been charged (committed, then killed before the answer was sent), at most once.
      expect(charges.n).toBeLessThanOrEqual(served + cut)
      const available = await sql<{ v: string }>`select md_available(id, ${Date.now()}) as v from api_keys`.execute(
        database.db
      )
      expect(available.rows.map((r) => Number(r.v))).toEqual([granted - charges.amount])
    } finally {
      await database.close()
    }
  }, 240_000)
})
