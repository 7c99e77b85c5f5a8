/**
 * A start as a newcomer runs it: `npm start` on the embedded default with `MARKET_DATA_DIR` a new folder (or the
 * folder named, for a restart), every stdout line timestamped, `/readyz` asked every 250 ms once the port is known,
 * the RSS of the process tree (the server and the kept history's child) read from `/proc` every 250 ms. Prints the
 * lines, then a summary: when the port opened (`starting on`), when the service listened (`listening on`), the
 * first `/readyz` 200, `crypto baselines warm`, the longest stretch without a line before warm, peak RSS, and the
 * load average along the way. Stops the server (SIGTERM) once it is warm.
 *
 *   npx node bench/first-start.ts [data-folder]
 *
 * Linux only (`/proc`). Not part of `npm run bench`: it takes minutes and its figures are the machine's load.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"

const dir = process.argv[2] ?? mkdtempSync(join(tmpdir(), "market-data-first-start-"))
const limitS = Number(process.env.FIRST_START_MAX_S ?? 900)
const startedAt = Date.now()
const seconds = () => Math.round((Date.now() - startedAt) / 100) / 10

const child: ChildProcess = spawn("npm", ["start"], {
  env: {
    ...process.env,
    MARKET_DATA_DIR: dir,
    PORT: "0",
    MARKET_DATA_METRICS_PORT: "off",
    MARKET_DATA_BOOTSTRAP_KEY: "mdk_0123456789abcdefghijklmnopqrstuv",
    MARKET_DATA_BOOTSTRAP_CREDITS: "1000"
  },
  detached: true,
  stdio: ["ignore", "pipe", "inherit"]
})
const pid = child.pid as number

const lines: Array<string> = []
const seen: {
  url?: string
  portOpen?: number
  listening?: number
  ready?: number
  warm?: number
} = {}
let lastLineAt = startedAt
let longestSilence = { ms: 0, before: "" }
let pending = ""
child.stdout?.on("data", (data: Buffer) => {
  pending += data.toString("utf8")
  for (let end = pending.indexOf("\n"); end >= 0; end = pending.indexOf("\n")) {
    const line = pending.slice(0, end)
    pending = pending.slice(end + 1)
    const now = Date.now()
    if (seen.warm === undefined && now - lastLineAt > longestSilence.ms)
      longestSilence = { ms: now - lastLineAt, before: line.slice(0, 160) }
    lastLineAt = now
    lines.push(`${seconds().toFixed(1)} ${line}`)
    const bound = /(?:starting on|listening on) (http:\/\/[^/\s]+:\d+)/.exec(line)
    if (bound !== null && seen.url === undefined) {
      seen.url = bound[1] as string
      seen.portOpen = seconds()
    }
    if (seen.listening === undefined && line.includes("market-data listening on")) seen.listening = seconds()
    if (seen.warm === undefined && line.includes("crypto baselines warm")) seen.warm = seconds()
  }
})

/** The process and its descendants, from `/proc/<pid>/stat`'s parent field. */
const tree = (): Array<number> => {
  const parents = new Map<number, number>()
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]))
    } catch {
      // Gone meanwhile.
    }
  }
  const found = [pid]
  for (let grew = true; grew; ) {
    grew = false
    for (const [p, parent] of parents) {
      if (found.includes(parent) && !found.includes(p)) {
        found.push(p)
        grew = true
      }
    }
  }
  return found
}

const rssMb = (p: number): number => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, "utf8"))?.[1] ?? 0) / 1024
  } catch {
    return 0
  }
}

const peak = { tree: 0, one: 0 }
const loads: Array<number> = [loadavg()[0] as number]
let lastLoadAt = startedAt
let firstReadyz: { readonly at: number; readonly status: number; readonly body: string } | undefined
let asking = false
const timer = setInterval(() => {
  const rss = tree().map(rssMb)
  peak.tree = Math.max(
    peak.tree,
    rss.reduce((a, b) => a + b, 0)
  )
  peak.one = Math.max(peak.one, ...rss)
  if (Date.now() - lastLoadAt >= 10_000) {
    lastLoadAt = Date.now()
    loads.push(loadavg()[0] as number)
  }
  if (seen.url !== undefined && seen.ready === undefined && !asking) {
    asking = true
    fetch(`${seen.url}/readyz`, { signal: AbortSignal.timeout(2000) })
      .then(async (res) => {
        firstReadyz ??= { at: seconds(), status: res.status, body: (await res.text()).slice(0, 200) }
        if (res.status === 200) seen.ready = seconds()
      })
      .catch(() => undefined)
      .finally(() => {
        asking = false
      })
  }
  if ((seen.ready !== undefined && seen.warm !== undefined) || seconds() > limitS) finish()
}, 250)

let finished = false
const finish = () => {
  if (finished) return
  finished = true
  clearInterval(timer)
  loads.push(loadavg()[0] as number)
  try {
    process.kill(-pid, "SIGTERM")
  } catch {
    // Already gone.
  }
  child.once("exit", () => {
    process.stdout.write(`${lines.join("\n")}\n`)
    process.stdout.write(
      `${JSON.stringify(
        {
          dir,
          portOpenS: seen.portOpen,
          listeningS: seen.listening,
          readyzOkS: seen.ready,
          warmS: seen.warm,
          firstReadyz,
          longestSilenceBeforeWarmS: longestSilence.ms / 1000,
          lineAfterIt: longestSilence.before,
          peakRssMb: Math.round(peak.one),
          peakRssWithChildrenMb: Math.round(peak.tree),
          loadAverage: `${Math.min(...loads).toFixed(1)} to ${Math.max(...loads).toFixed(1)}`
        },
        null,
        1
      )}\n`
    )
  })
}
