/**
 * Form 4 (and 4/A) `ownershipDocument` XML, as EDGAR serves the filing's XML document (schema X0306 and its
 * predecessors; the real files have no `<?xml?>` line). The document does not carry its own accession number or
 * filing date: those come from the filing index or the submissions feed, and the caller passes them.
 */
import { Result } from "effect"
import type { InsiderTransaction, OwnershipReport, ReportingOwner } from "./EquityModel.ts"
import { decimalText, isDate, problem, runParser } from "./ExactJson.ts"
import { SecFormatError } from "./SecFormatError.ts"
import {
  attribute,
  child,
  children,
  childText,
  descendants,
  ownText,
  parseXmlRoot,
  requiredChild,
  requiredText,
  type XmlElement
} from "./Xml.ts"

/** Where the filing came from: not part of the XML document itself. */
export interface FilingReference {
  readonly accession: string
  /** Filing date, `YYYY-MM-DD`. */
  readonly filedAt: string
}

const ownershipForms = new Set(["4", "4/A"])

/** A date element's text; Section 16 documents sometimes append a zone (`2022-12-13-05:00`), which is dropped. */
const dateText = (text: string, path: string): string => {
  const day = text.slice(0, 10)
  return isDate(day) ? day : problem(path, `expected a date, got ${JSON.stringify(text)}`)
}

/** `1`/`0` or `true`/`false`, as the schema allows either. Absent is false. */
const flag = (parent: XmlElement, name: string, path: string): boolean => {
  const text = childText(parent, name, path)
  if (text === null) return false
  const lower = text.toLowerCase()
  if (lower === "1" || lower === "true") return true
  if (lower === "0" || lower === "false") return false
  return problem(`${path}/${name}`, `expected 1, 0, true or false, got ${JSON.stringify(text)}`)
}

/** The text of `<name><value>...</value></name>`, the schema's wrapper for values that may carry footnotes. */
const wrappedValue = (parent: XmlElement | undefined, name: string, path: string): string | null => {
  if (parent === undefined) return null
  const wrapper = child(parent, name, path)
  return wrapper === undefined ? null : childText(wrapper, "value", `${path}/${name}`)
}

const wrappedDecimal = (parent: XmlElement | undefined, name: string, path: string): string | null => {
  const text = wrappedValue(parent, name, path)
  return text === null ? null : decimalText(text.replaceAll(",", ""), `${path}/${name}/value`)
}

/** Footnote texts by ID, whitespace runs (the XML's line wrapping) collapsed to single spaces. */
const readFootnotes = (root: XmlElement): ReadonlyMap<string, string> => {
  const footnotes = new Map<string, string>()
  const container = child(root, "footnotes", "ownershipDocument")
  if (container === undefined) return footnotes
  for (const [i, footnote] of children(container, "footnote", "ownershipDocument/footnotes").entries()) {
    const id = attribute(footnote, "id")
    if (id === null) problem(`ownershipDocument/footnotes/footnote[${i + 1}]`, "has no id attribute")
    footnotes.set(id!, (ownText(footnote) ?? "").replace(/\s+/g, " ").trim())
  }
  return footnotes
}

const readOwner = (element: XmlElement, path: string): ReportingOwner => {
  const id = requiredChild(element, "reportingOwnerId", path)
  const relationship = child(element, "reportingOwnerRelationship", path)
  const relationshipPath = `${path}/reportingOwnerRelationship`
  const cik = requiredText(id, "rptOwnerCik", `${path}/reportingOwnerId`)
  if (!/^\d+$/.test(cik)) problem(`${path}/reportingOwnerId/rptOwnerCik`, `expected a CIK, got ${JSON.stringify(cik)}`)
  return {
    cik: String(BigInt(cik)),
    name: requiredText(id, "rptOwnerName", `${path}/reportingOwnerId`),
    isDirector: relationship === undefined ? false : flag(relationship, "isDirector", relationshipPath),
    isOfficer: relationship === undefined ? false : flag(relationship, "isOfficer", relationshipPath),
    officerTitle: relationship === undefined ? null : childText(relationship, "officerTitle", relationshipPath),
    isTenPercentOwner: relationship === undefined ? false : flag(relationship, "isTenPercentOwner", relationshipPath),
    isOther: relationship === undefined ? false : flag(relationship, "isOther", relationshipPath)
  }
}

