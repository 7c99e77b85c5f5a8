/**
 * An ingest of a bulk archive killed (SIGKILL) in the middle, on server PostgreSQL: the entries committed before
 * the kill stay whole with their marks, the one being written leaves nothing, and the next run skips exactly the
 * committed entries and loads the rest. Skipped without TEST_DATABASE_URL.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { sql } from "kysely"
import { afterAll, describe, expect, it } from "vitest"
import { postgresTestDatabase, TEST_DATABASE_URL, type TestDatabase } from "../adapters/postgres/test/support.ts"
import { companyFactsText } from "./support/ingest-fixtures.ts"
import { SERVE_ENTRY } from "./support/server-process.ts"
import { writeZip } from "./support/zip-writer.ts"

const dir = mkdtempSync(join(tmpdir(), "md-bulk-kill-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A company's companyfacts with `n` extra facts, so an entry takes a while to write. */
const facts = (cik: number, n: number) => {
  const rows = Array.from(
    { length: n },
    (_, i) =>
      `{"end":"20${String(10 + (i % 15)).padStart(2, "0")}-12-31","val":${i}.5,"accn":"000${cik}-24-${String(i).padStart(6, "0")}","fy":2024,"fp":"FY","form":"10-K","filed":"2025-02-01"}`
  )
  return companyFactsText()
    .replace('"cik":9990777', `"cik":${cik}`)
    .replace('"dei":{', `"dei":{"Filler":{"label":"Filler","units":{"USD":[${rows.join(",")}]}},`)
}

/** Runs `market-data ingest sec <zip>`; `killAfter` kills it once that many entries are reported done. */
const ingest = (url: string, zip: string, killAfter?: number) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [SERVE_ENTRY, "ingest", "sec", zip, "--json"], {
      env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: "warn" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout?.on("data", (d) => (stdout += d))
    child.stderr?.on("data", (d) => {
      stderr += d
      const done = [...stderr.matchAll(/^ingesting companyfacts\.zip (\d+)\//gm)].length
      if (killAfter !== undefined && done >= killAfter) child.kill("SIGKILL")
    })
    child.on("exit", (code, signal) => resolve({ code, signal, stdout, stderr }))
  })

if (TEST_DATABASE_URL === undefined) {
  describe.skip("bulk ingest killed mid-archive (skipped: TEST_DATABASE_URL is not set)", () => {})
} else {
  describe("bulk ingest killed mid-archive, on PostgreSQL", () => {
    let t: TestDatabase
    afterAll(() => t?.drop())

    it("keeps the committed entries whole, and the next run loads exactly the others", async () => {
      t = await postgresTestDatabase(TEST_DATABASE_URL as string, 2)
      const ciks = Array.from({ length: 12 }, (_, i) => 9990900 + i)
      const zip = join(dir, "companyfacts.zip")
      writeZip(
        zip,
        ciks.map((cik) => ({ name: `CIK${String(cik).padStart(10, "0")}.json`, data: facts(cik, 20_000) }))
      )
      const first = await ingest(t.url as string, zip, 3)
      expect(first.signal).toBe("SIGKILL")
      const marks = await sql<{ entry: string; cik: string }>`select entry, cik from equity_bulk_entries`.execute(
        t.database.db
      )
      const loaded = marks.rows.map((r) => r.cik).sort()
      expect(loaded.length).toBeGreaterThanOrEqual(3)
      expect(loaded.length).toBeLessThan(ciks.length)
      // Every company with facts is a marked one, each with all its facts: no half entry.
      const counts = await sql<{
        cik: string
        n: string
      }>`select cik, count(*) as n from equity_facts group by cik`.execute(t.database.db)
      expect(counts.rows.map((r) => r.cik).sort()).toEqual(loaded)
      for (const r of counts.rows) expect(Number(r.n)).toBe(20_000 + 7)
      const second = await ingest(t.url as string, zip)
      expect(second.code).toBe(0)
      const report = JSON.parse(second.stdout)
      expect(report.skipped).toBe(loaded.length)
      expect(report.loaded).toBe(ciks.length - loaded.length)
      expect(report.written.facts).toBe((ciks.length - loaded.length) * (20_000 + 7))
      const total = await sql<{ n: string }>`select count(*) as n from equity_facts`.execute(t.database.db)
      expect(Number(total.rows[0]?.n)).toBe(ciks.length * (20_000 + 7))
    }, 180_000)
  })
}
