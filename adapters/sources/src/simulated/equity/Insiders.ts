/**
 * Form 4 ownership documents of the simulated companies' insiders, written as EDGAR serves them (no `<?xml?>`
 * line, schema X0508): a CEO (officer and director), a CFO and an independent director per company, over the two
 * years before `asOf`. The CFO sells each quarter under a 10b5-1 plan (weighted-average prices, with footnotes),
 * officers receive an annual stock award with shares withheld for taxes, the director buys in the open market, the
 * CEO exercises options once (derivative and non-derivative rows). One CFO sale is amended by a 4/A that corrects
 * the share count. Holdings after each row follow the insider's running position, multiplied at a split.
 */
import { Decimal } from "decimal.js"
import type { AccessionCounter, PlannedFiling } from "./Books.ts"
import { addDays, isWeekday, onOrAfterWeekday } from "./Calendar.ts"
import type { CompanyProfile } from "./Companies.ts"
import type { PriceHistory } from "./Prices.ts"
import { stream } from "./Seeded.ts"

export interface OwnershipDocumentText {
  readonly accession: string
  readonly filedAt: string
  readonly issuerCik: string
  readonly text: string
}

interface Insider {
  readonly cik: string
  readonly name: string
  readonly isDirector: boolean
  readonly isOfficer: boolean
  readonly title: string | null
  holdings: number
  options: number
}

interface Row {
  readonly table: "non_derivative" | "derivative"
  readonly title: string
  readonly date: string
  readonly code: string
  readonly acquiredDisposed: "A" | "D"
  readonly shares: number
  readonly price: string | null
  readonly after: number
  readonly exercisePrice?: string
  readonly footnotes: ReadonlyArray<string>
}

const escapeXml = (text: string): string =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;")

const addWeekdays = (date: string, count: number): string => {
  let day = date
  for (let n = 0; n < count; ) {
    day = addDays(day, 1)
    if (isWeekday(day)) n++
  }
  return day
}

const footnoteTag = (ids: ReadonlyArray<string>): string => ids.map((id) => `<footnoteId id="${id}"/>`).join("")

const renderRow = (row: Row, footnoteIds: Map<string, string>): string => {
  const ids = row.footnotes.map((text) => footnoteIds.get(text)!)
  const priceIds = ids.filter((_, i) => row.footnotes[i]!.startsWith("The price reported"))
  const codeIds = ids.filter((id) => !priceIds.includes(id))
  const tag = row.table === "non_derivative" ? "nonDerivativeTransaction" : "derivativeTransaction"
  const derivativeHead =
    row.table === "derivative"
      ? `\n            <conversionOrExercisePrice><value>${row.exercisePrice}</value></conversionOrExercisePrice>`
      : ""
  const derivativeTail =
    row.table === "derivative"
      ? `
            <exerciseDate><value>${row.date}</value></exerciseDate>
            <expirationDate><value>${Number(row.date.slice(0, 4)) + 6}-03-01</value></expirationDate>
            <underlyingSecurity>
                <underlyingSecurityTitle><value>Common Stock</value></underlyingSecurityTitle>
                <underlyingSecurityShares><value>${row.shares}</value></underlyingSecurityShares>
            </underlyingSecurity>`
      : ""
  return `
        <${tag}>
            <securityTitle><value>${escapeXml(row.title)}</value></securityTitle>${derivativeHead}
            <transactionDate><value>${row.date}</value></transactionDate>
            <transactionCoding>
                <transactionFormType>4</transactionFormType>
                <transactionCode>${row.code}</transactionCode>
                <equitySwapInvolved>0</equitySwapInvolved>${footnoteTag(codeIds)}
            </transactionCoding>
            <transactionAmounts>
                <transactionShares><value>${row.shares}</value></transactionShares>
                <transactionPricePerShare>${row.price === null ? "" : `<value>${row.price}</value>`}${footnoteTag(priceIds)}</transactionPricePerShare>
                <transactionAcquiredDisposedCode><value>${row.acquiredDisposed}</value></transactionAcquiredDisposedCode>
            </transactionAmounts>${derivativeTail}
            <postTransactionAmounts>
                <sharesOwnedFollowingTransaction><value>${row.after}</value></sharesOwnedFollowingTransaction>
            </postTransactionAmounts>
            <ownershipNature>
                <directOrIndirectOwnership><value>D</value></directOrIndirectOwnership>
            </ownershipNature>
        </${tag}>`
}

