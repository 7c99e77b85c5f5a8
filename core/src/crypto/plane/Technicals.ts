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
import { MovingAveragePeriods, WilderPeriod } from "../Technicals.ts"
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
      if (tf === undefined || tf.closedBars === 0) {
        // Bars stored, but none closed among those held end to end up to the newest: history, not data, is short.
        const [reason, detail] =
          tf === undefined
            ? (["no_data", "no closed bars"] as const)
            : (["insufficient_history", "no closed bar held without a gap up to the newest bar"] as const)
        gaps.add("rsi_14", reason, detail)
        gaps.add("adx_14", reason, detail)
        gaps.add("atr_14_pct", reason, detail)
        gaps.add("moving_averages", reason, detail)
        return { timeframe, rsi_14: null, adx_14: null, atr_14_pct: null }
      }
      const held = `${tf.closedBars} closed bars held without a gap up to the newest bar`
      /** Why an indicator needing `bars` closed bars is missing: too few held, or missing inputs. */
      const missing = (bars: number) =>
        tf.closedBars < bars
          ? { reason: "insufficient_history" as const, detail: `${held}; ${bars} needed` }
          : undefined
      const warmUp = WilderPeriod + 1
      const last = tf.lastClose
      const mas: Record<string, number | null> = {}
      for (const p of MovingAveragePeriods) {
        for (const name of ["sma", "ema"] as const) {
          const key = `${name}_${p}`
          const v = tf.movingAverages.get(key)
          mas[key] =
            v === undefined
              ? gaps.add(`moving_averages.${key}`, "insufficient_history", `${held}; ${p} needed`)
              : roundValue(v)
          const vs = `close_vs_${key}_pct`
          mas[vs] =
            v === undefined
              ? gaps.add(`moving_averages.${vs}`, "insufficient_history")
              : roundRatio((last / v - 1) * 100)
        }
      }
      const di = (name: string, v: number | undefined) => {
        const why = missing(warmUp)
        return why !== undefined && !(v !== undefined && Number.isFinite(v))
          ? gaps.add(name, why.reason, why.detail)
          : gaps.plain(name, v)
      }
      return {
        timeframe,
        bar_at: iso(tf.lastBarT),
        close: roundValue(last),
        rsi_14: gaps.contextual("rsi_14", tf.rsi, tf.baselines.rsi, missing(warmUp)),
        adx_14: gaps.contextual("adx_14", tf.adx, tf.baselines.adx, missing(2 * WilderPeriod)),
        atr_14_pct: gaps.contextual("atr_14_pct", tf.atrPct, tf.baselines.atrPct, missing(warmUp)),
        plus_di_14: di("plus_di_14", tf.plusDi),
        minus_di_14: di("minus_di_14", tf.minusDi),
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
