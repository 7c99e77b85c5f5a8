/**
 * Binance USD-M futures market streams (documentation: "Websocket Market Streams" of the USDⓈ-M futures API, and
 * its "Important WebSocket Change Notice" on the routed endpoints).
 *
 * Streams chosen:
 * - `<symbol>@bookTicker` per perpetual, on the high-frequency endpoint `/public/stream`: the best bid and ask
 *   with their quantities, pushed in real time on every change. Payload `{"e":"bookTicker","u" update id,"E"
 *   event time,"T" transaction time,"s","b","B","a","A"}`. (The all-market `!bookTicker` is documented with a 5 s
 *   update speed, too slow for a quote.)
 * - `!markPrice@arr@1s` on the regular endpoint `/market/stream`: every perpetual's mark price, index price,
 *   funding rate and next funding time each second. Payload: an array of `{"e":"markPriceUpdate","E","s","p"
 *   mark,"i" index,"P" estimated settle price,"r" funding rate,"T" next funding time}`.
 * - `<symbol>@kline_15m` per perpetual on `/market/stream`: the 15-minute bar still forming, pushed every 250 ms
 *   while it trades: `{"e":"kline","E","s","k":{"t" open time,"T","i":"15m","o","c","h","l","v" base volume,"q"
 *   quote volume,"V","Q" taker buy quote volume,"x" closed}}`. The feed writes it once a minute in place of the
 *   REST forming-bar request (550 klines a minute), with its taker buy and sell volume (`Q`, `q - Q`).
 * Combined-stream frames are wrapped `{"stream","data"}`. Subscriptions: `{"method":"SUBSCRIBE","params":[...],
 * "id"}`, answered `{"result":null,"id"}`; errors `{"error":{"code","msg"},"id"}` (or `{"code","msg","id"}`).
 *
 * Limits (documented): 10 incoming messages per second per connection, 200 streams per connection (the older
 * and stricter figure; newer pages say 1024), a connection is closed at 24 hours, the server pings every 3 minutes
 * (the websocket answers) and drops a connection without a pong for 10 minutes; 300 connection attempts per 5
 * minutes per IP. Chosen: 200 topics a connection, 50 topics a SUBSCRIBE, 5 messages a second, one connect a
 * second, rotation before 24 h, `LIST_SUBSCRIPTIONS` every 5 s as the client's keep-alive (its answer proves the
 * link alive, also on a connection whose streams are quiet), silence past 15 s is a dead link, a symbol absent from the mark-price array for 30 s is silent.
 *
 * Open interest is not streamed by Binance: it stays on REST (the tickers job). Binance numbers depth diffs
 * (`pu`/`u`), not book tickers: each book-ticker frame is the whole top of book, so a lost one is repaired by the
 * next, and an older update id than the last applied (a rotation's overlap) is ignored by the board's event time.
 */
import { arr, Malformed, num, obj, str } from "../../Parse.ts"
import type { FrameKind, MarketStreamProtocol, StreamReader, VenueSink } from "../../stream/Protocol.ts"

export const BINANCE_MARK_TOPIC = "!markPrice@arr@1s"
const BOOK_SUFFIX = "@bookTicker"
const KLINE_SUFFIX = "@kline_15m"
/** The request id of the keep-alive (`LIST_SUBSCRIPTIONS`); the connection manager's ids start at 100. */
const PING_ID = 1

