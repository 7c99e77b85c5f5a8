/**
 * OKX v5 liquidations over the websocket (documentation: API v5 "WebSocket" overview, and the public data channel
 * "Liquidation orders channel"), run by the leader over the shared connection manager
 * (`../../stream/Liquidation.ts` counts and stores the prints), beside the REST poll of
 * `/api/v5/public/liquidation-orders` (`Rest.ts`), which stays as its backfill and fallback.
 *
 * Stream: `liquidation-orders` with `instType` `SWAP`, one topic for every swap, on `/ws/v5/public`:
 * `{"op":"subscribe","args":[{"channel":"liquidation-orders","instType":"SWAP"}]}`, answered `{"event":"subscribe",
 * "arg":{...},"connId"}` (refused: `{"event":"error","code","msg","connId"}`). Data: `{"arg":{"channel",
 * "instType"},"data":[{"instId","instFamily","instType","uly","details":[{"side","posSide","bkPx" bankruptcy price,
 * "sz" contracts,"bkLoss","ccy","ts"}]}]}`. `side` is the liquidation order's: `sell` closes a long (a long was
 * liquidated), `buy` a short. USD = `sz x ctVal x bkPx` (the instrument's contract size, from the instrument
 * list). OKX pushes at most one liquidation order a second per instrument family and says the channel "doesn't
 * represent the total number of liquidations": totals are a floor (`lower_bound` in answers). The stream and the
 * REST poll write the same one-minute buckets, each side the larger of the two counts (`merge: "max"`).
 *
 * Limits and keep-alive: those of OKX's market stream (`Stream.ts`): the text `ping` every 20 s (answered `pong`);
 * OKX closes a connection without data for 30 s, and a link silent for 30 s is dead; no fixed connection age.
 */
import { arr, obj, str } from "../../Parse.ts"
import { type LiquidationProtocol, nonNegative, side } from "../../stream/Liquidation.ts"
import type { FrameKind, StreamReader, VenueLiquidation, VenueSink } from "../../stream/Protocol.ts"

const CHANNEL = "liquidation-orders"
const INST_TYPE = "SWAP"
export const OKX_LIQUIDATION_TOPIC = `${CHANNEL}:${INST_TYPE}`

const argOf = (topic: string) => {
  const k = topic.indexOf(":")
  return { channel: topic.slice(0, k), instType: topic.slice(k + 1) }
}

const okxLiquidationReader = (): StreamReader => ({
  read: (text: string, sink: VenueSink): FrameKind => {
    if (text === "pong") return { kind: "pong" }
    const m = obj(JSON.parse(text), "$")
    if (typeof m.event === "string") {
      if (m.event === "subscribe" || m.event === "unsubscribe") {
        const a = obj(m.arg, "$.arg")
        return { kind: "ack", topics: [`${str(a.channel, "$.arg.channel")}:${str(a.instType, "$.arg.instType")}`] }
      }
      if (m.event === "error") return { kind: "refused", message: `code ${String(m.code)}: ${String(m.msg ?? "")}` }
      return { kind: "other" }
    }
    if (m.arg === undefined) return { kind: "other" }
    if (str(obj(m.arg, "$.arg").channel, "$.arg.channel") !== CHANNEL) return { kind: "other" }
    const prints: Array<VenueLiquidation> = []
    arr(m.data, "$.data").forEach((e, n) => {
      const o = obj(e, `$.data[${n}]`)
      const instId = str(o.instId, `$.data[${n}].instId`)
      arr(o.details, `$.data[${n}].details`).forEach((d, k) => {
        const x = obj(d, `$.data[${n}].details[${k}]`)
        const path = `$.data[${n}].details[${k}]`
        prints.push({
          symbol: instId,
          t: nonNegative(x.ts, `${path}.ts`),
          side: side(str(x.side, `${path}.side`), "sell", "buy", `${path}.side`),
          price: nonNegative(x.bkPx, `${path}.bkPx`),
          quantity: nonNegative(x.sz, `${path}.sz`)
        })
      })
    })
    sink.liquidations?.(prints)
    return { kind: "data" }
  }
})

export const okxLiquidationProtocol: LiquidationProtocol = {
  venue: "okx",
  url: (baseUrl) => `${baseUrl}/ws/v5/public`,
  components: ["liquidations"],
  marketTopics: [OKX_LIQUIDATION_TOPIC],
  symbolTopics: () => [],
  symbolOfTopic: () => undefined,
  subscribe: (topics) => JSON.stringify({ op: "subscribe", args: topics.map(argOf) }),
  unsubscribe: (topics) => JSON.stringify({ op: "unsubscribe", args: topics.map(argOf) }),
  ping: "ping",
  limits: {
    topicsPerConnection: 300,
    topicsPerMessage: 100,
    messagesPerSecond: 3,
    connectsPerSecond: 1,
    maxLifetimeMs: undefined,
    pingEveryMs: 20_000,
    silenceMs: 30_000,
    // A swap without liquidations is not silent: the all-market topic serves every swap while it is up.
    symbolSilenceMs: Number.POSITIVE_INFINITY
  },
  reader: okxLiquidationReader,
  describe:
    "`liquidation-orders` (`SWAP`, `/ws/v5/public`): every swap's liquidations, at most one a second each family",
  merge: "max",
  needsContractSizes: true
}
