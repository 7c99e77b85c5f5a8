/**
 * The venues' market streams on a worker thread of their own (`StreamWorker.ts`), applied to the answering
 * thread's `QuoteBoard` as they arrive (`BoardWire.ts`). One worker carries every venue's streams.
 *
 * Why: at whole-market pace (5,000 frames a second across four venues) reading frames allocates about 20 MB a
 * second; on the thread that answers, its young-generation collections come between requests and answers wait
 * behind them (paid `price` p99 2.5x to 8x its value without the frames, on a quiet machine). On the worker, the
 * frames' garbage is the worker's heap's: the answering thread receives at most one message every
 * `FLUSH_MS` (10 ms) of numeric records and applies them in place.
 *
 * The answering thread keeps what needs the service: the listing jobs and the asset directory (each venue's
 * followed instruments are sent whenever the set changes, looked at every `FOLLOW_EVERY_MS`), the log (the
 * worker's lines are written here, in the service's format) and the stream counters (`stats`, with each health).
 * If the worker stops (a crash), its venues' streams turn down with the reason, which sends their books to
 * REST (`CryptoFeed`'s streamed set), and a new worker is started after a backoff (1 s doubling to 30 s, with
 * jitter). Interrupting the effect stops the streams (each publishes its stopped health), then the worker.
 */
import { Worker } from "node:worker_threads"
import type { QuoteBoard } from "@market-data/core"
import { Clock, Effect, type Scope } from "effect"
import type { Instrument, LiveVenue } from "../Venue.ts"
import { type BoardMessage, makeBoardReader } from "./BoardWire.ts"
import type { MarketStreamStats } from "./MarketStream.ts"
import type { FromStreamWorker, StreamWorkerData, ToStreamWorker } from "./StreamWorker.ts"

const WORKER_URL = new URL(import.meta.url.endsWith(".ts") ? "./StreamWorker.ts" : "./StreamWorker.js", import.meta.url)

/** How often the followed instruments are compared (a change is sent at once), and the log drained. */
const FOLLOW_EVERY_MS = 250
/** How long a stop waits for the worker to publish its streams' stopped health before it is terminated. */
const STOP_WAIT_MS = 2_000
const RESTART_BASE_MS = 1_000
const RESTART_CAP_MS = 30_000

/** One venue's streams as the worker runs them. */
export interface WorkerVenue {
  readonly venue: LiveVenue
  readonly baseUrl: string
  readonly businessBaseUrl?: string | undefined
  readonly timeoutMs: number
  /** How often the stream takes the instrument set as it is (default: the manager's, 10 s). */
  readonly followEveryMs?: number | undefined
  /** The venue's perpetuals now (the same map object while unchanged). */
  readonly instruments: () => ReadonlyMap<string, Instrument>
}

