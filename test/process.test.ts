/**
 * The process as a supervisor sees it: `npm start` signalled (SIGTERM as `docker stop` or systemd send it,
 * SIGINT as a terminal does) stops the service cleanly, releasing the data folder's lock; and the `market-data`
 * launcher on a Node too old for the service says so in one sentence, or runs the pinned Node when there is one.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import * as net from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createMarketData } from "@market-data/embedded"
import { nodeVersionProblem } from "@market-data/infra"
import { afterAll, describe, expect, it } from "vitest"

const ROOT = join(import.meta.dirname, "..")
const LAUNCHER = join(ROOT, "infra", "bin", "market-data.js")

const scratch: Array<string> = []
const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "md-process-"))
  scratch.push(dir)
  return dir
}
/** Processes started under `npm start`; any left alive after a test (an orphan) is killed here. */
const started: Array<number> = []
afterAll(() => {
  for (const pid of started) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // already gone, as it should be
    }
  }
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true })
})

/** The process IDs below `pid` (Linux /proc; elsewhere none). */
const descendants = (pid: number): Array<number> => {
  if (!existsSync("/proc")) return []
  const parents = new Map<number, number>()
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
      parents.set(Number(entry), ppid)
    } catch {
      // exited meanwhile
    }
  }
  const out: Array<number> = []
  const walk = (p: number) => {
    for (const [child, parent] of parents) {
      if (parent !== p) continue
      out.push(child)
      walk(child)
    }
  }
  walk(pid)
  return out
}

interface Started {
  readonly child: ChildProcess
  readonly port: number
  readonly stdout: () => string
  readonly stderr: () => string
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/** `npm start` as an operator runs it, resolved once the startup line names the port (bounded). */
const npmStart = (env: Record<string, string>): Promise<Started> =>
  new Promise((resolve, reject) => {
    const { DATABASE_URL: _db, ...inherited } = process.env
    const child = spawn("npm", ["start", "--silent"], {
      cwd: ROOT,
      env: { ...inherited, PORT: "0", LOG_LEVEL: "warn", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    let err = ""
    child.stdout?.on("data", (d) => {
      out += d
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out)
      if (m !== null && !done) {
        done = true
        clearTimeout(timer)
        if (child.pid !== undefined) started.push(child.pid, ...descendants(child.pid))
        resolve({ child, port: Number(m[1]), stdout: () => out, stderr: () => err, exited })
      }
    })
    child.stderr?.on("data", (d) => {
      err += d
    })
    let done = false
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
      child.on("exit", (code, signal) => res({ code, signal }))
    )
    void exited.then(({ code, signal }) => {
      if (!done) {
        done = true
        clearTimeout(timer)
        reject(new Error(`npm start exited (${code ?? signal}) before listening: ${err.slice(-2000)}`))
      }
    })
    const timer = setTimeout(() => {
      done = true
      child.kill("SIGKILL")
      reject(new Error(`npm start did not listen within 90 s: ${err.slice(-2000)}`))
    }, 90_000)
  })

/** Whether something accepts connections on the port. */
const accepting = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port })
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

/** Waits for `exited`, failing after `ms` (and then killing whatever is left on the port's process). */
const within = <A>(promise: Promise<A>, ms: number, what: string): Promise<A> =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms).unref())
  ])

describe("npm start under a supervisor", () => {
  it("SIGTERM to npm stops the server: drained, stores closed, lock released, one shutdown line, exit 0", async () => {
    const dir = tempDir()
    const s = await npmStart({ MARKET_DATA_DIR: dir })
    expect(existsSync(join(dir, "market-data.lock"))).toBe(true)
    // A request answered before the signal: the server is really serving.
    expect((await fetch(`http://127.0.0.1:${s.port}/api/v1`)).status).toBe(200)
    s.child.kill("SIGTERM")
    const exit = await within(s.exited, 30_000, "npm start did not exit")
    expect(exit).toEqual({ code: 0, signal: null })
    // Nothing is left holding the port or the data folder (the old orphan kept both).
    expect(await accepting(s.port)).toBe(false)
    expect(existsSync(join(dir, "market-data.lock"))).toBe(false)
    const stopped = s
      .stdout()
      .split("\n")
      .filter((l) => l.startsWith("market-data stopped"))
    expect(stopped).toEqual(["market-data stopped on SIGTERM: in-flight requests drained, stores closed"])
    expect(s.stderr()).not.toMatch(/Cause|Error/)
  }, 120_000)

  it("SIGINT to npm stops it the same way", async () => {
    const s = await npmStart({ DATABASE_URL: "memory" })
    s.child.kill("SIGINT")
    const exit = await within(s.exited, 30_000, "npm start did not exit")
    expect(exit).toEqual({ code: 0, signal: null })
    expect(await accepting(s.port)).toBe(false)
    expect(s.stdout()).toContain("market-data stopped on SIGINT")
  }, 120_000)
})

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}
const run = (command: string, args: ReadonlyArray<string>, cwd: string, env = process.env): Promise<Run> =>
  new Promise((resolve) => {
    execFile(command, args, { cwd, env, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr })
    )
  })

