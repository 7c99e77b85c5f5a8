/**
 * The crypto plane end to end over the in-memory market store filled with a deterministic fixture: every
 * operation through `planeHandlers` (so refusals and batches are production code), numbers recomputed
 * independently from the fixture's raw columns, percentiles by brute force, results decoded against their
 * schemas in `Results.ts`.
 */
import { assert, describe, it } from "@effect/vitest"
import { makeMemoryMarketStore } from "@market-data/memory"
import { Effect, Exit, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as TI from "technicalindicators"
import { cryptoAsset } from "../../src/crypto/Assets.ts"
import { makeCryptoPlane } from "../../src/crypto/CryptoPlane.ts"
import { fundingBand } from "../../src/crypto/Funding.ts"
import { MarketStore } from "../../src/crypto/Market.ts"
import type { ApiError } from "../../src/Errors.ts"
import { decodeParams, isApiError } from "../../src/Params.ts"
import type { Handler, HandlerInput } from "../../src/Pipeline.ts"
import { planeHandlers } from "../../src/Planes.ts"
import { operation } from "../../src/Registry.ts"
import * as R from "../../src/Results.ts"
import { buildFixture, type VenueColumns, writeFixture } from "./support/MarketFixture.ts"

const H = 3_600_000
const DAY = 24 * H
const END = Date.UTC(2026, 10, 20, 12, 0) // data up to (not including) this instant
const NOW = END + 60_000
/** Measures are taken as of the end of the newest bar. */
const AT = END
const IDS = ["crypto:bitcoin", "crypto:sui", "crypto:tron", "crypto:compound", "crypto:mog-coin"]
const fixture = buildFixture(
  IDS.map((id) => cryptoAsset(id) as NonNullable<ReturnType<typeof cryptoAsset>>),
  END,
  100,
  42
)
const fx = (id: string) => fixture.find((f) => f.asset.id === id) as (typeof fixture)[number]

const setup = Effect.gen(function* () {
  const store = makeMemoryMarketStore()
  yield* writeFixture(store, fixture, END)
  yield* TestClock.setTime(NOW)
  const plane = yield* makeCryptoPlane.pipe(Effect.provideService(MarketStore, store))
  const handlers = planeHandlers([plane])
  const call = (name: string, params: ReadonlyArray<readonly [string, unknown]>, nowMs = NOW) =>
    Effect.gen(function* () {
      const op = operation(name)
      assert.isDefined(op)
      const decoded = decodeParams(op as NonNullable<typeof op>, params)
      if (isApiError(decoded)) return yield* Effect.fail(decoded)
      const input: HandlerInput = {
        op: op as NonNullable<typeof op>,
        params: decoded,
        principal: { _tag: "Anonymous", client: "test", rateLimitPerMinute: 60 },
        rate: { limit: 60, remaining: 59, resetAtMs: nowMs, allowed: true },
        nowMs
      }
      const out = yield* (handlers.get(name) as Handler)(input)
      assert.strictEqual(out._tag, "Json")
      return out as Extract<typeof out, { _tag: "Json" }>
    })
  return { store, plane, call }
})

/** Decodes a body against the operation's result schema, single or batch. */
const decodes = (name: string, body: unknown, batch = false) => {
  const op = operation(name) as NonNullable<ReturnType<typeof operation>>
  const schema = batch ? R.batch(op.result) : R.single(op.result)
  const exit = Schema.decodeUnknownExit(schema as unknown as Schema.Codec<unknown, unknown>, {
    onExcessProperty: "error"
  })(body)
  if (Exit.isFailure(exit)) assert.fail(`${name} does not decode: ${String(exit.cause)}`)
}

const data = (out: { body: unknown }): any => (out.body as { data: unknown }).data

/** Index of the newest row with t < T. */
const before = (t: ReadonlyArray<number>, T: number) => {
  let i = t.length - 1
  while (i >= 0 && (t[i] as number) >= T) i--
  return i
}
const priceAt = (v: VenueColumns, T: number) => v.close[before(v.t, T)] as number
const oiAt = (vs: ReadonlyArray<VenueColumns>, T: number) =>
  vs.reduce((s, v) => s + (v.oiUsd[before(v.t, T)] as number), 0)

/** Brute-force mid-rank percentile with one decimal. */
const pctl = (value: number, samples: ReadonlyArray<number>) => {
  const below = samples.filter((s) => s < value).length
  const equal = samples.filter((s) => s === value).length
  return Math.round(((100 * (below + equal / 2)) / samples.length) * 10) / 10
}
/** Hourly samples of `f` over the 90 days ending at the last whole hour of the data. */
const hourly = (f: (T: number) => number, windowMs = 90 * DAY) => {
  const last = Math.floor(AT / H) * H
  const out: Array<number> = []
  for (let h = last - windowMs + H; h <= last; h += H) {
    const v = f(h)
    if (Number.isFinite(v)) out.push(v)
  }
  return out
}
const close = (a: number, b: number, rel = 1e-8) => assert.isAtMost(Math.abs(a - b), rel * Math.max(1, Math.abs(b)))

describe("crypto plane over a fixture market", () => {
  it.effect("price: last close, 24 h return and its percentile equal a recomputation from the raw bars", () =>
    Effect.gen(function* () {
      const { call } = yield* setup
      const out = yield* call("price", [["id", "crypto:bitcoin"]])
      decodes("price", out.body)
      const d = data(out)
      const btc = fx("crypto:bitcoin").venues[0] as VenueColumns
      assert.strictEqual(btc.venue, "binance")
      close(d.usd, priceAt(btc, AT))
      const ret = (T: number) => (priceAt(btc, T) / priceAt(btc, T - DAY) - 1) * 100
      close(d.return_24h_pct.value, ret(AT))
      assert.strictEqual(d.return_24h_pct.pctl, pctl(ret(AT), hourly(ret)))
      assert.strictEqual(d.status, "live")
      assert.strictEqual(d.as_of, new Date(END - 1).toISOString())
      assert.isAbove(d.ask_usd, d.bid_usd)
      close(d.market.market_cap_usd, priceAt(btc, AT) * 19_950_000)
      assert.isAtLeast(d.range_pos_7d_pct.value, 0)
      assert.isAtMost(d.range_pos_7d_pct.value, 100)
      assert.isUndefined(d.unavailable)
      // The decode is strict: an undeclared field would fail it.
      const op = operation("price") as NonNullable<ReturnType<typeof operation>>
      const strict = Schema.decodeUnknownExit(R.single(op.result) as unknown as Schema.Codec<unknown, unknown>, {
        onExcessProperty: "error"
      })
      assert.isTrue(Exit.isFailure(strict({ data: { ...d, surprise: 1 } })))
    })
  )

  it.effect("a request repeated while nothing changed gets the same output; a write in between is reflected", () =>
    Effect.gen(function* () {
      const { store, call } = yield* setup
      // Parameters decoded anew each time (no decode memo here): the answer memo still serves the same result.
      const first = yield* call("price", [["id", "crypto:bitcoin"]])
      const again = yield* call("price", [["id", "crypto:bitcoin"]])
      assert.strictEqual(again, first)
      assert.strictEqual(first.text, JSON.stringify(first.body))
      const close_ = priceAt(fx("crypto:bitcoin").venues[0] as VenueColumns, AT)
      yield* store.putBooks([
        {
          assetId: "crypto:bitcoin",
          venue: "binance",
          t: END + 20_000,
          bids: [[close_ * 1.01, 3]],
          asks: [[close_ * 1.0102, 2]]
        }
      ])
      const after = yield* call("price", [["id", "crypto:bitcoin"]])
      assert.notStrictEqual(after, first)
      close(data(after).usd, close_ * 1.0101)
      assert.strictEqual(after.text, JSON.stringify(after.body))
      // A batch answers the same result for the asset as the single ID.
      const batch = yield* call("price", [["ids", "crypto:bitcoin,crypto:sui"]])
      assert.deepStrictEqual(data(batch)[0], data(after))
    })
  )

  it.effect("price: usd, bid_usd and ask_usd come from one book, so usd lies inside the spread", () =>
    Effect.gen(function* () {
      const { store, call } = yield* setup
      const close_ = priceAt(fx("crypto:bitcoin").venues[0] as VenueColumns, AT)
      // A book 20 s after the bar close, quoted 1 % above it: the price moved since the close.
      yield* store.putBooks([
        {
          assetId: "crypto:bitcoin",
          venue: "binance",
          t: END + 20_000,
          bids: [[close_ * 1.01, 3]],
          asks: [[close_ * 1.0102, 2]]
        }
      ])
      const out = yield* call("price", [["id", "crypto:bitcoin"]])
      decodes("price", out.body)
      const d = data(out)
      assert.isAtLeast(d.usd, d.bid_usd)
      assert.isAtMost(d.usd, d.ask_usd)
      close(d.usd, close_ * 1.0101)
      close(d.market.market_cap_usd, d.usd * 19_950_000)
      // A book that lags the newest bar by more than a bar is not quoted: usd falls back to the close.
      const other = yield* setup
      yield* other.store.putBooks([
        { assetId: "crypto:bitcoin", venue: "binance", t: END + 30 * 60_000, bids: [[1, 1]], asks: [[2, 1]] }
      ])
      yield* other.store.write([
        {
          kind: "bars",
          assetId: "crypto:bitcoin",
          venue: "binance",
          t: [END, END + 15 * 60_000, END + 30 * 60_000, END + 45 * 60_000],
          open: [close_, close_, close_, close_],
          high: [close_, close_, close_, close_],
          low: [close_, close_, close_, close_],
          close: [close_, close_, close_, close_],
          volume: [1, 1, 1, 1]
        }
      ])
      const lagging = data(yield* other.call("price", [["id", "crypto:bitcoin"]], END + 60 * 60_000 + 1))
      close(lagging.usd, close_)
      assert.isNull(lagging.bid_usd)
      assert.strictEqual(lagging.unavailable.bid_usd.reason, "source_stale")
      assert.strictEqual(lagging.unavailable.ask_usd.reason, "source_stale")
    })
  )

  it.effect("funding: venues normalized to 8 h, OI-weighted aggregate, APR, next funding, band", () =>
    Effect.gen(function* () {
      const { call } = yield* setup
      const out = yield* call("funding", [["id", "crypto:bitcoin"]])
      decodes("funding", out.body)
      const f = data(out).funding
      const vs = fx("crypto:bitcoin").venues
      assert.strictEqual(f.venues, 4)
      const rate8h = (v: VenueColumns) =>
        ((v.fundingRate[before(v.fundingT, NOW)] as number) * 100 * (8 * H)) / (v.fundingIntervalMs as number)
      const hl = vs.find((v) => v.venue === "hyperliquid") as VenueColumns
      assert.strictEqual(hl.fundingIntervalMs, H)
      close(f.by_venue.find((r: any) => r.venue === "hyperliquid").rate_8h_pct, rate8h(hl))
      const weights = vs.map((v) => v.oiUsd[before(v.t, NOW)] as number)
      const agg = vs.reduce((s, v, i) => s + rate8h(v) * (weights[i] as number), 0) / weights.reduce((a, b) => a + b, 0)
      close(f.rate_8h_pct.value, agg)
      close(f.apr_pct, agg * 3 * 365)
      assert.strictEqual(f.funding_band, fundingBand(f.rate_8h_pct.value))
      // The hourly venue settles next, one hour after the last settlement at END.
      assert.strictEqual(f.next_funding_at, new Date(END + H).toISOString())
      const spread = Math.max(...vs.map(rate8h)) - Math.min(...vs.map(rate8h))
      close(f.venue_spread_8h_pct, spread)
      assert.isAtLeast(f.rate_8h_pct.pctl, 0)
      assert.isNumber(f.rate_8h_pct.pctl_1y)
      assert.isAtLeast(f.bars_since_sign_flip, 0)
      assert.strictEqual(
        Math.abs(f.venue_hot.rate_8h_pct),
        Math.max(...f.by_venue.map((r: any) => Math.abs(r.rate_8h_pct)))
      )
      // Funding is priced 3 credits per asset.
      assert.strictEqual(out.creditsCharged, 3)
    })
  )

  it.effect("a 4 h venue (Binance SUI) is scaled by 8 / 4", () =>
    Effect.gen(function* () {
      const { call } = yield* setup
      const f = data(yield* call("funding", [["id", "crypto:sui"]])).funding
      const bn = fx("crypto:sui").venues.find((v) => v.venue === "binance") as VenueColumns
      assert.strictEqual(bn.fundingIntervalMs, 4 * H)
      close(f.by_venue.find((r: any) => r.venue === "binance").rate_8h_pct, (bn.fundingRate.at(-1) as number) * 100 * 2)
      assert.strictEqual(f.by_venue.find((r: any) => r.venue === "binance").interval_hours, 4)
    })
  )

  it.effect("open interest, order flow and liquidations equal sums over the raw venue rows", () =>
    Effect.gen(function* () {
      const { call } = yield* setup
      const vs = fx("crypto:bitcoin").venues
      const oi = yield* call("open_interest", [["id", "crypto:bitcoin"]])
      decodes("open_interest", oi.body)
      const o = data(oi)
      close(o.usd, oiAt(vs, AT))
      const change = (T: number) => (oiAt(vs, T) / oiAt(vs, T - DAY) - 1) * 100
      close(o.change_24h_pct.value, change(AT))
      assert.strictEqual(o.change_24h_pct.pctl, pctl(change(AT), hourly(change)))
      assert.strictEqual(o.by_venue.length, 4)

      const flow = data(yield* call("orderflow", [["id", "crypto:bitcoin"]]))
      const delta = (T: number) =>
        vs.reduce(
          (s, v) =>
            s +
            v.t.reduce(
              (a, t, i) => (t >= T - DAY && t < T ? a + (v.buyUsd[i] as number) - (v.sellUsd[i] as number) : a),
              0
            ),
          0
        )
      close(flow.net_taker_delta_24h_usd.value, delta(AT))
      close(flow.net_delta_pct_of_oi_24h.value, (delta(AT) / oiAt(vs, AT)) * 100)

      const liq = yield* call("liquidations", [["id", "crypto:bitcoin"]])
      decodes("liquidations", liq.body)
      const l = data(liq)
      const sum = (col: "liqLong" | "liqShort") =>
        vs.reduce(
          (s, v) => s + v.liqT.reduce((a, t, i) => (t >= AT - DAY && t < AT ? a + (v[col][i] as number) : a), 0),
          0
        )
      const total = sum("liqLong") + sum("liqShort")
      close(l.total_24h_usd.value, total)
      close(l.liq_imbalance_24h.value, (sum("liqLong") - sum("liqShort")) / total)
      close(l.intensity_pct_of_oi_24h.value, (total / oiAt(vs, AT)) * 100)
    })
  )

  it.effect("technicals on closed 4 h bars equal technicalindicators on the same bars", () =>
    Effect.gen(function* () {
      const { call } = yield* setup
      const out = yield* call("technicals", [["id", "crypto:bitcoin"]])
      decodes("technicals", out.body)
      const d = data(out)
      assert.strictEqual(d.timeframe, "4h")
      const v = fx("crypto:bitcoin").venues[0] as VenueColumns
      // 4 h bars by hand: groups of sixteen 15 m bars on 4 h UTC boundaries (the fixture starts on one).
      const bars = { high: [] as Array<number>, low: [] as Array<number>, close: [] as Array<number> }
      for (let i = 0; i + 16 <= v.t.length; i += 16) {
        assert.strictEqual((v.t[i] as number) % (4 * H), 0)
        bars.high.push(Math.max(...v.high.slice(i, i + 16)))
        bars.low.push(Math.min(...v.low.slice(i, i + 16)))
        bars.close.push(v.close[i + 15] as number)
      }
      assert.strictEqual(d.bar_at, new Date(END - 4 * H).toISOString())
      // Nothing in it can change before the forming 4 h bar closes.
      assert.strictEqual(d.next_update_at, new Date(END + 4 * H).toISOString())
      const raw = (x: number) => x
      const atr = TI.ATR.calculate({ ...bars, period: 14, format: raw }).at(-1) as number
      close(d.atr_14_pct.value, (atr / (bars.close.at(-1) as number)) * 100, 1e-8)
      const adx = TI.ADX.calculate({ ...bars, period: 14, format: raw }).at(-1)?.adx as number
      close(d.adx_14.value, adx, 1e-8)
      const g = TI.AverageGain.calculate({ values: bars.close, period: 14, format: raw }).at(-1) as number
      const l = TI.AverageLoss.calculate({ values: bars.close, period: 14, format: raw }).at(-1) as number
      close(d.rsi_14.value, 100 - 100 / (1 + g / l), 1e-8)
      close(
        d.moving_averages.sma_20,
        TI.SMA.calculate({ values: bars.close, period: 20, format: raw }).at(-1) as number
      )
      close(
        d.moving_averages.ema_200,
        TI.EMA.calculate({ values: bars.close, period: 200, format: raw }).at(-1) as number
      )
      assert.strictEqual(d.baseline.n, 90 * 6)

      const daily = data(
        yield* call("technicals", [
          ["id", "crypto:bitcoin"],
          ["timeframe", "1d"]
        ])
      )
      assert.strictEqual(daily.timeframe, "1d")
      // 100 days of data: no 200-day average, said so.
      assert.isNull(daily.moving_averages.sma_200)
      assert.strictEqual(daily.unavailable["moving_averages.sma_200"].reason, "insufficient_history")
      decodes("technicals", { data: daily })
    })
  )

  it.effect("structure and read answer every field with the documented enums and rules", () =>
    Effect.gen(function* () {
      const { call } = yield* setup
      const s = yield* call("structure", [["id", "crypto:bitcoin"]])
      decodes("structure", s.body)
      const st = data(s)
      assert.include(["uptrend", "downtrend", "range"], st.trend_state)
      assert.include(["bullish", "bearish"], st.last_bos.direction)
      assert.hasAllKeys(st.session_levels, ["asia", "europe", "us", "prior_day"])

      const r = yield* call("read", [["id", "crypto:bitcoin"]])
      decodes("read", r.body)
      const d = data(r)
      assert.strictEqual(d.symbol, "BTC")
      assert.strictEqual(d.class, "core")
      assert.deepStrictEqual(d.baseline, { window: "90d", cadence: "1h", n: 2160, source: "simulated" })
      assert.strictEqual(d.headline.trend_state, st.trend_state)
      assert.strictEqual(d.assessment.structure.trend_state, st.trend_state)
      assert.strictEqual(d.assessment.positioning.rule, "positioning@1")
      assert.include(
        ["crowded_long", "leaning_long", "balanced", "leaning_short", "crowded_short"],
        d.assessment.positioning.state
      )
      assert.include(["strong_buying", "buying", "balanced", "selling", "strong_selling"], d.assessment.flow.state)
      assert.include(["low", "moderate", "elevated", "high"], d.assessment.cascade_risk.level)
      const price = data(yield* call("price", [["id", "crypto:bitcoin"]]))
      assert.deepStrictEqual(d.headline.return_24h_pct, price.return_24h_pct)
      assert.isUndefined(d.unavailable)
    })
  )

  it.effect("liquidity: spread and imbalance against their baselines, depth in bands around mid", () =>
    Effect.gen(function* () {
      const { call } = yield* setup
      const out = yield* call("liquidity", [["id", "crypto:bitcoin"]])
      decodes("liquidity", out.body)
      const d = data(out)
      const vs = fx("crypto:bitcoin").venues
      close(d.spread_pct.value, vs.reduce((s, v) => s + (v.spreadPct.at(-1) as number), 0) / vs.length)
      assert.deepStrictEqual(
        d.depth.bands.map((b: any) => b.within_pct),
        [0.1, 0.5, 1, 2]
      )
      // The fixture book: bids at 0.9999 and 0.999 of the last close are within 0.1 %... of the mid.
      assert.isAbove(d.depth.bands[3].bid_usd, d.depth.bands[0].bid_usd)
    })
  )

  it.effect("listed and contract tokens get their tier's operations and refusals for the rest", () =>
    Effect.gen(function* () {
      const { call } = yield* setup
      const p = yield* call("price", [["id", "crypto:mog-coin"]])
      decodes("price", p.body)
      assert.isNumber(data(p).usd)
      const t = yield* call("technicals", [
        ["id", "crypto:compound"],
        ["timeframe", "1h"]
      ])
      decodes("technicals", t.body)
      const refused = yield* Effect.flip(call("funding", [["id", "crypto:compound"]]))
      assert.strictEqual((refused as ApiError).code, "not_covered")
      const unknown = yield* Effect.flip(call("read", [["id", "crypto:no-such-coin"]]))
      assert.strictEqual((unknown as ApiError).code, "unknown_asset")
      const batch = yield* call("read", [["ids", "crypto:bitcoin,crypto:compound,crypto:sui,crypto:no-such-coin"]])
      decodes("read", batch.body, true)
      const body = batch.body as any
      assert.deepStrictEqual(
        body.data.map((r: any) => r.asset_id),
        ["crypto:bitcoin", "crypto:compound", "crypto:sui"]
      )
      assert.deepStrictEqual(body.refused, [{ id: "crypto:no-such-coin", reason: "unknown_asset" }])
      assert.strictEqual(batch.creditsCharged, 3)
    })
  )

  it.effect("read of a listed or on-chain token is a partial read: what its tier lacks is not_covered", () =>
    Effect.gen(function* () {
      const { call } = yield* setup
      const listed = yield* call("read", [["id", "crypto:compound"]])
      decodes("read", listed.body)
      assert.strictEqual(listed.creditsCharged, 1)
      const l = data(listed)
      assert.strictEqual(l.class, "listed_token")
      close(l.headline.price_usd, priceAt(fx("crypto:compound").venues[0] as VenueColumns, AT))
      assert.isNumber(l.headline.return_24h_pct.value)
      // Structure is served on the listed tier: its trend state is there.
      assert.include(["uptrend", "downtrend", "range"], l.headline.trend_state)
      assert.isNull(l.headline.funding_rate_8h_pct)
      assert.isNull(l.headline.oi_change_24h_pct)
      assert.isNull(l.assessment.positioning.state)
      const reasons = (u: Record<string, { reason: string }>) =>
        Object.fromEntries(Object.entries(u).map(([k, v]) => [k, v.reason]))
      assert.deepStrictEqual(reasons(l.unavailable), {
        "headline.funding_rate_8h_pct": "not_covered",
        "headline.oi_change_24h_pct": "not_covered",
        "assessment.positioning": "not_covered",
        "assessment.flow": "not_covered",
        "assessment.cascade_risk": "not_covered"
      })
      const onChain = yield* call("read", [["id", "crypto:mog-coin"]])
      decodes("read", onChain.body)
      const m = data(onChain)
      assert.isNumber(m.headline.price_usd)
      assert.isNull(m.headline.trend_state)
      assert.strictEqual(m.unavailable["headline.trend_state"].reason, "not_covered")
      assert.strictEqual(m.unavailable["assessment.structure"].reason, "not_covered")
      assert.match(m.unavailable["assessment.structure"].detail, /contract_token/)
    })
  )

  it.effect("an asset the store has no data for answers nulls with reasons, never placeholders", () =>
    Effect.gen(function* () {
      const { call } = yield* setup
      const out = yield* call("price", [["id", "crypto:ethereum"]])
      decodes("price", out.body)
      const d = data(out)
      assert.isNull(d.usd)
      assert.strictEqual(d.unavailable.usd.reason, "no_data")
      assert.strictEqual(d.status, "stale")
    })
  )

  it.effect("a feed that writes the bar still forming: its price counts, values move by whole minutes", () =>
    Effect.gen(function* () {
      const { store, call } = yield* setup
      yield* store.write([
        {
          kind: "bars",
          assetId: "crypto:bitcoin",
          venue: "binance",
          t: [END],
          open: [100],
          high: [123],
          low: [99],
          close: [123.25],
          volume: [1]
        }
      ])
      // Its book, written with it: `usd` is the book's mid, here the forming bar's price.
      yield* store.putBooks([
        { assetId: "crypto:bitcoin", venue: "binance", t: END + 5 * 60_000, bids: [[123.2, 1]], asks: [[123.3, 1]] }
      ])
      const at = (ms: number) => Effect.map(call("price", [["id", "crypto:bitcoin"]], ms), data)
      const a = yield* at(END + 5 * 60_000 + 10_000)
      assert.strictEqual(a.usd, 123.25)
      assert.strictEqual(a.status, "live")
      const b = yield* at(END + 5 * 60_000 + 50_000)
      assert.deepStrictEqual(b.return_24h_pct, a.return_24h_pct)
    })
  )

  it.effect("freshness: live now, delayed after two cadences, stale beyond three; next_update_at never past", () =>
    Effect.gen(function* () {
      const { call } = yield* setup
      const at = (nowMs: number) => Effect.map(call("price", [["id", "crypto:bitcoin"]], nowMs), data)
      const live = yield* at(NOW)
      assert.strictEqual(live.status, "live")
      assert.strictEqual(live.next_update_at, new Date(END - 1 + 15 * 60_000).toISOString())
      const delayed = yield* at(END + 30 * 60_000)
      assert.strictEqual(delayed.status, "delayed")
      // Late: the next slot on the source's cadence grid (not "now", which would change every call).
      assert.strictEqual(delayed.next_update_at, new Date(END - 1 + 45 * 60_000).toISOString())
      assert.deepStrictEqual(yield* at(END + 30 * 60_000 + 1_234), delayed)
      const stale = yield* at(END + 46 * 60_000)
      assert.strictEqual(stale.status, "stale")
      // Values stay those of the newest data (as of its end), not windows sliding over missing data.
      assert.deepStrictEqual(stale.return_24h_pct, live.return_24h_pct)
      assert.strictEqual(stale.as_of, live.as_of)
    })
  )
})

describe("series", () => {
  it.effect("pages backwards without gaps or duplicates to the start of the range", () =>
    Effect.gen(function* () {
      const { call } = yield* setup
      const base: Array<readonly [string, unknown]> = [
        ["id", "crypto:bitcoin"],
        ["range", "1mo"],
        ["interval", "1h"],
        ["limit", "100"]
      ]
      const pages: Array<any> = []
      let cursor: string | null = null
      do {
        const out = yield* call("series", cursor === null ? base : [...base, ["cursor", cursor]])
        decodes("series", out.body)
        assert.strictEqual(out.creditsCharged, 1)
        const d = data(out)
        pages.push(d)
        cursor = d.next_cursor
      } while (cursor !== null && pages.length < 20)
      assert.strictEqual(pages[0].bars.at(-1).t, new Date(END - H).toISOString())
      assert.strictEqual(pages[0].next_update_at, new Date(END + H).toISOString())
      const all = pages.reverse().flatMap((p) => p.bars)
      for (let i = 1; i < all.length; i++) assert.strictEqual(Date.parse(all[i].t) - Date.parse(all[i - 1].t), H)
      // October 20 12:01 back to the start of the range: whole hours from 13:00 on.
      assert.strictEqual(all[0].t, new Date(Date.UTC(2026, 9, 20, 13)).toISOString())
      const v = fx("crypto:bitcoin").venues[0] as VenueColumns
      const i = v.t.indexOf(Date.parse(all[0].t))
      assert.strictEqual(all[0].o, Number((v.open[i] as number).toPrecision(10)))
      assert.strictEqual(all[0].c, Number((v.close[i + 3] as number).toPrecision(10)))
    })
  )

  it.effect("refuses a cursor reused with other parameters, or forged", () =>
    Effect.gen(function* () {
      const { call } = yield* setup
      const first = data(
        yield* call("series", [
          ["id", "crypto:bitcoin"],
          ["limit", "10"]
        ])
      )
      assert.isString(first.next_cursor)
      const other = yield* Effect.flip(
        call("series", [
          ["id", "crypto:bitcoin"],
          ["limit", "20"],
          ["cursor", first.next_cursor]
        ])
      )
      assert.strictEqual((other as ApiError).code, "invalid_cursor")
      const forged = yield* Effect.flip(
        call("series", [
          ["id", "crypto:bitcoin"],
          ["limit", "10"],
          ["cursor", "abc"]
        ])
      )
      assert.strictEqual((forged as ApiError).code, "invalid_cursor")
    })
  )

  it.effect("summary: first/last close, return, high, low, drawdown, volatility, bar count", () =>
    Effect.gen(function* () {
      const { call } = yield* setup
      const out = yield* call("series", [
        ["id", "crypto:bitcoin"],
        ["view", "summary"],
        ["range", "1w"],
        ["interval", "1d"]
      ])
      decodes("series", out.body)
      const s = data(out).summary
      const v = fx("crypto:bitcoin").venues[0] as VenueColumns
      // Whole days inside the last 7 days: Nov 14 00:00 to Nov 19 24:00 (Nov 20 is still forming).
      const days: Array<{ h: number; l: number; c: number }> = []
      for (let d = Date.UTC(2026, 10, 14); d < Date.UTC(2026, 10, 20); d += DAY) {
        const idx = v.t.map((t, i) => (t >= d && t < d + DAY ? i : -1)).filter((i) => i >= 0)
        days.push({
          h: Math.max(...idx.map((i) => v.high[i] as number)),
          l: Math.min(...idx.map((i) => v.low[i] as number)),
          c: v.close[idx.at(-1) as number] as number
        })
      }
      assert.strictEqual(s.bar_count, 6)
      close(s.first_close, days[0]?.c as number)
      close(s.last_close, days[5]?.c as number)
      close(s.return_pct, ((days[5]?.c as number) / (days[0]?.c as number) - 1) * 100)
      close(s.high, Math.max(...days.map((d) => d.h)))
      close(s.low, Math.min(...days.map((d) => d.l)))
      const r = days.slice(1).map((d, i) => Math.log(d.c / (days[i]?.c as number)))
      const mean = r.reduce((a, b) => a + b, 0) / r.length
      const sd = Math.sqrt(r.reduce((a, b) => a + (b - mean) ** 2, 0) / (r.length - 1))
      close(s.realized_volatility_pct, sd * Math.sqrt(365) * 100, 1e-7)
      let peak = 0
      let dd = 0
      for (const d of days) {
        peak = Math.max(peak, d.c)
        dd = Math.min(dd, (d.c / peak - 1) * 100)
      }
      close(s.max_drawdown_pct, dd)
    })
  )
})

describe("rank", () => {
  it.effect("orders by the metric, both directions, pages without duplicates, reports coverage", () =>
    Effect.gen(function* () {
      const { call } = yield* setup
      const top = yield* call("rank", [
        ["metric", "return_24h_pct"],
        ["limit", "2"]
      ])
      decodes("rank", top.body)
      const t = data(top)
      assert.strictEqual(top.creditsCharged, 2)
      assert.strictEqual(t.coverage.scanned, 24)
      assert.strictEqual(t.coverage.ranked, 3)
      assert.strictEqual(t.coverage.excluded, 21)
      assert.deepStrictEqual(t.coverage.excluded_by_reason, { no_data: 21 })
      const rest = data(
        yield* call("rank", [
          ["metric", "return_24h_pct"],
          ["limit", "2"],
          ["cursor", t.next_cursor]
        ])
      )
      assert.isNull(rest.next_cursor)
      const rows = [...t.rows, ...rest.rows]
      assert.strictEqual(new Set(rows.map((r: any) => r.asset_id)).size, 3)
      for (let i = 1; i < rows.length; i++) assert.isAtLeast(rows[i - 1].score, rows[i].score)
      const bottom = data(
        yield* call("rank", [
          ["metric", "return_24h_pct"],
          ["direction", "bottom"],
          ["limit", "3"]
        ])
      )
      assert.deepStrictEqual(
        bottom.rows.map((r: any) => r.asset_id),
        rows.map((r: any) => r.asset_id).reverse()
      )
      // Scores are the assets' own values.
      const btc = data(yield* call("price", [["id", "crypto:bitcoin"]]))
      assert.strictEqual(rows.find((r: any) => r.asset_id === "crypto:bitcoin").score, btc.return_24h_pct.value)
    })
  )

  it.effect("extreme_count counts metrics in their own tails; stale assets are excluded", () =>
    Effect.gen(function* () {
      const { call } = yield* setup
      const r = data(yield* call("rank", []))
      assert.strictEqual(r.metric, "extreme_count")
      for (const row of r.rows) assert.strictEqual(row.score, row.extreme_metrics.length)
      const stale = data(yield* call("rank", [], END + 2 * H))
      assert.strictEqual(stale.coverage.ranked, 0)
      assert.strictEqual(stale.coverage.excluded_by_reason.source_stale, 3)
    })
  )

  it.effect("rank carries status and next_update_at like every other result, matching its Cache-Control", () =>
    Effect.gen(function* () {
      const { call } = yield* setup
      const out = yield* call("rank", [])
      decodes("rank", out.body)
      const r = data(out)
      assert.strictEqual(r.status, "live")
      // The earliest next update among the scanned assets: the next 15-minute bar.
      assert.strictEqual(r.next_update_at, new Date(END - 1 + 15 * 60_000).toISOString())
      assert.strictEqual(out.nextUpdateAtMs, Date.parse(r.next_update_at))
      const staleOut = yield* call("rank", [], END + 2 * H)
      decodes("rank", staleOut.body)
      const stale = data(staleOut)
      assert.strictEqual(stale.status, "stale")
      assert.isAtLeast(Date.parse(stale.next_update_at), END + 2 * H)
      assert.strictEqual(staleOut.nextUpdateAtMs, Date.parse(stale.next_update_at))
    })
  )
})

describe("directory", () => {
  it.effect("lists every registry asset, alive only where the asset's own data is live", () =>
    Effect.gen(function* () {
      const { plane } = yield* setup
      const entries = yield* plane.directory
      const alive = entries.filter((e) => e.alive).map((e) => e.asset_id)
      assert.sameMembers(alive, IDS)
      const pi = yield* plane.lookup("crypto:pi-network")
      assert.strictEqual(pi?.tier, "discovery_only")
      assert.isFalse(pi?.alive)
      assert.isUndefined(yield* plane.lookup("crypto:nothing"))
      yield* TestClock.adjust(2 * H)
      assert.isFalse((yield* plane.lookup("crypto:bitcoin"))?.alive)
    })
  )
})
