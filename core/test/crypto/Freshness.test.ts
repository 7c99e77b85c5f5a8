import { describe, expect, it } from "vitest"
import { DelayedCadences, nextUpdateAtMs, resultFreshness, worstStatus } from "../../src/crypto/Freshness.ts"
import type { SourceStatus } from "../../src/crypto/Market.ts"

const status = (
  venue: string,
  component: SourceStatus["component"],
  newestMs: number,
  cadenceMs: number,
  failing = false
): SourceStatus => ({
  source: "simulated",
  venue,
  component,
  newestMs,
  cadenceMs,
  checkedMs: newestMs,
  failing
})

describe("freshness of a result", () => {
  const m = 60_000
  it("is live within one cadence, delayed up to three, stale beyond", () => {
    const t0 = 1_000_000
    const at = (age: number) => resultFreshness([status("a", "bars", t0, 15 * m)], ["a"], ["bars"], t0 + age)?.status
    expect(at(15 * m)).toBe("live")
    expect(at(15 * m + 1)).toBe("delayed")
    expect(at(DelayedCadences * 15 * m)).toBe("delayed")
    expect(at(DelayedCadences * 15 * m + 1)).toBe("stale")
  })
  it("is stale while the source fails whatever the age, and before anything was delivered", () => {
    expect(resultFreshness([status("a", "bars", 0, 15 * m)], ["a"], ["bars"], 1)?.status).toBe("stale")
    expect(resultFreshness([status("a", "bars", 5, 15 * m, true)], ["a"], ["bars"], 6)?.status).toBe("stale")
  })
  it("takes the worst status, the newest as_of and the earliest next update among the inputs used", () => {
    const statuses = [
      status("a", "bars", 100 * m, 15 * m),
      status("b", "bars", 90 * m, 15 * m),
      status("a", "funding", 60 * m, 480 * m),
      status("c", "bars", 0, 15 * m) // another venue: not used
    ]
    const f = resultFreshness(statuses, ["a", "b"], ["bars", "funding"], 106 * m)
    // b is late (due at 105): its next slot on the 15-minute grid is 120; a's bars are due at 115.
    expect(f).toEqual({ asOfMs: 100 * m, status: "delayed", nextUpdateAtMs: 115 * m })
    const g = resultFreshness(statuses, ["a"], ["bars", "funding"], 101 * m)
    expect(g).toEqual({ asOfMs: 100 * m, status: "live", nextUpdateAtMs: 115 * m })
    expect(resultFreshness(statuses, ["z"], ["bars"], 0)).toBeUndefined()
  })
  it("never schedules the next update in the past", () => {
    expect(nextUpdateAtMs({ newestMs: 0, cadenceMs: 10 }, 50)).toBe(50)
    expect(nextUpdateAtMs({ newestMs: 45, cadenceMs: 10 }, 50)).toBe(55)
    // Late inputs: the next slot on their cadence grid, the same for every call until it passes.
    expect(nextUpdateAtMs({ newestMs: 0, cadenceMs: 10 }, 51)).toBe(60)
    expect(nextUpdateAtMs({ newestMs: 0, cadenceMs: 10 }, 59)).toBe(60)
    expect(worstStatus(["live", "stale", "delayed"])).toBe("stale")
    expect(worstStatus([])).toBe("live")
  })
})
