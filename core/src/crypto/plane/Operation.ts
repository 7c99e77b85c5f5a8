/**
 * The frame of every per-asset crypto operation (`perAsset`): the asset, its statuses, state and freshness,
 * the `unavailable` block, the clocks, and the result memo that serves an unchanged answer again while nothing
 * it depends on has moved (`validUntilOf`).
 */
import { Effect } from "effect"
import type { ApiError } from "../../Errors.ts"
import type { CanonicalParams } from "../../Params.ts"
import type { PlaneForAsset } from "../../Planes.ts"
import type { CryptoAsset } from "../Assets.ts"
import type { ResultFreshness } from "../Freshness.ts"
import { BAR_MS, HOUR_MS, type SourceStatus } from "../Market.ts"
import { clocks, Gaps, nextChangeMs, paramsKey } from "./Result.ts"
import {
  type AssetState,
  assetOf,
  freshnessFor,
  OperationComponents,
  type PlaneState,
  statusesReadBy
} from "./State.ts"

/**
 * Until when (exclusive) a per-asset result built at `nowMs` stays the same if nothing is written. The clock
 * enters a result only through freshness (statuses and `next_update_at` change just after a point of a
 * source's cadence grid, `newest + k * cadence`), the asset's state (its measure time follows the minute while
 * the newest bar is forming, and stops at the bar's end) and the session levels (per hour). Conservative:
 * every source's grid counts, whether the result reads that source or not; a result timed "now" (nothing
 * delivered yet) is not reused at all.
 */
export const validUntilOf = (
  statuses: ReadonlyArray<SourceStatus>,
  state: AssetState,
  fresh: ResultFreshness,
  nowMs: number
): number => {
  if (fresh.asOfMs === nowMs) return nowMs + 1
  let until = (Math.floor(nowMs / HOUR_MS) + 1) * HOUR_MS
  if (state.barsEndMs === undefined || state.barsEndMs >= nowMs) {
    until = Math.min(until, (Math.floor(nowMs / 60_000) + 1) * 60_000)
  }
  if (state.barsEndMs !== undefined) until = Math.min(until, nextChangeMs(state.barsEndMs, BAR_MS, nowMs))
  for (const s of statuses) {
    if (s.cadenceMs <= 0 || s.newestMs <= 0) return nowMs + 1
    until = Math.min(until, nextChangeMs(s.newestMs, Math.min(s.cadenceMs, s.updateEveryMs ?? s.cadenceMs), nowMs))
  }
  return until
}

/**
 * Whether an operation reads the streamed state (`QuoteBoard.ts`): books or funding states, or the streamed open
 * interest (`open_interest`).
 */
const readsStreamed = (op: string): boolean =>
  op === "open_interest" || (OperationComponents[op] ?? []).some((c) => c === "books" || c === "fundingState")

/** What a per-asset operation builds its body from. */
export interface OperationContext {
  readonly asset: CryptoAsset
  readonly params: CanonicalParams
  readonly nowMs: number
  readonly statuses: ReadonlyArray<SourceStatus>
  readonly state: AssetState
  readonly gaps: Gaps
  readonly fresh: ResultFreshness
}

/** Runs `build` with the asset, its statuses and state, for one per-asset operation `op` of the plane. */
export const perAsset = (
  st: PlaneState,
  op: string,
  build: (ctx: OperationContext) => Effect.Effect<object, ApiError>
): PlaneForAsset => {
  const { store, results, statusesOf, stateOf } = st
  // A result depends on the store's content (its revision), the parameters and the clock only through
  // the moments listed in `validUntilOf`: until the first of them, with nothing written meanwhile, the
  // same answer is served again instead of being rebuilt.
  // What reads streamed state (books, funding states) changes with the asset's quotes, the rest only with writes.
  // Which revision that is depends on the operation alone: chosen once, not at every request.
  const revisionNow: (assetId: string) => number | undefined = !readsStreamed(op)
    ? () => store.revision?.()
    : store.quotesRevisionOf !== undefined
      ? (assetId) => store.quotesRevisionOf?.(assetId)
      : () => (store.quotesRevision ?? store.revision)?.()
  // The memo key of each parameter set met, by asset: decoded parameters are frozen and reused for a request seen
  // before (`decodeParams`), so the key is built once per parameter set instead of at every request.
  const memoKeys = new WeakMap<object, Map<string, string>>()
  const memoKeyOf = (assetId: string, params: CanonicalParams): string => {
    let byAsset = memoKeys.get(params)
    if (byAsset === undefined) {
      byAsset = new Map()
      memoKeys.set(params, byAsset)
    }
    let key = byAsset.get(assetId)
    if (key === undefined) {
      key = `${op}\u0000${assetId}\u0000${paramsKey(params)}`
      byAsset.set(assetId, key)
    }
    return key
  }
  return (entry, params, input) => {
    const nowMs = input.nowMs
    const assetId = entry.asset_id
    const revision = revisionNow(assetId)
    const memoKey = memoKeyOf(assetId, params)
    const memo = revision === undefined ? undefined : results.get(memoKey)
    if (memo !== undefined && memo.revision === revision && nowMs >= memo.fromMs && nowMs < memo.untilMs) {
      return Effect.succeed(memo.value)
    }
    return Effect.gen(function* () {
      const asset = yield* assetOf(st, entry)
      const statuses = yield* statusesOf(asset)
      const state = yield* stateOf(asset, nowMs, statuses)
      // The data's end as of now (the state is kept per minute; a forming bar's end is in the future: now).
      const dataEndMs = state.barsEndMs === undefined ? undefined : Math.min(nowMs, state.barsEndMs)
      const fresh = freshnessFor(st.universe, asset, op, statuses, nowMs, dataEndMs)
      const gaps = new Gaps()
      const body = yield* build({ asset, params, nowMs, statuses, state, gaps, fresh })
      if (statusesReadBy(st.universe, asset, op, statuses).some((s) => s.failing)) {
        gaps.blameFailingSource()
      }
      // `body` may refine `next_update_at` (technicals change only when a bar closes).
      const value = { asset_id: asset.id, ...clocks(fresh), ...body, ...gaps.block }
      // Only when nothing was written meanwhile (a write during the build may or may not be in it).
      const after = revisionNow(assetId)
      if (revision !== undefined && after === revision) {
        results.set(memoKey, { revision, fromMs: nowMs, untilMs: validUntilOf(statuses, state, fresh, nowMs), value })
      }
      return value
    })
  }
}
