/**
 * A start's progress lines (StartProgress.ts), on the test clock: one every 5 s naming each step under way and how
 * far along it is, saying whether the port is open yet, then, once the server listens, what is still missing until
 * nothing is; a watched piece of work leaves the lines when it says it is over.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Logger, Ref } from "effect"
import { TestClock } from "effect/testing"
import { START_PROGRESS_EVERY_MS, startProgress } from "../src/StartProgress.ts"

/** The messages logged while `effect` runs. */
const logged = <A, E>(effect: (lines: Array<string>) => Effect.Effect<A, E>) => {
  const lines: Array<string> = []
  const capture = Logger.make(({ message }) => {
    lines.push((Array.isArray(message) ? message : [message]).map(String).join(" "))
  })
  return effect(lines).pipe(Effect.provide(Logger.layer([capture])))
}

describe("start progress lines", () => {
  it.effect("a line every 5 s with each step and how far along, until stop", () =>
    logged((lines) =>
      Effect.gen(function* () {
        const progress = yield* startProgress()
        let written = 0
        let running = true
        yield* progress.watch("generating the history in a child process", () =>
          running ? `${written} of 428 assets written` : false
        )
        const gate = yield* Deferred.make<void>()
        const step = yield* Effect.forkChild(progress.during("loading the filings", Deferred.await(gate)))
        yield* Effect.yieldNow

        yield* TestClock.adjust(START_PROGRESS_EVERY_MS - 1)
        expect(lines).toEqual([])
        yield* TestClock.adjust(1)
        expect(lines).toEqual([
          "starting, 5 s so far: loading the filings; generating the history in a child process (0 of 428 assets written); not listening yet"
        ])

        written = 212
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(step)
        yield* TestClock.adjust(START_PROGRESS_EVERY_MS)
        expect(lines[1]).toBe(
          "starting, 10 s so far: generating the history in a child process (212 of 428 assets written); not listening yet"
        )

        // Not due yet: a tick from work that does not yield writes nothing.
        progress.tick()
        expect(lines).toHaveLength(2)

        running = false
        yield* TestClock.adjust(START_PROGRESS_EVERY_MS)
        expect(lines[2]).toBe("starting, 15 s so far: opening the service; not listening yet")
        expect(progress.doing()).toEqual([])

        yield* progress.stop
        yield* TestClock.adjust(10 * START_PROGRESS_EVERY_MS)
        expect(lines).toHaveLength(3)
      }).pipe(Effect.scoped)
    )
  )

  it.effect("the port open, then listening: a line at least every 10 s naming what is missing, until nothing is", () =>
    logged((lines) =>
      Effect.gen(function* () {
        const progress = yield* startProgress()
        const gate = yield* Deferred.make<void>()
        let copied = "equity_facts: 10,000 rows"
        const step = yield* Effect.forkChild(progress.during("loading the filings", Deferred.await(gate), () => copied))
        yield* Effect.yieldNow
        yield* progress.answering
        expect(progress.doing()).toEqual(["loading the filings (equity_facts: 10,000 rows)"])
        yield* TestClock.adjust(START_PROGRESS_EVERY_MS)
        expect(lines).toEqual([
          "starting, 5 s so far: loading the filings (equity_facts: 10,000 rows); the port is open and answers 503 (Retry-After: 1) until the service is open"
        ])
        copied = "equity_facts: 90,000 rows"
        yield* TestClock.adjust(START_PROGRESS_EVERY_MS)
        expect(lines[1]).toContain("(equity_facts: 90,000 rows); the port is open")
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(step)

        // Listening: each line names what /readyz would, until it names nothing; then the lines are over.
        const missing = yield* Ref.make<ReadonlyArray<string>>(["crypto baselines: 3 of 428 assets ready"])
        yield* progress.listening(Ref.get(missing))
        yield* TestClock.adjust(START_PROGRESS_EVERY_MS)
        expect(lines[2]).toBe(
          "warming up, 15 s so far: crypto baselines: 3 of 428 assets ready; listening, answering 503 (Retry-After: 1) for what is not ready yet"
        )
        for (let ready = 100; ready <= 400; ready += 100) {
          yield* Ref.set(missing, [`crypto baselines: ${ready} of 428 assets ready`])
          yield* TestClock.adjust(START_PROGRESS_EVERY_MS)
        }
        expect(lines).toHaveLength(7)
        expect(lines[6]).toMatch(/^warming up, 35 s so far: crypto baselines: 400 of 428 assets ready;/)
        // Never more than 10 s between two lines, from the first to the last.
        expect(START_PROGRESS_EVERY_MS).toBeLessThanOrEqual(10_000)

        yield* Ref.set(missing, [])
        yield* TestClock.adjust(10 * START_PROGRESS_EVERY_MS)
        expect(lines).toHaveLength(7)
      }).pipe(Effect.scoped)
    )
  )
})
