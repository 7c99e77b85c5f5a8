/**
 * What the bench scripts share about the server processes they start: how `npm start` runs the server (its
 * environment assignments and Node flags) and a process's resident memory.
 */
import { execFileSync } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { type AppConfig, DefaultSimulatedCompanies } from "@market-data/infra"

export const ROOT = join(import.meta.dirname, "..")

/** The bootstrap key every bench server is started with (its credits and rate limit raised for the run). */
export const KEY = `mdk_${"Bench".repeat(6)}XY`

/**
 * The configuration of a service the bench opens in its own process: the simulated feed on the memory store,
 * `bootstrapKey` with credits and a rate limit no run exhausts, no log lines; `overrides` for the rest.
 */
export const inProcessConfig = (bootstrapKey: string, overrides: Partial<AppConfig> = {}): AppConfig => ({
  host: "127.0.0.1",
  port: 0,
  store: { _tag: "Memory" },
  dataDir: "./.market-data",
  poolSize: 1,
  feed: "simulated",
  seed: 1,
  simulatedCompanies: DefaultSimulatedCompanies,
  allowedOrigins: [],
  bootstrapKey,
  bootstrapCredits: 1_000_000_000,
  rateLimitPerMinute: 1_000_000_000,
  logLevel: "None",
  logFormat: "json",
  ...overrides
})

/** Current RSS (MB) of a process, from `ps`. */
export const rssMb = (pid: number | undefined): number => {
  if (pid === undefined) return Number.NaN
  try {
    return Math.round(Number(execFileSync("ps", ["-o", "rss=", "-p", String(pid)], { encoding: "utf8" }).trim()) / 1024)
  } catch {
    return Number.NaN
  }
}

/** Current and peak RSS (MB) of a process, from /proc (Linux); the current one from `ps` elsewhere. */
export const memoryOf = (pid: number | undefined): { rss: number; peak: number } => {
  if (pid === undefined) return { rss: Number.NaN, peak: Number.NaN }
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8")
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN)
    return { rss: Math.round(kb("VmRSS") / 1024), peak: Math.round(kb("VmHWM") / 1024) }
  } catch {
    return { rss: rssMb(pid), peak: Number.NaN }
  }
}

/**
 * How `npm start` runs the server (the root package.json's `start` script, `[NAME=value ...] node <flags>
 * <script> serve`): its environment assignments, Node flags and script (the launcher, `infra/bin/market-data.js`,
 * which turns Node's compile cache on), so the start measured is the one users get. `BENCH_NODE_FLAGS`
 * (space-separated, assignments first, the script optional) replaces them, to try others.
 */
export interface StartCommand {
  readonly env: Record<string, string>
  readonly flags: ReadonlyArray<string>
  /** The script `node` runs, relative to the project root. */
  readonly script: string
}

const LAUNCHER = "infra/bin/market-data.js"

export const startCommand = (): StartCommand => {
  const words = (
    process.env.BENCH_NODE_FLAGS ??
    JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts?.start ??
    ""
  )
    .trim()
    .split(/\s+/)
    .filter((w: string) => w !== "")
  const env: Record<string, string> = {}
  let i = 0
  // `exec` and `env` in front of the assignments (`exec env NAME=value node ...`) are the shell's, not flags.
  for (; words[i] === "exec" || words[i] === "env"; i++);
  for (; i < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i] as string); i++) {
    const [name, ...value] = (words[i] as string).split("=")
    env[name as string] = value.join("=")
  }
  if (words[i] === "node") i++
  const flags: Array<string> = []
  for (; i < words.length && (words[i] as string).startsWith("-"); i++) flags.push(words[i] as string)
  const script = words[i]
  return { env, flags, script: script === undefined || script === "serve" ? LAUNCHER : script }
}

/** The start command as a shell line, for the printed report. */
export const describeStart = (command: StartCommand, extraEnv: Record<string, string> = {}): string =>
  `${Object.entries({ ...command.env, ...extraEnv })
    .map(([k, v]) => `${k}=${v} `)
    .join("")}node ${[...command.flags, command.script, "serve"].join(" ")}`

/**
 * CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat (Linux; NaN elsewhere): on a shared
 * machine the steadier figure beside wall times. Clock ticks are taken as 100 per second (`getconf CLK_TCK` on
 * Linux).
 */
export const cpuSecondsOf = (pid: number | undefined): number => Math.round(cpuMsOf(pid) / 100) / 10

/** CPU milliseconds (user + system) a process has used so far, unrounded (10 ms steps); NaN off Linux. */
/**
 * CPU milliseconds per thread of process `pid` (or of `self`), by thread name (`comm`: Node names its threads
 * `MainThread`, `WorkerThread`, `V8Worker`, `libuv-worker`, ...) and niceness: `name@nice` -> ms, summed over the
 * threads that share both. Empty where `/proc` is not there.
 */
export const threadCpuOf = (pid: number | "self" | undefined): Map<string, number> => {
  const out = new Map<string, number>()
  if (pid === undefined) return out
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8")
        const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"))
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
        const key = `${comm}@${fields[16]}`
        out.set(key, (out.get(key) ?? 0) + (Number(fields[11]) + Number(fields[12])) * 10)
      } catch {
        // The thread ended between the listing and the read.
      }
    }
  } catch {
    // No /proc.
  }
  return out
}

/** Each thread group's share of one core between two `threadCpuOf` readings `wallMs` apart, in percent. */
export const threadShares = (before: Map<string, number>, after: Map<string, number>, wallMs: number): string =>
  [...after.entries()]
    .map(([k, ms]) => [k, ((ms - (before.get(k) ?? 0)) / wallMs) * 100] as const)
    .filter(([, pct]) => pct >= 0.5)
    .sort((a, b) => b[1] - a[1])
    .map(([k, pct]) => `${k} ${Math.round(pct * 10) / 10}%`)
    .join(", ")

/**
 * How long a thread has waited on a run queue for a core since it started, in ms (`/proc/<pid>/task/<tid>/schedstat`:
 * time on a core, time runnable but waiting, slices, in ns); NaN where the kernel does not keep it. The service's
 * answering thread is its main thread (`tid` = `pid`).
 */
export const runQueueWaitMsOf = (pid: number | undefined, tid: number | undefined = pid): number => {
  if (pid === undefined || tid === undefined) return Number.NaN
  try {
    const fields = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").trim().split(" ")
    return Number(fields[1]) / 1e6
  } catch {
    return Number.NaN
  }
}

export const cpuMsOf = (pid: number | undefined): number => {
  if (pid === undefined) return Number.NaN
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // Fields after the command name (which may hold spaces, so split after its closing parenthesis).
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return Number.NaN
  }
}
