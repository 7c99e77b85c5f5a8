/**
 * Hyperliquid websocket market stream, perpetuals (documentation: "Websocket", "Websocket / Subscriptions",
 * "Websocket / Timeouts and heartbeats", "Rate limits and user limits").
 *
 * Streams chosen, per coin on `/ws`; topics are written `<type>:<coin>`:
 * - `bbo`: `{"channel":"bbo","data":{"coin","time","bbo":[bid|null, ask|null]}}`, each level `{px, sz, n}`; sent
 *   only when the best bid or offer changes on a block. `time` is the block time. A side that is `null` (an empty
 *   book side) gives no quote.
 * - `activeAssetCtx`: `{"channel":"activeAssetCtx","data":{"coin","ctx":{...}}}` with the perpetual context
 *   `markPx`, `oraclePx` (the index), `funding` (the hourly rate accruing now, settling on the hour),
 *   `openInterest` (in coins: the manager converts with the mark), `premium`, volumes. The context carries no
 *   time: the receive time stands in as its event time, and the next full hour as its settlement (Hyperliquid
 *   settles every hour; its own prediction is not on the stream, so the accruing rate is the predicted one).
 * - `candle` at interval `15m`, only for the coins Hyperliquid is the primary venue of (their bars are their
 *   assets' price): `{"channel":"candle","data":{"t" (open time),"T","s" (coin),"i","o","c","h","l","v" (coin
 *   units),"n"}}`, pushed as the bar trades; when a bar closes the next one's first push follows. The feed writes it
 *   in place of the REST forming-bar request (`candleSnapshot` weighs 21 of the IP's 1,200 a minute: a few dozen
 *   coins a minute at most); the closed bar still comes from REST (a push carries no closed flag). The other coins'
 *   bars are read by no answer (every answer reads its primary venue's bars), so they stay on REST.
 * `allMids` (every coin's mid in one subscription) was not taken: a mid is no quote (no sides, no sizes), and the
 * per-coin `bbo` is needed for the book anyway. Names are coins; `k`-prefixed ones (`kPEPE`) quote 1,000 tokens
 * per unit: the reader passes venue units and the manager converts.
 *
 * Requests: one subscription per message, `{"method":"subscribe","subscription":{"type","coin"}}` (and
 * `unsubscribe`), so `topicsPerMessage` is 1. Answered `{"channel":"subscriptionResponse","data":{"method",
 * "subscription":{...}}}` (the subscription echoed, possibly with defaulted fields): acknowledged by topics. Errors
 * are `{"channel":"error","data":"<text>"}`; the text ends with the request or subscription it concerns (as
 * observed: "Invalid subscription {...}", "Already subscribed: {...}", "Error parsing JSON into valid websocket
 * request: {...}"), which names the refused topic; "Already subscribed" and "Already unsubscribed" mean the wanted
 * state holds, so they acknowledge. Keep-alive: `{"method":"ping"}`, answered `{"channel":"pong"}`; the server
 * closes a connection it has sent nothing on for 60 s. A plain-text greeting on connect ("Websocket connection
 * established.", skipped by the venue's Python SDK) is read as nothing.
 *
 * Limits (documented, per IP): 1,000 websocket subscriptions; 10 websocket connections and 30 new connections a
 * minute (older revisions of the page said 100 connections); 2,000 messages sent a minute across all connections.
 * Every instance holds its own streams (nothing streamed is shared through the database), so instances behind one
 * IP share these: this stream takes 2 subscriptions per coin and a third per coin it is the primary venue of
 * (those listed on no other venue: a few dozen), ~190 listed perpetuals are ~400, so at most two instances fit under
 * one egress IP. Past the cap the venue answers `Cannot subscribe to more than 1000 channels.`
 * (and past the message rate `Cannot send more than 2000 messages per minute.`), errors naming no subscription: the
 * reader returns them as refusals of nothing, which settle no request, so the request waits for its timeout and the
 * connection is replaced, again and again: a third instance behind the same IP would not stream Hyperliquid at all
 * (served from REST, its status naming the timeouts). Run more instances behind distinct egress IPs, or stream a
 * smaller universe. Chosen: 500 topics a connection (one connection per instance for the whole market; one
 * connection of the IP's 10), 30 messages a second (a full resubscription of ~380 topics takes ~13 s, so a dropped
 * connection is streamed again within the 15 s the service promises; the venue counts messages a minute, not a
 * second, and a resubscription sends one per topic whatever its pace, so the two instances that fit under one IP
 * resubscribing at once send ~760 of the IP's 2,000 a minute), a connect every 5 s (12 a minute
 * at most of the IP's 30), `ping` every 20 s, silence past 45 s (two pings unanswered) is a dead link, a coin without
 * a frame for 60 s is served from REST (its context changes with every oracle update, every few seconds).
 */

