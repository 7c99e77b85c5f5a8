/**
 * A deterministic plane whose data changes on a short, known cadence, for tests of clients that schedule
 * their requests by `next_update_at` (the real simulated market ticks every 20 to 30 s, too slow for a test).
 *
 * `read` serves `crypto:bitcoin`, `crypto:ethereum` and `crypto:solana`. Time is cut into slots of `slotMs` counted from
 * `startMs`; within a slot the answer is identical byte for byte (so its ETag holds and `If-None-Match`
 * answers 304), `as_of` is the slot's start, `next_update_at` its end, and the price moves at every slot.
 * With `stalled`, the source never moves on: every answer is the first slot's, `stale`, with `next_update_at`
 * now (what the real planes answer when a source stops). Other assets are refused as `unknown_asset`. It runs through the real `perAssetHandler`, so charges,
 * `Cache-Control` and ETags follow production code.
 */
import { type Handler, perAssetHandler } from "@market-data/core"
import { Effect } from "effect"

const ASSETS: Record<string, { readonly symbol: string; readonly name: string; readonly basePrice: number }> = {
  "crypto:bitcoin": { symbol: "BTC", name: "Bitcoin", basePrice: 100_000 },
  "crypto:ethereum": { symbol: "ETH", name: "Ethereum", basePrice: 4_000 },
  "crypto:solana": { symbol: "SOL", name: "Solana", basePrice: 200 }
}

export interface TickingPlane {
  readonly handlers: ReadonlyMap<string, Handler>
  /** The slot containing `nowMs`: its index, start and end (the `next_update_at` served in it). */
  readonly slotAt: (nowMs: number) => { readonly index: number; readonly startMs: number; readonly endMs: number }
  /** The price served in slot `index`. */
  readonly priceIn: (assetId: string, index: number) => number
}

export const makeTickingPlane = (options: {
  readonly slotMs: number
  /** When slot 0 starts: a time, or `"first-read"` (the first `slotAt`), so a first read gets a whole slot. */
  readonly startMs?: number | "first-read"
  readonly stalled?: boolean
}): TickingPlane => {
  const { slotMs } = options
  let startMs = options.startMs === "first-read" ? undefined : (options.startMs ?? Date.now())
  const slotAt = (nowMs: number) => {
    if (startMs === undefined) startMs = nowMs
    const index = Math.floor((nowMs - startMs) / slotMs)
    return { index, startMs: startMs + index * slotMs, endMs: startMs + (index + 1) * slotMs }
  }
  const priceIn = (assetId: string, index: number) => (ASSETS[assetId]?.basePrice ?? 0) + index * 12.5
  const read = perAssetHandler((id, _params, input) => {
    const asset = ASSETS[id]
    if (asset === undefined) {
      return Effect.succeed({ _tag: "Refused", reason: "unknown_asset", message: `no asset ${id}` } as const)
    }
    const slot = slotAt(options.stalled === true ? (startMs ?? input.nowMs) : input.nowMs)
    return Effect.succeed({
      _tag: "Delivered",
      result: {
        asset_id: id,
        symbol: asset.symbol,
        name: asset.name,
        class: "core",
        as_of: new Date(slot.startMs).toISOString(),
        status: options.stalled === true ? "stale" : "live",
        next_update_at: new Date(options.stalled === true ? input.nowMs : slot.endMs).toISOString(),
        headline: { price_usd: priceIn(id, slot.index), trend_state: "range" }
      }
    } as const)
  })
  return { handlers: new Map<string, Handler>([["read", read]]), slotAt, priceIn }
}
