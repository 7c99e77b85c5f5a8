/**
 * The baselines of one crypto asset's measures: each measure sampled at every UTC hour (`Measures.ts` at
 * `T` = the hour) into a sorted trailing window, 90 days for every measure and also one year for the
 * aggregate funding rate (`pctl_1y`), plus each venue's own 90-day funding window (`by_venue[].rate_pctl`).
 * The windows advance incrementally: each new hour is inserted by binary search and the oldest hour leaves,
 * so a percentile lookup never sorts history.
 *
 * A window at hour `H` holds the samples of the hours in `(H - window, H]`: 2,160 samples for 90 days and
 * 8,760 for a year once that much history exists.
 */
import { HOUR_MS } from "./Market.ts"
import { type AssetData, fundingAt, type MeasureName, MeasureNames, measuresAt } from "./Measures.ts"
import { BaselineWindows, SortedWindow } from "./Percentile.ts"

/** Cadence of baseline samples. */
export const BaselineCadenceMs = HOUR_MS
export const BaselineCadence = "1h"

export class AssetBaselines {
  /** The newest hour sampled (epoch ms), undefined before the first advance. */
  syncedHour: number | undefined = undefined
  readonly windows: { readonly [M in MeasureName]: SortedWindow }
  readonly funding1y = new SortedWindow()
  readonly venueFunding = new Map<string, SortedWindow>()
  /** Hourly aggregate funding samples over the last year (times and values), for sign flips. */
  readonly fundingHours: Array<number> = []
  readonly fundingValues: Array<number> = []

  constructor() {
    const w: Partial<Record<MeasureName, SortedWindow>> = {}
    for (const m of MeasureNames) w[m] = new SortedWindow()
    this.windows = w as { readonly [M in MeasureName]: SortedWindow }
  }

  /**
   * Samples every hour in `(syncedHour, toHour]` (from `fromHour` on the first call) from `data`, which must
   * hold the series from 7 days before the first hour sampled. Hours already sampled are skipped, so two
   * overlapping advances never count an hour twice.
   */
  advance(data: AssetData, fromHour: number, toHour: number): void {
    const start = this.syncedHour === undefined ? fromHour : this.syncedHour + HOUR_MS
    const ninety = BaselineWindows["90d"]
    // Samples are collected first and merged into each window in one step.
    const hours: Array<number> = []
    const byMeasure = MeasureNames.map(() => [] as Array<number>)
    const venueSamples = new Map<string, { t: Array<number>; v: Array<number> }>()
    const fundingHours: Array<number> = []
    const fundingValues: Array<number> = []
    for (let h = start; h <= toHour; h += HOUR_MS) {
      if (h <= toHour - ninety) {
        // Hours older than 90 days at `toHour` only feed the one-year funding window.
        fundingHours.push(h)
        fundingValues.push(fundingAt(data, h))
        continue
      }
      const m = measuresAt(data, h)
      hours.push(h)
      MeasureNames.forEach((name, i) => {
        ;(byMeasure[i] as Array<number>).push(m[name])
      })
      for (const [venue, rate] of m.venueFunding8hPct) {
        let vs = venueSamples.get(venue)
        if (vs === undefined) {
          vs = { t: [], v: [] }
          venueSamples.set(venue, vs)
        }
        vs.t.push(h)
        vs.v.push(rate)
      }
      fundingHours.push(h)
      fundingValues.push(m.funding_rate_8h_pct)
    }
    MeasureNames.forEach((name, i) => {
      this.windows[name].pushMany(hours, byMeasure[i] as Array<number>)
    })
    for (const [venue, vs] of venueSamples) {
      let w = this.venueFunding.get(venue)
      if (w === undefined) {
        w = new SortedWindow()
        this.venueFunding.set(venue, w)
      }
      w.pushMany(vs.t, vs.v)
    }
    this.funding1y.pushMany(fundingHours, fundingValues)
    fundingHours.forEach((h, i) => {
      const f = fundingValues[i] as number
      if (Number.isFinite(f)) {
        this.fundingHours.push(h)
        this.fundingValues.push(f)
      }
    })
    if (start <= toHour) this.syncedHour = toHour
    if (this.syncedHour === undefined) this.syncedHour = toHour
    const edge90 = toHour - ninety + HOUR_MS
    for (const name of MeasureNames) this.windows[name].evictBefore(edge90)
    for (const w of this.venueFunding.values()) w.evictBefore(edge90)
    const edge1y = toHour - BaselineWindows["1y"] + HOUR_MS
    this.funding1y.evictBefore(edge1y)
    let drop = 0
    while (drop < this.fundingHours.length && (this.fundingHours[drop] as number) < edge1y) drop++
    if (drop > 0) {
      this.fundingHours.splice(0, drop)
      this.fundingValues.splice(0, drop)
    }
  }
}
