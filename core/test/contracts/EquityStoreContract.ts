/**
 * The contract suite of the equity store port. Every implementation (memory, PGlite, PostgreSQL) runs it:
 * `equityStoreContract("memory", () => layerMemoryEquityStore)`. Each test gets a fresh (empty) store.
 */
import { Effect, type Layer } from "effect"
import { describe, expect, it } from "vitest"
import { type DailyBar, EquityStore } from "../../src/equity/EquityStore.ts"
import type {
  Company,
  Fact,
  Filing,
  Holding,
  HoldingsReport,
  OwnershipReport,
  TickerEntry
} from "../../src/equity/Model.ts"

export const company = (cik: string, name: string, tickers: ReadonlyArray<string>): Company => ({
  cik,
  name,
  tickers,
  exchanges: tickers.map(() => "Nasdaq"),
  sic: "3571",
  sicDescription: "Electronic Computers",
  fiscalYearEnd: "0928",
  formerNames: ["Old Name Inc"]
})

const fact = (concept: string, value: string, start: string | null, end: string, accession: string): Fact => ({
  taxonomy: "us-gaap",
  concept,
  unit: concept.startsWith("EarningsPerShare") ? "USD/shares" : "USD",
  value,
  start,
  end,
  fy: 2024,
  fp: "FY",
  form: "10-K",
  accession,
  filed: `20${accession.slice(11, 13)}-11-01`,
  frame: start === null ? null : "CY2024"
})

const filing = (accession: string, form: string, acceptedAt: string): Filing => ({
  accession,
  form,
  filedAt: acceptedAt.slice(0, 10),
  acceptedAt,
  reportDate: form === "4" ? null : "2024-09-28",
  primaryDocument: "doc.htm",
  primaryDocDescription: form === "10-K" ? "10-K" : null,
  items: form === "8-K" ? "2.02,9.01" : null,
  isXbrl: form !== "4",
  url: `https://www.sec.gov/Archives/edgar/data/1/${accession.replace(/-/g, "")}/doc.htm`
})

const ownership = (accession: string, form: string, filedAt: string, shares: string): OwnershipReport => ({
  form,
  accession,
  filedAt,
  periodOfReport: filedAt,
  issuerCik: "1",
  issuerName: "Alpha Corp",
  issuerTicker: "ALP",
  owners: [
    {
      cik: "900",
      name: "Doe Jane",
      isDirector: false,
      isOfficer: true,
      officerTitle: "CFO",
      isTenPercentOwner: false,
      isOther: false
    }
  ],
  transactions: [
    {
      table: "non_derivative",
      securityTitle: "Common Stock",
      transactionDate: filedAt,
      code: "S",
      acquiredDisposed: "D",
      shares,
      pricePerShare: "101.2500",
      sharesOwnedAfter: "12000.5",
      directIndirect: "D",
      exercisePrice: null,
      underlyingShares: null,
      footnotes: ["Sold under a 10b5-1 plan."]
    },
    {
      table: "derivative",
      securityTitle: "Stock Option",
      transactionDate: filedAt,
      code: "M",
      acquiredDisposed: "D",
      shares: "100",
      pricePerShare: null,
      sharesOwnedAfter: null,
      directIndirect: "I",
      exercisePrice: "12.5",
      underlyingShares: "100",
      footnotes: []
    }
  ],
  dateOfOriginalSubmission: form === "4/A" ? "2024-05-01" : null
})

const holding = (
  cusip: string,
  issuer: string,
  shares: string,
  value: string,
  extra: Partial<Holding> = {}
): Holding => ({
  nameOfIssuer: issuer,
  titleOfClass: "COM",
  cusip,
  valueUsd: value,
  shares,
  sharesType: "SH",
  putCall: null,
  investmentDiscretion: "SOLE",
  votingSole: shares,
  votingShared: "0",
  votingNone: "0",
  ...extra
})