const binanceReader = (): StreamReader => ({
  read: (text: string, sink: VenueSink): FrameKind => {
    const m = obj(JSON.parse(text), "$")
    if (m.id !== undefined && m.id !== null) {
      const id = String(m.id)
      const error =
        m.error !== undefined && m.error !== null ? obj(m.error, "$.error") : m.code !== undefined ? m : undefined
      if (error !== undefined)
        return { kind: "refused", id, message: `code ${String(error.code)}: ${String(error.msg)}` }
      if (m.id === PING_ID) return { kind: "pong" }
      if ("result" in m) return { kind: "ack", id }
      throw new Malformed("$: an answer with neither result nor error")
    }
    const data = m.data !== undefined ? m.data : m
    if (Array.isArray(data)) {
      arr(data, "$.data").forEach((x, n) => {
        const e = obj(x, `$.data[${n}]`)
        if (e.e !== "markPriceUpdate") throw new Malformed(`$.data[${n}].e: not markPriceUpdate`)
        const nextFundingMs = num(e.T, `$.data[${n}].T`)
        sink.ticker(str(e.s, `$.data[${n}].s`), num(e.E, `$.data[${n}].E`), {
          mark: num(e.p, `$.data[${n}].p`),
          index: num(e.i, `$.data[${n}].i`),
          fundingRate: num(e.r, `$.data[${n}].r`),
          // Binance sends 0 for a perpetual without funding (delivery contracts are not subscribed).
          ...(nextFundingMs > 0 ? { nextFundingMs } : {})
        })
      })
      return { kind: "data" }
    }
    const e = obj(data, "$.data")
    if (e.e === "bookTicker") {
      sink.quote(
        str(e.s, "$.data.s"),
        num(e.E ?? e.T, "$.data.E"),
        num(e.b, "$.data.b"),
        num(e.B, "$.data.B"),
        num(e.a, "$.data.a"),
        num(e.A, "$.data.A")
      )
      return { kind: "data" }
    }
    if (e.e === "kline") {
      const k = obj(e.k, "$.data.k")
      if (k.i !== "15m") return { kind: "other" }
      sink.bar?.(str(e.s, "$.data.s"), num(e.E, "$.data.E"), {
        openMs: num(k.t, "$.data.k.t"),
        open: num(k.o, "$.data.k.o"),
        high: num(k.h, "$.data.k.h"),
        low: num(k.l, "$.data.k.l"),
        close: num(k.c, "$.data.k.c"),
        volume: num(k.v, "$.data.k.v"),
        quoteVolume: num(k.q, "$.data.k.q"),
        takerBuyQuote: num(k.Q, "$.data.k.Q"),
        closed: k.x === true
      })
      return { kind: "data" }
    }
    if (e.e === "markPriceUpdate") {
      sink.ticker(str(e.s, "$.data.s"), num(e.E, "$.data.E"), {
        mark: num(e.p, "$.data.p"),
        index: num(e.i, "$.data.i"),
        fundingRate: num(e.r, "$.data.r"),
        nextFundingMs: num(e.T, "$.data.T")
      })
      return { kind: "data" }
    }
    return { kind: "other" }
  }
})

export const binanceStreamProtocol: MarketStreamProtocol = {
  venue: "binance",
  url: (baseUrl, topic) => `${baseUrl}/${topic.endsWith(BOOK_SUFFIX) ? "public" : "market"}/stream`,
  closedBars: true,
  components: ["books", "fundingState"],
  marketTopics: [BINANCE_MARK_TOPIC],
  symbolTopics: (symbol) => [`${symbol.toLowerCase()}${BOOK_SUFFIX}`, `${symbol.toLowerCase()}${KLINE_SUFFIX}`],
  symbolOfTopic: (topic) =>
    topic.endsWith(BOOK_SUFFIX)
      ? topic.slice(0, -BOOK_SUFFIX.length).toUpperCase()
      : topic.endsWith(KLINE_SUFFIX)
        ? topic.slice(0, -KLINE_SUFFIX.length).toUpperCase()
        : undefined,
  subscribe: (topics, id) => JSON.stringify({ method: "SUBSCRIBE", params: topics, id }),
  unsubscribe: (topics, id) => JSON.stringify({ method: "UNSUBSCRIBE", params: topics, id }),
  ping: JSON.stringify({ method: "LIST_SUBSCRIPTIONS", id: PING_ID }),
  limits: {
    topicsPerConnection: 200,
    topicsPerMessage: 50,
    messagesPerSecond: 5,
    connectsPerSecond: 1,
    maxLifetimeMs: 24 * 3_600_000,
    pingEveryMs: 5_000,
    silenceMs: 15_000,
    symbolSilenceMs: 30_000
  },
  reader: binanceReader,
  describe:
    "`<symbol>@bookTicker` (public endpoint) for the top of book, `!markPrice@arr@1s` for mark, index and funding, `<symbol>@kline_15m` for the forming bar and its taker flow"
}
