/**
 * A weighted token bucket on Effect's `Clock`: `capacity` units refill evenly over `windowMs`, and `take(w)` waits
 * (sleeping on the Clock, so `TestClock` drives it) until `w` units are available, then spends them. Takers are
 * served one at a time in arrival order, so a heavy request is not starved by light ones. Each venue's published
 * request-weight limit is one bucket (see `LiveDoc.ts` for the numbers); SEC EDGAR's is 10 requests per second.
 */
import { Clock, Effect, Semaphore } from "effect"

export interface RequestLimiter {
  /** Waits until `weight` units (default 1) may be spent, then spends them. */
  readonly take: (weight?: number) => Effect.Effect<void>
  readonly capacity: number
  readonly windowMs: number
  /** The weight spent in the minute before now (what `sources` and the metrics report per venue). */
  readonly spentLastMinute: Effect.Effect<number>
}

export const makeLimiter = (options: { readonly capacity: number; readonly windowMs: number }): RequestLimiter => {
  const { capacity, windowMs } = options
  const ratePerMs = capacity / windowMs
  const gate = Semaphore.makeUnsafe(1)
  let tokens = capacity
  let lastMs: number | undefined
  /** Spends of the last minute: times and weights, oldest first. */
  const spends: Array<readonly [number, number]> = []
  const prune = (nowMs: number) => {
    let k = 0
    while (k < spends.length && (spends[k] as readonly [number, number])[0] <= nowMs - 60_000) k++
    if (k > 0) spends.splice(0, k)
  }
  const take = (weight = 1) =>
    gate.withPermit(
      Effect.gen(function* () {
        const w = Math.min(weight, capacity)
        const nowMs = yield* Clock.currentTimeMillis
        tokens = Math.min(capacity, tokens + (lastMs === undefined ? 0 : (nowMs - lastMs) * ratePerMs))
        lastMs = nowMs
        if (tokens < w) {
          const waitMs = Math.ceil((w - tokens) / ratePerMs)
          yield* Effect.sleep(waitMs)
          const after = yield* Clock.currentTimeMillis
          tokens = Math.min(capacity, tokens + (after - nowMs) * ratePerMs)
          lastMs = after
        }
        tokens -= w
        const spentMs = yield* Clock.currentTimeMillis
        prune(spentMs)
        spends.push([spentMs, w])
      })
    )
  const spentLastMinute = Effect.map(Clock.currentTimeMillis, (nowMs) => {
    prune(nowMs)
    return spends.reduce((sum, [, w]) => sum + w, 0)
  })
  return { take, capacity, windowMs, spentLastMinute }
}
