/**
 * A small hand-made equity universe for the plane tests: Alpha Corp (calendar fiscal year, quarters 2024 to Q3
 * 2026, filings, insider reports, 13F holders, daily bars to Friday 2026-11-20) and Beta Inc (filings only).
 * Figures are chosen so that the expected answers can be worked out by hand (see the tests).
 */
import { Effect } from "effect"
import { type DailyBar, EquityStore } from "../../src/equity/EquityStore.ts"
import { isTradingDay, sessionOpenMs } from "../../src/equity/MarketHours.ts"
import type { Company, Fact, Filing, Holding, HoldingsReport, OwnershipReport } from "../../src/equity/Model.ts"
import { dateOf, dayOf } from "../../src/equity/Statements.ts"

export const ALPHA = "eq:1001:ALPH"
export const BETA = "eq:1002:BETA"
/** Monday 2026-11-23, 15:00 UTC: the regular session is open (it opened 14:30 UTC). */
export const NOW = Date.UTC(2026, 10, 23, 15, 0)

const M = (x: number) => String(Math.round(x * 1_000_000))

const alpha: Company = {
  cik: "1001",
  name: "Alpha Corp",
  tickers: ["ALPH"],
  exchanges: ["Nasdaq"],
  sic: "3571",
  sicDescription: "Electronic Computers",
  fiscalYearEnd: "1231",
  formerNames: ["Alpha Computer Inc"]
}

const beta: Company = {
  cik: "1002",
  name: "Beta Inc",
  tickers: ["BETA"],
  exchanges: ["NYSE"],
  sic: "6022",
  sicDescription: "State Commercial Banks",
  fiscalYearEnd: "1231",
  formerNames: []
}

const QUARTER_ENDS = ["03-31", "06-30", "09-30", "12-31"]
const QUARTER_STARTS = ["01-01", "04-01", "07-01", "10-01"]

/** Quarterly figures per year (Q1..Q4; 2026 has three). */
const revenue: Record<number, ReadonlyArray<number>> = {
  2024: [100, 110, 120, 130],
  2025: [120, 130, 140, 150],
  2026: [150, 160, 170]
}
const eps: Record<number, ReadonlyArray<string>> = {
  2024: ["1.00", "1.10", "1.20", "1.30"],
  2025: ["1.20", "1.30", "1.40", "1.50"],
  2026: ["1.50", "1.60", "1.70"]
}
const ocf: Record<number, ReadonlyArray<number>> = {
  2024: [30, 35, 40, 45],
  2025: [40, 45, 50, 55],
  2026: [50, 55, 60]
}
const opIncome: Record<number, ReadonlyArray<number>> = {
  2024: [20, 22, 24, 26],
  2025: [25, 27, 29, 31],
  2026: [30, 32, 34]
}

const filedOf = (year: number, q: number) => (q === 3 ? `${year + 1}-02-10` : `${year}-${["04", "07", "10"][q]}-28`)
const accessionOf = (year: number, q: number) => `0001001-${String(year).slice(2)}-00000${q + 1}`

