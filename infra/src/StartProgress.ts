/**
 * What a starting server is doing, said at least every few seconds until it listens: a first start on an empty
 * data folder creates the embedded database, loads the simulated filings and generates a year of simulated
 * crypto history, which together take tens of seconds; a line every `everyMs` names each step under way and how
 * far along it is, so a start is never silent for longer than that.
 *
 * Steps are begun and ended by the code that does them (`during`); a step may say how far along it is
 * (`detail`), read each time a line is written. The lines stop when `stop` runs (the server listens) or the
 * scope closes. The clock is Effect's, so a test drives the lines with `TestClock`.
 */
import { Clock, Effect, Fiber, type Scope } from "effect"
import { flushLogLines } from "./LogLines.ts"

export interface StartProgress {
  /** Runs `effect` as the step `what` (`detail`: how far along, read for each line). */
  readonly during: <A, E, R>(
    what: string,
    effect: Effect.Effect<A, E, R>,
    detail?: () => string | undefined
  ) => Effect.Effect<A, E, R>
  /**
   * Reports work going on elsewhere (a child process) as a step while `state` answers a string (how far along);
   * once it answers `false` the work is over and the step leaves the lines.
   */
  readonly watch: (what: string, state: () => string | false) => Effect.Effect<void>
  /**
   * For work that runs for seconds without yielding (the timer cannot fire meanwhile): writes the line now, at
   * once, when the last one is `everyMs` old or more. Cheap otherwise; call it as often as convenient.
   */
  readonly tick: () => void
  /** No more lines (the server listens). */
  readonly stop: Effect.Effect<void>
}

/** A progress line this often while the start goes on. */
export const START_PROGRESS_EVERY_MS = 5000

/** A start's progress reporter, writing its lines until `stop` or the end of the scope. */
export const startProgress = (
  everyMs: number = START_PROGRESS_EVERY_MS
): Effect.Effect<StartProgress, never, Scope.Scope> =>
  Effect.gen(function* () {
    const startedAt = yield* Clock.currentTimeMillis
    let lastLineAt = startedAt
    let stopped = false
    const steps = new Map<number, { readonly what: string; readonly detail?: () => string | undefined }>()
    const watched: Array<{ readonly what: string; readonly state: () => string | false }> = []
    let next = 0
    const line = Effect.gen(function* () {
      const seconds = Math.round(((yield* Clock.currentTimeMillis) - startedAt) / 1000)
      const doing = [...steps.values()].map((s) => {
        const detail = s.detail?.()
        return detail === undefined ? s.what : `${s.what} (${detail})`
      })
      for (const w of watched) {
        const state = w.state()
        if (state !== false) doing.push(`${w.what} (${state})`)
      }
      lastLineAt = yield* Clock.currentTimeMillis
      yield* Effect.logInfo(
        `starting, ${seconds} s so far: ${doing.length === 0 ? "opening the service" : doing.join("; ")}; not listening yet`
      )
    })
    const fiber = yield* Effect.forkScoped(Effect.forever(Effect.andThen(Effect.sleep(everyMs), line)))
    const context = yield* Effect.context<never>()
    const lineIfDue = Effect.gen(function* () {
      if (stopped || (yield* Clock.currentTimeMillis) - lastLineAt < everyMs) return
      yield* line
      // The server's logger writes a turn's lines when the turn ends; this turn may not end for a while.
      flushLogLines()
    })
    return {
      during: (what, effect, detail) =>
        Effect.acquireUseRelease(
          Effect.sync(() => {
            const id = next++
            steps.set(id, detail === undefined ? { what } : { what, detail })
            return id
          }),
          () => effect,
          (id) => Effect.sync(() => steps.delete(id))
        ),
      watch: (what, state) => Effect.sync(() => void watched.push({ what, state })),
      tick: () => Effect.runSyncWith(context)(lineIfDue),
      stop: Effect.andThen(
        Effect.sync(() => {
          stopped = true
        }),
        Fiber.interrupt(fiber)
      )
    }
  })

/** A reporter that writes nothing (starts that are not `serve`'s). */
export const noStartProgress: StartProgress = {
  during: (_what, effect) => effect,
  watch: () => Effect.void,
  tick: () => undefined,
  stop: Effect.void
}
