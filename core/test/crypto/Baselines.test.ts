/**
 * Hourly baselines: the windows hold exactly the hours of their span, and advancing hour by hour (as requests
 * arrive) gives the same baselines as sampling the whole history at once.
 */
import { describe, expect, it } from "vitest"
import { cryptoAsset } from "../../src/crypto/Assets.ts"
import { AssetBaselines } from "../../src/crypto/Baselines.ts"
import type { Series, SeriesKind } from "../../src/crypto/Market.ts"
import { type AssetData, MeasureMemo, MeasureNames, measuresAt, venueData } from "../../src/crypto/Measures.ts"
import { buildFixture, type VenueColumns } from "./support/MarketFixture.ts"

const H = 3_600_000
const DAY = 24 * H
const END = Date.UTC(2026, 2, 1)
const btc = cryptoAsset("crypto:bitcoin") as NonNullable<ReturnType<typeof cryptoAsset>>
const [fixture] = buildFixture([btc], END, 100, 3)

const series = <K extends SeriesKind>(
  kind: K,
  venue: string,
  t: ReadonlyArray<number>,
  cols: Record<string, ReadonlyArray<number>>
) =>
  ({
    kind,
    assetId: btc.id,
    venue,
    t: Float64Array.from(t),
    ...Object.fromEntries(Object.entries(cols).map(([k, v]) => [k, Float64Array.from(v)]))
  }) as unknown as Series<K>

const dataOf = (vs: ReadonlyArray<VenueColumns>): AssetData => ({
  assetId: btc.id,
  primary: series("bars", vs[0]?.venue as string, vs[0]?.t ?? [], {
    open: vs[0]?.open ?? [],
    high: vs[0]?.high ?? [],
    low: vs[0]?.low ?? [],
    close: vs[0]?.close ?? [],
    volume: vs[0]?.volume ?? []
  }),
  venues: vs.map((v) =>
    venueData(v.venue, {
      markIndex: series("markIndex", v.venue, v.t, { mark: v.mark, index: v.index }),
      oi: series("openInterest", v.venue, v.t, { oiUsd: v.oiUsd }),
      taker: series("takerFlow", v.venue, v.t, { buyUsd: v.buyUsd, sellUsd: v.sellUsd }),
      liq: series("liquidations", v.venue, v.liqT, { longUsd: v.liqLong, shortUsd: v.liqShort }),
      book: series("bookMetrics", v.venue, v.t, {
        mid: v.close,
        spreadPct: v.spreadPct,
        imbalance: v.spreadPct.map(() => 0),
        bidDepthUsd: v.bidDepthUsd,
        askDepthUsd: v.askDepthUsd
      }),
      funding: series("funding", v.venue, v.fundingT, {
        rate: v.fundingRate,
        intervalMs: v.fundingT.map(() => v.fundingIntervalMs as number)
      })
    })
  )
})

describe("hourly baselines", () => {
  const data = dataOf(fixture?.venues ?? [])
  const first = (fixture?.venues[0]?.t[0] as number) + 7 * DAY
  const last = END

  it("advancing hour by hour equals sampling the history at once", () => {
    const once = new AssetBaselines()
    once.advance(data, first, last)
    const stepwise = new AssetBaselines()
    stepwise.advance(data, first, first + 10 * DAY)
    for (let h = first + 10 * DAY + H; h <= last; h += 37 * H) stepwise.advance(data, first, Math.min(h, last))
    stepwise.advance(data, first, last)
    for (const m of MeasureNames)
      expect([...stepwise.windows[m].sortedValues], m).toEqual([...once.windows[m].sortedValues])
    expect([...stepwise.funding1y.sortedValues]).toEqual([...once.funding1y.sortedValues])
    expect(stepwise.fundingValues).toEqual(once.fundingValues)
    // An advance to an hour already sampled changes nothing.
    stepwise.advance(data, first, last)
    expect(stepwise.windows.return_24h_pct.n).toBe(once.windows.return_24h_pct.n)
  })

  it("a 90-day window holds exactly the samples of the hours in (H - 90 d, H]", () => {
    const b = new AssetBaselines()
    b.advance(data, first, last)
    const expected: Array<number> = []
    const memo = new MeasureMemo()
    for (let h = last - 90 * DAY + H; h <= last; h += H) {
      const v = measuresAt(data, h, memo).return_24h_pct
      if (Number.isFinite(v)) expected.push(v)
    }
    expect(expected.length).toBe(2160)
    expect([...b.windows.return_24h_pct.sortedValues]).toEqual(expected.sort((x, y) => x - y))
    // The year window holds every hour since the first sampled one (less than a year of data here).
    expect(b.funding1y.n).toBe((last - first) / H + 1)
    expect(b.syncedHour).toBe(last)
  })
})