const renderDocument = (input: {
  readonly form: "4" | "4/A"
  readonly period: string
  readonly original: string | null
  readonly profile: CompanyProfile
  readonly insider: Insider
  readonly rows: ReadonlyArray<Row>
  readonly signed: string
}): string => {
  const { profile, insider, rows } = input
  const footnoteIds = new Map<string, string>()
  for (const row of rows)
    for (const text of row.footnotes) if (!footnoteIds.has(text)) footnoteIds.set(text, `F${footnoteIds.size + 1}`)
  const table = (kind: Row["table"], tag: string) => {
    const selected = rows.filter((row) => row.table === kind)
    return selected.length === 0
      ? ""
      : `\n    <${tag}>${selected.map((row) => renderRow(row, footnoteIds)).join("")}\n    </${tag}>`
  }
  const footnotes =
    footnoteIds.size === 0
      ? "\n    <footnotes/>"
      : `\n    <footnotes>${[...footnoteIds].map(([text, id]) => `\n        <footnote id="${id}">${escapeXml(text)}</footnote>`).join("")}\n    </footnotes>`
  return `<ownershipDocument>
    <schemaVersion>X0508</schemaVersion>
    <documentType>${input.form}</documentType>
    <periodOfReport>${input.period}</periodOfReport>${input.original === null ? "" : `\n    <dateOfOriginalSubmission>${input.original}</dateOfOriginalSubmission>`}
    <notSubjectToSection16>0</notSubjectToSection16>
    <aff10b5One>${rows.some((row) => row.code === "S") ? 1 : 0}</aff10b5One>
    <issuer>
        <issuerCik>${profile.cik.padStart(10, "0")}</issuerCik>
        <issuerName>${escapeXml(profile.name)}</issuerName>
        <issuerTradingSymbol>${profile.ticker}</issuerTradingSymbol>
    </issuer>
    <reportingOwner>
        <reportingOwnerId>
            <rptOwnerCik>${insider.cik.padStart(10, "0")}</rptOwnerCik>
            <rptOwnerName>${escapeXml(insider.name)}</rptOwnerName>
        </reportingOwnerId>
        <reportingOwnerRelationship>
            <isDirector>${insider.isDirector ? 1 : 0}</isDirector>
            <isOfficer>${insider.isOfficer ? 1 : 0}</isOfficer>
            <isTenPercentOwner>0</isTenPercentOwner>
            <isOther>0</isOther>${insider.title === null ? "" : `\n            <officerTitle>${escapeXml(insider.title)}</officerTitle>`}
        </reportingOwnerRelationship>
    </reportingOwner>${table("non_derivative", "nonDerivativeTable")}${table("derivative", "derivativeTable")}${footnotes}
    <remarks/>
    <ownerSignature>
        <signatureName>/s/ ${escapeXml(insider.name)}</signatureName>
        <signatureDate>${input.signed}</signatureDate>
    </ownerSignature>
</ownershipDocument>
`
}

const surnames = [
  "Okafor",
  "Lindqvist",
  "Marchetti",
  "Haddad",
  "Brennan",
  "Sato",
  "Novak",
  "Abernathy",
  "Castellanos",
  "Whitcombe",
  "Ferreira",
  "Ostrowski",
  "Kaur",
  "Delacroix",
  "Mbeki"
]
const givenNames = [
  "Ada",
  "Tomas",
  "Priya",
  "Jonah",
  "Mireille",
  "Kenji",
  "Oluwaseun",
  "Greta",
  "Rafael",
  "Ingrid",
  "Dev",
  "Halle",
  "Bruno",
  "Sabine",
  "Callum"
]

/**
 * Writes the insiders' Form 4 documents for one company from `from` to `asOf` and the filings the submissions
 * feed lists for them.
 */
