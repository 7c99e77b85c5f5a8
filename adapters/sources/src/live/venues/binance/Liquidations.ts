/**
 * Binance USD-M liquidations: the all-market \`!forceOrder@arr\` stream on the routed \`/market\` endpoint
 * (\`../../LiquidationStreams.ts\` documents the protocol and how prints are counted).
 */
import { Malformed, num, obj, str } from "../../Parse.ts"
import { type LiquidationPrint, nonNegative, type StreamProtocol, side } from "../../stream/Liquidation.ts"

/** Binance's subscription request id, and its keep-alive (`LIST_SUBSCRIPTIONS`) id. */
const BINANCE_SUBSCRIBE_ID = 1
const BINANCE_PING_ID = 2

const binanceEvent = (value: unknown, path: string): LiquidationPrint | undefined => {
  const e = obj(value, path)
  if (e.e !== "forceOrder") throw new Malformed(`${path}.e: not forceOrder`)
  const o = obj(e.o, `${path}.o`)
  const symbol = str(o.s, `${path}.o.s`)
  const s = side(str(o.S, `${path}.o.S`), "SELL", "BUY", `${path}.o.S`)
  const status = str(o.X, `${path}.o.X`)
  const filled = nonNegative(o.z, `${path}.o.z`)
  const price = nonNegative(o.ap, `${path}.o.ap`)
  const t = num(o.T, `${path}.o.T`)
  // Only an order's terminal print counts (an order printed part-filled and then filled is counted once).
  if ((status !== "FILLED" && status !== "EXPIRED") || filled === 0) return undefined
  return { symbol, t, side: s, usd: filled * price }
}

export const binanceProtocol: StreamProtocol = {
  venue: "binance",
  // `!forceOrder@arr` belongs to the routed `/market` endpoint: an unrouted `/stream` connection gets no data
  // (Binance's "Important WebSocket Change Notice").
  url: (base) => `${base}/market/stream`,
  subscriptions: (symbols) => [
    {
      id: String(BINANCE_SUBSCRIBE_ID),
      symbols,
      text: JSON.stringify({ method: "SUBSCRIBE", params: ["!forceOrder@arr"], id: BINANCE_SUBSCRIBE_ID })
    }
  ],
  read: (message) => {
    const m = obj(message, "$")
    if (m.id !== undefined && m.id !== null) {
      const id = String(m.id)
      const error =
        m.error !== undefined && m.error !== null ? obj(m.error, "$.error") : m.code !== undefined ? m : undefined
      if (error !== undefined)
        return { _tag: "refused", id, message: `code ${String(error.code)}: ${String(error.msg)}` }
      if (m.id === BINANCE_PING_ID) return { _tag: "pong" }
      if ("result" in m) return { _tag: "subscribed", id }
      throw new Malformed("$: an answer with neither result nor error")
    }
    const payload = m.data !== undefined ? m.data : m
    const prints: Array<LiquidationPrint> = []
    const path = m.data !== undefined ? "$.data" : "$"
    const events = Array.isArray(payload) ? payload : [payload]
    events.forEach((e, n) => {
      const p = binanceEvent(e, Array.isArray(payload) ? `${path}[${n}]` : path)
      if (p !== undefined) prints.push(p)
    })
    return { _tag: "prints", prints }
  },
  ping: { text: JSON.stringify({ method: "LIST_SUBSCRIPTIONS", id: BINANCE_PING_ID }), everyMs: 60_000 },
  allSymbols: true
}
