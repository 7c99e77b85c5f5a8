/** `technicals`: RSI, ADX and ATR of the daily bars with their percentiles, and the simple moving averages. */
import { Effect } from "effect"
import { adx, atrPct, MovingAveragePeriods, rsi, sma } from "../../crypto/Technicals.ts"
import { apiError } from "../../Errors.ts"
import type { PlaneForAsset } from "../../Planes.ts"
import { round } from "./Measures.ts"
import { type AssetTarget, perAsset } from "./Operation.ts"
import { type EquityState, priceContext, type Unavailable, withUnavailable } from "./State.ts"

const technicalsBody = Effect.fnUntraced(function* (st: EquityState, t: AssetTarget) {
  const { entry, params, cik, ticker, coverage, nowMs } = t
  const timeframe = typeof params.timeframe === "string" ? params.timeframe : "1d"
  const bars = yield* st.recentBars(cik, ticker, nowMs)
  const freshness = yield* st.freshnessOf(cik, coverage, bars, nowMs)
  const unavailable: Unavailable = {}
  if (timeframe !== "1d") {
    // Nothing to serve: refused \`not_covered\` (uncharged; in a batch, listed under \`refused\`).
    return yield* Effect.fail(
      apiError("not_covered", `${entry.asset_id}: equity prices are daily bars; technicals serve timeframe=1d only`, {
        param: "timeframe"
      })
    )
  }
  const hlc = { high: bars.map((b) => b.h), low: bars.map((b) => b.l), close: bars.map((b) => b.c) }
  const ctx = priceContext(bars, unavailable)
  const movingAverages: Record<string, number | null> = {}
  for (const p of MovingAveragePeriods) {
    const v = sma(hlc.close, p)[bars.length - 1]
    movingAverages[`sma_${p}`] = v === undefined || !Number.isFinite(v) ? null : round(v, 6)
  }
  return withUnavailable(
    {
      asset_id: entry.asset_id,
      ...freshness,
      timeframe,
      rsi_14: ctx.put("rsi_14", rsi(hlc.close)),
      adx_14: ctx.put("adx_14", adx(hlc).adx),
      atr_14_pct: ctx.put("atr_14_pct", atrPct(hlc)),
      moving_averages: movingAverages
    },
    unavailable
  )
})

export const makeTechnicals = (st: EquityState): PlaneForAsset => perAsset(st, technicalsBody)
