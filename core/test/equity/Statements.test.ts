import { describe, expect, it } from "vitest"
import { FactBook, financialsTable, isPeriodicForm, lineItem, monthsOf } from "../../src/equity/Statements.ts"
import { appleFacts, fact, hasAppleFacts } from "./fixtures.ts"

const Q1 = { accession: "0000000001-24-000001", filed: "2024-02-01", form: "10-Q", fy: 2024, fp: "Q1" }
const Q2 = { accession: "0000000001-24-000002", filed: "2024-05-01", form: "10-Q", fy: 2024, fp: "Q2" }
const Q3 = { accession: "0000000001-24-000003", filed: "2024-08-01", form: "10-Q", fy: 2024, fp: "Q3" }
const K = { accession: "0000000001-24-000004", filed: "2024-11-01", form: "10-K", fy: 2024, fp: "FY" }
const K2 = { accession: "0000000001-25-000004", filed: "2025-11-01", form: "10-K", fy: 2025, fp: "FY" }

/** A fiscal year Oct 2023 - Sep 2024 reported the usual way: quarters for income, year-to-date for cash flow. */
const handMade = [
  fact("Revenues", "100.10", "2023-10-01", "2023-12-30", Q1),
  fact("Revenues", "90.05", "2023-12-31", "2024-03-30", Q2),
  fact("Revenues", "190.15", "2023-10-01", "2024-03-30", Q2),
  fact("Revenues", "80", "2024-03-31", "2024-06-29", Q3),
  fact("Revenues", "270.15", "2023-10-01", "2024-06-29", Q3),
  fact("Revenues", "390.25", "2023-10-01", "2024-09-28", K),
  fact("NetCashProvidedByUsedInOperatingActivities", "30", "2023-10-01", "2023-12-30", Q1),
  fact("NetCashProvidedByUsedInOperatingActivities", "55.5", "2023-10-01", "2024-03-30", Q2),
  fact("NetCashProvidedByUsedInOperatingActivities", "70.25", "2023-10-01", "2024-06-29", Q3),
  fact("NetCashProvidedByUsedInOperatingActivities", "101", "2023-10-01", "2024-09-28", K),
  fact("PaymentsToAcquirePropertyPlantAndEquipment", "10", "2023-10-01", "2024-09-28", K),
  fact("Assets", "1000", null, "2024-09-28", K),
  // The next 10-K restates FY2024 revenue and reports the new year.
  fact("Revenues", "391.25", "2023-10-01", "2024-09-28", K2),
  fact("Revenues", "400", "2024-09-29", "2025-09-27", K2),
  fact("EarningsPerShareDiluted", "1.25", "2023-10-01", "2024-09-28", K, "USD/shares")
]