import { arr, type Json, Malformed, num, obj, str } from "../../Parse.ts"
import type { FrameKind, MarketStreamProtocol, StreamReader, VenueBar, VenueSink } from "../../stream/Protocol.ts"
import { HYPERLIQUID_OI_SIDES } from "./Rest.ts"

const HOUR_MS = 3_600_000
/** The plain-text greeting the server has sent on connect (its Python SDK skips it): not JSON, not malformed. */
const GREETING = "Websocket connection established."
const TYPES = ["bbo", "activeAssetCtx"] as const
/** The forming bar's subscription type, at the 15-minute interval, for the coins Hyperliquid is the primary of. */
const CANDLE = "candle"
const CANDLE_INTERVAL = "15m"

const topicOf = (type: string, coin: string) => `${type}:${coin}`

/**
 * `bbo:BTC` -> `{type: "bbo", coin: "BTC"}` (a HIP-3 coin `dex:NAME` keeps its colon); `candle:BTC` also names
 * its interval.
 */
const subscriptionOf = (topic: string): { type: string; coin: string; interval?: string } => {
  const k = topic.indexOf(":")
  const type = topic.slice(0, k)
  const coin = topic.slice(k + 1)
  return type === CANDLE ? { type, coin, interval: CANDLE_INTERVAL } : { type, coin }
}

/** The topic a subscription object names, where it is one of ours. */
const subscriptionTopic = (value: unknown): string | undefined => {
  if (typeof value !== "object" || value === null) return undefined
  const s = value as Json
  return typeof s.type === "string" && typeof s.coin === "string" ? topicOf(s.type, s.coin) : undefined
}

/** The topic an error text names: the JSON it ends with, a subscription or a whole request. */
const errorTopic = (text: string): string | undefined => {
  const k = text.indexOf("{")
  if (k < 0) return undefined
  let value: unknown
  try {
    value = JSON.parse(text.slice(k))
  } catch {
    return undefined
  }
  if (typeof value !== "object" || value === null) return undefined
  const v = value as Json
  return subscriptionTopic(v.subscription ?? v)
}

const level = (value: unknown, path: string): { px: number; sz: number } | undefined => {
  if (value === null) return undefined
  const l = obj(value, path)
  return { px: num(l.px, `${path}.px`), sz: num(l.sz, `${path}.sz`) }
}

