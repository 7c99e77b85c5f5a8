import { describe, expect, it } from "vitest"
import { AssessmentThresholds, CascadeRule, FlowRule, PositioningRule } from "../../src/crypto/Assessment.ts"
import { CORE_MIN_PERP_VENUES, TickerRenames } from "../../src/crypto/Directory.ts"
import { cryptoDomainsDoc } from "../../src/crypto/DomainsDoc.ts"
import { FundingBands, FundingBandThresholds } from "../../src/crypto/Funding.ts"
import { PrintPrecision } from "../../src/crypto/Measures.ts"
import { StructureRule } from "../../src/crypto/Structure.ts"
import { MinBaselineN } from "../../src/Percentile.ts"
import { RankMetrics } from "../../src/Registry.ts"

describe("crypto domains documentation", () => {
  it("names every rule with its version, every band with its threshold, and the minimum n", () => {
    for (const rule of [PositioningRule, FlowRule, CascadeRule, StructureRule]) expect(cryptoDomainsDoc).toContain(rule)
    for (const band of FundingBands) expect(cryptoDomainsDoc).toContain(`\`${band}\``)
    for (const t of Object.values(FundingBandThresholds)) expect(cryptoDomainsDoc).toContain(String(t))
    expect(cryptoDomainsDoc).toContain(`fewer than ${MinBaselineN} samples`)
    expect(cryptoDomainsDoc).toContain(`\`f >= ${AssessmentThresholds.positioning.crowded}\``)
    expect(cryptoDomainsDoc).toContain(`\`p >= ${AssessmentThresholds.flow.strong}\``)
  })

  it("says how much history each percentile stands on, which periods count, and the printed precision", () => {
    for (const field of ["`n`", "`n_1y`", "`rate_pctl_n`", "first funding settlement", "Only complete periods"])
      expect(cryptoDomainsDoc).toContain(field)
    expect(cryptoDomainsDoc).toContain(`${PrintPrecision.significantDigits} significant digits`)
    expect(cryptoDomainsDoc).toContain(`at most ${PrintPrecision.ratioDecimals} decimal places`)
  })

  it("defines every rank metric's measure", () => {
    for (const m of RankMetrics) expect(cryptoDomainsDoc, m).toContain(`\`${m}\``)
  })

  it("documents the asset directory: listings, multipliers, renames, permanence, the slug and tier rules", () => {
    for (const text of [
      "### The asset directory",
      "In live mode the directory is the crypto universe",
      "names in `detail` every instrument it skipped",
      "`rank` scans the whole `core` tier",
      "`1000PEPEUSDT`",
      "`SHIB1000USDT`",
      "`BTCDOMUSDT`",
      "`alive: false`",
      "`symbol_collision`",
      "fallback: the ticker in lower case",
      `at least ${CORE_MIN_PERP_VENUES} venues`
    ])
      expect(cryptoDomainsDoc, text).toContain(text)
    for (const r of TickerRenames) expect(cryptoDomainsDoc).toContain(`\`${r.from}\` to \`${r.to}\``)
  })
})
