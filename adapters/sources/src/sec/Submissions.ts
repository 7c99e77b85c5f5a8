/**
 * The submissions feed (https://data.sec.gov/submissions/CIK##########.json): the company, its most recent filings
 * as columnar arrays (`filings.recent`, one array per field, index-aligned) and the names of the older pages
 * (`filings.files`), which hold the same columnar arrays at their top level.
 */
import type { Result } from "effect"
import type { Company, Filing, Submissions } from "./EquityModel.ts"
import {
  asArray,
  asCik,
  asDate,
  asInteger,
  asObject,
  asOptionalString,
  asString,
  field,
  type JsonObject,
  parseExactJson,
  problem,
  runParser
} from "./ExactJson.ts"
import { newYorkToUtcMs } from "./NewYorkTime.ts"
import type { SecFormatError } from "./SecFormatError.ts"

/**
 * The address of a filing's document on EDGAR:
 * `https://www.sec.gov/Archives/edgar/data/<cik>/<accession without dashes>/<primaryDocument>`. Without a primary
 * document the filing's index page is the address.
 */
export const filingDocumentUrl = (cik: string, accession: string, primaryDocument: string): string => {
  const folder = `https://www.sec.gov/Archives/edgar/data/${cik.replace(/^0+(?=\d)/, "")}/${accession.replaceAll("-", "")}`
  return primaryDocument === "" ? `${folder}/${accession}-index.htm` : `${folder}/${primaryDocument}`
}

const acceptancePattern = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,3}))?Z?$/

/**
 * EDGAR's acceptance time as true UTC. The submissions feed writes `acceptanceDateTime` as Eastern wall-clock time
 * with a misleading `Z`: Apple's earnings 8-Ks (released at 4:30 pm New York time) read `...T16:30:..Z`, and an
 * 8-K accepted `2025-07-08T21:18:13Z` carries filing date 2025-07-09, which only an acceptance after EDGAR's
 * 5:30 pm Eastern cut-off gets. So the clock reading is taken as America/New_York time (daylight saving applied)
 * and converted.
 */
const readAcceptance = (text: string, path: string): string => {
  const m = acceptancePattern.exec(text)
  if (m === null) return problem(path, `expected an acceptance date-time, got ${JSON.stringify(text)}`)
  const millis = m[7] === undefined ? 0 : Number(m[7].padEnd(3, "0"))
  const utcMs = newYorkToUtcMs(Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]))
  return new Date(utcMs + millis).toISOString()
}

/** `readAcceptance` for one value: the feed's `acceptanceDateTime` text as true UTC (ISO 8601). */
export const acceptanceToUtc = (text: string): Result.Result<string, SecFormatError> =>
  runParser("submissions", () => readAcceptance(text, "acceptanceDateTime"))

const optionalText = (value: unknown, path: string): string | null => {
  const text = asOptionalString(value, path)
  return text === null || text.trim() === "" ? null : text
}

const flag = (value: unknown, path: string): boolean => {
  if (typeof value === "boolean") return value
  const n = asInteger(value, path)
  return n === 1 ? true : n === 0 ? false : problem(path, `expected 0 or 1, got ${n}`)
}

/** Columns every filing row needs; the others are optional (older pages lack some). */
const requiredColumns = ["accessionNumber", "filingDate", "acceptanceDateTime", "form", "primaryDocument"] as const
const optionalColumns = ["reportDate", "primaryDocDescription", "items", "isXBRL"] as const

