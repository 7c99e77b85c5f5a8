/**
 * Form 13F-HR: the primary document (`edgarSubmission`: filer, period, totals) and the information table
 * (`informationTable`: one `infoTable` per holding). Both are namespaced XML; prefixes are dropped when reading.
 *
 * Value unit: the SEC's amendments to Form 13F (Release No. 34-95148, June 23, 2022, effective January 3, 2023)
 * require the market value of each holding "rounded to the nearest dollar" instead of in thousands, for every
 * filing made on or after that date, amendments of earlier periods included (the EDGAR Form 13F XML Technical
 * Specification changed `value` from "(x$1000)" to dollars at the same time). The rule here follows the filing
 * date, not the period: filed before 2023-01-03, `value` is thousands of dollars and is multiplied by 1000;
 * filed on or after 2023-01-03, it is dollars and kept. The primary document's `tableValueTotal` follows the
 * same rule. Some filers wrote dollars before the change; `thirteenFImpliedValueUnit` detects that from the
 * implied prices, and `valueUnit` lets the caller override the rule for such a filing.
 */
import { Decimal } from "decimal.js"
import { Result } from "effect"
import type { Holding, HoldingsReport } from "./EquityModel.ts"
import { decimalText, isDate, problem, runParser } from "./ExactJson.ts"
import { SecFormatError } from "./SecFormatError.ts"
import { child, children, childText, parseXmlRoot, requiredChild, requiredText, type XmlElement } from "./Xml.ts"

/** The first filing date whose 13F values are whole dollars (Release No. 34-95148). */
export const ThirteenFDollarValuesFrom = "2023-01-03"

/** How many US dollars one unit of a 13F `value` is, for a filing filed on `filedAt` (`YYYY-MM-DD`). */
export const thirteenFValueMultiplier = (filedAt: string): 1 | 1000 => (filedAt < ThirteenFDollarValuesFrom ? 1000 : 1)

/** A 13F `value` (or `tableValueTotal`) as filed, in US dollars. */
export const thirteenFValueUsd = (valueAsFiled: string, filedAt: string): string =>
  thirteenFValueMultiplier(filedAt) === 1 ? valueAsFiled : new Decimal(valueAsFiled).times(1000).toFixed()

/** The cover of a 13F filing, from its primary document. */
export interface ThirteenFCover {
  /** "13F-HR", "13F-HR/A", "13F-NT", ... */
  readonly form: string
  readonly filerCik: string
  readonly filerName: string
  /** Period of report (quarter end), `YYYY-MM-DD`. */
  readonly reportPeriod: string
  readonly isAmendment: boolean
  /** "RESTATEMENT" or "NEW HOLDINGS" for an amendment, else null. */
  readonly amendmentType: string | null
  /** "13F HOLDINGS REPORT", "13F COMBINATION REPORT", "13F NOTICE". */
  readonly reportType: string | null
  /** Rows the information table should hold; null when the document has no summary page (a notice). */
  readonly tableEntryTotal: number | null
  /** Total value exactly as filed (unit by filing date, see the module comment); null without a summary page. */
  readonly tableValueTotal: string | null
}

/** `MM-DD-YYYY` (as 13F documents write dates) or `YYYY-MM-DD`, to `YYYY-MM-DD`. */
const thirteenFDate = (text: string, path: string): string => {
  const us = /^(\d{2})-(\d{2})-(\d{4})$/.exec(text)
  const iso = us === null ? text : `${us[3]}-${us[1]}-${us[2]}`
  return isDate(iso) ? iso : problem(path, `expected a date (MM-DD-YYYY), got ${JSON.stringify(text)}`)
}

const cikText = (text: string, path: string): string =>
  /^\d+$/.test(text) ? String(BigInt(text)) : problem(path, `expected a CIK, got ${JSON.stringify(text)}`)

const integerText = (text: string, path: string): number => {
  const n = Number(text)
  return /^\d+$/.test(text) && Number.isSafeInteger(n)
    ? n
    : problem(path, `expected a count, got ${JSON.stringify(text)}`)
}

