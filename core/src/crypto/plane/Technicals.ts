/**
 * `technicals`: RSI, ADX and ATR against their 90-day baselines, the directional indicators and the moving
 * averages, on one timeframe as of its newest closed bar (the bars and indicator series are cached in the
 * plane state, `timeframeOf`). The indicator arithmetic is in `../Technicals.ts`.
 */
import { Effect } from "effect"
import type { CanonicalParams } from "../../Params.ts"
import type { PlaneForAsset } from "../../Planes.ts"
import type { CryptoAsset } from "../Assets.ts"
import { intervalEndMs } from "../Market.ts"
import { MovingAveragePeriods } from "../Technicals.ts"
import { perAsset } from "./Operation.ts"
import { type Gaps, iso, roundRatio, roundValue } from "./Result.ts"
import { type PlaneState, TIMEFRAMES, type Timeframe } from "./State.ts"

/** The `timeframe` parameter (default `4h`). */
export const timeframeParam = (params: CanonicalParams): Timeframe => {
  const t = params.timeframe
  return typeof t === "string" && (TIMEFRAMES as ReadonlyArray<string>).includes(t) ? (t as Timeframe) : "4h"
}

/** `technicals` over a plane's state. */
export const makeTechnicals = (st: PlaneState): PlaneForAsset => {
  const { timeframes, timeframeOf } = st
  const technicalsOf = (asset: CryptoAsset, timeframe: Timeframe, nowMs: number, gaps: Gaps) =>
    Effect.gen(function* () {
      const tf = yield* timeframeOf(asset, timeframe, nowMs)
      if (tf === undefined) {
        gaps.add("rsi_14", "no_data", "no closed bars")
        gaps.add("adx_14", "no_data", "no closed bars")
        gaps.add("atr_14_pct", "no_data", "no closed bars")
        gaps.add("moving_averages", "no_data", "no closed bars")
        return { timeframe, rsi_14: null, adx_14: null, atr_14_pct: null }
      }
      const last = tf.lastClose
      const mas: Record<string, number | null> = {}
      for (const p of MovingAveragePeriods) {
        for (const name of ["sma", "ema"] as const) {
          const key = `${name}_${p}`
          const v = tf.movingAverages.get(key)
          mas[key] =
            v === undefined
              ? gaps.add(`moving_averages.${key}`, "insufficient_history", `${tf.closedBars} closed bars; ${p} needed`)
              : roundValue(v)
          const vs = `close_vs_${key}_pct`
          mas[vs] =
            v === undefined
              ? gaps.add(`moving_averages.${vs}`, "insufficient_history")
              : roundRatio((last / v - 1) * 100)
        }
      }
      return {
        timeframe,
        bar_at: iso(tf.lastBarT),
        close: roundValue(last),
        rsi_14: gaps.contextual("rsi_14", tf.rsi, tf.baselines.rsi),
        adx_14: gaps.contextual("adx_14", tf.adx, tf.baselines.adx),
        atr_14_pct: gaps.contextual("atr_14_pct", tf.atrPct, tf.baselines.atrPct),
        plus_di_14: gaps.plain("plus_di_14", tf.plusDi),
        minus_di_14: gaps.plain("minus_di_14", tf.minusDi),
        moving_averages: mas,
        baseline: { window: "90d", cadence: timeframe, n: tf.baselines.rsi.length }
      }
    })

  /**
   * Technicals change only when a bar of the timeframe closes: `next_update_at` is the close of the bar now
   * forming (or later, when the feed itself is late).
   */
  const technicals = perAsset(st, "technicals", ({ asset, params, nowMs, gaps, fresh }) =>
    Effect.gen(function* () {
      const timeframe = timeframeParam(params)
      const body = yield* technicalsOf(asset, timeframe, nowMs, gaps)
      const tf = timeframes.get(`${asset.id}/${timeframe}`)
      if (!("bar_at" in body) || tf === undefined) return body
      const nextClose = intervalEndMs(tf.closedEndMs, timeframe)
      return { next_update_at: iso(Math.max(fresh.nextUpdateAtMs, nextClose)), ...body }
    })
  )
  return technicals
}
