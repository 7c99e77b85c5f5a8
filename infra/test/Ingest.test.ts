/**
 * `market-data ingest` on hand-made SEC files (always run): recognition by content, idempotency (an identical
 * store after a second ingest, by row counts and a digest of every row), bad files named with their reason while
 * the others load, daily prices, exit codes; and the simulated companies on a database (`openPlanes`).
 */
import { randomUUID } from "node:crypto"
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { EquityStore } from "@market-data/core"
import { makeMemoryEquityStore } from "@market-data/memory"
import { makePgEquityStore, openPglite, openPostgres } from "@market-data/postgres"
import { loadSimulatedEquity, simulatedEquity } from "@market-data/sources"
import { ConfigProvider, Effect, References } from "effect"
import { sql } from "kysely"
import { afterAll, describe, expect, it } from "vitest"
import {
  equityDigest,
  FIXTURE_13F_ACCESSION,
  FIXTURE_CIK,
  FIXTURE_FORM4_ACCESSION,
  FIXTURE_ID,
  LONG_DECIMAL,
  pricesCsv,
  thirteenFPrimaryText,
  thirteenFTableText,
  tickersText,
  writeBrokenFiles,
  writeFixtures
} from "../../test/support/ingest-fixtures.ts"
import { loadConfig } from "../src/AppConfig.ts"
import { type Io, lineProgress, runCli } from "../src/Cli.ts"
import { accessionFromPath, parsePriceCsv } from "../src/Ingest.ts"
import { cachedEquityReads, openPlanes } from "../src/Planes.ts"
import { openStores } from "../src/Stores.ts"

const dirs: Array<string> = []
const tempDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const capture = () => {
  const out: Array<string> = []
  const err: Array<string> = []
  const io: Io = { out: (l) => out.push(l), err: (l) => err.push(l), progress: lineProgress((l) => err.push(l)) }
  return { io, out, err }
}

const cliOn = (env: Record<string, string>) => {
  const c = capture()
  const run = (...argv: Array<string>) =>
    Effect.runPromise(
      runCli(argv, c.io).pipe(
        Effect.provide(
          ConfigProvider.layer(ConfigProvider.fromEnvRecord({ MARKET_DATA_SIM_UNIVERSE: "registry", ...env }))
        )
      )
    )
  return { ...c, run, json: () => JSON.parse(c.out.pop() as string) }
}

/** Reads the embedded store in `dir` through the equity store port (no other process may hold it). */
const withStore = async <A>(dir: string, f: (store: ReturnType<typeof makePgEquityStore>) => Effect.Effect<A>) => {
  const database = await openPglite(dir)
  try {
    return await Effect.runPromise(f(makePgEquityStore(database)))
  } finally {
    await database.close()
  }
}

describe("paths carry what SEC documents do not", () => {
  it("finds the accession in the file name or the nearest folder, dashed or as EDGAR's folder, with a date beside it", () => {
    expect(accessionFromPath("/x/form4/0001127602-22-029366.xml")).toMatchObject({
      accession: "0001127602-22-029366",
      filedAt: null
    })
    expect(accessionFromPath("/x/0001127602-22-029366_2022-12-15.xml")).toMatchObject({ filedAt: "2022-12-15" })
    expect(accessionFromPath("/x/000109921922000004_2022-02-14/primary_doc.xml")).toMatchObject({
      accession: "0001099219-22-000004",
      filedAt: "2022-02-14"
    })
    expect(accessionFromPath("/x/form4_snow_0001640147_2022-12-13.xml")).toBeUndefined()
  })

  it("reads a price CSV by its header, naming each bad row by line", () => {
    const parsed = parsePriceCsv(pricesCsv())
    if ("error" in parsed) throw new Error(parsed.error)
    expect(parsed.bars.map((b) => [new Date(b.tMs).toISOString(), b.o, b.h, b.l, b.c, b.v])).toEqual([
      ["2024-01-02T14:30:00.000Z", 100, 102, 99.5, 101.5, 120000],
      ["2024-01-03T14:30:00.000Z", 101.5, 103, 101, 102.25, 98000],
      ["2024-01-05T14:30:00.000Z", 102.25, 104, 102, 103.75, 110000]
    ])
    expect(parsed.bad).toEqual([
      "line 4: 2024-01-06 is a Saturday: US markets do not trade at weekends",
      'line 5: close "abc" is not a number 0 or more'
    ])
    expect(parsed.refusals.map((r) => [r.line, r.reason])).toEqual([
      [4, "weekend"],
      [5, "not_a_number"]
    ])
    expect(parsePriceCsv("when,open\n2024-01-02,1")).toMatchObject({ error: expect.stringContaining("lacks date") })
    const inverted = parsePriceCsv("date,open,high,low,close,volume\n2024-01-02,10,9,8,9.5,1\n2024-01-02,10,11,8,9.5,1")
    expect("bad" in inverted && inverted.bad).toEqual(["line 2: high 9 is below open, close or low"])
  })
})

