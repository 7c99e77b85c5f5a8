/**
 * The simulated equity plane: a handful of fictional listed companies (`SimulatedCompanies`, CIKs 9990001..,
 * outside anything EDGAR has assigned) whose filings are generated as text in the SEC's own formats and then read
 * by the same parsers that read EDGAR, so the simulated plane exercises the real parsing path end to end.
 *
 * Deterministic: the same seed and `asOf` give byte-identical documents and equal parsed records.
 *
 * What it covers, from the first fiscal year (`asOf`'s year minus 5) to `asOf`:
 * - companyfacts: 10-Q facts for Q1..Q3 and 10-K facts for fiscal years (Q4 exists only inside FY), revenue,
 *   cost of revenue, gross profit, operating income, interest, income tax, net income, basic and diluted EPS,
 *   diluted shares, D&A, operating cash flow, capex, dividends paid, dividends declared per share, assets,
 *   liabilities, equity, cash, long-term debt, dei shares outstanding; one company restates a fiscal year, one
 *   splits its stock 3-for-1 (see `Books.ts` for how each event is recorded), one is loss-making, one has a
 *   September fiscal year end, and the two revenue concepts filers use both occur;
 * - submissions: every filing (10-K, 10-Q, 8-K with items, DEF 14A, Form 4, 4/A), the newest in
 *   `filings.recent` and the rest on an older page, acceptance times in EDGAR's New York clock;
 * - Form 4 / 4/A ownership documents, 13F-HR primary documents and information tables (in thousands of dollars
 *   before 2023-01-03, dollars after), and both ticker lists;
 * - daily bars per company (split-adjusted, weekdays), the price side of price, technicals and series.
 */

import { Result } from "effect"
import { parseCompanyFacts } from "../../sec/CompanyFacts.ts"
import type { Company, Fact, HoldingsReport, OwnershipReport, Submissions, TickerEntry } from "../../sec/EquityModel.ts"
import { parseOwnershipDocument } from "../../sec/Form4.ts"
import { parseSubmissions, parseSubmissionsPage } from "../../sec/Submissions.ts"
import { parseThirteenF } from "../../sec/ThirteenF.ts"
import { parseCompanyTickersExchange } from "../../sec/Tickers.ts"
import { AccessionCounter, companyBooks, type PlannedFiling } from "./Books.ts"
import { addDays } from "./Calendar.ts"
import { type CompanyProfile, SimulatedCompanies, SimulatedManagers } from "./Companies.ts"
import {
  renderCompanyFacts,
  renderCompanyTickers,
  renderCompanyTickersExchange,
  renderSubmissions
} from "./Documents.ts"
import { generatedManagers, generatedProfiles } from "./Generated.ts"
import { insiderDocuments, type OwnershipDocumentText } from "./Insiders.ts"
import { type ThirteenFTexts, thirteenFDocuments } from "./Institutions.ts"
import { classPrices, generatePrices, type SimulatedDailyBar } from "./Prices.ts"

/**
 * The generator's version: bump it whenever the same seed, day and company count would generate anything
 * different, so a database holding the old output is rewritten at the next start. A test pins the digest of a
 * small simulation to this number (`adapters/sources/test/SimulatedEquityUniverse.test.ts`).
 */
export const SimulatedEquityVersion = 3

/** The `asOf` used when none is given: the simulated history ends on this day. */
export const SimulatedEquityDefaultAsOf = "2026-11-20"

/** The generated documents, exactly as the parsers read them. */
export interface SimulatedEquityDocuments {
  /** companyfacts JSON by CIK. */
  readonly companyFacts: ReadonlyMap<string, string>
  /** submissions JSON by CIK, with its older pages (`filings.files`) by name. */
  readonly submissions: ReadonlyMap<
    string,
    { readonly main: string; readonly pages: ReadonlyArray<{ readonly name: string; readonly text: string }> }
  >
  /** Form 4 / 4/A documents with the accession and filing date EDGAR's index gives them. */
  readonly ownershipDocuments: ReadonlyArray<OwnershipDocumentText>
  /** 13F-HR filings: primary document and information table. */
  readonly thirteenF: ReadonlyArray<ThirteenFTexts>
  readonly companyTickers: string
  readonly companyTickersExchange: string
}

