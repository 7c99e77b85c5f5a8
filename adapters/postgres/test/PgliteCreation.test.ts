/**
 * A new embedded cluster (`createClusterApart` in Database.ts): created in a child process inside a staging
 * folder and moved into the data folder with `PG_VERSION` last, so a creation stopped anywhere (the caller's
 * signal, a SIGKILL of the child or of the whole process tree) never leaves a folder that looks like a cluster and
 * is not one; the next open creates it again. The stops are taken at points the test sees (the child's process
 * alive, its `PG_VERSION` written), not after a delay.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { createClusterApart, openPglite, PGLITE_STAGING, PgliteCreationAborted } from "../src/Database.ts"
import { processesWith, waitFor } from "./support.ts"

const root = mkdtempSync(join(tmpdir(), "pglite-creation-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))
let n = 0
const folder = () => join(root, `d${n++}`)

/** Opens the folder's store, writes and reads a row, closes it: the cluster is whole. */
const usable = async (dir: string) => {
  const d = await openPglite(dir)
  try {
    await d.db.schema.createTable("probe").addColumn("a", "integer").execute()
    await d.db
      .insertInto("probe" as never)
      .values({ a: 7 } as never)
      .execute()
    const rows = await d.db
      .selectFrom("probe" as never)
      .selectAll()
      .execute()
    expect(rows).toEqual([{ a: 7 }])
  } finally {
    await d.close()
  }
  expect(existsSync(join(dir, "PG_VERSION"))).toBe(true)
  expect(existsSync(join(dir, PGLITE_STAGING))).toBe(false)
}

const createScript = fileURLToPath(new URL("../src/CreatePglite.ts", import.meta.url))
const exitOf = (child: ChildProcess) =>
  new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.on("exit", () => resolve())))

describe("a new embedded cluster", () => {
  it("a stop by the caller's signal kills the creating child and leaves no cluster; the next open creates one", async () => {
    const dir = folder()
    const stop = new AbortController()
    const creating = createClusterApart(dir, [], stop.signal)
    // The child is at work (its command line names the staging folder) when the signal comes.
    const [pid] = await waitFor(() => {
      const found = processesWith(join(dir, PGLITE_STAGING))
      return found.length > 0 ? found : undefined
    })
    stop.abort()
    await expect(creating).rejects.toBeInstanceOf(PgliteCreationAborted)
    expect(processesWith(join(dir, PGLITE_STAGING))).toEqual([])
    expect(pid).toBeGreaterThan(0)
    expect(readdirSync(dir)).toEqual([])
    await usable(dir)
  }, 120_000)

  it("a signal already aborted starts no child", async () => {
    const dir = folder()
    await expect(createClusterApart(dir, [], AbortSignal.abort())).rejects.toBeInstanceOf(PgliteCreationAborted)
    expect(existsSync(dir)).toBe(false)
  })

  it("a staging folder left by a stopped start (whole or part of a cluster) is created again, not moved in", async () => {
    // What a SIGKILL of the process tree leaves: the child stopped while PGlite writes its files (PG_VERSION is
    // among the first), or the parent stopped before the move; either way in the staging folder, never in the data
    // folder. Made here by a child run to its end, then cut short by hand (no race with a timer).
    const dir = folder()
    const staging = join(dir, PGLITE_STAGING)
    mkdirSync(staging, { recursive: true })
    const child = spawn(process.execPath, ["--liftoff-only", createScript, staging], { stdio: "ignore" })
    await exitOf(child)
    expect(child.exitCode).toBe(0)
    expect(existsSync(join(staging, "PG_VERSION"))).toBe(true)
    rmSync(join(staging, "global"), { recursive: true })
    expect(existsSync(join(dir, "PG_VERSION"))).toBe(false)
    await usable(dir)
    expect(existsSync(join(dir, "global", "pg_control"))).toBe(true)
  }, 120_000)

  it("replaces the cluster entries a stopped creation of an earlier version wrote into the folder itself", async () => {
    const dir = folder()
    // An earlier version created the cluster in the folder itself: a stop there left entries without PG_VERSION.
    mkdirSync(join(dir, "pg_wal"), { recursive: true })
    writeFileSync(join(dir, "pg_wal", "000000010000000000000001"), "partial")
    mkdirSync(join(dir, "global"))
    writeFileSync(join(dir, "global", "pg_control"), "partial")
    writeFileSync(join(dir, "postgresql.conf"), "partial")
    // The service's own entries beside the cluster stay as they are.
    mkdirSync(join(dir, "simulated-market"))
    writeFileSync(join(dir, "simulated-market", "kept.seg"), "kept")
    await usable(dir)
    expect(readdirSync(join(dir, "simulated-market"))).toEqual(["kept.seg"])
  }, 120_000)
})