describe("market-data ingest sec on hand-made files", () => {
  it("loads every good file, names every bad one with its reason, and a second ingest changes nothing", async () => {
    const root = tempDir("md-ingest-files-")
    const data = tempDir("md-ingest-data-")
    const files = writeFixtures(root)
    const broken = writeBrokenFiles(root)
    const cli = cliOn({ MARKET_DATA_DIR: data })

    expect(await cli.run("ingest", "sec", root, "--json")).toBe(1)
    const first = cli.json()
    expect(first).toMatchObject({ ok: false, loaded: 7, failed: broken.length, skipped: 0, ignored: 1 })
    const byPath = new Map<string, any>(first.results.map((r: any) => [r.path, r]))
    const result = (path: string) => byPath.get(path) ?? byPath.get(join(path))
    expect(result(files.companyFacts)).toMatchObject({
      format: "companyfacts",
      status: "loaded",
      cik: FIXTURE_CIK,
      records: 7
    })
    expect(result(files.submissions)).toMatchObject({ format: "submissions", status: "loaded", records: 2 })
    expect(result(files.submissionsPage)).toMatchObject({ format: "submissions_page", records: 1, written: 1 })
    expect(result(files.form4)).toMatchObject({ format: "form4", status: "loaded", records: 1, written: 1 })
    expect(result(files.thirteenFPrimary)).toMatchObject({ format: "13f_primary_document", records: 2 })
    expect(result(files.thirteenFTable)).toMatchObject({ format: "13f_information_table", records: 2 })
    expect(result(files.tickers)).toMatchObject({ format: "company_tickers", records: 2, written: 2 })
    for (const b of broken) {
      const r = result(b.path)
      expect(r, b.path).toMatchObject({ status: "failed" })
      expect(r.reason, b.path).toContain(b.reason)
    }
    expect(first.written).toEqual({
      companies: 1,
      tickers: 2,
      facts: 7,
      filings: 3,
      ownershipReports: 1,
      holdingsReports: 1,
      bars: 0
    })
    const before = await equityDigest(data)
    expect(before.counts).toMatchObject({
      equity_companies: 1,
      equity_facts: 7,
      equity_filings: 3,
      equity_ownership_reports: 1,
      equity_insider_transactions: 1,
      equity_holdings_reports: 1,
      equity_holdings: 2,
      equity_tickers: 2
    })

    // What was stored is what was filed: the long decimal, the Form 4's date from the older page, the 13F's from
    // its folder name.
    await withStore(data, (store) =>
      Effect.gen(function* () {
        const company = yield* store.company(FIXTURE_CIK)
        expect(company).toMatchObject({ name: "Fixture Decimals Inc", tickers: ["DECI"], sic: "3571" })
        const facts = yield* store.facts(FIXTURE_CIK, ["RevenueFromContractWithCustomerExcludingAssessedTax"])
        expect(facts.map((f) => f.value).sort()).toEqual([LONG_DECIMAL, "987654321.50"])
        const reports = yield* store.ownershipReports(FIXTURE_CIK)
        expect(reports.map((r) => [r.accession, r.filedAt, r.transactions[0]?.pricePerShare])).toEqual([
          [FIXTURE_FORM4_ACCESSION, "2023-06-01", "101.2345"]
        ])
        const holdings = yield* store.holdings(FIXTURE_CIK)
        expect(holdings.reports.map((r) => [r.accession, r.filedAt, r.filerName])).toEqual([
          [FIXTURE_13F_ACCESSION, "2024-02-14", "Fixture Holdings LLC"]
        ])
        expect(holdings.holdings.map((h) => h.holding.valueUsd)).toEqual(["1012345"])
      })
    )

    // The human summary names the bad files on stderr; the second run writes nothing and leaves every row as it was.
    const again = cliOn({ MARKET_DATA_DIR: data })
    expect(await again.run("ingest", "sec", root)).toBe(1)
    for (const b of broken) expect(again.err.join("\n")).toMatch(new RegExp(`failed +\\S*${b.path.split("/").pop()}: `))
    expect(again.err.some((l) => /^ingesting \d+\/12: /.test(l))).toBe(true)
    expect(again.out.pop()).toMatch(
      /7 of 12 file\(s\) loaded, 5 failed, 1 ignored .*; nothing new \(already in the store\)$/
    )
    const after = await equityDigest(data)
    expect(after).toEqual(before)

    // Only the good files: exit 0.
    const good = cliOn({ MARKET_DATA_DIR: data })
    expect(await good.run("ingest", "sec", files.companyFacts, files.submissions, "--json")).toBe(0)
    expect(good.json()).toMatchObject({ ok: true, loaded: 2, failed: 0 })
  }, 120_000)

  it("refuses a 13F pair whose row count differs from its primary document", async () => {
    const root = tempDir("md-ingest-13f-")
    const data = tempDir("md-ingest-data-")
    const folder = join(root, "0009990999-24-000009_2024-05-15")
    mkdirSync(folder, { recursive: true })
    writeFileSync(join(folder, "primary_doc.xml"), thirteenFPrimaryText(3, "1512345"))
    writeFileSync(join(folder, "table.xml"), thirteenFTableText())
    const cli = cliOn({ MARKET_DATA_DIR: data })
    expect(await cli.run("ingest", "sec", root, "--json")).toBe(1)
    const r = cli.json()
    expect(r.results).toHaveLength(2)
    for (const x of r.results) expect(x.reason).toContain("states 3 holdings with a total value of 1512345")
    expect(r.results[0].reason).toContain("holds 2 rows totalling 1512345 (values as written): they are not one filing")
  }, 60_000)
})

