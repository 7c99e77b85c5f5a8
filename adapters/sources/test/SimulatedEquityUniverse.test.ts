/**
 * The generated simulated companies (`simulated/equity/Generated.ts`): at least 500 of them on the default, with
 * varied shapes, identities fixed whatever the seed, tickers that are no real ticker, and each company's filings,
 * Form 4s, 13F holders and (but for a few) prices generated as SEC text and read back by the real parsers. The
 * hand-made companies are untouched by them.
 */
import { createHash } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import {
  generatedManagers,
  generatedProfiles,
  isSimulatedCik,
  SimulatedCompanies,
  SimulatedEquityVersion,
  SimulatedGeneratedCompanies,
  SimulatedManagers,
  simulatedBarsByTicker,
  simulatedEquity
} from "../src/index.ts"
import { newYorkToUtcMs } from "../src/sec/NewYorkTime.ts"
import { cusipCheckDigit } from "../src/simulated/equity/Companies.ts"

const universe = generatedProfiles()

describe("the generated universe", () => {
  it("has at least 500 companies with unique CIKs, names, tickers and valid CUSIPs, in the simulation's CIK range", () => {
    expect(SimulatedGeneratedCompanies).toBeGreaterThanOrEqual(500)
    expect(universe.length).toBe(SimulatedGeneratedCompanies)
    const all = [...SimulatedCompanies, ...universe]
    const tickers = all.flatMap((p) => [p.ticker, ...(p.otherClasses ?? []).map((c) => c.ticker)])
    const cusips = all.flatMap((p) => [p.cusip, ...(p.otherClasses ?? []).map((c) => c.cusip)])
    expect(new Set(all.map((p) => p.cik)).size).toBe(all.length)
    expect(new Set(all.map((p) => p.name)).size).toBe(all.length)
    expect(new Set(tickers).size).toBe(tickers.length)
    expect(new Set(cusips).size).toBe(cusips.length)
    for (const c of cusips) expect(c.charAt(8), c).toBe(cusipCheckDigit(c.slice(0, 8)))
    for (const p of universe) {
      expect(isSimulatedCik(p.cik), p.cik).toBe(true)
      expect(p.ticker, p.name).toMatch(/^[A-Z]{4}$/)
    }
    for (const p of SimulatedCompanies) expect(isSimulatedCik(p.cik)).toBe(true)
    expect(isSimulatedCik("9991999")).toBe(true)
    // Other numbers of the range are not the simulation's (the ingest tests' fixture company is 9990777).
    for (const cik of ["9990777", "9990006", "9991000", "9992000", "9999999"])
      expect(isSimulatedCik(cik), cik).toBe(false)
    expect(isSimulatedCik("320193")).toBe(false)
    expect(isSimulatedCik("0000320193")).toBe(false)
  })

  it("varies sectors, sizes, fiscal year ends, exchanges and share classes, and leaves a few without prices", () => {
    const count = <K>(key: (p: (typeof universe)[number]) => K) => new Set(universe.map(key)).size
    expect(count((p) => p.sic)).toBeGreaterThanOrEqual(10)
    expect(count((p) => p.fiscalYearEnd)).toBe(5)
    expect(count((p) => p.exchange)).toBe(3)
    const revenues = universe.map((p) => p.baseRevenueUsd).sort((a, b) => a - b)
    expect(revenues[0]!).toBeLessThan(1e8)
    expect(revenues.at(-1)!).toBeGreaterThan(2e10)
    const withClasses = universe.filter((p) => (p.otherClasses ?? []).length > 0).length
    expect(withClasses).toBeGreaterThanOrEqual(10)
    const unpriced = universe.filter((p) => p.priceDays === 0).length
    expect(unpriced).toBeGreaterThanOrEqual(10)
    expect(unpriced).toBeLessThan(universe.length / 5)
    expect(universe.some((p) => p.operatingMargin < 0)).toBe(true)
    expect(universe.some((p) => p.dividendPerShare !== null)).toBe(true)
  })

  it("is the same list whatever the count asked for (a prefix), so IDs stay put", () => {
    expect(generatedProfiles(12)).toEqual(universe.slice(0, 12))
  })

  const tickerList = "../shared/data/sec/tickers/company_tickers_exchange.json"
  it.skipIf(!existsSync(tickerList))("uses no ticker of the SEC's real list (../shared/data/sec/tickers)", () => {
    const real = new Set(
      (JSON.parse(readFileSync(tickerList, "utf8")) as { data: Array<[number, string, string, string]> }).data.map(
        (row) => row[2]
      )
    )
    expect(real.size).toBeGreaterThan(9000)
    const taken = universe
      .flatMap((p) => [p.ticker, ...(p.otherClasses ?? []).map((c) => c.ticker)])
      .filter((t) => real.has(t))
    expect(taken).toEqual([])
  })
  if (!existsSync(tickerList))
    console.warn(`SimulatedUniverse.test: ${tickerList} is absent; the real-ticker check is skipped`)
})

