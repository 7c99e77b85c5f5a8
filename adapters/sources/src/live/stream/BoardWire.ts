/**
 * The market streams' updates of a `QuoteBoard` as messages between threads: the streams run on a worker thread
 * (`StreamWorker.ts`), which reads every frame, and the thread that answers requests applies what they carry to
 * its board (`WorkerStreams.ts`).
 *
 * Why a wire and not the board itself: reading a frame allocates (the `JSON.parse` tree, the reader's records),
 * about 20 MB a second at 5,000 frames a second; on the answering thread that is garbage its collector must
 * sweep while requests wait. Across the wire the answering thread receives, every `FLUSH_MS` at most, one
 * `Float64Array` of fixed-size numeric records (quotes, tickers, bars) and the few names first used in it; applying
 * them updates the board's records in place and allocates nothing per update.
 *
 * Records (one `Float64Array`, `NaN` for a field the update does not carry, names as indexes into the receiver's
 * name table, which grows with each message's `names`):
 * - quote:  kind 1, asset, venue, t, bid, bidSize, ask, askSize
 * - ticker: kind 2, asset, venue, t, mark, index, fundingRate, predictedRate, nextFundingMs, intervalMs, oiUsd
 * - bar:    kind 3, asset, venue, t, eventMs, open, high, low, close, volume, takerBuyUsd, takerSellUsd, closed
 *
 * The rarer changes (a symbol forgotten, the silent set, the venue's health and counters) travel as small objects,
 * after the records written before them, so the receiver applies everything in the order the streams did.
 */
import type { QuoteBoard, StreamedBar, StreamedQuote, StreamedTicker, StreamHealth } from "@market-data/core"
import type { MarketStreamStats } from "./MarketStream.ts"

const QUOTE = 1
const TICKER = 2
const BAR = 3
const QUOTE_SIZE = 8
const TICKER_SIZE = 11
const BAR_SIZE = 13
/** Doubles in one message's records (32 KB): a full buffer is sent at once. */
const RECORDS_CAPACITY = 4_096
/** The longest a written update waits before it is sent (it is sent sooner when the buffer fills). */
export const FLUSH_MS = 10

/** What crosses from the streams' thread to the answering thread. */
export type BoardMessage =
  | {
      readonly type: "updates"
      /** Names (asset IDs, venues) first used in these records, in the order of their indexes. */
      readonly names: ReadonlyArray<string>
      readonly records: Float64Array
      /** Doubles of `records` in use. */
      readonly length: number
    }
  | { readonly type: "forget"; readonly assetId: string; readonly venue: string }
  | {
      readonly type: "silent"
      readonly venue: string
      readonly assetIds: ReadonlyArray<string>
      readonly nowMs: number
    }
  /** The venue's health, with its stream's counters as they are then. */
  | {
      readonly type: "health"
      readonly venue: string
      readonly health: StreamHealth
      readonly stats?: MarketStreamStats | undefined
    }

/** `undefined` as the wire's `NaN`, and back. */
const out = (x: number | undefined): number => (x === undefined ? Number.NaN : x)
const back = (x: number): number | undefined => (Number.isNaN(x) ? undefined : x)

/**
 * The writing side: a `QuoteBoard` whose changes are also written to the wire (`post`), over a board of the
 * streams' own thread (`local`, which the streams read back: a ticker's last mark, the venue's last health).
 * Each health carries the venue's counters (`statsOf`). Records wait at most `FLUSH_MS` (`schedule` runs the
 * flush later; a test passes its own).
 */