describe("market-data ingest sec: a company known only from its companyfacts", () => {
  it("is named by them and takes its tickers from a ticker list ingested later, then its full record from submissions", async () => {
    const root = tempDir("md-ingest-facts-")
    const data = tempDir("md-ingest-data-")
    const files = writeFixtures(root)
    const cli = cliOn({ MARKET_DATA_DIR: data })
    expect(await cli.run("ingest", "sec", files.companyFacts)).toBe(0)
    expect(await withStore(data, (store) => store.company(FIXTURE_CIK))).toMatchObject({
      name: "Fixture Decimals Inc",
      tickers: [],
      sic: null
    })
    expect(await cli.run("ingest", "sec", files.tickers)).toBe(0)
    expect(await withStore(data, (store) => store.company(FIXTURE_CIK))).toMatchObject({ tickers: ["DECI"] })
    expect(await cli.run("ingest", "sec", files.submissions, files.companyFacts)).toBe(0)
    expect(await withStore(data, (store) => store.company(FIXTURE_CIK))).toMatchObject({
      tickers: ["DECI"],
      exchanges: ["Nasdaq"],
      sic: "3571"
    })
  }, 60_000)
})

describe("market-data ingest prices", () => {
  it("loads the good rows, names the bad ones, and gives a filings-only company prices", async () => {
    const root = tempDir("md-ingest-prices-")
    const data = tempDir("md-ingest-data-")
    const files = writeFixtures(root)
    const csv = join(root, "deci.csv")
    writeFileSync(csv, pricesCsv())
    const cli = cliOn({ MARKET_DATA_DIR: data })
    // Before its filings, the company is unknown.
    expect(await cli.run("ingest", "prices", csv, "--id", FIXTURE_ID, "--json")).toBe(1)
    expect(cli.json().results[0].reason).toContain("no company with CIK 9990777")
    expect(await cli.run("ingest", "sec", files.submissions, files.companyFacts)).toBe(0)
    expect(await cli.run("ingest", "prices", csv, "--id", "eq:9990777:NOPE", "--json")).toBe(1)
    expect(cli.json().results[0].reason).toContain("trades as DECI, not NOPE")

    expect(await cli.run("ingest", "prices", csv, "--id", FIXTURE_ID, "--json")).toBe(1)
    const first = cli.json()
    expect(first.written.bars).toBe(3)
    // The good rows loaded: the file is loaded in part, its refused rows counted by reason; anything refused is 1.
    expect(first).toMatchObject({ ok: false, exit_code: 1, loaded: 0, partial: 1, failed: 0 })
    expect(first.rows).toEqual({ loaded: 3, refused: 2, refusedByReason: { weekend: 1, not_a_number: 1 } })
    expect(first.results[0]).toMatchObject({ status: "partial", records: 3, written: 3, refused: 2 })
    expect(first.results[0].reason).toContain("2 bad rows not loaded (line 4: 2024-01-06 is a Saturday")
    const before = await equityDigest(data)
    expect(before.counts.equity_bars).toBe(3)

    writeFileSync(csv, pricesCsv(false))
    expect(await cli.run("ingest", "prices", csv, "--id", FIXTURE_ID)).toBe(0)
    expect(cli.out.pop()).toContain("nothing new")
    expect(await equityDigest(data)).toEqual(before)
    const coverage = await withStore(data, (store) => store.coverage(FIXTURE_CIK))
    expect(coverage[0]).toMatchObject({ bars: 3, lastBarMs: Date.parse("2024-01-05T14:30:00.000Z") })

    // Without --id, a ticker (or id) column names each row's company; rows of unknown companies are named.
    const keyed = join(root, "several.csv")
    writeFileSync(
      keyed,
      [
        "ticker,date,open,high,low,close,volume",
        "DECI,2024-01-08,104,105,103,104.5,90000",
        "OTHR,2024-01-08,10,11,9,10.5,5000",
        "deci,2024-01-09,104.5,106,104,105.5,91000",
        "DECI,2024-01-09,1,1,1,1,1"
      ].join("\n")
    )
    expect(await cli.run("ingest", "prices", keyed, "--json")).toBe(1)
    const several = cli.json()
    expect(several.written.bars).toBe(2)
    expect(several.rows.refusedByReason).toEqual({ unknown_company: 1, repeated_date: 1 })
    expect(several.results[0].reason).toBe(
      "2 bad rows not loaded (line 3: no company in the store trades as OTHR: ingest the ticker list (or its submissions or companyfacts) first; line 5: DECI 2024-01-09 repeats line 4)"
    )
    // With --id, a row naming another company is a bad row, not loaded under the wrong one.
    expect(await cli.run("ingest", "prices", keyed, "--id", FIXTURE_ID, "--json")).toBe(1)
    expect(cli.json().results[0].reason).toContain("line 3: is for OTHR, not eq:9990777:DECI")
    // A CSV that names no company needs --id.
    expect(await cli.run("ingest", "prices", csv, "--json")).toBe(1)
    expect(cli.json().results[0].reason).toContain("the CSV names no company")
    expect((await withStore(data, (store) => store.coverage(FIXTURE_CIK)))[0]).toMatchObject({ bars: 5 })

    // Once the ticker list is in, OTHR (a company only the list names) takes prices: it is an asset already.
    expect(await cli.run("ingest", "sec", files.tickers)).toBe(0)
    expect(await cli.run("ingest", "prices", keyed, "--json")).toBe(1)
    const listed = cli.json()
    expect(listed.written.bars, JSON.stringify(listed.results[0])).toBe(1)
    expect(listed.rows.refusedByReason).toEqual({ repeated_date: 1 })
    expect((await withStore(data, (store) => store.issuer("9990779")))?.coverage).toMatchObject({
      bars: 1,
      lastBarMs: Date.parse("2024-01-08T14:30:00.000Z")
    })
  }, 120_000)
})

