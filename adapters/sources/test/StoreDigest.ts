/**
 * Test support of the simulated history suites: their small universe and history, temporary data folders, and a
 * digest of what a simulated backfill left in a market store, to compare two stores exactly.
 */
import { createHash } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type CryptoAsset, cryptoAsset, type MarketStore, SeriesColumns, SeriesKinds } from "@market-data/core"
import { Effect } from "effect"

const ids = (...slugs: Array<string>) => slugs.map((s) => cryptoAsset(`crypto:${s}`)!)
/** Four perp venues, a 4 h venue, spot and DEX listings, and a tracking asset with the asset it tracks (a peg group). */
export const SMALL = ids("bitcoin", "sui", "compound", "mog-coin", "wrapped-bitcoin")
export const HISTORY_DAYS = 20
export const DENSE_DAYS = 6

/** Temporary folders named `prefix...`: `folder()` makes one, `removeAll()` (for `afterAll`) removes them all. */
export const tempFolders = (prefix: string) => {
  const made: Array<string> = []
  return {
    folder: () => {
      const dir = mkdtempSync(join(tmpdir(), prefix))
      made.push(dir)
      return dir
    },
    removeAll: () => {
      for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** SHA-256 of every series (its bytes), book, funding state and status in `store` for `assets`, in a fixed order. */
export const digestStore = (store: MarketStore["Service"], assets: ReadonlyArray<CryptoAsset>) =>
  Effect.gen(function* () {
    const h = createHash("sha256")
    for (const a of assets) {
      for (const kind of SeriesKinds) {
        for (const s of yield* store.read(kind, { assetId: a.id, fromMs: 0, toMs: Number.MAX_SAFE_INTEGER })) {
          h.update(`${kind}|${a.id}|${s.venue}|${s.t.length}|`)
          h.update(new Uint8Array(s.t.buffer, s.t.byteOffset, s.t.byteLength))
          for (const c of SeriesColumns[kind]) {
            const col = (s as unknown as Record<string, Float64Array>)[c] as Float64Array
            h.update(new Uint8Array(col.buffer, col.byteOffset, col.byteLength))
          }
        }
      }
      h.update(JSON.stringify(yield* store.books(a.id)))
      h.update(JSON.stringify(yield* store.fundingStates(a.id)))
    }
    h.update(JSON.stringify(yield* store.status))
    return h.digest("hex")
  })
