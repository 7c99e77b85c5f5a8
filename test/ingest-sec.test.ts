/**
 * End to end on the SEC's real files (`../shared/data/sec`, read in place; skipped with a message when absent):
 * `market-data ingest sec` loads Apple's companyfacts and submissions, Snowflake's Form 4 and the recorded 13F
 * information table into an embedded store, names the bad files while the others load, leaves an identical store
 * after a second ingest, and the library then serves `financials` for eq:320193:AAPL with the filed decimal
 * strings, and Apple's 13F holder.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { createMarketData } from "@market-data/embedded"
import { type Io, lineProgress, runCli } from "@market-data/infra"
import { ConfigProvider, Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { equityDigest, thirteenFPrimaryText } from "./support/ingest-fixtures.ts"

const SEC = resolve(import.meta.dirname, "..", "..", "shared", "data", "sec")
const present = existsSync(join(SEC, "companyfacts", "CIK0000320193.json"))
if (!present) console.warn(`SKIPPED: the real SEC ingest suite needs ${SEC}, which is absent`)

const KEY = "mdk_IngestSecE2e0123456789abcdefghij"

/** The filed value of an Apple fact, as the raw companyfacts text writes it (no JSON.parse, no float). */
const filedValue = (raw: string, concept: string, start: string, end: string, accession: string): string => {
  const at = raw.indexOf(`"${concept}":`)
  expect(at, concept).toBeGreaterThan(0)
  const next = raw.indexOf('"label":', at + concept.length + 12)
  const section = raw.slice(at, next < 0 ? undefined : next)
  const m = new RegExp(`\\{"start":"${start}","end":"${end}","val":([-0-9.eE]+),"accn":"${accession}"`).exec(section)
  if (m === null) throw new Error(`no ${concept} ${start}..${end} in ${accession}`)
  return m[1] as string
}