describe("market-data ingest prices: folders, closed days and the report", () => {
  it("takes a folder; keeps a row on a day the calendar has closed, with a warning; exit 0 when nothing was refused", async () => {
    const root = tempDir("md-ingest-prices-dir-")
    const data = tempDir("md-ingest-data-")
    const files = writeFixtures(root)
    const cli = cliOn({ MARKET_DATA_DIR: data })
    expect(await cli.run("ingest", "sec", files.submissions, files.companyFacts)).toBe(0)
    const folder = join(root, "prices")
    mkdirSync(join(folder, "older"), { recursive: true })
    // 1998-01-19 is the first Martin Luther King Jr. Day the market closed for; 1997-01-20 (the third Monday of
    // January 1997) was a trading day. 1985-09-27 the NYSE closed for Hurricane Gloria, yet sources list a bar.
    writeFileSync(
      join(folder, "a.csv"),
      [
        "date,open,high,low,close,volume",
        "1997-01-17,10,11,9,10.5,100",
        "1997-01-20,10.5,11,10,10.75,100",
        "1985-09-27,2,2.5,1.5,2.25,100"
      ].join("\n")
    )
    writeFileSync(join(folder, "older", "b.csv"), "date,open,high,low,close,volume\n1998-01-16,12,13,11,12.5,100\n")
    writeFileSync(join(folder, "README.txt"), "not a CSV")
    expect(await cli.run("ingest", "prices", folder, "--id", FIXTURE_ID, "--json")).toBe(0)
    const report = cli.json()
    expect(report).toMatchObject({ ok: true, exit_code: 0, files: 2, loaded: 2, partial: 0, failed: 0, ignored: 1 })
    expect(report.rows).toEqual({ loaded: 4, refused: 0, refusedByReason: {} })
    expect(report.warnings).toBe(1)
    const a = report.results.find((r: any) => r.path.endsWith("a.csv"))
    expect(a).toMatchObject({ status: "loaded", records: 3, written: 3, refused: 0 })
    expect(a.warnings).toEqual([
      "1 row on a day the US market calendar has closed, kept as the source published it: 1985-09-27 (Hurricane Gloria, line 4)"
    ])
    expect((await withStore(data, (store) => store.coverage(FIXTURE_CIK)))[0]).toMatchObject({ bars: 4 })

    // The text report: the warning on stderr, the totals (files, rows by reason, new rows) on stdout.
    const bad = join(root, "bad.csv")
    writeFileSync(bad, "date,open,high,low,close,volume\n1998-01-19,1,1,1,1,1\n1998-01-17,1,1,1,1,1\nnope,1,1,1,1,1\n")
    expect(await cli.run("ingest", "prices", bad, folder, "--id", FIXTURE_ID)).toBe(1)
    expect(cli.err).toContain(`refused  ${bad}: 2 rows (bad_date 1, weekend 1), 1 row loaded`)
    expect(cli.err.some((l) => l.includes("1998-01-19 (Martin Luther King Jr. Day, line 2)"))).toBe(true)
    expect(cli.out.pop()).toMatch(
      /: 2 of 3 file\(s\) loaded, 1 in part, 1 ignored \(not \.csv\); rows: 5 loaded, 2 refused \(bad_date 1, weekend 1\); 2 warnings; new: 1 daily bar$/
    )
  }, 120_000)

  // The real daily history of a public source (stooq's AAPL CSV, 1984 to 2026), read in place.
  const SHARED = process.env.SHARED_DATA_DIR ?? resolve(import.meta.dirname, "..", "..", "..", "shared", "data")
  const pricesDir = join(SHARED, "prices")
  const applePrices = existsSync(pricesDir)
    ? readdirSync(pricesDir).find((f) => /^stooq_aapl.*\.csv$/.test(f))
    : undefined
  const appleSubmissions = join(SHARED, "sec", "submissions", "CIK0000320193.json")
  const real = applePrices !== undefined && existsSync(appleSubmissions)
  it.skipIf(!real)(
    `loads every row of the real AAPL history${real ? "" : ` (SKIPPED: ${pricesDir} is absent)`}`,
    async () => {
      const data = tempDir("md-ingest-data-")
      const cli = cliOn({ MARKET_DATA_DIR: data })
      expect(await cli.run("ingest", "sec", appleSubmissions)).toBe(0)
      const csv = join(pricesDir, applePrices as string)
      const rows = readFileSync(csv, "utf8")
        .split(/\r?\n/)
        .filter((l) => /^\d{4}-/.test(l)).length
      expect(await cli.run("ingest", "prices", pricesDir, "--id", "eq:320193:AAPL", "--json")).toBe(0)
      const report = cli.json()
      const apple = report.results.find((r: any) => r.path === csv)
      expect(apple).toMatchObject({ status: "loaded", records: rows, written: rows, refused: 0 })
      // Every third Monday of January 1985 to 1997 loaded as the trading day it was; the one row on a day the
      // NYSE closed (Hurricane Gloria) is kept and named.
      expect(apple.warnings).toEqual([expect.stringContaining("1985-09-27 (Hurricane Gloria")])
      expect((await withStore(data, (store) => store.coverage("320193")))[0]).toMatchObject({ bars: rows })
    },
    180_000
  )
})

