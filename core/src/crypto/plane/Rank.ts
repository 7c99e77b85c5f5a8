/**
 * `rank`: the core tier ranked by one metric, or by how many metrics sit in their tails (`extreme_count`), live
 * assets only; the coverage block counts what was scanned and why the rest was excluded.
 */
import { Effect } from "effect"
import { chargeFor } from "../../Billing.ts"
import { decodeCursor, encodeCursor } from "../../Cursor.ts"
import { apiError } from "../../Errors.ts"
import { MinBaselineN, percentileRank } from "../../Percentile.ts"
import type { Handler, HandlerInput } from "../../Pipeline.ts"
import type { RankMetrics } from "../../Registry.ts"
import { isExtreme } from "../Assessment.ts"
import type { MeasureName } from "../Measures.ts"
import { iso, roundFigure } from "./Result.ts"
import { freshnessFor, type PlaneState, venuesOf, w } from "./State.ts"

/** The measure and baseline behind each rank metric (`extreme_count` counts the others' tails). */
export const RankMeasures: { readonly [M in Exclude<(typeof RankMetrics)[number], "extreme_count">]: MeasureName } = {
  funding_rate_8h_pct: "funding_rate_8h_pct",
  return_24h_pct: "return_24h_pct",
  return_7d_pct: "return_7d_pct",
  oi_change_24h_pct: "oi_change_24h_pct",
  net_taker_delta_24h_usd: "net_taker_delta_24h_usd",
  net_taker_delta_pct_of_oi_24h: "net_delta_pct_of_oi_24h",
  liq_intensity_pct_of_oi_24h: "liq_intensity_pct_of_oi_24h",
  liq_imbalance_24h: "liq_imbalance_24h"
}

/** The `rank` handler over a plane's state. */
export const makeRank = (st: PlaneState): Handler => {
  const { store, stateOf } = st
  const rank: Handler = (input: HandlerInput) =>
    Effect.gen(function* () {
      const params = input.params
      const metric = (
        typeof params.metric === "string" ? params.metric : "extreme_count"
      ) as (typeof RankMetrics)[number]
      const direction = params.direction === "bottom" ? "bottom" : "top"
      const limit = typeof params.limit === "number" ? params.limit : 10
      const nowMs = input.nowMs
      let after: { score: number; id: string } | undefined
      if (typeof params.cursor === "string") {
        const pos = decodeCursor(input.op.name, params, params.cursor)
        if (typeof pos !== "string") return yield* Effect.fail(pos)
        const cut = pos.indexOf("|")
        const score = Number(pos.slice(0, cut))
        if (cut < 0 || !Number.isFinite(score)) {
          return yield* Effect.fail(
            apiError("invalid_cursor", "`cursor` is not a cursor this service issued", { param: "cursor" })
          )
        }
        after = { score, id: pos.slice(cut + 1) }
      }
      const universe = st.universe.get().core
      const all = yield* store.status
      const excluded: Record<string, number> = {}
      const rows: Array<{ asset_id: string; symbol: string; score: number; extreme_metrics: Array<string> }> = []
      let newest = 0
      let nextUpdate = Number.POSITIVE_INFINITY
      /** The freshest status among the scanned assets with data (`stale` when none has any). */
      let freshest: "live" | "delayed" | "stale" = "stale"
      for (const asset of universe) {
        const venues = venuesOf(asset)
        const statuses = all.filter((s) => venues.includes(s.venue))
        const s = yield* stateOf(asset, nowMs, statuses)
        const own = s.primaryNewestMs
        if (own === undefined || !Number.isFinite(s.current.price)) {
          excluded.no_data = (excluded.no_data ?? 0) + 1
          continue
        }
        const fresh = freshnessFor(asset, "rank", statuses, nowMs, own)
        nextUpdate = Math.min(nextUpdate, fresh.nextUpdateAtMs)
        if (fresh.status === "live" || (fresh.status === "delayed" && freshest === "stale")) freshest = fresh.status
        if (fresh.status !== "live") {
          excluded.source_stale = (excluded.source_stale ?? 0) + 1
          continue
        }
        if (w(s, "return_24h_pct").n < MinBaselineN) {
          excluded.insufficient_history = (excluded.insufficient_history ?? 0) + 1
          continue
        }
        newest = Math.max(newest, fresh.asOfMs)
        const extremes: Array<string> = []
        for (const [name, m] of Object.entries(RankMeasures)) {
          const v = s.current[m]
          const p = Number.isFinite(v) ? percentileRank(v, w(s, m).sortedValues) : undefined
          if (p !== undefined && isExtreme(p)) extremes.push(name)
        }
        let score: number
        if (metric === "extreme_count") score = extremes.length
        else {
          const m = RankMeasures[metric]
          const v = s.current[m]
          if (!Number.isFinite(v)) {
            excluded.no_data = (excluded.no_data ?? 0) + 1
            continue
          }
          score = roundFigure(metric, v)
        }
        rows.push({ asset_id: asset.id, symbol: asset.symbol, score, extreme_metrics: extremes })
      }
      const sign = direction === "top" ? -1 : 1
      rows.sort(
        (a, b) => sign * (a.score - b.score) || (a.asset_id < b.asset_id ? -1 : a.asset_id > b.asset_id ? 1 : 0)
      )
      const startAt =
        after === undefined
          ? 0
          : rows.findIndex((r) => {
              const cmp = sign * (r.score - (after as { score: number }).score)
              return cmp > 0 || (cmp === 0 && r.asset_id > (after as { id: string }).id)
            })
      const from = startAt < 0 ? rows.length : startAt
      const page = rows.slice(from, from + limit)
      const lastRow = page[page.length - 1]
      const next_cursor =
        from + limit < rows.length && lastRow !== undefined
          ? encodeCursor(input.op.name, params, `${lastRow.score}|${lastRow.asset_id}`)
          : null
      const excludedCount = Object.values(excluded).reduce((a, b) => a + b, 0)
      return {
        _tag: "Json" as const,
        body: {
          data: {
            as_of: iso(newest === 0 ? nowMs : newest),
            // Only live assets are ranked: a ranking with rows is live; an empty one says how fresh the
            // freshest scanned asset was (why nothing was ranked).
            status: rows.length > 0 ? "live" : freshest,
            next_update_at: iso(Number.isFinite(nextUpdate) ? nextUpdate : nowMs),
            metric,
            direction,
            rows: page,
            coverage: {
              scanned: universe.length,
              ranked: rows.length,
              excluded: excludedCount,
              excluded_by_reason: excluded
            },
            next_cursor
          }
        },
        creditsCharged: chargeFor(input.op, { rows: page.length }),
        ...(Number.isFinite(nextUpdate) ? { nextUpdateAtMs: nextUpdate } : {})
      }
    })
  return rank
}
