/**
 * The live ingestion's schedules (Effect `Schedule`):
 * - `pollSchedule(cadence, offset, jitter)`: the next run starts at the next multiple of the cadence (UTC) plus a
 *   small offset (so a 15-minute bar has closed at the venue) and a random jitter (so instances and venues do not
 *   fire in lockstep).
 * - `backoffSchedule(cap)`: after a failed run, retry after 2 s, 4 s, 8 s ... (jittered by ±20 %), capped at
 *   `cap`, but never sooner than the source's own `Retry-After`.
 * A job is `run` retried with the backoff until it succeeds, then repeated on the poll schedule; the first run is
 * the backfill (every job resumes from what the store already holds).
 */
import { Duration, Effect, Random, Schedule } from "effect"
import type { SourceError } from "./Http.ts"

/** Milliseconds from `nowMs` to the next `cadenceMs` boundary plus `offsetMs` (never less than 1 ms). */
export const delayToNextSlot = (nowMs: number, cadenceMs: number, offsetMs: number): number => {
  const next = Math.floor((nowMs - offsetMs) / cadenceMs) * cadenceMs + cadenceMs + offsetMs
  return Math.max(1, next - nowMs)
}

/** `cadenceMs` may be a function, read at each run (the books job's cycle follows the number of instruments). */
export const pollSchedule = (
  cadenceMs: number | (() => number),
  offsetMs: number,
  jitterMs: number
): Schedule.Schedule<number> => {
  const cadence = typeof cadenceMs === "number" ? () => cadenceMs : cadenceMs
  return Schedule.spaced(cadence()).pipe(
    Schedule.modifyDelay(({ now }) =>
      Effect.map(
        jitterMs > 0 ? Random.nextIntBetween(0, jitterMs) : Effect.succeed(0),
        (jitter) => delayToNextSlot(now, cadence(), offsetMs) + jitter
      )
    )
  )
}

export const BACKOFF_BASE_MS = 2_000

export const backoffSchedule = (capMs: number): Schedule.Schedule<Duration.Duration, SourceError> =>
  Schedule.exponential(BACKOFF_BASE_MS, 2).pipe(
    Schedule.setInputType<SourceError>(),
    Schedule.jittered,
    Schedule.modifyDelay(({ input, duration }) =>
      Effect.succeed(Math.max(Math.min(Duration.toMillis(duration), capMs), input.retryAfterMs ?? 0))
    )
  )
