/**
 * Server processes for the cross-process and fault suites: the real `market-data serve` (`infra/src/bin.ts`)
 * or `serve-test-plane.ts` (the same `serve` with the deterministic test plane, where `crypto:slow` sleeps
 * TEST_SLOW_MS), started on a free port with the given environment and stopped by SIGTERM or killed.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"

export const TEST_PLANE_ENTRY = join(import.meta.dirname, "serve-test-plane.ts")
export const SERVE_ENTRY = join(import.meta.dirname, "..", "..", "infra", "src", "bin.ts")

export interface ServerProcess {
  readonly base: string
  readonly port: number
  readonly child: ChildProcess
  /** What the process wrote to stderr so far. */
  readonly stderr: () => string
  /** What the process wrote to stdout so far (the startup line, log lines). */
  readonly stdout: () => string
}

/**
 * Starts a server process and resolves when its startup line names the address. `entry` is a script run with
 * this Node (`TEST_PLANE_ENTRY` by default); `args` follow it (`["serve"]` for `SERVE_ENTRY`).
 */
export const startServerProcess = (
  env: Record<string, string>,
  options: { readonly entry?: string; readonly args?: ReadonlyArray<string>; readonly startTimeoutMs?: number } = {}
): Promise<ServerProcess> =>
  new Promise((resolve, reject) => {
    const entry = options.entry ?? TEST_PLANE_ENTRY
    const child = spawn(process.execPath, [entry, ...(options.args ?? [])], {
      // The registry's universe unless a test names one (a start of the 400-asset market costs a minute of CPU).
      env: { ...process.env, PORT: "0", LOG_LEVEL: "warn", MARKET_DATA_SIM_UNIVERSE: "registry", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    let err = ""
    let started = false
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`server did not start within ${options.startTimeoutMs ?? 60_000} ms: ${err.slice(-2000)}`))
    }, options.startTimeoutMs ?? 60_000)
    child.stderr?.on("data", (d) => {
      err += d
      if (err.length > 200_000) err = err.slice(-100_000)
    })
    child.stdout?.on("data", (d) => {
      out += d
      if (out.length > 400_000) out = out.slice(-200_000)
      if (started) return
      const m = /listening on (http:\/\/[^/\s]+)/.exec(out)
      if (m) {
        started = true
        clearTimeout(timer)
        const base = m[1] as string
        resolve({ base, port: Number(new URL(base).port), child, stderr: () => err, stdout: () => out })
      }
    })
    child.on("exit", (code, signal) => {
      clearTimeout(timer)
      if (!started) reject(new Error(`server exited (${code ?? signal}) before listening: ${err.slice(-2000)}`))
    })
  })

/** SIGTERM (graceful: drain, close the stores) and wait for the exit; SIGKILL after `graceMs`. */
export const stopServerProcess = (s: ServerProcess, graceMs = 15_000): Promise<void> =>
  new Promise<void>((resolve) => {
    if (s.child.exitCode !== null || s.child.signalCode !== null) return resolve()
    const timer = setTimeout(() => s.child.kill("SIGKILL"), graceMs)
    s.child.on("exit", () => {
      clearTimeout(timer)
      resolve()
    })
    s.child.kill("SIGTERM")
  })

/** SIGKILL and wait for the exit. */
export const killServerProcess = (s: ServerProcess): Promise<void> =>
  new Promise<void>((resolve) => {
    if (s.child.exitCode !== null || s.child.signalCode !== null) return resolve()
    s.child.on("exit", () => resolve())
    s.child.kill("SIGKILL")
  })