/** Makes this Node report another version to the launcher (process.versions.node is what it checks). */
const pretendNode = (version: string) =>
  `--import=data:text/javascript,Object.defineProperty(process.versions,"node",{value:"${version}"})`

describe("the market-data launcher", () => {
  it("on an unsupported Node with no pinned Node to run: one plain sentence naming the version needed, exit 2", async () => {
    // A copy outside the workspace finds no `node` package to re-run with.
    const dir = tempDir()
    const copy = join(dir, "market-data.js")
    copyFileSync(LAUNCHER, copy)
    const r = await run(process.execPath, [pretendNode("20.20.2"), copy, "help"], dir)
    expect(r.code).toBe(2)
    expect(r.stdout).toBe("")
    expect(r.stderr.trim().split("\n")).toHaveLength(1)
    expect(r.stderr).toContain("market-data needs Node >= 22.19")
    expect(r.stderr).toContain("this is Node 20.20.2")
    expect(r.stderr).not.toMatch(/Cause|at .*\(/)
  })

  it("on a supported Node it runs the command", async () => {
    const r = await run(process.execPath, [LAUNCHER, "help"], ROOT)
    expect(r.code).toBe(0)
    expect(r.stdout).toContain("market-data <command>")
  })

  it("turns Node's compile cache on, in the temporary folder unless NODE_COMPILE_CACHE names one", async () => {
    // Not set here: Node would then turn the cache on by itself, whatever the launcher does.
    const { NODE_COMPILE_CACHE: _ignored, NODE_DISABLE_COMPILE_CACHE: _off, ...env } = process.env
    const tmp = tempDir()
    const r = await run(process.execPath, [LAUNCHER, "help"], ROOT, { ...env, TMPDIR: tmp })
    expect(r.code).toBe(0)
    const cache = join(tmp, "node-compile-cache")
    expect(existsSync(cache)).toBe(true)
    // One folder per Node build, holding the cached modules.
    const [build] = readdirSync(cache)
    expect(readdirSync(join(cache, build as string)).length).toBeGreaterThan(100)
    // Node's own switch turns it off.
    const off = tempDir()
    const r2 = await run(process.execPath, [LAUNCHER, "help"], ROOT, {
      ...env,
      TMPDIR: off,
      NODE_DISABLE_COMPILE_CACHE: "1"
    })
    expect(r2.code).toBe(0)
    expect(existsSync(join(off, "node-compile-cache"))).toBe(false)
  })

  // The re-run needs a real old Node: the machine's own `node`, when it is older than 22.19.
  const machineNode = ["/usr/bin/node", "/usr/local/bin/node"].find((p) => existsSync(p))
  it.skipIf(machineNode === undefined)(
    "on the machine's older Node it re-runs the command with the pinned Node (skipped without a machine Node)",
    async () => {
      const version = await run(machineNode as string, ["--version"], ROOT)
      const [major, minor] = version.stdout.trim().slice(1).split(".").map(Number) as [number, number]
      if (major > 22 || (major === 22 && minor >= 19)) {
        console.warn(`machine Node ${version.stdout.trim()} is supported; the re-run path is not exercised`)
        return
      }
      const r = await run(machineNode as string, [LAUNCHER, "help"], ROOT)
      expect(r.code).toBe(0)
      expect(r.stdout).toContain("market-data <command>")
    }
  )
})

describe("the embedding path on an unsupported Node", () => {
  it("createMarketData rejects with one plain sentence naming the Node needed", async () => {
    const real = process.versions.node
    Object.defineProperty(process.versions, "node", { value: "20.20.2", configurable: true })
    try {
      const error = await createMarketData({ store: "memory" }).then(
        () => undefined,
        (e: unknown) => e
      )
      expect(error).toBeInstanceOf(Error)
      expect((error as Error).message).toBe(nodeVersionProblem("20.20.2"))
      expect((error as Error).message).toMatch(/^market-data needs Node >= 22\.19 .* this is Node 20\.20\.2: /)
    } finally {
      Object.defineProperty(process.versions, "node", { value: real, configurable: true })
    }
    expect(nodeVersionProblem("22.19.0")).toBeUndefined()
    expect(nodeVersionProblem("24.21.0")).toBeUndefined()
    expect(nodeVersionProblem("22.18.9")).toContain("needs Node >= 22.19")
  })
})
