/**
 * Lowers the scheduling priority of the calling thread alone (not its process): the stream worker runs at a
 * higher niceness than the thread that answers requests, so that when both want a core, the answer goes first.
 *
 * Why: on a machine with few cores the worker reading 5,000 frames a second (about a fifth of a core) and the
 * answering thread are often runnable together; at equal priority a request that arrives while the worker holds
 * the core waits out the worker's time slice, a few milliseconds at the tail. At niceness 10 the kernel weighs the
 * worker about a tenth of the answering thread, so a woken answering thread runs first; the worker still gets
 * every cycle nobody else wants, so it keeps up whenever the machine is not saturated.
 *
 * Linux keeps a niceness per thread: `setpriority(PRIO_PROCESS, tid)` (Node's `os.setPriority`) with the thread's
 * own ID, read from `/proc/thread-self`, changes that thread only. Raising one's own niceness needs no privilege.
 * Elsewhere (macOS, Windows: no per-thread niceness through this call) nothing is changed and the reason is said.
 */
import { readlinkSync } from "node:fs"
import { getPriority, setPriority } from "node:os"

export type ThreadPriorityResult =
  | { readonly applied: true; readonly tid: number; readonly nice: number }
  | { readonly applied: false; readonly reason: string }

/** Sets the calling thread's niceness to `nice` (0 to 19); 0 leaves it as it is. */
export const lowerThreadPriority = (nice: number): ThreadPriorityResult => {
  if (!Number.isInteger(nice) || nice < 0 || nice > 19)
    return { applied: false, reason: `niceness must be an integer from 0 to 19; got ${nice}` }
  if (nice === 0) return { applied: false, reason: "niceness 0: left at the process's priority" }
  if (process.platform !== "linux") return { applied: false, reason: `no per-thread niceness on ${process.platform}` }
  let tid: number
  try {
    // `<pid>/task/<tid>`
    tid = Number(readlinkSync("/proc/thread-self").split("/").pop())
  } catch (e) {
    return { applied: false, reason: `no /proc/thread-self (${e instanceof Error ? e.message : String(e)})` }
  }
  if (!Number.isInteger(tid) || tid <= 0) return { applied: false, reason: "no thread ID in /proc/thread-self" }
  try {
    // Never raise the priority: a thread already nicer than asked (an operator's `nice`) keeps its niceness.
    const now = getPriority(tid)
    if (now < nice) setPriority(tid, nice)
    return { applied: true, tid, nice: Math.max(now, nice) }
  } catch (e) {
    return { applied: false, reason: e instanceof Error ? e.message : String(e) }
  }
}
