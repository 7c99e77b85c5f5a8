/**
 * Binance USD-M futures (fapi) connector.
 *
 * Endpoints (https://developers.binance.com/docs/derivatives/usds-margined-futures):
 * - `GET /fapi/v1/exchangeInfo` (weight 1): perpetuals with `contractType: PERPETUAL`, `status: TRADING`;
 *   `GET /fapi/v1/fundingInfo` (weight 1): symbols whose funding interval differs from 8 h (`fundingIntervalHours`).
 * - `GET /fapi/v1/klines?interval=15m&limit=N` (N the window's bars, at most 1,000; weight 1 below 100, 2 below 500,
 *   else 5): `[openTime, open, high, low, close, volume (base),
 *   closeTime, quoteVolume (USDT), trades, takerBuyBase, takerBuyQuote, ignore]`; taker buy USD = takerBuyQuote,
 *   taker sell USD = quoteVolume - takerBuyQuote (USDT counted as USD).
 * - `GET /fapi/v1/fundingRate` (weight 1, 1000 rows): `{symbol, fundingTime, fundingRate, markPrice}`.
 * - `GET /fapi/v1/premiumIndex` (all symbols, weight 10): `markPrice`, `indexPrice`, `lastFundingRate` (the rate
 *   accruing for the running interval), `nextFundingTime`.
 * - `GET /fapi/v1/openInterest` (weight 1): `openInterest` in base units (of the symbol's unit: 1000 PEPE for
 *   1000PEPEUSDT), so USD = openInterest x markPrice. Binance counts one side (each long and the short it is
 *   matched with count once), the convention every answer uses (`VenueConventions.ts` in the core): no halving.
 * - `GET /futures/data/openInterestHist?period=15m` (weight 1, last 30 days): `sumOpenInterestValue` is USD
 *   (`sumOpenInterest` x the price; one side, like `openInterest`).
 * - `GET /fapi/v1/depth?limit=100` (weight 5).
 * Liquidations: Binance publishes them only on the websocket stream `<symbol>@forceOrder` / `!forceOrder@arr` (the
 * REST `allForceOrders` was withdrawn), so this REST connector delivers none; `LiquidationStreams.ts` reads them.
 * That stream is a snapshot ("for each symbol, only the latest one liquidation order within 1000ms will be
 * pushed"), so liquidation totals built from it are a lower bound, and the answers say so (`lower_bound`).
 * Limit: 2,400 request weight per minute per IP; the connector's bucket holds 1,000 and refills 1,000 per minute, so no minute sees more than 2,000.
 */
import { BAR_MS, type BookLevel } from "@market-data/core"
import { Effect } from "effect"
import { fetchJson } from "../../Http.ts"
import { makeLimiter } from "../../Limiter.ts"
import { arr, decode, num, obj, str } from "../../Parse.ts"
import { type BarRow, type Instrument, pageOf, type VenueConnector, type VenueListing } from "../../Venue.ts"

export const BINANCE_DEFAULT_BASE_URL = "https://fapi.binance.com"
/** Binance spot's API (`GET /api/v3/exchangeInfo`, weight 20), for the directory's spot listings. */
export const BINANCE_SPOT_DEFAULT_BASE_URL = "https://api.binance.com"

/**
 * The spot API's base URL for a USD-M base URL: the public spot API beside the public USD-M API, otherwise the
 * same base URL (a replay server or a proxy serves both paths; the service never reaches the real venue behind
 * its operator's back).
 */
export const binanceSpotBaseUrlFor = (baseUrl: string): string =>
  baseUrl === BINANCE_DEFAULT_BASE_URL ? BINANCE_SPOT_DEFAULT_BASE_URL : baseUrl

const HOUR = 3_600_000

/** `GET /fapi/v1/klines`'s request weight by its `limit`: [1, 100) 1, [100, 500) 2, [500, 1000] 5, above 10. */
export const klinesWeight = (limit: number): number => (limit < 100 ? 1 : limit < 500 ? 2 : limit <= 1000 ? 5 : 10)

