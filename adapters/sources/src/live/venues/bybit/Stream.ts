/**
 * Bybit v5 public market stream, linear (USDT) perpetuals (documentation: v5 "WebSocket Stream": "Connect",
 * "Public / Ticker", "Public / Orderbook"; "Rate Limit Rules", section "Websocket IP limit").
 *
 * Stream chosen: `tickers.<SYMBOL>` per perpetual on `/v5/public/linear`. One topic carries both components:
 * the best bid and ask with their sizes (`bid1Price`, `bid1Size`, `ask1Price`, `ask1Size`: prices per unit of the
 * symbol, sizes in coins, one linear contract being one coin) and the ticker (`markPrice`, `indexPrice`,
 * `fundingRate` (the running interval's rate, settling at `nextFundingTime`), `openInterestValue` in USD,
 * `fundingIntervalHour` where sent). Derivative tickers push every 100 ms: first a `snapshot` with every field, then
 * `delta` messages carrying only the fields that changed ("if a response param is not found in the message, then
 * its value has not changed"). Frames: `{"topic","type":"snapshot"|"delta","data":{...},"cs" cross sequence,"ts"}`.
 * `orderbook.1.<SYMBOL>` (depth 1, pushed every 10 ms) was considered and not taken: it doubles the topics per
 * symbol for a top of book the ticker already carries at 100 ms, well inside the 5 s cadence answers are served on.
 *
 * Also `kline.15.<SYMBOL>` per perpetual ("Public / Kline"): the 15-minute bar still forming, `{"topic","data":[{
 * "start","end","interval":"15","open","close","high","low","volume" (coins),"turnover","confirm","timestamp"}],
 * "ts","type":"snapshot"}`, pushed every 1 to 60 s while it trades; the feed writes it once a minute in place of
 * the REST forming-bar request. (Bybit's klines carry no taker split: taker flow is not streamed.)
 *
 * Delta state: each connection's reader keeps every topic's merged fields. A delta for a topic without a snapshot
 * (a lost snapshot, or a delta the reader could not read) is a `gap`: the manager resubscribes the topic and its
 * new snapshot repairs the state; deltas arriving before that snapshot (already in flight) are ignored, so one loss
 * asks for one resubscription. `cs` is the matching engine's cross sequence, not a per-topic message counter (a
 * mark-price change carries the cs of the last match), so it cannot show a lost delta and is not checked; within
 * one connection frames arrive in order. A one-sided book (a price absent or 0) gives no quote.
 *
 * Requests: `{"op":"subscribe","args":[topics],"req_id":"<id>"}` (and `unsubscribe`), answered
 * `{"success":true|false,"ret_msg","conn_id","req_id","op":"subscribe"}`; a refusal names the request, not its
 * topics, so a refused batch is asked again topic by topic by the manager. Keep-alive: `{"op":"ping"}`, which Bybit
 * recommends every 20 s, answered `{"success":true,"ret_msg":"pong","op":"ping",...}` (or `"op":"pong"`).
 *
 * Limits (documented): at most 500 connections opened per 5 minutes and 1,000 market-data connections per IP
 * (counted per market: linear apart from spot), no frequent connect/disconnect; the `args` of one subscribe request
 * at most 21,000 characters (spot alone caps a request at 10 topics; linear has no topic count limit); without a
 * ping or data a connection is cut after 10 minutes; no fixed connection age. Chosen: 100 topics a connection (a
 * dropped connection takes at most 100 symbols to REST while it reconnects; ~550 perpetuals are ~6 connections, each
 * receiving up to 1,000 small frames a second), 50 topics a request (~1,600 characters), 5 messages a second, one
 * connect a second (300 per 5 minutes at worst), `{"op":"ping"}` every 20 s, silence past 30 s (a ping unanswered,
 * with no data) is a dead link, a symbol without a frame for 60 s is served from REST (its mark price moves every
 * second or so, so a live ticker is never that quiet).
 */
import { arr, type Json, Malformed, num, obj, optNum, str } from "../../Parse.ts"
import type {
  FrameKind,
  MarketStreamProtocol,
  StreamReader,
  VenueSink,
  VenueTickerFields
} from "../../stream/Protocol.ts"

const TOPIC_PREFIX = "tickers."
const KLINE_PREFIX = "kline.15."
const QUOTE_FIELDS = ["bid1Price", "bid1Size", "ask1Price", "ask1Size"] as const
const TICKER_FIELDS = [
  "markPrice",
  "indexPrice",
  "fundingRate",
  "nextFundingTime",
  "openInterestValue",
  "singleOpenInterestValue",
  "fundingIntervalHour"
] as const
const HOUR_MS = 3_600_000

type Fields = Record<string, unknown>

/** A number, or undefined for an absent or empty field (Bybit sends "" for "not applicable"). */
const field = (fields: Fields, key: string, path: string): number | undefined => optNum(fields[key], `${path}.${key}`)

