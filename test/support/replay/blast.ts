/**
 * Book moves as fast as the connections drain, for the streams bench's ingest measure (`bench/streams.ts`, part
 * (a)) on the Bybit, OKX and Hyperliquid replays (the Binance replay has its own `blast`). Each move is the
 * market's own (`Market.moveNow`), so the frames are the venue's: what its `onMove` sends for a move, to whoever
 * subscribes (the top-of-book frame, and the forming bar at most once a second where a kline topic is subscribed).
 */
import type { Socket } from "node:net"
import type { Market, MarketBook } from "./market.ts"
import type { VenueServers } from "./serve.ts"

export interface BlastResult {
  /** Frames of every kind sent while blasting. */
  readonly sent: number
  /** Top-of-book frames among them (`kind` "book"). */
  readonly book: number
  readonly ms: number
}

/**
 * Moves the books whose top-of-book topic (`bookTopic`) someone subscribes, round robin, until `frames` book frames
 * were sent; a move waits while a subscriber's socket holds `bufferBytes` or more unsent. Up to 512 moves go out in
 * one corked write per socket, as a venue batching its pushes would.
 */
export const blastMoves = (
  servers: VenueServers,
  market: Market,
  bookTopic: (symbol: string) => string,
  frames: number,
  bufferBytes = 4 * 1024 * 1024
): Promise<BlastResult> =>
  new Promise((resolve) => {
    const t0 = performance.now()
    const sent0 = servers.stats.framesSent
    const book0 = servers.stats.byKind.book ?? 0
    const targets: Array<{ readonly b: MarketBook; readonly subs: Set<{ readonly socket: unknown }> }> = []
    for (const b of market.books.values()) {
      const subs = servers.subscribers.get(bookTopic(b.s.symbol))
      if (subs !== undefined && subs.size > 0) targets.push({ b, subs })
    }
    const done = () =>
      resolve({
        sent: servers.stats.framesSent - sent0,
        book: (servers.stats.byKind.book ?? 0) - book0,
        ms: performance.now() - t0
      })
    if (targets.length === 0) return done()
    const raw = (c: { readonly socket: unknown }) => (c.socket as { _socket?: Socket })._socket
    const full = (subs: Set<{ readonly socket: unknown }>) => {
      for (const c of subs) if ((c.socket as { bufferedAmount: number }).bufferedAmount >= bufferBytes) return true
      return false
    }
    let k = 0
    const pump = () => {
      for (const c of servers.conns) raw(c)?.cork()
      let moved = 0
      while ((servers.stats.byKind.book ?? 0) - book0 < frames && moved < 512 * Math.max(1, servers.conns.size)) {
        const t = targets[k % targets.length] as (typeof targets)[number]
        if (full(t.subs)) break
        k++
        moved++
        market.moveNow(t.b)
      }
      for (const c of servers.conns) raw(c)?.uncork()
      if ((servers.stats.byKind.book ?? 0) - book0 >= frames) return done()
      setImmediate(pump)
    }
    pump()
  })