export const makeBoardWriter = (
  local: QuoteBoard,
  post: (message: BoardMessage, transfer?: ReadonlyArray<ArrayBuffer>) => void,
  options: {
    readonly statsOf?: (venue: string) => MarketStreamStats | undefined
    readonly schedule?: (flush: () => void) => void
  } = {}
): { readonly board: QuoteBoard; readonly flush: () => void } => {
  const schedule = options.schedule ?? ((flush: () => void) => void setTimeout(flush, FLUSH_MS))
  const indexes = new Map<string, number>()
  let newNames: Array<string> = []
  let records = new Float64Array(RECORDS_CAPACITY)
  let length = 0
  let scheduled = false
  /**
   * The silent set last sent per venue: sent again only when it changed, or when the venue gained an entry since
   * (a set marks the entries there are when it is applied, so the same set can mark a new entry).
   */
  const silentSent = new Map<string, ReadonlySet<string>>()
  const entered = new Set<string>()
  const noteEntry = (assetId: string, venue: string) => {
    if (!entered.has(venue) && !local.venuesOf(assetId).includes(venue)) entered.add(venue)
  }

  const nameOf = (name: string): number => {
    let i = indexes.get(name)
    if (i === undefined) {
      i = indexes.size
      indexes.set(name, i)
      newNames.push(name)
    }
    return i
  }
  const flush = () => {
    scheduled = false
    if (length === 0) return
    const sent = records
    post({ type: "updates", names: newNames, records: sent, length }, [sent.buffer as ArrayBuffer])
    newNames = []
    records = new Float64Array(RECORDS_CAPACITY)
    length = 0
  }
  /** Room for `size` more doubles, flushing first if the buffer cannot take them; the record's first index. */
  const reserve = (size: number): number => {
    if (length + size > records.length) flush()
    const at = length
    length += size
    if (!scheduled) {
      scheduled = true
      schedule(flush)
    }
    return at
  }
  /** A change that is not a record: the records before it are sent first, so the order holds. */
  const postInOrder = (message: BoardMessage) => {
    flush()
    post(message)
  }

  const board: QuoteBoard = {
    ...local,
    applyQuote: (assetId, venue, q) => {
      noteEntry(assetId, venue)
      local.applyQuote(assetId, venue, q)
      const a = nameOf(assetId)
      const v = nameOf(venue)
      const at = reserve(QUOTE_SIZE)
      const r = records
      r[at] = QUOTE
      r[at + 1] = a
      r[at + 2] = v
      r[at + 3] = q.t
      r[at + 4] = q.bid
      r[at + 5] = q.bidSize
      r[at + 6] = q.ask
      r[at + 7] = q.askSize
    },
    applyTicker: (assetId, venue, x) => {
      noteEntry(assetId, venue)
      local.applyTicker(assetId, venue, x)
      const a = nameOf(assetId)
      const v = nameOf(venue)
      const at = reserve(TICKER_SIZE)
      const r = records
      r[at] = TICKER
      r[at + 1] = a
      r[at + 2] = v
      r[at + 3] = x.t
      r[at + 4] = out(x.mark)
      r[at + 5] = out(x.index)
      r[at + 6] = out(x.fundingRate)
      r[at + 7] = out(x.predictedRate)
      r[at + 8] = out(x.nextFundingMs)
      r[at + 9] = out(x.intervalMs)
      r[at + 10] = out(x.oiUsd)
    },
    applyBar: (assetId, venue, b) => {
      noteEntry(assetId, venue)
      local.applyBar(assetId, venue, b)
      const a = nameOf(assetId)
      const v = nameOf(venue)
      const at = reserve(BAR_SIZE)
      const r = records
      r[at] = BAR
      r[at + 1] = a
      r[at + 2] = v
      r[at + 3] = b.t
      r[at + 4] = b.eventMs
      r[at + 5] = b.open
      r[at + 6] = b.high
      r[at + 7] = b.low
      r[at + 8] = b.close
      r[at + 9] = b.volume
      r[at + 10] = out(b.takerBuyUsd)
      r[at + 11] = out(b.takerSellUsd)
      r[at + 12] = b.closed === undefined ? Number.NaN : b.closed ? 1 : 0
    },
    forget: (assetId, venue) => {
      local.forget(assetId, venue)
      postInOrder({ type: "forget", assetId, venue })
    },
    setSilent: (venue, assetIds, nowMs = 0) => {
      local.setSilent(venue, assetIds, nowMs)
      const before = silentSent.get(venue)
      if (
        !entered.has(venue) &&
        before !== undefined &&
        before.size === assetIds.size &&
        [...assetIds].every((id) => before.has(id))
      )
        return
      entered.delete(venue)
      silentSent.set(venue, new Set(assetIds))
      postInOrder({ type: "silent", venue, assetIds: [...assetIds], nowMs })
    },
    setHealth: (venue, health) => {
      local.setHealth(venue, health)
      const stats = options.statsOf?.(venue)
      postInOrder({ type: "health", venue, health, stats: stats === undefined ? undefined : { ...stats } })
    }
  }
  return { board, flush }
}

