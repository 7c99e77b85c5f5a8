/**
 * The server of the listen bench (`bench/listen.ts`), in its own process: the real HTTP and MCP transports and
 * the real pipeline over the memory stores, with a crypto plane of `BENCH_LISTEN_ASSETS` synthetic assets whose
 * data changes at known instants, so a notification's latency can be measured from the moment the data changed.
 *
 * Asset `crypto:bench-<i>` changes every `BENCH_LISTEN_SLOT_MS` at `epoch + phase(i) + k * slot` (phases spread
 * evenly over the slot, so changes arrive at a steady rate); `crypto:idle-<i>` changes once an hour (for the idle
 * streams). Each answer is computed from the clock: within a slot it is identical byte for byte (its ETag holds),
 * `next_update_at` is the slot's end, and it is served through the production plane handlers (`planeHandlers`:
 * the directory's refusals, `perAssetHandler`, charges and ETags). The plane stores nothing, so its revision
 * (`revisionOf`) never moves: its answers change only at their `next_update_at`, as a store-backed plane's do
 * while nothing is written for the asset. Prints one JSON line `{url, keys, epochMs, slotMs, assets}` when
 * listening.
 *
 * Stats on request: each line `stats` on stdin is answered by one JSON line on stdout, taken after a full
 * collection (the process runs with `--expose-gc`): `process.memoryUsage()`, the CPU time used so far before and
 * after that collection (`process.cpuUsage()`, µs) and the listen watchers' totals (`listenTotals`). A line
 * `snapshot <path>` writes a V8 heap snapshot there and answers `{snapshot: <path>}` (`BENCH_LISTEN_SNAPSHOT`).
 */
import { createInterface } from "node:readline"
import { writeHeapSnapshot } from "node:v8"
import type { DirectoryEntry, PlaneOperations } from "@market-data/core"
import { listenTotals } from "@market-data/mcp"
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

const parse = (id: string) => {
  const m = /^crypto:(bench|idle)-(\d+)$/.exec(id)
  const index = m === null ? Number.NaN : Number(m[2])
  return m === null || !(index < ASSETS) ? undefined : { kind: m[1] as "bench" | "idle", index }
}

const entryOf = (id: string, index: number): DirectoryEntry => ({
  asset_id: id,
  plane: "crypto",
  symbol: `B${index}`,
  name: `Bench ${index}`,
  tier: "core",
  networks: [],
  aliases: [],
  alive: true
})

const plane: PlaneOperations = {
  plane: "crypto",
  perAsset: new Map([
    [
      "read",
      (entry, _params, input) => {
        const asset = parse(entry.asset_id) as { kind: "bench" | "idle"; index: number }
        const slot = slotOf(input.nowMs, asset.index, asset.kind === "bench" ? SLOT_MS : IDLE_SLOT_MS, ASSETS)
        return Effect.succeed({
          asset_id: entry.asset_id,
          symbol: entry.symbol,
          name: entry.name,
          class: "core",
          as_of: new Date(slot.startMs).toISOString(),
          status: "live",
          next_update_at: new Date(slot.endMs).toISOString(),
          headline: { price_usd: 100 + slot.k, trend_state: "range" }
        })
      }
    ]
  ]),
  calls: new Map(),
  directory: Effect.sync(() => {
    const out: Array<DirectoryEntry> = []
    for (let i = 0; i < ASSETS; i++) out.push(entryOf(`crypto:bench-${i}`, i), entryOf(`crypto:idle-${i}`, i))
    return out
  }),
  lookup: (id) => {
    const asset = parse(id)
    return Effect.succeed(asset === undefined ? undefined : entryOf(id, asset.index))
  },
  revisionOf: () => 0,
  universeSize: () => 2 * ASSETS
}

// The 1,000 streams, the readers and autocannon's 50 connections all come from this machine's one address.
const server = await startServer(
  {
    rateLimitPerMinute: 1_000_000_000,
    connectionLimits: { maxConnections: 8_192, maxConnectionsPerClient: 8_192, bodyTimeoutMs: 5_000 }
  },
  [],
  [plane]
)
const keys: Array<string> = []
for (let i = 0; i < KEYS; i++) keys.push((await server.newKey(1_000_000_000, 1_000_000_000)).key)
process.stdout.write(`${JSON.stringify({ url: server.base, keys, epochMs, slotMs: SLOT_MS, assets: ASSETS })}\n`)
createInterface({ input: process.stdin }).on("line", (line) => {
  if (line.startsWith("snapshot ")) {
    process.stdout.write(`${JSON.stringify({ snapshot: writeHeapSnapshot(line.slice(9).trim()) })}\n`)
    return
  }
  if (line.trim() !== "stats") return
  const atMs = Date.now()
  const listen = { ...listenTotals }
  const cpuBeforeGcUs = process.cpuUsage()
  const gc = (globalThis as { gc?: () => void }).gc
  gc?.()
  gc?.()
  const stats = { atMs, memory: process.memoryUsage(), cpuBeforeGcUs, cpuUs: process.cpuUsage(), listen }
  process.stdout.write(`${JSON.stringify(stats)}\n`)
})
process.on("SIGTERM", () => {
  void server.close().then(() => process.exit(0))
})