describe("a simulation with generated companies", () => {
  const generated = 40
  const sim = simulatedEquity(7, { generated })
  const profiles = sim.profiles.slice(SimulatedCompanies.length)

  it("gives every generated company a profile, facts, filings, Form 4s and 13F holders, and prices unless it has none", () => {
    expect(sim.companies.length).toBe(SimulatedCompanies.length + generated)
    const byCusip = new Map<string, number>()
    for (const report of sim.holdingsReports)
      for (const h of report.holdings) byCusip.set(h.cusip, (byCusip.get(h.cusip) ?? 0) + 1)
    for (const p of profiles) {
      const company = sim.companies.find((c) => c.cik === p.cik)!
      expect(company.name).toBe(p.name)
      expect(company.tickers).toEqual([p.ticker, ...(p.otherClasses ?? []).map((c) => c.ticker)])
      expect(company.fiscalYearEnd).toBe(p.fiscalYearEnd)
      const facts = sim.factsByCik.get(p.cik)!
      expect(
        facts.some((f) => f.form === "10-K"),
        p.name
      ).toBe(true)
      expect(
        facts.some((f) => f.form === "10-Q"),
        p.name
      ).toBe(true)
      const forms = new Set(sim.submissions.get(p.cik)!.filings.map((f) => f.form))
      for (const form of ["10-K", "10-Q", "8-K", "4"]) expect(forms.has(form), `${p.name} ${form}`).toBe(true)
      expect(sim.ownershipReports.some((r) => r.issuerCik === p.cik)).toBe(true)
      expect(byCusip.get(p.cusip) ?? 0, p.name).toBeGreaterThan(0)
      const bars = sim.dailyBars.get(p.cik)
      if (p.priceDays === 0) expect(bars).toBeUndefined()
      else expect(bars!.length).toBeGreaterThan(250)
    }
    // Every ticker is in the ticker list, one row each.
    expect(sim.tickers.length).toBe(sim.profiles.reduce((n, p) => n + 1 + (p.otherClasses ?? []).length, 0))
  })

  it("has 13F filers holding many of the generated companies", () => {
    const latest = new Map<string, number>()
    for (const report of sim.holdingsReports)
      if (generatedManagers.some((m) => m.cik === report.filerCik)) latest.set(report.filerCik, report.holdings.length)
    expect(latest.size).toBe(generatedManagers.length)
    // The largest holds every one of the 40 (and the outside security).
    expect(Math.max(...latest.values())).toBe(generated + 1)
  })

  it("leaves the hand-made companies' documents exactly as they are without the generated ones", () => {
    const alone = simulatedEquity(7)
    for (const p of SimulatedCompanies) {
      expect(sim.documents.companyFacts.get(p.cik)).toBe(alone.documents.companyFacts.get(p.cik))
      expect(sim.documents.submissions.get(p.cik)).toEqual(alone.documents.submissions.get(p.cik))
      expect(sim.dailyBars.get(p.cik)).toEqual(alone.dailyBars.get(p.cik))
    }
    const handMadeFilers = new Set(SimulatedManagers.map((m) => m.cik))
    expect(sim.documents.thirteenF.filter((f) => handMadeFilers.has(f.filerCik))).toEqual(alone.documents.thirteenF)
    expect(
      sim.documents.ownershipDocuments.filter((d) => SimulatedCompanies.some((p) => p.cik === d.issuerCik))
    ).toEqual(alone.documents.ownershipDocuments)
  })

  it("is deterministic, and its numbers follow the seed while its companies do not", () => {
    const again = simulatedEquity(7, { generated })
    expect(again.documents).toEqual(sim.documents)
    const other = simulatedEquity(8, { generated })
    expect(other.companies.map((c) => [c.cik, c.name, c.tickers])).toEqual(
      sim.companies.map((c) => [c.cik, c.name, c.tickers])
    )
    const cik = profiles[0]!.cik
    expect(other.documents.companyFacts.get(cik)).not.toBe(sim.documents.companyFacts.get(cik))
  })
})

