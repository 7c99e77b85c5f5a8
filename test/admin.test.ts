/**
 * Keys on a running embedded server: while `serve` holds the PGlite data folder, the key, credit and doctor
 * commands go to it over its local admin channel (a Unix socket in an owner-only folder) and work; the channel
 * refuses anything that is not a local Unix-socket caller.
 */
import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { adminHandler, adminSocketPath } from "@market-data/infra"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SERVE_ENTRY, type ServerProcess, startServerProcess, stopServerProcess } from "./support/server-process.ts"

const LAUNCHER = join(import.meta.dirname, "..", "infra", "bin", "market-data.js")

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

describe("the admin channel of a running embedded server", () => {
  let dir: string
  let server: ServerProcess
  const cli = (args: ReadonlyArray<string>): Promise<Run> =>
    new Promise((resolve) => {
      const { DATABASE_URL: _db, ...env } = process.env
      execFile(
        process.execPath,
        [LAUNCHER, ...args],
        { env: { ...env, MARKET_DATA_DIR: dir, LOG_LEVEL: "warn" }, timeout: 60_000 },
        (error, stdout, stderr) =>
          resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr })
      )
    })
  const usage = async (key: string) => {
    const res = await fetch(`${server.base}/api/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
    return { status: res.status, body: (await res.json()) as { data: { credits_remaining: number } } }
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "md-admin-"))
    const { DATABASE_URL: _db, ...env } = process.env
    server = await startServerProcess(
      { ...(env as Record<string, string>), DATABASE_URL: "", MARKET_DATA_DIR: dir },
      { entry: SERVE_ENTRY, args: ["serve"], startTimeoutMs: 90_000 }
    )
  }, 120_000)
  afterAll(async () => {
    if (server !== undefined) await stopServerProcess(server)
    rmSync(dir, { recursive: true, force: true })
  })

  it("mints a key, grants credits, lists and revokes while the server runs; the server serves the key at once", async () => {
    const created = await cli(["keys", "create", "--credits", "5", "--label", "live", "--json"])
    expect(created.stderr).toBe("")
    expect(created.code).toBe(0)
    const key = JSON.parse(created.stdout) as { key: string; id: string; credits: number }
    expect(key.credits).toBe(5)
    expect((await usage(key.key)).body.data.credits_remaining).toBe(5)

    const granted = await cli(["credits", "grant", key.id, "10", "--json"])
    expect(granted.code).toBe(0)
    expect(JSON.parse(granted.stdout)).toMatchObject({ id: key.id, granted: 10, credits: 15 })
    expect((await usage(key.key)).body.data.credits_remaining).toBe(15)

    const listed = await cli(["keys", "list", "--json"])
    expect(listed.code).toBe(0)
    expect((JSON.parse(listed.stdout) as Array<{ id: string; label: string }>).map((k) => k.id)).toContain(key.id)

    // The command's own errors and exit codes come back as they would from a local run.
    const unknown = await cli(["credits", "grant", "key_doesNotExist", "3"])
    expect(unknown.code).toBe(1)
    const usageError = await cli(["keys", "bogus"])
    expect(usageError.code).toBe(2)
    expect(usageError.stderr).toContain('unknown keys command "bogus"')

    const revoked = await cli(["keys", "revoke", key.id])
    expect(revoked.code).toBe(0)
    expect((await usage(key.key)).status).toBe(401)
  }, 90_000)

  it("doctor reports the running server healthy, checked by the server itself", async () => {
    const doctor = await cli(["doctor", "--json"])
    expect(doctor.code).toBe(0)
    const report = JSON.parse(doctor.stdout) as { healthy: boolean; checks: Array<{ name: string; status: string }> }
    expect(report.healthy).toBe(true)
    expect(report.checks.find((c) => c.name === "lock")?.status).toBe("ok")
    expect(report.checks.find((c) => c.name === "migrations")?.status).toBe("ok")
  }, 60_000)

  it("is a Unix socket only its owner can reach, absent from the HTTP port", async () => {
    const path = adminSocketPath(dir)
    expect(statSync(path).isSocket()).toBe(true)
    expect(statSync(path).mode & 0o777).toBe(0o600)
    expect(statSync(join(dir, "admin")).mode & 0o777).toBe(0o700)
    // The HTTP port carries no admin route: the same request there creates nothing.
    const before = JSON.parse((await cli(["keys", "list", "--json"])).stdout) as Array<unknown>
    const remote = await fetch(`${server.base}/v1/command`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ argv: ["keys", "create", "--credits", "1000"] })
    })
    expect(remote.status).toBe(404)
    const after = JSON.parse((await cli(["keys", "list", "--json"])).stdout) as Array<unknown>
    expect(after.length).toBe(before.length)
  }, 60_000)
})

describe("adminHandler", () => {
  it("refuses a caller that is not on a Unix socket, without running anything", async () => {
    let ran = 0
    const handler = adminHandler(() =>
      Effect.sync(() => {
        ran++
        return 0
      })
    )
    // The handler mounted on TCP, as if it were reachable from the network: every TCP caller has an address.
    const tcp = http.createServer(handler)
    await new Promise<void>((r) => tcp.listen(0, "127.0.0.1", r))
    try {
      const res = await fetch(`http://127.0.0.1:${(tcp.address() as AddressInfo).port}/v1/command`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ argv: ["keys", "create", "--credits", "1000"] })
      })
      expect(res.status).toBe(403)
      expect(((await res.json()) as { err: Array<string> }).err[0]).toContain("local Unix-socket connections only")
      expect(ran).toBe(0)
    } finally {
      await new Promise((r) => tcp.close(r))
    }
  })

  it("runs only the key, credit and doctor commands", async () => {
    const dir = mkdtempSync(join(tmpdir(), "md-admin-unit-"))
    const path = join(dir, "a.sock")
    let ran = 0
    const unix = http.createServer(
      adminHandler(() =>
        Effect.sync(() => {
          ran++
          return 0
        })
      )
    )
    await new Promise<void>((r) => unix.listen(path, r))
    const post = (argv: unknown) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request({ socketPath: path, method: "POST", path: "/v1/command" }, (res) => {
          let body = ""
          res.on("data", (d) => {
            body += d
          })
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body }))
        })
        req.on("error", reject)
        req.end(JSON.stringify({ argv }))
      })
    try {
      expect((await post(["serve"])).status).toBe(400)
      expect((await post(["ingest", "sec", "/etc"])).status).toBe(400)
      expect((await post("keys list")).status).toBe(400)
      expect(ran).toBe(0)
      const ok = await post(["keys", "list"])
      expect(ok.status).toBe(200)
      expect(JSON.parse(ok.body)).toEqual({ code: 0, out: [], err: [] })
      expect(ran).toBe(1)
    } finally {
      await new Promise((r) => unix.close(r))
      rmSync(dir, { recursive: true, force: true })
    }
    expect(existsSync(path)).toBe(false)
  })
})
