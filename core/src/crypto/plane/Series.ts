/**
 * `series`: the asset's closed bars of an interval over a range, as bars (paged backwards by cursor) or as a
 * summary (`../SeriesSummary.ts`).
 */
import { Effect } from "effect"
import { chargeFor } from "../../Billing.ts"
import { decodeCursor, encodeCursor } from "../../Cursor.ts"
import { apiError } from "../../Errors.ts"
import type { Handler, HandlerInput } from "../../Pipeline.ts"
import { BAR_MS, type Bars, completeBars, type Interval, intervalEndMs, sliceSeries } from "../Market.ts"
import { rangeStartMs, type SeriesRange, summarize } from "../SeriesSummary.ts"
import { clocks, Gaps, iso, roundRatio, roundValue } from "./Result.ts"
import { freshnessFor, type PlaneState, primaryVenue } from "./State.ts"

/** The `series` handler over a plane's state. */
export const makeSeries = (st: PlaneState): Handler => {
  const { store, statusesOf } = st
  const series: Handler = (input: HandlerInput) =>
    Effect.gen(function* () {
      const params = input.params
      const asset = st.universe.get().byId.get(String(params.id))
      if (asset === undefined)
        return yield* Effect.fail(apiError("unknown_asset", `no asset ${String(params.id)}`, { param: "id" }))
      const nowMs = input.nowMs
      const interval = (typeof params.interval === "string" ? params.interval : "4h") as Interval
      const range = (typeof params.range === "string" ? params.range : "1y") as SeriesRange
      const view = params.view === "summary" ? "summary" : "bars"
      const limit = typeof params.limit === "number" ? params.limit : 120
      let beforeMs = Number.POSITIVE_INFINITY
      if (typeof params.cursor === "string") {
        const pos = decodeCursor(input.op.name, params, params.cursor)
        if (typeof pos !== "string") return yield* Effect.fail(pos)
        beforeMs = Number(pos)
        if (!Number.isFinite(beforeMs)) {
          return yield* Effect.fail(
            apiError("invalid_cursor", "`cursor` is not a cursor this service issued", { param: "cursor" })
          )
        }
      }
      const statuses = yield* statusesOf(asset)
      const primary = primaryVenue(asset)
      const fromMs = rangeStartMs(range, nowMs)
      const raw =
        primary === undefined
          ? undefined
          : (yield* store.read("bars", { assetId: asset.id, venue: primary, fromMs, toMs: nowMs }))[0]
      const rawNewest =
        raw === undefined || raw.t.length === 0
          ? undefined
          : Math.min(nowMs, (raw.t[raw.t.length - 1] as number) + BAR_MS)
      const fresh = freshnessFor(st.universe, asset, "series", statuses, nowMs, rawNewest)
      const gaps = new Gaps()
      let closed: Bars | undefined
      if (raw !== undefined && raw.t.length > 0) {
        const newestEnd = Math.min(nowMs, (raw.t[raw.t.length - 1] as number) + 15 * 60_000)
        const agg = completeBars(raw, interval)
        // Whole intervals only: drop a first bar that began before the range or the stored history (both in
        // `completeBars`) and a last one still forming.
        let start = 0
        while (start < agg.t.length && (agg.t[start] as number) < fromMs) start++
        let end = agg.t.length
        while (end > start && intervalEndMs(agg.t[end - 1] as number, interval) > newestEnd) end--
        closed = sliceSeries(agg, start, end)
      }
      const nextUpdateAtMs =
        closed !== undefined && closed.t.length > 0
          ? Math.max(
              fresh.nextUpdateAtMs,
              intervalEndMs(intervalEndMs(closed.t[closed.t.length - 1] as number, interval), interval)
            )
          : fresh.nextUpdateAtMs
      // Closed bars change only when the next bar closes.
      const head = { asset_id: asset.id, ...clocks(fresh), next_update_at: iso(nextUpdateAtMs), interval, range }
      if (view === "summary") {
        const s = closed === undefined ? undefined : summarize(closed, interval)
        const summary =
          s === undefined
            ? gaps.add("summary", "no_data", "no closed bars in the range")
            : {
                first_close: roundValue(s.first_close),
                last_close: roundValue(s.last_close),
                return_pct: roundRatio(s.return_pct),
                high: roundValue(s.high),
                low: roundValue(s.low),
                max_drawdown_pct: roundRatio(s.max_drawdown_pct),
                realized_volatility_pct:
                  s.realized_volatility_pct === null
                    ? gaps.add("summary.realized_volatility_pct", "insufficient_history", "needs three bars")
                    : roundRatio(s.realized_volatility_pct),
                bar_count: s.bar_count,
                first_bar_at: iso((closed as Bars).t[0] as number),
                last_bar_at: iso((closed as Bars).t[(closed as Bars).t.length - 1] as number)
              }
        return {
          _tag: "Json" as const,
          body: { data: { ...head, summary, ...gaps.block } },
          creditsCharged: chargeFor(input.op, {}),
          nextUpdateAtMs
        }
      }
      const t = closed?.t ?? new Float64Array(0)
      let end = t.length
      while (end > 0 && (t[end - 1] as number) >= beforeMs) end--
      const start = Math.max(0, end - limit)
      const bars: Array<{ t: string; o: number; h: number; l: number; c: number; v: number }> = []
      for (let i = start; i < end; i++) {
        const b = closed as Bars
        bars.push({
          t: iso(b.t[i] as number),
          o: roundValue(b.open[i] as number),
          h: roundValue(b.high[i] as number),
          l: roundValue(b.low[i] as number),
          c: roundValue(b.close[i] as number),
          v: roundValue(b.volume[i] as number)
        })
      }
      if (t.length === 0) gaps.add("bars", "no_data", "no closed bars in the range")
      const next_cursor = start > 0 ? encodeCursor(input.op.name, params, String(t[start])) : null
      return {
        _tag: "Json" as const,
        body: { data: { ...head, bars, next_cursor, ...gaps.block } },
        creditsCharged: chargeFor(input.op, {}),
        nextUpdateAtMs
      }
    })
  return series
}
