import { describe, expect, it } from "vitest"
import { holdersOf, issuerNameKey } from "../../src/equity/Holders.ts"
import { insiderSummary, reportsInForce } from "../../src/equity/Insider.ts"
import { isSessionOpen, lastClosedSession, nextSessionOpenMs, sessionOpenMs } from "../../src/equity/MarketHours.ts"
import type { Holding, InsiderTransaction, OwnershipReport } from "../../src/equity/Model.ts"
import { FactBook, lineItem } from "../../src/equity/Statements.ts"
import {
  fundamentals,
  growth,
  multipleHistory,
  sharesOutstanding,
  ttmKnownOn,
  valuation
} from "../../src/equity/Valuation.ts"
import { fact } from "./fixtures.ts"

const tx = (
  date: string,
  code: string,
  shares: string,
  table: InsiderTransaction["table"] = "non_derivative"
): InsiderTransaction => ({
  table,
  securityTitle: "Common Stock",
  transactionDate: date,
  code,
  acquiredDisposed: code === "S" || code === "F" ? "D" : "A",
  shares,
  pricePerShare: code === "P" || code === "S" ? "10.5" : null,
  sharesOwnedAfter: "1000",
  directIndirect: "D",
  exercisePrice: null,
  underlyingShares: null,
  footnotes: []
})

const form4 = (
  accession: string,
  form: "4" | "4/A",
  filedAt: string,
  owner: string,
  transactions: ReadonlyArray<InsiderTransaction>,
  original: string | null = null
): OwnershipReport => ({
  form,
  accession,
  filedAt,
  periodOfReport: transactions[0]?.transactionDate ?? filedAt,
  issuerCik: "1",
  issuerName: "Alpha Corp",
  issuerTicker: "ALP",
  owners: [
    {
      cik: owner,
      name: `Owner ${owner}`,
      isDirector: true,
      isOfficer: false,
      officerTitle: null,
      isTenPercentOwner: false,
      isOther: false
    }
  ],
  transactions,
  dateOfOriginalSubmission: original
})

describe("insider summary", () => {
  const reports = [
    form4("a1", "4", "2026-10-02", "900", [tx("2026-09-30", "S", "1000.5"), tx("2026-09-30", "F", "50")]),
    // Amends a1: the sale was 1,200 shares, not 1,000.5.
    form4("a2", "4/A", "2026-10-05", "900", [tx("2026-09-30", "S", "1200")], "2026-10-02"),
    form4("b1", "4", "2026-11-01", "901", [tx("2026-10-30", "P", "300"), tx("2026-10-30", "P", "200.25")]),
    form4("c1", "4", "2026-11-10", "902", [tx("2026-11-09", "M", "5000", "derivative"), tx("2026-11-09", "A", "10")]),
    // Outside the window (more than 90 days before 2026-11-23).
    form4("d1", "4", "2026-08-20", "903", [tx("2026-08-19", "P", "999")])
  ]

  it("lets a 4/A supersede the original it amends", () => {
    expect(
      reportsInForce(reports)
        .map((r) => r.accession)
        .sort()
    ).toEqual(["a2", "b1", "c1", "d1"])
  })

  it("counts open-market buys (P) and sales (S) of the trailing 90 days, net shares exact", () => {
    expect(insiderSummary(reports, "2026-11-23")).toEqual({
      openMarketBuys: 2,
      openMarketSales: 1,
      netShares: "-699.75",
      uniqueInsiders: 2,
      from: "2026-08-26",
      through: "2026-11-23"
    })
  })

  it("an amendment without a date of original submission matches on the period of report", () => {
    const r = [
      form4("a1", "4", "2026-10-02", "900", [tx("2026-09-30", "S", "10")]),
      form4("a2", "4/A", "2026-10-05", "900", [tx("2026-09-30", "S", "20")])
    ]
    expect(insiderSummary(r, "2026-10-10").netShares).toBe("-20")
  })
})