export interface SimulatedEquity {
  readonly seed: number
  readonly asOf: string
  readonly profiles: ReadonlyArray<CompanyProfile>
  readonly companies: ReadonlyArray<Company>
  /** Every fact of each company, by CIK. */
  readonly factsByCik: ReadonlyMap<string, ReadonlyArray<Fact>>
  /** Each company's submissions with the older page's filings appended to `filings` (feed order throughout). */
  readonly submissions: ReadonlyMap<string, Submissions>
  /** Every Form 4 and 4/A, originals and amendments alike (apply `supersedeAmendments` to net them). */
  readonly ownershipReports: ReadonlyArray<OwnershipReport>
  readonly holdingsReports: ReadonlyArray<HoldingsReport>
  /** From `company_tickers_exchange.json`. */
  readonly tickers: ReadonlyArray<TickerEntry>
  /** CUSIPs of each company's common stock, by CIK (ties 13F rows to companies). */
  readonly securities: ReadonlyMap<string, ReadonlyArray<string>>
  /** The 13F filers of this simulation (CIK and name). */
  readonly managers: ReadonlyArray<{ readonly cik: string; readonly name: string }>
  /**
   * Daily bars of each company's common stock (its first ticker) by CIK, split-adjusted, oldest first; `tMs` is
   * 09:30 New York time of the session.
   */
  readonly dailyBars: ReadonlyMap<string, ReadonlyArray<SimulatedDailyBar>>
  /** Daily bars of each further share class (`otherClasses`), by CIK then ticker: a series of its own. */
  readonly classBars: ReadonlyMap<string, ReadonlyMap<string, ReadonlyArray<SimulatedDailyBar>>>
  /** The events planted in the data, for tests of what is built on it. */
  readonly planted: {
    readonly restatements: ReadonlyArray<{
      readonly cik: string
      readonly fiscalYear: number
      readonly restatedBy: string
    }>
    readonly splits: ReadonlyArray<{ readonly cik: string; readonly date: string; readonly ratio: number }>
    readonly amendments: ReadonlyArray<{
      readonly cik: string
      readonly accession: string
      readonly dateOfOriginalSubmission: string
    }>
  }
  readonly documents: SimulatedEquityDocuments
}

/** New accession numbers for a company's filings, sequenced per year in arrival order (old -> new). */
const inArrivalOrder = (cik: string, filings: ReadonlyArray<PlannedFiling>): ReadonlyMap<string, string> => {
  const counter = new AccessionCounter()
  const arrival = [...filings].sort((a, b) =>
    a.filingDate !== b.filingDate
      ? a.filingDate < b.filingDate
        ? -1
        : 1
      : a.acceptanceDateTime !== b.acceptanceDateTime
        ? a.acceptanceDateTime < b.acceptanceDateTime
          ? -1
          : 1
        : a.accession < b.accession
          ? -1
          : 1
  )
  return new Map(arrival.map((filing) => [filing.accession, counter.take(cik, filing.filingDate)]))
}

/** Our own generated text must parse: a failure here is a bug in the generator, reported as a defect. */
const mustParse = <A>(what: string, result: Result.Result<A, { readonly message: string }>): A => {
  if (Result.isFailure(result))
    throw new Error(`simulated equity: generated ${what} does not parse: ${result.failure.message}`)
  return result.success
}

/**
 * Generates the simulated companies' filings as SEC-format text and parses them with the SEC parsers.
 * `asOf` (`YYYY-MM-DD`, default `SimulatedEquityDefaultAsOf`) is the last day of the history. `onProgress` is
 * called after each company generated and after each company parsed (this runs for seconds without yielding:
 * a start reports its progress from here).
 */