const bybitReader = (): StreamReader => {
  /** Each topic's fields as of its snapshot and the deltas since. */
  const state = new Map<string, Fields>()
  /** Topics resubscribed after a gap: their deltas are ignored until the snapshot arrives. */
  const awaiting = new Set<string>()

  const emit = (symbol: string, t: number, fields: Fields, changed: Json, sink: VenueSink) => {
    if (QUOTE_FIELDS.some((k) => k in changed)) {
      const bid = field(fields, "bid1Price", "$.data")
      const bidSize = field(fields, "bid1Size", "$.data")
      const ask = field(fields, "ask1Price", "$.data")
      const askSize = field(fields, "ask1Size", "$.data")
      if (
        bid !== undefined &&
        bid > 0 &&
        ask !== undefined &&
        ask > 0 &&
        bidSize !== undefined &&
        askSize !== undefined
      )
        sink.quote(symbol, t, bid, bidSize, ask, askSize)
    }
    if (TICKER_FIELDS.some((k) => k in changed)) {
      const hours = field(fields, "fundingIntervalHour", "$.data")
      const nextFundingMs = field(fields, "nextFundingTime", "$.data")
      const f: VenueTickerFields = {
        mark: field(fields, "markPrice", "$.data"),
        index: field(fields, "indexPrice", "$.data"),
        fundingRate: field(fields, "fundingRate", "$.data"),
        // 0 (or absent) for a contract without a funding schedule.
        nextFundingMs: nextFundingMs !== undefined && nextFundingMs > 0 ? nextFundingMs : undefined,
        intervalMs: hours !== undefined && hours > 0 ? hours * HOUR_MS : undefined,
        // One side: the single-side field where sent, else half the both-sides one (`Rest.ts`).
        oiUsd:
          field(fields, "singleOpenInterestValue", "$.data") ??
          (field(fields, "openInterestValue", "$.data") ?? Number.NaN) / 2
      }
      sink.ticker(symbol, t, f)
    }
  }

  return {
    read: (text: string, sink: VenueSink): FrameKind => {
      const m = obj(JSON.parse(text), "$")
      if (m.op === "pong" || (m.op === "ping" && (m.ret_msg === "pong" || m.success === true))) return { kind: "pong" }
      if (m.op === "subscribe" || m.op === "unsubscribe") {
        const id = str(m.req_id, "$.req_id")
        if (m.success === true) return { kind: "ack", id }
        if (m.success === false) return { kind: "refused", id, message: String(m.ret_msg ?? "refused") }
        throw new Malformed("$.success: not a boolean")
      }
      if (typeof m.topic !== "string") return { kind: "other" }
      const topic = m.topic
      if (topic.startsWith(KLINE_PREFIX)) {
        const symbol = topic.slice(KLINE_PREFIX.length)
        const t = num(m.ts, "$.ts")
        arr(m.data, "$.data").forEach((x, n) => {
          const k = obj(x, `$.data[${n}]`)
          const path = `$.data[${n}]`
          sink.bar?.(symbol, t, {
            openMs: num(k.start, `${path}.start`),
            open: num(k.open, `${path}.open`),
            high: num(k.high, `${path}.high`),
            low: num(k.low, `${path}.low`),
            close: num(k.close, `${path}.close`),
            volume: num(k.volume, `${path}.volume`),
            closed: k.confirm === true
          })
        })
        return { kind: "data" }
      }
      if (!topic.startsWith(TOPIC_PREFIX)) return { kind: "other" }
      const type = str(m.type, "$.type")
      if (type !== "snapshot" && type !== "delta") throw new Malformed(`$.type: not snapshot or delta (${type})`)
      const before = state.get(topic)
      if (type === "delta" && before === undefined) {
        if (awaiting.has(topic)) return { kind: "other" }
        awaiting.add(topic)
        return { kind: "gap", topic, message: `${topic}: a delta without a snapshot` }
      }
      let data: Json
      let t: number
      let symbol: string
      try {
        data = obj(m.data, "$.data")
        t = num(m.ts, "$.ts")
        symbol = str(data.symbol, "$.data.symbol")
        if (`${TOPIC_PREFIX}${symbol}` !== topic) throw new Malformed(`$.data.symbol: ${symbol} is not the topic's`)
        // Every field read must be a number (or empty): checked before the state takes them.
        for (const k of [...QUOTE_FIELDS, ...TICKER_FIELDS]) if (k in data) field(data, k, "$.data")
      } catch (e) {
        // A delta that cannot be read loses its changes: the topic's state is forgotten, so its next delta asks
        // for a resubscription (and a fresh snapshot).
        state.delete(topic)
        throw e
      }
      awaiting.delete(topic)
      const fields: Fields = type === "snapshot" ? { ...data } : { ...before, ...data }
      state.set(topic, fields)
      emit(symbol, t, fields, data, sink)
      return { kind: "data" }
    },
    reset: (topic: string) => {
      state.delete(topic)
      awaiting.add(topic)
    }
  }
}

export const bybitStreamProtocol: MarketStreamProtocol = {
  venue: "bybit",
  url: (baseUrl) => `${baseUrl}/v5/public/linear`,
  closedBars: true,
  components: ["books", "fundingState"],
  marketTopics: [],
  symbolTopics: (symbol) => [`${TOPIC_PREFIX}${symbol}`, `${KLINE_PREFIX}${symbol}`],
  symbolOfTopic: (topic) =>
    topic.startsWith(TOPIC_PREFIX)
      ? topic.slice(TOPIC_PREFIX.length)
      : topic.startsWith(KLINE_PREFIX)
        ? topic.slice(KLINE_PREFIX.length)
        : undefined,
  subscribe: (topics, id) => JSON.stringify({ op: "subscribe", args: topics, req_id: String(id) }),
  unsubscribe: (topics, id) => JSON.stringify({ op: "unsubscribe", args: topics, req_id: String(id) }),
  ping: JSON.stringify({ op: "ping" }),
  limits: {
    topicsPerConnection: 100,
    topicsPerMessage: 50,
    messagesPerSecond: 5,
    connectsPerSecond: 1,
    maxLifetimeMs: undefined,
    pingEveryMs: 20_000,
    silenceMs: 30_000,
    symbolSilenceMs: 60_000
  },
  reader: bybitReader,
  describe:
    "`tickers.<symbol>` (linear, snapshot then deltas every 100 ms) for the top of book, mark, index, funding and open interest; `kline.15.<symbol>` for the forming bar"
}
