/**
 * The crypto directory: every asset of the plane's universe (`../Universe.ts`: the registry, or live mode's
 * asset directory) with its tier and whether it is alive (listed somewhere now, its venues' bar feeds and its
 * own newest primary bar live now), for `resolve` and `coverage`. One asset's entry, and the whole list, are
 * remembered while nothing that can change `alive` has happened (same universe, same store revision, before the
 * next point of a source's cadence grid), so a directory of a thousand assets costs a lookup per request.
 */
import { Clock, Effect } from "effect"
import type { DirectoryEntry } from "../../Planes.ts"
import type { CryptoAsset } from "../Assets.ts"
import { BAR_MS, type SourceStatus } from "../Market.ts"
import { nextChangeMs } from "./Result.ts"
import { freshnessFor, type PlaneState, primaryVenue } from "./State.ts"

/** The plane's `directory` and `lookup` over its state. */
export const makeDirectory = (
  st: PlaneState
): {
  readonly directory: Effect.Effect<ReadonlyArray<DirectoryEntry>>
  readonly lookup: (assetId: string) => Effect.Effect<DirectoryEntry | undefined>
} => {
  const { store, entries, universe } = st
  /** The whole list while its entries hold (`entries` validity, per universe version). */
  let list:
    | {
        readonly version: symbol
        readonly revision: number
        readonly fromMs: number
        readonly untilMs: number
        readonly entries: ReadonlyArray<DirectoryEntry>
      }
    | undefined
  /** The entry of `asset` in universe `u` with `alive` as of now: listed there, and its data live. */
  const entryOf = (base: DirectoryEntry, alive: boolean): DirectoryEntry =>
    base.alive === alive ? base : { ...base, alive }
  const aliveOf = (asset: CryptoAsset, statuses: ReadonlyArray<SourceStatus>, nowMs: number) =>
    Effect.gen(function* () {
      const primary = primaryVenue(asset)
      if (primary === undefined) return false
      const extent = (yield* store.extent("bars", asset.id)).find((e) => e.venue === primary)
      if (extent === undefined) return false
      const f = freshnessFor(universe, asset, "series", statuses, nowMs, Math.min(nowMs, extent.lastMs + BAR_MS))
      return f.status === "live"
    })

  const directory = Effect.gen(function* () {
    const nowMs = yield* Clock.currentTimeMillis
    const u = universe.get()
    const revision = store.revision?.()
    if (
      list !== undefined &&
      revision !== undefined &&
      list.version === u.version &&
      list.revision === revision &&
      nowMs >= list.fromMs &&
      nowMs < list.untilMs
    )
      return list.entries
    const out: Array<DirectoryEntry> = []
    let untilMs = Number.POSITIVE_INFINITY
    for (const a of u.assets) {
      const entry = yield* lookupAt(a.id, nowMs)
      if (entry === undefined) continue
      out.push(entry)
      const known = entries.get(a.id)
      untilMs =
        known !== undefined && known.revision === revision && known.version === u.version
          ? Math.min(untilMs, known.untilMs)
          : nowMs + 1
    }
    if (revision !== undefined && store.revision?.() === revision)
      list = { version: u.version, revision, fromMs: nowMs, untilMs, entries: out }
    return out
  })

  const lookup = (assetId: string): Effect.Effect<DirectoryEntry | undefined> =>
    Effect.flatMap(Clock.currentTimeMillis, (nowMs) => lookupAt(assetId, nowMs))

  const lookupAt = (assetId: string, nowMs: number): Effect.Effect<DirectoryEntry | undefined> => {
    const u = universe.get()
    const revision = store.revision?.()
    const known = revision === undefined ? undefined : entries.get(assetId)
    if (
      known !== undefined &&
      known.revision === revision &&
      known.version === u.version &&
      nowMs >= known.fromMs &&
      nowMs < known.untilMs
    ) {
      return Effect.succeed(known.entry)
    }
    return lookupNow(assetId, nowMs, revision, u.version)
  }

  const lookupNow = (assetId: string, nowMs: number, revision: number | undefined, version: symbol) =>
    Effect.gen(function* () {
      const u = universe.get()
      const a = u.byId.get(assetId)
      const base = u.entries.get(assetId)
      if (a === undefined || base === undefined) return undefined
      const statuses = yield* store.status
      // Listed nowhere now (the directory says so): not alive, whatever data it left behind.
      const entry = entryOf(base, base.alive && (yield* aliveOf(a, statuses, nowMs)))
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
        entries.set(assetId, { revision, version, fromMs: nowMs, untilMs, entry })
      }
      return entry
    })
  return { directory, lookup }
}
