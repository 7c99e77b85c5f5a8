/**
 * Hyperliquid info API connector (`POST /info` with a JSON body; https://hyperliquid.gitbook.io/hyperliquid-docs/
 * for-developers/api/info-endpoint).
 *
 * - `{"type":"meta"}`: `universe[]` of perpetuals (`name`, `szDecimals`, `maxLeverage`, `isDelisted`). Names are
 *   coins (`BTC`); `kPEPE` trades 1,000 PEPE per unit, so its prices are divided and its sizes multiplied by 1,000.
 * - `{"type":"candleSnapshot","req":{"coin","interval":"15m","startTime","endTime"}}`: `[{t, T, s, i, o, c, h, l,
 *   v (coin units), n}]`, at most 5,000 candles.
 * - `{"type":"fundingHistory","coin","startTime","endTime"}`: `[{coin, fundingRate, premium, time}]`, at most 500
 *   rows. Funding settles every hour (it settled every 8 hours before mid-2023; the recorded history shows
 *   both), so each row's interval is the gap to the row before it, in whole hours (1 to 8).
 * - `{"type":"metaAndAssetCtxs"}`: `[meta, ctxs]`, the contexts index-aligned with `meta.universe`: `markPx`,
 *   `oraclePx` (the index), `openInterest` in coin units, `funding` (the hourly rate accruing now, settling on the
 *   hour). Hyperliquid's open interest counts both sides: its documentation defines open interest (for the open
 *   interest caps, "Deploying HIP-3 assets") as the sum of absolute position sizes, so each long and the short it
 *   is matched with both count. Served as USD of one side like every venue (`VenueConventions.ts` in the core):
 *   openInterest x markPx / 2.
 * - `{"type":"predictedFundings"}`: `[[coin, [[venue, {fundingRate, nextFundingTime, fundingIntervalHours}]]]]`;
 *   the `HlPerp` entry is Hyperliquid's predicted rate and next settlement (without it, the accruing rate and the
 *   next full hour stand in).
 * - `{"type":"l2Book","coin"}`: `{coin, time, levels: [bids, asks]}` with `{px, sz, n}` levels.
 * Not published by the info API: open-interest history, taker buy/sell volume, liquidations. Nor are market-wide
 * liquidations on the websocket (`wss://api.hyperliquid.xyz/ws`): its public market subscriptions (`trades`,
 * `l2Book`, `candle`, `allMids`, `bbo`, `activeAssetCtx`) carry no liquidation flag (a trade is `{coin, side, px,
 * sz, hash, time, tid, users}`), and liquidations appear only in feeds scoped to one user's address (`userEvents`,
 * `userFills` with a fill's `liquidation` field). So Hyperliquid reports no liquidations component.
 * Limit: 1,200 weight per minute per IP; `l2Book` weighs 2, other info requests 20, `candleSnapshot` 1 more per
 * 60 candles returned. The connector's bucket holds 600 and refills 600 per minute, so no minute sees more than 1,200.
 */
import { BAR_MS, type BookLevel, HOUR_MS } from "@market-data/core"
import { Effect } from "effect"
import { fetchJson } from "../../Http.ts"
import { makeLimiter } from "../../Limiter.ts"
import { arr, decode, type Json, num, obj, str } from "../../Parse.ts"
import {
  type BarRow,
  type FundingRow,
  type Instrument,
  intervalsFromGaps,
  pageOf,
  type VenueConnector,
  type VenueListing
} from "../../Venue.ts"

export const HYPERLIQUID_DEFAULT_BASE_URL = "https://api.hyperliquid.xyz"

/** Sides Hyperliquid's `openInterest` counts (longs and shorts: the sum of absolute position sizes). */
export const HYPERLIQUID_OI_SIDES = 2

/** Candles per `candleSnapshot` request (the API answers at most 5,000). */
const CANDLES_PER_REQUEST = 1000
const FUNDING_ROWS_PER_REQUEST = 500

/** Each row's settlement interval: the gap to the row before (the first: to the row after), 1 to 8 whole hours. */
export const hyperliquidFundingIntervals = intervalsFromGaps

