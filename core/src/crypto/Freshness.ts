/**
 * Freshness clocks of a crypto result (DECISIONS, "Freshness status"), from the status of the source
 * components that fed it (`SourceStatus`: newest input time, cadence, failing).
 *
 * - `status`: the least fresh of the inputs (`freshnessOf` per component: `live` within one cadence of its
 *   newest input, `delayed` up to three cadences, `stale` beyond or while the source is failing).
 * - `as_of`: the newest input time among them (the result includes data up to then).
 * - `next_update_at`: the earliest time new data can exist: the earliest `newest + cadence` among the inputs,
 *   and never before `now` (an input already due can change at any moment).
 */
import { type Component, type Freshness, freshnessOf, type SourceStatus } from "./Market.ts"

/** Cadences an input may be old and still be `delayed` rather than `stale` (as `freshnessOf` applies it). */
export const DelayedCadences = 3

/** Earliest time (epoch ms) new data of one component can exist. */
export const nextUpdateAtMs = (
  s: Pick<SourceStatus, "newestMs" | "cadenceMs" | "updateEveryMs">,
  nowMs: number
): number => {
  // A pushed source (a stream) can deliver again sooner than its freshness cadence.
  const step = s.updateEveryMs ?? s.cadenceMs
  const due = s.newestMs + step
  if (due >= nowMs || step <= 0) return Math.max(due, nowMs)
  // Late: the next slot on the source's grid, not "now". The source delivers on that grid, and the answer (with
  // its ETag) stays the same until the slot passes instead of changing every millisecond.
  return s.newestMs + Math.ceil((nowMs - s.newestMs) / step) * step
}

/** The least fresh of several statuses. */
export const worstStatus = (statuses: ReadonlyArray<Freshness>): Freshness =>
  statuses.includes("stale") ? "stale" : statuses.includes("delayed") ? "delayed" : "live"

/** The freshness clocks of one result. */
export interface ResultFreshness {
  readonly asOfMs: number
  readonly status: Freshness
  readonly nextUpdateAtMs: number
}

/**
 * Freshness of a result fed by `components` of `venues`, from the store's source statuses; undefined when no
 * status matches (nothing has ever been delivered for them).
 */
export const resultFreshness = (
  statuses: ReadonlyArray<SourceStatus>,
  venues: ReadonlyArray<string>,
  components: ReadonlyArray<Component>,
  nowMs: number
): ResultFreshness | undefined => {
  const used = statuses.filter((s) => venues.includes(s.venue) && components.includes(s.component))
  if (used.length === 0) return undefined
  const newest = Math.max(...used.map((s) => s.newestMs))
  return {
    // Nothing delivered yet (a live source failing since start): the result is as of now, and stale.
    asOfMs: newest > 0 ? newest : nowMs,
    status: worstStatus(used.map((s) => freshnessOf(s, nowMs))),
    nextUpdateAtMs: Math.min(...used.map((s) => nextUpdateAtMs(s, nowMs)))
  }
}
