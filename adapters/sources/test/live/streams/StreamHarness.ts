/**
 * Shared pieces of the market-stream tests: a sink recording what a reader emits (venue units, as read), an
 * instrument maker, and a runner starting `runMarketStream` against a local fake venue (`../FakeWsServer.ts`) with
 * short limits, in real time (conditions are awaited with `eventually`, never slept on).
 */
import type { QuoteBoard } from "@market-data/core"
import { Effect } from "effect"
import { type MarketStreamStats, runMarketStream } from "../../../src/live/stream/MarketStream.ts"
import type {
  MarketStreamProtocol,
  StreamLimits,
  VenueSink,
  VenueTickerFields
} from "../../../src/live/stream/Protocol.ts"
import type { Instrument, LiveVenue } from "../../../src/live/Venue.ts"
import type { FakeWsServer } from "../FakeWsServer.ts"

export type RecordedQuote = readonly [
  symbol: string,
  t: number,
  bid: number,
  bidSize: number,
  ask: number,
  askSize: number
]
export type RecordedTicker = readonly [symbol: string, t: number, fields: VenueTickerFields]

/** A sink keeping every quote and ticker a reader emits. */
export const recordingSink = () => {
  const quotes: Array<RecordedQuote> = []
  const tickers: Array<RecordedTicker> = []
  const sink: VenueSink = {
    quote: (s, t, b, bs, a, as) => {
      quotes.push([s, t, b, bs, a, as])
    },
    ticker: (s, t, f) => {
      tickers.push([s, t, f])
    }
  }
  return { quotes, tickers, sink }
}

export const instrument = (
  venue: LiveVenue,
  symbol: string,
  assetId: string,
  units: {
    readonly tokensPerUnit?: number
    readonly tokensPerContract?: number
    readonly fundingIntervalMs?: number
  } = {}
): Instrument => ({
  assetId,
  venue,
  symbol,
  tokensPerUnit: units.tokensPerUnit ?? 1,
  tokensPerContract: units.tokensPerContract ?? 1,
  fundingIntervalMs: units.fundingIntervalMs ?? 8 * 3_600_000
})

/** Short limits for the fake venues: keep-alives every 200 ms, a link silent for 1.5 s is dead. */
export const testLimits: Partial<StreamLimits> = { pingEveryMs: 200, silenceMs: 1_500, symbolSilenceMs: 60_000 }

/** Runs `protocol`'s streams against `server` into `board` for the test's scope; returns the stats it keeps. */
export const startStream = (
  protocol: MarketStreamProtocol,
  server: FakeWsServer,
  board: QuoteBoard,
  instruments: () => ReadonlyMap<string, Instrument>,
  limits: Partial<StreamLimits> = {}
) =>
  Effect.gen(function* () {
    const stats: MarketStreamStats = { frames: 0, malformed: 0, connects: 0, rotations: 0, gaps: 0, lastMalformed: "" }
    yield* Effect.forkScoped(
      runMarketStream(
        protocol,
        {
          baseUrl: server.url,
          instruments,
          timeoutMs: 1_000,
          followEveryMs: 200,
          backoffBaseMs: 50,
          backoffCapMs: 200,
          limits: { ...testLimits, ...limits }
        },
        board,
        stats
      )
    )
    return stats
  })
