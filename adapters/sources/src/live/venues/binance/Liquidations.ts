/**
 * Binance USD-M liquidations (documentation: USDⓈ-M futures "Websocket Market Streams", "All Market Liquidation
 * Order Streams", and the "Important WebSocket Change Notice" on the routed endpoints), run by the leader over the
 * shared connection manager (`../../stream/Liquidation.ts` counts and stores the prints).
 *
 * Stream: `!forceOrder@arr`, one topic for every symbol, on the routed `/market/stream` endpoint (an unrouted
 * `/stream` connection receives none since the split). `{"method":"SUBSCRIBE","params":["!forceOrder@arr"],"id"}`
 * is answered `{"result":null,"id"}` (an error: `{"error":{"code","msg"},"id"}` or `{"code","msg","id"}`). Events,
 * wrapped `{"stream","data"}` on the combined endpoint: `{"e":"forceOrder","E","o":{"s" symbol,"S" side,"X"
 * status,"q","p","ap" average price,"l","z" filled quantity,"T" trade time}}`. `S` is the liquidation order's side:
 * `SELL` closes a long (a long was liquidated), `BUY` a short. USD = `z x ap`. Only terminal orders (`FILLED`,
 * `EXPIRED` with a fill) count, so an order printed part-filled and then filled is counted once. Binance pushes at
 * most one liquidation per symbol per second (the latest: the stream is a snapshot), so busy seconds are
 * under-counted and totals built from it are a floor (`lower_bound` in answers).
 *
 * Limits and keep-alive: those of the market endpoint (`Stream.ts`): the server pings every 3 minutes (the
 * websocket answers), closes a connection at 24 hours (the manager rotates it before then with no gap); the client
 * asks `LIST_SUBSCRIPTIONS` every 10 s, whose answer proves a quiet connection alive (a liquidation-free minute is
 * normal), and a connection silent for 30 s is dead.
 */
import { Malformed, obj, str } from "../../Parse.ts"
import { type LiquidationProtocol, nonNegative, side } from "../../stream/Liquidation.ts"
import type { FrameKind, StreamReader, VenueLiquidation, VenueSink } from "../../stream/Protocol.ts"

export const BINANCE_LIQUIDATION_TOPIC = "!forceOrder@arr"
/** The request id of the keep-alive (`LIST_SUBSCRIPTIONS`); the connection manager's ids start at 100. */
const PING_ID = 1

const binanceEvent = (value: unknown, path: string): VenueLiquidation | undefined => {
  const e = obj(value, path)
  if (e.e !== "forceOrder") throw new Malformed(`${path}.e: not forceOrder`)
  const o = obj(e.o, `${path}.o`)
  const symbol = str(o.s, `${path}.o.s`)
  const s = side(str(o.S, `${path}.o.S`), "SELL", "BUY", `${path}.o.S`)
  const status = str(o.X, `${path}.o.X`)
  const quantity = nonNegative(o.z, `${path}.o.z`)
  const price = nonNegative(o.ap, `${path}.o.ap`)
  const t = nonNegative(o.T, `${path}.o.T`)
  // Only an order's terminal print counts (an order printed part-filled and then filled is counted once).
  if ((status !== "FILLED" && status !== "EXPIRED") || quantity === 0) return undefined
  return { symbol, t, side: s, price, quantity }
}

const binanceLiquidationReader = (): StreamReader => ({
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
    const wrapped = m.data !== undefined
    const payload = wrapped ? m.data : m
    const path = wrapped ? "$.data" : "$"
    const events = Array.isArray(payload) ? payload : [payload]
    const prints: Array<VenueLiquidation> = []
    events.forEach((e, n) => {
      const p = binanceEvent(e, Array.isArray(payload) ? `${path}[${n}]` : path)
      if (p !== undefined) prints.push(p)
    })
    sink.liquidations?.(prints)
    return { kind: "data" }
  }
})

export const binanceLiquidationProtocol: LiquidationProtocol = {
  venue: "binance",
  url: (baseUrl) => `${baseUrl}/market/stream`,
  components: ["liquidations"],
  marketTopics: [BINANCE_LIQUIDATION_TOPIC],
  symbolTopics: () => [],
  symbolOfTopic: () => undefined,
  subscribe: (topics, id) => JSON.stringify({ method: "SUBSCRIBE", params: topics, id }),
  unsubscribe: (topics, id) => JSON.stringify({ method: "UNSUBSCRIBE", params: topics, id }),
  ping: JSON.stringify({ method: "LIST_SUBSCRIPTIONS", id: PING_ID }),
  limits: {
    topicsPerConnection: 200,
    topicsPerMessage: 50,
    messagesPerSecond: 5,
    connectsPerSecond: 1,
    maxLifetimeMs: 24 * 3_600_000,
    pingEveryMs: 10_000,
    silenceMs: 30_000,
    // A symbol without liquidations is not silent: the all-market topic serves every symbol while it is up.
    symbolSilenceMs: Number.POSITIVE_INFINITY
  },
  reader: binanceLiquidationReader,
  describe: "`!forceOrder@arr` (routed `/market` endpoint): every symbol's liquidations, at most one a second each",
  merge: "add",
  needsContractSizes: false
}
