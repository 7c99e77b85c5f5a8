/**
 * The crypto directory: every registered asset with its tier and whether it is alive (its venues' bar feeds and
 * its own newest primary bar live now), for `resolve` and `coverage`; one asset's entry is remembered while
 * nothing that can change `alive` has happened.
 */
import { Clock, Effect } from "effect"
import type { DirectoryEntry } from "../../Planes.ts"
import { type CryptoAsset, CryptoAssets, cryptoAsset, directoryEntryOf } from "../Assets.ts"
import { BAR_MS, type SourceStatus } from "../Market.ts"
import { MaxMemoizedResults, nextChangeMs } from "./Result.ts"
import { freshnessFor, type PlaneState, primaryVenue } from "./State.ts"

/** The plane's `directory` and `lookup` over its state. */
export const makeDirectory = (
  st: PlaneState
): {
  readonly directory: Effect.Effect<ReadonlyArray<DirectoryEntry>>
  readonly lookup: (assetId: string) => Effect.Effect<DirectoryEntry | undefined>
} => {
  const { store, entries } = st
  const aliveOf = (asset: CryptoAsset, statuses: ReadonlyArray<SourceStatus>, nowMs: number) =>
    Effect.gen(function* () {
      const primary = primaryVenue(asset)
      if (primary === undefined) return false
      const extent = (yield* store.extent("bars", asset.id)).find((e) => e.venue === primary)
      if (extent === undefined) return false
      const f = freshnessFor(asset, "series", statuses, nowMs, Math.min(nowMs, extent.lastMs + BAR_MS))
      return f.status === "live"
    })

  const directory = Effect.gen(function* () {
    const nowMs = yield* Clock.currentTimeMillis
    const statuses = yield* store.status
    return yield* Effect.forEach(CryptoAssets, (a) =>
      Effect.map(aliveOf(a, statuses, nowMs), (alive) => directoryEntryOf(a, alive))
    )
  })

  const lookup = (assetId: string): Effect.Effect<DirectoryEntry | undefined> =>
    Effect.flatMap(Clock.currentTimeMillis, (nowMs) => {
      const revision = store.revision?.()
      const known = revision === undefined ? undefined : entries.get(assetId)
      if (known !== undefined && known.revision === revision && nowMs >= known.fromMs && nowMs < known.untilMs) {
        return Effect.succeed(known.entry)
      }
      return lookupNow(assetId, nowMs, revision)
    })

  const lookupNow = (assetId: string, nowMs: number, revision: number | undefined) =>
    Effect.gen(function* () {
      const a = cryptoAsset(assetId)
      if (a === undefined) return undefined
      const statuses = yield* store.status
      const entry = directoryEntryOf(a, yield* aliveOf(a, statuses, nowMs))
      if (revision !== undefined && store.revision?.() === revision) {
        const primary = primaryVenue(a)
        const extent =
          primary === undefined ? undefined : (yield* store.extent("bars", a.id)).find((e) => e.venue === primary)
        let untilMs =
          extent === undefined ? Number.POSITIVE_INFINITY : nextChangeMs(extent.lastMs + BAR_MS, BAR_MS, nowMs)
        for (const st of statuses) {
          untilMs =
            st.cadenceMs <= 0 || st.newestMs <= 0
              ? nowMs + 1
              : Math.min(untilMs, nextChangeMs(st.newestMs, st.cadenceMs, nowMs))
        }
        if (entries.size >= MaxMemoizedResults) entries.clear()
        entries.set(assetId, { revision, fromMs: nowMs, untilMs, entry })
      }
      return entry
    })
  return { directory, lookup }
}
