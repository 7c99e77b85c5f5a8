/**
 * The public coin directory that names new assets (core `Directory.ts`, `slugFor`): CoinGecko
 * `GET /api/v3/coins/list` (optionally `?include_platform=true`), an array of `{id, symbol, name, platforms?}`.
 * The listing job fetches it through the same connector machinery as the venues and caches it in the store
 * (`AssetDirectoryStore.saveCoinList`); until a fetch succeeds the bundled `wellKnownCoins` stand in.
 *
 * A body that is not an array throws `Malformed` (a `format` SourceError through `decode`): a failed fetch keeps
 * the cached list. An entry without a usable ID, or repeating an ID, is skipped and counted, never used. A coin
 * with an empty ticker is kept (it matches no ticker, but its ID still keeps a fallback slug from taking it).
 */
import type { CoinEntry } from "@market-data/core"
import { arr } from "./Parse.ts"

export interface ParsedCoinList {
  readonly coins: ReadonlyArray<CoinEntry>
  /** Entries not taken, by position in the answer, with the reason. */
  readonly skipped: ReadonlyArray<{ readonly index: number; readonly reason: string }>
}

export const parseCoinList = (body: unknown): ParsedCoinList => {
  const coins: Array<CoinEntry> = []
  const skipped: Array<{ index: number; reason: string }> = []
  const ids = new Set<string>()
  arr(body, "$").forEach((value, index) => {
    const o =
      typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {}
    const { id, symbol, name } = o
    if (typeof id !== "string" || id.trim() === "" || id !== id.trim()) {
      skipped.push({ index, reason: "no usable id" })
      return
    }
    if (ids.has(id)) {
      skipped.push({ index, reason: `id ${id} repeated` })
      return
    }
    if (typeof symbol !== "string" || typeof name !== "string") {
      skipped.push({ index, reason: `id ${id}: symbol or name is not a string` })
      return
    }
    ids.add(id)
    coins.push({ id, symbol: symbol.trim(), name })
  })
  return { coins, skipped }
}
