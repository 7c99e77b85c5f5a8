/**
 * Which ticker of a company carries its market cap and price multiples (`classesBlockPriceFigures`), on the shapes
 * of the SEC's real ticker list: preferreds beside the common stock, an OTC ordinary beside an ADR, notes, and two
 * common classes.
 */
import { describe, expect, it } from "vitest"
import type { Company } from "../../src/equity/Model.ts"
import { classesBlockPriceFigures } from "../../src/equity/plane/State.ts"

const company = (name: string, tickers: ReadonlyArray<string>, otc: ReadonlyArray<string> = []): Company => ({
  cik: "1",
  name,
  tickers,
  exchanges: tickers.map((t) => (otc.includes(t) ? "OTC" : "NYSE")),
  sic: null,
  sicDescription: null,
  fiscalYearEnd: null,
  formerNames: []
})

const given = (c: Company, t: string) => classesBlockPriceFigures(c, t) === undefined

describe("share classes and market cap", () => {
  it("a single ticker carries the figures", () => {
    expect(given(company("Apple", ["AAPL"]), "AAPL")).toBe(true)
  })

  it("the common stock carries them beside its preferreds (JPM, BAC), the preferreds do not", () => {
    const jpm = company("JPMorgan", ["JPM", "JPM-PD", "AMJ", "JPM-PK", "JPM-PL"])
    expect(given(jpm, "JPM")).toBe(true)
    for (const t of ["JPM-PD", "JPM-PK", "AMJ"]) expect(given(jpm, t)).toBe(false)
    expect(classesBlockPriceFigures(jpm, "JPM-PD")?.detail).toContain("(JPM)")
    expect(classesBlockPriceFigures(jpm, "AMJ")?.detail).toContain("primary ticker JPM")
    const bac = company("Bank of America", ["BAC", "BML-PG", "BAC-PE", "BAC-PL"])
    expect(given(bac, "BAC")).toBe(true)
    expect(given(bac, "BML-PG")).toBe(false)
  })

  it("warrants, units and rights are not the common stock", () => {
    const spac = company("Acquisition Corp", ["ACQ", "ACQ-WT", "ACQ-UN", "ACQ-RT"])
    expect(given(spac, "ACQ")).toBe(true)
    for (const t of ["ACQ-WT", "ACQ-UN", "ACQ-RT"]) expect(given(spac, t)).toBe(false)
  })

  it("an ADR carries them, the OTC ordinary beside it does not (ASML, ASMLF); notes likewise (T, TBC)", () => {
    const asml = company("ASML", ["ASML", "ASMLF"], ["ASMLF"])
    expect([given(asml, "ASML"), given(asml, "ASMLF")]).toEqual([true, false])
    // OTC lines alone: the first is the primary.
    const lvmh = company("LVMH", ["LVMUY", "LVMHF"], ["LVMUY", "LVMHF"])
    expect([given(lvmh, "LVMUY"), given(lvmh, "LVMHF")]).toEqual([true, false])
    const att = company("AT&T", ["T", "TBC", "T-PA", "T-PC"])
    expect([given(att, "T"), given(att, "TBC"), given(att, "T-PA")]).toEqual([true, false, false])
  })

  it("two common classes (BRK-A/BRK-B, GOOGL/GOOG) carry none: no share count per class is on file", () => {
    for (const c of [company("Berkshire", ["BRK-B", "BRK-A"]), company("Alphabet", ["GOOGL", "GOOG"])]) {
      for (const t of c.tickers) {
        const why = classesBlockPriceFigures(c, t)
        expect(why?.reason).toBe("not_applicable")
        expect(why?.detail).toContain("share classes")
      }
    }
  })
})
