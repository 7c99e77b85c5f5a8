/**
 * OKX v5 public market stream, USDT-margined perpetual swaps (documentation: API v5 "WebSocket" overview:
 * connect, login/subscribe/unsubscribe, "Connection count limit" and keep-alive; public data channels "Tickers
 * channel", "Mark price channel", "Funding rate channel", "Open interest channel", "Index tickers channel", and
 * the order book channel "BBO" (`bbo-tbt`)).
 *
 * Streams chosen, per swap (`<BASE>-USDT-SWAP`) on `/ws/v5/public`; topics are written `<channel>:<instId>`:
 * - `tickers`: pushed at most every 100 ms when a trade or the best bid or ask changes; `bidPx`, `bidSz`, `askPx`,
 *   `askSz` (prices in USDT per coin, sizes in contracts of `ctVal x ctMult` coins: the manager converts with the
 *   instrument's `tokensPerContract`), `ts`. `bbo-tbt` (tick by tick, 10 ms) was not taken: it has no fields the
 *   ticker lacks, and 10 ms pushes serve nothing a 5 s answer cadence needs.
 * - `mark-price`: `markPx`, `ts`; pushed every 200 ms while the mark changes, every 10 s when it does not (so
 *   every subscribed swap speaks at least every 10 s).
 * - `funding-rate`: `fundingRate` (the running interval's, settling at `fundingTime`), `nextFundingRate` (the
 *   prediction for the interval after; "" where OKX publishes none), `fundingTime`, `nextFundingTime` (their gap is
 *   the interval), `ts`; pushed every 30 to 90 s.
 * - `open-interest`: `oi` in contracts (`oiCcy` coins, `oiUsd` USD; one side, each contract counted once, as the REST
 *   figure), `ts`; pushed every 3 s when it changes. `open_interest` answers OKX's row from it (USD of one side: OKX's
 *   `oiUsd` where sent, else `oi` x `ctVal` x `ctMult` x mark, as `Rest.ts` computes it); the 24 h change and the
 *   percentiles stay on the REST job's stored 15-minute series.
 *   `index-tickers` (`idxPx` of `<BASE>-USDT`, 100 ms) is not subscribed: it is keyed by index, not swap, and the
 *   index is not served from the stream. It is one line in `symbolTopics` once an answer needs it.
 * - `candle15m` on the business endpoint `/ws/v5/business` (OKX serves candles there only, since its 2023 split of
 *   the endpoints; its base URL is configurable apart, `MARKET_DATA_OKX_WS_BUSINESS_BASE_URL`, else the public
 *   one's host): the 15-minute bar still forming, pushed at most once a second while it trades, each row
 *   `[ts (open time), o, h, l, c, vol (contracts), volCcy (coins), volCcyQuote (USDT), confirm ("0" forming, "1"
 *   closed)]`. The feed writes it once a minute in place of the REST forming-bar request (`market/candles`, one a
 *   swap a minute), and at the close stores the closed bar (`confirm` "1"), asking REST only for bars the stream
 *   missed. OKX candles carry no taker split (taker flow stays on REST) and no event time: the bar's open
 *   time orders pushes (a later push of the same bar replaces the earlier one). Candle topics have their own
 *   connections (the business endpoint's), under the same limits. Like every connection of the venue, a business
 *   connection that is down turns the venue's stream down (its books served from REST) until it is back;
 *   `MARKET_DATA_OKX_WS_BUSINESS_BASE_URL=off` streams no candles (the forming bar then stays on REST).
 * Data frames: `{"arg":{"channel","instId"},"data":[{...}]}` (candles: `"data":[[...]]`).
 *
 * Requests: `{"op":"subscribe","args":[{"channel","instId"},...]}` (and `unsubscribe`). OKX answers each arg on its
 * own, `{"event":"subscribe","arg":{...},"connId"}` (acknowledged by topics), and refuses with
 * `{"event":"error","code","msg","connId"}`: the refused arg is named by an `arg` field where present, else by the
 * message (`"... channel:tickers,instId:NOPE-USDT-SWAP doesn't exist"`); an error naming neither is a refusal of
 * nothing the manager can settle. `{"event":"notice",...}` (a coming service upgrade) is not an answer. Keep-alive:
 * the text `ping`, answered by the text `pong` (not JSON: read before parsing).
 *
 * Limits (documented): 3 connection requests per second per IP; 480 `subscribe`/`unsubscribe`/`login` requests
 * per hour per connection; the channels of one request at most 64 KB in total; a connection with no subscription,
 * or no data pushed, for 30 s is closed ("set a timer of N < 30 s; send `ping` when it fires"); no fixed connection
 * age. Chosen: 300 topics a connection (75 swaps on `/public`, four topics each; 300 on `/business`; ~250 USDT swaps
 * are 4 public connections and one business connection), 100 topics a request
 * (~6 KB; a connection subscribes in 3 requests, far inside 480 an hour, which also bounds following listings and
 * refusal retries), 3 messages a second, one connect a second, `ping` every 20 s (mark prices speak every 10 s
 * anyway), silence past 30 s is a dead link (OKX would close it too), a swap without a frame for 30 s (three missed
 * mark-price pushes) is served from REST.
 */