export const insiderDocuments = (input: {
  readonly seed: number
  readonly profile: CompanyProfile
  readonly companyIndex: number
  readonly from: string
  readonly asOf: string
  readonly prices: PriceHistory
  readonly split: { readonly date: string; readonly ratio: number } | null
  /** Earnings release days: sales happen in the open window after them. */
  readonly releaseDays: ReadonlyArray<string>
  readonly accessions: AccessionCounter
}): { readonly documents: ReadonlyArray<OwnershipDocumentText>; readonly filings: ReadonlyArray<PlannedFiling> } => {
  const { profile, prices, split, asOf } = input
  const random = stream(input.seed, `insiders:${profile.cik}`)
  const person = (k: number) =>
    `${surnames[(input.companyIndex * 3 + k) % surnames.length]} ${givenNames[(input.companyIndex * 5 + k * 2) % givenNames.length]}`
  const scale = profile.baseShares / 200_000_000
  const firstInsiderCik = profile.insiderCikBase ?? 9990100 + input.companyIndex * 10 + 1
  const insiders: Array<Insider> = [
    {
      cik: String(firstInsiderCik + 0),
      name: person(0),
      isDirector: true,
      isOfficer: true,
      title: "Chief Executive Officer",
      holdings: Math.round(1_400_000 * scale),
      options: Math.round(300_000 * scale)
    },
    {
      cik: String(firstInsiderCik + 1),
      name: person(1),
      isDirector: false,
      isOfficer: true,
      title: "Chief Financial Officer",
      holdings: Math.round(210_000 * scale),
      options: 0
    },
    {
      cik: String(firstInsiderCik + 2),
      name: person(2),
      isDirector: true,
      isOfficer: false,
      title: null,
      holdings: Math.round(38_000 * scale),
      options: 0
    }
  ]
  const [ceo, cfo, director] = insiders as [Insider, Insider, Insider]
  // The exercise price of the CEO's options: well below the first price of the window, in traded units.
  const exercisePrice = new Decimal(prices.unadjustedClose(input.from)).times(0.4)
  // Option terms are adjusted at a split like the shares: the price divided by the ratio.
  const exercisePriceOn = (date: string): string =>
    exercisePrice
      .div(split !== null && date >= split.date ? split.ratio : 1)
      .toDecimalPlaces(2)
      .toFixed()

  type Event = { readonly insider: Insider; readonly date: string; readonly build: () => ReadonlyArray<Row> }
  const events: Array<Event> = []
  const tradedPrice = (date: string, spread: number) =>
    new Decimal(prices.unadjustedClose(date))
      .times(1 + random.between(-spread, spread))
      .toDecimalPlaces(4)
      .toFixed()
  const sale = (insider: Insider, date: string, shares: number): Row => {
    const price = tradedPrice(date, 0.006)
    const low = new Decimal(price).times(0.994).toDecimalPlaces(2).toFixed(2)
    const high = new Decimal(price).times(1.006).toDecimalPlaces(2).toFixed(2)
    insider.holdings -= shares
    return {
      table: "non_derivative",
      title: "Common Stock",
      date,
      code: "S",
      acquiredDisposed: "D",
      shares,
      price,
      after: insider.holdings,
      footnotes: [
        `The sales reported in this Form 4 were effected pursuant to a Rule 10b5-1 trading plan adopted by the Reporting Person.`,
        `The price reported is a weighted-average price. The shares were sold in multiple transactions at prices ranging from $${low} to $${high}, inclusive.`
      ]
    }
  }

  for (const release of input.releaseDays) {
    const day = addWeekdays(release, 6)
    if (day < input.from || day > asOf) continue
    events.push({
      insider: cfo,
      date: day,
      build: () => [sale(cfo, day, Math.round(random.between(0.02, 0.04) * cfo.holdings))]
    })
  }
  for (let year = Number(input.from.slice(0, 4)); year <= Number(asOf.slice(0, 4)); year++) {
    const awardDay = onOrAfterWeekday(`${year}-03-02`)
    if (awardDay >= input.from && awardDay <= asOf) {
      for (const officer of [ceo, cfo]) {
        events.push({
          insider: officer,
          date: awardDay,
          build: () => {
            const award = Math.round(officer.holdings * random.between(0.05, 0.08))
            officer.holdings += award
            const granted: Row = {
              table: "non_derivative",
              title: "Common Stock",
              date: awardDay,
              code: "A",
              acquiredDisposed: "A",
              shares: award,
              price: "0",
              after: officer.holdings,
              footnotes: [
                "Shares issued on the vesting of restricted stock units granted under the 2019 Equity Incentive Plan."
              ]
            }
            const withheld = Math.round(award * 0.37)
            officer.holdings -= withheld
            const tax: Row = {
              table: "non_derivative",
              title: "Common Stock",
              date: awardDay,
              code: "F",
              acquiredDisposed: "D",
              shares: withheld,
              price: new Decimal(prices.unadjustedClose(awardDay)).toFixed(2),
              after: officer.holdings,
              footnotes: [
                "Shares withheld by the Issuer to satisfy tax withholding obligations on the vesting of restricted stock units."
              ]
            }
            return [granted, tax]
          }
        })
      }
    }
    for (const month of ["05-18", "11-16"]) {
      const buyDay = onOrAfterWeekday(`${year}-${month}`)
      if (buyDay < input.from || buyDay > asOf) continue
      events.push({
        insider: director,
        date: buyDay,
        build: () => {
          const shares = Math.round(random.between(1500, 4000) / 10) * 10
          director.holdings += shares
          return [
            {
              table: "non_derivative",
              title: "Common Stock",
              date: buyDay,
              code: "P",
              acquiredDisposed: "A",
              shares,
              price: tradedPrice(buyDay, 0.002),
              after: director.holdings,
              footnotes: []
            }
          ]
        }
      })
    }
  }
  const exerciseDay = onOrAfterWeekday(addDays(input.from, 200))
  if (exerciseDay <= asOf) {
    events.push({
      insider: ceo,
      date: exerciseDay,
      build: () => {
        const shares = Math.round(ceo.options / 3)
        ceo.options -= shares
        ceo.holdings += shares
        const acquired: Row = {
          table: "non_derivative",
          title: "Common Stock",
          date: exerciseDay,
          code: "M",
          acquiredDisposed: "A",
          shares,
          price: exercisePriceOn(exerciseDay),
          after: ceo.holdings,
          footnotes: []
        }
        const sold = sale(ceo, exerciseDay, shares)
        const option: Row = {
          table: "derivative",
          title: "Stock Option (Right to Buy)",
          date: exerciseDay,
          code: "M",
          acquiredDisposed: "D",
          shares,
          price: "0",
          after: ceo.options,
          exercisePrice: exercisePriceOn(exerciseDay),
          footnotes: []
        }
        return [acquired, sold, option]
      }
    })
  }

  events.sort((a, b) => (a.date === b.date ? a.insider.cik.localeCompare(b.insider.cik) : a.date < b.date ? -1 : 1))
  const documents: Array<OwnershipDocumentText> = []
  const filings: Array<PlannedFiling> = []
  let splitApplied = false
  let amended = false
  for (const event of events) {
    if (split !== null && !splitApplied && event.date >= split.date) {
      for (const insider of insiders) {
        insider.holdings *= split.ratio
        insider.options *= split.ratio
      }
      splitApplied = true
    }
    const rows = event.build()
    const filedAt = addWeekdays(event.date, 2)
    if (filedAt > asOf) continue
    const record = (form: "4" | "4/A", filed: string, documentRows: ReadonlyArray<Row>, original: string | null) => {
      const accession = input.accessions.take(profile.cik, filed)
      documents.push({
        accession,
        filedAt: filed,
        issuerCik: profile.cik,
        text: renderDocument({
          form,
          period: event.date,
          original,
          profile,
          insider: event.insider,
          rows: documentRows,
          signed: filed
        })
      })
      filings.push({
        accession,
        form,
        filingDate: filed,
        reportDate: event.date,
        acceptanceDateTime: `${filed}T18:${String(10 + random.integer(0, 45)).padStart(2, "0")}:${String(random.integer(10, 59))}.000Z`,
        items: "",
        primaryDocument: `xslF345X05/wk-form4_${filed.replaceAll("-", "")}${event.insider.cik.slice(-3)}.xml`,
        primaryDocDescription: form === "4" ? "FORM 4" : "FORM 4/A",
        isXbrl: false,
        size: 4_000 + documentRows.length * 1_100,
        fiscalYear: null,
        fiscalPeriod: null
      })
    }
    const first = rows[0]!
    if (!amended && event.insider === cfo && first.code === "S" && filedAt < addDays(asOf, -30)) {
      // The original misstates the shares sold by 500; the 4/A a week later restates the report correctly.
      amended = true
      const wrong: Row = { ...first, shares: first.shares - 500, after: first.after + 500 }
      record("4", filedAt, [wrong], null)
      const amendmentDay = addWeekdays(filedAt, 5)
      record("4/A", amendmentDay, rows, filedAt)
      continue
    }
    record("4", filedAt, rows, null)
  }
  return { documents, filings }
}