const alphaFacts = (): Array<Fact> => {
  const out: Array<Fact> = []
  for (const year of [2024, 2025, 2026]) {
    const quarters = revenue[year] as ReadonlyArray<number>
    for (let q = 0; q < quarters.length; q++) {
      const accession = accessionOf(year, q)
      const filed = filedOf(year, q)
      const form = q === 3 ? "10-K" : "10-Q"
      const fp = q === 3 ? "FY" : `Q${q + 1}`
      const end = `${year}-${QUARTER_ENDS[q]}`
      const qStart = `${year}-${QUARTER_STARTS[q]}`
      const yStart = `${year}-01-01`
      const f = (concept: string, value: string, start: string | null, unit = "USD"): Fact => ({
        taxonomy: "us-gaap",
        concept,
        unit,
        value,
        start,
        end,
        fy: year,
        fp,
        form,
        accession,
        filed,
        frame: null
      })
      const upTo = (xs: ReadonlyArray<number>) => xs.slice(0, q + 1).reduce((s, x) => s + x, 0)
      // Income: the quarter (not in the 10-K: Q4 is derived) and the year to date.
      if (q < 3) {
        out.push(f("Revenues", M(quarters[q] as number), qStart))
        out.push(f("OperatingIncomeLoss", M((opIncome[year] as ReadonlyArray<number>)[q] as number), qStart))
        out.push(f("EarningsPerShareDiluted", (eps[year] as ReadonlyArray<string>)[q] as string, qStart, "USD/shares"))
      }
      out.push(f("Revenues", M(upTo(quarters)), yStart))
      out.push(f("OperatingIncomeLoss", M(upTo(opIncome[year] as ReadonlyArray<number>)), yStart))
      const epsYtd = (eps[year] as ReadonlyArray<string>)
        .slice(0, q + 1)
        .reduce((s, x) => s + Math.round(Number(x) * 100), 0)
      out.push(f("EarningsPerShareDiluted", (epsYtd / 100).toFixed(2), yStart, "USD/shares"))
      // Cash flow: year to date only, as 10-Qs file it.
      out.push(f("NetCashProvidedByUsedInOperatingActivities", M(upTo(ocf[year] as ReadonlyArray<number>)), yStart))
      out.push(f("PaymentsToAcquirePropertyPlantAndEquipment", M(10 * (q + 1)), yStart))
      out.push(f("DepreciationDepletionAndAmortization", M(5 * (q + 1)), yStart))
      out.push(f("CommonStockDividendsPerShareDeclared", "0.25", qStart, "USD/shares"))
      // Balance at the period end.
      out.push(f("CashAndCashEquivalentsAtCarryingValue", M(200), null))
      out.push(f("LongTermDebtNoncurrent", M(300), null))
      out.push(f("Assets", M(2000 + 10 * q), null))
    }
  }
  // The 2025 10-K restates Q3 2025 revenue... no: it restates FY2024 revenue (460 -> 461) as a comparative.
  out.push({
    taxonomy: "us-gaap",
    concept: "Revenues",
    unit: "USD",
    value: M(461),
    start: "2024-01-01",
    end: "2024-12-31",
    fy: 2025,
    fp: "FY",
    form: "10-K",
    accession: accessionOf(2025, 3),
    filed: filedOf(2025, 3),
    frame: "CY2024"
  })
  out.push({
    taxonomy: "dei",
    concept: "EntityCommonStockSharesOutstanding",
    unit: "shares",
    value: M(100),
    start: null,
    end: "2026-10-20",
    fy: 2026,
    fp: "Q3",
    form: "10-Q",
    accession: accessionOf(2026, 2),
    filed: filedOf(2026, 2),
    frame: null
  })
  out.push({
    taxonomy: "us-gaap",
    concept: "StockholdersEquityNoteStockSplitConversionRatio1",
    unit: "pure",
    value: "2",
    start: null,
    end: "2025-06-15",
    fy: 2025,
    fp: "Q2",
    form: "10-Q",
    accession: accessionOf(2025, 1),
    filed: filedOf(2025, 1),
    frame: null
  })
  return out
}

const filing = (accession: string, form: string, acceptedAt: string, reportDate: string | null = null): Filing => ({
  accession,
  form,
  filedAt: acceptedAt.slice(0, 10),
  acceptedAt,
  reportDate,
  primaryDocument: "doc.htm",
  primaryDocDescription: form,
  items: form === "8-K" ? "2.02,9.01" : null,
  isXbrl: form.startsWith("10-"),
  url: `https://www.sec.gov/Archives/edgar/data/1001/${accession.replace(/-/g, "")}/doc.htm`
})

const alphaFilings = (): Array<Filing> => {
  const out: Array<Filing> = []
  for (const year of [2024, 2025, 2026]) {
    const n = (revenue[year] as ReadonlyArray<number>).length
    for (let q = 0; q < n; q++) {
      out.push(
        filing(
          accessionOf(year, q),
          q === 3 ? "10-K" : "10-Q",
          `${filedOf(year, q)}T21:05:00.000Z`,
          `${year}-${QUARTER_ENDS[q]}`
        )
      )
    }
  }
  out.push(filing("0001001-26-000010", "8-K", "2026-10-28T20:30:00.000Z"))
  out.push(filing("0000900-26-000001", "4", "2026-10-02T22:00:00.000Z"))
  out.push(filing("0000900-26-000002", "4/A", "2026-10-06T12:00:00.000Z"))
  out.push(filing("0000901-26-000001", "4", "2026-11-03T21:00:00.000Z"))
  return out
}

const owner = (cik: string, name: string) => ({
  cik,
  name,
  isDirector: cik === "901",
  isOfficer: cik === "900",
  officerTitle: cik === "900" ? "Chief Financial Officer" : null,
  isTenPercentOwner: false,
  isOther: false
})

const trade = (date: string, code: string, shares: string, price: string | null) => ({
  table: "non_derivative" as const,
  securityTitle: "Common Stock",
  transactionDate: date,
  code,
  acquiredDisposed: (code === "S" ? "D" : "A") as "A" | "D",
  shares,
  pricePerShare: price,
  sharesOwnedAfter: "50000",
  directIndirect: "D" as const,
  exercisePrice: null,
  underlyingShares: null,
  footnotes: []
})

