import { spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { memoryStores } from "@market-data/memory"
import { ConfigProvider, Effect } from "effect"
import { describe, expect, it } from "vitest"
import { parseArgs, runCli } from "../src/Cli.ts"

const capture = () => {
  const out: Array<string> = []
  const err: Array<string> = []
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err }
}

describe("market-data CLI", () => {
  it("parses flags in both forms and refuses repeats", () => {
    const p = parseArgs(["keys", "create", "--credits", "5", "--label=ops", "--json"])
    expect("positional" in p && p.positional).toEqual(["keys", "create"])
    expect("flags" in p && Object.fromEntries(p.flags)).toEqual({ credits: "5", label: "ops", json: true })
    expect("message" in parseArgs(["--credits", "1", "--credits", "2"])).toBe(true)
    expect("message" in parseArgs(["--credits"])).toBe(true)
  })

  it("creates, lists and revokes keys against one store", async () => {
    const c = capture()
    const stores = memoryStores()
    const cli = (...argv: Array<string>) => Effect.runPromise(runCli(argv, c.io, stores))
    expect(await cli("keys", "create", "--credits", "25", "--label", "ops", "--json")).toBe(0)
    const created = JSON.parse(c.out.pop() as string)
    expect(created.key).toMatch(/^mdk_[0-9A-Za-z]{32}$/)
    expect(created.credits).toBe(25)
    expect(await cli("keys", "list", "--json")).toBe(0)
    const listed = JSON.parse(c.out.pop() as string)
    expect(listed).toHaveLength(1)
    expect(listed[0]).toMatchObject({ id: created.id, label: "ops", credits: 25, revoked_at: null })
    expect(JSON.stringify(listed)).not.toContain(created.key)
    expect(await cli("keys", "revoke", created.id)).toBe(0)
    expect(await cli("keys", "revoke", created.id)).toBe(1)
    expect(c.err.pop()).toContain("already revoked")
    expect(await cli("keys", "create")).toBe(2)
    expect(c.err.pop()).toContain("--credits is required")
    expect(await cli("keys", "create", "--credits", "-3")).toBe(2)
    expect(await cli("keys", "create", "--credits", "3", "--bogus", "x")).toBe(2)
  })

  it("refuses key commands on a store the server cannot share, saying what to do", async () => {
    const c = capture()
    const memory = ConfigProvider.layer(ConfigProvider.fromEnvRecord({ DATABASE_URL: "memory" }))
    expect(await Effect.runPromise(runCli(["keys", "list"], c.io).pipe(Effect.provide(memory)))).toBe(2)
    expect(c.err.join("\n")).toContain("MARKET_DATA_BOOTSTRAP_KEY")
  })

  it("manages keys in the embedded store, migrates it, and refuses while another process holds it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "md-cli-"))
    try {
      const embedded = ConfigProvider.layer(ConfigProvider.fromEnvRecord({ MARKET_DATA_DIR: dir }))
      const c = capture()
      const cli = (...argv: Array<string>) => Effect.runPromise(runCli(argv, c.io).pipe(Effect.provide(embedded)))
      expect(await cli("migrate", "--json")).toBe(0)
      expect(JSON.parse(c.out.pop() as string).pending).toEqual([])
      expect(await cli("keys", "create", "--credits", "7", "--json")).toBe(0)
      const created = JSON.parse(c.out.pop() as string)
      expect(await cli("keys", "list", "--json")).toBe(0)
      expect(JSON.parse(c.out.pop() as string)).toMatchObject([{ id: created.id, credits: 7 }])
      // A live process holding the lock file keeps others out with a clear message.
      writeFileSync(join(dir, "market-data.lock"), String(process.ppid))
      expect(await cli("keys", "list")).toBe(2)
      expect(c.err.pop()).toContain(`in use by process ${process.ppid}`)
      // A stale lock (dead process) is taken over.
      writeFileSync(join(dir, "market-data.lock"), "999999999")
      expect(await cli("keys", "list", "--json")).toBe(0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})

describe("market-data serve", () => {
  it("starts, prints the startup line, answers, and exits 0 on SIGTERM", async () => {
    const bin = join(import.meta.dirname, "..", "src", "bin.ts")
    const child = spawn(process.execPath, [bin, "serve"], {
      env: { ...process.env, PORT: "0", DATABASE_URL: "memory", LOG_LEVEL: "warn" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stderr.on("data", (d) => (stderr += d))
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no startup line; stderr: ${stderr}`)), 20_000)
      child.stdout.on("data", (d) => {
        stdout += d
        const m = /listening on (http:\/\/\S+)/.exec(stdout)
        if (m) {
          clearTimeout(timer)
          resolve(m[1] as string)
        }
      })
    })
    expect(stdout).toContain("store: memory")
    expect(stdout).toContain("feed: simulated")
    const res = await fetch(url)
    expect(res.status).toBe(200)
    const code = await new Promise<number | null>((resolve) => {
      child.on("exit", (c) => resolve(c))
      child.kill("SIGTERM")
    })
    expect(code).toBe(0)
  })

  it("refuses a bad configuration with a message naming the variable and exit 2", async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ DATABASE_URL: "mysql://nope" }, "DATABASE_URL"],
      [{ PORT: "70000" }, "PORT"],
      [{ PORT: "eighty" }, "PORT"],
      [{ MARKET_DATA_FEED: "dreams" }, "MARKET_DATA_FEED"],
      [{ LOG_LEVEL: "loud" }, "LOG_LEVEL"],
      [{ MARKET_DATA_RATE_LIMIT_PER_MINUTE: "0" }, "MARKET_DATA_RATE_LIMIT_PER_MINUTE"],
      [{ MARKET_DATA_BOOTSTRAP_KEY: "mdk_short", DATABASE_URL: "memory", PORT: "0" }, "MARKET_DATA_BOOTSTRAP_KEY"]
    ]
    for (const [env, name] of cases) {
      const c = capture()
      const code = await Effect.runPromise(
        runCli(["serve"], c.io).pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env))))
      )
      expect(code, JSON.stringify(env)).toBe(2)
      expect(c.err.join("\n"), JSON.stringify(env)).toContain(name)
    }
  })

  it("prints usage and exits 2 on an unknown command", async () => {
    const c = capture()
    expect(await Effect.runPromise(runCli(["frobnicate"], c.io))).toBe(2)
    expect(c.err.join("\n")).toContain("unknown command")
  })
})
