/**
 * Live mode's market streams (issue #29), against replay venues run on a worker thread (`streams-venue-worker.ts`),
 * so producing frames never shares an event loop with what is measured: the replay Binance USD-M venue
 * (`test/support/replay/binance-venue.ts`) for part (a), the four replay venues (`four-venues.ts`: Binance, Bybit
 * v5, OKX v5, Hyperliquid, each listing its own assets) for parts (b) and (c). Alone: `BENCH_ONLY=streams node
 * bench/run.ts` (no PostgreSQL; 40 to 60 minutes: the start's first history through Hyperliquid's and OKX's REST
 * budgets, then the 10-minute window). `BENCH_STREAMS_PARTS`: `a`, `b` or `ab` (default). Three parts:
 *
 * (a) Ingest throughput of the service's stream reader against the physical anchor, in one run: the venue pushes
 *     `BENCH_STREAMS_FRAMES` (default 200,000) `bookTicker` frames as fast as the sockets drain, over 1,000
 *     subscribed perpetuals on five connections of 200 (as the service spreads them), first to a bare `ws` client
 *     that only `JSON.parse`s each frame (the anchor), then to the same over Node's own WebSocket (undici: the
 *     service's transport), then to the service's own reader in this process: `runMarketStream` with
 *     `binanceStreamProtocol` (Node's WebSocket, the connection manager, the protocol's reader, the symbol map and
 *     unit conversion) into a `QuoteBoard`. Alternating rounds (`BENCH_STREAMS_ROUNDS`, default 3); the ratio is
 *     each round's reader frames/s over its anchor's, the median reported (target >= 0.5x). Beside it, the same
 *     frames without a socket: `JSON.parse` alone against the reader and the board. Then the same on Bybit v5, OKX
 *     v5 and Hyperliquid, each replay alone with part (b)'s count of perpetuals (`test/support/replay/blast.ts`: the
 *     venue's own frames for each book move, as fast as the sockets drain): the anchor subscribes the topics the
 *     reader subscribes (the protocol's names, connections and message rate), so both read the same frames.
 * (b) A service process (`npm start`'s command, live mode on the memory store) pointed at the four venues by their
 *     `MARKET_DATA_*_BASE_URL` and `*_WS_BASE_URL` variables, 1,000 perpetuals (`BENCH_STREAMS_COUNTS`, default
 *     300 Binance, 300 Bybit, 250 OKX, 150 Hyperliquid), measured once every perpetual is streamed and its first
 *     bars were asked (at most `BENCH_STREAMS_BARS_S`, 1,800 s, then `BENCH_STREAMS_SETTLE_S`, 60 s, for the rest of
 *     the first history), at about 5,000 frames a second across the four (each book moving every
 *     `BENCH_STREAMS_INTERVAL_MS`, 300 ms, on average (about 5,500 frames a second in all): a book frame per move on each venue's channel, Binance's
 *     and Bybit's kline frames, Binance's mark array, Bybit's ticker deltas, OKX's mark prices and Hyperliquid's
 *     asset contexts each second): its CPU (user + system from /proc/<pid>/stat) and RSS growth over
 *     `BENCH_STREAMS_WINDOW_S` (default 600 s: the target's 10 minutes), the same with the books still (the venues
 *     then send nothing; the stream's own share is the difference; measured over at most 60 s, followed by one
 *     unmeasured fixed-rate window so no memory-reducing collection the quiet minute started lands in a round), and
 *     the paid `price` p99 with and without the frames, in rounds of one window each (loaded first in odd rounds,
 *     still first in even ones) (`BENCH_STREAMS_PRICE_ROUNDS`, 4): at a fixed `BENCH_STREAMS_RATE` (default: a
 *     quarter of the service's still capacity, at most 300) requests a second of random perpetuals for
 *     `BENCH_STREAMS_RATE_SECONDS` (20), open loop, timed to the microsecond, from a client process of its own
 *     (`streams-client.ts`, at real-time priority where the machine grants it, `BENCH_STREAMS_CLIENT_FIFO`: it
 *     stands for a caller elsewhere; this process's helper threads at the venues' niceness), the rounds' answers
 *     pooled per side
 *     (the target's ratio, loaded p99 <= 1.25x), each window's garbage collections counted from the service's
 *     `--trace-gc` lines (a full collection with the reason V8 gives) and the time the answering thread waited on a
 *     run queue for a core (`/proc/<pid>/task/<pid>/schedstat`, the client's beside it) and its event loop's delay (the
 *     service's `/metrics`); and, after every fixed-rate round, saturated
 *     by autocannon in alternating rounds (10 connections, one perpetual, `BENCH_SECONDS`; whole milliseconds, req/s
 *     beside), so no saturation's garbage is collected in a fixed-rate window. The venues' worker thread shares the machine's cores with the service and the load, as any
 *     co-located producer would. `BENCH_STREAMS_CPU_PROF=<dir>` starts the service with `--cpu-prof` into that
 *     directory (the profile is written when it stops).
 * (c) Book age at answer time with the 1,000 perpetuals: `price` of random perpetuals for 20 s (4 callers), each
 *     answer's bid and ask looked up at the venue that lists the asset (`stalenessOf`: 0 while it is the venue's
 *     current quote, else how long before the answer arrived the venue had replaced it), at 1 move per book per
 *     second and at the loaded pace (target p99 <= 1 s), overall and by venue.
 */
import { type ChildProcess, execFileSync, fork, spawn } from "node:child_process"
import { appendFileSync, readdirSync } from "node:fs"
import { cpus, getPriority, setPriority } from "node:os"
import { fileURLToPath } from "node:url"
import { Worker } from "node:worker_threads"
import { makeQuoteBoard } from "@market-data/core"
import autocannon from "autocannon"
import { Effect, Fiber, References } from "effect"
import WebSocket from "ws"
import { runMarketStream } from "../adapters/sources/src/live/stream/MarketStream.ts"
import type { MarketStreamProtocol, VenueSink } from "../adapters/sources/src/live/stream/Protocol.ts"
import type { Instrument } from "../adapters/sources/src/live/Venue.ts"
import { binanceStreamProtocol } from "../adapters/sources/src/live/venues/binance/Stream.ts"
import { bybitStreamProtocol } from "../adapters/sources/src/live/venues/bybit/Stream.ts"
import { hyperliquidStreamProtocol } from "../adapters/sources/src/live/venues/hyperliquid/Stream.ts"
import { okxStreamProtocol } from "../adapters/sources/src/live/venues/okx/Stream.ts"
import type { ReplaySymbol, ReplayVenueOptions } from "../test/support/replay/binance-venue.ts"
import type { FourVenueOptions } from "../test/support/replay/four-venues.ts"
import {
  askPrices,
  liveServiceEnv,
  measured,
  type PriceAnswer,
  quantile,
  type ServedPerp,
  servedPerps,
  sleep,
  startFakeSec,
  summarize
} from "../test/support/replay/live-service.ts"
import { cpuMsOf, memoryOf, ROOT, runQueueWaitMsOf, startCommand, threadCpuOf, threadShares } from "./process.ts"
import type { ClientResult, ClientWindow } from "./streams-client.ts"
import type { OneVenueName, VenueRequest } from "./streams-venue-worker.ts"

const KEY = `mdk_${"Strmb".repeat(6)}XY`
const PERPETUALS = 1_000
/** Perpetuals per replay venue in parts (b) and (c): `BENCH_STREAMS_COUNTS` (Binance,Bybit,OKX,Hyperliquid). */
const COUNTS = (() => {
  const [binance, bybit, okx, hyperliquid] = (process.env.BENCH_STREAMS_COUNTS ?? "300,300,250,150")
    .split(",")
    .map(Number)
  return { binance: binance ?? 300, bybit: bybit ?? 300, okx: okx ?? 250, hyperliquid: hyperliquid ?? 150 }
})()
const TOTAL = COUNTS.binance + COUNTS.bybit + COUNTS.okx + COUNTS.hyperliquid
/** How long parts (b) and (c) wait for every perpetual's bars before measuring (seconds). */
const BARS_S = Number(process.env.BENCH_STREAMS_BARS_S ?? 1_800)
/** And how long after the last perpetual's first bars were asked (seconds). */
const SETTLE_S = Number(process.env.BENCH_STREAMS_SETTLE_S ?? 60)
const FRAMES = Number(process.env.BENCH_STREAMS_FRAMES ?? 200_000)
const ROUNDS = Math.max(1, Number(process.env.BENCH_STREAMS_ROUNDS ?? 3))
const WINDOW_S = Number(process.env.BENCH_STREAMS_WINDOW_S ?? 600)
const LOAD_SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
/** The books' mean time between moves for about 5,000 frames a second over 1,000 perpetuals (books and klines). */
const LOADED_INTERVAL_MS = Number(process.env.BENCH_STREAMS_INTERVAL_MS ?? 300)
/** The fixed rate of the paid `price` latency measurement (requests a second). */
/**
 * The fixed rate of the paid `price` comparison (requests a second): `BENCH_STREAMS_RATE`, or by default a quarter of
 * what the service answers with the books still (4 callers, random perpetuals), at most 300, so the open loop stays
 * below the service's capacity on a shared machine and measures latency rather than a growing queue.
 */
