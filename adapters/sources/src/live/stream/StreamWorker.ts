/**
 * The worker thread the venues' market streams run on (`WorkerStreams.ts` starts it): the shared connection
 * manager (`runMarketStream`) with each venue's protocol, reading every frame here, into a board whose changes
 * cross to the answering thread as compact records (`BoardWire.ts`). Nothing of a frame is allocated on the thread
 * that answers requests.
 *
 * Messages in (`ToStreamWorker`): `start` a venue (its base URLs and timeout; the protocol is the venue's own),
 * its `instruments` whenever the followed set changes (the answering thread keeps the listing jobs and the asset
 * directory), and `stop` (every stream interrupted: each publishes its stopped health, the last records are sent,
 * then `stopped`). Messages out: the board's messages, `log` lines (the answering thread writes them with its
 * logger), `stopped`.
 */
import { parentPort, workerData } from "node:worker_threads"
import { makeQuoteBoard } from "@market-data/core"
import { Effect, Fiber, Logger } from "effect"
import type { Instrument, LiveVenue } from "../Venue.ts"
import { okxTopicUrl } from "../venues/okx/Stream.ts"
import { type BoardMessage, makeBoardWriter } from "./BoardWire.ts"
import { emptyStats, type MarketStreamStats, runMarketStream } from "./MarketStream.ts"
import { StreamProtocols } from "./Protocols.ts"
import { lowerThreadPriority } from "./ThreadPriority.ts"

/** What the answering thread gives the worker at its start (`new Worker(url, { workerData })`). */
export interface StreamWorkerData {
  /** The worker thread's niceness (`MARKET_DATA_STREAM_THREAD_NICE`; 0: as the process). */
  readonly nice?: number | undefined
}

/** What the answering thread sends. */
export type ToStreamWorker =
  | {
      readonly type: "start"
      readonly venue: LiveVenue
      readonly baseUrl: string
      /** OKX's business endpoint (its candles), where it has a base URL of its own. */
      readonly businessBaseUrl?: string | undefined
      readonly timeoutMs: number
      /** How often the stream takes the instrument set as it is (default: the manager's). */
      readonly followEveryMs?: number | undefined
    }
  | { readonly type: "instruments"; readonly venue: LiveVenue; readonly instruments: ReadonlyArray<Instrument> }
  | { readonly type: "stop" }

/** What the worker sends. */
export type FromStreamWorker =
  | BoardMessage
  | { readonly type: "log"; readonly level: "Info" | "Warn" | "Error" | "Debug"; readonly message: string }
  | { readonly type: "stopped" }

const port = parentPort
if (port === null) throw new Error("StreamWorker.ts runs as a worker thread (WorkerStreams.ts starts it)")

const send = (message: FromStreamWorker, transfer?: ReadonlyArray<ArrayBuffer>) =>
  port.postMessage(message, transfer as Array<ArrayBuffer> | undefined)

// Below the answering thread's priority, so that a request arriving while frames are read runs first.
const nice = (workerData as StreamWorkerData | null)?.nice ?? 0
if (nice > 0) {
  const r = lowerThreadPriority(nice)
  send({
    type: "log",
    level: r.applied ? "Debug" : "Info",
    message: r.applied
      ? `live streams: the stream worker thread (${r.tid}) runs at niceness ${r.nice}`
      : `live streams: the stream worker thread runs at the process's priority (${r.reason})`
  })
}

const stats = new Map<string, MarketStreamStats>()
const writer = makeBoardWriter(makeQuoteBoard(), send, { statsOf: (venue) => stats.get(venue) })
/** Each venue's followed instruments, as the answering thread last sent them (a new map object per change). */
const followed = new Map<string, ReadonlyMap<string, Instrument>>()
const fibers = new Map<string, Fiber.Fiber<void>>()

const textOf = (message: unknown): string =>
  (Array.isArray(message) ? message : [message]).map((m) => (typeof m === "string" ? m : String(m))).join(" ")

/** Log lines go to the answering thread, which writes them in the service's format. */
const forwardLogs = Logger.layer([
  Logger.make((options) => {
    const level = options.logLevel
    send({
      type: "log",
      level: level === "Warn" || level === "Error" || level === "Debug" ? level : "Info",
      message: textOf(options.message)
    })
  })
])

const start = (m: Extract<ToStreamWorker, { type: "start" }>) => {
  const protocol = StreamProtocols[m.venue]
  if (protocol === undefined || fibers.has(m.venue)) return
  const s = emptyStats()
  stats.set(m.venue, s)
  if (!followed.has(m.venue)) followed.set(m.venue, new Map())
  const stream = runMarketStream(
    protocol,
    {
      baseUrl: m.baseUrl,
      url: m.venue === "okx" && m.businessBaseUrl !== undefined ? okxTopicUrl(m.baseUrl, m.businessBaseUrl) : undefined,
      instruments: () => followed.get(m.venue) ?? new Map(),
      timeoutMs: m.timeoutMs,
      ...(m.followEveryMs === undefined ? {} : { followEveryMs: m.followEveryMs })
    },
    writer.board,
    s
  )
  fibers.set(m.venue, Effect.runFork(stream.pipe(Effect.provide(forwardLogs))))
}

const stop = async () => {
  await Effect.runPromise(Fiber.interruptAll([...fibers.values()]))
  fibers.clear()
  writer.flush()
  send({ type: "stopped" })
}

port.on("message", (m: ToStreamWorker) => {
  switch (m.type) {
    case "start":
      start(m)
      return
    case "instruments":
      followed.set(m.venue, new Map(m.instruments.map((i) => [i.symbol, i] as const)))
      return
    case "stop":
      void stop()
      return
  }
})
