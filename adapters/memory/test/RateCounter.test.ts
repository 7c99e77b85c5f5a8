/**
 * The memory rate counter keeps a running total and prunes once per bucket; it must answer exactly what
 * `windowOf` computes from a plain log of the same admissions (the reference), whatever the order of times.
 */
import { bucketCounts, bucketOf, type RateWindow, windowOf } from "@market-data/core"
import { describe, expect, it } from "vitest"
import { makeMemoryRateCounter } from "../src/MemoryRateLimiter.ts"

/**
 * The reference: every scope's buckets in a plain map, buckets that no longer count deleted at every call (so a
 * unit aged out stays out if the clock steps back), the window from `windowOf` over a copy of the list.
 */
const reference = () => {
  const scopes = new Map<string, Map<number, number>>()
  const live = (scope: string, nowMs: number) => {
    const buckets = scopes.get(scope) ?? new Map<number, number>()
    for (const start of buckets.keys()) if (!bucketCounts(start, nowMs)) buckets.delete(start)
    return buckets
  }
  return {
    consume: (scope: string, limit: number, nowMs: number): RateWindow => {
      const buckets = live(scope, nowMs)
      const before = windowOf([...buckets], limit, nowMs, false)
      if (before.remaining <= 0) return before
      const start = bucketOf(nowMs)
      buckets.set(start, (buckets.get(start) ?? 0) + 1)
      scopes.set(scope, buckets)
      return windowOf([...buckets], limit, nowMs, true)
    },
    peek: (scope: string, limit: number, nowMs: number): RateWindow =>
      windowOf([...live(scope, nowMs)], limit, nowMs, true)
  }
}

/** Deterministic pseudo-random numbers (mulberry32). */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

describe("memory rate counter", () => {
  it("answers as windowOf over a log of the same admissions, over random times, scopes and limits", () => {
    for (let seed = 1; seed <= 20; seed++) {
      const next = random(seed)
      const counter = makeMemoryRateCounter()
      const ref = reference()
      let now = 1_700_000_000_000 + Math.floor(next() * 1000)
      for (let i = 0; i < 3000; i++) {
        // Mostly forward in small steps, sometimes a jump past the window, sometimes a step back.
        const r = next()
        now += r < 0.8 ? Math.floor(next() * 400) : r < 0.9 ? Math.floor(next() * 90_000) : -Math.floor(next() * 3000)
        const scope = `k${Math.floor(next() * 3)}`
        const limit = 5 + Math.floor(next() * 40)
        if (next() < 0.2) expect(counter.peekNow(scope, limit, now)).toEqual(ref.peek(scope, limit, now))
        else expect(counter.consumeNow(scope, limit, now)).toEqual(ref.consume(scope, limit, now))
      }
    }
  })
})
