/**
 * Bybit v5 liquidations: \`allLiquidation.<symbol>\` on the public linear endpoint, one request per symbol
 * (\`../../LiquidationStreams.ts\` documents the protocol and how prints are counted).
 */
import { arr, type Json, Malformed, num, obj, str } from "../../Parse.ts"
import { type LiquidationPrint, nonNegative, type StreamProtocol, side } from "../../stream/Liquidation.ts"

export const bybitProtocol: StreamProtocol = {
  venue: "bybit",
  url: (base) => `${base}/v5/public/linear`,
  subscriptions: (symbols) =>
    symbols.map((symbol) => ({
      id: `liq-${symbol}`,
      symbols: [symbol],
      text: JSON.stringify({ req_id: `liq-${symbol}`, op: "subscribe", args: [`allLiquidation.${symbol}`] })
    })),
  read: (message) => {
    const m = obj(message, "$")
    if (m.op === "pong" || (m.op === "ping" && m.ret_msg === "pong")) return { _tag: "pong" }
    if (m.op === "subscribe") {
      const id = str(m.req_id, "$.req_id")
      if (m.success === true) return { _tag: "subscribed", id }
      if (m.success === false) return { _tag: "refused", id, message: String(m.ret_msg ?? "refused") }
      throw new Malformed("$.success: not a boolean")
    }
    if (typeof m.topic === "string" && m.topic.startsWith("allLiquidation.")) {
      const prints = arr(m.data, "$.data").map((d, n): LiquidationPrint => {
        const x: Json = obj(d, `$.data[${n}]`)
        const path = `$.data[${n}]`
        return {
          symbol: str(x.s, `${path}.s`),
          t: num(x.T, `${path}.T`),
          side: side(str(x.S, `${path}.S`), "Buy", "Sell", `${path}.S`),
          usd: nonNegative(x.v, `${path}.v`) * nonNegative(x.p, `${path}.p`)
        }
      })
      return { _tag: "prints", prints }
    }
    return { _tag: "other" }
  },
  ping: { text: JSON.stringify({ op: "ping" }), everyMs: 20_000 },
  allSymbols: false
}