import { arr, type Json, Malformed, num, obj, optNum, str } from "../../Parse.ts"
import type { FrameKind, MarketStreamProtocol, StreamReader, VenueSink } from "../../stream/Protocol.ts"

export const OKX_CHANNELS = {
  tickers: "tickers",
  mark: "mark-price",
  funding: "funding-rate",
  openInterest: "open-interest"
} as const

/** The forming 15-minute bar, on the business endpoint. */
export const OKX_CANDLE_CHANNEL = "candle15m"

/** The channels subscribed per swap, the top of book's first (see the module comment for those left out). */
const SUBSCRIBED = [
  OKX_CHANNELS.tickers,
  OKX_CHANNELS.mark,
  OKX_CHANNELS.funding,
  OKX_CHANNELS.openInterest,
  OKX_CANDLE_CHANNEL
] as const

/** The path of a topic's endpoint: candles are served on `/ws/v5/business`, the rest on `/ws/v5/public`. */
export const okxEndpointPath = (topic: string): string =>
  topic.startsWith(`${OKX_CANDLE_CHANNEL}:`) ? "/ws/v5/business" : "/ws/v5/public"

/**
 * A topic's URL where the business endpoint has a base URL of its own (`MARKET_DATA_OKX_WS_BUSINESS_BASE_URL`), or is
 * `off` (undefined: candles are not streamed, the forming bar stays on REST).
 */
export const okxTopicUrl =
  (publicBaseUrl: string, businessBaseUrl: string) =>
  (topic: string): string | undefined => {
    const path = okxEndpointPath(topic)
    if (path !== "/ws/v5/business") return `${publicBaseUrl}${path}`
    return businessBaseUrl === "off" ? undefined : `${businessBaseUrl}${path}`
  }

const topicOf = (channel: string, instId: string) => `${channel}:${instId}`

const argOf = (topic: string): { channel: string; instId: string } => {
  const k = topic.indexOf(":")
  return { channel: topic.slice(0, k), instId: topic.slice(k + 1) }
}

/** The topic an answer's `arg` names (undefined without one). */
const argTopic = (value: unknown, path: string): string | undefined => {
  if (value === undefined || value === null) return undefined
  const a = obj(value, path)
  return topicOf(str(a.channel, `${path}.channel`), str(a.instId, `${path}.instId`))
}

/** The arg an error message names (`channel:<channel>,instId:<instId>`), as OKX words an unknown one. */
const messageTopic = (msg: string): string | undefined => {
  const m = /channel:([A-Za-z0-9-]+),\s*instId:([A-Za-z0-9-]+)/.exec(msg)
  return m === null ? undefined : topicOf(m[1] as string, m[2] as string)
}

/** The rows of a data frame's `data` array, each an object. */
const rows = (m: Json): ReadonlyArray<Json> => arr(m.data, "$.data").map((d, n) => obj(d, `$.data[${n}]`))

