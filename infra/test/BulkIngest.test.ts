/**
 * `ingest sec <archive.zip>`: the SEC's bulk archives read entry by entry, on the memory twin, PGlite and (with
 * TEST_DATABASE_URL) server PostgreSQL: good entries load while a corrupt (bad CRC-32, truncated) or malformed entry
 * is named with its reason and writes nothing; the answers equal those of the per-file ingest; a restarted ingest
 * skips what was loaded unchanged and loads what changed; a failure inside an entry's transaction leaves no half.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { BulkLoader, EquityStore } from "@market-data/core"
import { makeMemoryEquityStore } from "@market-data/memory"
import { type Database, makePgBulkLoader, makePgEquityStore, openPglite } from "@market-data/postgres"
import { ConfigProvider, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { sql } from "kysely"
import { afterAll, describe, expect, it } from "vitest"
import { postgresTestDatabase, TEST_DATABASE_URL } from "../../adapters/postgres/test/support.ts"
import { makeEquityPlane } from "../../core/src/equity/EquityPlane.ts"
import { EquityStore as EquityStoreTag } from "../../core/src/equity/EquityStore.ts"
import { decodeParams, isApiError } from "../../core/src/Params.ts"
import { planeHandlers } from "../../core/src/Planes.ts"
import { operation } from "../../core/src/Registry.ts"
import { companyFactsText, FIXTURE_CIK, writeFixtures } from "../../test/support/ingest-fixtures.ts"
import { writeZip } from "../../test/support/zip-writer.ts"
import { type Io, lineProgress, runCli } from "../src/Cli.ts"
import { ingestExitCode, ingestSec } from "../src/Ingest.ts"
import { ingestArchives, makeStoreBulkLoader } from "../src/ingest/Bulk.ts"
import { migrateToLatest } from "../src/Migrate.ts"

const dirs: Array<string> = []
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "md-bulk-"))
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const quiet = lineProgress(() => {})

/** Another company's companyfacts: the fixture's, under another CIK and name. */
const otherFacts = (cik: number, revenue = "5000.25") =>
  companyFactsText(revenue)
    .replace('"cik":9990777', `"cik":${cik}`)
    .replace("Fixture Decimals Inc", `Fixture Company ${cik}`)

const NOW = Date.UTC(2026, 10, 23, 15)

/** `financials`, `profile` and `events` of a company, as JSON text, over a store. */
const answers = (store: EquityStore["Service"], id: string) =>
  Effect.runPromise(
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const plane = yield* makeEquityPlane({ source: "sec" as never })
      const handlers = planeHandlers([plane])
      const out: Array<string> = []
      for (const [name, extra] of [
        [
          "financials",
          [
            ["periods", "20"],
            ["basis_concepts", "true"]
          ]
        ],
        ["profile", []],
        ["events", [["limit", "200"]]]
      ] as const) {
        const op = operation(name)!
        const params = decodeParams(op, [["id", id], ...extra])
        if (isApiError(params)) throw new Error(params.message)
        const result = yield* handlers.get(name)!({
          op,
          params,
          principal: { _tag: "Anonymous", client: "test", rateLimitPerMinute: 60 },
          rate: { limit: 60, remaining: 59, resetAtMs: NOW, allowed: true },
          nowMs: NOW
        })
        out.push(`${name} ${JSON.stringify(result)}`)
      }
      return out
    }).pipe(Effect.provide(Layer.merge(Layer.succeed(EquityStoreTag)(store), TestClock.layer())))
  )

interface Backend {
  readonly name: string
  /** A fresh, empty store with its bulk loader. */
  readonly open: () => Promise<{
    readonly store: EquityStore["Service"]
    readonly loader: BulkLoader
    readonly database?: Database
    readonly close: () => Promise<void>
  }>
}

const pgBackend = (
  name: string,
  openDb: () => Promise<{ database: Database; close: () => Promise<void> }>
): Backend => ({
  name,
  open: async () => {
    const { database, close } = await openDb()
    return { store: makePgEquityStore(database), loader: makePgBulkLoader(database), database, close }
  }
})