export const makeHyperliquid = (options: { readonly baseUrl: string; readonly timeoutMs: number }): VenueConnector => {
  const limiter = makeLimiter({ capacity: 600, windowMs: 60_000 })
  const info = <A>(request: Json, weight: number, reader: (body: unknown) => A) =>
    Effect.gen(function* () {
      yield* limiter.take(weight)
      const body = yield* fetchJson({
        source: "hyperliquid",
        url: `${options.baseUrl}/info`,
        method: "POST",
        body: request,
        timeoutMs: options.timeoutMs
      })
      return yield* decode("hyperliquid", `POST /info ${String(request.type)}`, body, reader)
    })

  const universe = (meta: unknown, path: string) =>
    arr(obj(meta, path).universe, `${path}.universe`).map((u, n) => obj(u, `${path}.universe[${n}]`))

  const instrumentList = info({ type: "meta" }, 20, (body): unknown => body)
  const spotInstrumentList = info({ type: "spotMeta" }, 20, (body): unknown => body)

  const listings = info({ type: "meta" }, 20, (body) => {
    const out = new Map<string, VenueListing>()
    for (const u of universe(body, "$")) {
      if (u.isDelisted === true) continue
      const name = str(u.name, "$.universe[].name")
      out.set(name, { symbol: name, fundingIntervalMs: HOUR_MS })
    }
    return out as ReadonlyMap<string, VenueListing>
  })

  /**
   * Hyperliquid answers no candle for a 15-minute interval without trades (an illiquid coin's quiet quarter). Between
   * two candles of one answer such an interval is a bar that did not move: open, high, low and close at the previous
   * close, no volume. Without it the history would have a hole there, and every windowed figure across it would be
   * unavailable (the plane takes only gap-free runs of bars).
   */
  const withQuietBars = <R extends BarRow>(rows: ReadonlyArray<R>): ReadonlyArray<BarRow> => {
    const out: Array<BarRow> = []
    for (const r of rows) {
      const prev = out[out.length - 1]
      if (prev !== undefined) {
        for (let t = prev.t + BAR_MS; t < r.t; t += BAR_MS)
          out.push({ t, open: prev.close, high: prev.close, low: prev.close, close: prev.close, volume: 0 })
      }
      out.push(r)
    }
    return out
  }

  const bars = (i: Instrument, fromMs: number, toMs: number) => {
    const end = Math.min(toMs, fromMs + CANDLES_PER_REQUEST * BAR_MS)
    return info(
      { type: "candleSnapshot", req: { coin: i.symbol, interval: "15m", startTime: fromMs, endTime: end - 1 } },
      20 + Math.ceil(CANDLES_PER_REQUEST / 60),
      (body) => {
        const raw = arr(body, "$")
        const rows = raw
          .map((c, n) => {
            const o = obj(c, `$[${n}]`)
            const u = i.tokensPerUnit
            return {
              t: num(o.t, `$[${n}].t`),
              open: num(o.o, `$[${n}].o`) / u,
              high: num(o.h, `$[${n}].h`) / u,
              low: num(o.l, `$[${n}].l`) / u,
              close: num(o.c, `$[${n}].c`) / u,
              volume: num(o.v, `$[${n}].v`) * u
            }
          })
          .filter((r) => r.t >= fromMs && r.t + BAR_MS <= end)
          .sort((a, b) => a.t - b.t)
        return pageOf(withQuietBars(rows), raw.length, CANDLES_PER_REQUEST, end, BAR_MS)
      }
    )
  }

  const formingBar = (i: Instrument, slotMs: number) =>
    info(
      {
        type: "candleSnapshot",
        req: { coin: i.symbol, interval: "15m", startTime: slotMs, endTime: slotMs + BAR_MS - 1 }
      },
      21,
      (body) =>
        arr(body, "$")
          .map((c, n) => {
            const o = obj(c, `$[${n}]`)
            const u = i.tokensPerUnit
            return {
              t: num(o.t, `$[${n}].t`),
              open: num(o.o, `$[${n}].o`) / u,
              high: num(o.h, `$[${n}].h`) / u,
              low: num(o.l, `$[${n}].l`) / u,
              close: num(o.c, `$[${n}].c`) / u,
              volume: num(o.v, `$[${n}].v`) * u
            }
          })
          .find((r) => r.t === slotMs)
    )

  const fundingHistory = (i: Instrument, fromMs: number, toMs: number) => {
    const end = Math.min(toMs, fromMs + FUNDING_ROWS_PER_REQUEST * HOUR_MS)
    // Reach back one 8-hour interval so the first row of the page has a row before it to measure its gap from.
    const lookBack = 8 * HOUR_MS
    return info(
      { type: "fundingHistory", coin: i.symbol, startTime: fromMs - lookBack, endTime: end - 1 },
      20,
      (body) => {
        const raw = arr(body, "$")
        const all = raw
          .map((e, n) => {
            const o = obj(e, `$[${n}]`)
            return { t: num(o.time, `$[${n}].time`), rate: num(o.fundingRate, `$[${n}].fundingRate`) }
          })
          .filter((r) => r.t < end)
          .sort((a, b) => a.t - b.t)
        const intervals = hyperliquidFundingIntervals(
          all.map((r) => r.t),
          i.fundingIntervalMs
        )
        const rows = all
          .map((r, k): FundingRow => ({ t: r.t, rate: r.rate, intervalMs: intervals[k] as number }))
          .filter((r) => r.t >= fromMs)
        return pageOf(rows, raw.length, FUNDING_ROWS_PER_REQUEST, end, 1)
      }
    )
  }

  /** Hyperliquid's own prediction per coin (`HlPerp` in `predictedFundings`); empty when unavailable. */
  const predicted = Effect.map(
    Effect.result(
      info({ type: "predictedFundings" }, 20, (body) => {
        const out = new Map<string, { rate: number; nextMs: number; intervalMs: number }>()
        arr(body, "$").forEach((entry, n) => {
          const pair = arr(entry, `$[${n}]`)
          const coin = str(pair[0], `$[${n}][0]`)
          for (const [m, v] of arr(pair[1], `$[${n}][1]`).entries()) {
            const venueEntry = arr(v, `$[${n}][1][${m}]`)
            if (venueEntry[0] !== "HlPerp" || venueEntry[1] === null || venueEntry[1] === undefined) continue
            const o = obj(venueEntry[1], `$[${n}][1][${m}][1]`)
            const hours = o.fundingIntervalHours === undefined ? 1 : num(o.fundingIntervalHours, "fundingIntervalHours")
            out.set(coin, {
              rate: num(o.fundingRate, `$[${n}][1][${m}][1].fundingRate`),
              nextMs: num(o.nextFundingTime, `$[${n}][1][${m}][1].nextFundingTime`),
              intervalMs: hours * HOUR_MS
            })
          }
        })
        return out
      })
    ),
    // The prediction is a refinement: without it the accruing rate stands in (it is what would settle now).
    (r) => (r._tag === "Success" ? r.success : new Map<string, { rate: number; nextMs: number; intervalMs: number }>())
  )

  const tickers = (is: ReadonlyArray<Instrument>, nowMs: number) =>
    Effect.gen(function* () {
      const contexts = yield* info({ type: "metaAndAssetCtxs" }, 20, (body) => {
        const pair = arr(body, "$")
        const names = universe(pair[0], "$[0]").map((u, n) => str(u.name, `$[0].universe[${n}].name`))
        const ctxs = arr(pair[1], "$[1]")
        const bySymbol = new Map<string, Json>()
        names.forEach((name, n) => {
          if (ctxs[n] !== undefined) bySymbol.set(name, obj(ctxs[n], `$[1][${n}]`))
        })
        return bySymbol
      })
      const predictions = yield* predicted
      const nextHourMs = Math.floor(nowMs / HOUR_MS) * HOUR_MS + HOUR_MS
      return yield* decode("hyperliquid", "POST /info metaAndAssetCtxs", contexts, () =>
        is.flatMap((i) => {
          const c = contexts.get(i.symbol)
          if (c === undefined) return []
          const path = `$[1][${i.symbol}]`
          const markPx = num(c.markPx, `${path}.markPx`)
          const rate = num(c.funding, `${path}.funding`)
          const p = predictions.get(i.symbol)
          return [
            {
              assetId: i.assetId,
              mark: markPx / i.tokensPerUnit,
              index: num(c.oraclePx, `${path}.oraclePx`) / i.tokensPerUnit,
              // Coin units (kPEPE units for kPEPE) x price per unit: USD of both sides, halved to one side.
              oiUsd: (num(c.openInterest, `${path}.openInterest`) * markPx) / HYPERLIQUID_OI_SIDES,
              funding: {
                intervalMs: p?.intervalMs ?? HOUR_MS,
                nextFundingMs: p?.nextMs ?? nextHourMs,
                currentRate: rate,
                predictedRate: p?.rate ?? rate
              }
            }
          ]
        })
      )
    })

  const levels = (value: unknown, path: string, u: number): Array<BookLevel> =>
    arr(value, path).map((l, n) => {
      const o = obj(l, `${path}[${n}]`)
      return [num(o.px, `${path}[${n}].px`) / u, num(o.sz, `${path}[${n}].sz`) * u] as const
    })

  const book = (i: Instrument, nowMs: number) =>
    info({ type: "l2Book", coin: i.symbol }, 2, (body) => {
      const o = obj(body, "$")
      const sides = arr(o.levels, "$.levels")
      return {
        assetId: i.assetId,
        venue: "hyperliquid",
        t: typeof o.time === "number" ? o.time : nowMs,
        bids: levels(sides[0], "$.levels[0]", i.tokensPerUnit),
        asks: levels(sides[1], "$.levels[1]", i.tokensPerUnit)
      }
    })

  return {
    venue: "hyperliquid",
    limiter,
    listings,
    instrumentList,
    spotInstrumentList,
    bars,
    fundingHistory,
    tickers,
    book,
    klinesCarryTakerFlow: false,
    formingBar,
    // A candle request weighs 21: every 3 minutes keeps ~24 coins at ~170 weight per minute.
    formingEveryMs: 3 * 60_000,
    // l2Book.
    bookWeight: 2
  }
}