export const simulatedEquity = (
  seed: number,
  options: {
    readonly asOf?: string
    readonly generated?: number
    readonly onProgress?: (
      step: "generating" | "parsing" | "parsing Form 4s" | "parsing 13Fs",
      done: number,
      total: number
    ) => void
  } = {}
): SimulatedEquity => {
  const onProgress = options.onProgress ?? (() => undefined)
  const asOf = options.asOf ?? SimulatedEquityDefaultAsOf
  if (!/^\d{4}-\d{2}-\d{2}$/.test(asOf)) throw new Error(`simulated equity: asOf must be YYYY-MM-DD, got ${asOf}`)
  const profiles = [...SimulatedCompanies, ...generatedProfiles(options.generated ?? 0)]
  const handMadeCount = SimulatedCompanies.length
  const firstFiscalYear = Number(asOf.slice(0, 4)) - 5
  const accessions = new AccessionCounter()
  const companyFacts = new Map<string, string>()
  const submissionTexts = new Map<string, { main: string; pages: ReadonlyArray<{ name: string; text: string }> }>()
  const ownershipDocuments: Array<OwnershipDocumentText> = []
  const pricedCompanies: Array<Parameters<typeof thirteenFDocuments>[0]["companies"][number]> = []
  const generatedHoldings: Array<Parameters<typeof thirteenFDocuments>[0]["companies"][number]> = []
  const dailyBars = new Map<string, ReadonlyArray<SimulatedDailyBar>>()
  const classBars = new Map<string, ReadonlyMap<string, ReadonlyArray<SimulatedDailyBar>>>()
  const restatements: Array<{ cik: string; fiscalYear: number; restatedBy: string }> = []
  const splits: Array<{ cik: string; date: string; ratio: number }> = []

  profiles.forEach((profile, index) => {
    const firstYear = Number(asOf.slice(0, 4)) - (profile.historyYears ?? 5)
    const books = companyBooks({ seed, profile, firstFiscalYear: firstYear, asOf, accessions })
    const opening = books.quarters.filter((q) => q.fiscalYear === firstYear - 1)
    const netIncome = opening.reduce((sum, q) => sum + q.netIncome, 0)
    const revenue = opening.reduce((sum, q) => sum + q.revenue, 0)
    const shares = opening[3]!.sharesOutstanding
    const startPrice = (profile.startMultiple * (netIncome > 0 ? netIncome : revenue)) / shares
    const prices = generatePrices({
      seed,
      profile,
      // A generated company's walk covers what its bars, Form 4s and 13F rows need; a company without a price
      // feed still trades (its insiders and holders need prices), its bars are just not published.
      from: profile.priceDays === undefined ? `${firstYear}-01-01` : addDays(asOf, -Math.max(profile.priceDays, 400)),
      to: asOf,
      startPrice,
      shares,
      split: books.split
    })
    if (profile.priceDays !== 0) {
      const from =
        profile.priceDays === undefined ? undefined : Date.parse(`${addDays(asOf, -profile.priceDays)}T00:00:00Z`)
      const primary = from === undefined ? prices.bars : prices.bars.filter((bar) => bar.tMs >= from)
      dailyBars.set(profile.cik, primary)
      const classes = profile.otherClasses ?? []
      if (classes.length > 0) {
        classBars.set(
          profile.cik,
          new Map(classes.map((c) => [c.ticker, classPrices({ seed, cik: profile.cik, ticker: c.ticker, primary })]))
        )
      }
    }
    const insiders = insiderDocuments({
      seed,
      profile,
      companyIndex: index,
      from: addDays(asOf, -(profile.insiderDays ?? 730)),
      asOf,
      prices,
      split: books.split,
      releaseDays: books.filings
        .filter((f) => f.items === "2.02,9.01")
        .map((f) => f.filingDate)
        .sort(),
      accessions
    })
    // Periodic reports and Form 4s were numbered as they were generated; EDGAR numbers a filer's submissions in
    // the order they arrive, so renumber them by filing date and acceptance time.
    const renumbered = inArrivalOrder(profile.cik, [...books.filings, ...insiders.filings])
    const accession = (old: string) => renumbered.get(old)!
    ownershipDocuments.push(
      ...insiders.documents.map((document) => ({ ...document, accession: accession(document.accession) }))
    )
    companyFacts.set(
      profile.cik,
      renderCompanyFacts({ ...books, facts: books.facts.map((fact) => ({ ...fact, accn: accession(fact.accn) })) })
    )
    submissionTexts.set(
      profile.cik,
      renderSubmissions(
        profile,
        [...books.filings, ...insiders.filings].map((filing) => ({ ...filing, accession: accession(filing.accession) }))
      )
    )
    ;(index < handMadeCount ? pricedCompanies : generatedHoldings).push({ profile, prices, split: books.split, shares })
    if (books.restatement !== null) {
      restatements.push({ cik: profile.cik, ...books.restatement, restatedBy: accession(books.restatement.restatedBy) })
    }
    if (books.split !== null) splits.push({ cik: profile.cik, ...books.split })
    onProgress("generating", index + 1, profiles.length)
  })
  const thirteenF = [
    ...thirteenFDocuments({
      seed,
      companies: pricedCompanies,
      from: `${firstFiscalYear}-01-01`,
      asOf,
      accessions
    }),
    ...(generatedHoldings.length === 0
      ? []
      : thirteenFDocuments({
          seed,
          companies: generatedHoldings,
          from: addDays(asOf, -400),
          asOf,
          accessions,
          managers: generatedManagers
        }))
  ]
  const companyTickers = renderCompanyTickers(profiles)
  const companyTickersExchange = renderCompanyTickersExchange(profiles)

  // Everything below reads the generated text with the SEC parsers, as if EDGAR had served it.
  const submissions = new Map<string, Submissions>()
  const factsByCik = new Map<string, ReadonlyArray<Fact>>()
  for (const profile of profiles) {
    const texts = submissionTexts.get(profile.cik)!
    const parsed = mustParse(`submissions of ${profile.cik}`, parseSubmissions(texts.main))
    const older = texts.pages.flatMap((page) => mustParse(page.name, parseSubmissionsPage(page.text, profile.cik)))
    submissions.set(profile.cik, { ...parsed, filings: [...parsed.filings, ...older] })
    factsByCik.set(
      profile.cik,
      mustParse(`companyfacts of ${profile.cik}`, parseCompanyFacts(companyFacts.get(profile.cik)!)).facts
    )
    onProgress("parsing", factsByCik.size, profiles.length)
  }
  const ownershipReports = ownershipDocuments.map((document, i) => {
    const report = mustParse(`Form 4 ${document.accession}`, parseOwnershipDocument(document.text, document))
    if (i % 100 === 99) onProgress("parsing Form 4s", i + 1, ownershipDocuments.length)
    return report
  })
  const holdingsReports = thirteenF.map((filing, i) => {
    const report = mustParse(
      `13F ${filing.accession}`,
      parseThirteenF({
        primaryDocument: filing.primaryDocument,
        informationTable: filing.informationTable,
        accession: filing.accession,
        filedAt: filing.filedAt
      })
    )
    onProgress("parsing 13Fs", i + 1, thirteenF.length)
    return report
  })
  return {
    seed,
    asOf,
    profiles,
    companies: profiles.map((profile) => submissions.get(profile.cik)!.company),
    factsByCik,
    submissions,
    ownershipReports,
    holdingsReports,
    tickers: mustParse("company_tickers_exchange.json", parseCompanyTickersExchange(companyTickersExchange)),
    securities: new Map(
      profiles.map((profile) => [profile.cik, [profile.cusip, ...(profile.otherClasses ?? []).map((c) => c.cusip)]])
    ),
    managers: [...SimulatedManagers, ...(generatedHoldings.length === 0 ? [] : generatedManagers)].map((m) => ({
      cik: m.cik,
      name: m.name
    })),
    dailyBars,
    classBars,
    planted: {
      restatements,
      splits,
      amendments: ownershipReports
        .filter((report) => report.form === "4/A")
        .map((report) => ({
          cik: report.issuerCik,
          accession: report.accession,
          dateOfOriginalSubmission: report.dateOfOriginalSubmission!
        }))
    },
    documents: {
      companyFacts,
      submissions: submissionTexts,
      ownershipDocuments,
      thirteenF,
      companyTickers,
      companyTickersExchange
    }
  }
}

/** Every daily series of a simulation by CIK, then ticker: the common stock's under the first ticker, each class's. */
export const simulatedBarsByTicker = (
  sim: Pick<SimulatedEquity, "companies" | "dailyBars" | "classBars">
): ReadonlyMap<string, ReadonlyMap<string, ReadonlyArray<SimulatedDailyBar>>> => {
  const out = new Map<string, Map<string, ReadonlyArray<SimulatedDailyBar>>>()
  for (const company of sim.companies) {
    const primary = sim.dailyBars.get(company.cik)
    const ticker = company.tickers[0]
    if (primary === undefined || ticker === undefined) continue
    const series = new Map<string, ReadonlyArray<SimulatedDailyBar>>([[ticker, primary]])
    for (const [classTicker, bars] of sim.classBars.get(company.cik) ?? []) series.set(classTicker, bars)
    out.set(company.cik, series)
  }
  return out
}