/** Parses a 13F primary document (`edgarSubmission`, schema X0202 and successors). */
export const parseThirteenFPrimaryDocument = (text: string): Result.Result<ThirteenFCover, SecFormatError> =>
  runParser("13f_primary_document", () => {
    const root = parseXmlRoot(text, "edgarSubmission")
    const path = "edgarSubmission"
    const header = requiredChild(root, "headerData", path)
    const filerInfo = requiredChild(header, "filerInfo", `${path}/headerData`)
    const filer = requiredChild(filerInfo, "filer", `${path}/headerData/filerInfo`)
    const credentials = requiredChild(filer, "credentials", `${path}/headerData/filerInfo/filer`)
    const formData = requiredChild(root, "formData", path)
    const cover = requiredChild(formData, "coverPage", `${path}/formData`)
    const coverPath = `${path}/formData/coverPage`
    const manager = requiredChild(cover, "filingManager", coverPath)
    const summary = child(formData, "summaryPage", `${path}/formData`)
    const summaryPath = `${path}/formData/summaryPage`
    const period =
      childText(filerInfo, "periodOfReport", `${path}/headerData/filerInfo`) ??
      requiredText(cover, "reportCalendarOrQuarter", coverPath)
    const isAmendment = (childText(cover, "isAmendment", coverPath) ?? "false").toLowerCase()
    const amendmentInfo = child(cover, "amendmentInfo", coverPath)
    const entryTotal = summary === undefined ? null : childText(summary, "tableEntryTotal", summaryPath)
    const valueTotal = summary === undefined ? null : childText(summary, "tableValueTotal", summaryPath)
    return {
      form: requiredText(header, "submissionType", `${path}/headerData`),
      filerCik: cikText(
        requiredText(credentials, "cik", `${path}/headerData/filerInfo/filer/credentials`),
        `${path}/headerData/filerInfo/filer/credentials/cik`
      ),
      filerName: requiredText(manager, "name", `${coverPath}/filingManager`),
      reportPeriod: thirteenFDate(period, `${path}/headerData/filerInfo/periodOfReport`),
      isAmendment: isAmendment === "true" || isAmendment === "y" || isAmendment === "1",
      amendmentType:
        amendmentInfo === undefined ? null : childText(amendmentInfo, "amendmentType", `${coverPath}/amendmentInfo`),
      reportType: childText(cover, "reportType", coverPath),
      tableEntryTotal: entryTotal === null ? null : integerText(entryTotal, `${summaryPath}/tableEntryTotal`),
      tableValueTotal:
        valueTotal === null ? null : decimalText(valueTotal.replaceAll(",", ""), `${summaryPath}/tableValueTotal`)
    }
  })

const readHolding = (row: XmlElement, multiplier: 1 | 1000, path: string): Holding => {
  const amount = requiredChild(row, "shrsOrPrnAmt", path)
  const amountPath = `${path}/shrsOrPrnAmt`
  const sharesType = requiredText(amount, "sshPrnamtType", amountPath)
  if (sharesType !== "SH" && sharesType !== "PRN") {
    problem(`${amountPath}/sshPrnamtType`, `expected SH or PRN, got ${JSON.stringify(sharesType)}`)
  }
  const putCallText = childText(row, "putCall", path)
  const putCall =
    putCallText === null
      ? null
      : putCallText.toLowerCase() === "put"
        ? "Put"
        : putCallText.toLowerCase() === "call"
          ? "Call"
          : problem(`${path}/putCall`, `expected Put or Call, got ${JSON.stringify(putCallText)}`)
  const voting = child(row, "votingAuthority", path)
  const votes = (name: string) =>
    voting === undefined
      ? "0"
      : decimalText(
          (childText(voting, name, `${path}/votingAuthority`) ?? "0").replaceAll(",", ""),
          `${path}/votingAuthority/${name}`
        )
  const value = decimalText(requiredText(row, "value", path).replaceAll(",", ""), `${path}/value`)
  return {
    nameOfIssuer: requiredText(row, "nameOfIssuer", path),
    titleOfClass: requiredText(row, "titleOfClass", path),
    cusip: requiredText(row, "cusip", path),
    valueUsd: multiplier === 1 ? value : new Decimal(value).times(multiplier).toFixed(),
    shares: decimalText(requiredText(amount, "sshPrnamt", amountPath).replaceAll(",", ""), `${amountPath}/sshPrnamt`),
    sharesType: sharesType as "SH" | "PRN",
    putCall,
    investmentDiscretion: requiredText(row, "investmentDiscretion", path),
    votingSole: votes("Sole"),
    votingShared: votes("Shared"),
    votingNone: votes("None")
  }
}

/** The unit a 13F table's `value` column is written in. */
export type ThirteenFValueUnit = "thousands" | "dollars"

/**
 * Parses a 13F information table. `filedAt` (the filing's date, `YYYY-MM-DD`) decides the value unit: see the
 * module comment; every `valueUsd` is in dollars. `valueUnit` overrides the rule for a filing known to deviate
 * from it (see `thirteenFImpliedValueUnit`).
 */
