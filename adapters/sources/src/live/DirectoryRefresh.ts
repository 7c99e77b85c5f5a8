/**
 * One refresh of the asset directory: each venue's instrument list fetched and parsed (`Listings.ts`), the
 * venues that answered merged into the stored directory in one step (`AssetDirectoryStore.merge`), the others
 * left as they were. This is the step the hourly listing job runs (`DirectoryJob.ts`: its schedule, backoff,
 * coin list and `sources` status).
 *
 * - A venue whose fetch or parse fails contributes nothing: its listings keep their last good state (a failed
 *   directory fetch never delists anything), and the report carries its error.
 * - What a venue lists but the directory does not take is in the report (`skipped`, each with its reason), for
 *   the `sources` detail: nothing is dropped silently.
 * - New assets are named from the cached coin list, or the bundled well-known coins when none was fetched yet.
 */
import {
  AssetDirectoryStore,
  coinIndex,
  type MergeResult,
  type ObservedListing,
  type SkippedListing,
  wellKnownCoins
} from "@market-data/core"
import { Effect } from "effect"
import type { SourceError } from "./Http.ts"
import { ListingParsers } from "./Listings.ts"
import { decode } from "./Parse.ts"
import type { LiveVenue } from "./Venue.ts"

/** Where one venue's instrument list comes from: the parsed JSON body of its listing endpoint. */
export interface ListingSource {
  readonly venue: LiveVenue
  readonly fetch: Effect.Effect<unknown, SourceError>
}

export type VenueRefresh =
  | {
      readonly venue: LiveVenue
      readonly ok: true
      readonly listings: number
      readonly skipped: ReadonlyArray<SkippedListing>
    }
  | { readonly venue: LiveVenue; readonly ok: false; readonly error: SourceError }

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
          Effect.flatMap((body) => decode(s.venue, "instrument list", body, ListingParsers[s.venue])),
          Effect.map((parsed) => ({ venue: s.venue, parsed })),
          Effect.result
        ),
      { concurrency: "unbounded" }
    )
    const snapshots: Array<{ venue: string; listings: ReadonlyArray<ObservedListing> }> = []
    const venues: Array<VenueRefresh> = []
    fetched.forEach((r, i) => {
      const venue = (sources[i] as ListingSource).venue
      if (r._tag === "Failure") {
        venues.push({ venue, ok: false, error: r.failure })
        return
      }
      snapshots.push({ venue, listings: r.success.parsed.listings })
      venues.push({ venue, ok: true, listings: r.success.parsed.listings.length, skipped: r.success.parsed.skipped })
    })
    const cached = yield* store.coinList
    const coins = coinIndex(cached?.coins ?? wellKnownCoins)
    const merge = yield* store.merge(snapshots, { coins, nowMs })
    return { venues, merge }
  })
