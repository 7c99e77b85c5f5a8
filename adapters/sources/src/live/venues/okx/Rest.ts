/**
 * OKX v5 connector, USDT-margined perpetual swaps (`<BASE>-USDT-SWAP`).
 *
 * Every answer is `{code, msg, data}` (`code` "0" is success; "50011" is a rate limit). Endpoints
 * (https://www.okx.com/docs-v5/en/):
 * - `GET /api/v5/public/instruments?instType=SWAP`: `ctVal` (base tokens per contract for linear swaps, e.g.
 *   0.01 BTC for BTC-USDT-SWAP), `ctMult`, `ctType`, `state: live`. Quantities in contracts become tokens with
 *   `ctVal x ctMult` (`tokensPerContract`).
 * - `GET /api/v5/market/candles?bar=15m&limit=1`: the bar still forming (`confirm` "0").
 * - `GET /api/v5/market/history-candles?bar=15m` (100 rows, newest first; `after`/`before` bound the range,
 *   exclusive): `[ts, o, h, l, c, vol (contracts), volCcy (base tokens), volCcyQuote, confirm]`; `volCcy` is the
 *   bar volume.
 * - `GET /api/v5/public/funding-rate-history` (100 rows, newest first): `realizedRate` (what settled; falls back
 *   to `fundingRate`), `fundingTime`; each settlement's interval is its gap to the one before (1 to 8 h).
 * - `GET /api/v5/public/funding-rate?instId=`: `fundingRate` (settles at `fundingTime`), `nextFundingRate` (the
 *   prediction for the next interval, "" when not published), `nextFundingTime`; their difference is the interval.
 * - `GET /api/v5/public/mark-price?instType=SWAP`, `GET /api/v5/market/index-tickers?quoteCcy=USDT` (`idxPx`
 *   of `<BASE>-USDT`), `GET /api/v5/public/open-interest?instType=SWAP`: `oi` in contracts (`oiCcy` coins, `oiUsd`
 *   USD), one side (each contract counted once); USD = oi x ctVal x ctMult x mark (OKX's own `oiUsd` agrees), the
 *   one-side convention every answer uses (`VenueConventions.ts` in the core).
 * - `GET /api/v5/rubik/stat/contracts/open-interest-history?period=15m`: `[ts, oi, oiCcy, oiUsd]`.
 * - `GET /api/v5/rubik/stat/taker-volume-contract?period=15m&unit=2`: `[ts, sellVol, buyVol]` in USDT.
 * - `GET /api/v5/public/liquidation-orders?instType=SWAP&state=filled`: `details[]` with `side` (`sell`: a long
 *   was liquidated, `buy`: a short), `sz` in contracts, `bkPx` the bankruptcy price; USD = sz x ctVal x bkPx.
 *   OKX documents it as the liquidation orders of the last day, at most 100 a request (`limit`); the feed reads
 *   the newest 100 of each instrument family every 5 minutes, so a busier 5 minutes is cut, and OKX does not
 *   state that the list holds every liquidation (its websocket channel says its data "doesn't represent the
 *   total number of liquidations on OKX"): totals built from it are a lower bound (`lower_bound` in answers).
 *   Rows are summed per one-minute bucket, the same rows the `liquidation-orders` stream writes where it runs
 *   (`Liquidations.ts`: each side the larger of the two counts, so no liquidation is counted twice); this poll
 *   is then its backfill and fallback.
 * - `GET /api/v5/market/books?sz=400`: `[price, size (contracts), "0", orders]`.
 * Limits: 10 to 40 requests per 2 s per endpoint and IP (trading statistics: 5 per 2 s); the connector spends at
 * most 10 per 2 s in all, and at most 4 per 2 s on trading statistics.
 */
import { BAR_MS, type BookLevel } from "@market-data/core"
import { Effect } from "effect"
import { fetchJson, SourceError } from "../../Http.ts"
import { makeLimiter, type RequestLimiter } from "../../Limiter.ts"
import { arr, decode, type Json, num, obj, optNum, str } from "../../Parse.ts"
import { LIQUIDATION_BUCKET_MS } from "../../stream/Liquidation.ts"
import {
  type Instrument,
  intervalsFromGaps,
  type LiquidationRow,
  pageOf,
  type VenueConnector,
  type VenueListing
} from "../../Venue.ts"

