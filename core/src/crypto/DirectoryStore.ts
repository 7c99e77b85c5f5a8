/**
 * The asset directory store port: where the crypto directory (`Directory.ts`) and the cached public coin list
 * live, in memory, PGlite or PostgreSQL alike (`core/test/contracts/DirectoryStoreContract.ts` holds all three to
 * one behaviour).
 *
 * Guarantees every implementation keeps:
 * - `merge` loads, folds one refresh in with `mergeDirectory` and saves, as one step: two instances merging at
 *   once never both create an asset for one listing, nor lose either refresh.
 * - Nothing is ever removed: `save` upserts the assets it is given and leaves any other stored asset as it is,
 *   and a venue symbol (of one market: `listingKey`) belongs to one asset (`save` refuses a directory that gives one symbol to two assets, or a
 *   symbol to another asset than the stored one, as a defect: IDs never change meaning).
 * - `load` answers the stored assets over the seed directory's (`seedDirectory`): a seed asset never saved is
 *   there as the seed writes it, so a first start needs nothing but the code.
 */
import { Context, Data, type Effect } from "effect"
import {
  type AssetDirectory,
  type CoinEntry,
  type CoinIndex,
  listingKey,
  type MergeResult,
  type VenueSnapshot
} from "./Directory.ts"

/** A cached public coin list (CoinGecko `coins/list` shape) and when it was fetched. */
export interface CoinList {
  readonly coins: ReadonlyArray<CoinEntry>
  readonly fetchedMs: number
}

/** A directory that would give a venue symbol to another asset than the one holding it (a defect). */
export class DirectoryConflict extends Data.TaggedError("DirectoryConflict")<{
  readonly venue: string
  readonly symbol: string
  readonly heldBy: string
  readonly claimedBy: string
}> {
  override get message() {
    return `${this.venue} ${this.symbol} belongs to ${this.heldBy}; ${this.claimedBy} cannot take it (asset IDs are permanent)`
  }
}

export class AssetDirectoryStore extends Context.Service<
  AssetDirectoryStore,
  {
    /** The stored directory over the seed's, assets by ID. */
    readonly load: Effect.Effect<AssetDirectory>
    /** Upserts `directory`'s assets (others stay); dies with `DirectoryConflict` if a symbol would change hands. */
    readonly save: (directory: AssetDirectory) => Effect.Effect<void>
    /** Folds one refresh into the stored directory and saves the result, atomically. */
    readonly merge: (
      snapshots: ReadonlyArray<VenueSnapshot>,
      context: { readonly coins: CoinIndex; readonly nowMs: number }
    ) => Effect.Effect<MergeResult>
    /** The cached coin list, or undefined when none was fetched yet (then use the bundled `wellKnownCoins`). */
    readonly coinList: Effect.Effect<CoinList | undefined>
    /** Replaces the cached coin list. */
    readonly saveCoinList: (list: CoinList) => Effect.Effect<void>
  }
>()("market-data/core/AssetDirectoryStore") {}

/**
 * The symbol conflicts of saving `next` over `stored`: a venue symbol given to two assets in `next`, or to
 * another asset than the one `stored` gives it to. Shared by the implementations so they refuse alike.
 */
export const directoryConflicts = (stored: AssetDirectory, next: AssetDirectory): ReadonlyArray<DirectoryConflict> => {
  const holder = new Map<string, string>()
  for (const a of stored.assets) for (const l of a.listings) holder.set(listingKey(l), a.id)
  const claimed = new Map<string, string>()
  const out: Array<DirectoryConflict> = []
  for (const a of next.assets) {
    for (const l of a.listings) {
      const key = listingKey(l)
      const other = claimed.get(key)
      if (other !== undefined && other !== a.id) {
        out.push(new DirectoryConflict({ venue: l.venue, symbol: l.symbol, heldBy: other, claimedBy: a.id }))
        continue
      }
      claimed.set(key, a.id)
      const held = holder.get(key)
      if (held !== undefined && held !== a.id)
        out.push(new DirectoryConflict({ venue: l.venue, symbol: l.symbol, heldBy: held, claimedBy: a.id }))
    }
  }
  return out
}
