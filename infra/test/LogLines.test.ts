/**
 * The server's log lines are written once per event-loop turn (`LogLines.ts`): the lines of one turn in one
 * console write, in order, each formatted as the unbatched logger formats it; `flushLogLines` writes what waits
 * at once.
 */
import { Console, Effect, Logger } from "effect"
import { describe, expect, it } from "vitest"
import { flushLogLines, perTurnConsole } from "../src/LogLines.ts"

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
