/**
 * The embedded store's data folder is private from the first start on: a `serve` process started on a new folder
 * under umask 000 (the loosest a user can run with) leaves the folder and every folder in it 0700 and every file
 * 0600 (the cluster's catalog, the WAL, `postgresql.conf`, the lock file, the admin socket, the kept simulated
 * history), also after it has written (a paid request's charge). A folder loosened afterwards (as an earlier version left it) is tightened at
 * the next start, with a log line saying how many entries were open.
 */
import { chmodSync, lstatSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { SERVE_ENTRY, type ServerProcess, startServerProcess, stopServerProcess } from "./support/server-process.ts"

const KEY = `mdk_${"Mode".repeat(8)}`

/** Every entry under `dir` (itself included) that is not owner-only: folders 0700, everything else 0600. */
const looseEntries = (dir: string): Array<string> => {
  const out: Array<string> = []
  const visit = (path: string) => {
    const st = lstatSync(path)
    if (st.isSymbolicLink()) return
    const mode = st.mode & 0o777
    const wanted = st.isDirectory() ? 0o700 : 0o600
    if (mode !== wanted) out.push(`${path.slice(dir.length) || "/"} ${mode.toString(8)}`)
    if (st.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name))
  }
  visit(dir)
  return out
}

const countEntries = (dir: string): number => {
  let n = 0
  const visit = (path: string) => {
    n++
    if (lstatSync(path).isDirectory()) for (const name of readdirSync(path)) visit(join(path, name))
  }
  visit(dir)
  return n
}

/** Runs `start` with the process umask at `mask` (inherited by the child it spawns), when this process may set it. */
const withUmask = async <A>(mask: number, start: () => Promise<A>): Promise<{ value: A; umaskSet: boolean }> => {
  let previous: number | undefined
  try {
    previous = process.umask(mask)
  } catch {
    // A worker thread cannot change the umask: the child then runs with the inherited one.
  }
  try {
    return { value: await start(), umaskSet: previous !== undefined }
  } finally {
    if (previous !== undefined) process.umask(previous)
  }
}

describe("the embedded store's data folder is private", () => {
  const root = mkdtempSync(join(tmpdir(), "data-folder-modes-"))
  const dir = join(root, "data")
  const started: Array<ServerProcess> = []
  afterAll(async () => {
    await Promise.all(started.map((s) => stopServerProcess(s)))
    rmSync(root, { recursive: true, force: true })
  })

  const start = async () => {
    const s = await startServerProcess(
      {
        DATABASE_URL: "",
        MARKET_DATA_DIR: dir,
        MARKET_DATA_BOOTSTRAP_KEY: KEY,
        MARKET_DATA_BOOTSTRAP_CREDITS: "100",
        MARKET_DATA_METRICS_PORT: "off",
        LOG_LEVEL: "warn"
      },
      { entry: SERVE_ENTRY, args: ["serve"], startTimeoutMs: 150_000 }
    )
    started.push(s)
    return s
  }

  it("a first start under umask 000: the folder and its folders 0700, every file 0600, also after writes", async () => {
    const { value: s, umaskSet } = await withUmask(0, start)
    try {
      if (!umaskSet)
        console.warn("data folder modes: the umask could not be set here; the child ran with the inherited one")
      // A paid request writes (its charge, WAL): files PostgreSQL creates now must be private too.
      const res = await fetch(`${s.base}/api/v1/price?id=crypto:bitcoin`, {
        headers: { authorization: `Bearer ${KEY}` }
      })
      expect(res.status).toBe(200)
      await res.arrayBuffer()
      expect(countEntries(dir)).toBeGreaterThan(500)
      expect(lstatSync(join(dir, "admin", "admin.sock")).isSocket()).toBe(true)
      expect(looseEntries(dir)).toEqual([])
    } finally {
      await stopServerProcess(s)
    }
    expect(looseEntries(dir)).toEqual([])
  }, 200_000)

  it("a folder found open to other users is tightened at start, with a log line", async () => {
    expect(looseEntries(dir)).toEqual([])
    chmodSync(dir, 0o755)
    chmodSync(join(dir, "base"), 0o755)
    chmodSync(join(dir, "postgresql.conf"), 0o666)
    chmodSync(join(dir, "PG_VERSION"), 0o644)
    expect(looseEntries(dir)).toHaveLength(4)
    const s = await start()
    try {
      expect(s.stdout()).toMatch(/tightened the data folder [^:]+: 4 entries were open to other local users/)
      expect(looseEntries(dir)).toEqual([])
    } finally {
      await stopServerProcess(s)
    }
  }, 200_000)
})