const backends: Array<Backend> = [
  {
    name: "memory",
    open: async () => {
      const store = makeMemoryEquityStore()
      return { store, loader: makeStoreBulkLoader(store), close: async () => {} }
    }
  },
  pgBackend("PGlite", async () => {
    const database = await openPglite(undefined)
    await migrateToLatest(database.db)
    return { database, close: () => database.close() }
  }),
  ...(TEST_DATABASE_URL === undefined
    ? []
    : [
        pgBackend("PostgreSQL", async () => {
          const t = await postgresTestDatabase(TEST_DATABASE_URL as string, 3)
          return { database: t.database, close: t.drop }
        })
      ])
]

if (TEST_DATABASE_URL === undefined) {
  describe.skip("bulk ingest on PostgreSQL (skipped: TEST_DATABASE_URL is not set)", () => {})
}

const run = (loader: BulkLoader, store: EquityStore["Service"], paths: ReadonlyArray<string>) =>
  Effect.runPromise(ingestArchives(loader, store, paths, quiet))

for (const backend of backends) {
  describe(`bulk ingest on ${backend.name}`, () => {
    it("loads the good entries, names each bad one with its reason, writes nothing of it, and exits 1", async () => {
      const dir = tempDir()
      const zip = join(dir, "companyfacts.zip")
      writeZip(zip, [
        { name: "CIK0009990777.json", data: companyFactsText() },
        { name: "CIK0009990801.json", data: otherFacts(9990801) },
        { name: "CIK0009990802.json", data: otherFacts(9990802), crc32: 0x12345678 },
        { name: "CIK0009990803.json", data: otherFacts(9990803), truncateTo: 0.5 },
        { name: "CIK0009990804.json", data: otherFacts(9990804).slice(0, -20) },
        { name: "README.txt", data: "not a company" }
      ])
      const b = await backend.open()
      try {
        const summary = await run(b.loader, b.store, [zip])
        const byEntry = new Map(summary.results.map((r) => [r.path.split(":").pop(), r]))
        expect(byEntry.get("CIK0009990777.json")?.status).toBe("loaded")
        expect(byEntry.get("CIK0009990801.json")?.status).toBe("loaded")
        expect(byEntry.get("CIK0009990802.json")?.reason).toMatch(
          /corrupt: its data's CRC-32 is [0-9a-f]{8}, the archive's directory says 12345678/
        )
        expect(byEntry.get("CIK0009990803.json")?.reason).toMatch(/^corrupt: /)
        expect(byEntry.get("CIK0009990804.json")?.reason).toMatch(
          /not a valid companyfacts document: \$: not valid JSON/
        )
        expect(summary.loaded).toBe(2)
        expect(summary.failed).toBe(3)
        expect(summary.ignored).toBe(1)
        expect(ingestExitCode(summary)).toBe(1)
        const companies = await Effect.runPromise(b.store.companies)
        expect(companies.map((c) => c.cik).sort()).toEqual(["9990777", "9990801"])
        expect(summary.written.facts).toBe(7 * 2)
        expect((await Effect.runPromise(b.store.facts("9990801"))).length).toBe(7)
      } finally {
        await b.close()
      }
    }, 60_000)

    it("answers financials, profile and events exactly as the per-file ingest of the same documents", async () => {
      const dir = tempDir()
      const files = writeFixtures(join(dir, "files"))
      const entries = [
        { name: "CIK0009990777.json", path: files.submissions },
        { name: "CIK0009990777-submissions-001.json", path: files.submissionsPage }
      ]
      const factsZip = join(dir, "companyfacts.zip")
      const subsZip = join(dir, "submissions.zip")
      writeZip(factsZip, [{ name: "CIK0009990777.json", data: readFileSync(files.companyFacts) }])
      writeZip(
        subsZip,
        entries.map((e) => ({ name: e.name, data: readFileSync(e.path) }))
      )
      const apple = "../shared/data/sec"
      const withApple = existsSync(join(apple, "companyfacts/CIK0000320193.json"))
      if (withApple) {
        writeZip(join(dir, "apple-facts.zip"), [
          { name: "CIK0000320193.json", data: readFileSync(join(apple, "companyfacts/CIK0000320193.json")) }
        ])
        writeZip(join(dir, "apple-subs.zip"), [
          { name: "CIK0000320193.json", data: readFileSync(join(apple, "submissions/CIK0000320193.json")) }
        ])
      } else console.warn("real SEC data absent (../shared/data/sec): Apple's documents not compared")
      const viaFiles = await backend.open()
      const viaZip = await backend.open()
      try {
        const filePaths = [files.companyFacts, files.submissions, files.submissionsPage]
        if (withApple)
          filePaths.push(join(apple, "companyfacts/CIK0000320193.json"), join(apple, "submissions/CIK0000320193.json"))
        const a = await Effect.runPromise(ingestSec(viaFiles.store, filePaths, quiet))
        expect(a.failed).toBe(0)
        const zips = [
          factsZip,
          subsZip,
          ...(withApple ? [join(dir, "apple-facts.zip"), join(dir, "apple-subs.zip")] : [])
        ]
        const b = await run(viaZip.loader, viaZip.store, zips)
        expect(b.failed).toBe(0)
        expect(b.written.facts).toBe(a.written.facts)
        expect(b.written.filings).toBe(a.written.filings)
        expect(b.written.companies).toBe(a.written.companies)
        const fixture = await answers(viaZip.store, `eq:${FIXTURE_CIK}:DECI`)
        expect(fixture.join("\n")).toContain("1234567890123456789.123456")
        expect(fixture).toEqual(await answers(viaFiles.store, `eq:${FIXTURE_CIK}:DECI`))
        if (withApple) {
          expect(await answers(viaZip.store, "eq:320193:AAPL")).toEqual(await answers(viaFiles.store, "eq:320193:AAPL"))
        }
      } finally {
        await viaFiles.close()
        await viaZip.close()
      }
    }, 120_000)

    it("after a kill, a second run skips the entries loaded unchanged and loads the rest and the changed ones", async () => {
      const dir = tempDir()
      const zip = join(dir, "companyfacts.zip")
      const ciks = [9990811, 9990812, 9990813, 9990814]
      writeZip(
        zip,
        ciks.map((cik) => ({ name: `CIK${String(cik).padStart(10, "0")}.json`, data: otherFacts(cik) }))
      )
      const b = await backend.open()
      try {
        // The first run dies while writing its third entry: the process is gone, nothing after it ran.
        let calls = 0
        const streamed = b.loader.loadStreamed
        const dying: BulkLoader = {
          ...b.loader,
          load: (entry) => (++calls === 3 ? Effect.die(new Error("killed")) : b.loader.load(entry)),
          ...(streamed === undefined
            ? {}
            : { loadStreamed: (entry) => (++calls === 3 ? Effect.die(new Error("killed")) : streamed(entry)) })
        }
        await expect(run(dying, b.store, [zip])).rejects.toThrow("killed")
        expect((await Effect.runPromise(b.store.companies)).map((c) => c.cik).sort()).toEqual(["9990811", "9990812"])
        const second = await run(b.loader, b.store, [zip])
        expect(second.skipped).toBe(2)
        expect(second.results.map((r) => r.path.split(":").pop())).toEqual(["CIK0009990813.json", "CIK0009990814.json"])
        expect(second.written.facts).toBe(14)
        // The archive downloaded again, one company's revenue restated: only that entry loads.
        writeZip(
          zip,
          ciks.map((cik) => ({
            name: `CIK${String(cik).padStart(10, "0")}.json`,
            data:
              cik === 9990812
                ? otherFacts(cik, "7000.5").replaceAll("0009990777-24-000001", "0009990777-24-000099")
                : otherFacts(cik)
          }))
        )
        const third = await run(b.loader, b.store, [zip])
        expect(third.skipped).toBe(3)
        expect(third.results.map((r) => r.path.split(":").pop())).toEqual(["CIK0009990812.json"])
        const facts = await Effect.runPromise(b.store.facts("9990812"))
        // The restating filing's facts are new rows beside the first filing's, as the per-file ingest keeps them.
        expect(facts.filter((f) => f.accession === "0009990777-24-000099").length).toBe(4)
        expect(facts.find((f) => f.accession === "0009990777-24-000099" && f.value === "7000.5")?.concept).toBe(
          "RevenueFromContractWithCustomerExcludingAssessedTax"
        )
        expect(third.written.facts).toBe(4)
        const fourth = await run(b.loader, b.store, [zip])
        expect(fourth.skipped).toBe(4)
        expect(fourth.results).toEqual([])
        expect(ingestExitCode(fourth)).toBe(0)
      } finally {
        await b.close()
      }
    }, 60_000)

    if (backend.name !== "memory") {
      it("COPY carries tabs, newlines, backslashes and nulls in values exactly", async () => {
        const b = await backend.open()
        try {
          const fact = {
            taxonomy: "custom\\tax",
            concept: "Odd\tConcept\nName\r\\N",
            unit: "USD",
            value: "-0.000000000000000000012345",
            start: null,
            end: "2024-12-31",
            fy: null,
            fp: null,
            form: "10-K",
            accession: "0009990822-25-000001",
            filed: "2025-02-01",
            frame: "\\N"
          }
          const written = await Effect.runPromise(
            b.loader.load({
              mark: { archive: "companyfacts.zip", entry: "CIK0009990822.json", crc32: 7, size: 8 },
              cik: "9990822",
              company: null,
              facts: [fact, { ...fact, value: "1" }],
              filings: []
            })
          )
          expect(written.facts).toBe(1)
          expect(await Effect.runPromise(b.store.facts("9990822"))).toEqual([fact])
        } finally {
          await b.close()
        }
      }, 60_000)

      it("a failure inside an entry's transaction leaves no half of it: no company, no facts, no mark", async () => {
        const b = await backend.open()
        try {
          const entry = {
            mark: { archive: "companyfacts.zip", entry: "CIK0009990821.json", crc32: 1, size: 2 },
            cik: "9990821",
            company: {
              value: {
                cik: "9990821",
                name: "Half Written Inc",
                tickers: [],
                exchanges: [],
                sic: null,
                sicDescription: null,
                fiscalYearEnd: null,
                formerNames: []
              },
              mode: "if_absent" as const
            },
            // Not a number: PostgreSQL refuses it in the middle of the COPY, after the company row was written.
            facts: [
              {
                taxonomy: "us-gaap",
                concept: "Revenues",
                unit: "USD",
                value: "12x",
                start: null,
                end: "2024-12-31",
                fy: 2024,
                fp: "FY",
                form: "10-K",
                accession: "0009990821-25-000001",
                filed: "2025-02-01",
                frame: null
              }
            ],
            filings: []
          }
          await expect(Effect.runPromise(b.loader.load(entry))).rejects.toThrow()
          expect(await Effect.runPromise(b.store.company("9990821"))).toBeUndefined()
          expect((await Effect.runPromise(b.loader.marks("companyfacts.zip"))).size).toBe(0)
          const n = await sql<{ n: string }>`select count(*) as n from equity_facts where cik = '9990821'`.execute(
            b.database!.db
          )
          expect(Number(n.rows[0]?.n)).toBe(0)
        } finally {
          await b.close()
        }
      }, 60_000)
    }
  })
}

