/**
 * A new kept history generated in a child process, so a first start on an empty data folder uses a second core
 * (issue 16 point 6): the child (`HistoryChild.ts`) runs the same simulation from the genesis and writes each
 * asset's segment exactly as the in-process backfill writes it (same seed, same steps, same bytes), telling the
 * parent over IPC as each is done; the parent's backfill (`SimulatedCryptoOptions.apart`) waits for each asset in
 * turn and reads it back through the reopen path (load the segment, generate the gap to now, warm the asset), so
 * the child generates asset n+1 while the parent loads and warms asset n.
 *
 * Only the assets whose segment file is missing go to the child (all of them on a new history), closed over peg
 * groups (a tracking asset needs its peg's path, generated in the same run). A segment found invalid when read
 * back is generated in the parent as before. Should the child fail to spawn or die, the parent generates what is
 * still missing itself (with a log line). The child ends with the start: on its own when every segment is
 * written, killed when the start's scope closes first (a shutdown during the start), and it stops by itself
 * between two assets once its parent is gone.
 */
import { fork } from "node:child_process"
import { existsSync, readdirSync, rmSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { BAR_MS, type CryptoAsset } from "@market-data/core"
import { Clock, Effect, type Scope } from "effect"
import {
  beginKeptHistory,
  type HistoryApart,
  keptHistoryIdentity,
  makeSimulation,
  pegGroups,
  type SimulatedCryptoOptions
} from "./Feed.ts"
import { type HistoryIdentity, makeSimulatedHistoryStore, type SimulatedHistoryStore, segmentName } from "./History.ts"
import type { AssetProfile } from "./Profiles.ts"

/** What the child is sent: the simulation (as the parent names it), the history begun in `dir`, what to write. */
export interface ApartJob {
  readonly dir: string
  readonly identity: HistoryIdentity
  readonly genesisMs: number
  readonly nowMs: number
  readonly seed: string
  readonly assets: ReadonlyArray<CryptoAsset>
  readonly profiles?: Readonly<Record<string, AssetProfile>>
  readonly historyDays?: number
  readonly denseHistoryDays?: number
  /** Indexes (simulation order) of the assets to write, closed over peg groups. */
  readonly indexes: ReadonlyArray<number>
  /** Tests: exit with code 3 after writing this many segments. */
  readonly failAfter?: number
}

/** Messages from the child: a segment written; at the end, the CPU time it used. */
type ChildMessage = { readonly done: number } | { readonly cpuMs: number }

/**
 * The child's work: generates the assets of `job.indexes` from the genesis to `job.nowMs` and writes each one's
 * segment as the backfill does for an asset it generates, calling `done` after each (which answers whether to go
 * on). Throws when the simulation it is given is not the history's (another universe digest).
 */
export const writeSegmentsApart = async (job: ApartJob, done: (index: number) => Promise<boolean>): Promise<number> => {
  const options: SimulatedCryptoOptions = {
    seed: job.seed,
    assets: job.assets,
    ...(job.profiles === undefined ? {} : { profiles: job.profiles }),
    ...(job.historyDays === undefined ? {} : { historyDays: job.historyDays }),
    ...(job.denseHistoryDays === undefined ? {} : { denseHistoryDays: job.denseHistoryDays })
  }
  const identity = keptHistoryIdentity(options)
  if (JSON.stringify(identity) !== JSON.stringify(job.identity)) {
    throw new Error("the simulation sent is not the kept history's (another generator, seed or universe)")
  }
  const sim = makeSimulation({ ...options, nowMs: job.nowMs, genesisMs: job.genesisMs })
  const history = makeSimulatedHistoryStore(job.dir, { identity, genesisMs: job.genesisMs })
  // As the backfill of a new simulation: from step 0 to the last closed bar.
  const steps = Math.max(0, Math.floor((job.nowMs - sim.openOf(0)) / BAR_MS))
  const run = sim.startRun(steps)
  const wanted = new Set(job.indexes)
  let written = 0
  for (let i = 0; i < sim.assetList.length; i++) {
    if (!wanted.has(i)) continue
    const peg = sim.pegOf(i)
    if (peg !== undefined && sim.indexOf(peg) >= 0 && !wanted.has(sim.indexOf(peg))) {
      throw new Error(`${sim.assetList[i]?.id} tracks ${peg}, which is not generated here`)
    }
    const part = sim.beginAsset(run, i)
    sim.advanceAsset(part, steps)
    const sinks = sim.endAsset(part)
    history.save({
      assetId: (sim.assetList[i] as CryptoAsset).id,
      step: steps,
      state: sim.assetState(i),
      series: sinks.flatMap((s) => s.batches())
    })
    written++
    if (job.failAfter !== undefined && written >= job.failAfter) process.exit(3)
    if (!(await done(i))) break
  }
  return written
}

/** How the child is run (tests change it). */
export interface ApartSpawn {
  readonly execPath?: string
  readonly script?: string
  readonly failAfter?: number
}

const CHILD_SCRIPT = fileURLToPath(
  new URL(import.meta.url.endsWith(".ts") ? "./HistoryChild.ts" : "./HistoryChild.js", import.meta.url)
)

/** Longest wait, when the start's scope closes, for a killed child to be gone. */
const KILL_WAIT_MS = 5000

/**
 * Begins the kept history of `options` in `history` for a start now and, when segments are missing, starts the
 * child that writes them: the `HistoryApart` to give the backfill (`SimulatedCryptoOptions.apart`), undefined
 * when nothing is missing. The child is killed when the scope closes, should it still run. Call it as early in
 * the start as possible; the backfill may begin any time later (it begins the same history again).
 */
export const startHistoryApart = (
  history: SimulatedHistoryStore,
  options: SimulatedCryptoOptions,
  spawnWith: ApartSpawn = {}
): Effect.Effect<HistoryApart | undefined, never, Scope.Scope> =>
  Effect.gen(function* () {
    const nowMs = options.nowMs ?? (yield* Clock.currentTimeMillis)
    const begun = yield* beginKeptHistory(history, options, nowMs)
    const sim = makeSimulation({ ...options, nowMs, genesisMs: begun.genesisMs })
    const groups = pegGroups(sim)
    const wanted = new Set<number>()
    sim.assetList.forEach((asset, i) => {
      if (begun.kept && existsSync(join(history.dir, segmentName(asset.id)))) return
      for (const j of groups.get(i) ?? [i]) wanted.add(j)
    })
    if (wanted.size === 0) return undefined
    const indexes = [...wanted].sort((a, b) => a - b)
    const job: ApartJob = {
      dir: history.dir,
      identity: begun.identity,
      genesisMs: begun.genesisMs,
      nowMs,
      seed: String(options.seed),
      assets: sim.assetList,
      ...(options.profiles === undefined ? {} : { profiles: options.profiles }),
      ...(options.historyDays === undefined ? {} : { historyDays: options.historyDays }),
      ...(options.denseHistoryDays === undefined ? {} : { denseHistoryDays: options.denseHistoryDays }),
      indexes,
      ...(spawnWith.failAfter === undefined ? {} : { failAfter: spawnWith.failAfter })
    }

    const done = new Set<number>()
    let failure: string | undefined
    let closed = false
    let cpuMs: number | undefined
    const waiters = new Map<number, Array<() => void>>()
    const wake = () => {
      for (const [index, list] of waiters) {
        if (closed || done.has(index)) {
          waiters.delete(index)
          for (const resume of list) resume()
        }
      }
    }
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const c = fork(spawnWith.script ?? CHILD_SCRIPT, [], {
          execPath: spawnWith.execPath ?? process.execPath,
          execArgv: [],
          serialization: "advanced",
          stdio: ["ignore", "ignore", "pipe", "ipc"]
        })
        let stderr = ""
        c.stderr?.on("data", (d) => {
          if (stderr.length < 8000) stderr += d
        })
        const finish = (why: string | undefined) => {
          if (closed) return
          closed = true
          const missing = indexes.filter((i) => !done.has(i)).length
          if (missing > 0) failure = `${why ?? "it exited"} before writing ${missing} of ${indexes.length} segments`
          wake()
        }
        c.on("message", (m: ChildMessage) => {
          if ("done" in m && typeof m.done === "number") {
            done.add(m.done)
            wake()
          } else if ("cpuMs" in m && typeof m.cpuMs === "number") cpuMs = m.cpuMs
        })
        c.on("error", (e) => finish(`it could not be run: ${e.message}`))
        c.on("close", (code, signal) =>
          finish(
            code === 0 && signal === null
              ? undefined
              : `it exited with ${signal ?? `code ${code}`}${stderr.trim() === "" ? "" : `: ${stderr.trim().slice(-1000)}`}`
          )
        )
        if (c.connected) c.send(job, (e) => (e ? finish(`the job could not be sent: ${e.message}`) : undefined))
        return c
      }),
      (c) =>
        closed
          ? Effect.void
          : Effect.callback<void>((resume) => {
              const timer = setTimeout(() => resume(Effect.void), KILL_WAIT_MS)
              c.once("close", () => {
                clearTimeout(timer)
                // A kill mid-write leaves the segment's temporary file (never a torn segment): removed.
                const pid = c.pid
                if (pid !== undefined) {
                  try {
                    for (const name of readdirSync(history.dir)) {
                      if (name.endsWith(`.${pid}.tmp`)) rmSync(join(history.dir, name), { force: true })
                    }
                  } catch {
                    // The folder is gone or unreadable: nothing of the child's is left to remove, and the
                    // shutdown must not fail on it.
                  }
                }
                resume(Effect.void)
              })
              c.kill("SIGKILL")
            })
    )
    yield* Effect.logInfo(
      `simulated crypto: generating the kept history of ${indexes.length} of ${sim.assetList.length} assets in a child process${child.pid === undefined ? "" : ` (pid ${child.pid})`}`
    )
    const indexSet = new Set(indexes)
    return {
      indexes: indexSet,
      ...(child.pid === undefined ? {} : { pid: child.pid }),
      cpuMs: () => cpuMs,
      progress: () => ({ written: done.size, running: !closed }),
      ready: (index) =>
        Effect.callback<string | undefined>((resume) => {
          if (closed || done.has(index) || !indexSet.has(index)) return resume(Effect.succeed(failure))
          waiters.set(index, [...(waiters.get(index) ?? []), () => resume(Effect.succeed(failure))])
        })
    } satisfies HistoryApart
  })