/**
 * The digest of a small simulation's documents and bars, pinned with the generator's version: a database holding
 * a simulation is rewritten at start only when its version, seed, day or count differ, so a change of what the
 * generator writes must bump `SimulatedEquityVersion` (then record the new digest here).
 */
const PINNED = { version: 3, digest: "d31c92b93400985f3b369d450dcf4770b4dff3ac1168564d299edb885fc191e1" }

describe("the generator's version", () => {
  it("names what the generator writes: a change of output comes with a new version", () => {
    const sim = simulatedEquity(7, { asOf: "2026-11-20", generated: 8 })
    const hash = createHash("sha256")
    const d = sim.documents
    for (const [cik, text] of [...d.companyFacts].sort()) hash.update(`${cik}\n${text}\n`)
    for (const [cik, s] of [...d.submissions].sort()) hash.update(`${cik}\n${JSON.stringify(s)}\n`)
    for (const doc of d.ownershipDocuments) hash.update(`${doc.accession}\n${doc.text}\n`)
    for (const f of d.thirteenF) hash.update(`${f.accession}\n${f.primaryDocument}\n${f.informationTable}\n`)
    hash.update(d.companyTickers)
    hash.update(d.companyTickersExchange)
    for (const [cik, series] of [...simulatedBarsByTicker(sim)].sort()) {
      for (const [ticker, bars] of series) hash.update(`${cik}\n${ticker}\n${JSON.stringify(bars)}\n`)
    }
    const digest = hash.digest("hex")
    expect(
      { version: SimulatedEquityVersion, digest },
      "the generated output changed: bump SimulatedEquityVersion and record the new digest"
    ).toEqual(PINNED)
  })
})

describe("New York time by the hour", () => {
  it("converts both sides of the daylight-saving changes as the time zone database does", () => {
    // 2026-03-08 02:00 EST becomes 03:00 EDT; 2026-11-01 02:00 EDT becomes 01:00 EST.
    expect(new Date(newYorkToUtcMs(2026, 3, 8, 1, 59, 59)).toISOString()).toBe("2026-03-08T06:59:59.000Z")
    expect(new Date(newYorkToUtcMs(2026, 3, 8, 3, 0, 0)).toISOString()).toBe("2026-03-08T07:00:00.000Z")
    expect(new Date(newYorkToUtcMs(2026, 11, 1, 0, 59, 0)).toISOString()).toBe("2026-11-01T04:59:00.000Z")
    expect(new Date(newYorkToUtcMs(2026, 11, 1, 2, 0, 0)).toISOString()).toBe("2026-11-01T07:00:00.000Z")
    expect(new Date(newYorkToUtcMs(2026, 7, 14, 9, 30, 0)).toISOString()).toBe("2026-07-14T13:30:00.000Z")
    expect(new Date(newYorkToUtcMs(2026, 1, 14, 9, 30, 0)).toISOString()).toBe("2026-01-14T14:30:00.000Z")
  })
})

describe("a company with two share classes", () => {
  it("gets a series per ticker: the same sessions, different prices, the same again for the same seed", () => {
    const sim = simulatedEquity(7, { asOf: "2026-11-20", generated: 8 })
    const twoClass = sim.profiles.find((p) => (p.otherClasses ?? []).length > 0 && p.priceDays !== 0)
    expect(twoClass, "the simulation holds a priced two-class company").toBeDefined()
    const profile = twoClass!
    const classTicker = profile.otherClasses![0]!.ticker
    const series = simulatedBarsByTicker(sim).get(profile.cik)!
    expect([...series.keys()]).toEqual([profile.ticker, classTicker])
    const common = series.get(profile.ticker)!
    const other = series.get(classTicker)!
    expect(other.map((b) => b.tMs)).toEqual(common.map((b) => b.tMs))
    expect(other.filter((b, i) => b.c !== common[i]!.c).length).toBeGreaterThan(common.length / 2)
    for (const b of other) {
      expect(b.l).toBeLessThanOrEqual(Math.min(b.o, b.c))
      expect(b.h).toBeGreaterThanOrEqual(Math.max(b.o, b.c))
      expect(b.l).toBeGreaterThan(0)
    }
    const again = simulatedBarsByTicker(simulatedEquity(7, { asOf: "2026-11-20", generated: 8 })).get(profile.cik)!
    expect(again.get(classTicker)).toEqual(other)
  })
})
