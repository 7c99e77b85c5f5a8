/**
 * A replay OKX v5 venue (USDT-margined perpetual swaps, `<BASE>-USDT-SWAP`) on 127.0.0.1, for end-to-end tests and
 * benches of live mode: REST and the public websocket, each on a port of its own, over the moving books of
 * `market.ts`. Nothing leaves the machine.
 *
 * Websocket (API v5 "WebSocket": connect, subscribe/unsubscribe, "Connection count limit", keep-alive; public
 * channels "Tickers", "Mark price", "Funding rate", "Liquidation orders"; business channel "Candlesticks"), on
 * `/ws/v5/public` (and `candle15m` on `/ws/v5/business`, where OKX serves candles): `{"op":"subscribe","args":[{"channel",
 * "instId"},...]}` is answered arg by arg, `{"event":"subscribe","arg":{...},"connId"}`, and an arg naming an
 * unknown channel or instrument `{"event":"error","code":"60018","msg":"Wrong URL or channel:<channel>,instId:<id>
 * doesn't exist. ...","connId"}` (as recorded in `../shared/data/crypto/streams/OKX.ws.1.0.txt` and documented);
 * `unsubscribe` likewise; the text `ping` is answered with the text `pong`; a frame that is not JSON
 * `{"event":"error","code":"60012","msg":"Invalid request: ..."}`. Data frames `{"arg":{"channel","instId"},
 * "data":[{...}]}`; each subscription starts with the current value, as OKX pushes on subscribe. `tickers` on every
 * book move (`bidPx`, `bidSz`, `askPx`, `askSz` with sizes in contracts, `last`, `ts`); `mark-price` every
 * `markEveryMs` (1 s); `funding-rate` every `fundingEveryMs` (30 s; OKX pushes every 30 to 90 s); `candle15m`
 * (`[ts, o, h, l, c, vol, volCcy, volCcyQuote, confirm]`) at most once a second while the swap trades, the closing
 * candle with `confirm` "1" when the next opens; `liquidation-orders` (`instType` `SWAP`) accepted, nothing pushed
 * (the replay liquidates nobody). A channel asked on the other endpoint is refused (`60018`). Limits as
 * documented: at most 3 connection requests a second (429 past it), 480 subscribe and unsubscribe requests an hour
 * per connection (`60014` past it), one request's args at most 64 KB (`60012`); a connection with no subscription
 * 30 s after it opened, or silent from the client for 30 s while nothing is subscribed, is closed.
 *
 * REST (`{code, msg, data}`, `code` "0"): `public/instruments` (SWAP: the listed swaps; SPOT: none),
 * `market/history-candles` and `market/candles` (newest first; `after`: older than, `before`: newer than; the
 * forming bar with `confirm` "0"), `public/funding-rate-history`, `public/funding-rate`, `public/mark-price`,
 * `market/index-tickers`, `public/open-interest`, `rubik/stat/contracts/open-interest-history`,
 * `rubik/stat/taker-volume-contract`, `public/liquidation-orders` (none), `market/books` (the current best bid and
 * ask on top). More than 20 requests in 2 s to one path: HTTP 429 with code `50011`, as OKX.
 */
import { blastMoves } from "./blast.ts"
import { BAR_MS, type Bar, HOUR_MS, type Market, type MarketBook, makeMarket, type PublishedQuote } from "./market.ts"
import { type Conn, overRate, type ReplayVenueBase, type RestAnswer, startVenueServers } from "./serve.ts"
import { hash, rng } from "./symbols.ts"
import { venueSymbols } from "./venue-symbols.ts"

const PUBLIC = "/ws/v5/public"
const BUSINESS = "/ws/v5/business"
/** Per-swap channels by endpoint (OKX serves candles on the business endpoint only). */
const CHANNELS: Readonly<Record<string, ReadonlyArray<string>>> = {
  [PUBLIC]: ["tickers", "mark-price", "funding-rate", "open-interest"],
  [BUSINESS]: ["candle15m"]
}
/** The all-swap liquidation channel (`instType` `SWAP`, public endpoint). */
const LIQUIDATIONS = "liquidation-orders"
const MAX_REQUEST_BYTES = 64 * 1024