const report = (
  filerCik: string,
  accession: string,
  period: string,
  holdings: ReadonlyArray<Holding>
): HoldingsReport => ({
  filerCik,
  filerName: `Filer ${filerCik}`,
  accession,
  form: "13F-HR",
  filedAt: `${period.slice(0, 4)}-${period.slice(5, 7) === "12" ? "12" : "11"}-14`,
  reportPeriod: period,
  holdings
})

export const equityStoreContract = (name: string, make: () => Layer.Layer<EquityStore>) => {
  const run = <A, E>(effect: Effect.Effect<A, E, EquityStore>) => Effect.runPromise(Effect.provide(effect, make()))

  describe(`${name}: EquityStore`, () => {
    it("keeps companies and tickers, replacing on the same key", () =>
      run(
        Effect.gen(function* () {
          const store = yield* EquityStore
          yield* store.putCompany(company("2", "Beta Inc", ["BET"]))
          yield* store.putCompany(company("1", "Alpha Corp", ["ALP", "ALP.B"]))
          yield* store.putCompany({ ...company("2", "Beta Holdings Inc", ["BET"]), sic: null, fiscalYearEnd: null })
          const all = yield* store.companies
          expect(all.map((c) => [c.cik, c.name])).toEqual([
            ["1", "Alpha Corp"],
            ["2", "Beta Holdings Inc"]
          ])
          expect(yield* store.company("1")).toEqual(company("1", "Alpha Corp", ["ALP", "ALP.B"]))
          expect((yield* store.company("2"))?.sic).toBeNull()
          expect(yield* store.company("3")).toBeUndefined()
          const t: ReadonlyArray<TickerEntry> = [
            { cik: "2", ticker: "BET", name: "Beta", exchange: null },
            { cik: "1", ticker: "ALP", name: "Alpha", exchange: "Nasdaq" }
          ]
          yield* store.putTickers(t)
          yield* store.putTickers([{ cik: "2", ticker: "BET", name: "Beta Holdings", exchange: "NYSE" }])
          expect(yield* store.tickers).toEqual([
            { cik: "1", ticker: "ALP", name: "Alpha", exchange: "Nasdaq" },
            { cik: "2", ticker: "BET", name: "Beta Holdings", exchange: "NYSE" }
          ])
        })
      ))

    it("keeps facts as the exact filed strings, idempotently on their natural key", () =>
      run(
        Effect.gen(function* () {
          const store = yield* EquityStore
          yield* store.putCompany(company("1", "Alpha Corp", ["ALP"]))
          const facts = [
            fact("Revenues", "391035000000", "2023-10-01", "2024-09-28", "0000000001-24-000010"),
            fact("Revenues", "391035000001", "2023-10-01", "2024-09-28", "0000000001-25-000010"),
            fact("EarningsPerShareDiluted", "6.10", "2023-10-01", "2024-09-28", "0000000001-24-000010"),
            fact("EarningsPerShareDiluted", "-0.0725", "2022-10-01", "2023-09-30", "0000000001-24-000010"),
            fact("Assets", "364980000000", null, "2024-09-28", "0000000001-24-000010"),
            {
              ...fact("EntityCommonStockSharesOutstanding", "15115823000", null, "2024-10-18", "0000000001-24-000010"),
              taxonomy: "dei",
              unit: "shares",
              fy: null,
              fp: null,
              frame: null
            }
          ]
          expect(yield* store.putFacts("1", facts)).toBe(6)
          expect(yield* store.putFacts("1", facts)).toBe(0)
          const sortKey = (f: Fact) => [f.concept, f.end, f.accession].join("|")
          const back = [...(yield* store.facts("1"))].sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : 1))
          expect(back).toEqual([...facts].sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : 1)))
          const eps = yield* store.facts("1", ["EarningsPerShareDiluted"])
          expect(eps.map((f) => f.value).sort()).toEqual(["-0.0725", "6.10"])
          expect(yield* store.facts("2")).toEqual([])
        })
      ))

    it("lists filings newest first by acceptance time, idempotently", () =>
      run(
        Effect.gen(function* () {
          const store = yield* EquityStore
          const list = [
            filing("0000000001-24-000001", "10-Q", "2024-08-02T20:30:15.000Z"),
            filing("0000000001-24-000003", "4", "2024-11-05T21:00:00.000Z"),
            filing("0000000001-24-000002", "10-K", "2024-11-01T20:01:05.000Z")
          ]
          expect(yield* store.putFilings("1", list)).toBe(3)
          expect(yield* store.putFilings("1", list)).toBe(0)
          const back = yield* store.filings("1")
          expect(back.map((f) => f.accession)).toEqual([
            "0000000001-24-000003",
            "0000000001-24-000002",
            "0000000001-24-000001"
          ])
          expect(back[1]).toEqual(list[2])
          expect(back[0]).toEqual(list[1])
          expect(yield* store.filings("2")).toEqual([])
        })
      ))

    it("keeps ownership reports with every transaction field exact", () =>
      run(
        Effect.gen(function* () {
          const store = yield* EquityStore
          const a = ownership("0000000900-24-000001", "4", "2024-05-01", "1500")
          const b = ownership("0000000900-24-000002", "4/A", "2024-05-03", "1400.25")
          expect(yield* store.putOwnershipReports([b, a])).toBe(2)
          expect(yield* store.putOwnershipReports([a])).toBe(0)
          expect(yield* store.ownershipReports("1")).toEqual([a, b])
          expect(yield* store.ownershipReports("2")).toEqual([])
        })
      ))

    it("ties 13F holdings to a company by CUSIP (or issuer name without one), with the filers' reports", () =>
      run(
        Effect.gen(function* () {
          const store = yield* EquityStore
          yield* store.putCompany(company("1", "Alpha Corp", ["ALP"]))
          yield* store.putCompany(company("2", "Beta Inc", ["BET"]))
          yield* store.putSecurities("1", ["000000AA1"])
          const q3 = report("5001", "0005001-24-000001", "2024-09-30", [
            holding("000000AA1", "ALPHA CORP", "1000", "150000"),
            holding("000000AA1", "ALPHA CORP", "10", "1500", { putCall: "Call" }),
            holding("000000BB2", "BETA INC", "500", "2500.5")
          ])
          const q4 = report("5001", "0005001-25-000001", "2024-12-31", [
            holding("000000BB2", "BETA INC", "700", "3500")
          ])
          const other = report("5002", "0005002-25-000001", "2024-12-31", [
            holding("000000aa1", "Alpha Corp", "250", "40000")
          ])
          const unrelated = report("5003", "0005003-25-000001", "2024-12-31", [holding("000000CC3", "GAMMA", "1", "1")])
          expect(yield* store.putHoldingsReports([q3, q4, other, unrelated])).toBe(4)
          expect(yield* store.putHoldingsReports([q3])).toBe(0)
          const alpha = yield* store.holdings("1")
          expect(alpha.holdings.map((h) => [h.accession, h.holding.shares, h.holding.putCall]).sort()).toEqual([
            ["0005001-24-000001", "10", "Call"],
            ["0005001-24-000001", "1000", null],
            ["0005002-25-000001", "250", null]
          ])
          expect(alpha.holdings.find((h) => h.holding.shares === "1000")?.holding).toEqual(q3.holdings[0])
          // Every report of the filers holding Alpha, including 5001's later report that no longer lists it.
          expect(alpha.reports.map((r) => [r.filerCik, r.accession, r.reportPeriod, r.filedAt])).toEqual([
            ["5001", "0005001-24-000001", "2024-09-30", "2024-11-14"],
            ["5001", "0005001-25-000001", "2024-12-31", "2024-12-14"],
            ["5002", "0005002-25-000001", "2024-12-31", "2024-12-14"]
          ])
          // Beta has no CUSIP on file: matched by issuer name.
          const beta = yield* store.holdings("2")
          expect(beta.holdings.map((h) => h.holding.valueUsd).sort()).toEqual(["2500.5", "3500"])
          expect((yield* store.holdings("3")).holdings).toEqual([])
        })
      ))

    it("keeps daily bars per company and ticker, replacing a bar at the same time, newest `limit` oldest first", () =>
      run(
        Effect.gen(function* () {
          const store = yield* EquityStore
          const day = 86_400_000
          const t0 = Date.UTC(2024, 0, 2, 14, 30)
          const bars: Array<DailyBar> = Array.from({ length: 10 }, (_, i) => ({
            tMs: t0 + i * day,
            o: 100 + i,
            h: 101.5 + i,
            l: 99.25 + i,
            c: 100.125 + i,
            v: 1_000_000 + i
          }))
          yield* store.putBars("1", "ALP", bars.slice(5))
          yield* store.putBars("1", "ALP", bars.slice(0, 6))
          yield* store.putBars("1", "ALP", [{ ...(bars[9] as DailyBar), c: 42.5 }])
          const all = yield* store.bars("1", "ALP", {})
          expect(all.length).toBe(10)
          expect(all[9]?.c).toBe(42.5)
          expect(all[0]).toEqual(bars[0])
          expect((yield* store.bars("1", "ALP", { limit: 3 })).map((b) => b.o)).toEqual([107, 108, 109])
          const mid = yield* store.bars("1", "ALP", { fromMs: t0 + 2 * day, toMs: t0 + 5 * day, limit: 2 })
          expect(mid.map((b) => b.o)).toEqual([104, 105])
          expect(yield* store.bars("2", "ALP", {})).toEqual([])
          // A second class of the same company: its own series on the same days, the first one untouched.
          const classB = bars
            .slice(0, 4)
            .map((b) => ({ ...b, o: b.o / 1500, h: b.h / 1500, l: b.l / 1500, c: b.c / 1500 }))
          yield* store.putBars("1", "ALP-B", classB)
          expect(yield* store.bars("1", "ALP-B", {})).toEqual(classB)
          expect((yield* store.bars("1", "ALP", {})).map((b) => b.c)).toEqual(all.map((b) => b.c))
          expect(yield* store.bars("1", "ALP-C", {})).toEqual([])
        })
      ))

    it("lists every issuer: stored companies, CIKs only ticker rows name, Form 4 issuers; a listed issuer's 13F rows by its listed name", () =>
      run(
        Effect.gen(function* () {
          const store = yield* EquityStore
          // 1: a stored company; 4: stored from companyfacts (no tickers), listed; 2, 3: listed only (3 twice);
          // 5: only a Form 4 names it (its symbol lower-case); 6: a Form 4 issuer with no ticker ("NONE").
          yield* store.putCompany(company("1", "Alpha Corp", ["ALP"]))
          yield* store.putCompany({ ...company("4", "Delta Co", []), exchanges: [], sic: null })
          yield* store.putTickers([
            { cik: "2", ticker: "BET", name: "Beta Holdings Inc", exchange: "NYSE" },
            { cik: "3", ticker: "GAM-B", name: "Gamma Group", exchange: "Nasdaq" },
            { cik: "3", ticker: "GAM-A", name: "Gamma Group", exchange: "Nasdaq" },
            { cik: "4", ticker: "DEL", name: "Delta", exchange: null }
          ])
          const form4 = (accession: string, cik: string, name: string, ticker: string, filedAt: string) => ({
            ...ownership(accession, "4", filedAt, "10"),
            issuerCik: cik,
            issuerName: name,
            issuerTicker: ticker
          })
          yield* store.putOwnershipReports([
            form4("0000000900-24-000011", "5", "Epsilon Old Name", "eps", "2024-03-01"),
            form4("0000000900-24-000012", "5", "Epsilon Inc", "EPS", "2024-06-01"),
            form4("0000000900-24-000013", "6", "Zeta Private LLC", "NONE", "2024-06-01"),
            form4("0000000900-24-000014", "2", "BETA HOLDINGS INC", "BET", "2024-06-01")
          ])
          yield* store.putHoldingsReports([
            report("5001", "0005001-24-000001", "2024-09-30", [holding("000000BB2", "BETA HOLDINGS INC", "9", "90")])
          ])
          const listed = (
            cik: string,
            name: string,
            tickers: ReadonlyArray<string>,
            exchanges: ReadonlyArray<string>
          ) => ({
            cik,
            name,
            tickers,
            exchanges,
            sic: null,
            sicDescription: null,
            fiscalYearEnd: null,
            formerNames: []
          })
          const none = { facts: 0, filings: 0, lastFiledAt: null, bars: 0, lastBarMs: null, tickerBars: [] }
          const all = yield* store.issuers
          expect(all.map((i) => i.company)).toEqual([
            company("1", "Alpha Corp", ["ALP"]),
            listed("2", "Beta Holdings Inc", ["BET"], ["NYSE"]),
            listed("3", "Gamma Group", ["GAM-A", "GAM-B"], ["Nasdaq", "Nasdaq"]),
            { ...company("4", "Delta Co", ["DEL"]), exchanges: [""], sic: null },
            listed("5", "Epsilon Inc", ["EPS"], [""]),
            listed("6", "Zeta Private LLC", [], [])
          ])
          expect(all.map((i) => i.coverage)).toEqual([
            { cik: "1", ...none, hasHolders: false },
            // Beta has no company row and no CUSIP: its 13F row is tied by the name the ticker list gives.
            { cik: "2", ...none, hasHolders: true },
            { cik: "3", ...none, hasHolders: false },
            { cik: "4", ...none, hasHolders: false },
            { cik: "5", ...none, hasHolders: false },
            { cik: "6", ...none, hasHolders: false }
          ])
          expect(yield* store.issuer("2")).toEqual(all[1])
          expect(yield* store.issuer("5")).toEqual(all[4])
          expect(yield* store.issuer("7")).toBeUndefined()
          expect((yield* store.holdings("2")).holdings.map((h) => h.holding.shares)).toEqual(["9"])
          // The stored companies and coverage are what was stored, as before.
          expect((yield* store.companies).map((c) => c.cik)).toEqual(["1", "4"])
          expect((yield* store.coverage()).map((c) => c.cik)).toEqual(["1", "4"])
        })
      ))

    it("reports coverage per company: counts, latest filing date and bar (per ticker too), holders", () =>
      run(
        Effect.gen(function* () {
          const store = yield* EquityStore
          yield* store.putCompany(company("1", "Alpha Corp", ["ALP"]))
          yield* store.putCompany(company("2", "Beta Inc", ["BET"]))
          yield* store.putFacts("1", [fact("Revenues", "5", "2023-10-01", "2024-09-28", "0000000001-24-000010")])
          yield* store.putFilings("1", [filing("0000000001-25-000001", "8-K", "2025-01-30T21:05:00.000Z")])
          yield* store.putBars("1", "ALP", [{ tMs: 1_700_000_000_000, o: 1, h: 2, l: 0.5, c: 1.5, v: 10 }])
          yield* store.putBars("1", "ALP-B", [
            { tMs: 1_600_000_000_000, o: 1, h: 2, l: 0.5, c: 1.5, v: 10 },
            { tMs: 1_600_086_400_000, o: 1, h: 2, l: 0.5, c: 1.5, v: 10 }
          ])
          yield* store.putSecurities("1", ["000000AA1"])
          yield* store.putHoldingsReports([
            report("5001", "0005001-24-000001", "2024-09-30", [holding("000000AA1", "ALPHA CORP", "1", "1")])
          ])
          expect((yield* store.coverage("2")).map((c) => c.cik)).toEqual(["2"])
          expect(yield* store.coverage("3")).toEqual([])
          expect(yield* store.coverage()).toEqual([
            {
              cik: "1",
              facts: 1,
              filings: 1,
              lastFiledAt: "2025-01-30",
              bars: 3,
              lastBarMs: 1_700_000_000_000,
              tickerBars: [
                { ticker: "ALP", bars: 1, lastBarMs: 1_700_000_000_000 },
                { ticker: "ALP-B", bars: 2, lastBarMs: 1_600_086_400_000 }
              ],
              hasHolders: true
            },
            {
              cik: "2",
              facts: 0,
              filings: 0,
              lastFiledAt: null,
              bars: 0,
              lastBarMs: null,
              tickerBars: [],
              hasHolders: false
            }
          ])
        })
      ))
  })
}
