/**
 * XBRL `companyfacts` (https://data.sec.gov/api/xbrl/companyfacts/CIK##########.json): every fact a company
 * filed, grouped by taxonomy, concept and unit. Each fact becomes one `Fact`, values kept as the filed decimals.
 */
import type { Result } from "effect"
import type { Fact } from "./EquityModel.ts"
import {
  asArray,
  asCik,
  asDate,
  asDecimal,
  asInteger,
  asObject,
  asOptionalString,
  asString,
  field,
  parseExactJson,
  runParser
} from "./ExactJson.ts"
import type { SecFormatError } from "./SecFormatError.ts"

/** A parsed companyfacts document: the entity and all its facts, in document order. */
export interface CompanyFacts {
  /** CIK without leading zeros. */
  readonly cik: string
  readonly entityName: string
  readonly facts: ReadonlyArray<Fact>
}

/**
 * The facts of one concept (`$.facts.<taxonomy>.<concept>`, its parsed value), appended to `out` in document
 * order. Throws `FormatProblem` naming the place; shared by the whole-document and the streaming parser.
 */
export const conceptFacts = (taxonomy: string, concept: string, conceptValue: unknown, out: Array<Fact>): void => {
  const conceptPath = `$.facts.${taxonomy}.${concept}`
  const units = asObject(field(asObject(conceptValue, conceptPath), "units", conceptPath), `${conceptPath}.units`)
  for (const [unit, rowsValue] of Object.entries(units)) {
    const rows = asArray(rowsValue, `${conceptPath}.units.${unit}`)
    rows.forEach((rowValue, index) => {
      const path = `${conceptPath}.units.${unit}[${index}]`
      const row = asObject(rowValue, path)
      const fy = row.fy
      out.push({
        taxonomy,
        concept,
        unit,
        value: asDecimal(field(row, "val", path), `${path}.val`),
        start: row.start === undefined ? null : asDate(row.start, `${path}.start`),
        end: asDate(field(row, "end", path), `${path}.end`),
        fy: fy === undefined || fy === null ? null : asInteger(fy, `${path}.fy`),
        fp: asOptionalString(row.fp, `${path}.fp`),
        form: asString(field(row, "form", path), `${path}.form`),
        accession: asString(field(row, "accn", path), `${path}.accn`),
        filed: asDate(field(row, "filed", path), `${path}.filed`),
        frame: asOptionalString(row.frame, `${path}.frame`)
      })
    })
  }
}

/** Parses a companyfacts JSON text. Every taxonomy, concept and unit is kept; no value goes through a float. */
export const parseCompanyFacts = (text: string): Result.Result<CompanyFacts, SecFormatError> =>
  runParser("companyfacts", () => {
    const root = asObject(parseExactJson(text), "$")
    const cik = asCik(field(root, "cik", "$"), "$.cik")
    const entityName = asString(field(root, "entityName", "$"), "$.entityName")
    const facts: Array<Fact> = []
    const taxonomies = asObject(field(root, "facts", "$"), "$.facts")
    for (const [taxonomy, conceptsValue] of Object.entries(taxonomies)) {
      const concepts = asObject(conceptsValue, `$.facts.${taxonomy}`)
      for (const [concept, conceptValue] of Object.entries(concepts))
        conceptFacts(taxonomy, concept, conceptValue, facts)
    }
    return { cik, entityName, facts }
  })
