/**
 * No figure across a hole while history fills behind the quote (issue 29, point 11): a live start stores the last
 * day of bars first and the history behind it later, so the store can hold old bars and the new day with a hole
 * between. Every windowed figure comes from the 15 m bars held end to end up to the newest one, or is `null` with
 * `insufficient_history`; once the hole is filled, the same plane (same clock, same closed bar) answers the values
 * of the whole history: its timeframe cache and baselines are rebuilt.
 */
import { assert, describe, it } from "@effect/vitest"
import { makeMemoryMarketStore } from "@market-data/memory"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { cryptoAsset } from "../../src/crypto/Assets.ts"
import { heldEndToEnd, runStartIndex } from "../../src/crypto/Contiguity.ts"
import { makeCryptoPlane } from "../../src/crypto/CryptoPlane.ts"
import { BAR_MS, MarketStore } from "../../src/crypto/Market.ts"
import { callPlanes, dataOf } from "../support/PlaneCall.ts"
import { type AssetFixture, buildFixture, type VenueColumns, writeFixture } from "./support/MarketFixture.ts"

const H = 3_600_000
const DAY = 24 * H
const END = Date.UTC(2026, 10, 20, 12, 0)
const NOW = END + 60_000
const ID = "crypto:ethereum"
const eth = cryptoAsset(ID) as NonNullable<ReturnType<typeof cryptoAsset>>
const FULL = buildFixture([eth], END, 400, 29)[0] as AssetFixture
const primary = FULL.venues[0] as VenueColumns

/** The row columns of a venue (all but funding and liquidations, which have their own times). */
const ROW_COLUMNS = [
  "t",
  "open",
  "high",
  "low",
  "close",
  "volume",
  "mark",
  "index",
  "oiUsd",
  "buyUsd",
  "sellUsd",
  "spreadPct",
  "bidDepthUsd",
  "askDepthUsd"
] as const

/** The fixture without its rows in `[fromMs, toMs)` on every venue: an earlier run's history, then the new day. */
const withHole = (fromMs: number, toMs: number): AssetFixture => ({
  ...FULL,
  venues: FULL.venues.map((v) => {
    const keep = v.t.map((t) => t < fromMs || t >= toMs)
    const out: Record<string, unknown> = { ...v }
    for (const c of ROW_COLUMNS) out[c] = (v[c] as Array<number>).filter((_, i) => keep[i])
    return out as unknown as VenueColumns
  })
})

/** The primary venue's bars in `[fromMs, toMs)`, as the backfill writes them. */
const fill = (store: MarketStore["Service"], fromMs: number, toMs: number) => {
  const idx = primary.t.flatMap((t, i) => (t >= fromMs && t < toMs ? [i] : []))
  const col = (c: Array<number>) => idx.map((i) => c[i] as number)
  return store.write([
    {
      kind: "bars",
      assetId: ID,
      venue: primary.venue,
      t: col(primary.t),
      open: col(primary.open),
      high: col(primary.high),
      low: col(primary.low),
      close: col(primary.close),
      volume: col(primary.volume)
    }
  ])
}

const setup = (holeFrom: number, holeTo: number) =>
  Effect.gen(function* () {
    const store = makeMemoryMarketStore()
    yield* writeFixture(store, [withHole(holeFrom, holeTo)], END)
    yield* TestClock.setTime(NOW)
    const plane = yield* makeCryptoPlane.pipe(Effect.provideService(MarketStore, store))
    const call = (name: string, params: ReadonlyArray<readonly [string, string]> = []) =>
      Effect.map(callPlanes([plane], name, [["id", ID], ...params], NOW), (out) => dataOf<any>(out))
    const rank = Effect.map(
      callPlanes(
        [plane],
        "rank",
        [
          ["metric", "return_24h_pct"],
          ["limit", "50"]
        ],
        NOW
      ),
      (out) => dataOf<any>(out)
    )
    return { store, call, rank }
  })