describe("statements on hand-made facts", () => {
  const book = new FactBook(handMade)

  it("classifies durations by length: 3, 6, 9 and 12 months", () => {
    expect(monthsOf("2023-10-01", "2023-12-30")).toBe(3)
    expect(monthsOf("2023-10-01", "2024-03-30")).toBe(6)
    expect(monthsOf("2023-10-01", "2024-06-29")).toBe(9)
    expect(monthsOf("2023-10-01", "2024-09-28")).toBe(12)
    expect(monthsOf("2023-10-01", "2023-11-30")).toBeUndefined()
  })

  it("serves the latest filing's value and flags the period restated, keeping both values", () => {
    const t = financialsTable(book, { statements: ["income"], kind: "annual", count: 4 })
    expect(t.periods.map((p) => [p.id, p.end, p.accession, p.restated])).toEqual([
      ["FY2025", "2025-09-27", K2.accession, false],
      ["FY2024", "2024-09-28", K2.accession, true]
    ])
    const revenue = t.lines.find((l) => l.key === "revenue")
    expect(revenue?.cells.map((c) => c?.value)).toEqual(["400", "391.25"])
    expect(revenue?.cells[1]?.reported.map((r) => [r.value, r.accession])).toEqual([
      ["390.25", K.accession],
      ["391.25", K2.accession]
    ])
    expect(t.lines.find((l) => l.key === "eps_diluted")?.cells.map((c) => c?.value ?? null)).toEqual([null, "1.25"])
  })

  it("as known on a date, before the restatement", () => {
    const before = new FactBook(handMade, { asKnownOn: "2025-01-01" })
    const t = financialsTable(before, { statements: ["income"], kind: "annual", count: 4 })
    expect(t.periods.map((p) => [p.id, p.restated])).toEqual([["FY2024", false]])
    expect(t.lines.find((l) => l.key === "revenue")?.cells[0]?.value).toBe("390.25")
  })

  it("derives Q4 = FY - nine months (flagged), and cash-flow quarters from year-to-date figures", () => {
    const t = financialsTable(new FactBook(handMade, { asKnownOn: "2025-01-01" }), {
      statements: ["income", "cash_flow"],
      kind: "quarter",
      count: 4
    })
    expect(t.periods.map((p) => [p.id, p.start, p.end, p.derived])).toEqual([
      ["Q4 FY2024", "2024-06-30", "2024-09-28", true],
      ["Q3 FY2024", "2024-03-31", "2024-06-29", true],
      ["Q2 FY2024", "2023-12-31", "2024-03-30", true],
      ["Q1 FY2024", "2023-10-01", "2023-12-30", false]
    ])
    const line = (k: string) => t.lines.find((l) => l.key === k)?.cells.map((c) => c?.value ?? null)
    // 390.25 - 270.15 = 120.1 (derived), the others as filed.
    expect(line("revenue")).toEqual(["120.1", "80", "90.05", "100.10"])
    expect(line("operating_cash_flow")).toEqual(["30.75", "14.75", "25.5", "30"])
    expect(t.lines.find((l) => l.key === "revenue")?.cells[0]?.derived).toBe(true)
    expect(t.lines.find((l) => l.key === "revenue")?.cells[1]?.derived).toBe(false)
  })

  it("TTM: the annual figure at a fiscal year end, else four quarters, else FY + YTD - prior YTD", () => {
    const known = new FactBook(handMade, { asKnownOn: "2025-01-01" })
    const atFy = known.ttm(lineItem("revenue"), "2024-09-28")
    expect([atFy?.value.toFixed(), atFy?.method]).toEqual(["390.25", "annual"])
    const fcf = known.ttm(lineItem("free_cash_flow"), "2024-09-28")
    expect(fcf?.value.toFixed()).toBe("91")
    expect(fcf?.concepts).toEqual([
      "NetCashProvidedByUsedInOperatingActivities",
      "PaymentsToAcquirePropertyPlantAndEquipment"
    ])
    // Six months of the next year: FY 101 + 6M FY2025 60 - 6M FY2024 55.5 = 105.5.
    const next = new FactBook([
      ...handMade,
      fact("NetCashProvidedByUsedInOperatingActivities", "60", "2024-09-29", "2025-03-29", {
        accession: "0000000001-25-000002",
        filed: "2025-05-01",
        fy: 2025,
        fp: "Q2"
      })
    ])
    const ytd = next.ttm(lineItem("operating_cash_flow"), "2025-03-29")
    expect([ytd?.value.toFixed(), ytd?.method]).toEqual(["105.5", "fy_plus_ytd"])
    // No TTM for weighted share counts: they do not add up across periods.
    expect(known.ttm(lineItem("weighted_shares_diluted"), "2024-09-28")).toBeNull()
  })

  it("offers basis concepts per line", () => {
    const t = financialsTable(book, { statements: ["cash_flow"], kind: "annual", count: 2 })
    expect(t.lines.map((l) => [l.key, l.basisConcepts])).toEqual([
      ["operating_cash_flow", ["NetCashProvidedByUsedInOperatingActivities"]],
      ["capital_expenditure", ["PaymentsToAcquirePropertyPlantAndEquipment"]],
      ["free_cash_flow", ["NetCashProvidedByUsedInOperatingActivities", "PaymentsToAcquirePropertyPlantAndEquipment"]]
    ])
  })
})