export const OKX_DEFAULT_BASE_URL = "https://www.okx.com"

/** `BTC-USDT-SWAP` -> `BTC-USDT` (the instrument family and the index). */
const familyOf = (instId: string): string => instId.replace(/-SWAP$/, "")

export const makeOkx = (options: { readonly baseUrl: string; readonly timeoutMs: number }): VenueConnector => {
  const limiter = makeLimiter({ capacity: 10, windowMs: 2_000 })
  const statsLimiter = makeLimiter({ capacity: 4, windowMs: 2_000 })
  const data = <A>(path: string, reader: (data: ReadonlyArray<unknown>) => A, extra?: RequestLimiter) =>
    Effect.gen(function* () {
      if (extra !== undefined) yield* extra.take(1)
      yield* limiter.take(1)
      const body = yield* fetchJson({ source: "okx", url: `${options.baseUrl}${path}`, timeoutMs: options.timeoutMs })
      const envelope = yield* decode("okx", `GET ${path}`, body, (b) => obj(b, "$"))
      if (envelope.code !== "0") {
        return yield* Effect.fail(
          new SourceError({
            source: "okx",
            kind: "status",
            what: `GET ${path}`,
            message: `code ${String(envelope.code)}: ${String(envelope.msg)}`,
            ...(envelope.code === "50011" ? { status: 429 } : {})
          })
        )
      }
      return yield* decode("okx", `GET ${path}`, envelope, (e) => reader(arr(obj(e, "$").data, "$.data")))
    })

  const instrumentList = data("/api/v5/public/instruments?instType=SWAP", (rows): unknown => ({ data: rows }))
  const spotInstrumentList = data("/api/v5/public/instruments?instType=SPOT", (rows): unknown => ({ data: rows }))

  const listings = data("/api/v5/public/instruments?instType=SWAP", (rows) => {
    const out = new Map<string, VenueListing>()
    rows.forEach((e, n) => {
      const o = obj(e, `$.data[${n}]`)
      if (o.state !== "live" || o.ctType !== "linear") return
      const instId = str(o.instId, `$.data[${n}].instId`)
      out.set(instId, {
        symbol: instId,
        tokensPerContract: num(o.ctVal, `$.data[${n}].ctVal`) * num(o.ctMult, `$.data[${n}].ctMult`)
      })
    })
    return out as ReadonlyMap<string, VenueListing>
  })

  const bars = (i: Instrument, fromMs: number, toMs: number) => {
    const end = Math.min(toMs, fromMs + 100 * BAR_MS)
    return data(
      `/api/v5/market/history-candles?instId=${i.symbol}&bar=15m&before=${fromMs - 1}&after=${end}&limit=100`,
      (raw) => {
        const rows = raw
          .map((k, n) => {
            const row = arr(k, `$.data[${n}]`)
            const p = (c: number) => num(row[c], `$.data[${n}][${c}]`)
            return {
              t: p(0),
              open: p(1) / i.tokensPerUnit,
              high: p(2) / i.tokensPerUnit,
              low: p(3) / i.tokensPerUnit,
              close: p(4) / i.tokensPerUnit,
              volume: p(6) * i.tokensPerUnit,
              confirmed: row[8] === undefined || row[8] === "1"
            }
          })
          .filter((r) => r.confirmed && r.t >= fromMs && r.t + BAR_MS <= end)
          .sort((a, b) => a.t - b.t)
          .map(({ confirmed: _, ...bar }) => bar)
        return pageOf(rows, raw.length, 100, end, BAR_MS)
      }
    )
  }

  /** `market/candles` (the recent candles, the forming one first, `confirm` "0"). */
  const formingBar = (i: Instrument, slotMs: number) =>
    data(`/api/v5/market/candles?instId=${i.symbol}&bar=15m&limit=1`, (rows) =>
      rows
        .map((k, n) => {
          const row = arr(k, `$.data[${n}]`)
          const p = (c: number) => num(row[c], `$.data[${n}][${c}]`)
          return {
            t: p(0),
            open: p(1) / i.tokensPerUnit,
            high: p(2) / i.tokensPerUnit,
            low: p(3) / i.tokensPerUnit,
            close: p(4) / i.tokensPerUnit,
            volume: p(6) * i.tokensPerUnit
          }
        })
        .find((r) => r.t === slotMs)
    )

  const fundingHistory = (i: Instrument, fromMs: number, toMs: number) => {
    const end = Math.min(toMs, fromMs + 100 * i.fundingIntervalMs)
    // One settlement before the page (up to 8 h back) so the first row's interval is measured, not assumed.
    const lookBack = 8 * 3_600_000
    return data(
      `/api/v5/public/funding-rate-history?instId=${i.symbol}&before=${fromMs - lookBack - 1}&after=${end}&limit=100`,
      (raw) => {
        const all = raw
          .map((e, n) => {
            const o = obj(e, `$.data[${n}]`)
            const realized = optNum(o.realizedRate, `$.data[${n}].realizedRate`)
            return {
              t: num(o.fundingTime, `$.data[${n}].fundingTime`),
              rate: realized ?? num(o.fundingRate, `$.data[${n}].fundingRate`)
            }
          })
          .filter((r) => r.t < end)
          .sort((a, b) => a.t - b.t)
        const intervals = intervalsFromGaps(
          all.map((r) => r.t),
          i.fundingIntervalMs
        )
        const rows = all
          .map((r, k) => ({ t: r.t, rate: r.rate, intervalMs: intervals[k] as number }))
          .filter((r) => r.t >= fromMs)
        return pageOf(rows, raw.length, 100, end, 1)
      }
    )
  }

  const byInstId = (rows: ReadonlyArray<unknown>, key = "instId") => {
    const out = new Map<string, Json>()
    rows.forEach((e, n) => {
      const o = obj(e, `$.data[${n}]`)
      out.set(str(o[key], `$.data[${n}].${key}`), o)
    })
    return out
  }

  const tickers = (is: ReadonlyArray<Instrument>, _nowMs: number) =>
    Effect.gen(function* () {
      const marks = yield* data("/api/v5/public/mark-price?instType=SWAP", (rows) => byInstId(rows))
      const indexes = yield* data("/api/v5/market/index-tickers?quoteCcy=USDT", (rows) => byInstId(rows))
      const ois = yield* data("/api/v5/public/open-interest?instType=SWAP", (rows) => byInstId(rows))
      const listed = is.filter((i) => marks.has(i.symbol) && ois.has(i.symbol))
      return yield* Effect.forEach(
        listed,
        (i) =>
          data(`/api/v5/public/funding-rate?instId=${i.symbol}`, (rows) => {
            const f = obj(rows[0], "$.data[0]")
            const mark = num((marks.get(i.symbol) as Json).markPx, `mark-price[${i.symbol}].markPx`)
            const indexRow = indexes.get(familyOf(i.symbol))
            const index = indexRow === undefined ? mark : num(indexRow.idxPx, `index-tickers[${i.symbol}].idxPx`)
            const contracts = num((ois.get(i.symbol) as Json).oi, `open-interest[${i.symbol}].oi`)
            const fundingTime = num(f.fundingTime, "$.data[0].fundingTime")
            const nextFundingTime = optNum(f.nextFundingTime, "$.data[0].nextFundingTime")
            const rate = num(f.fundingRate, "$.data[0].fundingRate")
            return {
              assetId: i.assetId,
              mark: mark / i.tokensPerUnit,
              index: index / i.tokensPerUnit,
              oiUsd: contracts * i.tokensPerContract * mark,
              funding: {
                intervalMs:
                  nextFundingTime !== undefined && nextFundingTime > fundingTime
                    ? nextFundingTime - fundingTime
                    : i.fundingIntervalMs,
                nextFundingMs: fundingTime,
                currentRate: rate,
                predictedRate: optNum(f.nextFundingRate, "$.data[0].nextFundingRate") ?? rate
              }
            }
          }),
        { concurrency: 1 }
      )
    })

  const levels = (value: unknown, path: string, i: Instrument): Array<BookLevel> =>
    arr(value, path).map((l, n) => {
      const row = arr(l, `${path}[${n}]`)
      return [
        num(row[0], `${path}[${n}][0]`) / i.tokensPerUnit,
        num(row[1], `${path}[${n}][1]`) * i.tokensPerContract * i.tokensPerUnit
      ] as const
    })

  const book = (i: Instrument, nowMs: number) =>
    data(`/api/v5/market/books?instId=${i.symbol}&sz=400`, (rows) => {
      const o = obj(rows[0], "$.data[0]")
      const ts = optNum(o.ts, "$.data[0].ts")
      return {
        assetId: i.assetId,
        venue: "okx",
        t: ts ?? nowMs,
        bids: levels(o.bids, "$.data[0].bids", i),
        asks: levels(o.asks, "$.data[0].asks", i)
      }
    })

  const openInterestHistory = (i: Instrument, fromMs: number, toMs: number) => {
    const end = Math.min(toMs, fromMs + 100 * BAR_MS)
    return data(
      `/api/v5/rubik/stat/contracts/open-interest-history?instId=${i.symbol}&period=15m&begin=${fromMs}&end=${end - 1}&limit=100`,
      (raw) =>
        pageOf(
          raw
            .map((e, n) => {
              const row = arr(e, `$.data[${n}]`)
              return { t: num(row[0], `$.data[${n}][0]`), oiUsd: num(row[3], `$.data[${n}][3]`) }
            })
            .filter((r) => r.t >= fromMs && r.t < end)
            .sort((a, b) => a.t - b.t),
          raw.length,
          100,
          end,
          BAR_MS
        ),
      statsLimiter
    )
  }

  const takerFlow = (i: Instrument, fromMs: number, toMs: number) => {
    const end = Math.min(toMs, fromMs + 100 * BAR_MS)
    return data(
      `/api/v5/rubik/stat/taker-volume-contract?instId=${i.symbol}&period=15m&unit=2&begin=${fromMs}&end=${end - 1}&limit=100`,
      (raw) =>
        pageOf(
          raw
            .map((e, n) => {
              const row = arr(e, `$.data[${n}]`)
              return {
                t: num(row[0], `$.data[${n}][0]`),
                sellUsd: num(row[1], `$.data[${n}][1]`),
                buyUsd: num(row[2], `$.data[${n}][2]`)
              }
            })
            // Only closed 15-minute buckets.
            .filter((r) => r.t >= fromMs && r.t + BAR_MS <= end)
            .sort((a, b) => a.t - b.t),
          raw.length,
          100,
          end,
          BAR_MS
        ),
      statsLimiter
    )
  }

  const liquidations = (i: Instrument, _nowMs: number) =>
    data(
      `/api/v5/public/liquidation-orders?instType=SWAP&instFamily=${familyOf(i.symbol)}&state=filled&limit=100`,
      (rows) => {
        const byMs = new Map<number, { longUsd: number; shortUsd: number }>()
        rows.forEach((e, n) => {
          const o = obj(e, `$.data[${n}]`)
          if (o.instId !== undefined && o.instId !== i.symbol) return
          arr(o.details, `$.data[${n}].details`).forEach((d, m) => {
            const x = obj(d, `$.data[${n}].details[${m}]`)
            const path = `$.data[${n}].details[${m}]`
            // One-minute buckets, the liquidation stream's (`Liquidations.ts`): both paths write the same rows.
            const t = Math.floor(num(x.ts, `${path}.ts`) / LIQUIDATION_BUCKET_MS) * LIQUIDATION_BUCKET_MS
            const usd = num(x.sz, `${path}.sz`) * i.tokensPerContract * num(x.bkPx, `${path}.bkPx`)
            const side = str(x.side, `${path}.side`)
            const row = byMs.get(t) ?? { longUsd: 0, shortUsd: 0 }
            if (side === "sell") row.longUsd += usd
            else if (side === "buy") row.shortUsd += usd
            byMs.set(t, row)
          })
        })
        return [...byMs.entries()]
          .sort((a, b) => a[0] - b[0])
          .map(([t, r]): LiquidationRow => ({ t, longUsd: r.longUsd, shortUsd: r.shortUsd }))
      }
    )

  return {
    venue: "okx",
    limiter,
    listings,
    instrumentList,
    spotInstrumentList,
    bars,
    fundingHistory,
    tickers,
    book,
    openInterestHistory,
    takerFlow,
    liquidations,
    klinesCarryTakerFlow: false,
    formingBar,
    formingEveryMs: 60_000
  }
}
