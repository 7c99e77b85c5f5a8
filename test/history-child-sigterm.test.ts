/**
 * `serve` on an empty embedded data folder generates the simulated market's kept history in a child process
 * (`startSimulatedHistoryApart`) and creates its PGlite cluster in another (`createClusterApart`); a SIGTERM during
 * the start (here: while PGlite is still being created) stops the server cleanly and leaves no child behind, nor a
 * temporary segment file, nor a cluster that is not whole; the next start on the folder serves.
 */
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { PGLITE_STAGING } from "../adapters/postgres/src/Database.ts"
import { processesWith, waitFor } from "../adapters/postgres/test/support.ts"
import { SERVE_ENTRY, startServerProcess } from "./support/server-process.ts"

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ESRCH") return false
    throw e
  }
}

describe("the kept history's child process on a SIGTERM during the start", () => {
  const dir = mkdtempSync(join(tmpdir(), "history-child-sigterm-"))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it("the server exits 0 and the child is gone", async () => {
    const { DATABASE_URL: _db, ...inherited } = process.env
    const server = spawn(process.execPath, [SERVE_ENTRY, "serve"], {
      env: {
        ...inherited,
        PORT: "0",
        MARKET_DATA_DIR: dir,
        // The 428-asset market: its child generates for a minute, so it is still at work when the server exits
        // (the registry's 35 assets could be done before the store's creation lets the server stop).
        MARKET_DATA_SIM_UNIVERSE: "market",
        LOG_LEVEL: "info",
        LOG_FORMAT: "json"
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    const exited = new Promise<number | null>((resolve) => server.on("exit", (code) => resolve(code)))
    const childPid = await new Promise<number>((resolve, reject) => {
      const look = (d: Buffer) => {
        out += d
        const m = /in a child process \(pid (\d+)\)/.exec(out)
        if (m) resolve(Number(m[1]))
      }
      server.stdout.on("data", look)
      server.stderr.on("data", look)
      void exited.then((code) => reject(new Error(`the server exited (${code}) before starting the child: ${out}`)))
    })
    // The child is generating while the stores open.
    expect(alive(childPid)).toBe(true)
    expect(out).not.toMatch(/listening on/)
    server.kill("SIGTERM")
    expect(await exited).toBe(0)
    expect(alive(childPid)).toBe(false)
    const kept = join(dir, "simulated-market")
    const names = existsSync(kept) ? readdirSync(kept) : []
    expect(names.filter((n) => n.endsWith(".tmp"))).toEqual([])
    // The child was stopped, not done: the test saw what it means to.
    expect(names.filter((n) => n.endsWith(".seg")).length).toBeLessThan(428)
  }, 300_000)

  it("stops the cluster's creation at once: its child killed, no PG_VERSION left; the next start creates and serves", async () => {
    const folder = mkdtempSync(join(tmpdir(), "cluster-child-sigterm-"))
    try {
      const { DATABASE_URL: _db, ...inherited } = process.env
      const server = spawn(process.execPath, [SERVE_ENTRY, "serve"], {
        env: { ...inherited, PORT: "0", MARKET_DATA_DIR: folder, MARKET_DATA_SIM_UNIVERSE: "registry" },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let out = ""
      server.stdout.on("data", (d) => (out += d))
      server.stderr.on("data", (d) => (out += d))
      const exited = new Promise<number | null>((resolve) => server.on("exit", (code) => resolve(code)))
      const staging = join(folder, PGLITE_STAGING)
      // The creating child is at work (its command line names the staging folder) when the signal comes.
      const [creator] = await waitFor(() => {
        if (server.exitCode !== null) throw new Error(`the server exited before creating its cluster: ${out}`)
        const found = processesWith(staging)
        return found.length > 0 ? found : undefined
      })
      server.kill("SIGTERM")
      expect(await exited, out).toBe(0)
      expect(alive(creator as number)).toBe(false)
      expect(processesWith(staging)).toEqual([])
      expect(existsSync(join(folder, "PG_VERSION"))).toBe(false)
      // The stop waited for the child to be gone and removed what it had made.
      expect(existsSync(staging)).toBe(false)
      expect(out).not.toMatch(/listening on/)

      const again = await startServerProcess({ MARKET_DATA_DIR: folder }, { entry: SERVE_ENTRY, args: ["serve"] })
      try {
        expect((await fetch(`${again.base}/healthz`)).status).toBe(200)
        expect(existsSync(join(folder, "PG_VERSION"))).toBe(true)
        expect(existsSync(staging)).toBe(false)
      } finally {
        const gone = new Promise((resolve) => again.child.on("exit", resolve))
        again.child.kill("SIGTERM")
        await gone
      }
    } finally {
      rmSync(folder, { recursive: true, force: true })
    }
  }, 300_000)
})