describe.skipIf(!hasAppleFacts)("statements on Apple's companyfacts (../shared/data/sec)", () => {
  if (!hasAppleFacts) console.warn("Apple companyfacts absent (../shared/data/sec): real-data statement tests SKIPPED")
  const book = hasAppleFacts ? new FactBook(appleFacts()) : new FactBook([])

  it("annual lines equal the filed strings of the 10-Ks", () => {
    const t = financialsTable(book, { statements: ["income", "balance", "cash_flow"], kind: "annual", count: 3 })
    expect(t.periods.map((p) => [p.id, p.start, p.end, p.form, p.accession, p.filedAt])).toEqual([
      ["FY2025", "2024-09-29", "2025-09-27", "10-K", "0000320193-25-000079", "2025-10-31"],
      ["FY2024", "2023-10-01", "2024-09-28", "10-K", "0000320193-25-000079", "2025-10-31"],
      ["FY2023", "2022-09-25", "2023-09-30", "10-K", "0000320193-25-000079", "2025-10-31"]
    ])
    const v = (k: string) => t.lines.find((l) => l.key === k)?.cells.map((c) => c?.value ?? null)
    // Figures as filed in the FY2025 10-K (0000320193-25-000079), read from the raw JSON.
    expect(v("revenue")).toEqual(["416161000000", "391035000000", "383285000000"])
    expect(v("net_income")).toEqual(["112010000000", "93736000000", "96995000000"])
    expect(v("eps_diluted")).toEqual(["7.46", "6.08", "6.13"])
    expect(v("operating_income")).toEqual(["133050000000", "123216000000", "114301000000"])
    expect(v("operating_cash_flow")).toEqual(["111482000000", "118254000000", "110543000000"])
    expect(v("capital_expenditure")).toEqual(["12715000000", "9447000000", "10959000000"])
    expect(v("total_assets")?.slice(0, 2)).toEqual(["359241000000", "364980000000"])
    expect(v("free_cash_flow")).toEqual(["98767000000", "108807000000", "99584000000"])
    expect(t.lines.find((l) => l.key === "revenue")?.basisConcepts).toEqual([
      "RevenueFromContractWithCustomerExcludingAssessedTax"
    ])
  })

  it("flags FY2016 restated: operating cash flow 65824000000 in the 2017 10-K, 66231000000 in the 2018 10-K", () => {
    const t = financialsTable(book, { statements: ["cash_flow"], kind: "annual", count: 20 })
    const i = t.periods.findIndex((p) => p.end === "2016-09-24")
    expect(t.periods[i]?.restated).toBe(true)
    const ocf = t.lines.find((l) => l.key === "operating_cash_flow")?.cells[i]
    expect(ocf?.value).toBe("66231000000")
    expect(ocf?.accession).toBe("0000320193-18-000145")
    expect(ocf?.reported.map((r) => [r.value, r.accession])).toEqual([
      ["65824000000", "0000320193-17-000070"],
      ["66231000000", "0000320193-18-000145"]
    ])
  })

  it("derives Q4 FY2025 revenue = 416161000000 (FY, 10-K) - 313695000000 (nine months, 10-Q) = 102466000000", () => {
    const t = financialsTable(book, { statements: ["income"], kind: "quarter", count: 2 })
    expect(t.periods.map((p) => [p.id, p.start, p.end, p.derived])).toEqual([
      ["Q1 FY2026", "2025-09-28", "2025-12-27", false],
      ["Q4 FY2025", "2025-06-29", "2025-09-27", true]
    ])
    const revenue = t.lines.find((l) => l.key === "revenue")
    expect(revenue?.cells.map((c) => c?.value)).toEqual(["143756000000", "102466000000"])
    expect(revenue?.cells[1]?.derived).toBe(true)
  })

  it("TTM revenue at 2025-12-27 is exact both ways: four quarters and FY + YTD - prior YTD", () => {
    // Quarters: 143756000000 (Q1 FY26) + 102466000000 (Q4 FY25, derived) + 94036000000 (Q3) + 95359000000 (Q2)
    const t = book.latestTtm(lineItem("revenue"))
    expect([t?.end, t?.value.toFixed(), t?.method]).toEqual(["2025-12-27", "435617000000", "four_quarters"])
    // The same from FY25 416161000000 + Q1 FY26 143756000000 - Q1 FY25 124300000000, with only those filed.
    const only = appleFacts().filter(
      (f) =>
        f.concept === "RevenueFromContractWithCustomerExcludingAssessedTax" &&
        ((f.start === "2024-09-29" && (f.end === "2025-09-27" || f.end === "2024-12-28")) ||
          (f.start === "2025-09-28" && f.end === "2025-12-27"))
    )
    const viaYtd = new FactBook(only).ttm(lineItem("revenue"), "2025-12-27")
    expect([viaYtd?.value.toFixed(), viaYtd?.method]).toEqual(["435617000000", "fy_plus_ytd"])
    // Free cash flow: OCF 111482000000 + 53925000000 - 29935000000 = 135472000000;
    // capex 12715000000 + 2373000000 - 2940000000 = 12148000000; FCF = 123324000000.
    expect(book.latestTtm(lineItem("free_cash_flow"))?.value.toFixed()).toBe("123324000000")
    // A year earlier (2024-12-28): 124300000000 + 94930000000 + 85777000000 + 90753000000.
    expect(book.ttmYearBefore(lineItem("revenue"), "2025-12-27")?.value.toFixed()).toBe("395760000000")
  })
})

