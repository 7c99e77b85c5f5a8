/**
 * Bybit v5 liquidations (documentation: v5 "WebSocket Stream": "Connect", "Public / All Liquidation"), run by the
 * leader over the shared connection manager (`../../stream/Liquidation.ts` counts and stores the prints).
 *
 * Stream: `allLiquidation.<SYMBOL>` per perpetual on `/v5/public/linear`, subscribed in requests of 50 topics
 * (`{"req_id","op":"subscribe","args":[...]}`, answered `{"success","ret_msg","conn_id","req_id","op":"subscribe"}`;
 * a refusal names the request, so the manager asks a refused batch again topic by topic and a symbol the venue no
 * longer lists is refused alone). Events: `{"topic":"allLiquidation.<symbol>","type":"snapshot","ts","data":[{"T"
 * time,"s" symbol,"S" side,"v" size,"p" price}]}`, pushed every 500 ms. `S` is the liquidated position's side:
 * `Buy` a long, `Sell` a short. USD = `v x p` (one linear contract is one coin).
 *
 * Limits and keep-alive: those of the market stream (`Stream.ts`): `{"op":"ping"}` every 20 s (answered
 * `{"op":"ping","ret_msg":"pong"}` or `"op":"pong"`; without it Bybit closes the connection), silence past 30 s is a
 * dead link; 100 topics a connection (~550 perpetuals are 6 connections), one connect a second; no fixed age.
 */
import { arr, type Json, Malformed, obj, str } from "../../Parse.ts"
import { type LiquidationProtocol, nonNegative, side } from "../../stream/Liquidation.ts"
import type { FrameKind, StreamReader, VenueLiquidation, VenueSink } from "../../stream/Protocol.ts"

const TOPIC_PREFIX = "allLiquidation."

const bybitLiquidationReader = (): StreamReader => ({
  read: (text: string, sink: VenueSink): FrameKind => {
    const m = obj(JSON.parse(text), "$")
    if (m.op !== undefined) {
      if (m.op === "pong" || (m.op === "ping" && (m.ret_msg === "pong" || m.success === true))) return { kind: "pong" }
      if (m.op === "subscribe" || m.op === "unsubscribe") {
        const id = str(m.req_id, "$.req_id")
        if (m.success === true) return { kind: "ack", id }
        if (m.success === false) return { kind: "refused", id, message: String(m.ret_msg ?? "refused") }
        throw new Malformed("$.success: not a boolean")
      }
      return { kind: "other" }
    }
    if (typeof m.topic !== "string" || !m.topic.startsWith(TOPIC_PREFIX)) return { kind: "other" }
    const prints = arr(m.data, "$.data").map((d, n): VenueLiquidation => {
      const x: Json = obj(d, `$.data[${n}]`)
      const path = `$.data[${n}]`
      return {
        symbol: str(x.s, `${path}.s`),
        t: nonNegative(x.T, `${path}.T`),
        side: side(str(x.S, `${path}.S`), "Buy", "Sell", `${path}.S`),
        price: nonNegative(x.p, `${path}.p`),
        quantity: nonNegative(x.v, `${path}.v`)
      }
    })
    sink.liquidations?.(prints)
    return { kind: "data" }
  }
})

export const bybitLiquidationProtocol: LiquidationProtocol = {
  venue: "bybit",
  url: (baseUrl) => `${baseUrl}/v5/public/linear`,
  components: ["liquidations"],
  marketTopics: [],
  symbolTopics: (symbol) => [`${TOPIC_PREFIX}${symbol}`],
  symbolOfTopic: (topic) => (topic.startsWith(TOPIC_PREFIX) ? topic.slice(TOPIC_PREFIX.length) : undefined),
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
    // A symbol without liquidations is not silent: its topic serves it while its connection is up.
    symbolSilenceMs: Number.POSITIVE_INFINITY
  },
  reader: bybitLiquidationReader,
  describe: "`allLiquidation.<symbol>` (linear): each perpetual's liquidations, pushed every 500 ms",
  merge: "add",
  needsContractSizes: false
}