const RATE_SETTING = process.env.BENCH_STREAMS_RATE
/** Seconds of each fixed-rate window, and the alternating rounds of the `price` comparison. */
const RATE_SECONDS = Number(process.env.BENCH_STREAMS_RATE_SECONDS ?? 20)
const PRICE_ROUNDS = Math.max(1, Number(process.env.BENCH_STREAMS_PRICE_ROUNDS ?? 4))
/**
 * The replay venues' worker thread's niceness (0 to 19; default 10). The venues stand for machines elsewhere: on
 * the bench's two cores, producing 5,000 frames a second at the service's priority took time slices from the
 * service's answering thread that no real venue takes. Each window prints every thread's share of a core.
 */
const VENUE_NICE = Number(process.env.BENCH_STREAMS_VENUE_NICE ?? 10)
/**
 * Quotes each replay venue keeps per book for the book-age lookups (`BENCH_STREAMS_VENUE_HISTORY`, default 512:
 * about 150 s at the loaded pace, longer than any batch of answers waits for its lookup). At the replay's default
 * (4,096 a book, 4 million objects at 1,000 books) the venues' heap churned its old generation at the loaded pace,
 * and its collector's helper threads took the cores the service answers on (run 6 in docs/performance.md).
 */
const VENUE_HISTORY = Number(process.env.BENCH_STREAMS_VENUE_HISTORY ?? 512)

/** The replay venue on its worker thread. */
class VenueWorker {
  private readonly worker = new Worker(new URL("./streams-venue-worker.ts", import.meta.url), {
    workerData: { nice: VENUE_NICE }
  })
  private nextId = 1
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()
  constructor() {
    this.worker.on("message", (m: { id: number; result?: unknown; error?: string }) => {
      const w = this.waiting.get(m.id)
      if (w === undefined) return
      this.waiting.delete(m.id)
      if (m.error !== undefined) w.reject(new Error(m.error))
      else w.resolve(m.result)
    })
  }
  call<T>(request: VenueRequest): Promise<T> {
    const id = this.nextId++
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject })
      this.worker.postMessage({ ...request, id })
    })
  }
  start(options: ReplayVenueOptions) {
    return this.call<{ restUrl: string; wsUrl: string; symbols: ReadonlyArray<ReplaySymbol> }>({
      op: "start",
      options
    })
  }
  startFour(options: FourVenueOptions) {
    return this.call<{
      env: Record<string, string>
      restUrl: string
      wsUrl: string
      symbols: ReadonlyArray<{ venue: string; symbol: string; ticker: string; tokensPerUnit: number }>
    }>({ op: "startFour", options })
  }
  stats() {
    return this.call<{
      ws: { bookFrames: number; klineFrames: number; markFrames: number; connects: number }
      /** The four venues' (parts b and c). */
      byVenue?: Record<
        string,
        { frames: number; connections: number; streamed: number; barsAsked: number; byKind: Record<string, number> }
      >
      connections: number
      subscribedSymbols: number
      moves: number
      limited: number
      weightLastMinute: number
    }>({ op: "stats" })
  }
  terminate() {
    return this.worker.terminate()
  }
}

