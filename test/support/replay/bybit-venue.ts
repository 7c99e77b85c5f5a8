/**
 * A replay Bybit v5 venue (linear USDT perpetuals) on 127.0.0.1, for end-to-end tests and benches of live mode:
 * REST and the public linear websocket, each on a port of its own, over the moving books of `market.ts`. Nothing
 * leaves the machine.
 *
 * Websocket (v5 "WebSocket Stream": "Connect", "Public / Ticker", "Public / Kline", "Public / All Liquidation"), on
 * `/v5/public/linear`: `{"op":"subscribe","args":[topics],"req_id"}` is answered `{"success":true,"ret_msg":"",
 * "conn_id","req_id","op":"subscribe"}`, or, when a topic is unknown, already subscribed, or the args are longer
 * than 21,000 characters, `{"success":false,"ret_msg":"error:...","conn_id","req_id","op":"subscribe"}` (the whole
 * request refused); `unsubscribe` likewise; `{"op":"ping"}` is answered `{"success":true,"ret_msg":"pong","conn_id",
 * "req_id","op":"ping"}`; a frame that is not JSON `{"success":false,"ret_msg":"error:request not json",...}`.
 * Topics: `tickers.<symbol>`: a `snapshot` with every field on subscribe, then `delta`s carrying only what changed
 * (a book move: `bid1Price`, `bid1Size`, `ask1Price`, `ask1Size`, `lastPrice`; every `markEveryMs`: `markPrice`,
 * `indexPrice`, `openInterest`, `openInterestValue` and their single-side fields), `{"topic","type","data","cs",
 * "ts"}`; `kline.<interval>.<symbol>` (every Bybit interval accepted, `15` pushed: the forming bar at most every
 * `klineEveryMs`, the closing one with `confirm: true` when the next opens); `allLiquidation.<symbol>` accepted
 * (no liquidations). A connection is closed after `silenceMs` (10 minutes) without a message from the client, as
 * Bybit does; at most 500 connections are taken per 5 minutes (429 past it).
 *
 * REST (`{retCode, retMsg, result, retExtInfo, time}`): `instruments-info` (linear: the listed perpetuals, one page;
 * spot: none), `kline` (newest first; the bars the venue traded since it started, the forming one as it stands,
 * synthetic history before), `funding/history` (newest first), `tickers` (every symbol or one), `open-interest`
 * (15-minute, newest first, both sides and single side), `orderbook` (the current best bid and ask on top, then
 * levels a tick apart). More than 600 requests in 5 s: HTTP 403, as Bybit answers an IP past its limit.
 */
import { blastMoves } from "./blast.ts"
import { BAR_MS, type Bar, HOUR_MS, type Market, type MarketBook, makeMarket, type PublishedQuote } from "./market.ts"
import { type Conn, overRate, type ReplayVenueBase, type RestAnswer, startVenueServers } from "./serve.ts"
import { hash, rng } from "./symbols.ts"
import { venueSymbols } from "./venue-symbols.ts"

const PATH = "/v5/public/linear"
const INTERVALS = ["1", "3", "5", "15", "30", "60", "120", "240", "360", "720", "D", "W", "M"]
const MAX_ARGS_CHARS = 21_000

export interface BybitReplayOptions {
  readonly symbols?: number
  /** Tickers another venue lists (skipped here, and this venue's added). */
  readonly taken?: Set<string>
  readonly syntheticOnly?: boolean
  readonly meanIntervalMs?: number
  /** Quotes kept per symbol for `stalenessOf` (default 4,096: `market.ts`). */
  readonly historyPerSymbol?: number
  /** The period of the mark/index/open-interest deltas (ms, default 1,000). */
  readonly markEveryMs?: number
  /** Shortest time between two kline frames of a symbol (ms, default 1,000). */
  readonly klineEveryMs?: number
  /** A connection without a message from the client this long is closed (ms, default 600,000). */
  readonly silenceMs?: number
  readonly seed?: number
}

export interface BybitReplay extends ReplayVenueBase {
  readonly market: Market
}

