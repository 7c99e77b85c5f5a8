/**
 * A replay Hyperliquid venue (perpetuals) on 127.0.0.1, for end-to-end tests and benches of live mode: the info API
 * (`POST /info`) and the websocket, each on a port of its own, over the moving books of `market.ts`. Nothing leaves
 * the machine.
 *
 * Websocket ("Websocket", "Subscriptions", "Timeouts and heartbeats", "Rate limits and user limits"), on `/ws`:
 * the plain-text greeting `Websocket connection established.` on connect; `{"method":"subscribe","subscription":
 * {"type","coin"}}` answered `{"channel":"subscriptionResponse","data":{"method","subscription"}}`, one subscription
 * per message; an unknown type or coin `{"channel":"error","data":"Invalid subscription {...}"}`, a second
 * subscription of the same `Already subscribed: {...}`; `unsubscribe` likewise (`Already unsubscribed: {...}`);
 * `{"method":"ping"}` answered `{"channel":"pong"}`; text that is not a request `{"channel":"error","data":"Error
 * parsing JSON into valid websocket request: ..."}`. Channels: `bbo` (`{"coin","time","bbo":[bid, ask]}`, each
 * `{px, sz, n}`) on every book move, and the current one on subscribe; `activeAssetCtx` (`{"coin","ctx":{funding,
 * openInterest (both sides, coins), prevDayPx, dayNtlVlm, premium, oraclePx, markPx, midPx, impactPxs, dayBaseVlm}}`)
 * on subscribe and every `ctxEveryMs` (1 s); `candle` (interval `15m` only: `{"t","T","s","i","o","c","h","l","v","n"}`, the
 * bar forming now as it stands) on subscribe and on the same beat, the closed bar's final state first on the first
 * beat of a new bar. Limits per IP, as documented: 1,000 subscriptions (`Cannot subscribe
 * to more than 1000 channels.`), 10 connections and 30 new connections a minute (429 past them), 2,000 messages a
 * minute sent by the clients (`Cannot send more than 2000 messages per minute.`).
 *
 * Info (`POST /info`, JSON body by `type`): `meta`, `metaAndAssetCtxs`, `spotMeta` (none), `candleSnapshot` (15m,
 * ascending, the forming bar as it stands; synthetic history before the start), `fundingHistory` (hourly,
 * ascending, at most 500), `predictedFundings` (the `HlPerp` entry), `l2Book` (the current best bid and ask on top).
 * Weights as documented (`l2Book` 2, `candleSnapshot` 20 plus one per 60 candles, others 20); past 1,200 a minute,
 * HTTP 429.
 */
import { blastMoves } from "./blast.ts"
import { BAR_MS, HOUR_MS, type Market, type MarketBook, makeMarket, type PublishedQuote } from "./market.ts"
import { type Conn, type ReplayVenueBase, type RestAnswer, startVenueServers } from "./serve.ts"
import { hash, rng } from "./symbols.ts"
import { venueSymbols } from "./venue-symbols.ts"

const TYPES = ["bbo", "activeAssetCtx", "l2Book", "trades", "candle"]
const MAX_SUBSCRIPTIONS = 1_000
const MAX_CONNECTIONS = 10
const MAX_NEW_CONNECTIONS_PER_MINUTE = 30
const MAX_MESSAGES_PER_MINUTE = 2_000
const WEIGHT_PER_MINUTE = 1_200

export interface HyperliquidReplayOptions {
  readonly symbols?: number
  readonly taken?: Set<string>
  readonly syntheticOnly?: boolean
  readonly meanIntervalMs?: number
  /** Quotes kept per symbol for `stalenessOf` (default 4,096: `market.ts`). */
  readonly historyPerSymbol?: number
  /** The `activeAssetCtx` period (ms, default 1,000). */
  readonly ctxEveryMs?: number
  /** Answer 429 past 1,200 weight a minute (default true). */
  readonly enforceWeightLimit?: boolean
  readonly seed?: number
}

export interface HyperliquidReplay extends ReplayVenueBase {
  readonly market: Market
  readonly weightLastMinute: () => number
}