export interface OkxReplayOptions {
  readonly symbols?: number
  readonly taken?: Set<string>
  readonly syntheticOnly?: boolean
  readonly meanIntervalMs?: number
  /** Quotes kept per symbol for `stalenessOf` (default 4,096: `market.ts`). */
  readonly historyPerSymbol?: number
  /** The `mark-price` period (ms, default 1,000). */
  readonly markEveryMs?: number
  /** The `funding-rate` period (ms, default 30,000). */
  readonly fundingEveryMs?: number
  readonly seed?: number
}

export interface OkxReplay extends ReplayVenueBase {
  readonly market: Market
}

export const startOkxReplay = async (options: OkxReplayOptions = {}): Promise<OkxReplay> => {
  const symbols = venueSymbols("okx", options.symbols ?? 250, options.taken ?? new Set(), {
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    ...(options.syntheticOnly === undefined ? {} : { syntheticOnly: options.syntheticOnly })
  })
  const market = makeMarket(symbols, {
    meanIntervalMs: options.meanIntervalMs ?? 1_000,
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    ...(options.historyPerSymbol === undefined ? {} : { historyPerSymbol: options.historyPerSymbol })
  })
  const connectTimes: Array<number> = []
  const opened = new Map<Conn, number>()
  const pathTimes = new Map<string, Array<number>>()

  const price = (b: MarketBook, p: number) => market.text(b, p)
  /** A size in venue units as OKX writes it: contracts. */
  const contracts = (b: MarketBook, qty: number) => String(Math.max(1, Math.round(qty / b.s.contractSize)))
  const family = (b: MarketBook) => b.s.symbol.replace(/-SWAP$/, "")

  const tickerData = (b: MarketBook, q: PublishedQuote, nowMs: number) => {
    const m = market.mid(b)
    return `{"instType":"SWAP","instId":"${b.s.symbol}","last":"${price(b, m)}","lastSz":"1","askPx":"${price(b, q.ask)}","askSz":"${contracts(b, q.askQty)}","bidPx":"${price(b, q.bid)}","bidSz":"${contracts(b, q.bidQty)}","open24h":"${price(b, market.priceAt(b, nowMs - 24 * HOUR_MS))}","high24h":"${price(b, m * 1.02)}","low24h":"${price(b, m * 0.98)}","volCcy24h":"${(b.oi * 0.8).toFixed(2)}","vol24h":"${Math.round((b.oi * 0.8) / b.s.contractSize)}","sodUtc0":"${price(b, m)}","sodUtc8":"${price(b, m)}","ts":"${nowMs}"}`
  }
  const markData = (b: MarketBook, nowMs: number) =>
    `{"instType":"SWAP","instId":"${b.s.symbol}","markPx":"${price(b, market.mark(b))}","ts":"${nowMs}"}`
  const fundingRow = (b: MarketBook, nowMs: number) => {
    const next = market.nextFundingMs(b, nowMs)
    return {
      formulaType: "withRate",
      fundingRate: b.fundingRate.toFixed(8),
      fundingTime: String(next),
      impactValue: "",
      instId: b.s.symbol,
      instType: "SWAP",
      interestRate: "0.0001",
      maxFundingRate: "0.0075",
      method: "current_period",
      minFundingRate: "-0.0075",
      nextFundingRate: "",
      nextFundingTime: String(next + b.s.fundingIntervalHours * HOUR_MS),
      premium: "0.0001",
      settFundingRate: market.settledRate(b, next - b.s.fundingIntervalHours * HOUR_MS).toFixed(8),
      settState: "settled",
      ts: String(nowMs)
    }
  }
  const oiRow = (b: MarketBook, nowMs: number) => ({
    instType: "SWAP",
    instId: b.s.symbol,
    oi: String(Math.round(b.oi / b.s.contractSize)),
    oiCcy: b.oi.toFixed(4),
    oiUsd: (b.oi * market.mark(b)).toFixed(2),
    ts: String(nowMs)
  })
  const push = (c: Conn, channel: string, b: MarketBook, data: string, kind: string) =>
    servers.send(c, `{"arg":{"channel":"${channel}","instId":"${b.s.symbol}"},"data":[${data}]}`, kind)
  const candleRow = (b: MarketBook, bar: Bar, nowMs: number) => {
    const d = b.s.decimals
    return `["${bar.openMs}","${bar.open.toFixed(d)}","${bar.high.toFixed(d)}","${bar.low.toFixed(d)}","${bar.close.toFixed(d)}","${Math.round(bar.volume / b.s.contractSize)}","${bar.volume.toFixed(4)}","${bar.quoteVolume.toFixed(4)}","${bar.openMs + BAR_MS <= nowMs ? "1" : "0"}"]`
  }
  const pushCandle = (c: Conn, b: MarketBook, bar: Bar, nowMs: number) =>
    push(c, "candle15m", b, candleRow(b, bar, nowMs), "kline")
  const pushCurrent = (c: Conn, channel: string, b: MarketBook, nowMs: number) => {
    if (channel === "tickers") push(c, channel, b, tickerData(b, market.current(b), nowMs), "book")
    else if (channel === "mark-price") push(c, channel, b, markData(b, nowMs), "mark")
    else if (channel === "funding-rate") push(c, channel, b, JSON.stringify(fundingRow(b, nowMs)), "funding")
    else if (channel === "candle15m") pushCandle(c, b, market.formingBar(b, nowMs), nowMs)
    else push(c, channel, b, JSON.stringify(oiRow(b, nowMs)), "oi")
  }

  const servers = await startVenueServers({
    wsPaths: [PUBLIC, BUSINESS],
    admit: () => {
      const nowMs = Date.now()
      while (connectTimes.length > 0 && (connectTimes[0] as number) <= nowMs - 1_000) connectTimes.shift()
      if (connectTimes.length >= 3) return false
      connectTimes.push(nowMs)
      return true
    },
    onConnect: (c) => {
      opened.set(c, Date.now())
    },
    onClose: (c) => {
      opened.delete(c)
    },
    onMessage: (c, text) => onMessage(c, text),
    describe: (r) => ({ what: r.path, symbol: r.query.get("instId") ?? undefined }),
    rest: (r, nowMs) => rest(r.path, r.query, nowMs)
  })
  const connId = (c: Conn) => `replay${c.id.toString(16).padStart(4, "0")}`
  const error = (c: Conn, code: string, msg: string) => {
    servers.stats.errorsAnswered++
    servers.send(c, JSON.stringify({ event: "error", code, msg, connId: connId(c) }), "answer")
  }

  const onMessage = (c: Conn, text: string) => {
    const nowMs = Date.now()
    opened.set(c, nowMs)
    if (text === "ping") return servers.send(c, "pong", "answer")
    if (text.length > MAX_REQUEST_BYTES) return error(c, "60012", "Invalid request: request larger than 64 KB")
    let m: Record<string, unknown>
    try {
      const parsed: unknown = JSON.parse(text)
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not an object")
      m = parsed as Record<string, unknown>
    } catch {
      return error(c, "60012", `Invalid request: ${text.slice(0, 100)}`)
    }
    if (m.op !== "subscribe" && m.op !== "unsubscribe")
      return error(c, "60012", `Invalid request: ${text.slice(0, 100)}`)
    if (overRate(c, 480, HOUR_MS, nowMs)) {
      servers.stats.rateViolations++
      return error(c, "60014", "Requests too frequent.")
    }
    const op = m.op
    if (!Array.isArray(m.args)) return error(c, "60012", `Invalid request: ${text.slice(0, 100)}`)
    for (const a of m.args as ReadonlyArray<unknown>) {
      const arg = (typeof a === "object" && a !== null ? a : {}) as Record<string, unknown>
      const channel = String(arg.channel)
      if (channel === LIQUIDATIONS && c.path === PUBLIC && arg.instType === "SWAP") {
        // Accepted; the replay liquidates nobody, so nothing is pushed on it.
        const topic = `${channel}:SWAP`
        servers.send(c, JSON.stringify({ event: op, arg: { channel, instType: "SWAP" }, connId: connId(c) }), "answer")
        if (op === "unsubscribe") servers.unsubscribe(c, topic)
        else servers.subscribe(c, topic)
        continue
      }
      const instId = String(arg.instId)
      const b = market.books.get(instId)
      if (!(CHANNELS[c.path] ?? []).includes(channel) || b === undefined) {
        error(
          c,
          "60018",
          `Wrong URL or channel:${channel},instId:${instId} doesn't exist. Please use the correct URL, channel and parameters referring to API document.`
        )
        continue
      }
      const topic = `${channel}:${instId}`
      servers.send(c, JSON.stringify({ event: op, arg: { channel, instId }, connId: connId(c) }), "answer")
      if (op === "unsubscribe") servers.unsubscribe(c, topic)
      else if (!c.topics.has(topic)) {
        servers.subscribe(c, topic)
        pushCurrent(c, channel, b, nowMs)
      }
    }
  }

  market.onMove((b, q, closed, nowMs) => {
    const subs = servers.subscribers.get(`tickers:${b.s.symbol}`)
    if (subs !== undefined && subs.size > 0) {
      const data = tickerData(b, q, q.sentMs)
      for (const c of subs) push(c, "tickers", b, data, "book")
    }
    // The forming 15-minute candle at most once a second, the closing one (confirm "1") when the next opens.
    const candles = servers.subscribers.get(`candle15m:${b.s.symbol}`)
    if (candles === undefined || candles.size === 0) return
    if (closed !== undefined) for (const c of candles) pushCandle(c, b, closed, nowMs)
    if (nowMs - b.lastKlineMs < 1_000) return
    b.lastKlineMs = nowMs
    const bar = market.formingBar(b, nowMs)
    for (const c of candles) pushCandle(c, b, bar, nowMs)
  })
  const periodic = (channel: string, everyMs: number) =>
    setInterval(() => {
      if (market.quiet()) return
      const nowMs = Date.now()
      for (const b of market.books.values()) {
        if (b.stopped) continue
        const subs = servers.subscribers.get(`${channel}:${b.s.symbol}`)
        if (subs === undefined) continue
        for (const c of subs) pushCurrent(c, channel, b, nowMs)
      }
    }, everyMs)
  const markTimer = periodic("mark-price", options.markEveryMs ?? 1_000)
  const fundingTimer = periodic("funding-rate", options.fundingEveryMs ?? 30_000)
  const oiTimer = periodic("open-interest", 3_000)
  // OKX closes a connection that subscribes nothing (or hears nothing) for 30 s.
  const idleTimer = setInterval(() => {
    const nowMs = Date.now()
    for (const [c, t] of opened) if (c.topics.size === 0 && nowMs - t > 30_000) c.socket.terminate()
  }, 5_000)

  // -- REST ----------------------------------------------------------------------------------------------------
  const ok = (data: unknown): RestAnswer => ({ status: 200, body: { code: "0", msg: "", data } })
  const bad = (code: string, msg: string): RestAnswer => ({ status: 400, body: { code, msg, data: [] } })
  const num = (q: URLSearchParams, name: string): number | undefined => {
    const v = q.get(name)
    return v === null || v === "" ? undefined : Number(v)
  }
  /**
   * Grid times `step` apart, newest first: older than `after` (exclusive; else up to now), newer than `before`
   * (exclusive), at most `limit`.
   */
  const page = (after: number | undefined, before: number | undefined, nowMs: number, step: number, limit: number) => {
    const out: Array<number> = []
    const top = after === undefined ? Math.floor(nowMs / step) * step : Math.ceil(after / step) * step - step
    for (let t = Math.min(top, Math.floor(nowMs / step) * step); out.length < limit; t -= step) {
      if (before !== undefined && t <= before) break
      out.push(t)
    }
    return out
  }
  const candle = (b: MarketBook, bar: Bar, nowMs: number) => {
    const d = b.s.decimals
    return [
      String(bar.openMs),
      bar.open.toFixed(d),
      bar.high.toFixed(d),
      bar.low.toFixed(d),
      bar.close.toFixed(d),
      String(Math.round(bar.volume / b.s.contractSize)),
      bar.volume.toFixed(4),
      bar.quoteVolume.toFixed(4),
      bar.openMs + BAR_MS <= nowMs ? "1" : "0"
    ]
  }
  const rest = (path: string, q: URLSearchParams, nowMs: number): RestAnswer => {
    const times = pathTimes.get(path) ?? []
    pathTimes.set(path, times)
    while (times.length > 0 && (times[0] as number) <= nowMs - 2_000) times.shift()
    times.push(nowMs)
    if (times.length > 20) return { status: 429, body: { code: "50011", msg: "Too Many Requests", data: [] } }
    const instId = q.get("instId") ?? undefined
    const b = instId === undefined ? undefined : market.books.get(instId)
    const needBook = (): RestAnswer | undefined =>
      instId === undefined
        ? bad("50014", "Parameter instId can not be empty.")
        : b === undefined
          ? bad("51001", "Instrument ID does not exist.")
          : undefined
    const live = () => [...market.books.values()].filter((x) => !x.stopped)
    switch (path) {
      case "/api/v5/public/time":
        return ok([{ ts: String(nowMs) }])
      case "/api/v5/public/instruments": {
        const type = q.get("instType")
        if (type === "SPOT") return ok([])
        if (type !== "SWAP") return bad("51000", "Parameter instType error")
        return ok(symbols.map((s) => ({ ...s.info, state: "live" })))
      }
      case "/api/v5/market/history-candles":
      case "/api/v5/market/candles": {
        const missing = needBook()
        if (missing !== undefined) return missing
        if (q.get("bar") !== "15m") return bad("51000", "Parameter bar error (the replay serves 15m)")
        const book = b as MarketBook
        const limit = Math.min(path.endsWith("history-candles") ? 100 : 300, num(q, "limit") ?? 100)
        return ok(
          page(num(q, "after"), num(q, "before"), nowMs, BAR_MS, limit).map((t) =>
            candle(book, market.barOf(book, t), nowMs)
          )
        )
      }
      case "/api/v5/public/funding-rate-history": {
        const missing = needBook()
        if (missing !== undefined) return missing
        const book = b as MarketBook
        const every = book.s.fundingIntervalHours * HOUR_MS
        // Settled rows only: the newest at or before now.
        const limit = Math.min(400, num(q, "limit") ?? 100)
        return ok(
          page(num(q, "after"), num(q, "before"), nowMs, every, limit).map((t) => ({
            instType: "SWAP",
            instId,
            formulaType: "withRate",
            fundingRate: market.settledRate(book, t).toFixed(8),
            realizedRate: market.settledRate(book, t).toFixed(8),
            fundingTime: String(t),
            method: "current_period"
          }))
        )
      }
      case "/api/v5/public/funding-rate": {
        const missing = needBook()
        if (missing !== undefined) return missing
        return ok([fundingRow(b as MarketBook, nowMs)])
      }
      case "/api/v5/public/mark-price":
        return ok(
          live().map((x) => ({
            instType: "SWAP",
            instId: x.s.symbol,
            markPx: price(x, market.mark(x)),
            ts: String(nowMs)
          }))
        )
      case "/api/v5/market/index-tickers":
        return ok(
          live().map((x) => {
            const idx = price(x, market.index(x))
            return {
              instId: family(x),
              idxPx: idx,
              high24h: idx,
              low24h: idx,
              open24h: idx,
              sodUtc0: idx,
              sodUtc8: idx,
              ts: String(nowMs)
            }
          })
        )
      case "/api/v5/public/open-interest":
        return ok(live().map((x) => oiRow(x, nowMs)))
      case "/api/v5/rubik/stat/contracts/open-interest-history":
      case "/api/v5/rubik/stat/taker-volume-contract": {
        const missing = needBook()
        if (missing !== undefined) return missing
        if (q.get("period") !== "15m") return bad("51000", "Parameter period error (the replay serves 15m)")
        const book = b as MarketBook
        const begin = num(q, "begin")
        const end = Math.min(num(q, "end") ?? nowMs, nowMs)
        const limit = Math.min(100, num(q, "limit") ?? 100)
        const ts = page(end + 1, begin === undefined ? undefined : begin - 1, nowMs, BAR_MS, limit)
        if (path.endsWith("open-interest-history"))
          return ok(
            ts.map((t) => {
              const one = book.oi * (1 + 0.1 * Math.sin(t / (9 * HOUR_MS) + (book.waves[0]?.[2] ?? 0)))
              return [
                String(t),
                String(Math.round(one / book.s.contractSize)),
                one.toFixed(4),
                (one * market.priceAt(book, t)).toFixed(2)
              ]
            })
          )
        return ok(
          ts.map((t) => {
            const bar = market.barOf(book, t)
            const buy = (bar.takerBuyVolume * (bar.open + bar.close)) / 2
            return [String(t), Math.max(0, bar.quoteVolume - buy).toFixed(2), buy.toFixed(2)]
          })
        )
      }
      case "/api/v5/public/liquidation-orders":
        return ok([])
      case "/api/v5/market/books": {
        const missing = needBook()
        if (missing !== undefined) return missing
        const book = b as MarketBook
        const sz = Math.min(400, num(q, "sz") ?? 1)
        const q0 = market.current(book)
        const r = rng(hash(`${book.s.symbol}/depth/${q0.seq}`))
        const bids: Array<Array<string>> = [[price(book, q0.bid), contracts(book, q0.bidQty), "0", "3"]]
        const asks: Array<Array<string>> = [[price(book, q0.ask), contracts(book, q0.askQty), "0", "3"]]
        for (let k = 1; k < sz; k++) {
          bids.push([price(book, market.priceOf(book, book.bidTicks - k)), contracts(book, 1 + r() * 800), "0", "2"])
          asks.push([
            price(book, market.priceOf(book, book.bidTicks + book.spreadTicks + k)),
            contracts(book, 1 + r() * 800),
            "0",
            "2"
          ])
        }
        return ok([{ asks, bids, ts: String(q0.sentMs) }])
      }
      default:
        return { status: 404, body: { code: "404", msg: `path ${path} not found`, data: [] } }
    }
  }

  return {
    venue: "okx",
    market,
    restUrl: servers.restUrl,
    wsUrl: servers.wsUrl,
    symbols,
    stalenessOf: market.stalenessOf,
    streamedSymbols: () => {
      const out: Array<string> = []
      for (const s of symbols) if ((servers.subscribers.get(`tickers:${s.symbol}`)?.size ?? 0) > 0) out.push(s.symbol)
      return out
    },
    barsAsked: () => [
      ...new Set(
        servers.rest.log.flatMap((e) =>
          e.what === "/api/v5/market/history-candles" && e.symbol !== undefined ? [e.symbol] : []
        )
      )
    ],
    dropStreams: servers.dropStreams,
    blast: (frames) => blastMoves(servers, market, (symbol) => `tickers:${symbol}`, frames),
    refuseConnections: servers.refuseConnections,
    setMeanInterval: market.setMeanInterval,
    frames: () => ({ total: servers.stats.framesSent, byKind: { ...servers.stats.byKind } }),
    connections: () => servers.conns.size,
    close: async () => {
      for (const t of [markTimer, fundingTimer, oiTimer, idleTimer]) clearInterval(t)
      market.close()
      await servers.close()
    }
  }
}