export const startBybitReplay = async (options: BybitReplayOptions = {}): Promise<BybitReplay> => {
  const symbols = venueSymbols("bybit", options.symbols ?? 300, options.taken ?? new Set(), {
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    ...(options.syntheticOnly === undefined ? {} : { syntheticOnly: options.syntheticOnly })
  })
  const market = makeMarket(symbols, {
    meanIntervalMs: options.meanIntervalMs ?? 1_000,
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    ...(options.historyPerSymbol === undefined ? {} : { historyPerSymbol: options.historyPerSymbol })
  })
  const klineEveryMs = options.klineEveryMs ?? 1_000
  const silenceMs = options.silenceMs ?? 600_000
  const connIds = new Map<Conn, string>()
  const lastHeard = new Map<Conn, number>()
  const connectTimes: Array<number> = []
  const restTimes: Array<number> = []

  const price = (b: MarketBook, p: number) => market.text(b, p)
  const usd = (x: number) => x.toFixed(2)
  const oiFields = (b: MarketBook) => {
    const mark = market.mark(b)
    return {
      openInterest: (2 * b.oi).toFixed(3),
      openInterestValue: usd(2 * b.oi * mark),
      singleOpenInterest: b.oi.toFixed(3),
      singleOpenInterestValue: usd(b.oi * mark)
    }
  }
  const tickerRow = (b: MarketBook, nowMs: number): Record<string, string> => {
    const q = market.current(b)
    const m = market.mark(b)
    return {
      symbol: b.s.symbol,
      tickDirection: "PlusTick",
      price24hPcnt: "0.0012",
      lastPrice: price(b, market.mid(b)),
      prevPrice24h: price(b, market.priceAt(b, nowMs - 24 * HOUR_MS)),
      highPrice24h: price(b, m * 1.02),
      lowPrice24h: price(b, m * 0.98),
      prevPrice1h: price(b, market.priceAt(b, nowMs - HOUR_MS)),
      markPrice: price(b, m),
      indexPrice: price(b, market.index(b)),
      ...oiFields(b),
      turnover24h: usd(b.oi * m * 0.8),
      volume24h: (b.oi * 0.8).toFixed(3),
      nextFundingTime: String(market.nextFundingMs(b, nowMs)),
      fundingRate: b.fundingRate.toFixed(6),
      fundingIntervalHour: String(b.s.fundingIntervalHours),
      bid1Price: price(b, q.bid),
      bid1Size: q.bidQty.toFixed(3),
      ask1Price: price(b, q.ask),
      ask1Size: q.askQty.toFixed(3),
      basis: "",
      deliveryTime: "0",
      deliveryFeeRate: "",
      predictedDeliveryPrice: ""
    }
  }
  const tickerFrame = (type: "snapshot" | "delta", data: Record<string, string>, nowMs: number) =>
    `{"topic":"tickers.${data.symbol}","type":"${type}","data":${JSON.stringify(data)},"cs":${market.nextSeq()},"ts":${nowMs}}`
  const klineFrame = (b: MarketBook, bar: Bar, confirm: boolean, nowMs: number) => {
    const d = b.s.decimals
    return `{"topic":"kline.15.${b.s.symbol}","data":[{"start":${bar.openMs},"end":${bar.openMs + BAR_MS - 1},"interval":"15","open":"${bar.open.toFixed(d)}","close":"${bar.close.toFixed(d)}","high":"${bar.high.toFixed(d)}","low":"${bar.low.toFixed(d)}","volume":"${bar.volume.toFixed(3)}","turnover":"${bar.quoteVolume.toFixed(4)}","confirm":${confirm},"timestamp":${nowMs}}],"ts":${nowMs},"type":"snapshot"}`
  }

  const servers = await startVenueServers({
    wsPaths: [PATH],
    admit: () => {
      const nowMs = Date.now()
      while (connectTimes.length > 0 && (connectTimes[0] as number) <= nowMs - 300_000) connectTimes.shift()
      if (connectTimes.length >= 500) return false
      connectTimes.push(nowMs)
      return true
    },
    onConnect: (c) => {
      connIds.set(c, `replay-${c.id.toString(16).padStart(8, "0")}`)
      lastHeard.set(c, Date.now())
    },
    onClose: (c) => {
      connIds.delete(c)
      lastHeard.delete(c)
    },
    onMessage: (c, text) => onMessage(c, text),
    describe: (r) => ({ what: r.path, symbol: r.query.get("symbol") ?? undefined }),
    rest: (r, nowMs) => rest(r.path, r.query, nowMs)
  })

  const answer = (c: Conn, body: Record<string, unknown>) => servers.send(c, JSON.stringify(body), "answer")
  const topicKnown = (topic: string): boolean => {
    const parts = topic.split(".")
    if (parts.length === 2 && (parts[0] === "tickers" || parts[0] === "allLiquidation"))
      return market.books.has(parts[1] as string)
    if (parts.length === 3 && parts[0] === "kline")
      return INTERVALS.includes(parts[1] as string) && market.books.has(parts[2] as string)
    return false
  }
  const onMessage = (c: Conn, text: string) => {
    const nowMs = Date.now()
    lastHeard.set(c, nowMs)
    const base = { conn_id: connIds.get(c) ?? "" }
    let m: Record<string, unknown>
    try {
      const parsed: unknown = JSON.parse(text)
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not an object")
      m = parsed as Record<string, unknown>
    } catch {
      servers.stats.errorsAnswered++
      return answer(c, { success: false, ret_msg: "error:request not json", ...base, req_id: "", op: "" })
    }
    // Bybit documents no per-connection message rate for public streams; a flood is still counted.
    if (overRate(c, 100, 1_000, nowMs)) servers.stats.rateViolations++
    const reqId = typeof m.req_id === "string" ? m.req_id : ""
    if (m.op === "ping") return answer(c, { success: true, ret_msg: "pong", ...base, req_id: reqId, op: "ping" })
    if (m.op !== "subscribe" && m.op !== "unsubscribe") {
      servers.stats.errorsAnswered++
      return answer(c, {
        success: false,
        ret_msg: `error:unknown op ${String(m.op)}`,
        ...base,
        req_id: reqId,
        op: m.op
      })
    }
    const op = m.op
    const refuse = (why: string) => {
      servers.stats.errorsAnswered++
      answer(c, { success: false, ret_msg: `error:${why}`, ...base, req_id: reqId, op })
    }
    if (!Array.isArray(m.args) || m.args.some((a) => typeof a !== "string")) return refuse("args must be strings")
    const topics = m.args as ReadonlyArray<string>
    if (topics.join(",").length > MAX_ARGS_CHARS) return refuse(`args exceed ${MAX_ARGS_CHARS} characters`)
    for (const t of topics) {
      if (!topicKnown(t)) return refuse(`handler not found,topic:${t}`)
      if (op === "subscribe" && c.topics.has(t)) return refuse(`already subscribed,topic:${t}`)
    }
    answer(c, { success: true, ret_msg: "", ...base, req_id: reqId, op })
    for (const t of topics) {
      if (op === "unsubscribe") {
        servers.unsubscribe(c, t)
        continue
      }
      servers.subscribe(c, t)
      // A ticker subscription starts with its snapshot, as Bybit's does.
      if (t.startsWith("tickers.")) {
        const b = market.books.get(t.slice("tickers.".length)) as MarketBook
        servers.send(c, tickerFrame("snapshot", tickerRow(b, nowMs), nowMs), "book")
      }
    }
  }

  market.onMove((b, q: PublishedQuote, closed, nowMs) => {
    const subs = servers.subscribers.get(`tickers.${b.s.symbol}`)
    if (subs !== undefined && subs.size > 0) {
      const frame = tickerFrame(
        "delta",
        {
          symbol: b.s.symbol,
          bid1Price: price(b, q.bid),
          bid1Size: q.bidQty.toFixed(3),
          ask1Price: price(b, q.ask),
          ask1Size: q.askQty.toFixed(3),
          lastPrice: price(b, market.mid(b))
        },
        nowMs
      )
      for (const c of subs) servers.send(c, frame, "book")
    }
    const klines = servers.subscribers.get(`kline.15.${b.s.symbol}`)
    if (klines === undefined || klines.size === 0) return
    if (closed !== undefined) {
      const frame = klineFrame(b, closed, true, nowMs)
      for (const c of klines) servers.send(c, frame, "kline")
    }
    if (nowMs - b.lastKlineMs < klineEveryMs) return
    b.lastKlineMs = nowMs
    const frame = klineFrame(b, market.formingBar(b, nowMs), false, nowMs)
    for (const c of klines) servers.send(c, frame, "kline")
  })

  const markTimer = setInterval(() => {
    if (market.quiet()) return
    const nowMs = Date.now()
    for (const b of market.books.values()) {
      if (b.stopped) continue
      const subs = servers.subscribers.get(`tickers.${b.s.symbol}`)
      if (subs === undefined || subs.size === 0) continue
      const frame = tickerFrame(
        "delta",
        {
          symbol: b.s.symbol,
          markPrice: price(b, market.mark(b)),
          indexPrice: price(b, market.index(b)),
          ...oiFields(b)
        },
        nowMs
      )
      for (const c of subs) servers.send(c, frame, "mark")
    }
  }, options.markEveryMs ?? 1_000)
  const silenceTimer = setInterval(() => {
    const nowMs = Date.now()
    for (const [c, t] of lastHeard) if (nowMs - t > silenceMs) c.socket.terminate()
  }, 5_000)

  // -- REST ----------------------------------------------------------------------------------------------------
  const ok = (result: unknown, nowMs: number): RestAnswer => ({
    status: 200,
    body: { retCode: 0, retMsg: "OK", result, retExtInfo: {}, time: nowMs }
  })
  const bad = (code: number, msg: string, nowMs: number): RestAnswer => ({
    status: 200,
    body: { retCode: code, retMsg: msg, result: {}, retExtInfo: {}, time: nowMs }
  })
  const num = (q: URLSearchParams, name: string): number | undefined => {
    const v = q.get(name)
    return v === null || v === "" ? undefined : Number(v)
  }
  /** Grid times `step` apart within [from, to], the newest `limit`, newest first (Bybit's order). */
  const newestFirst = (from: number | undefined, to: number, step: number, limit: number): Array<number> => {
    const out: Array<number> = []
    for (let t = Math.floor(to / step) * step; out.length < limit && (from === undefined || t >= from); t -= step)
      out.push(t)
    return out
  }
  const rest = (path: string, q: URLSearchParams, nowMs: number): RestAnswer => {
    while (restTimes.length > 0 && (restTimes[0] as number) <= nowMs - 5_000) restTimes.shift()
    restTimes.push(nowMs)
    if (restTimes.length > 600) return { status: 403, body: { retCode: 10009, retMsg: "access too frequent" } }
    const symbol = q.get("symbol") ?? undefined
    const b = symbol === undefined ? undefined : market.books.get(symbol)
    const needBook = (): RestAnswer | undefined =>
      q.get("category") !== "linear"
        ? bad(10001, "category only support linear here", nowMs)
        : b === undefined
          ? bad(10001, "params error: symbol invalid", nowMs)
          : undefined
    switch (path) {
      case "/v5/market/time":
        return ok({ timeSecond: String(Math.floor(nowMs / 1000)), timeNano: `${nowMs}000000` }, nowMs)
      case "/v5/market/instruments-info": {
        const category = q.get("category")
        if (category === "spot") return ok({ category, list: [], nextPageCursor: "" }, nowMs)
        if (category !== "linear") return bad(10001, "params error: category", nowMs)
        const list = symbols.map((s) => ({
          ...s.info,
          status: "Trading",
          fundingInterval: s.fundingIntervalHours * 60
        }))
        return ok({ category, list, nextPageCursor: "" }, nowMs)
      }
      case "/v5/market/kline": {
        const missing = needBook()
        if (missing !== undefined) return missing
        if (q.get("interval") !== "15") return bad(10001, "params error: interval (the replay serves 15)", nowMs)
        const limit = Math.min(1000, num(q, "limit") ?? 200)
        const to = Math.min(num(q, "end") ?? nowMs, nowMs)
        const book = b as MarketBook
        const d = book.s.decimals
        const list = newestFirst(num(q, "start"), to, BAR_MS, limit).map((t) => {
          const bar = market.barOf(book, t)
          return [
            String(t),
            bar.open.toFixed(d),
            bar.high.toFixed(d),
            bar.low.toFixed(d),
            bar.close.toFixed(d),
            bar.volume.toFixed(3),
            bar.quoteVolume.toFixed(4)
          ]
        })
        return ok({ category: "linear", symbol, list }, nowMs)
      }
      case "/v5/market/funding/history": {
        const missing = needBook()
        if (missing !== undefined) return missing
        const book = b as MarketBook
        const limit = Math.min(200, num(q, "limit") ?? 200)
        const to = Math.min(num(q, "endTime") ?? nowMs, nowMs)
        const list = newestFirst(num(q, "startTime"), to, book.s.fundingIntervalHours * HOUR_MS, limit).map((t) => ({
          symbol,
          fundingRate: market.settledRate(book, t).toFixed(6),
          fundingRateTimestamp: String(t)
        }))
        return ok({ category: "linear", list }, nowMs)
      }
      case "/v5/market/tickers": {
        if (q.get("category") !== "linear") return bad(10001, "params error: category", nowMs)
        if (symbol !== undefined && b === undefined) return bad(10001, "params error: symbol invalid", nowMs)
        const list = (b !== undefined ? [b] : [...market.books.values()].filter((x) => !x.stopped)).map((x) =>
          tickerRow(x, nowMs)
        )
        return ok({ category: "linear", list }, nowMs)
      }
      case "/v5/market/open-interest": {
        const missing = needBook()
        if (missing !== undefined) return missing
        if (q.get("intervalTime") !== "15min") return bad(10001, "params error: intervalTime", nowMs)
        const book = b as MarketBook
        const limit = Math.min(200, num(q, "limit") ?? 50)
        const to = Math.min(num(q, "endTime") ?? nowMs, nowMs)
        const list = newestFirst(num(q, "startTime"), to, BAR_MS, limit).map((t) => {
          const one = book.oi * (1 + 0.1 * Math.sin(t / (9 * HOUR_MS) + (book.waves[0]?.[2] ?? 0)))
          return { openInterest: (2 * one).toFixed(3), singleOpenInterest: one.toFixed(3), timestamp: String(t) }
        })
        return ok({ symbol, category: "linear", list, nextPageCursor: "" }, nowMs)
      }
      case "/v5/market/orderbook": {
        const missing = needBook()
        if (missing !== undefined) return missing
        const book = b as MarketBook
        const limit = Math.min(500, num(q, "limit") ?? 25)
        const q0 = market.current(book)
        const r = rng(hash(`${book.s.symbol}/depth/${q0.seq}`))
        const bids: Array<[string, string]> = [[price(book, q0.bid), q0.bidQty.toFixed(3)]]
        const asks: Array<[string, string]> = [[price(book, q0.ask), q0.askQty.toFixed(3)]]
        for (let k = 1; k < limit; k++) {
          bids.push([price(book, market.priceOf(book, book.bidTicks - k)), (1 + r() * 800).toFixed(3)])
          asks.push([
            price(book, market.priceOf(book, book.bidTicks + book.spreadTicks + k)),
            (1 + r() * 800).toFixed(3)
          ])
        }
        return ok({ s: symbol, b: bids, a: asks, ts: nowMs, u: q0.seq, seq: q0.seq, cts: q0.sentMs }, nowMs)
      }
      default:
        return { status: 404, body: { retCode: 10404, retMsg: `path ${path} not found` } }
    }
  }

  return {
    venue: "bybit",
    market,
    restUrl: servers.restUrl,
    wsUrl: servers.wsUrl,
    symbols,
    stalenessOf: market.stalenessOf,
    streamedSymbols: () => {
      const out: Array<string> = []
      for (const s of symbols) if ((servers.subscribers.get(`tickers.${s.symbol}`)?.size ?? 0) > 0) out.push(s.symbol)
      return out
    },
    barsAsked: () => [
      ...new Set(
        servers.rest.log.flatMap((e) => (e.what === "/v5/market/kline" && e.symbol !== undefined ? [e.symbol] : []))
      )
    ],
    dropStreams: servers.dropStreams,
    blast: (frames) => blastMoves(servers, market, (symbol) => `tickers.${symbol}`, frames),
    refuseConnections: servers.refuseConnections,
    setMeanInterval: market.setMeanInterval,
    frames: () => ({ total: servers.stats.framesSent, byKind: { ...servers.stats.byKind } }),
    connections: () => servers.conns.size,
    close: async () => {
      clearInterval(markTimer)
      clearInterval(silenceTimer)
      market.close()
      await servers.close()
    }
  }
}