describe("market-data ingest: usage and stores", () => {
  it("answers 2 for bad usage, the memory store and a data dir another process holds", async () => {
    const data = tempDir("md-ingest-data-")
    const cli = cliOn({ MARKET_DATA_DIR: data })
    expect(await cli.run("ingest")).toBe(2)
    expect(cli.err.pop()).toContain("unknown ingest command")
    expect(await cli.run("ingest", "sec")).toBe(2)
    expect(cli.err.pop()).toContain("needs files or directories")
    expect(await cli.run("ingest", "prices", "x.csv", "--id")).toBe(2)
    expect(cli.err.pop()).toContain("--id needs a value")
    expect(await cli.run("ingest", "prices", "x.csv", "--id", "AAPL")).toBe(2)
    expect(await cli.run("ingest", "sec", "x", "--id", "eq:1:A")).toBe(2)
    expect(cli.err.pop()).toContain("unknown option --id")

    const memory = cliOn({ DATABASE_URL: "memory" })
    expect(await memory.run("ingest", "sec", data)).toBe(2)
    expect(memory.err.pop()).toContain("DATABASE_URL=memory")

    // A live process (our parent) holds the lock file.
    writeFileSync(join(data, "market-data.lock"), String(process.ppid))
    expect(await cli.run("ingest", "sec", data)).toBe(2)
    expect(cli.err.pop()).toContain(`in use by process ${process.ppid}`)
    rmSync(join(data, "market-data.lock"))

    // A folder linking back to itself is walked once.
    const looped = join(data, "looped")
    mkdirSync(looped)
    writeFileSync(join(looped, "company_tickers.json"), tickersText())
    symlinkSync(looped, join(looped, "again"))
    expect(await cli.run("ingest", "sec", looped, "--json")).toBe(0)
    expect(cli.json()).toMatchObject({ loaded: 1, failed: 0, written: { tickers: 2 } })

    // A path that does not exist is a failed file, not bad usage.
    expect(await cli.run("ingest", "sec", join(data, "nowhere.json"), "--json")).toBe(1)
    expect(cli.json().results[0]).toMatchObject({ status: "failed", reason: "no such file or directory" })
  }, 60_000)
})