/** The close of each whole hour of the full history before END (the 15 m bar closing it), oldest first. */
const hourlyCloses = primary.t.flatMap((t, i) => ((t + BAR_MS) % H === 0 ? [primary.close[i] as number] : []))
const smaOfNewest = (n: number) => hourlyCloses.slice(-n).reduce((s, x) => s + x, 0) / n
const near = (got: number, want: number) => assert.isAtMost(Math.abs(got - want), 1e-9 * Math.abs(want))

describe("a year of old bars and a new day with a hole between", () => {
  const HOLE_FROM = END - 60 * DAY
  const HOLE_TO = END - DAY

  it.effect("technicals at 1h use the new day only; once the hole is filled they equal the whole history's", () =>
    Effect.gen(function* () {
      const { store, call } = yield* setup(HOLE_FROM, HOLE_TO)
      const before = yield* call("technicals", [["timeframe", "1h"]])
      assert.strictEqual(before.bar_at, new Date(END - H).toISOString())
      const ma = before.moving_averages
      for (const name of ["sma_50", "sma_200", "ema_50", "ema_200", "close_vs_sma_50_pct", "close_vs_sma_200_pct"]) {
        assert.isNull(ma[name], name)
        assert.strictEqual(before.unavailable[`moving_averages.${name}`].reason, "insufficient_history", name)
      }
      assert.include(before.unavailable["moving_averages.sma_50"].detail, "24 closed bars")
      // What the 24 hours held end to end cover is answered, over them alone.
      near(ma.sma_20, smaOfNewest(20))
      // ADX needs 28 bars: short history, not missing data.
      assert.isNull(before.adx_14)
      assert.strictEqual(before.unavailable.adx_14.reason, "insufficient_history")

      // The backfill fills the hole from its old side first: the hole narrows, the answer does not mix.
      yield* fill(store, HOLE_FROM, HOLE_FROM + 20 * DAY)
      const narrower = yield* call("technicals", [["timeframe", "1h"]])
      assert.isNull(narrower.moving_averages.sma_50)
      assert.strictEqual(narrower.unavailable["moving_averages.sma_50"].reason, "insufficient_history")

      // Filled: same clock, same newest closed bar, the whole history's values.
      yield* fill(store, HOLE_FROM + 20 * DAY, HOLE_TO)
      const after = yield* call("technicals", [["timeframe", "1h"]])
      assert.strictEqual(after.bar_at, before.bar_at)
      near(after.moving_averages.sma_50, smaOfNewest(50))
      near(after.moving_averages.sma_200, smaOfNewest(200))
      near(after.moving_averages.sma_20, smaOfNewest(20))
      assert.isNumber(after.adx_14.value)
      assert.isUndefined(after.unavailable?.["moving_averages.sma_200"])
      // The 90-day baseline of the 1 h indicators: every closed hour of the 90 days.
      assert.strictEqual(after.baseline.n, 90 * 24)
    })
  )

  it.effect("price: the 7-day range and the 24 h return are insufficient_history until the hole is filled", () =>
    Effect.gen(function* () {
      const { store, call } = yield* setup(HOLE_FROM, HOLE_TO)
      const before = yield* call("price")
      assert.isNumber(before.usd)
      assert.isNull(before.range_pos_7d_pct)
      assert.strictEqual(before.unavailable.range_pos_7d_pct.reason, "insufficient_history")
      assert.include(before.unavailable.range_pos_7d_pct.detail, "reach back 24 h")
      assert.isNull(before.return_24h_pct)
      assert.strictEqual(before.unavailable.return_24h_pct.reason, "insufficient_history")

      yield* fill(store, HOLE_FROM, HOLE_TO)
      const after = yield* call("price")
      const inWeek = primary.t.flatMap((t, i) => (t >= END - 7 * DAY ? [i] : []))
      const high = Math.max(...inWeek.map((i) => primary.high[i] as number))
      const low = Math.min(...inWeek.map((i) => primary.low[i] as number))
      const last = primary.close[primary.close.length - 1] as number
      near(after.range_pos_7d_pct.value, ((last - low) / (high - low)) * 100)
      const dayAgo = primary.close[primary.t.indexOf(END - DAY - BAR_MS)] as number
      near(after.return_24h_pct.value, (last / dayAgo - 1) * 100)
    })
  )

  it.effect("read: the baselines sampled while the hole was open are rebuilt once it is filled", () =>
    Effect.gen(function* () {
      const { store, call } = yield* setup(HOLE_FROM, HOLE_TO)
      const before = yield* call("read")
      // Hours in the hole and the new day's first day have no 24 h return held end to end.
      assert.isBelow(before.baseline.n, 90 * 24 - 59 * 24)
      yield* fill(store, HOLE_FROM, HOLE_TO)
      const after = yield* call("read")
      assert.strictEqual(after.baseline.n, 90 * 24)
      assert.isNumber(after.headline.return_24h_pct.value)
    })
  )

  it.effect("structure: a session that began before the bars held end to end is left out, named", () =>
    Effect.gen(function* () {
      const { call } = yield* setup(HOLE_FROM, HOLE_TO)
      const s = yield* call("structure", [["timeframe", "1h"]])
      // The new day began at 12:00 yesterday: the prior UTC day is only half held.
      assert.isUndefined(s.session_levels.prior_day)
      assert.strictEqual(s.unavailable["session_levels.prior_day"].reason, "insufficient_history")
      assert.isObject(s.session_levels.asia)
    })
  )
})

