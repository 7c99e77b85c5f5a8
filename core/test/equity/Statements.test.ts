import { describe, expect, it } from "vitest"
import { FactBook, financialsTable, lineItem, monthsOf } from "../../src/equity/Statements.ts"
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