/** Reads columnar filing arrays (`filings.recent`, or a whole older page) into filings, in feed order. */
const readFilingColumns = (columns: JsonObject, cik: string, path: string): ReadonlyArray<Filing> => {
  const read = (name: string, required: boolean): ReadonlyArray<unknown> | null => {
    const value = columns[name]
    if (value === undefined && !required) return null
    return asArray(required ? field(columns, name, path) : value, `${path}.${name}`)
  }
  const accession = read("accessionNumber", true)!
  const count = accession.length
  const table: Record<string, ReadonlyArray<unknown> | null> = {}
  for (const name of [...requiredColumns, ...optionalColumns]) {
    const column = read(name, (requiredColumns as ReadonlyArray<string>).includes(name))
    if (column !== null && column.length !== count) {
      problem(`${path}.${name}`, `has ${column.length} entries, but accessionNumber has ${count}`)
    }
    table[name] = column
  }
  const cell = (name: string, index: number): unknown => table[name]?.[index]
  const filings: Array<Filing> = []
  for (let i = 0; i < count; i++) {
    const at = (name: string) => `${path}.${name}[${i}]`
    const accessionNumber = asString(accession[i], at("accessionNumber"))
    if (!/^\d{10}-\d{2}-\d{6}$/.test(accessionNumber)) {
      problem(at("accessionNumber"), `expected an accession number like 0000320193-25-000079, got ${accessionNumber}`)
    }
    const primaryDocument = asString(cell("primaryDocument", i), at("primaryDocument"))
    const reportDate = optionalText(cell("reportDate", i), at("reportDate"))
    const isXbrl = cell("isXBRL", i)
    filings.push({
      accession: accessionNumber,
      form: asString(cell("form", i), at("form")),
      filedAt: asDate(cell("filingDate", i), at("filingDate")),
      acceptedAt: readAcceptance(
        asString(cell("acceptanceDateTime", i), at("acceptanceDateTime")),
        at("acceptanceDateTime")
      ),
      reportDate: reportDate === null ? null : asDate(reportDate, at("reportDate")),
      primaryDocument,
      primaryDocDescription: optionalText(cell("primaryDocDescription", i), at("primaryDocDescription")),
      items: optionalText(cell("items", i), at("items")),
      isXbrl: isXbrl === undefined || isXbrl === null ? false : flag(isXbrl, at("isXBRL")),
      url: filingDocumentUrl(cik, accessionNumber, primaryDocument)
    })
  }
  return filings
}

const stringList = (value: unknown, path: string): ReadonlyArray<string> =>
  value === undefined || value === null
    ? []
    : asArray(value, path).map((item, i) => asOptionalString(item, `${path}[${i}]`) ?? "")

/** Reads the company header of a submissions document. */
const readCompany = (root: JsonObject): Company => {
  const formerNames = asArray(root.formerNames ?? [], "$.formerNames").map((value, i) => {
    const path = `$.formerNames[${i}]`
    const entry = asObject(value, path)
    return {
      name: asString(field(entry, "name", path), `${path}.name`),
      to: asOptionalString(entry.to, `${path}.to`) ?? ""
    }
  })
  return {
    cik: asCik(field(root, "cik", "$"), "$.cik"),
    name: asString(field(root, "name", "$"), "$.name"),
    tickers: stringList(root.tickers, "$.tickers"),
    // Aligned with `tickers`; an exchange the feed leaves null stays an empty string to keep the alignment.
    exchanges: stringList(root.exchanges, "$.exchanges"),
    sic: optionalText(root.sic, "$.sic"),
    sicDescription: optionalText(root.sicDescription, "$.sicDescription"),
    fiscalYearEnd: optionalText(root.fiscalYearEnd, "$.fiscalYearEnd"),
    // Newest first: by the end of the period the name was used (stable for ties).
    formerNames: formerNames
      .map((entry, index) => ({ ...entry, index }))
      .sort((a, b) => (a.to === b.to ? a.index - b.index : a.to < b.to ? 1 : -1))
      .map((entry) => entry.name)
  }
}

/** Parses a submissions JSON text: company, `filings.recent` (feed order: newest first) and the older pages. */
export const parseSubmissions = (text: string): Result.Result<Submissions, SecFormatError> =>
  runParser("submissions", () => {
    const root = asObject(parseExactJson(text), "$")
    const company = readCompany(root)
    const filingsObject = asObject(field(root, "filings", "$"), "$.filings")
    const recent = asObject(field(filingsObject, "recent", "$.filings"), "$.filings.recent")
    const olderFiles = asArray(filingsObject.files ?? [], "$.filings.files").map((value, i) => {
      const path = `$.filings.files[${i}]`
      const entry = asObject(value, path)
      return {
        name: asString(field(entry, "name", path), `${path}.name`),
        filingFrom: asDate(field(entry, "filingFrom", path), `${path}.filingFrom`),
        filingTo: asDate(field(entry, "filingTo", path), `${path}.filingTo`)
      }
    })
    return { company, filings: readFilingColumns(recent, company.cik, "$.filings.recent"), olderFiles }
  })

/**
 * Parses one older page of a submissions feed (`CIK##########-submissions-###.json`, named in `filings.files`):
 * the same columnar arrays as `filings.recent`, at the top level. The page does not carry the CIK, so the caller
 * passes it (it builds the document addresses).
 */
export const parseSubmissionsPage = (text: string, cik: string): Result.Result<ReadonlyArray<Filing>, SecFormatError> =>
  runParser("submissions_page", () => {
    const companyCik = asCik(cik, "cik")
    return readFilingColumns(asObject(parseExactJson(text), "$"), companyCik, "$")
  })