/** Generated simulated companies in these tests: a few, so a start stays quick (the default is 520). */
const GENERATED = 12

const open = (env: Record<string, string>) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const config = yield* loadConfig
        const stores = yield* openStores(config)
        const planes = yield* openPlanes(config, stores)
        return { coverage: yield* planes.equity.coverage(), database: stores.database !== undefined }
      })
    ).pipe(
      Effect.provide(
        ConfigProvider.layer(
          ConfigProvider.fromEnvRecord({
            MARKET_DATA_SIM_UNIVERSE: "registry",
            LOG_LEVEL: "warn",
            MARKET_DATA_SIMULATED_COMPANIES: String(GENERATED),
            ...env
          })
        )
      ),
      Effect.provideService(References.MinimumLogLevel, "Warn")
    )
  )

/** What a memory store holds of a simulation: the reference the database must match. */
const expectedCoverage = (seed: number, generated = GENERATED) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const store = makeMemoryEquityStore()
      const sim = simulatedEquity(seed, { asOf: new Date().toISOString().slice(0, 10), generated })
      yield* loadSimulatedEquity(sim).pipe(Effect.provideService(EquityStore, store))
      return yield* store.coverage()
    })
  )

describe("the simulated companies on a database", () => {
  it("are written once, kept beside ingested filings, unchanged by a restart and replaced when the seed changes", async () => {
    const root = tempDir("md-planes-files-")
    const data = tempDir("md-planes-data-")
    const files = writeFixtures(root)
    const cli = cliOn({ MARKET_DATA_DIR: data })
    expect(await cli.run("ingest", "sec", files.submissions, files.companyFacts)).toBe(0)
    const ingested = await withStore(data, (store) => store.coverage(FIXTURE_CIK))

    const simulated = (coverage: ReadonlyArray<{ readonly cik: string }>) =>
      coverage.filter((c) => c.cik !== FIXTURE_CIK)
    const first = await open({ MARKET_DATA_DIR: data })
    expect(first.database).toBe(true)
    expect(simulated(first.coverage)).toEqual(await expectedCoverage(20261123))
    expect(first.coverage.filter((c) => c.cik === FIXTURE_CIK)).toEqual(ingested)
    const digest = await equityDigest(data)

    const restart = await open({ MARKET_DATA_DIR: data })
    expect(restart.coverage).toEqual(first.coverage)
    expect(await equityDigest(data)).toEqual(digest)

    // Another seed: the simulated companies are replaced (not merged into the old ones), the ingested one stays.
    const reseeded = await open({ MARKET_DATA_DIR: data, MARKET_DATA_SEED: "7" })
    expect(simulated(reseeded.coverage)).toEqual(await expectedCoverage(7))
    expect(reseeded.coverage.filter((c) => c.cik === FIXTURE_CIK)).toEqual(ingested)
    const reseededDigest = await equityDigest(data)
    expect(reseededDigest.digest).not.toBe(digest.digest)
    expect(reseededDigest.counts.equity_companies).toBe(digest.counts.equity_companies)

    // Fewer generated companies: the ones no longer generated go with their filings, Form 4s, bars and holders.
    const fewer = await open({ MARKET_DATA_DIR: data, MARKET_DATA_SEED: "7", MARKET_DATA_SIMULATED_COMPANIES: "3" })
    expect(simulated(fewer.coverage)).toEqual(await expectedCoverage(7, 3))
    expect(fewer.coverage.filter((c) => c.cik === FIXTURE_CIK)).toEqual(ingested)
    const fewerDigest = await equityDigest(data)
    expect(fewerDigest.counts.equity_companies).toBe((digest.counts.equity_companies ?? 0) - (GENERATED - 3))
    const again = await open({ MARKET_DATA_DIR: data, MARKET_DATA_SEED: "7", MARKET_DATA_SIMULATED_COMPANIES: "3" })
    expect(again.coverage).toEqual(fewer.coverage)
    expect(await equityDigest(data)).toEqual(fewerDigest)

    // DATABASE_URL=memory: the simulated companies live in the process.
    const memory = await open({ DATABASE_URL: "memory" })
    expect(memory.database).toBe(false)
    expect(memory.coverage).toEqual(await expectedCoverage(20261123))
  }, 180_000)
})