/** One worker's life: started, fed, and its end (a crash's reason, or undefined when stopped by us). */
const runWorker = (
  venues: ReadonlyArray<WorkerVenue>,
  board: QuoteBoard,
  stats: Partial<Record<LiveVenue, MarketStreamStats>> | undefined,
  workerUrl: URL,
  data: StreamWorkerData
): Effect.Effect<string, never, Scope.Scope> =>
  Effect.gen(function* () {
    let ended: string | undefined
    let stopped: (() => void) | undefined
    const logs: Array<Extract<FromStreamWorker, { type: "log" }>> = []
    const reader = makeBoardReader(board, (venue, s) => {
      const into = stats?.[venue as LiveVenue]
      if (into !== undefined) Object.assign(into, s)
    })
    const worker = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const w = new Worker(workerUrl, { workerData: data })
        // The server keeps the process alive; the streams alone do not.
        w.unref()
        w.on("message", (m: FromStreamWorker) => {
          if (m.type === "log") {
            if (logs.length < 1_000) logs.push(m)
          } else if (m.type === "stopped") {
            stopped?.()
          } else {
            try {
              reader.apply(m as BoardMessage)
            } catch (e) {
              ended = `stream worker's message not applied: ${e instanceof Error ? e.message : String(e)}`
            }
          }
        })
        w.on("error", (e) => {
          ended = `stream worker failed: ${e instanceof Error ? e.message : String(e)}`
        })
        w.on("exit", (code) => {
          ended ??= `stream worker exited with code ${code}`
          stopped?.()
        })
        return w
      }),
      (w) =>
        ended !== undefined
          ? Effect.promise(() => w.terminate())
          : Effect.promise(
              () =>
                new Promise<void>((resolve) => {
                  // Each stream publishes its stopped health and the last records come first; then the thread ends.
                  const timer = setTimeout(resolve, STOP_WAIT_MS)
                  stopped = () => {
                    clearTimeout(timer)
                    resolve()
                  }
                  w.postMessage({ type: "stop" } satisfies ToStreamWorker)
                })
            ).pipe(Effect.andThen(Effect.promise(() => w.terminate())))
    )
    const sent = new Map<LiveVenue, ReadonlyMap<string, Instrument>>()
    const sendInstruments = () => {
      for (const v of venues) {
        const now = v.instruments()
        if (sent.get(v.venue) === now) continue
        sent.set(v.venue, now)
        worker.postMessage({
          type: "instruments",
          venue: v.venue,
          instruments: [...now.values()]
        } satisfies ToStreamWorker)
      }
    }
    sendInstruments()
    for (const v of venues)
      worker.postMessage({
        type: "start",
        venue: v.venue,
        baseUrl: v.baseUrl,
        businessBaseUrl: v.businessBaseUrl,
        timeoutMs: v.timeoutMs,
        followEveryMs: v.followEveryMs
      } satisfies ToStreamWorker)
    while (ended === undefined) {
      yield* Effect.sleep(FOLLOW_EVERY_MS)
      sendInstruments()
      for (const line of logs.splice(0)) yield* Effect.logWithLevel(line.level)(line.message)
    }
    for (const line of logs.splice(0)) yield* Effect.logWithLevel(line.level)(line.message)
    return ended
  })

/**
 * Runs `venues`' market streams on one worker thread into `board` until interrupted (never fails: a worker that
 * stops is replaced, its venues down meanwhile). `stats` (by venue) is kept current from the worker's counters.
 * `options.workerUrl`: the worker's entry (a test's wraps `StreamWorker.ts` to make it fail); `options.nice`: the
 * worker thread's niceness (`ThreadPriority.ts`; default 0, the process's).
 */
export const runMarketStreamsOnWorker = (
  venues: ReadonlyArray<WorkerVenue>,
  board: QuoteBoard,
  stats?: Partial<Record<LiveVenue, MarketStreamStats>>,
  options: { readonly workerUrl?: URL | undefined; readonly nice?: number | undefined } = {}
): Effect.Effect<void> =>
  Effect.gen(function* () {
    let attempt = 0
    while (true) {
      const startedMs = yield* Clock.currentTimeMillis
      const reason = yield* Effect.scoped(
        runWorker(venues, board, stats, options.workerUrl ?? WORKER_URL, { nice: options.nice })
      )
      const nowMs = yield* Clock.currentTimeMillis
      // The venues' streams are down until a new worker has them up again: their books go to REST meanwhile.
      for (const v of venues) {
        const before = board.health(v.venue)
        board.setHealth(v.venue, {
          components: before?.components ?? [],
          newestMs: before?.newestMs ?? 0,
          lastFrameMs: before?.lastFrameMs ?? 0,
          up: false,
          sinceMs: nowMs,
          reason,
          detail: before?.detail
        })
      }
      attempt = nowMs - startedMs > 60_000 ? 1 : attempt + 1
      const delayMs = Math.min(RESTART_CAP_MS, RESTART_BASE_MS * 2 ** (attempt - 1))
      yield* Effect.logWarning(`live streams: ${reason}; a new stream worker in ${Math.round(delayMs / 1000)} s`)
      yield* Effect.sleep(Math.round(delayMs * (0.5 + Math.random() / 2)))
    }
  })