export const makeBinance = (options: {
  readonly baseUrl: string
  readonly timeoutMs: number
  /** Default: `binanceSpotBaseUrlFor(baseUrl)`. */
  readonly spotBaseUrl?: string
}): VenueConnector => {
  const limiter = makeLimiter({ capacity: 1000, windowMs: 60_000 })
  // The spot API counts its own weight (6,000 a minute); the directory reads it once an hour.
  const spotLimiter = makeLimiter({ capacity: 100, windowMs: 60_000 })
  const get = (path: string, weight: number) =>
    Effect.andThen(
      limiter.take(weight),
      fetchJson({ source: "binance", url: `${options.baseUrl}${path}`, timeoutMs: options.timeoutMs })
    )
  const read = <A>(path: string, weight: number, reader: (body: unknown) => A) =>
    Effect.flatMap(get(path, weight), (body) => decode("binance", `GET ${path}`, body, reader))

  const instrumentList = get("/fapi/v1/exchangeInfo", 1)
  const spotInstrumentList = Effect.andThen(
    spotLimiter.take(20),
    fetchJson({
      source: "binance",
      url: `${options.spotBaseUrl ?? binanceSpotBaseUrlFor(options.baseUrl)}/api/v3/exchangeInfo`,
      timeoutMs: options.timeoutMs
    })
  )

  const listings = Effect.gen(function* () {
    const perps = yield* read("/fapi/v1/exchangeInfo", 1, (body) =>
      arr(obj(body, "$").symbols, "$.symbols")
        .map((s, i) => obj(s, `$.symbols[${i}]`))
        .filter((s) => s.contractType === "PERPETUAL" && s.status === "TRADING")
        .map((s) => str(s.symbol, "$.symbols[].symbol"))
    )
    const intervals = yield* read(
      "/fapi/v1/fundingInfo",
      1,
      (body) =>
        new Map(
          arr(body, "$").map((e, i) => {
            const o = obj(e, `$[${i}]`)
            return [str(o.symbol, `$[${i}].symbol`), num(o.fundingIntervalHours, `$[${i}].fundingIntervalHours`) * HOUR]
          })
        )
    )
    return new Map<string, VenueListing>(
      perps.map((symbol) => {
        const ms = intervals.get(symbol)
        return [symbol, { symbol, fundingIntervalMs: ms ?? 8 * HOUR }]
      })
    )
  })

  const klineRow = (k: unknown, n: number, u: number): BarRow => {
    const row = arr(k, `$[${n}]`)
    const quote = num(row[7], `$[${n}][7]`)
    const takerBuyQuote = num(row[10], `$[${n}][10]`)
    return {
      t: num(row[0], `$[${n}][0]`),
      open: num(row[1], `$[${n}][1]`) / u,
      high: num(row[2], `$[${n}][2]`) / u,
      low: num(row[3], `$[${n}][3]`) / u,
      close: num(row[4], `$[${n}][4]`) / u,
      volume: num(row[5], `$[${n}][5]`) * u,
      takerBuyUsd: takerBuyQuote,
      takerSellUsd: quote - takerBuyQuote
    }
  }

  // As many bars as the window holds, at most 1,000: the weight follows the limit (a poll's one or two bars, or
  // the start's day of bars, weigh 1 instead of 5).
  const bars = (i: Instrument, fromMs: number, toMs: number) => {
    const limit = Math.max(1, Math.min(1000, Math.ceil((toMs - fromMs) / BAR_MS)))
    return read(
      `/fapi/v1/klines?symbol=${i.symbol}&interval=15m&startTime=${fromMs}&endTime=${toMs - 1}&limit=${limit}`,
      klinesWeight(limit),
      (body) => {
        const raw = arr(body, "$")
        const rows = raw
          .map((k, n) => klineRow(k, n, i.tokensPerUnit))
          .filter((r) => r.t >= fromMs && r.t + BAR_MS <= toMs)
        return pageOf(rows, raw.length, limit, toMs, BAR_MS)
      }
    )
  }

  // limit 1: weight 1.
  const formingBar = (i: Instrument, slotMs: number) =>
    read(`/fapi/v1/klines?symbol=${i.symbol}&interval=15m&startTime=${slotMs}&limit=1`, 1, (body) =>
      arr(body, "$")
        .map((k, n) => klineRow(k, n, i.tokensPerUnit))
        .find((r) => r.t === slotMs)
    )

  const fundingHistory = (i: Instrument, fromMs: number, toMs: number) =>
    read(`/fapi/v1/fundingRate?symbol=${i.symbol}&startTime=${fromMs}&endTime=${toMs - 1}&limit=1000`, 1, (body) => {
      const raw = arr(body, "$")
      const rows = raw
        .map((e, n) => {
          const o = obj(e, `$[${n}]`)
          return {
            t: num(o.fundingTime, `$[${n}].fundingTime`),
            rate: num(o.fundingRate, `$[${n}].fundingRate`),
            intervalMs: i.fundingIntervalMs
          }
        })
        .filter((r) => r.t >= fromMs && r.t < toMs)
      return pageOf(rows, raw.length, 1000, toMs, 1)
    })

  const tickers = (is: ReadonlyArray<Instrument>, _nowMs: number) =>
    Effect.gen(function* () {
      const premium = yield* read(
        "/fapi/v1/premiumIndex",
        10,
        (body) =>
          new Map(
            arr(body, "$").map((e, n) => {
              const o = obj(e, `$[${n}]`)
              return [
                str(o.symbol, `$[${n}].symbol`),
                {
                  mark: num(o.markPrice, `$[${n}].markPrice`),
                  index: num(o.indexPrice, `$[${n}].indexPrice`),
                  rate: num(o.lastFundingRate, `$[${n}].lastFundingRate`),
                  next: num(o.nextFundingTime, `$[${n}].nextFundingTime`)
                }
              ] as const
            })
          )
      )
      return yield* Effect.forEach(
        is.filter((i) => premium.has(i.symbol)),
        (i) =>
          Effect.map(
            read(`/fapi/v1/openInterest?symbol=${i.symbol}`, 1, (body) =>
              num(obj(body, "$").openInterest, "$.openInterest")
            ),
            (oi) => {
              const p = premium.get(i.symbol) as { mark: number; index: number; rate: number; next: number }
              return {
                assetId: i.assetId,
                mark: p.mark / i.tokensPerUnit,
                index: p.index / i.tokensPerUnit,
                // Units of the symbol x price per unit: USD whatever the multiplier.
                oiUsd: oi * p.mark,
                funding: {
                  intervalMs: i.fundingIntervalMs,
                  nextFundingMs: p.next,
                  currentRate: p.rate,
                  predictedRate: p.rate
                }
              }
            }
          ),
        { concurrency: 1 }
      )
    })

  const levels = (value: unknown, path: string, u: number): Array<BookLevel> =>
    arr(value, path).map((l, n) => {
      const pair = arr(l, `${path}[${n}]`)
      return [num(pair[0], `${path}[${n}][0]`) / u, num(pair[1], `${path}[${n}][1]`) * u] as const
    })

  const book = (i: Instrument, nowMs: number) =>
    read(`/fapi/v1/depth?symbol=${i.symbol}&limit=100`, 5, (body) => {
      const o = obj(body, "$")
      return {
        assetId: i.assetId,
        venue: "binance",
        t: typeof o.T === "number" ? o.T : nowMs,
        bids: levels(o.bids, "$.bids", i.tokensPerUnit),
        asks: levels(o.asks, "$.asks", i.tokensPerUnit)
      }
    })

  const openInterestHistory = (i: Instrument, fromMs: number, toMs: number) =>
    read(
      `/futures/data/openInterestHist?symbol=${i.symbol}&period=15m&startTime=${fromMs}&endTime=${toMs - 1}&limit=500`,
      1,
      (body) => {
        const raw = arr(body, "$")
        const rows = raw
          .map((e, n) => {
            const o = obj(e, `$[${n}]`)
            return {
              t: num(o.timestamp, `$[${n}].timestamp`),
              oiUsd: num(o.sumOpenInterestValue, `$[${n}].sumOpenInterestValue`)
            }
          })
          .filter((r) => r.t >= fromMs && r.t < toMs)
          .sort((a, b) => a.t - b.t)
        return pageOf(rows, raw.length, 500, toMs, BAR_MS)
      }
    )

  return {
    venue: "binance",
    limiter,
    listings,
    instrumentList,
    spotInstrumentList,
    bars,
    fundingHistory,
    tickers,
    book,
    openInterestHistory,
    klinesCarryTakerFlow: true,
    formingBar,
    formingEveryMs: 60_000,
    // GET /fapi/v1/depth?limit=100.
    bookWeight: 5
  }
}