export const parseThirteenFInformationTable = (
  text: string,
  filedAt: string,
  options: { readonly valueUnit?: ThirteenFValueUnit } = {}
): Result.Result<ReadonlyArray<Holding>, SecFormatError> =>
  runParser("13f_information_table", () => {
    if (!isDate(filedAt)) problem("filedAt", `not a YYYY-MM-DD date: ${filedAt}`)
    const root = parseXmlRoot(text, "informationTable")
    const multiplier =
      options.valueUnit === undefined ? thirteenFValueMultiplier(filedAt) : options.valueUnit === "thousands" ? 1000 : 1
    return children(root, "infoTable", "informationTable").map((row, i) =>
      readHolding(row, multiplier, `informationTable/infoTable[${i + 1}]`)
    )
  })

/**
 * The unit a table's values appear to be written in, judged from the prices they imply: the median of value per
 * share over plain share rows (no options, no principal amounts), read as thousands of dollars. Real filers did
 * not all follow the pre-2023 rule: the recorded table in `../shared/data` (its prices match the 2021-09-30 closes,
 * e.g. Zoom 261.50, Abbott 118.16) is written in dollars, which read as thousands would price 3M at $175,000.
 * A median above $20,000 a share means dollars; "unknown" when fewer than 5 rows can be judged. `holdings` must
 * be parsed with `valueUnit: "dollars"` (values as written).
 */
export const thirteenFImpliedValueUnit = (
  holdingsAsWritten: ReadonlyArray<Holding>
): ThirteenFValueUnit | "unknown" => {
  const prices = holdingsAsWritten
    .filter((holding) => holding.sharesType === "SH" && holding.putCall === null && new Decimal(holding.shares).gt(0))
    .map((holding) => new Decimal(holding.valueUsd).times(1000).div(holding.shares))
    .sort((a, b) => a.comparedTo(b))
  if (prices.length < 5) return "unknown"
  const median = prices[Math.floor(prices.length / 2)]!
  return median.gt(20_000) ? "dollars" : "thousands"
}

/** How an information table compares with its primary document's summary page. */
export interface ThirteenFTotalsCheck {
  readonly rows: number
  readonly tableEntryTotal: number | null
  /** Sum of the holdings' `valueUsd`. */
  readonly holdingsValueUsd: string
  /** The summary's `tableValueTotal` in dollars (scaled by filing date), or null. */
  readonly tableValueTotalUsd: string | null
  readonly entriesMatch: boolean
  readonly valueMatches: boolean
}

/** Compares the holdings with the totals the primary document states (row count and value sum, exact). */
export const checkThirteenFTotals = (
  cover: ThirteenFCover,
  holdings: ReadonlyArray<Holding>,
  filedAt: string
): ThirteenFTotalsCheck => {
  const holdingsValueUsd = holdings.reduce((sum, holding) => sum.plus(holding.valueUsd), new Decimal(0)).toFixed()
  const tableValueTotalUsd = cover.tableValueTotal === null ? null : thirteenFValueUsd(cover.tableValueTotal, filedAt)
  return {
    rows: holdings.length,
    tableEntryTotal: cover.tableEntryTotal,
    holdingsValueUsd,
    tableValueTotalUsd,
    entriesMatch: cover.tableEntryTotal === holdings.length,
    valueMatches: tableValueTotalUsd !== null && new Decimal(tableValueTotalUsd).equals(holdingsValueUsd)
  }
}

/**
 * Parses a whole 13F-HR filing (primary document and information table) into a `HoldingsReport`. The documents
 * do not carry the accession number or filing date; the caller passes them.
 */
export const parseThirteenF = (input: {
  readonly primaryDocument: string
  readonly informationTable: string
  readonly accession: string
  readonly filedAt: string
}): Result.Result<HoldingsReport, SecFormatError> =>
  Result.gen(function* () {
    if (!/^\d{10}-\d{2}-\d{6}$/.test(input.accession)) {
      return yield* Result.fail(
        new SecFormatError({
          format: "13f_primary_document",
          message: `accession: not an accession number: ${input.accession}`
        })
      )
    }
    const cover = yield* parseThirteenFPrimaryDocument(input.primaryDocument)
    const holdings = yield* parseThirteenFInformationTable(input.informationTable, input.filedAt)
    return {
      filerCik: cover.filerCik,
      filerName: cover.filerName,
      accession: input.accession,
      form: cover.form,
      filedAt: input.filedAt,
      reportPeriod: cover.reportPeriod,
      holdings
    }
  })
