/**
 * `rank`: the core tier ranked by one metric, or by how many metrics sit in their tails (`extreme_count`), live
 * assets only; the coverage block counts what was scanned and why the rest was excluded.
 */
import { Deferred, Effect } from "effect"
import { chargeFor } from "../../Billing.ts"
import { decodeCursor, encodeCursor } from "../../Cursor.ts"
import { apiError } from "../../Errors.ts"
import { MinBaselineN } from "../../Percentile.ts"
import type { Handler, HandlerInput } from "../../Pipeline.ts"
import type { RankMetrics } from "../../Registry.ts"
import { isExtreme } from "../Assessment.ts"
import { BAR_MS, type SourceStatus } from "../Market.ts"
import type { MeasureName } from "../Measures.ts"
import { iso, nextChangeMs, roundFigure } from "./Result.ts"
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

interface RankRow {
  readonly asset_id: string
  readonly symbol: string
  readonly score: number
  readonly extreme_metrics: Array<string>
}

/** One scan of the core tier for one metric, and the pages' sort orders of it once computed. */
interface Scan {
  readonly version: symbol
  readonly revision: number
  readonly fromMs: number
  readonly untilMs: number
  readonly scanned: number
  readonly rows: ReadonlyArray<RankRow>
  readonly excluded: Readonly<Record<string, number>>
  readonly newest: number
  readonly nextUpdate: number
  readonly freshest: "live" | "delayed" | "stale"
  readonly sorted: { top?: ReadonlyArray<RankRow>; bottom?: ReadonlyArray<RankRow> }
  /**
   * The pages answered from this scan, serialized once: by direction, tier, limit and first row (the metric is
   * the scan's, and a cursor only ever resumes at a row). Only while the body does not depend on the clock.
   */
  readonly pages: Map<string, { readonly body: object; readonly text: string; readonly rows: number }>
}

/** Pages kept per scan (each a few kilobytes of JSON); beyond it they are dropped and rebuilt on demand. */
const MaxPagesPerScan = 256

