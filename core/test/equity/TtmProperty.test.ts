/**
 * Property: whatever the quarterly figures, the TTM the statements logic computes equals the sum of the four
 * quarters computed independently (BigInt on cents), whether the quarters were filed, derived from year-to-date
 * figures (Q4 = FY - nine months), or only year-to-date figures exist (FY + YTD - prior YTD).
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { FactBook, lineItem } from "../../src/equity/Statements.ts"
import { fact } from "./fixtures.ts"

const ENDS = ["03-31", "06-30", "09-30", "12-31"]
const STARTS = ["01-01", "04-01", "07-01", "10-01"]

const cents = (n: bigint) => {
  const neg = n < 0n
  const a = neg ? -n : n
  const s = `${a / 100n}.${String(a % 100n).padStart(2, "0")}`
  return neg ? `-${s}` : s
}
const plain = (n: bigint) =>
  cents(n)
    .replace(/\.?0+$/, "")
    .replace(/^-?$/, "0") || "0"

/** 10-Q/10-K facts of three calendar years: income by quarter and YTD (Q4 only in FY), cash flow YTD only. */
const factsOf = (quarters: ReadonlyArray<bigint>, style: "income" | "cash_flow") => {
  const concept = style === "income" ? "Revenues" : "NetCashProvidedByUsedInOperatingActivities"
  const out = []
  for (let y = 0; y < 3; y++) {
    const year = 2023 + y
    for (let q = 0; q < 4; q++) {
      const filing = {
        accession: `0000000001-${year}-00000${q}`,
        filed: `${year + (q === 3 ? 1 : 0)}-${q === 3 ? "02" : ["04", "07", "10"][q]}-15`
      }
      const ytd = quarters.slice(y * 4, y * 4 + q + 1).reduce((s, x) => s + x, 0n)
      if (style === "income" && q < 3) {
        out.push(
          fact(concept, cents(quarters[y * 4 + q] as bigint), `${year}-${STARTS[q]}`, `${year}-${ENDS[q]}`, filing)
        )
      }
      out.push(fact(concept, cents(ytd), `${year}-01-01`, `${year}-${ENDS[q]}`, filing))
    }
  }
  return out
}

describe("TTM on arbitrary figures", () => {
  it("equals the independent sum of the last four quarters at every quarter end of the last two years", () =>
    fc.assert(
      fc.property(
        fc.array(fc.bigInt({ min: -10_000_000_000n, max: 10_000_000_000n }), { minLength: 12, maxLength: 12 }),
        fc.constantFrom("income" as const, "cash_flow" as const),
        (quarters, style) => {
          const book = new FactBook(factsOf(quarters, style))
          const line = lineItem(style === "income" ? "revenue" : "operating_cash_flow")
          for (let i = 4; i < 12; i++) {
            const year = 2023 + Math.floor(i / 4)
            const end = `${year}-${ENDS[i % 4]}`
            const expected = quarters.slice(i - 3, i + 1).reduce((s, x) => s + x, 0n)
            const ttm = book.ttm(line, end)
            expect([end, ttm?.value.toFixed()]).toEqual([end, plain(expected)])
          }
        }
      ),
      { numRuns: 150 }
    ))
})