const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL
if (TEST_DATABASE_URL === undefined)
  console.warn("Ingest.test: TEST_DATABASE_URL is unset; the PostgreSQL cases are skipped")

describe.skipIf(TEST_DATABASE_URL === undefined)("ingest and the simulated companies on PostgreSQL", () => {
  it("ingests idempotently, and instances starting together write the simulation once, consistently", async () => {
    const base = TEST_DATABASE_URL as string
    const schema = `md_ingest_${randomUUID().replace(/-/g, "").slice(0, 16)}`
    const admin = openPostgres(base, { poolSize: 1 })
    await sql.raw(`create schema ${schema}`).execute(admin.db)
    try {
      const u = new URL(base)
      u.searchParams.set("options", `-c search_path=${schema}`)
      const env = { DATABASE_URL: u.toString() }
      const files = writeFixtures(tempDir("md-ingest-pg-"))
      const cli = cliOn(env)
      // The Form 4's filing date is on the older submissions page, not given yet.
      expect(await cli.run("ingest", "sec", files.companyFacts, files.submissions, files.form4, "--json")).toBe(1)
      const first = cli.json()
      expect(first.written).toMatchObject({ companies: 1, facts: 7, filings: 2, ownershipReports: 0 })
      expect(first.results.find((r: any) => r.format === "form4").reason).toContain(
        `the Form 4's filing date is unknown: the store has no submissions feed of its issuer (CIK ${FIXTURE_CIK}) listing ${FIXTURE_FORM4_ACCESSION}`
      )
      const all = [files.companyFacts, files.submissions, files.submissionsPage, files.form4]
      expect(await cli.run("ingest", "sec", ...all, "--json")).toBe(0)
      expect(cli.json().written).toMatchObject({ filings: 1, ownershipReports: 1 })
      expect(await cli.run("ingest", "sec", ...all, "--json")).toBe(0)
      expect(Object.values(cli.json().written)).toEqual([0, 0, 0, 0, 0, 0, 0])

      const count = async () => {
        const rows = await sql<{ t: string; n: string }>`
          select 'facts' as t, count(*)::text as n from ${sql.raw(schema)}.equity_facts
          union all select 'filings', count(*)::text from ${sql.raw(schema)}.equity_filings
          union all select 'bars', count(*)::text from ${sql.raw(schema)}.equity_bars
          union all select 'reports', count(*)::text from ${sql.raw(schema)}.equity_ownership_reports
          union all select 'holdings', count(*)::text from ${sql.raw(schema)}.equity_holdings`.execute(admin.db)
        return Object.fromEntries(rows.rows.map((r) => [r.t, Number(r.n)]))
      }
      const [a, b] = await Promise.all([open(env), open(env)])
      const expected = await expectedCoverage(20261123)
      expect(a.coverage.filter((c) => c.cik !== FIXTURE_CIK)).toEqual(expected)
      expect(b.coverage).toEqual(a.coverage)
      const counts = await count()
      const restart = await open(env)
      expect(restart.coverage).toEqual(a.coverage)
      expect(await count()).toEqual(counts)
    } finally {
      await sql.raw(`drop schema ${schema} cascade`).execute(admin.db)
      await admin.close()
    }
  }, 240_000)
})

