/**
 * The replay Binance (`test/support/replay/binance-venue.ts`) on a worker thread of the streams bench
 * (`streams.ts`), so that producing its frames does not share an event loop with what the bench measures (a stream
 * reader in the bench's main thread, or the bench's HTTP load). The main thread drives it with messages
 * `{id, op, ...}` and gets `{id, result}` or `{id, error}` back (`VenueWorker` in `streams.ts`).
 */
import { parentPort } from "node:worker_threads"
import { type ReplayVenue, type ReplayVenueOptions, startBinanceReplay } from "../test/support/replay/binance-venue.ts"

export type VenueRequest =
  | { readonly op: "start"; readonly options: ReplayVenueOptions }
  | { readonly op: "blast"; readonly frames: number }
  | { readonly op: "setMeanInterval"; readonly ms: number }
  /** Staleness of shown quotes: `[symbol, bid, ask, atMs]` each (venue units); null where never published. */
  | { readonly op: "staleness"; readonly queries: ReadonlyArray<readonly [string, number, number, number]> }
  | { readonly op: "stats" }
  | { readonly op: "klinesSymbols" }
  | { readonly op: "streamedSymbols" }
  | { readonly op: "close" }

let venue: ReplayVenue | undefined

const handle = async (m: VenueRequest): Promise<unknown> => {
  if (m.op === "start") {
    await venue?.close()
    venue = await startBinanceReplay(m.options)
    return { restUrl: venue.restUrl, wsUrl: venue.wsUrl, symbols: venue.symbols }
  }
  const v = venue
  if (v === undefined) throw new Error("no venue started")
  switch (m.op) {
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