const holding = (shares: string, value: string, extra: Partial<Holding> = {}): Holding => ({
  nameOfIssuer: "ALPHA CORP",
  titleOfClass: "COM",
  cusip: "000000AA1",
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

describe("holders", () => {
  const r = (filerCik: string, accession: string, reportPeriod: string, filedAt: string) => ({
    filerCik,
    filerName: `Filer ${filerCik}`,
    accession,
    form: "13F-HR",
    filedAt,
    reportPeriod
  })
  const reports = [
    r("10", "10-q3", "2026-06-30", "2026-08-14"),
    r("10", "10-q4", "2026-09-30", "2026-11-14"),
    r("11", "11-q3", "2026-06-30", "2026-08-10"),
    r("11", "11-q4", "2026-09-30", "2026-11-12"),
    r("12", "12-q2", "2026-03-31", "2026-05-15"),
    r("12", "12-q4", "2026-09-30", "2026-11-13"),
    // 13 amended its Q4 report: the amendment replaces the original.
    r("13", "13-q4", "2026-09-30", "2026-11-01"),
    r("13", "13-q4a", "2026-09-30", "2026-11-20")
  ]
  const holdings = [
    { accession: "10-q3", holding: holding("1000", "100000") },
    { accession: "10-q4", holding: holding("1500", "160000") },
    { accession: "10-q4", holding: holding("500", "53000.50") },
    { accession: "10-q4", holding: holding("99", "1", { putCall: "Put" }) },
    // 11 sold everything in Q4: no longer a holder.
    { accession: "11-q3", holding: holding("700", "70000") },
    { accession: "12-q2", holding: holding("100", "9000") },
    { accession: "12-q4", holding: holding("300", "31000") },
    { accession: "13-q4", holding: holding("50", "5000") },
    { accession: "13-q4a", holding: holding("60", "6000") }
  ]

  it("takes each filer's latest report, sums its rows, and compares with the prior quarter", () => {
    const out = holdersOf(reports, holdings, "10000")
    expect(out.reportPeriod).toBe("2026-09-30")
    expect(out.rows.map((h) => [h.filerCik, h.shares, h.valueUsd, h.pctOfSharesOutstanding, h.changeShares])).toEqual([
      ["10", "2000", "213000.5", 20, "1000"],
      // 12's previous report is two quarters back: no prior quarter to compare with.
      ["12", "300", "31000", 3, null],
      ["13", "60", "6000", 0.6, null]
    ])
  })

  it("has no percentage without a share count", () => {
    expect(holdersOf(reports, holdings, null).rows[0]?.pctOfSharesOutstanding).toBeNull()
  })

  it("normalizes 13F issuer names for matching", () => {
    expect(issuerNameKey("APPLE INC")).toBe(issuerNameKey("Apple Inc."))
    expect(issuerNameKey("ALPHABET INC CL A")).toBe("ALPHABET")
  })
})

describe("fundamentals, growth and valuation", () => {
  const k = (year: number) => ({
    accession: `0000000001-${year}-000010`,
    filed: `${year}-11-01`,
    form: "10-K",
    fy: year,
    fp: "FY"
  })
  const year = (y: number) => ({ start: `${y - 1}-10-01`, end: `${y}-09-30` })
  const annual = (
    y: number,
    revenue: string,
    eps: string,
    ocf: string,
    capex: string,
    opIncome: string,
    da: string
  ) => [
    fact("Revenues", revenue, year(y).start, year(y).end, k(y)),
    fact("EarningsPerShareDiluted", eps, year(y).start, year(y).end, k(y), "USD/shares"),
    fact("NetCashProvidedByUsedInOperatingActivities", ocf, year(y).start, year(y).end, k(y)),
    fact("PaymentsToAcquirePropertyPlantAndEquipment", capex, year(y).start, year(y).end, k(y)),
    fact("OperatingIncomeLoss", opIncome, year(y).start, year(y).end, k(y)),
    fact("DepreciationDepletionAndAmortization", da, year(y).start, year(y).end, k(y))
  ]
  const facts = [
    ...annual(2025, "1000", "2.00", "300", "100", "250", "50"),
    ...annual(2026, "1250", "2.50", "330", "110", "300", "60"),
    fact("CashAndCashEquivalentsAtCarryingValue", "400", null, "2026-09-30", k(2026)),
    fact("LongTermDebtNoncurrent", "600", null, "2026-09-30", k(2026)),
    {
      ...fact("EntityCommonStockSharesOutstanding", "100", null, "2026-10-20", k(2026)),
      taxonomy: "dei",
      unit: "shares"
    }
  ]
  const book = new FactBook(facts)

  it("computes TTM fundamentals exactly", () => {
    const f = fundamentals(book)
    expect([f.revenueTtm.value, f.epsTtm.value, f.freeCashFlowTtm.value]).toEqual(["1250", "2.5", "220"])
  })

  it("computes year-over-year growth of the TTM figures, 4 decimals half even", () => {
    const g = growth(book)
    // (1250 - 1000) / 1000 = 25 %; (2.5 - 2) / 2 = 25 %; (220 - 200) / 200 = 10 %
    expect([g.revenueGrowthYoyPct.value, g.epsGrowthYoyPct.value, g.freeCashFlowGrowthYoyPct.value]).toEqual([
      "25.0000",
      "25.0000",
      "10.0000"
    ])
  })

  it("computes multiples from the price and filed figures", () => {
    const shares = sharesOutstanding(facts)
    expect(shares).toEqual({
      shares: "100",
      concept: "dei:EntityCommonStockSharesOutstanding",
      asOf: "2026-10-20",
      accession: k(2026).accession
    })
    const v = valuation(book, 30.5, shares)
    // P/E 30.5 / 2.5 = 12.2; P/S 3050 / 1250 = 2.44; EV/EBITDA (3050 + 600 - 400) / (300 + 60) = 9.02777...
    expect([v.peTtm.value, v.psTtm.value, v.evEbitdaTtm.value]).toEqual(["12.2000", "2.4400", "9.0278"])
  })

  it("ranks multiples against their history: each day uses the TTM figures filed by then", () => {
    const shares = sharesOutstanding(facts)
    const h = multipleHistory(book, shares, [
      { date: "2025-10-31", close: 40 },
      { date: "2025-11-01", close: 40 },
      { date: "2026-10-31", close: 40 },
      { date: "2026-11-02", close: 45 }
    ])
    // FY2025 EPS 2.00 is known from its 10-K (2025-11-01); FY2026 EPS 2.50 from 2026-11-01.
    expect(h.peTtm).toEqual([Number.NaN, 20, 20, 18])
    // Market cap 40 x 100 over revenue 1000, then 45 x 100 over 1250.
    expect(h.psTtm).toEqual([Number.NaN, 4, 4, 3.6])
    // EV (4500 + 600 - 400) / EBITDA (300 + 60).
    expect(h.evEbitdaTtm[3]).toBeCloseTo(4700 / 360, 12)
    expect(ttmKnownOn(book.ttm(lineItem("revenue"), "2026-09-30")!)).toBe("2026-11-01")
  })

  it("answers null with a reason where a multiple is not meaningful or inputs are missing", () => {
    const losing = new FactBook([
      ...facts,
      fact(
        "EarningsPerShareDiluted",
        "-0.10",
        "2025-10-01",
        "2026-09-30",
        { ...k(2027), filed: "2027-01-01" },
        "USD/shares"
      )
    ])
    const v = valuation(losing, 30.5, sharesOutstanding(facts))
    expect(v.peTtm).toEqual({
      value: null,
      reason: "not_applicable",
      detail: "trailing-twelve-month EPS is -0.1 (not positive)"
    })
    const first = growth(new FactBook(annual(2025, "1000", "2.00", "300", "100", "250", "50")))
    expect(first.revenueGrowthYoyPct.value).toBeNull()
    expect(first.revenueGrowthYoyPct).toMatchObject({ reason: "insufficient_history" })
    expect(valuation(book, null, null).peTtm).toMatchObject({ value: null, reason: "no_data" })
  })
})

describe("US regular session", () => {
  it("opens at 09:30 New York in both daylight saving and standard time", () => {
    expect(new Date(sessionOpenMs("2026-07-01")).toISOString()).toBe("2026-07-01T13:30:00.000Z")
    expect(new Date(sessionOpenMs("2026-12-01")).toISOString()).toBe("2026-12-01T14:30:00.000Z")
  })

  it("is closed at weekends and on exchange holidays; the next open skips them", () => {
    // Thanksgiving 2026 is Thursday 26 November.
    const thanksgivingNoon = Date.UTC(2026, 10, 26, 17)
    expect(isSessionOpen(thanksgivingNoon)).toBe(false)
    expect(new Date(nextSessionOpenMs(thanksgivingNoon)).toISOString()).toBe("2026-11-27T14:30:00.000Z")
    // Saturday: next open Monday.
    expect(new Date(nextSessionOpenMs(Date.UTC(2026, 10, 21, 12))).toISOString()).toBe("2026-11-23T14:30:00.000Z")
    // Good Friday 2026 is 3 April; Independence Day 2026 falls on a Saturday, observed Friday 3 July.
    expect(isSessionOpen(Date.UTC(2026, 3, 3, 15))).toBe(false)
    expect(isSessionOpen(Date.UTC(2026, 6, 3, 15))).toBe(false)
    expect(isSessionOpen(Date.UTC(2026, 6, 2, 15))).toBe(true)
    expect(lastClosedSession(Date.UTC(2026, 10, 23, 15))).toBe("2026-11-20")
    expect(lastClosedSession(Date.UTC(2026, 10, 23, 21, 1))).toBe("2026-11-23")
  })
})

describe("the next moment EDGAR can publish a filing", () => {
  it("is the start of the next minute while EDGAR accepts filings, the same for every request in that minute", async () => {
    const { nextEdgarMomentMs } = await import("../../src/equity/EquityPlane.ts")
    // Monday 2026-11-23, 11:07 UTC = 06:07 New York (EST): EDGAR is open.
    const a = nextEdgarMomentMs(Date.parse("2026-11-23T11:07:03.728Z"))
    const b = nextEdgarMomentMs(Date.parse("2026-11-23T11:07:59.999Z"))
    expect(new Date(a).toISOString()).toBe("2026-11-23T11:08:00.000Z")
    expect(b).toBe(a)
    // Exactly on a minute: the next one, never now.
    expect(new Date(nextEdgarMomentMs(Date.parse("2026-11-23T11:08:00.000Z"))).toISOString()).toBe(
      "2026-11-23T11:09:00.000Z"
    )
  })

  it("is the next opening (06:00 New York on a business day) outside acceptance hours", async () => {
    const { nextEdgarMomentMs } = await import("../../src/equity/EquityPlane.ts")
    // Monday 10:59 UTC = 05:59 New York: opens at 06:00.
    expect(new Date(nextEdgarMomentMs(Date.parse("2026-11-23T10:59:00.000Z"))).toISOString()).toBe(
      "2026-11-23T11:00:00.000Z"
    )
    // Saturday: Monday's opening.
    expect(new Date(nextEdgarMomentMs(Date.parse("2026-11-28T15:00:00.000Z"))).toISOString()).toBe(
      "2026-11-30T11:00:00.000Z"
    )
    // 21:59:30 New York: the close at 22:00, not a minute past it.
    expect(new Date(nextEdgarMomentMs(Date.parse("2026-11-24T02:59:30.000Z"))).toISOString()).toBe(
      "2026-11-24T03:00:00.000Z"
    )
  })
})