const median = (xs: ReadonlyArray<number>) => quantile(xs, 0.5)
const round1 = (x: number) => Math.round(x * 10) / 10
const untilTrue = async (what: string, timeoutMs: number, check: () => Promise<boolean>, everyMs = 250) => {
  const t0 = Date.now()
  while (!(await check())) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`)
    await sleep(everyMs)
  }
  return Date.now() - t0
}

// -- (a) ingest throughput ---------------------------------------------------------------------------------------

export interface IngestRound {
  /** The anchor: the `ws` package and JSON.parse. */
  readonly anchorFps: number
  /** Node's WebSocket (undici, the service's transport) and JSON.parse. */
  readonly nodeAnchorFps: number
  readonly readerFps: number
  readonly ratio: number
  readonly nodeRatio: number
  /** The same per busy second of the reading thread (event-loop utilization), whatever the producer's pace. */
  readonly anchorBusyFps: number
  readonly nodeAnchorBusyFps: number
  readonly readerBusyFps: number
  readonly busyRatio: number
  readonly nodeBusyRatio: number
}

export interface IngestResult {
  readonly frames: number
  readonly rounds: ReadonlyArray<IngestRound>
  readonly anchorFps: number
  readonly nodeAnchorFps: number
  readonly readerFps: number
  readonly ratio: number
  readonly nodeRatio: number
  /** Reader over anchor per busy second of the reading thread. */
  readonly busyRatio: number
  readonly nodeBusyRatio: number
  /** The same frames without a socket: JSON.parse alone, and the reader into the board. */
  readonly inProcess: { readonly parseFps: number; readonly readerFps: number; readonly ratio: number }
  readonly malformed: number
}

/**
 * A bare client on `/public/stream`, subscribed to every symbol over as many connections as the service opens (200
 * topics each), that only `JSON.parse`s each frame: over the `ws` package (`kind: "ws"`, the anchor), or over
 * Node's own WebSocket (`"node"`, the transport the service's reader runs on).
 */
const anchorClient = async (
  kind: "ws" | "node",
  wsUrl: string,
  symbols: ReadonlyArray<ReplaySymbol>,
  keep: Array<string> | undefined
) => {
  let count = 0
  let acks = 0
  let target = Number.POSITIVE_INFINITY
  let done: (() => void) | undefined
  const onText = (text: string) => {
    const m = JSON.parse(text) as { id?: unknown }
    if (m.id !== undefined) {
      acks++
      return
    }
    count++
    if (keep !== undefined && keep.length < 100_000) keep.push(text)
    if (count >= target) done?.()
  }
  const topics = symbols.map((s) => `${s.symbol.toLowerCase()}@bookTicker`)
  const groups = Array.from({ length: Math.ceil(topics.length / 200) }, (_, k) => topics.slice(k * 200, (k + 1) * 200))
  const closers: Array<() => void> = []
  await Promise.all(
    groups.map(async (group, k) => {
      const request = JSON.stringify({ method: "SUBSCRIBE", params: group, id: 100 + k })
      if (kind === "ws") {
        const ws = new WebSocket(`${wsUrl}/public/stream`)
        await new Promise<void>((resolve, reject) => {
          ws.once("open", () => resolve())
          ws.once("error", reject)
        })
        ws.on("message", (data: Buffer) => onText(data.toString()))
        ws.send(request)
        closers.push(() => ws.terminate())
      } else {
        const ws = new globalThis.WebSocket(`${wsUrl}/public/stream`)
        ws.binaryType = "arraybuffer"
        await new Promise<void>((resolve, reject) => {
          ws.onopen = () => resolve()
          ws.onerror = () => reject(new Error("websocket error"))
        })
        ws.onmessage = (ev) =>
          onText(typeof ev.data === "string" ? ev.data : Buffer.from(ev.data as ArrayBuffer).toString("utf8"))
        ws.send(request)
        closers.push(() => ws.close())
      }
    })
  )
  await untilTrue("anchor subscribed", 10_000, async () => acks >= groups.length, 20)
  return {
    /** Resolves once `frames` more frames were parsed. */
    expect: (frames: number) =>
      new Promise<void>((resolve) => {
        target = count + frames
        done = resolve
        if (count >= target) resolve()
      }),
    close: () => {
      for (const c of closers) c()
    }
  }
}

/**
 * The service's stream reader in this process (`runMarketStream`: Node's WebSocket, the connection manager, the
 * protocol's reader, the symbol map and unit conversion) into `board`, counting into `stats`, warnings only.
 */
const startReader = (
  protocol: MarketStreamProtocol,
  wsUrl: string,
  instruments: ReadonlyMap<string, Instrument>,
  board: ReturnType<typeof makeQuoteBoard>,
  stats: Parameters<typeof runMarketStream>[3]
) =>
  Effect.runFork(
    runMarketStream(protocol, { baseUrl: wsUrl, instruments: () => instruments, timeoutMs: 10_000 }, board, stats).pipe(
      Effect.provideService(References.MinimumLogLevel, "Warn")
    )
  )

const instrumentsOf = (symbols: ReadonlyArray<ReplaySymbol>): ReadonlyMap<string, Instrument> =>
  new Map(
    symbols.map((s) => [
      s.symbol,
      {
        assetId: `crypto:${s.ticker.toLowerCase()}`,
        venue: "binance",
        symbol: s.symbol,
        tokensPerUnit: s.tokensPerUnit,
        tokensPerContract: 1,
        fundingIntervalMs: s.fundingIntervalHours * 3_600_000
      }
    ])
  )

const ingestBench = async (venue: VenueWorker, print: (line: string) => void): Promise<IngestResult> => {
  const started = await venue.start({ symbols: PERPETUALS, meanIntervalMs: 0 })
  const instruments = instrumentsOf(started.symbols)
  const kept: Array<string> = []
  const rounds: Array<IngestRound> = []
  let malformed = 0
  for (let r = 0; r < ROUNDS; r++) {
    // The anchors: the same frames, parsed and dropped.
    const anchorRun = async (kind: "ws" | "node") => {
      const client = await anchorClient(
        kind,
        started.wsUrl,
        started.symbols,
        r === 0 && kind === "ws" ? kept : undefined
      )
      const a0 = performance.now()
      const elu0 = performance.eventLoopUtilization()
      const done = client.expect(FRAMES)
      const sent = await venue.call<{ sent: number }>({ op: "blast", frames: FRAMES })
      await done
      const busyMs = performance.eventLoopUtilization(elu0).active
      const ms = performance.now() - a0
      client.close()
      await untilTrue("anchor gone", 10_000, async () => (await venue.stats()).connections === 0, 20)
      return { fps: Math.round((sent.sent / ms) * 1000), busyFps: Math.round((sent.sent / busyMs) * 1000) }
    }
    const anchor = await anchorRun("ws")
    const nodeAnchor = await anchorRun("node")

    // The service's reader, in this process; the stats object it counts frames in tells when the blast is read.
    const board = makeQuoteBoard()
    let framesSeen = 0
    let target = Number.POSITIVE_INFINITY
    let reached: (() => void) | undefined
    const stats = {
      get frames() {
        return framesSeen
      },
      set frames(n: number) {
        framesSeen = n
        if (n >= target) reached?.()
      },
      malformed: 0,
      connects: 0,
      rotations: 0,
      gaps: 0,
      lastMalformed: ""
    }
    const fiber = startReader(binanceStreamProtocol, started.wsUrl, instruments, board, stats)
    await untilTrue("reader subscribed", 60_000, async () => (await venue.stats()).subscribedSymbols >= PERPETUALS, 100)
    const r0 = performance.now()
    const elu0 = performance.eventLoopUtilization()
    const readerDone = new Promise<void>((resolve) => {
      target = framesSeen + FRAMES
      reached = resolve
    })
    const sentR = await venue.call<{ sent: number }>({ op: "blast", frames: FRAMES })
    await readerDone
    const readerBusyMs = performance.eventLoopUtilization(elu0).active
    const readerMs = performance.now() - r0
    malformed += stats.malformed
    await Effect.runPromise(Fiber.interrupt(fiber))
    await untilTrue("reader gone", 10_000, async () => (await venue.stats()).connections === 0, 20)
    const quoted = [...instruments.values()].filter((i) => board.quote(i.assetId, "binance") !== undefined).length
    const readerFps = Math.round((sentR.sent / readerMs) * 1000)
    const readerBusyFps = Math.round((sentR.sent / readerBusyMs) * 1000)
    const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100
    const round: IngestRound = {
      anchorFps: anchor.fps,
      nodeAnchorFps: nodeAnchor.fps,
      readerFps,
      ratio: ratio(readerFps, anchor.fps),
      nodeRatio: ratio(readerFps, nodeAnchor.fps),
      anchorBusyFps: anchor.busyFps,
      nodeAnchorBusyFps: nodeAnchor.busyFps,
      readerBusyFps,
      busyRatio: ratio(readerBusyFps, anchor.busyFps),
      nodeBusyRatio: ratio(readerBusyFps, nodeAnchor.busyFps)
    }
    rounds.push(round)
    print(
      `streams (a) round ${r + 1}, frames/s of wall time (per busy second of the reading thread): anchor (ws + JSON.parse) ${anchor.fps} (${anchor.busyFps}), Node's WebSocket + JSON.parse ${nodeAnchor.fps} (${nodeAnchor.busyFps}), service reader (runMarketStream into a QuoteBoard) ${readerFps} (${readerBusyFps}): ${round.ratio}x the anchor (${round.busyRatio}x), ${round.nodeRatio}x Node's WebSocket (${round.nodeBusyRatio}x); ${quoted} books on the board, ${stats.malformed} malformed\n`
    )
  }
  await venue.call({ op: "close" })

  // The same frames without a socket.
  const reps = 3
  const parseMs: Array<number> = []
  const readMs: Array<number> = []
  const board = makeQuoteBoard()
  const sink: VenueSink = {
    // The manager's sink, restated: the symbol's instrument, the quote checked, units converted, the board updated.
    quote: (symbol, t, bid, bidSize, ask, askSize) => {
      const i = instruments.get(symbol)
      if (i === undefined) return
      if (!(bid > 0 && ask >= bid && bidSize >= 0 && askSize >= 0)) throw new Error("not a quote")
      const size = i.tokensPerUnit * i.tokensPerContract
      board.applyQuote(i.assetId, "binance", {
        t,
        bid: bid / i.tokensPerUnit,
        bidSize: bidSize * size,
        ask: ask / i.tokensPerUnit,
        askSize: askSize * size
      })
    },
    ticker: () => undefined
  }
  const reader = binanceStreamProtocol.reader()
  let sinkhole = 0
  for (let k = 0; k < reps; k++) {
    let t0 = performance.now()
    for (const text of kept) sinkhole += (JSON.parse(text) as { data?: unknown }).data === undefined ? 0 : 1
    parseMs.push(performance.now() - t0)
    t0 = performance.now()
    for (const text of kept) reader.read(text, sink)
    readMs.push(performance.now() - t0)
  }
  const parseFps = Math.round((kept.length / median(parseMs)) * 1000)
  const readerFps = Math.round((kept.length / median(readMs)) * 1000)
  const inProcess = { parseFps, readerFps, ratio: Math.round((readerFps / parseFps) * 100) / 100 }
  print(
    `streams (a) without a socket (${kept.length} frames${sinkhole > 0 ? "" : "?"}): JSON.parse ${parseFps} frames/s, reader + board ${readerFps} frames/s, ${inProcess.ratio}x\n`
  )
  const ratio = median(rounds.map((r) => r.ratio))
  return {
    frames: FRAMES,
    rounds,
    anchorFps: median(rounds.map((r) => r.anchorFps)),
    nodeAnchorFps: median(rounds.map((r) => r.nodeAnchorFps)),
    readerFps: median(rounds.map((r) => r.readerFps)),
    ratio,
    nodeRatio: median(rounds.map((r) => r.nodeRatio)),
    busyRatio: median(rounds.map((r) => r.busyRatio)),
    nodeBusyRatio: median(rounds.map((r) => r.nodeBusyRatio)),
    inProcess,
    malformed
  }
}

// -- (a) on the other three venues ---------------------------------------------------------------------------------

/** Part (a) on one of the other venues: its replay alone, the same frames to the anchor and to the reader. */
export interface VenueIngest {
  readonly venue: OneVenueName
  readonly perpetuals: number
  /** Frames each side read per round (book frames, and the forming bar where its topic is subscribed). */
  readonly frames: number
  readonly rounds: ReadonlyArray<{
    readonly anchorFps: number
    readonly readerFps: number
    readonly ratio: number
    readonly busyRatio: number
  }>
  readonly anchorFps: number
  readonly readerFps: number
  readonly ratio: number
  readonly busyRatio: number
  readonly malformed: number
}

/**
 * `pauseMs` between two clients' subscriptions: Hyperliquid counts 2,000 messages a minute per IP and takes one
 * topic a message, so each client's 450 subscriptions (and the reader's 450 unsubscriptions as it stops) would
 * soon pass it; its replay refuses what does, as the venue does.
 */
const ONE_VENUES: ReadonlyArray<{
  readonly venue: OneVenueName
  readonly protocol: MarketStreamProtocol
  readonly pauseMs: number
}> = [
  { venue: "bybit", protocol: bybitStreamProtocol, pauseMs: 0 },
  { venue: "okx", protocol: okxStreamProtocol, pauseMs: 0 },
  { venue: "hyperliquid", protocol: hyperliquidStreamProtocol, pauseMs: 61_000 }
]

/**
 * A bare `ws` client subscribed to the topics the service's reader subscribes (the protocol's own topic names,
 * connections and messages, sent at the venue's message rate), that only `JSON.parse`s each frame and counts it.
 */
const protocolAnchor = async (
  protocol: MarketStreamProtocol,
  wsUrl: string,
  instruments: ReadonlyMap<string, Instrument>
) => {
  let count = 0
  const topics = [
    ...protocol.marketTopics,
    ...[...instruments.values()].flatMap((i) => protocol.symbolTopics(i.symbol, i))
  ]
  const byUrl = new Map<string, Array<string>>()
  for (const t of topics) {
    const url = protocol.url(wsUrl, t)
    const list = byUrl.get(url)
    if (list === undefined) byUrl.set(url, [t])
    else list.push(t)
  }
  const { topicsPerConnection, topicsPerMessage, messagesPerSecond, connectsPerSecond } = protocol.limits
  const sockets: Array<WebSocket> = []
  let id = 100
  for (const [url, list] of byUrl) {
    for (let k = 0; k < list.length; k += topicsPerConnection) {
      // The venue's connection rate, as the service keeps it.
      if (sockets.length > 0) await sleep(Math.ceil(1_000 / connectsPerSecond))
      const ws = new WebSocket(url)
      await new Promise<void>((resolve, reject) => {
        ws.once("open", () => resolve())
        ws.once("error", reject)
      })
      ws.on("message", (data: Buffer) => {
        // Hyperliquid greets a connection with a line of plain text; every other frame is JSON.
        try {
          JSON.parse(data.toString())
        } catch {}
        count++
      })
      sockets.push(ws)
      const group = list.slice(k, k + topicsPerConnection)
      for (let m = 0; m < group.length; m += topicsPerMessage) {
        ws.send(protocol.subscribe(group.slice(m, m + topicsPerMessage), id++))
        await sleep(Math.ceil(1_000 / messagesPerSecond))
      }
    }
  }
  return {
    count: () => count,
    close: () => {
      for (const ws of sockets) ws.terminate()
    }
  }
}

const oneVenueIngest = async (
  venue: VenueWorker,
  name: OneVenueName,
  protocol: MarketStreamProtocol,
  perpetuals: number,
  pauseMs: number,
  print: (line: string) => void
): Promise<VenueIngest> => {
  const started = await venue.call<{ wsUrl: string; symbols: ReadonlyArray<ReplaySymbol> }>({
    op: "startOne",
    venue: name,
    symbols: perpetuals
  })
  const instruments: ReadonlyMap<string, Instrument> = new Map(
    started.symbols.map((s) => [
      s.symbol,
      {
        assetId: `crypto:${s.ticker.toLowerCase()}`,
        venue: name,
        symbol: s.symbol,
        tokensPerUnit: s.tokensPerUnit,
        tokensPerContract: 1,
        fundingIntervalMs: 8 * 3_600_000,
        primary: true
      }
    ])
  )
  const stats = () => venue.call<{ connections: number; subscribedSymbols: number }>({ op: "stats" })
  const settled = async (what: string) => {
    await untilTrue(what, 120_000, async () => (await stats()).subscribedSymbols >= started.symbols.length, 100)
    // Subscription answers and snapshots are read before the blast starts.
    await sleep(1_000)
  }
  const blast = () => venue.call<{ sent: number; book: number; ms: number }>({ op: "blast", frames: FRAMES })
  const rounds: Array<VenueIngest["rounds"][number]> = []
  let malformed = 0
  let frames = 0
  for (let r = 0; r < ROUNDS; r++) {
    if (r > 0) await sleep(pauseMs)
    const anchor = await protocolAnchor(protocol, started.wsUrl, instruments)
    await settled(`${name} anchor subscribed`)
    const a0 = performance.now()
    const aElu = performance.eventLoopUtilization()
    const aCount = anchor.count()
    const aSent = await blast()
    await untilTrue(`${name} anchor read`, 120_000, async () => anchor.count() - aCount >= aSent.sent, 1)
    const anchorMs = performance.now() - a0
    const anchorBusyMs = performance.eventLoopUtilization(aElu).active
    anchor.close()
    await untilTrue(`${name} anchor gone`, 10_000, async () => (await stats()).connections === 0, 20)

    await sleep(pauseMs)
    const board = makeQuoteBoard()
    const counts = { frames: 0, malformed: 0, connects: 0, rotations: 0, gaps: 0, lastMalformed: "" }
    const fiber = startReader(protocol, started.wsUrl, instruments, board, counts)
    await settled(`${name} reader subscribed`)
    const r0 = performance.now()
    const rElu = performance.eventLoopUtilization()
    const rCount = counts.frames
    const rSent = await blast()
    await untilTrue(`${name} reader read`, 120_000, async () => counts.frames - rCount >= rSent.sent, 1)
    const readerMs = performance.now() - r0
    const readerBusyMs = performance.eventLoopUtilization(rElu).active
    malformed += counts.malformed
    await Effect.runPromise(Fiber.interrupt(fiber))
    await untilTrue(`${name} reader gone`, 10_000, async () => (await stats()).connections === 0, 20)
    const quoted = [...instruments.values()].filter((i) => board.quote(i.assetId, name) !== undefined).length
    frames = rSent.sent
    const perSecond = (n: number, ms: number) => (n / ms) * 1000
    const ratioOf = (a: number, b: number) => Math.round((a / b) * 100) / 100
    const round = {
      anchorFps: Math.round(perSecond(aSent.sent, anchorMs)),
      readerFps: Math.round(perSecond(rSent.sent, readerMs)),
      ratio: ratioOf(perSecond(rSent.sent, readerMs), perSecond(aSent.sent, anchorMs)),
      busyRatio: ratioOf(perSecond(rSent.sent, readerBusyMs), perSecond(aSent.sent, anchorBusyMs))
    }
    rounds.push(round)
    print(
      `streams (a) ${name} round ${r + 1} (${started.symbols.length} perpetuals; ${aSent.sent} and ${rSent.sent} frames, ${aSent.book} and ${rSent.book} of them book frames): anchor (ws + JSON.parse) ${round.anchorFps} frames/s, service reader ${round.readerFps}: ${round.ratio}x the anchor (${round.busyRatio}x per busy second); ${quoted} books on the board, ${counts.malformed} malformed\n`
    )
  }
  await venue.call({ op: "close" })
  return {
    venue: name,
    perpetuals: started.symbols.length,
    frames,
    rounds,
    anchorFps: median(rounds.map((x) => x.anchorFps)),
    readerFps: median(rounds.map((x) => x.readerFps)),
    ratio: median(rounds.map((x) => x.ratio)),
    busyRatio: median(rounds.map((x) => x.busyRatio)),
    malformed
  }
}

// -- (b), (c): a service process ------------------------------------------------------------------------------

interface Service {
  readonly url: string
  /** The service's `/metrics` (its event loop's delay is read from it); undefined when metrics are off. */
  readonly metricsUrl: string | undefined
  readonly child: ChildProcess
  /**
   * The service's garbage collections (`--trace-gc`): when the line came, which kind, its pause (ms), and the
   * reason V8 gives for a full collection (the line's tail, as "allocation failure", "external memory pressure").
   */
  readonly gcs: ReadonlyArray<{
    readonly t: number
    readonly kind: string
    readonly ms: number
    readonly phases?: Readonly<Record<string, number>>
  }>
  readonly stop: () => Promise<void>
}

/**
 * A `--trace-gc` line: `[pid:addr] 1234 ms: Scavenge 30.1 (40.2) -> 20.3 (41.2) MB, pooled: 0 MB, 2.42 / 0.00 ms ...`.
 * `addr` is the isolate: the first one seen is the answering thread's; the streams' worker thread has its own heap
 * (its collections are counted apart, as `worker <kind>`: they do not stop the answering thread).
 */
const GC_LINE =
  /\[\d+:(0x[0-9a-f]+)(?::[^\]]*)?\]\s+\d+ ms: (Scavenge|Mark-Compact|Minor Mark-Sweep)\b.*?, ([\d.]+) \/ [\d.]+ ms/
/** A full collection's reason: the line's text after its last parenthesis (`... current mu = 0.9) <reason>`). */
const GC_REASON = /\)\s*([^()]+)$/
/**
 * With `BENCH_STREAMS_GC_NVP=1` the service runs with `--trace-gc-nvp` instead: one `name=value` line a collection
 * (`[pid:addr:0] 1234 ms: pause=12.3 mutator=4.5 gc=mc ... mark=8.1 ... evacuate=2.0 ...`), no reason, but each
 * full collection's pause split by phase (marking, ephemerons, evacuation, clearing, sweeping), kept as
 * `phases`: where a long pause goes.
 */
const GC_NVP = process.env.BENCH_STREAMS_GC_NVP === "1"
const GC_NVP_LINE = /\[\d+:(0x[0-9a-f]+)(?::[^\]]*)?\]\s+\d+ ms: pause=([\d.]+) .*?\bgc=(s|mc|mmc|ms)\b/
const GC_NVP_KIND: Record<string, string> = {
  s: "Scavenge",
  mc: "Mark-Compact",
  mmc: "Minor Mark-Sweep",
  ms: "Minor Mark-Sweep"
}
/** The phases of a full collection kept from an nvp line (the top-level ones and the few that were ever long). */
const GC_NVP_PHASE_NAMES = [
  "mark",
  "mark.roots",
  "mark.full_closure_parallel",
  "mark.ephemeron.marking",
  "mark.finish_incremental",
  "clear",
  "clear.weak_collections",
  "clear.maps",
  "clear.external_string_table",
  "evacuate",
  "evacuate.copy",
  "evacuate.update_pointers",
  "evacuate.rebalance",
  "sweep",
  "finish",
  "incremental",
  "time_to_safepoint",
  "start_object_size",
  "end_object_size",
  "promoted",
  "old_gen_allocation_limit",
  "global_allocation_limit"
]
/** The same for a young collection: what it copied and where its pause went (summed over a window). */
const GC_NVP_SCAVENGE_NAMES = [
  "scavenge.roots",
  "scavenge.parallel",
  "background.scavenge.parallel",
  "scavenge.update_refs",
  "scavenge.free_remembered_set",
  "scavenge.weak",
  "time_to_safepoint",
  "allocated",
  "new_space_survived",
  "promoted",
  "new_space_capacity"
]
/** Each name with the pattern that reads its value from an nvp line, compiled once. */
const nvpPatterns = (names: ReadonlyArray<string>): ReadonlyArray<readonly [string, RegExp]> =>
  names.map((name) => [name, new RegExp(`(?:^|\\s)${name.replace(/\./g, "\\.")}=([\\d.]+)`)])
const GC_NVP_PHASES = nvpPatterns(GC_NVP_PHASE_NAMES)
const GC_NVP_SCAVENGE = nvpPatterns(GC_NVP_SCAVENGE_NAMES)

/** Every line the service writes to stdout appended to this file (`BENCH_STREAMS_SERVICE_LOG`), where set. */
const SERVICE_LOG = process.env.BENCH_STREAMS_SERVICE_LOG

/** `--cpu-prof` into `BENCH_STREAMS_CPU_PROF` (a directory), where set. */
const profileFlags =
  process.env.BENCH_STREAMS_CPU_PROF === undefined
    ? []
    : ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_STREAMS_CPU_PROF}`]