/**
 * Rows as data.sec.gov's companyfacts lists them (`facts.us-gaap.<concept>.units.USD[]`: start, end, val, accn,
 * fy, fp, form, filed, frame), for an issuer whose fiscal year ends in late January, as a large semiconductor
 * issuer's does. A DEF 14A's pay-versus-performance table carries net income for several years, filed after the
 * 10-K.
 */
interface CompanyFactsRow {
  readonly start: string
  readonly end: string
  readonly val: number
  readonly accn: string
  readonly fy: number
  readonly fp: string
  readonly form: string
  readonly filed: string
  readonly frame?: string
}

const fromCompanyFacts = (concept: string, rows: ReadonlyArray<CompanyFactsRow>) =>
  rows.map((r) => ({
    taxonomy: "us-gaap",
    concept,
    unit: "USD",
    value: String(r.val),
    start: r.start,
    end: r.end,
    fy: r.fy,
    fp: r.fp,
    form: r.form,
    accession: r.accn,
    filed: r.filed,
    frame: r.frame ?? null
  }))

const FY23 = { start: "2022-01-31", end: "2023-01-29" }
const FY24 = { start: "2023-01-30", end: "2024-01-28" }
const FY25 = { start: "2024-01-29", end: "2025-01-26" }
const TEN_K_23 = { accn: "0001045810-23-000017", fy: 2023, fp: "FY", form: "10-K", filed: "2023-02-24" }
const TEN_K_24 = { accn: "0001045810-24-000029", fy: 2024, fp: "FY", form: "10-K", filed: "2024-02-21" }
const TEN_K_25 = { accn: "0001045810-25-000023", fy: 2025, fp: "FY", form: "10-K", filed: "2025-02-26" }
const PROXY_24 = { accn: "0001045810-24-000124", fy: 2024, fp: "FY", form: "DEF 14A", filed: "2024-05-13" }
const PROXY_25 = { accn: "0001045810-25-000116", fy: 2025, fp: "FY", form: "DEF 14A", filed: "2025-05-13" }

