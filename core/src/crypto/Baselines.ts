/**
 * The baselines of one crypto asset's measures: each measure sampled at every UTC hour (`Measures.ts` at
 * `T` = the hour) into a sorted trailing window, 90 days for every measure and also one year for the
 * aggregate funding rate (`pctl_1y`), plus each venue's own 90-day funding window (`by_venue[].rate_pctl`).
 * The windows advance incrementally: each new hour is inserted by binary search and the oldest hour leaves,
 * so a percentile lookup never sorts history.
 *
 * A window at hour `H` holds the samples of the hours in `(H - window, H]`: 2,160 samples for 90 days and
 * 8,760 for a year once that much history exists.
 *
 * The windows are `CadenceWindow`s (hourly: times implied, sorted view as slot indices): at 428 assets the
 * baselines were about 0.6 GB of JavaScript arrays, and are about a third of that as typed arrays.
 *
 * Two histories start the sampling: the bar-derived measures begin once the bars cover the week their 7-day
 * measures look back over; the funding windows (aggregate 90 days and one year, and each venue's) begin at
 * the first funding settlement held, whatever the bars' history, because funding needs only settlements and
 * open interest. A year of settlements beside 90 days of bars gives a one-year `pctl_1y`.
 */

import { BaselineWindows, CadenceWindow, SlotSorter } from "../Percentile.ts"
import { HOUR_MS } from "./Market.ts"
import {
  type AssetData,
  fundingAt,
  fundingMeasuresAt,
  MeasureMemo,
  type MeasureName,
  MeasureNames,
  type Measures,
  measuresAt
} from "./Measures.ts"

/** Cadence of baseline samples. */
export const BaselineCadenceMs = HOUR_MS
export const BaselineCadence = "1h"

/** The first hour each history is sampled from (absent: that history is not sampled). */
export interface BaselineStart {
  /** The bar-derived measures (every measure but funding). */
  readonly measures?: number | undefined
  /** The funding windows. */
  readonly funding?: number | undefined
}

export class AssetBaselines {
  /** The newest hour sampled (epoch ms), undefined before the first advance. */
  syncedHour: number | undefined = undefined
  readonly windows: { readonly [M in MeasureName]: CadenceWindow }
  readonly funding1y = new CadenceWindow(BaselineCadenceMs)
  readonly venueFunding = new Map<string, CadenceWindow>()
  /** The first hours sampled, fixed by the first advance (infinite: never). */
  measuresFromHour = Number.POSITIVE_INFINITY
  fundingFromHour = Number.POSITIVE_INFINITY

  constructor() {
    const w: Partial<Record<MeasureName, CadenceWindow>> = {}
    for (const m of MeasureNames) w[m] = new CadenceWindow(BaselineCadenceMs)
    this.windows = w as { readonly [M in MeasureName]: CadenceWindow }
  }

  /** The finite hourly aggregate funding samples over the last year, oldest first (for sign flips; a copy). */
  get fundingValues(): Array<number> {
    return this.funding1y.valuesInTimeOrder()
  }

  /**
   * Samples every hour in `(syncedHour, toHour]` (from `from` on the first call: one hour for both histories,
   * or each history's own) from `data`, which must hold the bar series from 7 days before the first hour the
   * measures sample and the funding and open-interest series from 7 days before the first funding hour. Hours
   * already sampled are skipped, so two overlapping advances never count an hour twice. `sorter` and `memo` are
   * the caller's scratch and derived columns (a plane passes its own, shared by all its assets' advances).
   */
  advance(
    data: AssetData,
    from: number | BaselineStart,
    toHour: number,
    sorter: SlotSorter = new SlotSorter(),
    memo: MeasureMemo = new MeasureMemo()
  ): void {
    if (this.syncedHour === undefined) {
      const start: BaselineStart = typeof from === "number" ? { measures: from, funding: from } : from
      this.measuresFromHour = start.measures ?? Number.POSITIVE_INFINITY
      this.fundingFromHour = start.funding ?? Number.POSITIVE_INFINITY
    }
    const start =
      this.syncedHour === undefined ? Math.min(this.measuresFromHour, this.fundingFromHour) : this.syncedHour + HOUR_MS
    const ninety = BaselineWindows["90d"]
    // Samples are collected first and merged into each window in one step.
    const hours: Array<number> = []
    const byMeasure = MeasureNames.map(() => [] as Array<number>)
    const fundingIndex = MeasureNames.indexOf("funding_rate_8h_pct")
    const funding90Hours: Array<number> = []
    const funding90Values: Array<number> = []
    const venueSamples = new Map<string, { t: Array<number>; v: Array<number> }>()
    const fundingHours: Array<number> = []
    const fundingValues: Array<number> = []
    for (let h = start; Number.isFinite(h) && h <= toHour; h += HOUR_MS) {
      const inNinety = h > toHour - ninety
      const sampleMeasures = inNinety && h >= this.measuresFromHour
      const sampleFunding = h >= this.fundingFromHour
      if (!sampleMeasures && !sampleFunding) continue
      let m: Measures | undefined
      if (sampleMeasures) {
        const all = measuresAt(data, h, memo)
        m = all
        hours.push(h)
        MeasureNames.forEach((name, i) => {
          if (i !== fundingIndex) (byMeasure[i] as Array<number>).push(all[name])
        })
      }
      if (!sampleFunding) continue
      // Outside the 90 days only the one-year aggregate is sampled: `fundingAt` is `fundingMeasuresAt`'s
      // aggregate without building the per-venue map (most of the year's hours on a reopen).
      if (!inNinety) {
        fundingHours.push(h)
        fundingValues.push(fundingAt(data, h, memo))
        continue
      }
      // Funding from the settlements alone: `fundingMeasuresAt`, which `measuresAt` also uses.
      const f =
        m === undefined
          ? fundingMeasuresAt(data, h, memo)
          : { aggregate: m.funding_rate_8h_pct, byVenue: m.venueFunding8hPct }
      fundingHours.push(h)
      fundingValues.push(f.aggregate)
      funding90Hours.push(h)
      funding90Values.push(f.aggregate)
      for (const [venue, rate] of f.byVenue) {
        let vs = venueSamples.get(venue)
        if (vs === undefined) {
          vs = { t: [], v: [] }
          venueSamples.set(venue, vs)
        }
        vs.t.push(h)
        vs.v.push(rate)
      }
    }
    MeasureNames.forEach((name, i) => {
      if (i === fundingIndex) this.windows[name].pushMany(funding90Hours, funding90Values, sorter)
      else this.windows[name].pushMany(hours, byMeasure[i] as Array<number>, sorter)
    })
    for (const [venue, vs] of venueSamples) {
      let w = this.venueFunding.get(venue)
      if (w === undefined) {
        w = new CadenceWindow(BaselineCadenceMs)
        this.venueFunding.set(venue, w)
      }
      w.pushMany(vs.t, vs.v, sorter)
    }
    this.funding1y.pushMany(fundingHours, fundingValues, sorter)
    if (start <= toHour) this.syncedHour = toHour
    if (this.syncedHour === undefined) this.syncedHour = toHour
    const edge90 = toHour - ninety + HOUR_MS
    for (const name of MeasureNames) this.windows[name].evictBefore(edge90)
    for (const w of this.venueFunding.values()) w.evictBefore(edge90)
    const edge1y = toHour - BaselineWindows["1y"] + HOUR_MS
    this.funding1y.evictBefore(edge1y)
  }
}
