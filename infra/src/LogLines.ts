/**
 * The server's log lines, written once per event-loop turn. Each line is formatted when it is logged, exactly as
 * `Logger.consoleJson` / `Logger.consoleLogFmt` format it; the lines of one turn then go to the console in one
 * write (the same bytes: the lines joined by newlines), when the turn's I/O is done (`setImmediate`), like the
 * answers they describe (`HttpApp`'s `writeSoon`). Under load the request line of every answer cost one `write`
 * system call of its own: with its formatting, about a sixth of the server's busy time on a paid `read` on the
 * memory store (docs/performance-log.md).
 *
 * Nothing is lost on an ordinary exit: the lines waiting are written on the process's `exit` event, and
 * `flushLogLines` writes them before any line the server writes to stdout itself (startup, shutdown), so the
 * order of stdout is kept. A process killed outright (SIGKILL) loses at most the lines of its last turn.
 */
import { Console, Formatter, Logger } from "effect"

type Sink = Console.Console

let waiting: Array<string> = []
let sink: Sink | undefined
let scheduled = false
let onExit = false

/** Writes the lines waiting, in order, in one console write. */
export const flushLogLines = (): void => {
  if (waiting.length === 0) return
  const lines = waiting
  const to = sink as Sink
  waiting = []
  sink = undefined
  to.log(lines.join("\n"))
}

const flushScheduled = () => {
  scheduled = false
  flushLogLines()
}

const push = (to: Sink, line: string): void => {
  // A line for another console (a test's, a scoped override) first writes what waits for the previous one.
  if (sink !== undefined && sink !== to) flushLogLines()
  sink = to
  waiting.push(line)
  if (!scheduled) {
    scheduled = true
    setImmediate(flushScheduled)
  }
  if (!onExit) {
    onExit = true
    process.on("exit", flushLogLines)
  }
}

/** `format`'s lines on the fiber's console, written once per event-loop turn (see above). */
export const perTurnConsole = (format: Logger.Logger<unknown, string>): Logger.Logger<unknown, void> =>
  Logger.make((options) => push(options.fiber.getRef(Console.Console), format.log(options)))

/** A value `JSON.stringify` writes exactly as `Formatter.formatJson` does (no redaction, bigint or cycle to handle). */
const isPlain = (v: unknown): boolean =>
  v === undefined || v === null || typeof v === "string" || typeof v === "number" || typeof v === "boolean"

const allPlain = (record: Readonly<Record<string, unknown>>): boolean => {
  for (const key in record) if (!isPlain(record[key])) return false
  return true
}

/**
 * `Logger.formatJson`'s line, byte for byte (`Logger.formatStructured`'s record as `Formatter.formatJson` writes it),
 * written with plain `JSON.stringify` when every value in the record is a string, number, boolean or null, as the
 * request line's are. `Formatter.formatJson` runs a replacer on every key (a property lookup, a redaction check, a
 * cycle check and a `WeakMap` a line) to handle redacted values, bigints, errors and cycles: about 3.6 us a line
 * against 0.8 us here, on every answer's request line. Any other value takes `Formatter.formatJson` as before.
 */
export const formatJsonLine: Logger.Logger<unknown, string> = Logger.make((options) => {
  const line = Logger.formatStructured.log(options)
  const message = line.message
  const plain =
    (isPlain(message) || (Array.isArray(message) && message.every(isPlain))) &&
    isPlain(line.cause) &&
    allPlain(line.annotations) &&
    allPlain(line.spans)
  return plain ? JSON.stringify(line) : Formatter.formatJson(line)
})
