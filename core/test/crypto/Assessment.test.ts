import { describe, expect, it } from "vitest"
import { cascadeRisk, flow, isExtreme, positioning, AssessmentThresholds as T } from "../../src/crypto/Assessment.ts"

const eps = 0.1 // percentiles have one decimal

describe("positioning@1", () => {
  const p = (fundingPctl: number, oiChangePctl: number, fundingBand: "neutral" | "stretched" = "neutral") =>
    positioning({ fundingPctl, oiChangePctl, fundingBand })
  it("crowded_long at funding >= 90 with open interest building (>= 70), on both sides of each threshold", () => {
    expect(p(T.positioning.crowded, T.positioning.oiBuilding)).toBe("crowded_long")
    expect(p(T.positioning.crowded - eps, T.positioning.oiBuilding)).toBe("leaning_long")
    expect(p(T.positioning.crowded, T.positioning.oiBuilding - eps)).toBe("leaning_long")
  })
  it("crowded_long whenever the band is stretched", () => {
    expect(p(50, 10, "stretched")).toBe("crowded_long")
  })
  it("crowded_short at funding <= 10 with open interest building", () => {
    expect(p(10, 70)).toBe("crowded_short")
    expect(p(10 + eps, 70)).toBe("leaning_short")
    expect(p(10, 70 - eps)).toBe("leaning_short")
  })
  it("leaning at >= 70 / <= 30, balanced between", () => {
    expect(p(70, 0)).toBe("leaning_long")
    expect(p(70 - eps, 0)).toBe("balanced")
    expect(p(30, 0)).toBe("leaning_short")
    expect(p(30 + eps, 0)).toBe("balanced")
    expect(p(50, 99)).toBe("balanced")
  })
})

describe("flow@1", () => {
  const f = (v: number, pctl: number) => flow({ netDeltaPctOfOi: v, pctl })
  it("buying states need net buying and a high percentile", () => {
    expect(f(1, 90)).toBe("strong_buying")
    expect(f(1, 90 - eps)).toBe("buying")
    expect(f(1, 70)).toBe("buying")
    expect(f(1, 70 - eps)).toBe("balanced")
    expect(f(-1, 95)).toBe("balanced")
  })
  it("selling states need net selling and a low percentile", () => {
    expect(f(-1, 10)).toBe("strong_selling")
    expect(f(-1, 10 + eps)).toBe("selling")
    expect(f(-1, 30)).toBe("selling")
    expect(f(-1, 30 + eps)).toBe("balanced")
    expect(f(1, 5)).toBe("balanced")
    expect(f(0, 50)).toBe("balanced")
  })
})

describe("cascade_risk@1", () => {
  const calm = { fundingPctl: 50, oiChangePctl: 50, liqIntensityPctl: 50, return24hPctl: 50 }
  it("scores one point per stress sign, each on both sides of its threshold", () => {
    expect(cascadeRisk(calm)).toEqual({ level: "low", points: 0 })
    expect(cascadeRisk({ ...calm, fundingPctl: 90 }).points).toBe(1)
    expect(cascadeRisk({ ...calm, fundingPctl: 90 - eps }).points).toBe(0)
    expect(cascadeRisk({ ...calm, fundingPctl: 10 }).points).toBe(1)
    expect(cascadeRisk({ ...calm, fundingPctl: 10 + eps }).points).toBe(0)
    expect(cascadeRisk({ ...calm, oiChangePctl: 80 }).points).toBe(1)
    expect(cascadeRisk({ ...calm, oiChangePctl: 80 - eps }).points).toBe(0)
    expect(cascadeRisk({ ...calm, liqIntensityPctl: 80 }).points).toBe(1)
    expect(cascadeRisk({ ...calm, liqIntensityPctl: 80 - eps }).points).toBe(0)
    expect(cascadeRisk({ ...calm, return24hPctl: 10 }).points).toBe(1)
    expect(cascadeRisk({ ...calm, return24hPctl: 90 }).points).toBe(1)
    expect(cascadeRisk({ ...calm, return24hPctl: 89.9 }).points).toBe(0)
  })
  it("maps points to levels", () => {
    expect(cascadeRisk({ ...calm, fundingPctl: 95 }).level).toBe("moderate")
    expect(cascadeRisk({ ...calm, fundingPctl: 95, oiChangePctl: 85 }).level).toBe("elevated")
    expect(cascadeRisk({ ...calm, fundingPctl: 95, oiChangePctl: 85, liqIntensityPctl: 99 }).level).toBe("high")
    expect(cascadeRisk({ fundingPctl: 2, oiChangePctl: 85, liqIntensityPctl: 99, return24hPctl: 1 })).toEqual({
      level: "high",
      points: 4
    })
  })
})

describe("extreme tails", () => {
  it("are at or below 5 and at or above 95", () => {
    expect([0, 5, 95, 100].map(isExtreme)).toEqual([true, true, true, true])
    expect([5.1, 50, 94.9].map(isExtreme)).toEqual([false, false, false])
  })
})
