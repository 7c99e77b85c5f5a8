/**
 * 13F-HR filings of the simulated institutional managers: each quarter end, every manager reports its positions
 * in the simulated companies (and one security outside them), 44 days later. Values follow the rule the real
 * parser applies: reports filed before 2023-01-03 state thousands of dollars, later ones whole dollars (SEC
 * Release No. 34-95148). The primary document's totals are the exact sums of the table as filed.
 */
import { Decimal } from "decimal.js"
import { thirteenFValueMultiplier } from "../../sec/ThirteenF.ts"
import type { AccessionCounter } from "./Books.ts"
import { addDays, monthEnd, onOrAfterWeekday } from "./Calendar.ts"
import { type CompanyProfile, cusipCheckDigit, SimulatedManagers } from "./Companies.ts"
import type { PriceHistory } from "./Prices.ts"
import { stream } from "./Seeded.ts"

export interface ThirteenFTexts {
  readonly accession: string
  readonly filedAt: string
  readonly filerCik: string
  readonly primaryDocument: string
  readonly informationTable: string
}

interface Row {
  readonly name: string
  readonly title: string
  readonly cusip: string
  readonly value: string
  readonly shares: number
  readonly putCall: "Put" | "Call" | null
  readonly discretion: "SOLE" | "DFND"
}

const escapeXml = (text: string): string =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")

/** `YYYY-MM-DD` as 13F documents write dates: `MM-DD-YYYY`. */
const usDate = (date: string): string => `${date.slice(5, 7)}-${date.slice(8, 10)}-${date.slice(0, 4)}`

const renderTable = (rows: ReadonlyArray<Row>): string =>
  `\n<?xml version="1.0" encoding="UTF-8"?>
<ns1:informationTable xmlns:ns1="http://www.sec.gov/edgar/document/thirteenf/informationtable" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">${rows
    .map(
      (row) => `
  <ns1:infoTable>
    <ns1:nameOfIssuer>${escapeXml(row.name)}</ns1:nameOfIssuer>
    <ns1:titleOfClass>${escapeXml(row.title)}</ns1:titleOfClass>
    <ns1:cusip>${row.cusip}</ns1:cusip>
    <ns1:value>${row.value}</ns1:value>
    <ns1:shrsOrPrnAmt>
      <ns1:sshPrnamt>${row.shares}</ns1:sshPrnamt>
      <ns1:sshPrnamtType>SH</ns1:sshPrnamtType>
    </ns1:shrsOrPrnAmt>${row.putCall === null ? "" : `\n    <ns1:putCall>${row.putCall}</ns1:putCall>`}
    <ns1:investmentDiscretion>${row.discretion}</ns1:investmentDiscretion>
    <ns1:votingAuthority>
      <ns1:Sole>${row.discretion === "SOLE" ? row.shares : 0}</ns1:Sole>
      <ns1:Shared>${row.discretion === "DFND" ? row.shares : 0}</ns1:Shared>
      <ns1:None>0</ns1:None>
    </ns1:votingAuthority>
  </ns1:infoTable>`
    )
    .join("")}
</ns1:informationTable>
`

const renderPrimary = (input: {
  readonly cik: string
  readonly name: string
  readonly period: string
  readonly entries: number
  readonly total: string
  readonly signed: string
}): string => `<?xml version="1.0" encoding="UTF-8"?>
<edgarSubmission xmlns="http://www.sec.gov/edgar/thirteenffiler" xmlns:com="http://www.sec.gov/edgar/common">
  <headerData>
    <submissionType>13F-HR</submissionType>
    <filerInfo>
      <liveTestFlag>LIVE</liveTestFlag>
      <filer>
        <credentials>
          <cik>${input.cik.padStart(10, "0")}</cik>
          <ccc>XXXXXXXX</ccc>
        </credentials>
      </filer>
      <periodOfReport>${usDate(input.period)}</periodOfReport>
    </filerInfo>
  </headerData>
  <formData>
    <coverPage>
      <reportCalendarOrQuarter>${usDate(input.period)}</reportCalendarOrQuarter>
      <isAmendment>false</isAmendment>
      <filingManager>
        <name>${escapeXml(input.name)}</name>
        <address>
          <com:street1>100 Simulated Plaza</com:street1>
          <com:city>NEW YORK</com:city>
          <com:stateOrCountry>NY</com:stateOrCountry>
          <com:zipCode>10001</com:zipCode>
        </address>
      </filingManager>
      <reportType>13F HOLDINGS REPORT</reportType>
      <form13FFileNumber>028-9${input.cik.slice(-4)}</form13FFileNumber>
      <provideInfoForInstruction5>N</provideInfoForInstruction5>
    </coverPage>
    <signatureBlock>
      <name>Compliance Officer</name>
      <title>Chief Compliance Officer</title>
      <phone>212-555-0100</phone>
      <signature>/s/ Compliance Officer</signature>
      <city>NEW YORK</city>
      <stateOrCountry>NY</stateOrCountry>
      <signatureDate>${usDate(input.signed)}</signatureDate>
    </signatureBlock>
    <summaryPage>
      <otherIncludedManagersCount>0</otherIncludedManagersCount>
      <tableEntryTotal>${input.entries}</tableEntryTotal>
      <tableValueTotal>${input.total}</tableValueTotal>
    </summaryPage>
  </formData>
</edgarSubmission>
`

