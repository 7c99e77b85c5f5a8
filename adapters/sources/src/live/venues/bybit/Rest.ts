/**
 * Bybit v5 connector, linear (USDT) perpetuals.
 *
 * Endpoints (https://bybit-exchange.github.io/docs/v5/market/...), all answering
 * `{retCode, retMsg, result, time}` (`retCode` 0 is success; anything else is an error, 10006 a rate limit):
 * - `GET /v5/market/instruments-info?category=linear`: `contractType: LinearPerpetual`, `status: Trading`,
 *   `fundingInterval` in minutes (480 = 8 h; some listings settle every 4 h or 1 h).
 * - `GET /v5/market/kline?interval=15`: `result.list` newest first, `[startTime, open, high, low, close, volume
 *   (base coin: one linear contract is one coin), turnover (USDT)]`.
 * - `GET /v5/market/funding/history`: `result.list` newest first, `{symbol, fundingRate, fundingRateTimestamp}`.
 * - `GET /v5/market/tickers?category=linear` (every symbol at once): `markPrice`, `indexPrice`, `openInterest`
 *   (coins) and `openInterestValue` (USD), both of them "both sides" (Bybit counts each long and each short:
 *   1,000 BTC long against 1,000 BTC short is 2,000), and since 2026-06-11 `singleOpenInterest` and
 *   `singleOpenInterestValue` (single side); `fundingRate` (the rate that settles at `nextFundingTime`). Open
 *   interest is served as USD of one side, as on every venue (`VenueConventions.ts` in the core):
 *   `singleOpenInterestValue`, or `openInterestValue` / 2 where a row lacks it.
 * - `GET /v5/market/open-interest?intervalTime=15min`: `openInterest` in coins, "the sum of both sides", and since
 *   2026-06-11 `singleOpenInterest` (single side); one side (`singleOpenInterest`, else `openInterest` / 2) is
 *   converted to USD with the open of the 15-minute bar opening at that time (fetched alongside).
 * - `GET /v5/market/orderbook?limit=200`: `result.b` / `result.a` as `[price, size]`.
 * Ranged requests return the newest rows of the range first, so windows are sized to one page (1,000 bars,
 * 200 funding rows, 200 open-interest rows) and walked forward.
 * Not published over REST: taker buy/sell volume (no v5 endpoint) and liquidations (websocket `allLiquidation`
 * only, read by `LiquidationStreams.ts`). Limit: 600 requests per 5 s per IP; the connector's bucket holds 50 and refills 50 per 5 s (at most 100 in any 5 s).
 */
import { BAR_MS, type BookLevel } from "@market-data/core"
import { Effect } from "effect"
import { fetchJson, SourceError } from "../../Http.ts"
import { makeLimiter } from "../../Limiter.ts"
import { arr, decode, type Json, num, obj, optNum, str } from "../../Parse.ts"
import { type BarRow, type Instrument, pageOf, type VenueConnector, type VenueListing } from "../../Venue.ts"

export const BYBIT_DEFAULT_BASE_URL = "https://api.bybit.com"

const MINUTE = 60_000

/**
 * Open interest of one side from a Bybit row: the single-side field (`singleOpenInterest`,
 * `singleOpenInterestValue`) where the row carries one, else half the both-sides field (`openInterest`,
 * `openInterestValue`: Bybit counts each long and each short). `field` is the pair's name without its prefix.
 */
export const oneSide = (single: unknown, both: unknown, path: string, field: "OpenInterest" | "OpenInterestValue") => {
  const one = optNum(single, `${path}.single${field}`)
  return one ?? num(both, `${path}.${field.charAt(0).toLowerCase()}${field.slice(1)}`) / 2
}