describe("the equity plane's read cache over the database store", () => {
  it("answers bar ranges as the store does, serves repeated reads from memory, and empties on a write", async () => {
    const sim = simulatedEquity(20261123, { asOf: "2026-11-20" })
    const base = makeMemoryEquityStore()
    await Effect.runPromise(loadSimulatedEquity(sim).pipe(Effect.provideService(EquityStore, base)))
    const cached = cachedEquityReads(base)
    const cik = sim.companies[0]!.cik
    const ticker = sim.companies[0]!.tickers[0]!
    const bars = sim.dailyBars.get(cik)!
    const mid = bars[Math.floor(bars.length / 2)]!.tMs
    const ranges = [
      {},
      { limit: 5 },
      { fromMs: mid },
      { toMs: mid },
      { fromMs: mid - 40 * 86_400_000, toMs: mid, limit: 7 },
      { toMs: 0 }
    ]
    for (const range of ranges) {
      expect(await Effect.runPromise(cached.bars(cik, ticker, range)), JSON.stringify(range)).toEqual(
        await Effect.runPromise(base.bars(cik, ticker, range))
      )
    }
    const company = sim.companies[0]!
    expect(await Effect.runPromise(cached.company(cik))).toEqual(company)
    // A write behind the cache's back is not seen within the cache's minute...
    await Effect.runPromise(base.putCompany({ ...company, name: "Renamed Behind The Cache" }))
    expect((await Effect.runPromise(cached.company(cik)))?.name).toBe(company.name)
    // ...a write through it is, at once.
    await Effect.runPromise(cached.putCompany({ ...company, name: "Renamed Through The Cache" }))
    expect((await Effect.runPromise(cached.company(cik)))?.name).toBe("Renamed Through The Cache")
    expect(await Effect.runPromise(cached.facts(cik))).toEqual(await Effect.runPromise(base.facts(cik)))
    expect(await Effect.runPromise(cached.holdings(cik))).toEqual(await Effect.runPromise(base.holdings(cik)))
  })
})