describe("a short hole just behind the last day", () => {
  // The 24 h return would compare with a close 2 h 15 min older than a day (within the 3 h a price is kept).
  const HOLE_FROM = END - DAY - 2 * H
  const HOLE_TO = END - DAY

  it.effect("read and rank: no 24 h return across the hole", () =>
    Effect.gen(function* () {
      const { store, call, rank } = yield* setup(HOLE_FROM, HOLE_TO)
      const read = yield* call("read")
      assert.isNull(read.headline.return_24h_pct)
      assert.strictEqual(read.unavailable["headline.return_24h_pct"].reason, "insufficient_history")
      const ranked = yield* rank
      assert.notInclude(
        ranked.rows.map((r: { asset_id: string }) => r.asset_id),
        ID
      )
      assert.strictEqual(ranked.coverage.excluded_by_reason.insufficient_history, 1)

      yield* fill(store, HOLE_FROM, HOLE_TO)
      const filled = yield* call("read")
      const last = primary.close[primary.close.length - 1] as number
      const dayAgo = primary.close[primary.t.indexOf(END - DAY - BAR_MS)] as number
      near(filled.headline.return_24h_pct.value, (last / dayAgo - 1) * 100)
      assert.deepStrictEqual(
        (yield* rank).rows.map((r: { asset_id: string }) => r.asset_id),
        [ID]
      )
    })
  )
})

describe("one missing 15 m bar", () => {
  it.effect("breaks the hours after it from those before it: a 1 h bar with a missing piece is no bar", () =>
    Effect.gen(function* () {
      // 10:15 missing: the 10:00 hour has three quarters, so the held hours are 11:00 alone.
      const { call } = yield* setup(END - 105 * 60_000, END - 90 * 60_000)
      const t = yield* call("technicals", [["timeframe", "1h"]])
      assert.strictEqual(t.bar_at, new Date(END - H).toISOString())
      assert.isNull(t.moving_averages.sma_20)
      assert.include(t.unavailable["moving_averages.sma_20"].detail, "1 closed bars")
      const d = yield* call("technicals", [["timeframe", "15m"]])
      assert.strictEqual(d.unavailable["moving_averages.sma_20"].reason, "insufficient_history")
      assert.include(d.unavailable["moving_averages.sma_20"].detail, "6 closed bars")
    })
  )

  it("runs: consecutive open times one bar apart, none missing", () => {
    const t = [0, 1, 2, 4, 5, 6].map((k) => k * BAR_MS)
    assert.isTrue(heldEndToEnd(t, 3, 5))
    assert.isFalse(heldEndToEnd(t, 2, 3))
    assert.isFalse(heldEndToEnd(t, 0, 5))
    assert.strictEqual(runStartIndex(t, 5), 3)
    assert.strictEqual(runStartIndex(t, 2), 0)
    assert.strictEqual(runStartIndex(t, 5, 1), 4)
  })
})
