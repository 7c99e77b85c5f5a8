/**
 * `structure`: trend state and the last break of structure on one timeframe, and the session levels of the last
 * two days (`structureOf`, which `read` also uses for its trend). The rules are in `../Structure.ts`.
 */
import { Effect } from "effect"
import type { PlaneForAsset } from "../../Planes.ts"
import type { CryptoAsset } from "../Assets.ts"
import { runStartIndex } from "../Contiguity.ts"
import { DAY_MS, HOUR_MS } from "../Market.ts"
import { StructureBars, StructureRule, sessionLevels } from "../Structure.ts"
import { perAsset } from "./Operation.ts"
import { type Gaps, iso, roundValue } from "./Result.ts"
import { type PlaneState, primaryVenue, type Timeframe } from "./State.ts"
import { timeframeParam } from "./Technicals.ts"

/**
 * The structure of an asset on a timeframe with its session levels, filling `gaps` with what is missing: the
 * body of `structure` and the trend of `read`.
 */
export const makeStructureOf = (st: PlaneState) => {
  const { store, timeframeOf, sessions: sessionsCache } = st
  /**
   * Session levels from the last two days of 15 m bars held end to end up to the newest, cached per newest bar,
   * hour and the store's revision of the asset's series (history filled in behind changes them).
   */
  const sessionsOf = (asset: CryptoAsset, primary: string, nowMs: number) =>
    Effect.gen(function* () {
      const newest = (yield* store.latest("bars", { assetId: asset.id, venue: primary, n: 1, atMs: nowMs }))[0]
      const revision = store.seriesRevision?.(asset.id) ?? store.revision?.() ?? 0
      const key = `${newest?.t[0] ?? 0}:${newest?.close[0] ?? 0}:${Math.floor(nowMs / HOUR_MS)}:${revision}`
      const cached = sessionsCache.get(asset.id)
      if (cached !== undefined && cached.key === key) return cached.value
      const recent = (yield* store.read("bars", {
        assetId: asset.id,
        venue: primary,
        fromMs: nowMs - 2 * DAY_MS,
        toMs: nowMs
      }))[0]
      const value =
        recent === undefined
          ? undefined
          : sessionLevels(recent, nowMs, recent.t[runStartIndex(recent.t, recent.t.length - 1)] as number)
      sessionsCache.set(asset.id, { key, value })
      return value
    })

  const structureOf = (asset: CryptoAsset, timeframe: Timeframe, nowMs: number, gaps: Gaps) =>
    Effect.gen(function* () {
      const tf = yield* timeframeOf(asset, timeframe, nowMs)
      const primary = primaryVenue(asset)
      const sessions = primary === undefined ? undefined : yield* sessionsOf(asset, primary, nowMs)
      const bars = tf?.closedBars
      const trend = tf?.trend
      const bos = tf?.bos
      const sessionBlock: Record<string, unknown> = {}
      if (sessions !== undefined) {
        for (const [name, s] of Object.entries(sessions.sessions)) {
          sessionBlock[name] = {
            high: roundValue(s.high),
            low: roundValue(s.low),
            start: iso(s.start),
            end: iso(s.end),
            complete: s.complete
          }
        }
        if (sessions.prior_day !== undefined) {
          sessionBlock.prior_day = {
            high: roundValue(sessions.prior_day.high),
            low: roundValue(sessions.prior_day.low),
            date: iso(sessions.prior_day.date).slice(0, 10)
          }
        }
        for (const name of sessions.uncovered) {
          gaps.add(
            `session_levels.${name}`,
            "insufficient_history",
            "began before the 15 m bars held without a gap up to the newest bar"
          )
        }
      }
      return {
        timeframe,
        trend_state:
          trend ??
          gaps.add(
            "trend_state",
            bars === undefined ? "no_data" : "insufficient_history",
            "needs two swing highs and two swing lows"
          ),
        last_bos:
          bos === undefined
            ? gaps.add(
                "last_bos",
                bars === undefined ? "no_data" : "insufficient_history",
                `no break of structure in the last ${StructureBars} closed bars`
              )
            : { direction: bos.direction, level: roundValue(bos.level), at: iso(bos.at), swing_at: iso(bos.swing_at) },
        session_levels: Object.keys(sessionBlock).length === 0 ? gaps.add("session_levels", "no_data") : sessionBlock,
        rule: StructureRule
      }
    })

  return structureOf
}

/** See `makeStructureOf`. */
export type StructureOf = ReturnType<typeof makeStructureOf>

/** `structure` over a plane's state. */
export const makeStructure = (st: PlaneState, structureOf: StructureOf): PlaneForAsset => {
  const structure = perAsset(st, "structure", ({ asset, params, nowMs, gaps }) =>
    Effect.map(structureOf(asset, timeframeParam(params), nowMs, gaps), ({ rule: _rule, ...rest }) => rest)
  )
  return structure
}