const report = (
  accession: string,
  form: string,
  filedAt: string,
  who: ReturnType<typeof owner>,
  transactions: OwnershipReport["transactions"],
  original: string | null
): OwnershipReport => ({
  form,
  accession,
  filedAt,
  periodOfReport: transactions[0]?.transactionDate ?? filedAt,
  issuerCik: "1001",
  issuerName: "Alpha Corp",
  issuerTicker: "ALPH",
  owners: [who],
  transactions,
  dateOfOriginalSubmission: original
})

const alphaOwnership = (): Array<OwnershipReport> => [
  report(
    "0000900-26-000001",
    "4",
    "2026-10-02",
    owner("900", "Doe Jane"),
    [trade("2026-09-30", "S", "4000", "120.50")],
    null
  ),
  // The amendment corrects the sale to 3,500 shares.
  report(
    "0000900-26-000002",
    "4/A",
    "2026-10-06",
    owner("900", "Doe Jane"),
    [trade("2026-09-30", "S", "3500", "120.50")],
    "2026-10-02"
  ),
  report(
    "0000901-26-000001",
    "4",
    "2026-11-03",
    owner("901", "Roe Richard"),
    [trade("2026-11-02", "P", "1000", "118.25"), trade("2026-11-02", "A", "200", null)],
    null
  )
]

const holding = (shares: string, value: string): Holding => ({
  nameOfIssuer: "ALPHA CORP",
  titleOfClass: "COM",
  cusip: "00100A101",
  valueUsd: value,
  shares,
  sharesType: "SH",
  putCall: null,
  investmentDiscretion: "SOLE",
  votingSole: shares,
  votingShared: "0",
  votingNone: "0"
})

const thirteenF = (
  filerCik: string,
  period: string,
  filedAt: string,
  holdings: ReadonlyArray<Holding>
): HoldingsReport => ({
  filerCik,
  filerName: `Fund ${filerCik}`,
  accession: `000${filerCik}-${period.slice(2, 4)}-0000${period.slice(5, 7)}`,
  form: "13F-HR",
  filedAt,
  reportPeriod: period,
  holdings
})

const alphaHoldings = (): Array<HoldingsReport> => [
  thirteenF("5001", "2026-06-30", "2026-08-14", [holding("2000000", "240000000")]),
  thirteenF("5001", "2026-09-30", "2026-11-13", [holding("2500000", "300000000")]),
  thirteenF("5002", "2026-06-30", "2026-08-12", [holding("1500000", "180000000")]),
  thirteenF("5002", "2026-09-30", "2026-11-10", [holding("1000000", "120000000")]),
  thirteenF("5003", "2026-09-30", "2026-11-12", [holding("3000000", "360000000")])
]

/** Trading days from 2025-01-02 to 2026-11-20 with a smooth deterministic path. */
export const alphaBars = (): Array<DailyBar> => {
  const out: Array<DailyBar> = []
  let i = 0
  for (let d = dayOf("2025-01-02"); d <= dayOf("2026-11-20"); d++) {
    if (!isTradingDay(d)) continue
    const c = Math.round((100 + 10 * Math.sin(i / 9) + i * 0.04) * 100) / 100
    out.push({ tMs: sessionOpenMs(dateOf(d)), o: c - 0.5, h: c + 1.25, l: c - 1.5, c, v: 1_000_000 + (i % 7) * 10_000 })
    i++
  }
  return out
}

const betaFacts = (): Array<Fact> =>
  [2025].flatMap((year) => [
    {
      taxonomy: "us-gaap",
      concept: "Revenues",
      unit: "USD",
      value: M(80),
      start: `${year}-01-01`,
      end: `${year}-12-31`,
      fy: year,
      fp: "FY",
      form: "10-K",
      accession: "0001002-26-000001",
      filed: "2026-02-20",
      frame: null
    }
  ])

/** Writes the universe into the store. */
export const seedEquity = Effect.gen(function* () {
  const store = yield* EquityStore
  yield* store.putCompany(alpha)
  yield* store.putCompany(beta)
  yield* store.putFacts("1001", alphaFacts())
  yield* store.putFilings("1001", alphaFilings())
  yield* store.putOwnershipReports(alphaOwnership())
  yield* store.putSecurities("1001", ["00100A101"])
  yield* store.putHoldingsReports(alphaHoldings())
  yield* store.putBars("1001", "ALPH", alphaBars())
  yield* store.putFacts("1002", betaFacts())
  yield* store.putFilings("1002", [
    { ...filing("0001002-26-000001", "10-K", "2026-02-20T21:00:00.000Z", "2025-12-31"), url: "https://www.sec.gov/x" }
  ])
})
