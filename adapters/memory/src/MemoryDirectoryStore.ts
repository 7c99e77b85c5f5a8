/**
 * In-memory twin of the asset directory store: assets by ID, upserted, never removed; `merge` runs whole
 * between two awaits (JavaScript runs it to the end), so it is atomic as the port requires.
 */
import {
  type AssetDirectory,
  AssetDirectoryStore,
  type CoinList,
  type DirectoryAsset,
  directoryConflicts,
  mergeDirectory,
  seedDirectory
} from "@market-data/core"
import { Effect, Layer } from "effect"

export const makeMemoryDirectoryStore = (): AssetDirectoryStore["Service"] => {
  const assets = new Map<string, DirectoryAsset>()
  let updatedMs = 0
  let coins: CoinList | undefined

  /** The stored assets over the seed's (a seed asset never saved is still there). */
  const current = (): AssetDirectory => {
    const all = new Map(seedDirectory().assets.map((a) => [a.id, a]))
    for (const [id, a] of assets) all.set(id, a)
    return { assets: [...all.values()].sort((x, y) => (x.id < y.id ? -1 : 1)), updatedMs }
  }

  const write = (next: AssetDirectory) => {
    const conflict = directoryConflicts(current(), next)[0]
    if (conflict !== undefined) throw conflict
    for (const a of next.assets) assets.set(a.id, a)
    updatedMs = Math.max(updatedMs, next.updatedMs)
  }

  return {
    load: Effect.sync(current),
    save: (directory) => Effect.sync(() => write(directory)),
    merge: (snapshots, context) =>
      Effect.sync(() => {
        const result = mergeDirectory(current(), snapshots, context)
        write(result.directory)
        return result
      }),
    coinList: Effect.sync(() => coins),
    saveCoinList: (list) =>
      Effect.sync(() => {
        coins = { coins: [...list.coins], fetchedMs: list.fetchedMs }
      })
  }
}

export const layerMemoryDirectoryStore: Layer.Layer<AssetDirectoryStore> =
  Layer.sync(AssetDirectoryStore)(makeMemoryDirectoryStore)