describe.skipIf(!present)(
  `ingest sec on the SEC's real files${present ? "" : " (SKIPPED: ../shared/data/sec is absent)"}`,
  () => {
    const work = mkdtempSync(join(tmpdir(), "md-ingest-sec-"))
    const data = join(work, "data")
    afterAll(() => rmSync(work, { recursive: true, force: true }))

    // The Form 4 and 13F documents carry neither accession nor filing date; EDGAR's folder names give them. The
    // recorded files have no folder, so each is copied under one (the accession numbers are ours).
    const documents = join(work, "documents")
    const form4 = join(documents, "form4", "0001640147-22-000301_2022-12-15.xml")
    const thirteenF = join(documents, "13f", "000999099923000001_2023-02-14")
    const thirteenFEarly = join(documents, "13f", "000999099921000007_2021-11-12")
    const broken = join(documents, "broken", "CIK0000320193.json")

    const ingest = async (...argv: Array<string>) => {
      const out: Array<string> = []
      const err: Array<string> = []
      const io: Io = { out: (l) => out.push(l), err: (l) => err.push(l), progress: lineProgress((l) => err.push(l)) }
      const env = ConfigProvider.layer(
        ConfigProvider.fromEnvRecord({ MARKET_DATA_SIM_UNIVERSE: "registry", MARKET_DATA_DIR: data })
      )
      const code = await Effect.runPromise(runCli(["ingest", "sec", ...argv, "--json"], io).pipe(Effect.provide(env)))
      return { code, summary: JSON.parse(out.pop() as string), err }
    }

    const inputs = () => [
      join(SEC, "companyfacts"),
      join(SEC, "submissions"),
      join(SEC, "13f"),
      join(SEC, "form4", "form4_snow_0001640147_2022-12-13.xml"),
      documents
    ]

    it("loads what it can read, names what it cannot, and a second run leaves an identical store", async () => {
      mkdirSync(join(documents, "form4"), { recursive: true })
      copyFileSync(join(SEC, "form4", "form4_snow_0001640147_2022-12-13.xml"), form4)
      const table = readFileSync(join(SEC, "13f", "13F-HR_infotable.xml"), "utf8")
      for (const [folder, filer] of [
        [thirteenF, "0009990999"],
        [thirteenFEarly, "0009990998"]
      ] as const) {
        mkdirSync(folder, { recursive: true })
        // A primary document stating exactly the recorded table's 255 rows and their total.
        writeFileSync(join(folder, "primary_doc.xml"), thirteenFPrimaryText(255, "350153407", filer))
        writeFileSync(join(folder, "infotable.xml"), table)
      }
      mkdirSync(join(documents, "broken"), { recursive: true })
      writeFileSync(broken, readFileSync(join(SEC, "submissions", "CIK0000320193.json"), "utf8").slice(0, 20_000))

      const first = await ingest(...inputs())
      expect(first.code).toBe(1)
      const result = (path: string) => first.summary.results.find((r: any) => resolve(r.path) === resolve(path))
      expect(result(join(SEC, "companyfacts", "CIK0000320193.json"))).toMatchObject({
        format: "companyfacts",
        status: "loaded",
        cik: "320193"
      })
      expect(result(join(SEC, "submissions", "CIK0000320193.json"))).toMatchObject({
        format: "submissions",
        status: "loaded",
        records: 1005,
        written: 1006
      })
      expect(result(form4)).toMatchObject({ format: "form4", status: "loaded", cik: "1640147", records: 7, written: 1 })
      expect(result(join(thirteenF, "infotable.xml"))).toMatchObject({ status: "loaded", records: 255, written: 1 })
      // Filed in 2021, the table would be thousands of dollars, but its implied prices say dollars.
      expect(result(join(thirteenFEarly, "infotable.xml")).notes[0]).toContain("read as dollars")
      // The named failures: the recorded 13F documents come from two different filings; the Form 4 in place has no
      // accession; the truncated feed is malformed.
      expect(result(join(SEC, "13f", "13F-HR_infotable.xml")).reason).toContain(
        `METLIFE INC, period 2021-12-31) states 6 holdings with a total value of 11019796, the information table (${join(SEC, "13f", "13F-HR_infotable.xml")}) holds 255 rows totalling 350153407 (values as written): they are not one filing`
      )
      expect(result(join(SEC, "13f", "metlife_13F-HR_primary_doc.xml")).status).toBe("failed")
      expect(result(join(SEC, "form4", "form4_snow_0001640147_2022-12-13.xml")).reason).toContain(
        "does not carry its accession number"
      )
      expect(result(broken)).toMatchObject({
        status: "failed",
        reason: expect.stringContaining("truncated or malformed")
      })
      expect(first.summary).toMatchObject({ loaded: 7, failed: 4 })
      const facts = result(join(SEC, "companyfacts", "CIK0000320193.json"))
      // The company is created by its companyfacts (read first), then described fully by its submissions feed.
      expect(facts.written).toBe(first.summary.written.facts + 1)
      expect(first.summary.written).toMatchObject({
        companies: 1,
        filings: 1005,
        ownershipReports: 1,
        holdingsReports: 2
      })
      const before = await equityDigest(data)
      expect(before.counts).toMatchObject({
        equity_companies: 1,
        equity_facts: first.summary.written.facts,
        equity_filings: 1005,
        equity_ownership_reports: 1,
        equity_insider_transactions: 7,
        equity_holdings_reports: 2,
        equity_holdings: 510
      })

      const second = await ingest(...inputs())
      expect(second.code).toBe(1)
      expect(second.summary.written).toEqual({
        companies: 0,
        tickers: 0,
        facts: 0,
        filings: 0,
        ownershipReports: 0,
        holdingsReports: 0,
        bars: 0
      })
      expect(await equityDigest(data)).toEqual(before)
    }, 180_000)

    it("serves Apple's financials from that store with the filed decimal strings, and its 13F holder", async () => {
      const raw = readFileSync(join(SEC, "companyfacts", "CIK0000320193.json"), "utf8")
      const revenue2025 = filedValue(
        raw,
        "RevenueFromContractWithCustomerExcludingAssessedTax",
        "2024-09-29",
        "2025-09-27",
        "0000320193-25-000079"
      )
      const eps2024 = filedValue(raw, "EarningsPerShareDiluted", "2023-10-01", "2024-09-28", "0000320193-25-000079")
      const dividends2025 = filedValue(
        raw,
        "CommonStockDividendsPerShareDeclared",
        "2024-09-29",
        "2025-09-27",
        "0000320193-25-000079"
      )
      expect([revenue2025, eps2024, dividends2025]).toEqual(["416161000000", "6.08", "1.02"])

      const md = await createMarketData({ store: { pglite: data }, apiKey: KEY, ensureCredits: 100 })
      try {
        const { data: fin } = (await md
          .call("financials", {
            id: "eq:320193:AAPL",
            period_kind: "annual",
            periods: 2,
            basis_concepts: true
          })
          .then((r) => r.body)) as any
        expect(fin.periods.map((p: any) => [p.id, p.start, p.end, p.accession])).toEqual([
          ["FY2025", "2024-09-29", "2025-09-27", "0000320193-25-000079"],
          ["FY2024", "2023-10-01", "2024-09-28", "0000320193-25-000079"]
        ])
        expect(fin.values.revenue.by_period[0]).toBe(revenue2025)
        expect(fin.values.eps_diluted.by_period[1]).toBe(eps2024)
        expect(fin.values.dividends_declared_per_share.by_period[0]).toBe(dividends2025)
        expect(typeof fin.values.eps_diluted.by_period[1]).toBe("string")
        // Built from the ingested SEC files, and labelled so (not `simulated`, the feed the library runs).
        const read = await md.call("read", { id: "eq:320193:AAPL" })
        expect(read.dataSource).toBe("sec")
        expect((read.body as any).data.baseline.source).toBe("sec")
        expect((await md.call("price", { id: "crypto:bitcoin" })).dataSource).toBe("simulated")

        const coverage = (await md.call("coverage", { id: "eq:320193:AAPL" })).body as any
        expect(coverage.data).toMatchObject({ asset_id: "eq:320193:AAPL", name: "Apple Inc.", tier: "equity" })
        // `holders` needs no price: the filings-only tier serves it from the 13F reports that list the company.
        const early = await md.call("holders", { id: "eq:320193:AAPL" })
        expect(early.status, JSON.stringify(early.body)).toBe(200)
        expect((early.body as any).data.holders.some((h: any) => h.name === "Fixture Holdings LLC")).toBe(true)
      } finally {
        await md.close()
      }

      // Daily prices make the filings-only company `full`: price answers, and holders still do.
      const csv = join(work, "aapl.csv")
      writeFileSync(
        csv,
        "date,open,high,low,close,volume\n2025-11-03,270.42,270.85,266.25,269.05,50194583\n2025-11-04,268.33,271.49,267.62,270.04,49274846\n"
      )
      const io: Io = { out: () => {}, err: () => {} }
      const env = ConfigProvider.layer(
        ConfigProvider.fromEnvRecord({ MARKET_DATA_SIM_UNIVERSE: "registry", MARKET_DATA_DIR: data })
      )
      expect(
        await Effect.runPromise(
          runCli(["ingest", "prices", csv, "--id", "eq:320193:AAPL"], io).pipe(Effect.provide(env))
        )
      ).toBe(0)
      const again = await createMarketData({ store: { pglite: data }, apiKey: KEY, ensureCredits: 100 })
      try {
        const coverage = (await again.call("coverage", { id: "eq:320193:AAPL" })).body as any
        expect(coverage.data.tier).toBe("full")
        const holdersCall = await again.call("holders", { id: "eq:320193:AAPL" })
        const holders = holdersCall.body as any
        expect(holdersCall.status, JSON.stringify(holders)).toBe(200)
        const apple = holders.data.holders.filter((h: any) => h.name === "Fixture Holdings LLC")
        expect(apple.length).toBeGreaterThan(0)
        expect(typeof apple[0].value_usd).toBe("string")
      } finally {
        await again.close()
      }
    }, 180_000)
  }
)