describe("market-data ingest sec <archive.zip>", () => {
  it("dispatches archives to the bulk ingest beside plain files, reports each bad entry, exits 1", async () => {
    const dir = tempDir()
    const files = writeFixtures(join(dir, "files"))
    const zip = join(dir, "companyfacts.zip")
    writeZip(zip, [
      { name: "CIK0009990777.json", data: companyFactsText() },
      { name: "CIK0009990831.json", data: "{not json" }
    ])
    const out: Array<string> = []
    const err: Array<string> = []
    const io: Io = { out: (l) => out.push(l), err: (l) => err.push(l), progress: lineProgress((l) => err.push(l)) }
    const env = { MARKET_DATA_DIR: join(dir, "store") }
    const cli = (...argv: Array<string>) =>
      Effect.runPromise(
        runCli(argv, io).pipe(
          Effect.provide(
            ConfigProvider.layer(ConfigProvider.fromEnvRecord({ MARKET_DATA_SIM_UNIVERSE: "registry", ...env }))
          )
        )
      )
    expect(await cli("ingest", "sec", zip, files.submissions, "--json")).toBe(1)
    const report = JSON.parse(out.pop() as string)
    expect(report.loaded).toBe(2)
    expect(report.failed).toBe(1)
    expect(report.results.find((r: { status: string }) => r.status === "failed").path).toMatch(
      /companyfacts\.zip:CIK0009990831\.json$/
    )
    expect(err.some((l) => /ingesting companyfacts\.zip 1\/2: CIK0009990777\.json: .*rows\/s \| ETA/.test(l))).toBe(
      true
    )
    // Again: the good entry is skipped unchanged, the bad one named again.
    expect(await cli("ingest", "sec", zip)).toBe(1)
    expect(out.pop()).toMatch(/1 skipped/)
    expect(
      err.some((l) => /failed {3}.*companyfacts\.zip:CIK0009990831\.json: not a valid submissions document/.test(l))
    ).toBe(true)
  }, 60_000)
})
