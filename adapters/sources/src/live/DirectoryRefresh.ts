/**
 * One refresh of the asset directory: each venue's perpetual and spot lists fetched and parsed (`Listings.ts`),
 * the lists that answered merged into the stored directory in one step (`AssetDirectoryStore.merge`), the others
 * left as they were. This is the step the hourly listing job runs (`DirectoryJob.ts`: its schedule, backoff,
 * coin list and `sources` status).
 *
 * - A list (a venue's perpetuals, or its spot pairs) whose fetch or parse fails contributes nothing: its
 *   listings keep their last good state (a failed
 *   directory fetch never delists anything), and the report carries its error.
 * - What a venue lists but the directory does not take is in the report (`skipped`, each with its reason), for
 *   the `sources` detail, and so is a trading perpetual the directory takes but the feeds do not ingest because
 *   another symbol of its asset on that venue feeds it (`same_asset`, `unfedPerpetuals`): nothing is dropped
 *   silently.
 * - New assets are named from the cached coin list, or the bundled well-known coins when none was fetched yet.
 */
import {
  type AssetDirectory,
  AssetDirectoryStore,
  assetOfDirectory,
  coinIndex,
  type MergeResult,
  type SkippedListing,
  type VenueSnapshot,
  wellKnownCoins
} from "@market-data/core"
import { Effect } from "effect"
import type { SourceError } from "./Http.ts"
import { ListingParsers, SpotListingParsers } from "./Listings.ts"
import { decode } from "./Parse.ts"
import type { LiveVenue } from "./Venue.ts"

/** Where one venue's list of one market comes from: the parsed JSON body of its listing endpoint. */
export interface ListingSource {
  readonly venue: LiveVenue
  /** Default `perp`. */
  readonly market?: "perp" | "spot"
  readonly fetch: Effect.Effect<unknown, SourceError>
}

export type VenueRefresh =
  | {
      readonly venue: LiveVenue
      readonly market: "perp" | "spot"
      readonly ok: true
      readonly listings: number
      readonly skipped: ReadonlyArray<SkippedListing>
    }
  | { readonly venue: LiveVenue; readonly market: "perp" | "spot"; readonly ok: false; readonly error: SourceError }

export interface RefreshReport {
  readonly venues: ReadonlyArray<VenueRefresh>
  readonly merge: MergeResult
}

/**
 * The trading perpetuals of `venue` in `directory` that the feeds do not ingest: the universe serves one listing
 * per asset and venue (`assetOfDirectory`), so a second symbol of an asset there (`BTCUSDC` beside `BTCUSDT`) is
 * named `same_asset`, with the symbol that feeds the asset.
 */
export const unfedPerpetuals = (directory: AssetDirectory, venue: string): ReadonlyArray<SkippedListing> => {
  const unfed: Array<SkippedListing> = []
  for (const a of directory.assets) {
    const trading = a.listings.filter((l) => l.venue === venue && l.market === "perp" && l.status === "trading")
    if (trading.length === 0) continue
    const fed = assetOfDirectory(a).asset.listings.find((l) => l.venue === venue && l.market === "perp")
    for (const l of trading)
      if (l.symbol !== fed?.symbol)
        unfed.push({
          venue,
          symbol: l.symbol,
          reason: "same_asset",
          detail: fed === undefined ? `${a.id}: not fed` : `${a.id} fed from ${fed.symbol}`
        })
  }
  return unfed
}

/** Fetches and parses every source (concurrently), then merges the venues that answered. */
export const refreshDirectory = (
  sources: ReadonlyArray<ListingSource>,
  nowMs: number
): Effect.Effect<RefreshReport, never, AssetDirectoryStore> =>
  Effect.gen(function* () {
    const store = yield* AssetDirectoryStore
    const fetched = yield* Effect.forEach(
      sources,
      (s) =>
        s.fetch.pipe(
          Effect.flatMap((body) =>
            s.market === "spot"
              ? decode(s.venue, "spot list", body, SpotListingParsers[s.venue])
              : decode(s.venue, "instrument list", body, ListingParsers[s.venue])
          ),
          Effect.map((parsed) => ({ venue: s.venue, parsed })),
          Effect.result
        ),
      { concurrency: "unbounded" }
    )
    const snapshots: Array<VenueSnapshot> = []
    const venues: Array<VenueRefresh> = []
    fetched.forEach((r, i) => {
      const source = sources[i] as ListingSource
      const { venue } = source
      const market = source.market ?? "perp"
      if (r._tag === "Failure") {
        venues.push({ venue, market, ok: false, error: r.failure })
        return
      }
      // Each list delists only its own market's listings that it no longer shows.
      snapshots.push({ venue, markets: [market], listings: r.success.parsed.listings })
      venues.push({
        venue,
        market,
        ok: true,
        listings: r.success.parsed.listings.length,
        skipped: r.success.parsed.skipped
      })
    })
    const cached = yield* store.coinList
    const coins = coinIndex(cached?.coins ?? wellKnownCoins)
    const merge = yield* store.merge(snapshots, { coins, nowMs })
    // A perpetual list that answered also names its perpetuals another symbol of their asset feeds.
    const named = venues.map((v) =>
      v.ok && v.market === "perp" ? { ...v, skipped: [...v.skipped, ...unfedPerpetuals(merge.directory, v.venue)] } : v
    )
    return { venues: named, merge }
  })