describe("statements: a figure is cited from the periodic report", () => {
  it("knows the periodic forms and their amendments", () => {
    for (const form of ["10-K", "10-Q", "10-K/A", "10-Q/A", "20-F", "20-F/A", "40-F", "40-F/A", "10-KT", "10-KT/A"]) {
      expect(isPeriodicForm(form), form).toBe(true)
    }
    for (const form of ["DEF 14A", "DEFA14A", "8-K", "8-K/A", "S-1", "S-1/A", "424B4", "424B3", "6-K", "10-12G"]) {
      expect(isPeriodicForm(form), form).toBe(false)
    }
  })

  it("a proxy filed after the 10-K repeating its net income does not become the citation", () => {
    const facts = [
      ...fromCompanyFacts("NetIncomeLoss", [
        { ...FY23, val: 4368000000, ...TEN_K_23, frame: "CY2022" },
        { ...FY23, val: 4368000000, ...TEN_K_24 },
        { ...FY24, val: 29760000000, ...TEN_K_24, frame: "CY2023" },
        { ...FY23, val: 4368000000, ...PROXY_24 },
        { ...FY24, val: 29760000000, ...PROXY_24 }
      ]),
      ...fromCompanyFacts("Revenues", [
        { ...FY23, val: 26974000000, ...TEN_K_23 },
        { ...FY23, val: 26974000000, ...TEN_K_24 },
        { ...FY24, val: 60922000000, ...TEN_K_24 }
      ])
    ]
    const t = financialsTable(new FactBook(facts), { statements: ["income"], kind: "annual", count: 4 })
    expect(t.periods.map((p) => [p.id, p.form, p.accession, p.filedAt, p.restated])).toEqual([
      ["FY2024", "10-K", TEN_K_24.accn, TEN_K_24.filed, false],
      ["FY2023", "10-K", TEN_K_24.accn, TEN_K_24.filed, false]
    ])
    const netIncome = t.lines.find((l) => l.key === "net_income")
    expect(netIncome?.cells.map((c) => [c?.value, c?.form, c?.accession])).toEqual([
      ["29760000000", "10-K", TEN_K_24.accn],
      ["4368000000", "10-K", TEN_K_24.accn]
    ])
    // The proxy is still among the filings that reported the figure.
    expect(netIncome?.cells[0]?.reported.map((r) => r.form)).toEqual(["10-K", "DEF 14A"])
  })

  it("a later 10-K restating a comparative year wins; a proxy after it showing the original figure does not", () => {
    const facts = fromCompanyFacts("NetIncomeLoss", [
      { ...FY24, val: 29760000000, ...TEN_K_24 },
      { ...FY24, val: 29500000000, ...TEN_K_25 }, // restated as the comparative year
      { ...FY25, val: 72880000000, ...TEN_K_25 },
      { ...FY24, val: 29760000000, ...PROXY_25 }, // pay versus performance: as originally reported
      { ...FY25, val: 72880000000, ...PROXY_25 }
    ])
    const table = (asKnownOn?: string) =>
      financialsTable(new FactBook(facts, asKnownOn === undefined ? {} : { asKnownOn }), {
        statements: ["income"],
        kind: "annual",
        count: 4
      })
    const now = table()
    expect(now.periods.map((p) => [p.id, p.form, p.accession, p.restated])).toEqual([
      ["FY2025", "10-K", TEN_K_25.accn, false],
      ["FY2024", "10-K", TEN_K_25.accn, true]
    ])
    expect(now.lines.find((l) => l.key === "net_income")?.cells.map((c) => c?.value)).toEqual([
      "72880000000",
      "29500000000"
    ])
    // As known on a day after the proxy: the same. Before the restating 10-K: the original, unrestated.
    expect(table("2025-06-01").lines.find((l) => l.key === "net_income")?.cells[1]?.value).toBe("29500000000")
    const before = table("2024-12-31")
    expect(before.periods.map((p) => [p.id, p.form, p.accession, p.restated])).toEqual([
      ["FY2024", "10-K", TEN_K_24.accn, false]
    ])
    expect(before.lines.find((l) => l.key === "net_income")?.cells[0]?.value).toBe("29760000000")
  })

  it("a period no periodic report carries is served from another form, which the citation shows", () => {
    // A registration statement's year before the first 10-K.
    const s1 = { accn: "0001999999-21-000003", fy: 2021, fp: "FY", form: "S-1", filed: "2021-03-01" }
    const tenK = { accn: "0001999999-22-000010", fy: 2021, fp: "FY", form: "10-K", filed: "2022-03-01" }
    const facts = fromCompanyFacts("Revenues", [
      { start: "2019-01-01", end: "2019-12-31", val: 50, ...s1 },
      { start: "2020-01-01", end: "2020-12-31", val: 80, ...s1 },
      { start: "2020-01-01", end: "2020-12-31", val: 81, ...tenK },
      { start: "2021-01-01", end: "2021-12-31", val: 120, ...tenK }
    ])
    const t = financialsTable(new FactBook(facts), { statements: ["income"], kind: "annual", count: 4 })
    expect(t.periods.map((p) => [p.end, p.form, p.accession, p.restated])).toEqual([
      ["2021-12-31", "10-K", tenK.accn, false],
      ["2020-12-31", "10-K", tenK.accn, true],
      ["2019-12-31", "S-1", s1.accn, false]
    ])
  })
})
