/**
 * The crypto plane: what `read`, the crypto domain operations, `series`, `rank` and the crypto directory
 * answer, computed from the `MarketStore` (`Market.ts`) and the asset registry (`Assets.ts`). It plugs into
 * the operations through `PlaneOperations` (`Planes.ts`), which decides refusals before any of this runs.
 *
 * Every measured value is a contextual value `{value, pctl}` against its own hourly baseline (`Baselines.ts`);
 * a value that cannot be computed is `null` and named under `unavailable` with its reason. The baselines and
 * the current measures of each asset are cached and advanced incrementally (the first request for an asset
 * samples its history once).
 *
 * This file only assembles the plane. Each operation family lives in `plane/`, over one shared state per
 * plane (`plane/State.ts`: the store, the caches, loading, baselines, warm-up):
 *
 * - `plane/Operation.ts`: the frame of every per-asset operation (freshness, `unavailable`, the result memo);
 *   `plane/Result.ts`: printing of figures and times, `Gaps`, clocks;
 * - `plane/Price.ts` (`price`), `plane/Funding.ts` (`funding`), `plane/Flow.ts` (`open_interest`, `orderflow`,
 *   `liquidations`), `plane/Liquidity.ts` (`liquidity`), `plane/Technicals.ts` (`technicals`),
 *   `plane/Structure.ts` (`structure`), `plane/Read.ts` (`read`);
 * - `plane/Series.ts` (`series`), `plane/Rank.ts` (`rank`), `plane/Directory.ts` (the directory and `lookup`).
 */
import { Effect } from "effect"
import type { Handler } from "../Pipeline.ts"
import type { PlaneForAsset, PlaneOperations } from "../Planes.ts"
import { MarketStore } from "./Market.ts"
import { makeDirectory } from "./plane/Directory.ts"
import { makeFlow } from "./plane/Flow.ts"
import { makeFunding } from "./plane/Funding.ts"
import { makeLiquidity } from "./plane/Liquidity.ts"
import { makePrice } from "./plane/Price.ts"
import { makeRank } from "./plane/Rank.ts"
import { makeRead } from "./plane/Read.ts"
import { makeSeries } from "./plane/Series.ts"
import { makePlaneState, makeWarm } from "./plane/State.ts"
import { makeStructure, makeStructureOf } from "./plane/Structure.ts"
import { makeTechnicals } from "./plane/Technicals.ts"
import { makeUniverseRef, staticUniverse, type UniverseRef } from "./Universe.ts"

export { quoteOf } from "./plane/Price.ts"

/** The crypto plane's operations, and a warm-up the composition root may fork once the feed has backfilled. */
export interface CryptoPlane extends PlaneOperations {
  /**
   * Samples every priced asset's baselines and its default-timeframe technicals now, so the first requests
   * (a `rank` scans the whole core tier) do not pay for it. Optional: everything also happens on demand.
   */
  readonly warm: Effect.Effect<void>
  /**
   * The same for one asset (its baselines sampled up to now, its default-timeframe technicals), for a feed
   * that fills the store asset by asset; unknown or unpriced assets are skipped.
   */
  readonly warmAsset: (assetId: string) => Effect.Effect<void>
}

/**
 * Builds the crypto plane over the market store in context. Results are computed on demand and cached per
 * asset; the Clock gives "now" where the pipeline does not.
 */
export const makeCryptoPlane: Effect.Effect<CryptoPlane, never, MarketStore> = Effect.suspend(() =>
  makeCryptoPlaneOver(makeUniverseRef(staticUniverse))
)

/**
 * The crypto plane over the universe in `universe` (live mode: the asset directory, replaced after each listing
 * refresh; `makeCryptoPlane` serves the hand-written registry).
 */
export const makeCryptoPlaneOver = (universe: UniverseRef): Effect.Effect<CryptoPlane, never, MarketStore> =>
  Effect.gen(function* () {
    const st = makePlaneState(yield* MarketStore, universe)
    const { openInterest, orderflow, liquidations } = makeFlow(st)
    const structureOf = makeStructureOf(st)
    const { directory, lookup } = makeDirectory(st)
    const { warm, warmAsset } = makeWarm(st)
    const store = st.store
    // The universe counts in the revision: a new universe can change an asset's entry (its tier, its listings).
    let seenUniverse = universe.get()
    let universes = 0
    const plane: CryptoPlane = {
      plane: "crypto",
      perAsset: new Map<string, PlaneForAsset>([
        ["read", makeRead(st, structureOf)],
        ["price", makePrice(st)],
        ["funding", makeFunding(st)],
        ["open_interest", openInterest],
        ["orderflow", orderflow],
        ["liquidations", liquidations],
        ["liquidity", makeLiquidity(st)],
        ["technicals", makeTechnicals(st)],
        ["structure", makeStructure(st, structureOf)]
      ]),
      calls: new Map<string, Handler>([
        ["series", makeSeries(st)],
        ["rank", makeRank(st)]
      ]),
      directory,
      lookup,
      // What one asset's answers read: its series and streamed state where the store tells them apart, else the
      // store's whole content. Each part never decreases, so their sum changes whenever one does.
      revisionOf: (assetId) => {
        const u = universe.get()
        if (u !== seenUniverse) {
          seenUniverse = u
          universes++
        }
        const stored =
          store.quotesRevisionOf !== undefined
            ? store.quotesRevisionOf(assetId)
            : (store.quotesRevision ?? store.revision)?.()
        return stored === undefined ? undefined : stored + universes
      },
      universeSize: () => universe.get().assets.length,
      warm,
      warmAsset
    }
    return plane
  })
