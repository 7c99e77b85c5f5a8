import { assert, describe, it } from "@effect/vitest"
import { Decimal } from "decimal.js"
import {
  checkThirteenFTotals,
  parseThirteenFInformationTable,
  parseThirteenFPrimaryDocument,
  SimulatedCompanies,
  simulatedEquity,
  supersedeAmendments,
  thirteenFImpliedValueUnit
} from "../src/index.ts"
import type { Fact } from "../src/sec/EquityModel.ts"

const sim = simulatedEquity(7)
const days = (fact: Fact) => Math.round((Date.parse(fact.end) - Date.parse(fact.start!)) / 86_400_000) + 1

describe("simulatedEquity", () => {
  it("is deterministic: the same seed gives the same documents and records, another seed others", () => {
    const again = simulatedEquity(7)
    assert.deepStrictEqual([...again.documents.companyFacts], [...sim.documents.companyFacts])
    assert.deepStrictEqual([...again.documents.submissions], [...sim.documents.submissions])
    assert.deepStrictEqual(again.documents.ownershipDocuments, sim.documents.ownershipDocuments)
    assert.deepStrictEqual(again.documents.thirteenF, sim.documents.thirteenF)
    assert.deepStrictEqual([...again.dailyBars], [...sim.dailyBars])
    assert.deepStrictEqual(again.ownershipReports, sim.ownershipReports)
    const other = simulatedEquity(8)
    assert.notDeepEqual(other.documents.companyFacts.get("9990001"), sim.documents.companyFacts.get("9990001"))
    assert.notDeepEqual(other.dailyBars.get("9990001")!.at(-1), sim.dailyBars.get("9990001")!.at(-1))
  })

  it("covers five fictional companies in the 999xxxx CIK range, with tickers and CUSIPs", () => {
    assert.deepStrictEqual(
      sim.companies.map((company) => [company.cik, company.tickers[0], company.exchanges[0]]),
      [
        ["9990001", "ALDR", "Nasdaq"],
        ["9990002", "BWPC", "NYSE"],
        ["9990003", "CLSW", "Nasdaq"],
        ["9990004", "DMFL", "NYSE"],
        ["9990005", "EMBF", "NYSE"]
      ]
    )
    assert.deepStrictEqual(
      sim.tickers.map((entry) => entry.ticker),
      ["ALDR", "BWPC", "CLSW", "DMFL", "EMBF"]
    )
    for (const company of sim.companies) assert.match(sim.securities.get(company.cik)![0]!, /^[0-9A-Z]{9}$/)
  })

  it("keeps every generated value exact through the companyfacts parser", () => {
    for (const [cik, text] of sim.documents.companyFacts) {
      const raw = [...text.matchAll(/"val":(-?[0-9.]+)/g)].map((match) => match[1])
      assert.deepStrictEqual(
        sim.factsByCik.get(cik)!.map((fact) => fact.value),
        raw
      )
    }
  })

  it("files Q1..Q3 as 10-Q quarters and Q4 only inside the 10-K's fiscal year", () => {
    for (const profile of SimulatedCompanies) {
      const revenue = sim.factsByCik.get(profile.cik)!.filter((fact) => fact.concept === profile.revenueConcept)
      const fiscalYearEnds = new Set(
        revenue.filter((fact) => fact.fp === "FY" && days(fact) > 360).map((fact) => fact.end)
      )
      const quarterly = revenue.filter((fact) => days(fact) < 95)
      assert.isAbove(quarterly.length, 20)
      assert.isTrue(quarterly.every((fact) => fact.form === "10-Q"))
      // No three-month fact ends on a fiscal year end: Q4 has to be derived.
      assert.isFalse(quarterly.some((fact) => fiscalYearEnds.has(fact.end)))
      assert.isAbove(fiscalYearEnds.size, 4)
    }
  })

  it("reports every statement line the plane needs, for every company", () => {
    const needed = [
      "CostOfRevenue",
      "OperatingIncomeLoss",
      "NetIncomeLoss",
      "EarningsPerShareBasic",
      "EarningsPerShareDiluted",
      "WeightedAverageNumberOfDilutedSharesOutstanding",
      "DepreciationDepletionAndAmortization",
      "NetCashProvidedByUsedInOperatingActivities",
      "PaymentsToAcquirePropertyPlantAndEquipment",
      "Assets",
      "Liabilities",
      "StockholdersEquity",
      "CashAndCashEquivalentsAtCarryingValue",
      "LongTermDebt",
      "EntityCommonStockSharesOutstanding"
    ]
    for (const profile of SimulatedCompanies) {
      const concepts = new Set(sim.factsByCik.get(profile.cik)!.map((fact) => fact.concept))
      for (const concept of [...needed, profile.revenueConcept])
        assert.isTrue(concepts.has(concept), `${profile.cik} ${concept}`)
      const dividends = concepts.has("CommonStockDividendsPerShareDeclared")
      assert.strictEqual(dividends, profile.dividendPerShare !== null, `${profile.cik} dividends`)
    }
    const balance = sim.factsByCik.get("9990004")!.filter((fact) => fact.start === null && fact.taxonomy === "us-gaap")
    for (const assets of balance.filter((fact) => fact.concept === "Assets")) {
      const at = (concept: string) =>
        balance.find(
          (fact) => fact.concept === concept && fact.end === assets.end && fact.accession === assets.accession
        )!
      assert.strictEqual(
        new Decimal(at("Liabilities").value).plus(at("StockholdersEquity").value).toFixed(),
        assets.value
      )
    }
    // Per filing and period: pretax - tax = net income, and diluted EPS = net income / diluted shares, to the cent.
    const dunmore = sim.factsByCik.get("9990004")!
    const incomes = dunmore.filter((fact) => fact.concept === "NetIncomeLoss")
    assert.isAbove(incomes.length, 50)
    for (const income of incomes) {
      const at = (concept: string) =>
        dunmore.find(
          (f) =>
            f.concept === concept &&
            f.accession === income.accession &&
            f.start === income.start &&
            f.end === income.end
        )!
      const pretax = at("IncomeLossFromContinuingOperationsBeforeIncomeTaxesExtraordinaryItemsNoncontrollingInterest")
      assert.strictEqual(new Decimal(pretax.value).minus(at("IncomeTaxExpenseBenefit").value).toFixed(), income.value)
      const eps = new Decimal(income.value).div(at("WeightedAverageNumberOfDilutedSharesOutstanding").value)
      assert.strictEqual(
        eps.toDecimalPlaces(2, Decimal.ROUND_HALF_UP).toFixed(),
        new Decimal(at("EarningsPerShareDiluted").value).toFixed()
      )
    }
    // A dividend payer discloses all four quarters' dividends of a fiscal year as three-month facts.
    const quarterlyDividends = dunmore.filter(
      (fact) =>
        fact.concept === "CommonStockDividendsPerShareDeclared" && days(fact) < 95 && fact.end.startsWith("2024")
    )
    assert.deepStrictEqual([...new Set(quarterlyDividends.map((fact) => fact.end))].sort(), [
      "2024-03-31",
      "2024-06-30",
      "2024-09-30",
      "2024-12-31"
    ])
    const losses = sim.factsByCik.get("9990003")!.filter((fact) => fact.concept === "NetIncomeLoss")
    assert.isTrue(losses.every((fact) => fact.value.startsWith("-")))
  })

  it("plants a restatement: a later 10-K reports a different value for an earlier fiscal year", () => {
    const [restatement] = sim.planted.restatements
    assert.strictEqual(restatement?.cik, "9990002")
    const revenue = sim.factsByCik
      .get("9990002")!
      .filter((fact) => fact.concept === "Revenues" && fact.fp === "FY" && fact.fy === restatement!.fiscalYear)
    const year = revenue.find(
      (fact) =>
        fact.accession !== restatement!.restatedBy &&
        days(fact) > 360 &&
        fact.end.startsWith(String(restatement!.fiscalYear))
    )!
    const restated = sim.factsByCik
      .get("9990002")!
      .find(
        (fact) =>
          fact.concept === "Revenues" &&
          fact.accession === restatement!.restatedBy &&
          fact.start === year.start &&
          fact.end === year.end
      )!
    assert.notStrictEqual(restated.value, year.value)
    assert.isTrue(new Decimal(restated.value).lt(year.value))
    assert.isTrue(restated.filed > year.filed)
    const nonReliance = sim.submissions
      .get("9990002")!
      .filings.find((filing) => filing.form === "8-K" && filing.items === "4.02")
    assert.isDefined(nonReliance)
  })

  it("plants a 3-for-1 split: the ratio fact, the announcement, and split-adjusted per-share figures afterwards", () => {
    const [split] = sim.planted.splits
    assert.deepStrictEqual([split?.cik, split?.ratio], ["9990001", 3])
    const facts = sim.factsByCik.get("9990001")!
    const ratio = facts.filter((fact) => fact.concept === "StockholdersEquityNoteStockSplitConversionRatio1")
    assert.isAbove(ratio.length, 0)
    assert.isTrue(
      ratio.every(
        (fact) => fact.value === "3" && fact.unit === "pure" && fact.end === split!.date && fact.filed >= split!.date
      )
    )
    // A pre-split quarter's diluted shares, as filed before and after the split.
    const shares = facts.filter(
      (fact) => fact.concept === "WeightedAverageNumberOfDilutedSharesOutstanding" && fact.end < split!.date
    )
    const byPeriod = new Map<string, Array<Fact>>()
    for (const fact of shares)
      byPeriod.set(`${fact.start}|${fact.end}`, [...(byPeriod.get(`${fact.start}|${fact.end}`) ?? []), fact])
    const both = [...byPeriod.values()].find(
      (group) => group.some((f) => f.filed < split!.date) && group.some((f) => f.filed >= split!.date)
    )!
    const before = both.find((f) => f.filed < split!.date)!
    const after = both.find((f) => f.filed >= split!.date)!
    assert.strictEqual(new Decimal(before.value).times(3).toFixed(), after.value)
    assert.isDefined(sim.submissions.get("9990001")!.filings.find((filing) => filing.items === "8.01,9.01"))
  })

  it("pages older filings like EDGAR, and every periodic report's facts point at a listed filing", () => {
    for (const company of sim.companies) {
      const submissions = sim.submissions.get(company.cik)!
      assert.strictEqual(submissions.olderFiles.length, 1)
      const accessions = new Set(submissions.filings.map((filing) => filing.accession))
      assert.strictEqual(accessions.size, submissions.filings.length)
      for (const fact of sim.factsByCik.get(company.cik)!) assert.isTrue(accessions.has(fact.accession))
      for (let i = 1; i < submissions.filings.length; i++) {
        const [newer, older] = [submissions.filings[i - 1]!, submissions.filings[i]!]
        assert.isTrue(newer.filedAt >= older.filedAt)
        // Accession numbers run in arrival order within a year, as EDGAR assigns them.
        if (newer.filedAt.slice(0, 4) === older.filedAt.slice(0, 4)) assert.isTrue(newer.accession > older.accession)
      }
      assert.isTrue(submissions.filings.every((filing) => filing.filedAt <= sim.asOf))
      const forms = new Set(submissions.filings.map((filing) => filing.form))
      for (const form of ["10-K", "10-Q", "8-K", "4", "DEF 14A"])
        assert.isTrue(forms.has(form), `${company.cik} ${form}`)
      const tenK = submissions.filings.find((filing) => filing.form === "10-K")!
      assert.strictEqual(
        tenK.url,
        `https://www.sec.gov/Archives/edgar/data/${company.cik}/${tenK.accession.replaceAll("-", "")}/${tenK.primaryDocument}`
      )
    }
  })

  it("writes Form 4s with every kind of insider row, and a 4/A that supersedes its original", () => {
    const codes = new Set(
      sim.ownershipReports.flatMap((report) => report.transactions.map((t) => `${t.table}:${t.code}`))
    )
    for (const code of [
      "non_derivative:S",
      "non_derivative:P",
      "non_derivative:A",
      "non_derivative:F",
      "non_derivative:M",
      "derivative:M"
    ]) {
      assert.isTrue(codes.has(code), code)
    }
    assert.isAbove(sim.planted.amendments.length, 0)
    for (const amendment of sim.planted.amendments) {
      const report = sim.ownershipReports.find((r) => r.accession === amendment.accession)!
      const sameGroup = sim.ownershipReports.filter(
        (r) =>
          r.issuerCik === report.issuerCik &&
          r.periodOfReport === report.periodOfReport &&
          r.owners[0]!.cik === report.owners[0]!.cik
      )
      const original = sameGroup.find((r) => r.form === "4" && r.filedAt === amendment.dateOfOriginalSubmission)!
      assert.notStrictEqual(original.transactions[0]!.shares, report.transactions[0]!.shares)
      const netted = supersedeAmendments(sameGroup)
      assert.deepStrictEqual(
        netted.map((r) => r.accession),
        [report.accession]
      )
    }
    const sale = sim.ownershipReports.flatMap((r) => r.transactions).find((t) => t.code === "S")!
    assert.match(sale.pricePerShare!, /^\d+(\.\d{1,4})?$/)
    assert.strictEqual(sale.footnotes.length, 2)
  })

  it("writes 13F-HR filings whose tables match their totals, in thousands before 2023-01-03 and dollars after", () => {
    assert.isAbove(sim.holdingsReports.length, 30)
    for (const filing of sim.documents.thirteenF) {
      const cover = parseThirteenFPrimaryDocument(filing.primaryDocument)
      assert.isTrue(cover._tag === "Success")
      const report = sim.holdingsReports.find((r) => r.accession === filing.accession)!
      if (cover._tag !== "Success") continue
      const check = checkThirteenFTotals(cover.success, report.holdings, filing.filedAt)
      assert.isTrue(check.entriesMatch && check.valueMatches, filing.accession)
    }
    const early = sim.holdingsReports.filter((r) => r.filedAt < "2023-01-03")
    const late = sim.holdingsReports.filter((r) => r.filedAt >= "2023-01-03")
    assert.isAbove(early.length, 0)
    assert.isAbove(late.length, 0)
    assert.isTrue(early.every((r) => r.holdings.every((h) => h.valueUsd.endsWith("000"))))
    assert.isTrue(late.some((r) => r.holdings.some((h) => !h.valueUsd.endsWith("000"))))
    // Read as written, the early tables imply thousands and the later ones dollars.
    const asWritten = (filing: (typeof sim.documents.thirteenF)[number]) => {
      const result = parseThirteenFInformationTable(filing.informationTable, filing.filedAt, { valueUnit: "dollars" })
      return result._tag === "Success" ? thirteenFImpliedValueUnit(result.success) : "unparsed"
    }
    for (const filing of sim.documents.thirteenF) {
      assert.strictEqual(asWritten(filing), filing.filedAt < "2023-01-03" ? "thousands" : "dollars", filing.accession)
    }
    const covered = new Set(SimulatedCompanies.map((profile) => profile.cusip))
    assert.isTrue(sim.holdingsReports.every((r) => r.holdings.some((h) => covered.has(h.cusip))))
    assert.isTrue(sim.holdingsReports.some((r) => r.holdings.some((h) => h.putCall === "Put")))
  })

  it("has one daily bar per weekday up to asOf, opening at 09:30 New York time, consistent OHLC", () => {
    for (const [cik, bars] of sim.dailyBars) {
      assert.isAbove(bars.length, 1000, cik)
      const newYorkOpen = new Intl.DateTimeFormat("en-US", {
        timeZone: "America/New_York",
        hourCycle: "h23",
        hour: "2-digit",
        minute: "2-digit",
        weekday: "short"
      })
      for (const bar of bars) {
        assert.isTrue(bar.h >= Math.max(bar.o, bar.c) && bar.l <= Math.min(bar.o, bar.c) && bar.l > 0 && bar.v > 0)
        const parts = newYorkOpen.format(new Date(bar.tMs))
        assert.match(parts, /^(Mon|Tue|Wed|Thu|Fri) 09:30$/)
      }
      for (let i = 1; i < bars.length; i++) assert.isTrue(bars[i]!.tMs > bars[i - 1]!.tMs)
      assert.strictEqual(new Date(bars.at(-1)!.tMs).toISOString().slice(0, 10), sim.asOf)
    }
  })

  it("generates a parseable plane with its planted events for other seeds and dates", () => {
    for (const seed of [1, 2, 3]) {
      for (const asOf of ["2024-03-15", "2031-01-02"]) {
        const other = simulatedEquity(seed, { asOf })
        assert.strictEqual(other.planted.restatements.length, 1)
        assert.strictEqual(other.planted.splits.length, 1)
        assert.isAbove(other.planted.amendments.length, 0)
        for (const facts of other.factsByCik.values()) {
          const balances = facts.filter((fact) => ["Assets", "Liabilities", "LongTermDebt"].includes(fact.concept))
          assert.isTrue(balances.every((fact) => !fact.value.startsWith("-")))
        }
        for (const bars of other.dailyBars.values()) assert.isTrue(bars.every((bar) => bar.l > 0))
      }
    }
  })

  it("ends its history at the asOf it is given", () => {
    const earlier = simulatedEquity(7, { asOf: "2025-06-30" })
    for (const submissions of earlier.submissions.values())
      assert.isTrue(submissions.filings.every((filing) => filing.filedAt <= "2025-06-30"))
    assert.isTrue(earlier.holdingsReports.every((report) => report.filedAt <= "2025-06-30"))
    assert.isTrue(earlier.ownershipReports.every((report) => report.filedAt <= "2025-06-30"))
    assert.strictEqual(new Date(earlier.dailyBars.get("9990003")!.at(-1)!.tMs).toISOString().slice(0, 10), "2025-06-30")
  })
})
