/**
 * The replay venues on a worker thread of the streams bench (`streams.ts`), so that producing their frames does not
 * share an event loop with what the bench measures (a stream reader in the bench's main thread, or the bench's HTTP
 * load): the replay Binance alone (`test/support/replay/binance-venue.ts`, `start`), or the four replay venues
 * (`test/support/replay/four-venues.ts`, `startFour`). The main thread drives it with messages `{id, op, ...}` and
 * gets `{id, result}` or `{id, error}` back (`VenueWorker` in `streams.ts`).
 */
import { parentPort, workerData } from "node:worker_threads"
import { lowerThreadPriority } from "../adapters/sources/src/live/stream/ThreadPriority.ts"
import { type ReplayVenue, type ReplayVenueOptions, startBinanceReplay } from "../test/support/replay/binance-venue.ts"
import { startBybitReplay } from "../test/support/replay/bybit-venue.ts"
import {
  type FourVenueOptions,
  type FourVenues,
  startFourVenues,
  VENUES,
  type VenueName
} from "../test/support/replay/four-venues.ts"
import { startHyperliquidReplay } from "../test/support/replay/hyperliquid-venue.ts"
import { startOkxReplay } from "../test/support/replay/okx-venue.ts"
import type { ReplayVenueBase } from "../test/support/replay/serve.ts"

/** Frame kinds that carry market data (not answers to requests). */
const DATA_KINDS = ["book", "kline", "mark", "funding", "oi"]

/** The venues part (a) measures one at a time beside Binance. */
export type OneVenueName = "bybit" | "okx" | "hyperliquid"

export type VenueRequest =
  | { readonly op: "start"; readonly options: ReplayVenueOptions }
  /** One of the other replays alone (part (a)): `symbols` perpetuals, books still until blasted. */
  | { readonly op: "startOne"; readonly venue: OneVenueName; readonly symbols: number }
  | { readonly op: "startFour"; readonly options: FourVenueOptions }
  /** Every connection of one of the four venues cut. */
  | { readonly op: "drop"; readonly venue: VenueName }
  | { readonly op: "blast"; readonly frames: number }
  | { readonly op: "setMeanInterval"; readonly ms: number }
  /** Staleness of shown quotes: `[symbol, bid, ask, atMs]` each (venue units); null where never published. */
  | { readonly op: "staleness"; readonly queries: ReadonlyArray<readonly [string, number, number, number]> }
  | { readonly op: "stats" }
  | { readonly op: "klinesSymbols" }
  | { readonly op: "streamedSymbols" }
  | { readonly op: "close" }

// `BENCH_STREAMS_VENUE_NICE` (`streams.ts`): the venues stand for machines elsewhere; at a niceness above the
// service's threads, producing their frames takes the cores the service and the load leave.
const venueNice = (workerData as { readonly nice?: number } | null)?.nice ?? 0
const niceResult = lowerThreadPriority(venueNice)
if (venueNice > 0 && !niceResult.applied) console.error(`streams venue worker: niceness not set: ${niceResult.reason}`)

let venue: ReplayVenue | undefined
let four: FourVenues | undefined
let one: ReplayVenueBase | undefined

const startOne = (name: OneVenueName, symbols: number): Promise<ReplayVenueBase> => {
  const options = { symbols, meanIntervalMs: 0 }
  if (name === "bybit") return startBybitReplay(options)
  if (name === "okx") return startOkxReplay(options)
  return startHyperliquidReplay(options)
}

/** The requests of one venue started alone (`startOne`). */
const handleOne = async (v: ReplayVenueBase, m: VenueRequest): Promise<unknown> => {
  switch (m.op) {
    case "blast":
      return v.blast(m.frames)
    case "stats":
      return { connections: v.connections(), subscribedSymbols: v.streamedSymbols().length, frames: v.frames() }
    case "close":
      await v.close()
      one = undefined
      return null
    default:
      throw new Error(`${m.op}: not served by one venue alone`)
  }
}

