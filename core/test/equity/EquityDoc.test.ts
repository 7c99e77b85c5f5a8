import { describe, expect, it } from "vitest"
import { EquityDoc } from "../../src/equity/EquityDoc.ts"
import { LineItems } from "../../src/equity/Statements.ts"

describe("equity documentation", () => {
  it("documents every line item with its concepts in priority order", () => {
    for (const line of LineItems) {
      expect(EquityDoc).toContain(`| \`${line.key}\` | ${line.unit} |`)
      if (line.concepts.length > 1) {
        expect(EquityDoc).toContain(line.concepts.map((c) => `\`${c}\``).join(", then "))
      }
    }
  })

  it("states the TTM, derived-quarter, rounding, insider and holders rules", () => {
    for (const phrase of [
      "Q4 = FY - nine months",
      "FY + year to date - the prior year's same year to date",
      "4 decimal places, half to even",
      "A Form 4/A replaces the Form 4 it amends",
      "over the 90 days ending today",
      "`change_shares` compares with the filer's report for the previous quarter",
      "dei:EntityCommonStockSharesOutstanding",
      "Every company of the SEC's ticker list",
      "never `unknown_asset`"
    ]) {
      expect(EquityDoc).toContain(phrase)
    }
  })
})
