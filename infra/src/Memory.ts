/**
 * Handing the memory a finished start freed back to the operating system.
 *
 * Generating the simulated market and sampling every asset's baselines allocate far more than they keep. V8 frees
 * that garbage at its next full collection, but keeps the freed pages pooled for reuse until a memory-reducing
 * one; a server that has just finished its start allocates too little for either to come soon. Measured with the
 * simulated market at 428 assets (docs/performance-log.md): 2.02 GB resident after warm-up, 1.61 GB after one such
 * collection, with the live heap unchanged (about 0.1 GB). So once the start's work is done (and after each daily
 * trim of the simulated series) a progressive start (`serve`) runs one: a synchronous pause of about 0.1 s at that
 * heap size. Live mode does the same once its baselines are warm, for the bound on the heap's growth below. A
 * blocking start (the embedded library, the tests) does not: its caller owns the process.
 */
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { Effect } from "effect"

type GarbageCollection = (options?: {
  readonly type: "major"
  readonly execution: "sync"
  readonly flavor: "last-resort"
}) => void

let collect: GarbageCollection | undefined

/**
 * V8's `gc` extension, without exposing it to the application: the flag is on only while one new context is
 * made (the process's own `globalThis.gc` stays undefined unless the process was started with `--expose-gc`).
 */
const garbageCollection = (): GarbageCollection => {
  if (collect !== undefined) return collect
  const own = (globalThis as { gc?: GarbageCollection }).gc
  if (own !== undefined) collect = own
  else {
    setFlagsFromString("--expose-gc")
    try {
      collect = runInNewContext("gc") as GarbageCollection
    } finally {
      setFlagsFromString("--no-expose-gc")
    }
  }
  return collect
}

/**
 * How far a warm server's V8 heap may grow past what its last full collection kept before the next one: V8's own
 * factor (up to 4x for a process with memory to spare) let the 428-asset server's 75 MB heap reach 205 MB of
 * mostly garbage under request load (docs/performance-log.md), which RSS carried until the memory reducer ran, seconds
 * after the load ended. At 2x the heap stays within twice what is live.
 *
 * Not lower: full collections come at every `percent` of growth, and their marking runs on the core the clients and
 * the stream worker share. At 25 % the paid `read` on memory answered 0.42x to 0.49x bare `node:http` where 100 %
 * and V8's own factor both gave 0.53x to 0.62x (same run, alternating rounds; 75 % gave 0.44x to 0.51x); RSS after
 * the load: 641 MB at 25 %, 683 to 740 MB at 100 %, 811 MB with V8's own factor (docs/performance-log.md, "Heap
 * growth at 100 %").
 */
export const WARM_HEAP_GROWING_PERCENT = 100

/**
 * One full, memory-reducing collection (freed heap pages go back to the system), logged with the sizes; from then
 * on the heap grows by at most `WARM_HEAP_GROWING_PERCENT` between full collections (V8's `--heap-growing-percent`,
 * read at each collection, so it holds from the next one on; the start's allocation-heavy work ran with V8's own
 * factor).
 */
export const releaseFreedMemory = (reason: string): Effect.Effect<void> =>
  Effect.gen(function* () {
    const before = process.memoryUsage()
    const started = performance.now()
    setFlagsFromString(`--heap-growing-percent=${WARM_HEAP_GROWING_PERCENT}`)
    garbageCollection()({ type: "major", execution: "sync", flavor: "last-resort" })
    const after = process.memoryUsage()
    const mb = (bytes: number) => Math.round(bytes / 1_000_000)
    yield* Effect.logInfo("released freed memory").pipe(
      Effect.annotateLogs({
        reason,
        ms: Math.round(performance.now() - started),
        rss_mb_before: mb(before.rss),
        rss_mb: mb(after.rss),
        heap_used_mb: mb(after.heapUsed),
        array_buffers_mb: mb(after.arrayBuffers)
      })
    )
  })
