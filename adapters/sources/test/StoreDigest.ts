/** Test support: a digest of what a simulated backfill left in a market store, to compare two stores exactly. */
import { createHash } from "node:crypto"
import { type CryptoAsset, type MarketStore, SeriesColumns, SeriesKinds } from "@market-data/core"
import { Effect } from "effect"

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