/**
 * The receiving side: applies messages to `board` in order, naming records by the table it keeps (one reader per
 * writer: a new worker starts a new table). Counters go to `onStats`.
 */
export const makeBoardReader = (
  board: QuoteBoard,
  onStats: (venue: string, stats: MarketStreamStats) => void
): { readonly apply: (message: BoardMessage) => void } => {
  const names: Array<string> = []
  // One record of each kind, filled per update: the board copies what it keeps.
  const quote: { -readonly [K in keyof StreamedQuote]: StreamedQuote[K] } = {
    t: 0,
    bid: 0,
    bidSize: 0,
    ask: 0,
    askSize: 0
  }
  const ticker: { -readonly [K in keyof StreamedTicker]: StreamedTicker[K] } = { t: 0 }
  const bar: { -readonly [K in keyof StreamedBar]: StreamedBar[K] } = {
    t: 0,
    eventMs: 0,
    open: 0,
    high: 0,
    low: 0,
    close: 0,
    volume: 0
  }
  const name = (i: number): string => {
    const n = names[i]
    if (n === undefined) throw new Error(`board wire: name ${i} was never sent`)
    return n
  }
  const applyRecords = (r: Float64Array, length: number) => {
    let at = 0
    while (at < length) {
      const kind = r[at] as number
      const assetId = name(r[at + 1] as number)
      const venue = name(r[at + 2] as number)
      if (kind === QUOTE) {
        quote.t = r[at + 3] as number
        quote.bid = r[at + 4] as number
        quote.bidSize = r[at + 5] as number
        quote.ask = r[at + 6] as number
        quote.askSize = r[at + 7] as number
        board.applyQuote(assetId, venue, quote)
        at += QUOTE_SIZE
      } else if (kind === TICKER) {
        ticker.t = r[at + 3] as number
        ticker.mark = back(r[at + 4] as number)
        ticker.index = back(r[at + 5] as number)
        ticker.fundingRate = back(r[at + 6] as number)
        ticker.predictedRate = back(r[at + 7] as number)
        ticker.nextFundingMs = back(r[at + 8] as number)
        ticker.intervalMs = back(r[at + 9] as number)
        ticker.oiUsd = back(r[at + 10] as number)
        board.applyTicker(assetId, venue, ticker)
        at += TICKER_SIZE
      } else if (kind === BAR) {
        bar.t = r[at + 3] as number
        bar.eventMs = r[at + 4] as number
        bar.open = r[at + 5] as number
        bar.high = r[at + 6] as number
        bar.low = r[at + 7] as number
        bar.close = r[at + 8] as number
        bar.volume = r[at + 9] as number
        bar.takerBuyUsd = back(r[at + 10] as number)
        bar.takerSellUsd = back(r[at + 11] as number)
        const closed = r[at + 12] as number
        bar.closed = Number.isNaN(closed) ? undefined : closed === 1
        board.applyBar(assetId, venue, bar)
        at += BAR_SIZE
      } else {
        throw new Error(`board wire: unknown record kind ${kind} at ${at}`)
      }
    }
  }
  return {
    apply: (m) => {
      switch (m.type) {
        case "updates":
          for (const n of m.names) names.push(n)
          applyRecords(m.records, m.length)
          return
        case "forget":
          board.forget(m.assetId, m.venue)
          return
        case "silent":
          board.setSilent(m.venue, new Set(m.assetIds), m.nowMs)
          return
        case "health":
          if (m.stats !== undefined) onStats(m.venue, m.stats)
          board.setHealth(m.venue, m.health)
          return
      }
    }
  }
}
