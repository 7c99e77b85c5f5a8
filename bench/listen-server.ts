/**
 * The server of the listen bench (`bench/listen.ts`), in its own process: the real HTTP and MCP transports and
 * the real pipeline over the memory stores, with a `read` plane of `BENCH_LISTEN_ASSETS` synthetic assets whose
 * data changes at known instants, so a notification's latency can be measured from the moment the data changed.
 *
 * Asset `crypto:bench-<i>` changes every `BENCH_LISTEN_SLOT_MS` at `epoch + phase(i) + k * slot` (phases spread
 * evenly over the slot, so changes arrive at a steady rate); `crypto:idle-<i>` changes once an hour (for the idle
 * streams). Each answer is computed from the clock: within a slot it is identical byte for byte (its ETag holds),
 * `next_update_at` is the slot's end, and it runs through the real `perAssetHandler`, so charges, ETags and the
 * paid path are production code. Prints one JSON line `{url, keys, epochMs, slotMs, assets}` when listening.
 */
import { type Handler, perAssetHandler } from "@market-data/core"
import { Effect } from "effect"
import { startServer } from "../test/support/server.ts"

const ASSETS = Number(process.env.BENCH_LISTEN_ASSETS ?? 10_000)
const SLOT_MS = Number(process.env.BENCH_LISTEN_SLOT_MS ?? 10_000)
const KEYS = Number(process.env.BENCH_LISTEN_KEYS ?? 101)
const IDLE_SLOT_MS = 3_600_000
const epochMs = Date.now()

const slotOf = (nowMs: number, index: number, slotMs: number, count: number) => {
  const phase = Math.floor((index * slotMs) / count)
  const k = Math.floor((nowMs - epochMs - phase) / slotMs)
  return { k, startMs: epochMs + phase + k * slotMs, endMs: epochMs + phase + (k + 1) * slotMs }
}

const read = perAssetHandler((id, _params, input) => {
  const m = /^crypto:(bench|idle)-(\d+)$/.exec(id)
  const index = m === null ? Number.NaN : Number(m[2])
  if (m === null || !(index < ASSETS)) {
    return Effect.succeed({ _tag: "Refused", reason: "unknown_asset", message: `no asset ${id}` } as const)
  }
  const slotMs = m[1] === "bench" ? SLOT_MS : IDLE_SLOT_MS
  const slot = slotOf(input.nowMs, index, slotMs, ASSETS)
  return Effect.succeed({
    _tag: "Delivered",
    result: {
      asset_id: id,
      symbol: `B${index}`,
      name: `Bench ${index}`,
      class: "core",
      as_of: new Date(slot.startMs).toISOString(),
      status: "live",
      next_update_at: new Date(slot.endMs).toISOString(),
      headline: { price_usd: 100 + slot.k, trend_state: "range" }
    }
  } as const)
})

const server = await startServer({ rateLimitPerMinute: 1_000_000_000 }, [new Map<string, Handler>([["read", read]])])
const keys: Array<string> = []
for (let i = 0; i < KEYS; i++) keys.push((await server.newKey(1_000_000_000, 1_000_000_000)).key)
process.stdout.write(`${JSON.stringify({ url: server.base, keys, epochMs, slotMs: SLOT_MS, assets: ASSETS })}\n`)
// The bench asks for a collection before reading RSS (the child runs with --expose-gc), so garbage is not counted.
process.on("SIGUSR2", () => (globalThis as { gc?: () => void }).gc?.())
process.on("SIGTERM", () => {
  void server.close().then(() => process.exit(0))
})
