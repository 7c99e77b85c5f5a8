/**
 * What a watcher of the data (the MCP listen streams) can learn without reading the answers: whether anything one
 * asset's answers are built from has changed since a number was taken (`revisionOf`), and how many assets the
 * service serves (`universeSize`). Built from the planes (`PlaneOperations.revisionOf`, `universeSize`) and
 * provided beside the handlers by `layerHandlers`; a service without planes offers no revision (every watcher
 * reads) and counts no assets.
 */
import { Context, Effect } from "effect"
import { planeOf } from "./AssetId.ts"
import type { PlaneOperations } from "./Planes.ts"

export class AssetSignals extends Context.Service<
  AssetSignals,
  {
    /**
     * A number that changes whenever stored data the asset's answers are built from changes; undefined when its
     * plane does not say (then only reading the answer again tells).
     */
    readonly revisionOf: (assetId: string) => number | undefined
    /** How many assets every plane serves together now (grows when a listing is added). */
    readonly universeSize: Effect.Effect<number>
  }
>()("market-data/core/AssetSignals") {}

/** The signals of a set of planes. */
export const assetSignalsOf = (planes: ReadonlyArray<PlaneOperations>): AssetSignals["Service"] => {
  const byPlane = new Map(planes.map((p) => [p.plane, p]))
  return {
    revisionOf: (assetId) => {
      const plane = planeOf(assetId)
      return plane === undefined ? undefined : byPlane.get(plane)?.revisionOf?.(assetId)
    },
    universeSize: Effect.map(
      Effect.forEach(planes, (p) =>
        p.universeSize === undefined ? Effect.map(p.directory, (d) => d.length) : Effect.sync(p.universeSize)
      ),
      (sizes) => sizes.reduce((a, b) => a + b, 0)
    )
  }
}