const hyperliquidReader = (now: () => number) => (): StreamReader => {
  // Per connection: each coin's newest candle push, closed by the first push of the bar after it.
  const lastCandles = new Map<string, VenueBar>()
  return {
    read: (text: string, sink: VenueSink): FrameKind => {
      if (text === GREETING) return { kind: "other" }
      const m = obj(JSON.parse(text), "$")
      const channel = str(m.channel, "$.channel")
      switch (channel) {
        case "pong":
          return { kind: "pong" }
        case "subscriptionResponse": {
          const d = obj(m.data, "$.data")
          const topic = subscriptionTopic(d.subscription)
          if (topic === undefined) throw new Malformed("$.data.subscription: no type and coin")
          return { kind: "ack", topics: [topic] }
        }
        case "error": {
          const message = typeof m.data === "string" ? m.data : JSON.stringify(m.data)
          const topic = errorTopic(message)
          const topics = topic === undefined ? undefined : [topic]
          if (/^Already (un)?subscribed/.test(message) && topics !== undefined) return { kind: "ack", topics }
          return { kind: "refused", topics, message }
        }
        case "bbo": {
          const d = obj(m.data, "$.data")
          const coin = str(d.coin, "$.data.coin")
          const t = num(d.time, "$.data.time")
          const sides = arr(d.bbo, "$.data.bbo")
          if (sides.length !== 2) throw new Malformed("$.data.bbo: not [bid, ask]")
          const bid = level(sides[0], "$.data.bbo[0]")
          const ask = level(sides[1], "$.data.bbo[1]")
          if (bid !== undefined && ask !== undefined) sink.quote(coin, t, bid.px, bid.sz, ask.px, ask.sz)
          return { kind: "data" }
        }
        case "activeAssetCtx": {
          const d = obj(m.data, "$.data")
          const coin = str(d.coin, "$.data.coin")
          const c = obj(d.ctx, "$.data.ctx")
          const t = now()
          sink.ticker(coin, t, {
            mark: num(c.markPx, "$.data.ctx.markPx"),
            index: num(c.oraclePx, "$.data.ctx.oraclePx"),
            fundingRate: num(c.funding, "$.data.ctx.funding"),
            nextFundingMs: Math.floor(t / HOUR_MS) * HOUR_MS + HOUR_MS,
            intervalMs: HOUR_MS,
            // Both sides, as the REST figure (`Rest.ts`, `HYPERLIQUID_OI_SIDES`): one side is half of it.
            oiQuantity: num(c.openInterest, "$.data.ctx.openInterest") / HYPERLIQUID_OI_SIDES
          })
          return { kind: "data" }
        }
        case CANDLE: {
          // One candle object (or, as some revisions of the page show it, an array of them): the bar still forming
          // at the subscribed interval, pushed as it trades; when a bar closes the new one follows at once.
          // A push carries no closed flag, but pushes come in trade order: the first push of a later bar means the
          // coin's previous bar, as last pushed, is final (the venue also sends that bar's last state as it closes).
          const rows = Array.isArray(m.data) ? m.data : [m.data]
          rows.forEach((row, n) => {
            const path = `$.data[${n}]`
            const c = obj(row, path)
            if (c.i !== undefined && c.i !== CANDLE_INTERVAL) return
            const coin = str(c.s, `${path}.s`)
            const openMs = num(c.t, `${path}.t`)
            const bar: VenueBar = {
              openMs,
              open: num(c.o, `${path}.o`),
              high: num(c.h, `${path}.h`),
              low: num(c.l, `${path}.l`),
              close: num(c.c, `${path}.c`),
              volume: num(c.v, `${path}.v`)
            }
            const before = lastCandles.get(coin)
            if (before !== undefined && openMs < before.openMs) return
            if (before !== undefined && openMs > before.openMs)
              sink.bar?.(coin, before.openMs, { ...before, closed: true })
            lastCandles.set(coin, bar)
            sink.bar?.(coin, openMs, bar)
          })
          return { kind: "data" }
        }
        default:
          return { kind: "other" }
      }
    }
  }
}

const request = (method: "subscribe" | "unsubscribe", topics: ReadonlyArray<string>) => {
  // Hyperliquid takes one subscription per message (`limits.topicsPerMessage` is 1).
  if (topics.length !== 1) throw new Error(`hyperliquid: one subscription per message, asked for ${topics.length}`)
  return JSON.stringify({ method, subscription: subscriptionOf(topics[0] as string) })
}

/** The protocol with a clock for the context frames' event time (tests pass a fixed one). */
export const makeHyperliquidStreamProtocol = (now: () => number = Date.now): MarketStreamProtocol => ({
  venue: "hyperliquid",
  url: (baseUrl) => `${baseUrl}/ws`,
  // The closed bar of a coin streaming its candles follows from the next bar's first push (see the reader); the
  // feed stores it at the close and asks REST only for the others' (its other coins', or a bar not confirmed yet).
  closedBars: true,
  components: ["books", "fundingState"],
  marketTopics: [],
  // The forming bar only where Hyperliquid is the asset's primary venue (its bars are the asset's price): the
  // others' bars are read by no answer, and the IP's 1,000 subscriptions hold two instances' market streams.
  symbolTopics: (symbol, instrument) =>
    instrument?.primary === true
      ? [...TYPES.map((type) => topicOf(type, symbol)), topicOf(CANDLE, symbol)]
      : TYPES.map((type) => topicOf(type, symbol)),
  symbolOfTopic: (topic) => {
    const k = topic.indexOf(":")
    return k < 0 ? undefined : topic.slice(k + 1)
  },
  subscribe: (topics) => request("subscribe", topics),
  unsubscribe: (topics) => request("unsubscribe", topics),
  ping: JSON.stringify({ method: "ping" }),
  limits: {
    topicsPerConnection: 500,
    topicsPerMessage: 1,
    messagesPerSecond: 30,
    connectsPerSecond: 0.2,
    maxLifetimeMs: undefined,
    pingEveryMs: 20_000,
    silenceMs: 45_000,
    symbolSilenceMs: 60_000
  },
  reader: hyperliquidReader(now),
  describe:
    "`bbo` per coin for the top of book, `activeAssetCtx` per coin for mark, oracle price, funding and open interest; `candle` (15m) for the forming bar of the coins it is the primary venue of"
})

export const hyperliquidStreamProtocol: MarketStreamProtocol = makeHyperliquidStreamProtocol()