const launchService = (env: Record<string, string>): Promise<Service> =>
  new Promise((resolve, reject) => {
    const command = startCommand()
    const trace = GC_NVP ? "--trace-gc-nvp" : "--trace-gc"
    const child = spawn(process.execPath, [...command.flags, ...profileFlags, trace, command.script, "serve"], {
      cwd: ROOT,
      env: { ...process.env, ...command.env, PORT: "0", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    let err = ""
    let started = false
    let partial = ""
    const gcs: Array<{ t: number; kind: string; ms: number; phases?: Record<string, number> }> = []
    let mainIsolate: string | undefined
    child.stdout?.on("data", (d) => {
      if (SERVICE_LOG !== undefined) appendFileSync(SERVICE_LOG, d)
      out += d
      if (out.length > 200_000) out = out.slice(-100_000)
      const lines = (partial + String(d)).split("\n")
      partial = lines.pop() ?? ""
      for (const line of lines) {
        const n = GC_NVP ? GC_NVP_LINE.exec(line) : null
        if (n !== null) {
          mainIsolate ??= n[1]
          const kind = GC_NVP_KIND[n[3] as string] ?? (n[3] as string)
          let phases: Record<string, number> | undefined
          const names = kind === "Mark-Compact" ? GC_NVP_PHASES : kind === "Scavenge" ? GC_NVP_SCAVENGE : undefined
          if (names !== undefined) {
            phases = {}
            for (const [name, pattern] of names) {
              const v = pattern.exec(line)
              if (v !== null) phases[name] = Number(v[1])
            }
          }
          gcs.push({
            t: Date.now(),
            kind: `${n[1] === mainIsolate ? "" : "worker "}${kind}`,
            ms: Number(n[2]),
            ...(phases === undefined ? {} : { phases })
          })
          continue
        }
        const g = GC_LINE.exec(line)
        if (g === null) continue
        mainIsolate ??= g[1]
        // A full collection is kept by its reason (what to change depends on it); a young one by its kind alone.
        const reason = g[2] === "Mark-Compact" ? GC_REASON.exec(line.trim())?.[1]?.trim() : undefined
        gcs.push({
          t: Date.now(),
          kind: `${g[1] === mainIsolate ? "" : "worker "}${g[2]}${reason === undefined ? "" : ` (${reason})`}`,
          ms: Number(g[3])
        })
      }
      const m = /listening on (http:\/\/[^/\s]+)[^\n]*? · metrics (http:\/\/\S+|off)/.exec(out)
      if (m && !started) {
        started = true
        resolve({
          url: m[1] as string,
          metricsUrl: m[2] === "off" ? undefined : m[2],
          child,
          gcs,
          stop: () =>
            new Promise<void>((done) => {
              if (child.exitCode !== null) return done()
              child.on("exit", () => done())
              child.kill("SIGTERM")
            })
        })
      }
    })
    child.stderr?.on("data", (d) => {
      err += d
      if (err.length > 200_000) err = err.slice(-100_000)
    })
    child.on("exit", (code) => {
      if (!started) reject(new Error(`serve exited ${code}: ${err.slice(-2000)}`))
    })
  })

export interface VenueAge {
  readonly answers: number
  readonly quotedShare: number
  readonly unmatched: number
  /** A few answers whose bid and ask the venue never published (`symbol@receivedMs:bid/ask`). */
  readonly unmatchedExamples: ReadonlyArray<string>
  readonly p50Ms: number
  readonly p99Ms: number
  readonly maxMs: number
}

export interface BookAge {
  readonly movesPerBookPerSecond: number
  /** The same by the venue listing the asset. */
  readonly byVenue: Readonly<Record<string, VenueAge>>
  readonly answers: number
  readonly quotedShare: number
  readonly unmatched: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly maxMs: number
  readonly statuses: Record<string, number>
}

export interface LoadResult {
  readonly perpetuals: number
  /** Frames the venue sent the service each second (book, kline and mark-price). */
  readonly framesPerSecond: number
  readonly bookFramesPerSecond: number
  readonly klineFramesPerSecond: number
  readonly windowSeconds: number
  readonly cpuPctOfOneCore: number
  readonly cpuPctStill: number
  readonly rssStartMb: number
  readonly rssEndMb: number
  readonly rssGrowthMb: number
  readonly rssGrowthStillMb: number
  readonly rssTrace: ReadonlyArray<number>
  readonly priceRounds: ReadonlyArray<Record<string, number>>
  /** Requests per second of the fixed-rate measurement the p99 ratio is taken from. */
  readonly priceRate: number
  readonly priceP99LoadedMs: number
  readonly priceP99StillMs: number
  readonly priceP99Ratio: number
  /** The service's garbage collections during each fixed-rate window (`--trace-gc`). */
  readonly priceGc: {
    readonly loaded: ReadonlyArray<Record<string, { n: number; totalMs: number; maxMs: number }>>
    readonly still: ReadonlyArray<Record<string, { n: number; totalMs: number; maxMs: number }>>
    /** With `BENCH_STREAMS_GC_NVP=1` each window's young collections also carry `sums` of their phases. */
    /** With `BENCH_STREAMS_GC_NVP=1`: each full collection of the answering thread in a window, by phase. */
    readonly fullPhases?: ReadonlyArray<{ round: number; side: string; ms: number; phases?: Record<string, number> }>
  }
  /** autocannon, 10 connections (whole milliseconds). */
  readonly saturatedP99LoadedMs: number
  readonly saturatedP99StillMs: number
  readonly priceRpsLoaded: number
  readonly priceRpsStill: number
  readonly bookAge: ReadonlyArray<BookAge>
  readonly readyAfterMs: number
  readonly rest: Record<string, unknown>
}

/** Staleness of answers, looked up at the venue on its worker. */
const bookAgeOf = async (
  venue: VenueWorker,
  answers: ReadonlyArray<PriceAnswer>,
  movesPerBookPerSecond: number,
  venueOf: ReadonlyMap<string, string>
): Promise<BookAge> => {
  const quoted = answers.filter((a) => a.bid !== undefined && a.ask !== undefined)
  const ages = await venue.call<ReadonlyArray<number | null>>({
    op: "staleness",
    queries: quoted.map(
      (a) => [a.symbol, (a.bid as number) * a.tokensPerUnit, (a.ask as number) * a.tokensPerUnit, a.receivedMs] as const
    )
  })
  const byAnswer = new Map(quoted.map((a, k) => [a, ages[k] ?? undefined] as const))
  const samples = answers.map((a) => measured(a, () => byAnswer.get(a) ?? undefined))
  const s = summarize(samples)
  const byVenue: Record<string, VenueAge> = {}
  for (const v of new Set(venueOf.values())) {
    const x = summarize(samples.filter((a) => venueOf.get(a.symbol) === v))
    byVenue[v] = {
      answers: x.answers,
      quotedShare: Math.round(x.quotedShare * 1000) / 1000,
      unmatched: x.unmatched,
      unmatchedExamples: samples
        .filter((a) => venueOf.get(a.symbol) === v && a.hasQuote && a.stalenessMs === undefined)
        .slice(0, 5)
        .map((a) => `${a.symbol}@${a.receivedMs}:${a.bid}/${a.ask}`),
      p50Ms: x.p50,
      p99Ms: x.p99,
      maxMs: x.max
    }
  }
  return {
    byVenue,
    movesPerBookPerSecond,
    answers: s.answers,
    quotedShare: Math.round(s.quotedShare * 1000) / 1000,
    unmatched: s.unmatched,
    p50Ms: s.p50,
    p99Ms: s.p99,
    maxMs: s.max,
    statuses: s.statuses
  }
}

/**
 * Paid `price` of random perpetuals at a fixed rate (open loop: each request sent on its schedule, whatever the
 * earlier ones do), from the client process (`streams-client.ts`): latency quantiles to the microsecond, and how
 * long the client waited for a core.
 */
class PriceClient {
  private readonly child = fork(fileURLToPath(new URL("./streams-client.ts", import.meta.url)), [], {
    stdio: ["ignore", "inherit", "inherit", "ipc"]
  })
  /**
   * What the client runs at, once its process is up (its threads are all there by then): the real-time policy
   * where this machine grants it, else as started.
   */
  readonly ready: Promise<string> = new Promise((resolve, reject) => {
    const exited = (code: number | null) => reject(new Error(`the price client exited (${code}) before it was up`))
    this.child.once("exit", exited)
    this.child.once("message", () => {
      this.child.off("exit", exited)
      resolve(this.raise())
    })
  })
  get pid(): number | undefined {
    return this.child.pid
  }
  /**
   * The client stands for a caller on a machine of its own: run it (every thread) under the real-time FIFO policy
   * (`chrt`, which needs CAP_SYS_NICE), so that no thread of this machine's (the venues', the service's stream
   * worker) keeps it from a core when an answer arrives. `BENCH_STREAMS_CLIENT_FIFO=0` leaves it as started.
   */
  private raise(): string {
    if (process.env.BENCH_STREAMS_CLIENT_FIFO === "0" || this.child.pid === undefined) return "niceness 0 (as started)"
    try {
      execFileSync("chrt", ["-a", "-f", "-p", "1", String(this.child.pid)], { stdio: "pipe" })
      return "real-time FIFO priority 1 (chrt)"
    } catch (e) {
      return `niceness 0 (chrt refused: ${String((e as { stderr?: unknown }).stderr ?? e).trim()})`
    }
  }
  async atRate(url: string, perps: ReadonlyArray<ServedPerp>, perSecond: number, seconds: number) {
    const window: ClientWindow = { url, key: KEY, assetIds: perps.map((p) => p.assetId), perSecond, seconds }
    await this.ready
    const result = await new Promise<ClientResult>((resolve, reject) => {
      const exited = (code: number | null) => reject(new Error(`the price client exited (${code}) during a window`))
      this.child.once("exit", exited)
      this.child.once("message", (m: ClientResult | { error: string }) => {
        this.child.off("exit", exited)
        if ("error" in m) reject(new Error(`price client: ${m.error}`))
        else resolve(m)
      })
      this.child.send(window)
    })
    const q = (x: number) => Math.round(quantile(result.latencies, x) * 1000) / 1000
    return {
      p50: q(0.5),
      p99: q(0.99),
      failed: result.failed,
      latencies: result.latencies,
      clientWaitMs: round1(result.waitMs)
    }
  }
  stop(): void {
    if (this.child.connected) this.child.disconnect()
  }
}

/**
 * Gives every thread of this process but the main one (V8's helper threads, which collect the replay venues'
 * garbage, and libuv's) the venues' niceness: the venues stand for machines elsewhere, and their worker thread
 * already runs at it. Returns how many threads it set.
 */
const lowerHelperThreads = (nice: number): number => {
  let set = 0
  try {
    for (const tid of readdirSync("/proc/self/task")) {
      if (Number(tid) === process.pid) continue
      try {
        if (getPriority(Number(tid)) < nice) {
          setPriority(Number(tid), nice)
          set++
        }
      } catch {
        // The thread ended, or this system does not let a thread's niceness be set.
      }
    }
  } catch {
    // No /proc.
  }
  return set
}

/** Garbage collections of a window: count and pause total and longest, by kind. */
const gcOf = (service: Service, fromMs: number, toMs: number) => {
  const out: Record<string, { n: number; totalMs: number; maxMs: number; sums?: Record<string, number> }> = {}
  for (const g of service.gcs) {
    if (g.t < fromMs || g.t > toMs) continue
    const k = out[g.kind] ?? { n: 0, totalMs: 0, maxMs: 0 }
    out[g.kind] = k
    k.n++
    k.totalMs = Math.round((k.totalMs + g.ms) * 10) / 10
    k.maxMs = Math.max(k.maxMs, g.ms)
    // A young collection's phases summed (`BENCH_STREAMS_GC_NVP=1`): bytes in bytes, times in ms.
    if (g.kind === "Scavenge" && g.phases !== undefined) {
      const sums = k.sums ?? {}
      k.sums = sums
      for (const [name, v] of Object.entries(g.phases)) sums[name] = Math.round(((sums[name] ?? 0) + v) * 100) / 100
    }
  }
  return out
}

/** The answering thread's full collections of a window with their phases (`BENCH_STREAMS_GC_NVP=1` only). */
const fullsOf = (service: Service, fromMs: number, toMs: number) =>
  service.gcs.filter((g) => g.t >= fromMs && g.t <= toMs && g.kind === "Mark-Compact" && g.phases !== undefined)

/**
 * The service's event-loop delay since the last scrape, in ms beyond its 10 ms timer (prom-client's default
 * metrics: the intervals of a 10 ms timer, recorded and reset at each scrape): a time sample of how long a request
 * arriving at a random moment waits before the loop can read it. Undefined when metrics are off or unreadable.
 */
const serviceLoopDelay = async (service: Service) => {
  if (service.metricsUrl === undefined) return undefined
  try {
    const text = await fetch(service.metricsUrl).then((r) => r.text())
    const of = (name: string) => {
      const m = new RegExp(`^market_data_process_nodejs_eventloop_lag_${name}_seconds (\\S+)$`, "m").exec(text)
      return m === null ? Number.NaN : Math.round((Number(m[1]) - 0.01) * 1e6) / 1000
    }
    return { p50: of("p50"), p90: of("p90"), p99: of("p99"), max: of("max"), mean: of("mean") }
  } catch {
    return undefined
  }
}

const priceLoad = async (url: string, assetId: string) => {
  const r = await autocannon({
    url: `${url}/api/v1/price?id=${encodeURIComponent(assetId)}`,
    headers: { authorization: `Bearer ${KEY}` },
    connections: 10,
    duration: LOAD_SECONDS
  })
  return { p99: r.latency.p99, rps: Math.round(r.requests.average), non2xx: r.non2xx + r.errors }
}

const loadBench = async (venue: VenueWorker, print: (line: string) => void): Promise<LoadResult> => {
  const started = await venue.startFour({ counts: COUNTS, meanIntervalMs: 1_000, historyPerSymbol: VENUE_HISTORY })
  const venueOf = new Map(started.symbols.map((s) => [s.symbol, s.venue]))
  const sec = await startFakeSec()
  const t0 = Date.now()
  const service = await launchService({
    ...liveServiceEnv(started, sec.url, KEY, {
      ...started.env,
      DATABASE_URL: "memory",
      LOG_LEVEL: "warn"
    })
  })
  const pid = service.child.pid
  // The fixed-rate client in its own process (see `PriceClient`), and this process's helper threads at the venues'
  // niceness (what they collect is mostly the venues' garbage).
  const client = new PriceClient()
  try {
    print(
      `streams (b): the fixed-rate price client in its own process (pid ${client.pid}) at ${await client.ready}; ${lowerHelperThreads(VENUE_NICE)} helper threads of the bench process set to niceness ${VENUE_NICE}\n`
    )
    // Ready: every perpetual the service serves is streamed, has its bars asked (or `BENCH_STREAMS_BARS_S` passed:
    // Hyperliquid's info API weighs a coin's first day of bars and funding 57 of the 1,200 a minute the service
    // spends half of), and answers with a quote.
    let perps: Array<ServedPerp> = []
    const venueStats = async () =>
      Object.entries((await venue.stats()).byVenue ?? {})
        .map(([v, x]) => `${v} ${x.streamed} streamed, ${x.barsAsked} with bars, ${x.connections} connections`)
        .join("; ")
    await untilTrue(
      "perpetuals served and streamed",
      300_000,
      async () => {
        perps = await servedPerps(service.url, KEY, started)
        if (perps.length < TOTAL * 0.95) return false
        const streamed = new Set(await venue.call<ReadonlyArray<string>>({ op: "streamedSymbols" }))
        return perps.every((p) => streamed.has(p.symbol))
      },
      1_000
    )
    const streamedAfterMs = Date.now() - t0
    print(
      `streams (b, c): ${perps.length} perpetuals served and streamed ${streamedAfterMs} ms after the start (${await venueStats()})\n`
    )
    const barsIn = async () => {
      const k = new Set(await venue.call<ReadonlyArray<string>>({ op: "klinesSymbols" }))
      return perps.filter((p) => k.has(p.symbol)).length
    }
    const barsDeadline = Date.now() + BARS_S * 1000
    while ((await barsIn()) < perps.length && Date.now() < barsDeadline) await sleep(5_000)
    const withBars = await barsIn()
    // The rest of the first history (funding, open interest, taker flow) follows the bars on each venue's budget.
    if (withBars === perps.length) await sleep(SETTLE_S * 1000)
    await untilTrue(
      "price answers with a quote",
      120_000,
      async () => {
        const a = await askPrices(service.url, KEY, perps, 1_000, 4)
        return a.filter((x) => x.bid !== undefined).length >= a.length * 0.99
      },
      1_000
    )
    const readyAfterMs = Date.now() - t0
    print(
      `streams (b, c): ${perps.length} perpetuals served and streamed, ${withBars} with their bars asked, answering with quotes ${readyAfterMs} ms after the start (${await venueStats()})\n`
    )
    const bookAge: Array<BookAge> = []
    const ageAt = async (moves: number) => {
      const a = await bookAgeOf(venue, await askPrices(service.url, KEY, perps, 20_000, 4), moves, venueOf)
      bookAge.push(a)
      print(
        `streams (c) book age, ${perps.length} perpetuals, ${moves} moves per book per second: ${a.answers} answers, ${(a.quotedShare * 100).toFixed(1)}% quoted, p50 ${a.p50Ms} ms p99 ${a.p99Ms} ms max ${a.maxMs} ms, ${a.unmatched} unmatched, statuses ${JSON.stringify(a.statuses)}; by venue ${Object.entries(
          a.byVenue
        )
          .map(
            ([v, x]) =>
              `${v} ${x.answers} answers ${(x.quotedShare * 100).toFixed(1)}% quoted p99 ${x.p99Ms} ms${x.unmatched > 0 ? ` (${x.unmatched} unmatched: ${x.unmatchedExamples.join(" ")})` : ""}`
          )
          .join(", ")}\n`
      )
    }
    await ageAt(1)

    /** CPU and RSS of the service over the window, the bench idle meanwhile. */
    const window = async (seconds: number) => {
      const s0 = await venue.stats()
      const cpu0 = cpuMsOf(pid)
      const threads0 = { service: threadCpuOf(pid), bench: threadCpuOf("self") }
      const w0 = performance.now()
      const trace = [memoryOf(pid).rss]
      for (let k = 0; k < seconds / 10; k++) {
        await sleep(10_000)
        trace.push(memoryOf(pid).rss)
      }
      const wallMs = performance.now() - w0
      const s1 = await venue.stats()
      const rate = (n: number) => Math.round((n / wallMs) * 1000)
      const bookFps = rate(s1.ws.bookFrames - s0.ws.bookFrames)
      const klineFps = rate(s1.ws.klineFrames - s0.ws.klineFrames)
      const perVenue = Object.entries(s1.byVenue ?? {})
        .map(([v, x]) => `${v} ${rate(x.frames - (s0.byVenue?.[v]?.frames ?? 0))}`)
        .join(", ")
      return {
        cpuPct: round1(((cpuMsOf(pid) - cpu0) / wallMs) * 100),
        threads: `service: ${threadShares(threads0.service, threadCpuOf(pid), wallMs)}; bench: ${threadShares(threads0.bench, threadCpuOf("self"), wallMs)}`,
        perVenue,
        trace,
        bookFps,
        klineFps,
        fps: bookFps + klineFps + rate(s1.ws.markFrames - s0.ws.markFrames)
      }
    }

    // 5,000 frames a second: each book moving every 360 ms on average (a book frame each move, a kline frame each
    // move at least 250 ms after the last), and the mark-price array each second.
    await venue.call({ op: "setMeanInterval", ms: LOADED_INTERVAL_MS })
    await sleep(10_000)
    const loaded = await window(WINDOW_S)
    print(
      `streams (b) ${loaded.fps} frames/s (${loaded.bookFps} book, ${loaded.klineFps} kline, the rest mark, context and funding; by venue ${loaded.perVenue}) for ${WINDOW_S} s: CPU ${loaded.cpuPct}% of one core, RSS ${loaded.trace[0]} -> ${loaded.trace[loaded.trace.length - 1]} MB (every 10 s: ${loaded.trace.join(" ")}); threads (name@niceness, % of a core) ${loaded.threads}\n`
    )
    await ageAt(Math.round((1000 / LOADED_INTERVAL_MS) * 10) / 10)
    /** Every thread's share of a core since `from` (the service's and the bench's own). */
    const sharesSince = (from: { service: Map<string, number>; bench: Map<string, number>; t: number }) => {
      const wallMs = performance.now() - from.t
      return `service: ${threadShares(from.service, threadCpuOf(pid), wallMs)}; bench: ${threadShares(from.bench, threadCpuOf("self"), wallMs)}`
    }
    const priceRounds: Array<Record<string, number>> = []
    const pooled = { loaded: [] as Array<number>, still: [] as Array<number> }
    const gcLoaded: Array<ReturnType<typeof gcOf>> = []
    const gcStill: Array<ReturnType<typeof gcOf>> = []
    const fulls: Array<{ round: number; side: "loaded" | "still"; ms: number; phases?: Record<string, number> }> = []
    const assetId = perps.find((p) => p.symbol === "BTCUSDT")?.assetId ?? (perps[0] as ServedPerp).assetId
    const still = { cpuPct: Number.NaN, trace: [] as Array<number> }
    await venue.call({ op: "setMeanInterval", ms: 0 })
    await sleep(3_000)
    const capacity = Math.round((await askPrices(service.url, KEY, perps, 5_000, 4)).length / 5)
    const rate =
      RATE_SETTING !== undefined && RATE_SETTING !== ""
        ? Number(RATE_SETTING)
        : Math.max(10, Math.min(300, Math.round(capacity / 4)))
    print(
      `streams (b) paid price: ${capacity} answers/s from 4 callers with the books still; measured at ${rate} req/s\n`
    )
    // The still side's CPU and RSS, then one unmeasured fixed-rate window: a minute with little to allocate lets V8's
    // memory reducer start a memory-reducing full collection, which would otherwise land in round 1's first window.
    {
      const w = await window(Math.min(60, WINDOW_S))
      still.cpuPct = w.cpuPct
      still.trace = w.trace
      print(
        `streams (b) books still (only the mark array, 1 frame/s) for ${Math.min(60, WINDOW_S)} s: CPU ${w.cpuPct}% of one core, RSS ${w.trace[0]} -> ${w.trace[w.trace.length - 1]} MB; threads ${w.threads}\n`
      )
      const wt = Date.now()
      const warm = await client.atRate(service.url, perps, rate, RATE_SECONDS)
      const warmFulls = service.gcs.filter((g) => g.t >= wt && g.kind === "Mark-Compact")
      print(
        `streams (b) paid price, unmeasured warm window after the still minute: p99 ${warm.p99} ms; full collections ${JSON.stringify(warmFulls.map((g) => g.ms))}\n`
      )
    }
    // The fixed-rate rounds first, the saturated ones after them: a 10 s saturation leaves the answering thread's
    // old generation full of what the answers in flight promoted, and its full collection then fell in the next
    // fixed-rate window (runs 1 to 8 measured each round's saturation just before its fixed-rate windows).
    /** One fixed-rate window with the books moving (`loaded`) or still, and what it measured. */
    const fixedRateWindow = async (r: number, side: "loaded" | "still") => {
      await venue.call({ op: "setMeanInterval", ms: side === "loaded" ? LOADED_INTERVAL_MS : 0 })
      await sleep(3_000)
      const t = Date.now()
      const threads = { service: threadCpuOf(pid), bench: threadCpuOf("self"), t: performance.now() }
      // The service's loop delay is reset by this scrape and read by the one after the window.
      await serviceLoopDelay(service)
      const wait0 = runQueueWaitMsOf(pid)
      const result = await client.atRate(service.url, perps, rate, RATE_SECONDS)
      const wait = round1(runQueueWaitMsOf(pid) - wait0)
      const loop = await serviceLoopDelay(service)
      const shares = sharesSince(threads)
      const gc = gcOf(service, t, Date.now())
      for (const g of fullsOf(service, t, Date.now())) fulls.push({ round: r + 1, side, ...g })
      pooled[side].push(...result.latencies)
      return { result, wait, shares, gc, loop }
    }
    // Each round's two windows in alternating order (loaded first in odd rounds, still first in even ones): the
    // answering thread's full collections come about as often as a round (every 40 to 50 s at 300 req/s), so in a
    // fixed order they would fall on the same side round after round whatever either side promotes.
    for (let r = 0; r < PRICE_ROUNDS; r++) {
      const first = r % 2 === 0 ? "loaded" : "still"
      const a = await fixedRateWindow(r, first)
      const b = await fixedRateWindow(r, first === "loaded" ? "still" : "loaded")
      const [l, u] = first === "loaded" ? [a, b] : [b, a]
      const { result: lr, wait: lWait, shares: lShares } = l
      const { result: ur, wait: uWait, shares: uShares } = u
      gcLoaded.push(l.gc)
      gcStill.push(u.gc)
      priceRounds.push({
        loadedP50: lr.p50,
        loadedP99: lr.p99,
        stillP50: ur.p50,
        stillP99: ur.p99,
        loadedRunQueueWaitMs: lWait,
        stillRunQueueWaitMs: uWait
      })
      print(
        `streams (b) paid price, round ${r + 1} (${first} first): ${rate} req/s of random perpetuals for ${RATE_SECONDS} s: p50 ${lr.p50} / p99 ${lr.p99} ms at 5,000 frames/s (failed ${lr.failed}; GC ${JSON.stringify(gcLoaded[r])}), p50 ${ur.p50} / p99 ${ur.p99} ms still (failed ${ur.failed}; GC ${JSON.stringify(gcStill[r])}); threads loaded ${lShares}; still ${uShares}; waited for a core: the answering thread ${lWait} ms loaded, ${uWait} ms still, the client ${lr.clientWaitMs} ms loaded, ${ur.clientWaitMs} ms still; the answering thread's event-loop delay beyond its 10 ms timer (ms) loaded ${JSON.stringify(l.loop)}, still ${JSON.stringify(u.loop)}\n`
      )
      for (const f of fulls.filter((x) => x.round === r + 1)) {
        print(`streams (b) round ${r + 1} ${f.side} full collection ${f.ms} ms: ${JSON.stringify(f.phases)}\n`)
      }
    }
    for (let r = 0; r < PRICE_ROUNDS; r++) {
      await venue.call({ op: "setMeanInterval", ms: LOADED_INTERVAL_MS })
      await sleep(3_000)
      const l = await priceLoad(service.url, assetId)
      await venue.call({ op: "setMeanInterval", ms: 0 })
      await sleep(3_000)
      const u = await priceLoad(service.url, assetId)
      Object.assign(priceRounds[r] as Record<string, number>, {
        saturatedLoadedP99: l.p99,
        saturatedStillP99: u.p99,
        saturatedLoadedRps: l.rps,
        saturatedStillRps: u.rps
      })
      print(
        `streams (b) paid price saturated, round ${r + 1} (autocannon, 10 connections, ${LOAD_SECONDS} s, one perpetual): at 5,000 frames/s ${l.rps} req/s p99 ${l.p99} ms (non-2xx ${l.non2xx}), books still ${u.rps} req/s p99 ${u.p99} ms (non-2xx ${u.non2xx})\n`
      )
    }
    const rest = await venue.stats()
    const q = (xs: ReadonlyArray<number>, x: number) => Math.round(quantile(xs, x) * 1000) / 1000
    const loadedP99 = q(pooled.loaded, 0.99)
    const stillP99 = q(pooled.still, 0.99)
    print(
      `streams (b) paid price at ${rate} req/s, all rounds pooled: at 5,000 frames/s p50 ${q(pooled.loaded, 0.5)} p99 ${loadedP99} p99.9 ${q(pooled.loaded, 0.999)} ms (${pooled.loaded.length} answers), still p50 ${q(pooled.still, 0.5)} p99 ${stillP99} p99.9 ${q(pooled.still, 0.999)} ms (${pooled.still.length} answers)\n`
    )
    const first = loaded.trace[0] as number
    const last = loaded.trace[loaded.trace.length - 1] as number
    return {
      perpetuals: perps.length,
      framesPerSecond: loaded.fps,
      windowSeconds: WINDOW_S,
      cpuPctOfOneCore: loaded.cpuPct,
      cpuPctStill: still.cpuPct,
      rssStartMb: first,
      rssEndMb: last,
      rssGrowthMb: last - first,
      rssGrowthStillMb: (still.trace[still.trace.length - 1] ?? Number.NaN) - (still.trace[0] ?? Number.NaN),
      rssTrace: loaded.trace,
      bookFramesPerSecond: loaded.bookFps,
      klineFramesPerSecond: loaded.klineFps,
      priceRounds,
      priceRate: rate,
      priceP99LoadedMs: loadedP99,
      priceP99StillMs: stillP99,
      priceP99Ratio: Math.round((loadedP99 / stillP99) * 100) / 100,
      priceGc: { loaded: gcLoaded, still: gcStill, ...(GC_NVP ? { fullPhases: fulls } : {}) },
      saturatedP99LoadedMs: median(priceRounds.map((r) => r.saturatedLoadedP99 as number)),
      saturatedP99StillMs: median(priceRounds.map((r) => r.saturatedStillP99 as number)),
      priceRpsLoaded: median(priceRounds.map((r) => r.saturatedLoadedRps as number)),
      priceRpsStill: median(priceRounds.map((r) => r.saturatedStillRps as number)),
      bookAge,
      readyAfterMs,
      rest: { weightLastMinute: rest.weightLastMinute, limited: rest.limited }
    }
  } finally {
    client.stop()
    await service.stop()
    await sec.close()
    await venue.call({ op: "close" })
  }
}

export interface StreamsBench {
  readonly machine: string
  readonly venueNice: number
  /** Absent without `a` in `BENCH_STREAMS_PARTS`. */
  readonly ingest: IngestResult | undefined
  /** Part (a) on Bybit, OKX and Hyperliquid (absent without `a`). */
  readonly ingestOthers: ReadonlyArray<VenueIngest> | undefined
  /** Absent without `b` in `BENCH_STREAMS_PARTS` (`a`: the ingest part alone). */
  readonly load: LoadResult | undefined
  readonly targets: ReadonlyArray<{ readonly target: string; readonly measured: string; readonly met: boolean }>
}

export const streamsBench = async (print: (line: string) => void): Promise<StreamsBench> => {
  const machine = `${cpus().length} x ${cpus()[0]?.model ?? "?"}, Node ${process.versions.node}`
  print(
    `streams bench on ${machine}; the replay venues' worker thread at niceness ${VENUE_NICE} (BENCH_STREAMS_VENUE_NICE), the service's stream worker at ${process.env.MARKET_DATA_STREAM_THREAD_NICE ?? "its default"}\n`
  )
  const venue = new VenueWorker()
  try {
    // `BENCH_STREAMS_PARTS`: `a` the ingest anchor, `b` the service process (parts b and c); default both.
    const parts = process.env.BENCH_STREAMS_PARTS ?? "ab"
    const ingest = parts.includes("a") ? await ingestBench(venue, print) : undefined
    const ingestOthers: Array<VenueIngest> | undefined = parts.includes("a") ? [] : undefined
    for (const { venue: name, protocol, pauseMs } of parts.includes("a") ? ONE_VENUES : [])
      ingestOthers?.push(await oneVenueIngest(venue, name, protocol, COUNTS[name], pauseMs, print))
    const load = parts.includes("b") ? await loadBench(venue, print) : undefined
    const targets: Array<{ target: string; measured: string; met: boolean }> = []
    if (ingest !== undefined)
      targets.push({
        target: "ingest: service reader >= 0.5x the ws + JSON.parse anchor",
        measured: `${ingest.ratio}x of wall time (${ingest.readerFps} vs ${ingest.anchorFps} frames/s), ${ingest.busyRatio}x per busy second of the reading thread; against Node's WebSocket + JSON.parse ${ingest.nodeRatio}x (${ingest.nodeBusyRatio}x)`,
        met: ingest.ratio >= 0.5 && ingest.busyRatio >= 0.5
      })
    for (const v of ingestOthers ?? [])
      targets.push({
        target: `ingest on ${v.venue}: service reader >= 0.5x the ws + JSON.parse anchor`,
        measured: `${v.ratio}x of wall time (${v.readerFps} vs ${v.anchorFps} frames/s; ${v.perpetuals} perpetuals, ${v.frames} frames a side), ${v.busyRatio}x per busy second of the reading thread; ${v.malformed} malformed`,
        met: v.ratio >= 0.5 && v.busyRatio >= 0.5 && v.malformed === 0
      })
    if (load !== undefined) {
      const growthPer10Min = (load.rssGrowthMb * 600) / load.windowSeconds
      const age = load.bookAge.find((a) => a.movesPerBookPerSecond === 1)
      targets.push(
        {
          target: `CPU at 5,000 frames/s across the four venues <= 25% of one core`,
          // Scaled to 5,000 frames/s where the venues' worker fell short of the pace (a loaded machine).
          measured: `${load.cpuPctOfOneCore}% at ${load.framesPerSecond} frames/s (${round1((load.cpuPctOfOneCore * 5_000) / Math.max(1, load.framesPerSecond))}% scaled to 5,000; books still: ${load.cpuPctStill}%)`,
          met: (load.cpuPctOfOneCore * Math.max(5_000, load.framesPerSecond)) / Math.max(1, load.framesPerSecond) <= 25
        },
        {
          target: "RSS growth <= 100 MB over 10 minutes at 5,000 frames/s",
          measured: `${load.rssGrowthMb} MB over ${load.windowSeconds} s${load.windowSeconds < 600 ? ` (${Math.round(growthPer10Min)} MB per 10 minutes if linear)` : ""}`,
          met: growthPer10Min <= 100
        },
        {
          target: "paid price p99 at 5,000 frames/s <= 1.25x without",
          measured: `${load.priceP99Ratio}x at ${load.priceRate} req/s, rounds pooled (${load.priceP99LoadedMs} vs ${load.priceP99StillMs} ms; saturated: ${load.saturatedP99LoadedMs} vs ${load.saturatedP99StillMs} ms, ${load.priceRpsLoaded} vs ${load.priceRpsStill} req/s)`,
          met: load.priceP99Ratio <= 1.25
        },
        {
          target: `book age at answer time p99 <= 1 s with ${load.perpetuals} perpetuals on four venues`,
          measured: `${age?.p99Ms} ms (${load.bookAge
            .map(
              (a) =>
                `${a.movesPerBookPerSecond} moves/s: p99 ${a.p99Ms} ms, max ${a.maxMs} ms, ${(a.quotedShare * 100).toFixed(1)}% quoted; by venue ${Object.entries(
                  a.byVenue
                )
                  .map(([v, x]) => `${v} p99 ${x.p99Ms} ms`)
                  .join(", ")}`
            )
            .join("; ")})`,
          met: load.bookAge.every((a) => a.p99Ms <= 1_000 && a.unmatched === 0)
        }
      )
    }
    for (const t of targets) print(`streams target: ${t.target}: ${t.measured}: ${t.met ? "met" : "NOT met"}\n`)
    return { machine, venueNice: VENUE_NICE, ingest, ingestOthers, load, targets }
  } finally {
    await venue.terminate()
  }
}