const readTransaction = (
  row: XmlElement,
  table: InsiderTransaction["table"],
  footnotes: ReadonlyMap<string, string>,
  path: string
): InsiderTransaction => {
  const amounts = requiredChild(row, "transactionAmounts", path)
  const amountsPath = `${path}/transactionAmounts`
  const coding = requiredChild(row, "transactionCoding", path)
  const acquiredDisposed = wrappedValue(amounts, "transactionAcquiredDisposedCode", amountsPath)
  if (acquiredDisposed !== "A" && acquiredDisposed !== "D") {
    problem(
      `${amountsPath}/transactionAcquiredDisposedCode`,
      `expected A or D, got ${JSON.stringify(acquiredDisposed)}`
    )
  }
  const nature = child(row, "ownershipNature", path)
  const directIndirect = wrappedValue(nature, "directOrIndirectOwnership", `${path}/ownershipNature`)
  if (directIndirect !== "D" && directIndirect !== "I") {
    problem(
      `${path}/ownershipNature/directOrIndirectOwnership`,
      `expected D or I, got ${JSON.stringify(directIndirect)}`
    )
  }
  const shares = wrappedDecimal(amounts, "transactionShares", amountsPath)
  const post = child(row, "postTransactionAmounts", path)
  const underlying = child(row, "underlyingSecurity", path)
  const referenced: Array<string> = []
  for (const reference of descendants(row, "footnoteId")) {
    const id = attribute(reference, "id")
    if (id === null || referenced.includes(id)) continue
    referenced.push(id)
  }
  const transactionDate = wrappedValue(row, "transactionDate", path)
  return {
    table,
    securityTitle: wrappedValue(row, "securityTitle", path) ?? problem(`${path}/securityTitle`, "missing or empty"),
    transactionDate:
      transactionDate === null
        ? problem(`${path}/transactionDate`, "missing or empty")
        : dateText(transactionDate, `${path}/transactionDate`),
    code: requiredText(coding, "transactionCode", `${path}/transactionCoding`),
    acquiredDisposed: acquiredDisposed as "A" | "D",
    shares: shares ?? problem(`${amountsPath}/transactionShares`, "missing or empty"),
    pricePerShare: wrappedDecimal(amounts, "transactionPricePerShare", amountsPath),
    sharesOwnedAfter: wrappedDecimal(post, "sharesOwnedFollowingTransaction", `${path}/postTransactionAmounts`),
    directIndirect: directIndirect as "D" | "I",
    exercisePrice: table === "derivative" ? wrappedDecimal(row, "conversionOrExercisePrice", path) : null,
    underlyingShares:
      table === "derivative"
        ? wrappedDecimal(underlying, "underlyingSecurityShares", `${path}/underlyingSecurity`)
        : null,
    footnotes: referenced.map(
      (id) => footnotes.get(id) ?? problem(path, `refers to footnote ${id}, which the document does not define`)
    )
  }
}

/**
 * Parses a Form 4 or 4/A ownership document: issuer, reporting owners with their relationships, every row of the
 * non-derivative and derivative transaction tables (holding-only rows, which report no transaction, are not
 * transactions and are skipped) with their footnotes resolved to text, and, for a 4/A, the date of the original
 * submission it amends.
 */
