/**
 * The rate limit: at most `limit` units in any rolling 60-second window per scope (a key ID, or
 * `ip:<address>` for keyless callers). Every request spends one unit, paid or free.
 *
 * Admissions are counted in one-second buckets. A bucket counts while any instant of it lies inside the
 * last 60 s, so an admission sees every unit of the last 60 s (and at most one second more): never more than
 * `limit` in any rolling window, and a unit returns at most one second later than an exact log would give it
 * back. Fixed clock-minute buckets would let twice the limit through around a minute boundary.
 */
import { Context, type Effect } from "effect"

/** The state of a scope's window after (or without) spending. */
export interface RateWindow {
  readonly limit: number
  /** Units left now. */
  readonly remaining: number
  /** When the next unit returns (epoch ms); now when none is spent. */
  readonly resetAtMs: number
  /** Whether the request that asked was admitted. */
  readonly allowed: boolean
}

/** Length of the rolling window. */
export const WINDOW_MS = 60_000
/** Width of one counting bucket. */
export const BUCKET_MS = 1_000

/** Start of the bucket containing `nowMs`. */
export const bucketOf = (nowMs: number): number => Math.floor(nowMs / BUCKET_MS) * BUCKET_MS

/** Whether a bucket starting at `startMs` still counts at `nowMs`. */
export const bucketCounts = (startMs: number, nowMs: number): boolean => startMs > nowMs - WINDOW_MS - BUCKET_MS

export class RateLimiter extends Context.Service<
  RateLimiter,
  {
    /** Spends one unit if one is left; reports the window either way. */
    readonly consume: (scope: string, limit: number, nowMs: number) => Effect.Effect<RateWindow>
    /** Reports the window without spending. */
    readonly peek: (scope: string, limit: number, nowMs: number) => Effect.Effect<RateWindow>
  }
>()("market-data/core/RateLimiter") {}

/**
 * The window from the counting buckets of a scope (`[startMs, count]`, any order; buckets that no longer
 * count are ignored). Pure; each store keeps the buckets its own way.
 */
export const windowOf = (
  buckets: ReadonlyArray<readonly [number, number]>,
  limit: number,
  nowMs: number,
  allowed: boolean
): RateWindow => {
  let used = 0
  let oldest: number | undefined
  for (const [start, count] of buckets) {
    if (count <= 0 || !bucketCounts(start, nowMs)) continue
    used += count
    if (oldest === undefined || start < oldest) oldest = start
  }
  return {
    limit,
    remaining: Math.max(0, limit - used),
    resetAtMs: oldest === undefined ? nowMs : oldest + WINDOW_MS + BUCKET_MS,
    allowed
  }
}

/** Seconds until a unit returns, at least 1. */
export const secondsUntilReset = (w: RateWindow, nowMs: number): number =>
  Math.max(1, Math.ceil((w.resetAtMs - nowMs) / 1000))
