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
 *   the `sources` detail: nothing is dropped silently.
 * - New assets are named from the cached coin list, or the bundled well-known coins when none was fetched yet.
 */
import {
  AssetDirectoryStore,
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
    return { venues, merge }
  })