/** A security outside the simulated companies, so that not every 13F row ties to a covered company. */
const outsideSecurity = {
  name: "SIMULATED TREASURY BOND FUND",
  title: "ETF",
  cusip: `99Z99910${cusipCheckDigit("99Z99910")}`,
  price: 48.5
}

/** `count` of the companies (all when there are fewer), a seeded choice kept in the companies' order. */
const drawHoldings = <A>(companies: ReadonlyArray<A>, count: number, random: ReturnType<typeof stream>): Array<A> => {
  const order = companies.map((company, i) => ({ company, i, key: random.next() }))
  const chosen = [...order].sort((a, b) => a.key - b.key).slice(0, count)
  return chosen.sort((a, b) => a.i - b.i).map((c) => c.company)
}

/** Writes every manager's 13F-HR filings for the quarters ending from `from` whose filing date is by `asOf`. */
export const thirteenFDocuments = (input: {
  readonly seed: number
  readonly companies: ReadonlyArray<{
    readonly profile: CompanyProfile
    readonly prices: PriceHistory
    readonly split: { readonly date: string; readonly ratio: number } | null
    /** Shares outstanding (pre-split units) around `from`. */
    readonly shares: number
  }>
  readonly from: string
  readonly asOf: string
  readonly accessions: AccessionCounter
  /**
   * The filers: by default the hand-made managers (each holding three companies in four, the second also puts);
   * managers given here each hold `holds` of the companies, drawn from the seed.
   */
  readonly managers?: ReadonlyArray<{ readonly cik: string; readonly name: string; readonly holds: number }>
}): ReadonlyArray<ThirteenFTexts> => {
  const documents: Array<ThirteenFTexts> = []
  const handMade = input.managers === undefined
  const managers = input.managers ?? SimulatedManagers.map((m) => ({ ...m, holds: 0 }))
  managers.forEach((manager, managerIndex) => {
    const random = stream(input.seed, `13f:${manager.cik}`)
    const held = handMade
      ? input.companies.filter((_, i) => (i + managerIndex) % 4 !== 3)
      : drawHoldings(input.companies, manager.holds, random)
    // Each manager holds a subset of the companies: a position of 0.3% to 2.5% of shares outstanding.
    const positions = held.map((company) => ({
      company,
      shares: Math.round(company.shares * random.between(0.003, 0.025))
    }))
    let outsideShares = 150_000 + managerIndex * 40_000
    const fromYear = Number(input.from.slice(0, 4))
    for (let year = fromYear; year <= Number(input.asOf.slice(0, 4)); year++) {
      for (const month of [3, 6, 9, 12]) {
        const period = monthEnd(year, month)
        if (period < input.from) continue
        const filedAt = onOrAfterWeekday(addDays(period, 44))
        if (filedAt > input.asOf) continue
        const multiplier = thirteenFValueMultiplier(filedAt)
        const value = (usd: number) =>
          new Decimal(usd).div(multiplier).toDecimalPlaces(0, Decimal.ROUND_HALF_UP).toFixed()
        const rows: Array<Row> = []
        for (const position of positions) {
          position.shares = Math.max(1_000, Math.round(position.shares * (1 + random.normal() * 0.08)))
          const { profile, prices, split } = position.company
          const shares = position.shares * (split !== null && period >= split.date ? split.ratio : 1)
          rows.push({
            name: profile.name.toUpperCase().replace(/[.,]/g, ""),
            title: "COM",
            cusip: profile.cusip,
            value: value(shares * prices.unadjustedClose(period)),
            shares,
            putCall: null,
            discretion: handMade && managerIndex === 1 ? "DFND" : "SOLE"
          })
        }
        // The second manager also holds puts on its first position.
        if (handMade && managerIndex === 1 && positions[0] !== undefined) {
          const { profile, prices, split } = positions[0].company
          const shares = 20_000 * (split !== null && period >= split.date ? split.ratio : 1)
          rows.push({
            name: profile.name.toUpperCase().replace(/[.,]/g, ""),
            title: "COM",
            cusip: profile.cusip,
            value: value(shares * prices.unadjustedClose(period)),
            shares,
            putCall: "Put",
            discretion: "DFND"
          })
        }
        outsideShares = Math.round(outsideShares * (1 + random.normal() * 0.03))
        rows.push({
          name: outsideSecurity.name,
          title: outsideSecurity.title,
          cusip: outsideSecurity.cusip,
          value: value(outsideShares * outsideSecurity.price),
          shares: outsideShares,
          putCall: null,
          discretion: "SOLE"
        })
        const total = rows.reduce((sum, row) => sum.plus(row.value), new Decimal(0)).toFixed()
        documents.push({
          accession: input.accessions.take(manager.cik, filedAt),
          filedAt,
          filerCik: manager.cik,
          primaryDocument: renderPrimary({
            cik: manager.cik,
            name: manager.name,
            period,
            entries: rows.length,
            total,
            signed: filedAt
          }),
          informationTable: renderTable(rows)
        })
      }
    }
  })
  return documents
}