/** The `rank` handler over a plane's state. */
export const makeRank = (st: PlaneState): Handler => {
  const { store, stateOf } = st

  /**
   * The scan of the whole core tier for one metric, remembered while nothing it depends on can have changed:
   * the same universe and store revision, and before the next minute (measures follow the minute while a bar
   * forms) or the next point of any status's or asset's freshness grid. A directory of a thousand core assets
   * then costs one scan per change, not one per request.
   */
  const scans = new Map<string, Scan>()
  /**
   * The scan being built for each metric, with what it is built from: the requests that arrive meanwhile (the
   * build yields to them) wait for it instead of scanning the whole tier once each. Its answer is `undefined`
   * when the build did not finish (interrupted); they then scan themselves.
   */
  const building = new Map<
    string,
    {
      readonly version: symbol
      readonly revision: number
      readonly fromMs: number
      readonly done: Deferred.Deferred<Scan | undefined>
    }
  >()
  const scanOf = (metric: (typeof RankMetrics)[number], nowMs: number): Effect.Effect<Scan> =>
    Effect.suspend(() => {
      const u = st.universe.get()
      const revision = store.revision?.()
      const holds = (scan: Scan | undefined): scan is Scan =>
        scan !== undefined &&
        revision !== undefined &&
        scan.version === u.version &&
        scan.revision === revision &&
        nowMs >= scan.fromMs &&
        nowMs < scan.untilMs
      const known = scans.get(metric)
      if (holds(known)) return Effect.succeed(known)
      if (revision === undefined) return buildScan(metric, nowMs, u, revision)
      const pending = building.get(metric)
      if (
        pending !== undefined &&
        pending.version === u.version &&
        pending.revision === revision &&
        nowMs >= pending.fromMs
      )
        return Effect.flatMap(Deferred.await(pending.done), (scan) =>
          holds(scan) ? Effect.succeed(scan) : buildScan(metric, nowMs, u, revision)
        )
      const done = Deferred.makeUnsafe<Scan | undefined>()
      const mine = { version: u.version, revision, fromMs: nowMs, done }
      building.set(metric, mine)
      return buildScan(metric, nowMs, u, revision).pipe(
        Effect.onExit((exit) =>
          Effect.sync(() => {
            if (building.get(metric) === mine) building.delete(metric)
            Deferred.doneUnsafe(done, Effect.succeed(exit._tag === "Success" ? exit.value : undefined))
          })
        )
      )
    })
  /** One scan of the core tier of universe `u` at `nowMs`, remembered when the store did not change meanwhile. */
  const buildScan = (
    metric: (typeof RankMetrics)[number],
    nowMs: number,
    u: ReturnType<PlaneState["universe"]["get"]>,
    revision: number | undefined
  ): Effect.Effect<Scan> =>
    Effect.gen(function* () {
      const universe = u.core
      const all = yield* store.status
      // Assets mostly share one venue set: their statuses are filtered once per set.
      const byVenues = new Map<ReadonlyArray<string>, Array<SourceStatus>>()
      const excluded: Record<string, number> = {}
      const rows: Array<RankRow> = []
      let newest = 0
      let nextUpdate = Number.POSITIVE_INFINITY
      /** The freshest status among the scanned assets with data (`stale` when none has any). */
      let freshest: "live" | "delayed" | "stale" = "stale"
      let untilMs = (Math.floor(nowMs / 60_000) + 1) * 60_000
      for (const s of all)
        if (s.cadenceMs > 0 && s.newestMs > 0) untilMs = Math.min(untilMs, nextChangeMs(s.newestMs, s.cadenceMs, nowMs))
      for (const asset of universe) {
        const venues = venuesOf(st.universe, asset)
        let statuses = byVenues.get(venues)
        if (statuses === undefined) {
          statuses = all.filter((s) => venues.includes(s.venue))
          byVenues.set(venues, statuses)
        }
        const s = yield* stateOf(asset, nowMs, statuses)
        const own = s.primaryNewestMs
        if (own === undefined || !Number.isFinite(s.current.price)) {
          excluded.no_data = (excluded.no_data ?? 0) + 1
          continue
        }
        // Its own bars' freshness: fixed while the newest bar is forming (its data runs to now), then on the
        // bar grid from the bar's end.
        untilMs = Math.min(
          untilMs,
          own < nowMs ? nextChangeMs(own, BAR_MS, nowMs) : Math.max(nowMs, s.barsEndMs ?? nowMs) + 1
        )
        const fresh = freshnessFor(st.universe, asset, "rank", statuses, nowMs, own)
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
          const p = Number.isFinite(v) ? w(s, m).rank(v) : undefined
          if (p !== undefined && isExtreme(p)) extremes.push(name)
        }
        let score: number
        if (metric === "extreme_count") score = extremes.length
        else {
          const m = RankMeasures[metric]
          const v = s.current[m]
          if (!Number.isFinite(v)) {
            // A window the bars held end to end do not cover (a hole in the history) is not missing data.
            const reason = s.shortWindows?.measures.includes(m) === true ? "insufficient_history" : "no_data"
            excluded[reason] = (excluded[reason] ?? 0) + 1
            continue
          }
          score = roundFigure(metric, v)
        }
        rows.push({ asset_id: asset.id, symbol: asset.symbol, score, extreme_metrics: extremes })
      }
      const scan: Scan = {
        version: u.version,
        revision: revision ?? -1,
        fromMs: nowMs,
        untilMs,
        scanned: universe.length,
        rows,
        excluded,
        newest,
        nextUpdate,
        freshest,
        sorted: {},
        pages: new Map()
      }
      if (revision !== undefined && store.revision?.() === revision) scans.set(metric, scan)
      return scan
    })
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
      const scan = yield* scanOf(metric, nowMs)
      const { rows, excluded, newest, nextUpdate, freshest, scanned } = scan
      const sign = direction === "top" ? -1 : 1
      const sorted =
        scan.sorted[direction] ??
        [...rows].sort(
          (a, b) => sign * (a.score - b.score) || (a.asset_id < b.asset_id ? -1 : a.asset_id > b.asset_id ? 1 : 0)
        )
      scan.sorted[direction] = sorted
      const startAt =
        after === undefined
          ? 0
          : sorted.findIndex((r) => {
              const cmp = sign * (r.score - (after as { score: number }).score)
              return cmp > 0 || (cmp === 0 && r.asset_id > (after as { id: string }).id)
            })
      const from = startAt < 0 ? sorted.length : startAt
      // A body with no clock in it (some asset's newest data and next update) is the same for every call
      // while the scan holds: it is built and serialized once.
      const timeless = newest !== 0 && Number.isFinite(nextUpdate)
      const pageKey = `${direction}\u0000${String(params.tier)}\u0000${limit}\u0000${from}`
      const known = timeless ? scan.pages.get(pageKey) : undefined
      if (known !== undefined) {
        return {
          _tag: "Json" as const,
          body: known.body,
          text: known.text,
          creditsCharged: chargeFor(input.op, { rows: known.rows }),
          nextUpdateAtMs: nextUpdate
        }
      }
      const page = sorted.slice(from, from + limit)
      const lastRow = page[page.length - 1]
      const next_cursor =
        from + limit < sorted.length && lastRow !== undefined
          ? encodeCursor(input.op.name, params, `${lastRow.score}|${lastRow.asset_id}`)
          : null
      const excludedCount = Object.values(excluded).reduce((a, b) => a + b, 0)
      const body = {
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
            scanned,
            ranked: rows.length,
            excluded: excludedCount,
            excluded_by_reason: excluded
          },
          next_cursor
        }
      }
      let text: string | undefined
      if (timeless) {
        text = JSON.stringify(body)
        if (scan.pages.size >= MaxPagesPerScan) scan.pages.clear()
        scan.pages.set(pageKey, { body, text, rows: page.length })
      }
      return {
        _tag: "Json" as const,
        body,
        ...(text === undefined ? {} : { text }),
        creditsCharged: chargeFor(input.op, { rows: page.length }),
        ...(Number.isFinite(nextUpdate) ? { nextUpdateAtMs: nextUpdate } : {})
      }
    })
  return rank
}