/** The four venues' requests. */
const handleFour = async (f: FourVenues, m: VenueRequest): Promise<unknown> => {
  switch (m.op) {
    case "drop":
      f.venues[m.venue].dropStreams()
      return null
    case "setMeanInterval":
      f.setMeanInterval(m.ms)
      return null
    case "staleness":
      return m.queries.map(([symbol, bid, ask, atMs]) => f.stalenessOf(symbol, bid, ask, atMs) ?? null)
    case "stats": {
      const frames = f.frames()
      const sum = (kinds: ReadonlyArray<string>) =>
        VENUES.reduce((n, v) => n + kinds.reduce((k, kind) => k + (frames[v].byKind[kind] ?? 0), 0), 0)
      return {
        ws: {
          bookFrames: sum(["book"]),
          klineFrames: sum(["kline"]),
          markFrames: sum(["mark", "funding", "oi"]),
          connects: 0
        },
        byVenue: Object.fromEntries(
          VENUES.map((v) => [
            v,
            {
              frames: DATA_KINDS.reduce((n, kind) => n + (frames[v].byKind[kind] ?? 0), 0),
              byKind: frames[v].byKind,
              connections: f.venues[v].connections(),
              streamed: f.venues[v].streamedSymbols().length,
              barsAsked: f.venues[v].barsAsked().length
            }
          ])
        ),
        connections: VENUES.reduce((n, v) => n + f.venues[v].connections(), 0),
        subscribedSymbols: VENUES.reduce((n, v) => n + f.venues[v].streamedSymbols().length, 0),
        moves: 0,
        limited: f.binance.rest.limited(),
        weightLastMinute: f.binance.rest.weightLastMinute()
      }
    }
    case "klinesSymbols":
      return VENUES.flatMap((v) => f.venues[v].barsAsked())
    case "streamedSymbols":
      return VENUES.flatMap((v) => f.venues[v].streamedSymbols())
    case "close":
      await f.close()
      four = undefined
      return null
    default:
      throw new Error(`${m.op}: not served by the four venues`)
  }
}

const handle = async (m: VenueRequest): Promise<unknown> => {
  if (m.op === "startOne") {
    await one?.close()
    one = await startOne(m.venue, m.symbols)
    return { wsUrl: one.wsUrl, symbols: one.symbols }
  }
  if (one !== undefined) return handleOne(one, m)
  if (m.op === "start") {
    await venue?.close()
    venue = await startBinanceReplay(m.options)
    return { restUrl: venue.restUrl, wsUrl: venue.wsUrl, symbols: venue.symbols }
  }
  if (m.op === "startFour") {
    await venue?.close()
    venue = undefined
    await four?.close()
    four = await startFourVenues(m.options)
    return { env: four.env(), restUrl: four.binance.restUrl, wsUrl: four.binance.wsUrl, symbols: four.symbols }
  }
  if (four !== undefined) return handleFour(four, m)
  const v = venue
  if (v === undefined) throw new Error("no venue started")
  switch (m.op) {
    case "drop":
      throw new Error(`${m.op}: the four venues are not started`)
    case "blast":
      return v.blast(m.frames)
    case "setMeanInterval":
      v.setMeanInterval(m.ms)
      return null
    case "staleness":
      return m.queries.map(([symbol, bid, ask, atMs]) => v.stalenessOf(symbol, bid, ask, atMs) ?? null)
    case "stats":
      return {
        ws: v.ws.stats(),
        connections: v.ws.connections().length,
        subscribedSymbols: v.ws.subscribedSymbols(),
        moves: v.moves(),
        rest: v.rest.byPath(),
        limited: v.rest.limited(),
        weightLastMinute: v.rest.weightLastMinute()
      }
    case "klinesSymbols":
      return [...new Set(v.rest.log.filter((e) => e.path === "/fapi/v1/klines").map((e) => e.symbol))]
    case "streamedSymbols": {
      const out = new Set<string>()
      for (const c of v.ws.connections())
        for (const t of c.topics)
          if (t.endsWith("@bookTicker")) out.add(t.slice(0, -"@bookTicker".length).toUpperCase())
      return [...out]
    }
    case "close":
      await v.close()
      venue = undefined
      return null
  }
}

parentPort?.on("message", (m: VenueRequest & { readonly id: number }) => {
  handle(m).then(
    (result) => parentPort?.postMessage({ id: m.id, result }),
    (e: unknown) => parentPort?.postMessage({ id: m.id, error: String(e) })
  )
})
