/**
 * The streams bench's fixed-rate `price` client, in a process of its own (`streams.ts` forks it): the caller an
 * agent would be, on another machine, rather than a thread of the bench process, which also runs the replay
 * venues' producer (its worker thread and V8's helper threads collecting its garbage). In that process the client
 * waited about twice as long for a core with the venues producing as with them still (0.75 to 1.2 s against 0.5 s
 * a 20 s window), and that wait was part of every latency it measured.
 *
 * It says it is up (`{ ready: true }`); then each message from the parent is one window: `{ url, key, assetIds, perSecond, seconds }`. The client sends a paid
 * `price` of a random asset on each request's schedule (open loop: whatever the earlier ones do), then answers
 * with every latency (ms, to the microsecond), the failures, and how long its own thread waited for a core in the
 * window (`schedstat`).
 */
import { runQueueWaitMsOf } from "./process.ts"

export interface ClientWindow {
  readonly url: string
  readonly key: string
  readonly assetIds: ReadonlyArray<string>
  readonly perSecond: number
  readonly seconds: number
}

export interface ClientResult {
  readonly latencies: ReadonlyArray<number>
  readonly failed: number
  /** How long the client's thread waited on a run queue for a core during the window (ms). */
  readonly waitMs: number
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const runWindow = async (w: ClientWindow): Promise<ClientResult> => {
  const latencies: Array<number> = []
  let failed = 0
  const pending: Array<Promise<void>> = []
  const wait0 = runQueueWaitMsOf(process.pid)
  const t0 = performance.now()
  for (let k = 0; k < w.perSecond * w.seconds; k++) {
    const due = t0 + (k * 1000) / w.perSecond
    const wait = due - performance.now()
    if (wait > 1) await sleep(wait)
    const id = w.assetIds[Math.floor(Math.random() * w.assetIds.length)] as string
    const sent = performance.now()
    pending.push(
      fetch(`${w.url}/api/v1/price?id=${encodeURIComponent(id)}`, {
        headers: { authorization: `Bearer ${w.key}` }
      }).then(
        async (r) => {
          await r.arrayBuffer()
          if (r.status !== 200) failed++
          latencies.push(performance.now() - sent)
        },
        () => {
          failed++
        }
      )
    )
  }
  await Promise.all(pending)
  return { latencies, failed, waitMs: runQueueWaitMsOf(process.pid) - wait0 }
}

process.on("message", (w: ClientWindow) => {
  runWindow(w).then(
    (result) => process.send?.(result),
    (e) => process.send?.({ error: String(e) })
  )
})
// The parent closes the channel when it is done.
process.on("disconnect", () => process.exit(0))
// Up: the parent may now set the process's scheduling (every thread is there).
process.send?.({ ready: true })
