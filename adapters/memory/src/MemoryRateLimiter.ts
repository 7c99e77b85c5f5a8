/** In-memory twin of the rate limiter: per scope, the one-second counting buckets still inside the window. */
import { bucketCounts, bucketOf, RateLimiter, type RateWindow, windowOf } from "@market-data/core"
import { Effect, Layer } from "effect"

/** Scopes are swept of buckets that no longer count every this many requests, so idle scopes go away. */
const SWEEP_EVERY = 10_000

/** The counting buckets with synchronous operations, shared by the rate limiter and the ledger's metered charge. */
export interface MemoryRateCounter {
  readonly consumeNow: (scope: string, limit: number, nowMs: number) => RateWindow
  readonly peekNow: (scope: string, limit: number, nowMs: number) => RateWindow
}

export const makeMemoryRateCounter = (): MemoryRateCounter => {
  /** Per scope: bucket start -> count, at most 62 entries. */
  const scopes = new Map<string, Map<number, number>>()
  let sinceSweep = 0
  const live = (scope: string, nowMs: number): Map<number, number> => {
    const buckets = scopes.get(scope) ?? new Map<number, number>()
    for (const start of buckets.keys()) if (!bucketCounts(start, nowMs)) buckets.delete(start)
    return buckets
  }
  const sweep = (nowMs: number) => {
    if (++sinceSweep < SWEEP_EVERY) return
    sinceSweep = 0
    for (const [scope, buckets] of scopes) {
      for (const start of buckets.keys()) if (!bucketCounts(start, nowMs)) buckets.delete(start)
      if (buckets.size === 0) scopes.delete(scope)
    }
  }
  return {
    consumeNow: (scope, limit, nowMs) => {
      sweep(nowMs)
      const buckets = live(scope, nowMs)
      const before = windowOf([...buckets], limit, nowMs, false)
      if (before.remaining <= 0) return before
      const start = bucketOf(nowMs)
      buckets.set(start, (buckets.get(start) ?? 0) + 1)
      scopes.set(scope, buckets)
      return windowOf([...buckets], limit, nowMs, true)
    },
    peekNow: (scope, limit, nowMs) => windowOf([...live(scope, nowMs)], limit, nowMs, true)
  }
}

export const makeMemoryRateLimiter = (
  counter: MemoryRateCounter = makeMemoryRateCounter()
): RateLimiter["Service"] => ({
  consume: (scope, limit, nowMs) => Effect.sync(() => counter.consumeNow(scope, limit, nowMs)),
  peek: (scope, limit, nowMs) => Effect.sync(() => counter.peekNow(scope, limit, nowMs))
})

export const layerMemoryRateLimiter: Layer.Layer<RateLimiter> = Layer.sync(RateLimiter)(() => makeMemoryRateLimiter())