export const makeBybit = (options: { readonly baseUrl: string; readonly timeoutMs: number }): VenueConnector => {
  const limiter = makeLimiter({ capacity: 50, windowMs: 5_000 })
  const result = <A>(path: string, reader: (result: Json) => A) =>
    Effect.gen(function* () {
      yield* limiter.take(1)
      const body = yield* fetchJson({ source: "bybit", url: `${options.baseUrl}${path}`, timeoutMs: options.timeoutMs })
      const envelope = yield* decode("bybit", `GET ${path}`, body, (b) => obj(b, "$"))
      if (envelope.retCode !== 0) {
        return yield* Effect.fail(
          new SourceError({
            source: "bybit",
            kind: "status",
            what: `GET ${path}`,
            message: `retCode ${String(envelope.retCode)}: ${String(envelope.retMsg)}`,
            // 10006: too many visits; Bybit asks for a pause without a Retry-After header.
            ...(envelope.retCode === 10006 ? { status: 429 } : {})
          })
        )
      }
      return yield* decode("bybit", `GET ${path}`, envelope, (e) => reader(obj(obj(e, "$").result, "$.result")))
    })

  /** Every page of one category's instruments, joined as one answer's `result.list`. */
  const instrumentsOf = (category: "linear" | "spot") =>
    Effect.gen(function* () {
      const list: Array<unknown> = []
      let cursor = ""
      for (let page = 0; page < 20; page++) {
        const r = yield* result(
          `/v5/market/instruments-info?category=${category}&limit=1000${cursor === "" ? "" : `&cursor=${encodeURIComponent(cursor)}`}`,
          (res) => ({
            rows: arr(res.list, "$.result.list"),
            next: typeof res.nextPageCursor === "string" ? res.nextPageCursor : ""
          })
        )
        list.push(...r.rows)
        if (r.next === "" || r.rows.length === 0) break
        cursor = r.next
      }
      return { result: { list } } as unknown
    })
  const instrumentList = instrumentsOf("linear")
  const spotInstrumentList = instrumentsOf("spot")

  const listings = Effect.gen(function* () {
    const out = new Map<string, VenueListing>()
    let cursor = ""
    for (let page = 0; page < 20; page++) {
      const r = yield* result(
        `/v5/market/instruments-info?category=linear&limit=1000${cursor === "" ? "" : `&cursor=${encodeURIComponent(cursor)}`}`,
        (res) => ({
          rows: arr(res.list, "$.result.list").map((e, n) => obj(e, `$.result.list[${n}]`)),
          next: typeof res.nextPageCursor === "string" ? res.nextPageCursor : ""
        })
      )
      for (const s of r.rows) {
        if (s.contractType !== "LinearPerpetual" || s.status !== "Trading") continue
        const symbol = str(s.symbol, "symbol")
        const minutes = s.fundingInterval === undefined ? undefined : Number(s.fundingInterval)
        out.set(symbol, {
          symbol,
          ...(minutes !== undefined && Number.isFinite(minutes) && minutes > 0
            ? { fundingIntervalMs: minutes * MINUTE }
            : {})
        })
      }
      if (r.next === "" || r.rows.length === 0) break
      cursor = r.next
    }
    return out as ReadonlyMap<string, VenueListing>
  })

  const klineRows = (i: Instrument, fromMs: number, toMs: number) =>
    result(
      `/v5/market/kline?category=linear&symbol=${i.symbol}&interval=15&start=${fromMs}&end=${toMs - 1}&limit=1000`,
      (res) =>
        arr(res.list, "$.result.list").map((k, n) => {
          const row = arr(k, `$.result.list[${n}]`)
          const p = (c: number) => num(row[c], `$.result.list[${n}][${c}]`)
          return { t: p(0), open: p(1), high: p(2), low: p(3), close: p(4), volume: p(5) }
        })
    )

  const bars = (i: Instrument, fromMs: number, toMs: number) => {
    const end = Math.min(toMs, fromMs + 1000 * BAR_MS)
    return Effect.map(klineRows(i, fromMs, end), (raw) => {
      const rows = raw
        .filter((r) => r.t >= fromMs && r.t + BAR_MS <= end)
        .sort((a, b) => a.t - b.t)
        .map(
          (r): BarRow => ({
            t: r.t,
            open: r.open / i.tokensPerUnit,
            high: r.high / i.tokensPerUnit,
            low: r.low / i.tokensPerUnit,
            close: r.close / i.tokensPerUnit,
            volume: r.volume * i.tokensPerUnit
          })
        )
      return pageOf(rows, raw.length, 1000, end, BAR_MS)
    })
  }

  const formingBar = (i: Instrument, slotMs: number) =>
    Effect.map(klineRows(i, slotMs, slotMs + BAR_MS), (raw) => {
      const r = raw.find((k) => k.t === slotMs)
      return r === undefined
        ? undefined
        : {
            t: r.t,
            open: r.open / i.tokensPerUnit,
            high: r.high / i.tokensPerUnit,
            low: r.low / i.tokensPerUnit,
            close: r.close / i.tokensPerUnit,
            volume: r.volume * i.tokensPerUnit
          }
    })

  const fundingHistory = (i: Instrument, fromMs: number, toMs: number) => {
    const end = Math.min(toMs, fromMs + 200 * i.fundingIntervalMs)
    return result(
      `/v5/market/funding/history?category=linear&symbol=${i.symbol}&startTime=${fromMs}&endTime=${end - 1}&limit=200`,
      (res) => {
        const raw = arr(res.list, "$.result.list")
        const rows = raw
          .map((e, n) => {
            const o = obj(e, `$.result.list[${n}]`)
            return {
              t: num(o.fundingRateTimestamp, `$.result.list[${n}].fundingRateTimestamp`),
              rate: num(o.fundingRate, `$.result.list[${n}].fundingRate`),
              intervalMs: i.fundingIntervalMs
            }
          })
          .filter((r) => r.t >= fromMs && r.t < end)
          .sort((a, b) => a.t - b.t)
        return pageOf(rows, raw.length, 200, end, 1)
      }
    )
  }

  const tickers = (is: ReadonlyArray<Instrument>, _nowMs: number) =>
    Effect.map(
      result("/v5/market/tickers?category=linear", (res) => {
        const bySymbol = new Map<string, Json>()
        arr(res.list, "$.result.list").forEach((e, n) => {
          const o = obj(e, `$.result.list[${n}]`)
          bySymbol.set(str(o.symbol, `$.result.list[${n}].symbol`), o)
        })
        return is.flatMap((i) => {
          const o = bySymbol.get(i.symbol)
          if (o === undefined) return []
          const path = `$.result.list[${i.symbol}]`
          const rate = num(o.fundingRate, `${path}.fundingRate`)
          return [
            {
              assetId: i.assetId,
              mark: num(o.markPrice, `${path}.markPrice`) / i.tokensPerUnit,
              index: num(o.indexPrice, `${path}.indexPrice`) / i.tokensPerUnit,
              oiUsd: oneSide(o.singleOpenInterestValue, o.openInterestValue, `${path}`, "OpenInterestValue"),
              funding: {
                intervalMs: i.fundingIntervalMs,
                nextFundingMs: num(o.nextFundingTime, `${path}.nextFundingTime`),
                currentRate: rate,
                predictedRate: rate
              }
            }
          ]
        })
      }),
      (rows) => rows
    )

  const levels = (value: unknown, path: string, u: number): Array<BookLevel> =>
    arr(value, path).map((l, n) => {
      const pair = arr(l, `${path}[${n}]`)
      return [num(pair[0], `${path}[${n}][0]`) / u, num(pair[1], `${path}[${n}][1]`) * u] as const
    })

  const book = (i: Instrument, nowMs: number) =>
    result(`/v5/market/orderbook?category=linear&symbol=${i.symbol}&limit=200`, (res) => ({
      assetId: i.assetId,
      venue: "bybit",
      t: typeof res.ts === "number" ? res.ts : nowMs,
      bids: levels(res.b, "$.result.b", i.tokensPerUnit),
      asks: levels(res.a, "$.result.a", i.tokensPerUnit)
    }))

  const openInterestHistory = (i: Instrument, fromMs: number, toMs: number) =>
    Effect.gen(function* () {
      const end = Math.min(toMs, fromMs + 200 * BAR_MS)
      const oi = yield* result(
        `/v5/market/open-interest?category=linear&symbol=${i.symbol}&intervalTime=15min&startTime=${fromMs}&endTime=${end - 1}&limit=200`,
        (res) =>
          arr(res.list, "$.result.list").map((e, n) => {
            const o = obj(e, `$.result.list[${n}]`)
            return {
              t: num(o.timestamp, `$.result.list[${n}].timestamp`),
              coins: oneSide(o.singleOpenInterest, o.openInterest, `$.result.list[${n}]`, "OpenInterest")
            }
          })
      )
      const inRange = oi.filter((r) => r.t >= fromMs && r.t < end).sort((a, b) => a.t - b.t)
      if (inRange.length === 0) return pageOf([], oi.length, 200, end, BAR_MS)
      const opens = new Map((yield* klineRows(i, fromMs, end)).map((k) => [k.t, k.open]))
      const rows = inRange.flatMap((r) => {
        const open = opens.get(r.t)
        // Units of the symbol x price per unit of the symbol: USD.
        return open === undefined ? [] : [{ t: r.t, oiUsd: r.coins * open }]
      })
      return { rows, nextMs: pageOf(inRange, oi.length, 200, end, BAR_MS).nextMs }
    })

  return {
    venue: "bybit",
    limiter,
    listings,
    instrumentList,
    spotInstrumentList,
    bars,
    fundingHistory,
    tickers,
    book,
    openInterestHistory,
    klinesCarryTakerFlow: false,
    formingBar,
    formingEveryMs: 60_000
  }
}
