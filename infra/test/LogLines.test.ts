/**
 * The server's log lines are written once per event-loop turn (`LogLines.ts`): the lines of one turn in one
 * console write, in order, each formatted as the unbatched logger formats it; `flushLogLines` writes what waits
 * at once.
 */
import { Cause, Console, Effect, Logger, Redacted } from "effect"
import { describe, expect, it } from "vitest"
import { flushLogLines, formatJsonLine, perTurnConsole } from "../src/LogLines.ts"

const capture = () => {
  const writes: Array<string> = []
  const sink: Console.Console = Object.assign(Object.create(globalThis.console), {
    log: (line: string) => {
      writes.push(line)
    }
  })
  return { writes, sink }
}

const logTwo = (sink: Console.Console) =>
  Effect.runPromise(
    Effect.gen(function* () {
      yield* Effect.logInfo("first").pipe(Effect.annotateLogs({ n: 1 }))
      yield* Effect.logWarning("second")
    }).pipe(
      Effect.provide(Logger.layer([perTurnConsole(Logger.formatJson)])),
      Effect.provideService(Console.Console, sink)
    )
  )

describe("log lines written once per event-loop turn", () => {
  it("writes one turn's lines in one write, in order, as JSON lines", async () => {
    const { writes, sink } = capture()
    await logTwo(sink)
    await new Promise((resolve) => setImmediate(resolve))
    expect(writes).toHaveLength(1)
    const lines = (writes[0] as string).split("\n").map((l) => JSON.parse(l))
    expect(lines.map((l) => [l.message, l.level])).toEqual([
      ["first", "INFO"],
      ["second", "WARN"]
    ])
    expect(lines[0].annotations).toEqual({ n: 1 })
  })

  it("flushLogLines writes the waiting lines at once", async () => {
    const { writes, sink } = capture()
    await logTwo(sink)
    flushLogLines()
    expect(writes).toHaveLength(1)
    flushLogLines()
    expect(writes).toHaveLength(1)
  })
})

describe("formatJsonLine: Logger.formatJson's bytes", () => {
  // Each event formatted by both loggers from the same options (same date, fiber and annotations).
  const both = (event: Effect.Effect<void>) =>
    Effect.runSync(
      Effect.gen(function* () {
        const lines: Array<readonly [string, string]> = []
        const pair = Logger.make((options) => {
          lines.push([formatJsonLine.log(options), Logger.formatJson.log(options)])
        })
        yield* event.pipe(Effect.provide(Logger.layer([pair])))
        return lines
      })
    )

  const cases: ReadonlyArray<readonly [string, Effect.Effect<void>]> = [
    [
      "a request line",
      Effect.logInfo("request").pipe(
        Effect.annotateLogs({ method: "GET", request_id: "r-1", op: "read", status: 200, ms: 0.4, credits: 1 })
      )
    ],
    ["no annotations", Effect.logWarning("plain")],
    ["several messages", Effect.logInfo("a", 1, true, null)],
    ["text to escape", Effect.logInfo('quote " backslash \\ newline \n tab \t \u0001 \u2028 é')],
    ["numbers JSON cannot hold", Effect.logInfo("n").pipe(Effect.annotateLogs({ a: Number.NaN, b: -0, c: Infinity }))],
    ["an object annotation", Effect.logInfo("o").pipe(Effect.annotateLogs({ o: { x: 1, y: [1, "2"] } }))],
    ["a bigint annotation", Effect.logInfo("b").pipe(Effect.annotateLogs({ big: 12345678901234567890n }))],
    ["a redacted annotation", Effect.logInfo("r").pipe(Effect.annotateLogs({ secret: Redacted.make("hunter2") }))],
    ["an error message", Effect.logError(new Error("boom"))],
    ["an error among the messages", Effect.logError("failed", new Error("inner"))],
    ["a cause", Effect.logError("failed", Cause.fail(new Error("inner")))],
    ["a span", Effect.logInfo("s").pipe(Effect.withLogSpan("step"))],
    ["undefined values", Effect.logInfo("u").pipe(Effect.annotateLogs({ gone: undefined, kept: "k" }))]
  ]

  for (const [name, event] of cases) {
    it(`writes ${name} as Logger.formatJson does`, () => {
      const lines = both(event)
      expect(lines).toHaveLength(1)
      const [ours, theirs] = lines[0] as readonly [string, string]
      expect(ours).toBe(theirs)
    })
  }

  it("keeps redaction where a value needs it", () => {
    const [[ours]] = both(Effect.logInfo("r").pipe(Effect.annotateLogs({ secret: Redacted.make("hunter2") }))) as [
      readonly [string, string]
    ]
    expect(ours).not.toContain("hunter2")
  })
})
