/**
 * The bulk ingest's worker path on entries large enough to cross many pieces (each about 3 MB of JSON: about a dozen
 * 256 KB pieces into the parsing worker, a dozen `COPY` pieces back), on PGlite and (with TEST_DATABASE_URL) server
 * PostgreSQL: an entry found bad only after most of its rows were already copied (a bad row in its last concept, a
 * CRC-32 that does not match, found at its end) is named with its reason and leaves nothing, while the entries
 * around it load; the rows loaded are exactly the whole-document parser's, decimals as filed; a document that
 * names its company after its facts loads too; a second run skips what loaded unchanged and names the bad ones
 * again.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type Database, makePgBulkLoader, makePgEquityStore, openPglite } from "@market-data/postgres"
import { parseCompanyFacts } from "@market-data/sources"
import { Effect, Result } from "effect"
import { sql } from "kysely"
import { afterAll, describe, expect, it } from "vitest"
import { postgresTestDatabase, TEST_DATABASE_URL } from "../../adapters/postgres/test/support.ts"
import { companyFactsText, submissionsText } from "../../test/support/ingest-fixtures.ts"
import { writeZip } from "../../test/support/zip-writer.ts"
import { lineProgress } from "../src/Cli.ts"
import { ingestExitCode } from "../src/Ingest.ts"
import { ingestArchives } from "../src/ingest/Bulk.ts"
import { migrateToLatest } from "../src/Migrate.ts"

const dir = mkdtempSync(join(tmpdir(), "md-bulk-worker-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/**
 * A companyfacts document of about 3 MB: the fixture's facts, then `n` filler concepts of 100 rows each whose
 * values are long decimals no float keeps; `lastVal` replaces the very last row's value (a bad one makes the
 * document invalid only at its end).
 */
const bigFacts = (cik: number, n: number, lastVal?: string) => {
  const concepts: Array<string> = []
  for (let c = 0; c < n; c++) {
    const rows: Array<string> = []
    for (let i = 0; i < 100; i++) {
      const last = c === n - 1 && i === 99
      const val =
        last && lastVal !== undefined ? lastVal : `${c + 1}${i}123456789012345678.${String(i).padStart(4, "0")}10`
      rows.push(
        `{"start":"20${String(10 + (i % 15)).padStart(2, "0")}-01-01","end":"20${String(10 + (i % 15)).padStart(2, "0")}-12-31","val":${val},"accn":"000${cik}-${String(c % 100).padStart(2, "0")}-${String(i).padStart(6, "0")}","fy":20${10 + (i % 15)},"fp":"FY","form":"10-K","filed":"2025-02-01","frame":"CY20${10 + (i % 15)}"}`
      )
    }
    concepts.push(
      `"Filler${c}":{"label":"Filler concept ${c}","description":"${"A description as long as the SEC's. ".repeat(8)}","units":{"USD":[${rows.join(",")}]}}`
    )
  }
  return companyFactsText()
    .replace('"cik":9990777', `"cik":${cik}`)
    .replace("Fixture Decimals Inc", `Big Fixture ${cik}`)
    .replace('"us-gaap":{', `"us-gaap":{${concepts.join(",")},`)
}

const entryName = (cik: number) => `CIK${String(cik).padStart(10, "0")}.json`

const backends: Array<{ name: string; open: () => Promise<{ database: Database; close: () => Promise<void> }> }> = [
  {
    name: "PGlite",
    open: async () => {
      const database = await openPglite(undefined)
      await migrateToLatest(database.db)
      return { database, close: () => database.close() }
    }
  },
  ...(TEST_DATABASE_URL === undefined
    ? []
    : [
        {
          name: "PostgreSQL",
          open: async () => {
            const t = await postgresTestDatabase(TEST_DATABASE_URL as string, 3)
            return { database: t.database, close: t.drop }
          }
        }
      ])
]

if (TEST_DATABASE_URL === undefined) {
  describe.skip("bulk ingest's worker path on PostgreSQL (skipped: TEST_DATABASE_URL is not set)", () => {})
}