export const startHyperliquidReplay = async (options: HyperliquidReplayOptions = {}): Promise<HyperliquidReplay> => {
  const symbols = venueSymbols("hyperliquid", options.symbols ?? 150, options.taken ?? new Set(), {
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    ...(options.syntheticOnly === undefined ? {} : { syntheticOnly: options.syntheticOnly })
  })
  const market = makeMarket(symbols, {
    meanIntervalMs: options.meanIntervalMs ?? 1_000,
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    ...(options.historyPerSymbol === undefined ? {} : { historyPerSymbol: options.historyPerSymbol })
  })
  const enforceWeight = options.enforceWeightLimit ?? true
  const connectTimes: Array<number> = []
  const messageTimes: Array<number> = []
  const spent: Array<{ t: number; w: number }> = []
  let subscriptions = 0

  const price = (b: MarketBook, p: number) => market.text(b, p)
  const size = (q: number) => q.toFixed(2)
  const bboFrame = (b: MarketBook, q: PublishedQuote) =>
    `{"channel":"bbo","data":{"coin":"${b.s.symbol}","time":${q.sentMs},"bbo":[{"px":"${price(b, q.bid)}","sz":"${size(q.bidQty)}","n":3},{"px":"${price(b, q.ask)}","sz":"${size(q.askQty)}","n":2}]}}`
  const ctxOf = (b: MarketBook, nowMs: number) => {
    const q = market.current(b)
    const m = market.mark(b)
    return {
      funding: b.fundingRate.toFixed(8),
      openInterest: (2 * b.oi).toFixed(2),
      prevDayPx: price(b, market.priceAt(b, nowMs - 24 * HOUR_MS)),
      dayNtlVlm: (b.oi * m * 0.8).toFixed(2),
      premium: "0.0001",
      oraclePx: price(b, market.index(b)),
      markPx: price(b, m),
      midPx: price(b, market.mid(b)),
      impactPxs: [price(b, q.bid), price(b, q.ask)],
      dayBaseVlm: (b.oi * 0.8).toFixed(2)
    }
  }
  const ctxFrame = (b: MarketBook, nowMs: number) =>
    `{"channel":"activeAssetCtx","data":{"coin":"${b.s.symbol}","ctx":${JSON.stringify(ctxOf(b, nowMs))}}}`

  const servers = await startVenueServers({
    wsPaths: ["/ws"],
    admit: () => {
      const nowMs = Date.now()
      while (connectTimes.length > 0 && (connectTimes[0] as number) <= nowMs - 60_000) connectTimes.shift()
      if (connectTimes.length >= MAX_NEW_CONNECTIONS_PER_MINUTE || servers.conns.size >= MAX_CONNECTIONS) return false
      connectTimes.push(nowMs)
      return true
    },
    onConnect: (c) => servers.send(c, "Websocket connection established.", "answer"),
    onClose: (c) => {
      subscriptions -= c.topics.size
    },
    onMessage: (c, text) => onMessage(c, text),
    describe: (r) => {
      const body = (typeof r.body === "object" && r.body !== null ? r.body : {}) as Record<string, unknown>
      const req = (typeof body.req === "object" && body.req !== null ? body.req : {}) as Record<string, unknown>
      const coin = typeof body.coin === "string" ? body.coin : typeof req.coin === "string" ? req.coin : undefined
      return { what: `info:${String(body.type)}`, symbol: coin }
    },
    rest: (r, nowMs) => info(r.path, r.method, r.body, nowMs)
  })
  const error = (c: Conn, data: string) => {
    servers.stats.errorsAnswered++
    servers.send(c, JSON.stringify({ channel: "error", data }), "answer")
  }

  const onMessage = (c: Conn, text: string) => {
    const nowMs = Date.now()
    while (messageTimes.length > 0 && (messageTimes[0] as number) <= nowMs - 60_000) messageTimes.shift()
    messageTimes.push(nowMs)
    if (messageTimes.length > MAX_MESSAGES_PER_MINUTE) {
      servers.stats.rateViolations++
      return error(c, `Cannot send more than ${MAX_MESSAGES_PER_MINUTE} messages per minute.`)
    }
    let m: Record<string, unknown>
    try {
      const parsed: unknown = JSON.parse(text)
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not an object")
      m = parsed as Record<string, unknown>
    } catch {
      return error(c, `Error parsing JSON into valid websocket request: ${text.slice(0, 200)}`)
    }
    if (m.method === "ping") return servers.send(c, '{"channel":"pong"}', "answer")
    if (m.method !== "subscribe" && m.method !== "unsubscribe")
      return error(c, `Error parsing JSON into valid websocket request: ${text.slice(0, 200)}`)
    const s = (typeof m.subscription === "object" && m.subscription !== null ? m.subscription : {}) as Record<
      string,
      unknown
    >
    const subscription =
      s.type === "candle" ? { type: s.type, coin: s.coin, interval: s.interval } : { type: s.type, coin: s.coin }
    const echo = JSON.stringify(subscription)
    const b = typeof s.coin === "string" ? market.books.get(s.coin) : undefined
    if (
      typeof s.type !== "string" ||
      !TYPES.includes(s.type) ||
      b === undefined ||
      (s.type === "candle" && s.interval !== "15m")
    )
      return error(c, `Invalid subscription ${echo}`)
    const topic = `${s.type}:${b.s.symbol}`
    if (m.method === "unsubscribe") {
      if (!c.topics.has(topic))
        return error(c, `Already unsubscribed: ${JSON.stringify({ method: m.method, subscription })}`)
      servers.unsubscribe(c, topic)
      subscriptions--
    } else {
      if (c.topics.has(topic))
        return error(c, `Already subscribed: ${JSON.stringify({ method: m.method, subscription })}`)
      if (subscriptions >= MAX_SUBSCRIPTIONS)
        return error(c, `Cannot subscribe to more than ${MAX_SUBSCRIPTIONS} channels.`)
      servers.subscribe(c, topic)
      subscriptions++
    }
    servers.send(
      c,
      JSON.stringify({ channel: "subscriptionResponse", data: { method: m.method, subscription } }),
      "answer"
    )
    if (m.method !== "subscribe") return
    if (s.type === "bbo") servers.send(c, bboFrame(b, market.current(b)), "book")
    else if (s.type === "activeAssetCtx") servers.send(c, ctxFrame(b, nowMs), "mark")
    else if (s.type === "candle") servers.send(c, candleFrame(b, nowMs), "kline")
  }

  /** Each coin's bar of the newest candle beat (to send a bar's final state when the next one opens). */
  const candleSlots = new Map<string, number>()
  market.onMove((b, q) => {
    const subs = servers.subscribers.get(`bbo:${b.s.symbol}`)
    if (subs === undefined || subs.size === 0) return
    const frame = bboFrame(b, q)
    for (const c of subs) servers.send(c, frame, "book")
  })
  const ctxTimer = setInterval(() => {
    if (market.quiet()) return
    const nowMs = Date.now()
    for (const b of market.books.values()) {
      if (b.stopped) continue
      const subs = servers.subscribers.get(`activeAssetCtx:${b.s.symbol}`)
      if (subs === undefined || subs.size === 0) continue
      const frame = ctxFrame(b, nowMs)
      for (const c of subs) servers.send(c, frame, "mark")
    }
    // The forming 15-minute bar of the coins subscribed to it, as it stands, on the same beat; the first beat of a
    // new bar sends the bar that closed in its final state first (as the venue sends both when a bar closes).
    const slot = Math.floor(nowMs / BAR_MS) * BAR_MS
    for (const b of market.books.values()) {
      if (b.stopped) continue
      const subs = servers.subscribers.get(`candle:${b.s.symbol}`)
      if (subs === undefined || subs.size === 0) continue
      const before = candleSlots.get(b.s.symbol)
      candleSlots.set(b.s.symbol, slot)
      if (before !== undefined && before < slot) {
        const closed = JSON.stringify({ channel: "candle", data: candles(b, before, before, nowMs)[0] })
        for (const c of subs) servers.send(c, closed, "kline")
      }
      const frame = candleFrame(b, nowMs)
      for (const c of subs) servers.send(c, frame, "kline")
    }
  }, options.ctxEveryMs ?? 1_000)

  // -- info ----------------------------------------------------------------------------------------------------
  const weightLastMinute = (nowMs = Date.now()) => {
    while (spent.length > 0 && (spent[0] as { t: number }).t <= nowMs - 60_000) spent.shift()
    return spent.reduce((sum, x) => sum + x.w, 0)
  }
  const meta = () => ({
    universe: symbols.map((s) => ({ szDecimals: 2, maxLeverage: 10, ...s.info, name: s.symbol })),
    marginTables: []
  })
  const candles = (b: MarketBook, from: number, to: number, nowMs: number) => {
    const out: Array<Record<string, unknown>> = []
    const last = Math.min(to, nowMs)
    const first = Math.max(Math.ceil(from / BAR_MS) * BAR_MS, Math.floor(last / BAR_MS) * BAR_MS - 4_999 * BAR_MS)
    const d = b.s.decimals
    for (let t = first; t <= last; t += BAR_MS) {
      const bar = market.barOf(b, t)
      out.push({
        t,
        T: t + BAR_MS - 1,
        s: b.s.symbol,
        i: "15m",
        o: bar.open.toFixed(d),
        c: bar.close.toFixed(d),
        h: bar.high.toFixed(d),
        l: bar.low.toFixed(d),
        v: bar.volume.toFixed(2),
        n: bar.trades
      })
    }
    return out
  }
  /** The `candle` push of the bar forming now (`{"channel":"candle","data":{t, T, s, i, o, c, h, l, v, n}}`). */
  function candleFrame(b: MarketBook, nowMs: number): string {
    const slot = Math.floor(nowMs / BAR_MS) * BAR_MS
    return JSON.stringify({ channel: "candle", data: candles(b, slot, nowMs, nowMs)[0] })
  }
  const info = (path: string, method: string, body: unknown, nowMs: number): RestAnswer => {
    if (path !== "/info" || method !== "POST") return { status: 404, body: null }
    const r = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>
    const req = (typeof r.req === "object" && r.req !== null ? r.req : {}) as Record<string, unknown>
    const coin = typeof r.coin === "string" ? r.coin : typeof req.coin === "string" ? req.coin : undefined
    const b = coin === undefined ? undefined : market.books.get(coin)
    const bad = (what: string): RestAnswer => ({ status: 422, body: `Failed to deserialize the JSON body: ${what}` })
    let answer: RestAnswer
    let weight = 20
    switch (r.type) {
      case "meta":
        answer = { status: 200, body: meta() }
        break
      case "spotMeta":
        answer = { status: 200, body: { universe: [], tokens: [] } }
        break
      case "metaAndAssetCtxs":
        answer = { status: 200, body: [meta(), [...market.books.values()].map((x) => ctxOf(x, nowMs))] }
        break
      case "predictedFundings":
        answer = {
          status: 200,
          body: [...market.books.values()].map((x) => [
            x.s.symbol,
            [
              [
                "HlPerp",
                {
                  fundingRate: x.fundingRate.toFixed(8),
                  nextFundingTime: market.nextFundingMs(x, nowMs),
                  fundingIntervalHours: 1
                }
              ]
            ]
          ])
        }
        break
      case "candleSnapshot": {
        if (b === undefined || req.interval !== "15m" || typeof req.startTime !== "number")
          return bad("candleSnapshot needs a listed coin, interval 15m and startTime")
        const rows = candles(b, req.startTime, typeof req.endTime === "number" ? req.endTime : nowMs, nowMs)
        weight = 20 + Math.ceil(rows.length / 60)
        answer = { status: 200, body: rows }
        break
      }
      case "fundingHistory": {
        if (b === undefined || typeof r.startTime !== "number")
          return bad("fundingHistory needs a listed coin and startTime")
        const to = Math.min(typeof r.endTime === "number" ? r.endTime : nowMs, nowMs)
        const rows: Array<Record<string, unknown>> = []
        for (let t = Math.ceil(r.startTime / HOUR_MS) * HOUR_MS; t <= to && rows.length < 500; t += HOUR_MS)
          rows.push({ coin, fundingRate: market.settledRate(b, t).toFixed(8), premium: "0.0001", time: t })
        answer = { status: 200, body: rows }
        break
      }
      case "l2Book": {
        if (b === undefined) return { status: 200, body: null }
        weight = 2
        const q0 = market.current(b)
        const rand = rng(hash(`${b.s.symbol}/depth/${q0.seq}`))
        const bids = [{ px: price(b, q0.bid), sz: size(q0.bidQty), n: 3 }]
        const asks = [{ px: price(b, q0.ask), sz: size(q0.askQty), n: 2 }]
        for (let k = 1; k < 20; k++) {
          bids.push({ px: price(b, market.priceOf(b, b.bidTicks - k)), sz: size(1 + rand() * 800), n: 1 })
          asks.push({
            px: price(b, market.priceOf(b, b.bidTicks + b.spreadTicks + k)),
            sz: size(1 + rand() * 800),
            n: 1
          })
        }
        answer = { status: 200, body: { coin, time: q0.sentMs, levels: [bids, asks] } }
        break
      }
      default:
        return bad(`unknown variant ${JSON.stringify(r.type)}`)
    }
    if (enforceWeight && weightLastMinute(nowMs) + weight > WEIGHT_PER_MINUTE) return { status: 429, body: null }
    spent.push({ t: nowMs, w: weight })
    return answer
  }

  return {
    venue: "hyperliquid",
    market,
    restUrl: servers.restUrl,
    wsUrl: servers.wsUrl,
    symbols,
    stalenessOf: market.stalenessOf,
    streamedSymbols: () => {
      const out: Array<string> = []
      for (const s of symbols) if ((servers.subscribers.get(`bbo:${s.symbol}`)?.size ?? 0) > 0) out.push(s.symbol)
      return out
    },
    barsAsked: () => [
      ...new Set(
        servers.rest.log.flatMap((e) =>
          e.what === "info:candleSnapshot" && e.status === 200 && e.symbol !== undefined ? [e.symbol] : []
        )
      )
    ],
    dropStreams: servers.dropStreams,
    blast: (frames) => blastMoves(servers, market, (symbol) => `bbo:${symbol}`, frames),
    refuseConnections: servers.refuseConnections,
    setMeanInterval: market.setMeanInterval,
    frames: () => ({ total: servers.stats.framesSent, byKind: { ...servers.stats.byKind } }),
    connections: () => servers.conns.size,
    weightLastMinute: () => weightLastMinute(),
    close: async () => {
      clearInterval(ctxTimer)
      market.close()
      await servers.close()
    }
  }
}
