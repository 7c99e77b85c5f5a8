/** In-memory twin of the rate limiter: per scope, the one-second counting buckets still inside the window. */
import {
  admitsUnit,
  BUCKET_MS,
  bucketCounts,
  bucketOf,
  RateLimiter,
  type RateWindow,
  WINDOW_MS
} from "@market-data/core"
import { Effect, Layer } from "effect"

/** Scopes are swept of buckets that no longer count every this many requests, so idle scopes go away. */
const SWEEP_EVERY = 10_000

/** The counting buckets with synchronous operations, shared by the rate limiter and the ledger's metered charge. */
export interface MemoryRateCounter {
  readonly consumeNow: (scope: string, limit: number, nowMs: number) => RateWindow
  readonly peekNow: (scope: string, limit: number, nowMs: number) => RateWindow
}

/** A scope's counting buckets and their total. */
interface Buckets {
  /** Bucket start -> count (> 0), at most 62 entries. */
  readonly counts: Map<number, number>
  /** The sum of `counts`. */
  used: number
  /** The bucket `nowMs` was in at the last prune: which buckets count changes only at bucket boundaries. */
  prunedIn: number
}

export const makeMemoryRateCounter = (): MemoryRateCounter => {
  const scopes = new Map<string, Buckets>()
  let sinceSweep = 0
  /** Drops the buckets that no longer count; a no-op within the bucket of the last prune. */
  const prune = (b: Buckets, nowMs: number) => {
    const bucket = bucketOf(nowMs)
    if (b.prunedIn === bucket) return
    b.prunedIn = bucket
    for (const [start, count] of b.counts) {
      if (bucketCounts(start, nowMs)) continue
      b.counts.delete(start)
      b.used -= count
    }
  }
  /** The window as `windowOf` computes it from the same buckets, without copying them. */
  const windowNow = (b: Buckets | undefined, limit: number, nowMs: number, allowed: boolean): RateWindow => {
    let oldest: number | undefined
    if (b !== undefined) for (const start of b.counts.keys()) if (oldest === undefined || start < oldest) oldest = start
    return {
      limit,
      remaining: Math.max(0, limit - (b?.used ?? 0)),
      resetAtMs: oldest === undefined ? nowMs : oldest + WINDOW_MS + BUCKET_MS,
      allowed
    }
  }
  const sweep = (nowMs: number) => {
    if (++sinceSweep < SWEEP_EVERY) return
    sinceSweep = 0
    for (const [scope, b] of scopes) {
      prune(b, nowMs)
      if (b.counts.size === 0) scopes.delete(scope)
    }
  }
  return {
    consumeNow: (scope, limit, nowMs) => {
      sweep(nowMs)
      let b = scopes.get(scope)
      if (b !== undefined) prune(b, nowMs)
      if (!admitsUnit(b?.used ?? 0, limit)) return windowNow(b, limit, nowMs, false)
      if (b === undefined) {
        b = { counts: new Map(), used: 0, prunedIn: bucketOf(nowMs) }
        scopes.set(scope, b)
      }
      const start = bucketOf(nowMs)
      b.counts.set(start, (b.counts.get(start) ?? 0) + 1)
      b.used += 1
      return windowNow(b, limit, nowMs, true)
    },
    peekNow: (scope, limit, nowMs) => {
      const b = scopes.get(scope)
      if (b !== undefined) prune(b, nowMs)
      return windowNow(b, limit, nowMs, true)
    }
  }
}

export const makeMemoryRateLimiter = (
  counter: MemoryRateCounter = makeMemoryRateCounter()
): RateLimiter["Service"] => ({
  consume: (scope, limit, nowMs) => Effect.sync(() => counter.consumeNow(scope, limit, nowMs)),
  peek: (scope, limit, nowMs) => Effect.sync(() => counter.peekNow(scope, limit, nowMs))
})

export const layerMemoryRateLimiter: Layer.Layer<RateLimiter> = Layer.sync(RateLimiter)(() => makeMemoryRateLimiter())
