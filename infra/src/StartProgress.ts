/**
 * What a starting server is doing, said at least every few seconds until it is ready: a first start on an empty
 * data folder creates the embedded database, loads the simulated filings and generates a year of simulated
 * crypto history, which together take tens of seconds; a line every `everyMs` names each step under way and how
 * far along it is, so a start is never silent for longer than that.
 *
 * Steps are begun and ended by the code that does them (`during`); a step may say how far along it is
 * (`detail`), read each time a line is written. The lines say where the start stands: not listening yet, the
 * port open and answering 503 (`answering`, `EarlyListener.ts`), then listening and warming up (`listening`),
 * when each line names what the service still lacks (what `/readyz` names) until nothing is missing. The lines
 * stop then, at `stop`, or when the scope closes. The clock is Effect's, so a test drives the lines with
 * `TestClock`.
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
  /** The steps under way and how far along, as the lines name them (the early listener's `/readyz`). */
  readonly doing: () => ReadonlyArray<string>
  /** The port is open and answers 503 until the service is open (`EarlyListener.ts`). */
  readonly answering: Effect.Effect<void>
  /**
   * The server listens: from now on each line names what is still `missing` (`/readyz`'s list), until nothing is,
   * and then the lines stop.
   */
  readonly listening: (missing: Effect.Effect<ReadonlyArray<string>>) => Effect.Effect<void>
  /** No more lines. */
  readonly stop: Effect.Effect<void>
}

/** A progress line this often while the start goes on. */
export const START_PROGRESS_EVERY_MS = 5000

/** A start's progress reporter, writing its lines until it is ready, `stop` or the end of the scope. */
export const startProgress = (
  everyMs: number = START_PROGRESS_EVERY_MS
): Effect.Effect<StartProgress, never, Scope.Scope> =>
  Effect.gen(function* () {
    const startedAt = yield* Clock.currentTimeMillis
    let lastLineAt = startedAt
    let stopped = false
    let phase: "starting" | "answering" | "listening" = "starting"
    let missing: Effect.Effect<ReadonlyArray<string>> = Effect.succeed([])
    const steps = new Map<number, { readonly what: string; readonly detail?: () => string | undefined }>()
    const watched: Array<{ readonly what: string; readonly state: () => string | false }> = []
    let next = 0
    const doing = () => {
      const now = [...steps.values()].map((s) => {
        const detail = s.detail?.()
        return detail === undefined ? s.what : `${s.what} (${detail})`
      })
      for (const w of watched) {
        const state = w.state()
        if (state !== false) now.push(`${w.what} (${state})`)
      }
      return now
    }
    /** Writes a line; false once listening with nothing missing (no line then: the start is over). */
    const line = Effect.gen(function* () {
      const seconds = Math.round(((yield* Clock.currentTimeMillis) - startedAt) / 1000)
      lastLineAt = yield* Clock.currentTimeMillis
      if (phase === "listening") {
        const lacking = yield* missing
        if (lacking.length === 0) return false
        yield* Effect.logInfo(
          `warming up, ${seconds} s so far: ${[...lacking, ...doing()].join("; ")}; listening, answering 503 (Retry-After: 1) for what is not ready yet`
        )
        return true
      }
      const now = doing()
      yield* Effect.logInfo(
        `starting, ${seconds} s so far: ${now.length === 0 ? "opening the service" : now.join("; ")}; ${
          phase === "answering"
            ? "the port is open and answers 503 (Retry-After: 1) until the service is open"
            : "not listening yet"
        }`
      )
      return true
    })
    const fiber = yield* Effect.forkScoped(
      Effect.gen(function* () {
        while (yield* Effect.andThen(Effect.sleep(everyMs), line)) {}
        stopped = true
      })
    )
    const context = yield* Effect.context<never>()
    const lineIfDue = Effect.gen(function* () {
      // Listening, the timer's lines come (the loop turns); `missing` may wait on the database besides.
      if (stopped || phase === "listening" || (yield* Clock.currentTimeMillis) - lastLineAt < everyMs) return
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
      doing,
      answering: Effect.sync(() => {
        phase = "answering"
      }),
      listening: (lacking) =>
        Effect.sync(() => {
          phase = "listening"
          missing = lacking
        }),
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
  doing: () => [],
  answering: Effect.void,
  listening: () => Effect.void,
  stop: Effect.void
}