const okxReader = (): StreamReader => ({
  read: (text: string, sink: VenueSink): FrameKind => {
    if (text === "pong") return { kind: "pong" }
    const m = obj(JSON.parse(text), "$")
    if (typeof m.event === "string") {
      if (m.event === "subscribe" || m.event === "unsubscribe") {
        const topic = argTopic(m.arg, "$.arg")
        if (topic === undefined) throw new Malformed("$.arg: an answer naming no channel")
        return { kind: "ack", topics: [topic] }
      }
      if (m.event === "error") {
        const msg = String(m.msg ?? "")
        const topic = argTopic(m.arg, "$.arg") ?? messageTopic(msg)
        return {
          kind: "refused",
          topics: topic === undefined ? undefined : [topic],
          message: `code ${String(m.code)}: ${msg}`
        }
      }
      return { kind: "other" }
    }
    if (m.arg === undefined) return { kind: "other" }
    const arg = obj(m.arg, "$.arg")
    const channel = str(arg.channel, "$.arg.channel")
    switch (channel) {
      case OKX_CHANNELS.tickers:
        rows(m).forEach((d, n) => {
          const path = `$.data[${n}]`
          const bid = optNum(d.bidPx, `${path}.bidPx`)
          const bidSize = optNum(d.bidSz, `${path}.bidSz`)
          const ask = optNum(d.askPx, `${path}.askPx`)
          const askSize = optNum(d.askSz, `${path}.askSz`)
          const instId = str(d.instId, `${path}.instId`)
          const t = num(d.ts, `${path}.ts`)
          // OKX sends "" for an empty side: no quote then.
          if (bid === undefined || ask === undefined || bidSize === undefined || askSize === undefined) return
          if (!(bid > 0 && ask > 0)) return
          sink.quote(instId, t, bid, bidSize, ask, askSize)
        })
        return { kind: "data" }
      case OKX_CHANNELS.mark:
        rows(m).forEach((d, n) => {
          const path = `$.data[${n}]`
          sink.ticker(str(d.instId, `${path}.instId`), num(d.ts, `${path}.ts`), {
            mark: num(d.markPx, `${path}.markPx`)
          })
        })
        return { kind: "data" }
      case OKX_CHANNELS.funding:
        rows(m).forEach((d, n) => {
          const path = `$.data[${n}]`
          const fundingTime = num(d.fundingTime, `${path}.fundingTime`)
          const nextFundingTime = optNum(d.nextFundingTime, `${path}.nextFundingTime`)
          sink.ticker(str(d.instId, `${path}.instId`), num(d.ts, `${path}.ts`), {
            fundingRate: num(d.fundingRate, `${path}.fundingRate`),
            predictedRate: optNum(d.nextFundingRate, `${path}.nextFundingRate`),
            nextFundingMs: fundingTime,
            intervalMs:
              nextFundingTime !== undefined && nextFundingTime > fundingTime ? nextFundingTime - fundingTime : undefined
          })
        })
        return { kind: "data" }
      case OKX_CANDLE_CHANNEL: {
        const instId = str(arg.instId, "$.arg.instId")
        arr(m.data, "$.data").forEach((k, n) => {
          const row = arr(k, `$.data[${n}]`)
          const p = (c: number) => num(row[c], `$.data[${n}][${c}]`)
          const openMs = p(0)
          sink.bar?.(instId, openMs, {
            openMs,
            open: p(1),
            high: p(2),
            low: p(3),
            close: p(4),
            volume: p(5),
            closed: row[8] === "1"
          })
        })
        return { kind: "data" }
      }
      case OKX_CHANNELS.openInterest:
        rows(m).forEach((d, n) => {
          const path = `$.data[${n}]`
          const oiUsd = optNum(d.oiUsd, `${path}.oiUsd`)
          sink.ticker(
            str(d.instId, `${path}.instId`),
            num(d.ts, `${path}.ts`),
            oiUsd !== undefined ? { oiUsd } : { oiQuantity: num(d.oi, `${path}.oi`) }
          )
        })
        return { kind: "data" }
      default:
        return { kind: "other" }
    }
  }
})

const request = (op: "subscribe" | "unsubscribe", topics: ReadonlyArray<string>) =>
  JSON.stringify({ op, args: topics.map(argOf) })

export const okxStreamProtocol: MarketStreamProtocol = {
  venue: "okx",
  url: (baseUrl, topic) => `${baseUrl}${okxEndpointPath(topic)}`,
  // `candle15m`'s `confirm` "1" marks the bar's last update: the feed stores closed bars from the stream.
  closedBars: true,
  components: ["books", "fundingState"],
  marketTopics: [],
  symbolTopics: (symbol) => SUBSCRIBED.map((channel) => topicOf(channel, symbol)),
  symbolOfTopic: (topic) => {
    const k = topic.indexOf(":")
    return k < 0 ? undefined : topic.slice(k + 1)
  },
  subscribe: (topics) => request("subscribe", topics),
  unsubscribe: (topics) => request("unsubscribe", topics),
  ping: "ping",
  limits: {
    topicsPerConnection: 300,
    topicsPerMessage: 100,
    messagesPerSecond: 3,
    connectsPerSecond: 1,
    maxLifetimeMs: undefined,
    pingEveryMs: 20_000,
    silenceMs: 30_000,
    symbolSilenceMs: 30_000
  },
  reader: okxReader,
  describe:
    "`tickers` for the top of book (contracts), `mark-price`, `funding-rate` and `open-interest` per swap (`/ws/v5/public`); `candle15m` for the forming bar (`/ws/v5/business`)"
}
