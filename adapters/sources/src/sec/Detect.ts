/**
 * Which SEC format a document is, told from its content (not its file name): what an ingester needs before it
 * picks a parser. JSON formats by their top-level keys, XML formats by their root element.
 */
import type { SecFormat } from "./SecFormatError.ts"
import { xmlRootName } from "./Xml.ts"

const xmlRoots: Readonly<Record<string, SecFormat>> = {
  ownershipDocument: "form4",
  informationTable: "13f_information_table",
  edgarSubmission: "13f_primary_document"
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The format of `text`, or null when it is none of the SEC formats the parsers read. */
export const detectSecFormat = (text: string): SecFormat | null => {
  const body = text.replace(/^\uFEFF?\s+/, "")
  if (body.startsWith("<")) {
    const root = xmlRootName(body)
    return root === null ? null : (xmlRoots[root] ?? null)
  }
  if (!body.startsWith("{")) return null
  let json: unknown
  try {
    json = JSON.parse(body)
  } catch {
    return null
  }
  if (!isObject(json)) return null
  if (isObject(json.facts) && "entityName" in json) return "companyfacts"
  if (isObject(json.filings) && "cik" in json) return "submissions"
  if (Array.isArray(json.accessionNumber) && Array.isArray(json.filingDate)) return "submissions_page"
  if (Array.isArray(json.fields) && Array.isArray(json.data)) return "company_tickers_exchange"
  const first = Object.values(json)[0]
  if (isObject(first) && "cik_str" in first && "ticker" in first) return "company_tickers"
  return null
}