export const parseOwnershipDocument = (
  text: string,
  filing: FilingReference
): Result.Result<OwnershipReport, SecFormatError> =>
  runParser("form4", () => {
    const root = parseXmlRoot(text, "ownershipDocument")
    const path = "ownershipDocument"
    const form = requiredText(root, "documentType", path)
    if (!ownershipForms.has(form))
      problem(`${path}/documentType`, `expected a Form 4 or 4/A, got ${JSON.stringify(form)}`)
    if (!/^\d{10}-\d{2}-\d{6}$/.test(filing.accession))
      problem("accession", `not an accession number: ${filing.accession}`)
    if (!isDate(filing.filedAt)) problem("filedAt", `not a YYYY-MM-DD date: ${filing.filedAt}`)
    const issuer = requiredChild(root, "issuer", path)
    const issuerCik = requiredText(issuer, "issuerCik", `${path}/issuer`)
    if (!/^\d+$/.test(issuerCik))
      problem(`${path}/issuer/issuerCik`, `expected a CIK, got ${JSON.stringify(issuerCik)}`)
    const owners = children(root, "reportingOwner", path).map((owner, i) =>
      readOwner(owner, `${path}/reportingOwner[${i + 1}]`)
    )
    if (owners.length === 0) problem(`${path}/reportingOwner`, "missing: a Form 4 names at least one reporting owner")
    const footnotes = readFootnotes(root)
    const rows = (tableName: string, rowName: string, table: InsiderTransaction["table"]) =>
      children(root, tableName, path).flatMap((tableElement) =>
        children(tableElement, rowName, `${path}/${tableName}`).map((row, i) =>
          readTransaction(row, table, footnotes, `${path}/${tableName}/${rowName}[${i + 1}]`)
        )
      )
    const original = childText(root, "dateOfOriginalSubmission", path)
    return {
      form,
      accession: filing.accession,
      filedAt: filing.filedAt,
      periodOfReport: dateText(requiredText(root, "periodOfReport", path), `${path}/periodOfReport`),
      issuerCik: String(BigInt(issuerCik)),
      issuerName: requiredText(issuer, "issuerName", `${path}/issuer`),
      issuerTicker: childText(issuer, "issuerTradingSymbol", `${path}/issuer`) ?? "",
      owners,
      transactions: [
        ...rows("nonDerivativeTable", "nonDerivativeTransaction", "non_derivative"),
        ...rows("derivativeTable", "derivativeTransaction", "derivative")
      ],
      dateOfOriginalSubmission: original === null ? null : dateText(original, `${path}/dateOfOriginalSubmission`)
    }
  })

const reportGroup = (report: OwnershipReport): string =>
  [report.issuerCik, report.periodOfReport, ...report.owners.map((owner) => owner.cik).sort()].join("|")

const filedOrder = (a: OwnershipReport, b: OwnershipReport): number =>
  a.filedAt === b.filedAt
    ? a.accession < b.accession
      ? -1
      : a.accession > b.accession
        ? 1
        : 0
    : a.filedAt < b.filedAt
      ? -1
      : 1

/**
 * Replaces originals by their amendments. A 4/A restates the report it amends; the one it amends is the Form 4 of
 * the same issuer, the same reporting owners and the same period of report that was filed on the 4/A's
 * `dateOfOriginalSubmission` (without that date: every earlier Form 4 of the group). When several 4/As amend one
 * report, the latest filed (then highest accession) stands and the earlier amendments go too. A 4/A whose
 * original is not among `reports` stays. The result keeps the input order of what remains.
 */
export const supersedeAmendments = (reports: ReadonlyArray<OwnershipReport>): ReadonlyArray<OwnershipReport> => {
  const superseded = new Set<OwnershipReport>()
  const groups = new Map<string, Array<OwnershipReport>>()
  for (const report of reports) {
    const key = reportGroup(report)
    groups.set(key, [...(groups.get(key) ?? []), report])
  }
  for (const group of groups.values()) {
    const amendments = group.filter((report) => report.form.endsWith("/A")).sort(filedOrder)
    for (const amendment of amendments) {
      const targets = group.filter(
        (report) =>
          !report.form.endsWith("/A") &&
          (amendment.dateOfOriginalSubmission === null
            ? report.filedAt <= amendment.filedAt && report !== amendment
            : report.filedAt === amendment.dateOfOriginalSubmission)
      )
      for (const target of targets) superseded.add(target)
      // A later amendment of the same original replaces this one.
      const later = amendments.filter(
        (other) =>
          filedOrder(other, amendment) > 0 && other.dateOfOriginalSubmission === amendment.dateOfOriginalSubmission
      )
      if (later.length > 0) superseded.add(amendment)
    }
  }
  return reports.filter((report) => !superseded.has(report))
}

/** Parses several documents at once, failing with the first bad one (named by accession). */
export const parseOwnershipDocuments = (
  documents: ReadonlyArray<{ readonly text: string; readonly filing: FilingReference }>
): Result.Result<ReadonlyArray<OwnershipReport>, SecFormatError> =>
  Result.all(
    documents.map(({ filing, text }) =>
      Result.mapError(
        parseOwnershipDocument(text, filing),
        (error) => new SecFormatError({ format: error.format, message: `${filing.accession}: ${error.message}` })
      )
    )
  )