for (const backend of backends) {
  describe(`bulk ingest's worker path on ${backend.name}`, () => {
    it("names entries found bad after their rows were being copied, leaves nothing of them, loads the rest, resumes", async () => {
      const zip = join(dir, `companyfacts-${backend.name}.zip`)
      const good = bigFacts(9990601, 160)
      // Facts before the company's name and CIK: the worker holds them until the document names its company.
      const late = good
        .replace('{"cik":9990601,"entityName":"Big Fixture 9990601",', "{")
        .replace(/}$/, `,"entityName":"Late Fixture","cik":9990604}`)
      const badLastRow = bigFacts(9990602, 160, '"not a number"')
      const badCrc = bigFacts(9990603, 160)
      expect(Buffer.byteLength(good)).toBeGreaterThan(2_500_000)
      writeZip(zip, [
        { name: entryName(9990601), data: good },
        { name: entryName(9990602), data: badLastRow },
        { name: entryName(9990603), data: badCrc, crc32: 0x0badc0de },
        { name: entryName(9990604), data: late },
        { name: "CIK0009990777.json", data: submissionsText() }
      ])
      const { database, close } = await backend.open()
      try {
        const store = makePgEquityStore(database)
        const loader = makePgBulkLoader(database)
        const run = () =>
          Effect.runPromise(
            ingestArchives(
              loader,
              store,
              [zip],
              lineProgress(() => {})
            )
          )
        const first = await run()
        const byEntry = new Map(first.results.map((r) => [r.path.split(":").pop(), r]))
        expect(byEntry.get(entryName(9990601))?.status).toBe("loaded")
        expect(byEntry.get(entryName(9990604))?.status).toBe("loaded")
        expect(byEntry.get("CIK0009990777.json")?.status).toBe("loaded")
        expect(byEntry.get(entryName(9990602))?.reason).toMatch(
          /^not a valid companyfacts document: \$\.facts\.us-gaap\.Filler159\.units\.USD\[99\]\.val: expected a decimal number/
        )
        expect(byEntry.get(entryName(9990603))?.reason).toMatch(
          /^corrupt: its data's CRC-32 is [0-9a-f]{8}, the archive's directory says 0badc0de$/
        )
        expect(ingestExitCode(first)).toBe(1)

        // The rows are exactly the whole-document parser's: every fact, every value as filed.
        const whole = parseCompanyFacts(good)
        if (Result.isFailure(whole)) throw new Error(whole.failure.message)
        const key = (f: { concept: string; unit: string; start: string | null; end: string; accession: string }) =>
          `${f.concept}|${f.unit}|${f.start}|${f.end}|${f.accession}`
        const stored = await Effect.runPromise(store.facts("9990601"))
        expect(stored.length).toBe(whole.success.facts.length)
        const byKey = new Map(stored.map((f) => [key(f), f]))
        for (const f of whole.success.facts) expect(byKey.get(key(f))).toEqual(f)
        expect(byKey.get("Filler7|USD|2013-01-01|2013-12-31|0009990601-07-000003")?.value).toBe(
          "83123456789012345678.000310"
        )
        expect((await Effect.runPromise(store.facts("9990604"))).length).toBe(whole.success.facts.length)
        expect((await Effect.runPromise(store.company("9990604")))?.name).toBe("Late Fixture")

        // Nothing of the bad entries: no company, no fact, no mark.
        for (const cik of ["9990602", "9990603"]) {
          expect(await Effect.runPromise(store.company(cik))).toBeUndefined()
          const n = await sql<{ n: string }>`select count(*) as n from equity_facts where cik = ${cik}`.execute(
            database.db
          )
          expect(Number(n.rows[0]?.n)).toBe(0)
        }
        const marks = await Effect.runPromise(loader.marks(`companyfacts-${backend.name}.zip`))
        expect([...marks.keys()].sort()).toEqual(["CIK0009990601.json", "CIK0009990604.json", "CIK0009990777.json"])

        // Again: the loaded entries are skipped unchanged, the bad ones named again, nothing written twice.
        const second = await run()
        expect(second.skipped).toBe(3)
        expect(second.results.map((r) => `${r.path.split(":").pop()} ${r.status}`).sort()).toEqual([
          "CIK0009990602.json failed",
          "CIK0009990603.json failed"
        ])
        expect(second.written.facts).toBe(0)
        expect(ingestExitCode(second)).toBe(1)
      } finally {
        await close()
      }
    }, 180_000)
  })
}
