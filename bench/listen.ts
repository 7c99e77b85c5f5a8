/**
 * Push over MCP 2026-07-28 (`subscriptions/listen`) at scale, against a server in its own process
 * (`bench/listen-server.ts`: the real transports and pipeline over a synthetic `read` plane whose assets change at
 * known instants). Alone: `BENCH_ONLY=listen node bench/run.ts` (no PostgreSQL). Targets (issue 31):
 *
 * - 1,000 listen streams over 10,000 subscribed asset resources on one instance (10 resources per stream, every
 *   resource a distinct asset), each asset changing every `BENCH_LISTEN_SLOT_MS` (10 s: 1,000 changes a second);
 * - notification latency p99 <= 1 s, from the instant the asset's data changed (the plane's slot boundary: from
 *   then on every read answers the new data) to the notification's arrival in this process;
 * - server RSS growth per idle listen stream <= 20 KB: 1,000 streams over 10,000 assets that change once an hour,
 *   RSS (/proc VmRSS) and V8's heap (used heap plus external memory) after a full collection in the server
 *   (`--expose-gc`), before opening them and once the watcher has read every one of their assets;
 * - what idle streams cost in the background: over `BENCH_LISTEN_IDLE_S` (default 20 s, more than one 15 s floor
 *   period) with the idle streams open and, before, with none, the watcher's asset reads and floor looks a second
 *   and the server's CPU time (its own `process.cpuUsage()`, collections for the measurement left out);
 * - paid `read` throughput (HTTP, 50 connections, autocannon) with the 1,000 active streams open within 10 % of
 *   without: alternating rounds (`BENCH_LISTEN_ROUNDS`, default 3) of `BENCH_SECONDS` each, medians compared.
 *
 * The load generator, the 1,000 SSE readers and autocannon share this process, so a notification's measured
 * latency includes this process's own delays (an upper bound of the server's).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"
import autocannon from "autocannon"
import { ROOT, startCommand } from "./process.ts"

const STREAMS = Number(process.env.BENCH_LISTEN_STREAMS ?? 1_000)
const PER_STREAM = 10
const ASSETS = STREAMS * PER_STREAM
const SLOT_MS = Number(process.env.BENCH_LISTEN_SLOT_MS ?? 10_000)
const ROUNDS = Number(process.env.BENCH_LISTEN_ROUNDS ?? 3)
const DURATION = Number(process.env.BENCH_SECONDS ?? 10)
const IDLE_S = Number(process.env.BENCH_LISTEN_IDLE_S ?? 20)
/** Which parts run: `idle` (memory and background cost), `active` (latency and throughput); both by default. */
const PARTS = (process.env.BENCH_LISTEN_PARTS ?? "idle,active").split(",")
const VERSION = "2026-07-28"
const META = {
  "io.modelcontextprotocol/protocolVersion": VERSION,
  "io.modelcontextprotocol/clientCapabilities": {}
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** What the server reports on request (`bench/listen-server.ts`). */
interface ServerStats {
  readonly atMs: number
  readonly memory: NodeJS.MemoryUsage
  /** CPU time before the collection the report starts with, and after it (µs). */
  readonly cpuBeforeGcUs: NodeJS.CpuUsage
  readonly cpuUs: NodeJS.CpuUsage
  readonly listen: {
    readonly assetsRead: number
    readonly reads: number
    readonly floorLooks: number
    readonly floorSkipped: number
    readonly notificationsSent: number
  }
}

interface Server {
  readonly url: string
  readonly keys: ReadonlyArray<string>
  readonly epochMs: number
  readonly child: ChildProcess
  /** The server's memory after a full collection, its CPU time and the watcher's totals. */
  readonly stats: () => Promise<ServerStats>
  /** Sends one line to the server and gives its one-line JSON answer. */
  readonly command: (line: string) => Promise<unknown>
}

const startListenServer = (): Promise<Server> =>
  new Promise((resolve, reject) => {
    const start = startCommand()
    const child = spawn(process.execPath, [...start.flags, "--expose-gc", join(ROOT, "bench", "listen-server.ts")], {
      cwd: ROOT,
      env: {
        ...process.env,
        ...start.env,
        BENCH_LISTEN_ASSETS: String(ASSETS),
        BENCH_LISTEN_SLOT_MS: String(SLOT_MS),
        BENCH_LISTEN_KEYS: String(STREAMS / 10 + 1)
      },
      stdio: ["pipe", "pipe", "pipe"]
    })
    let out = ""
    let err = ""
    let started = false
    const waiting: Array<(answer: unknown) => void> = []
    const command = (line: string) =>
      new Promise<unknown>((r) => {
        waiting.push(r)
        child.stdin?.write(`${line}\n`)
      })
    const stats = () => command("stats") as Promise<ServerStats>
    child.stdout?.on("data", (d) => {
      out += d
      for (let nl = out.indexOf("\n"); nl >= 0; nl = out.indexOf("\n")) {
        const line = out.slice(0, nl)
        out = out.slice(nl + 1)
        if (!line.startsWith("{")) continue
        if (!started) {
          started = true
          const parsed = JSON.parse(line) as { url: string; keys: Array<string>; epochMs: number }
          resolve({ ...parsed, child, stats, command })
        } else {
          waiting.shift()?.(JSON.parse(line))
        }
      }
    })
    child.stderr?.on("data", (d) => (err += d))
    child.on("exit", (code) => reject(new Error(`listen server exited ${code}: ${err}`)))
  })

/** The instant asset `index`'s data last changed at or before `atMs` (the plane's slot boundary). */
const lastChangeOf = (epochMs: number, index: number, atMs: number): number => {
  const phase = Math.floor((index * SLOT_MS) / ASSETS)
  return epochMs + phase + Math.floor((atMs - epochMs - phase) / SLOT_MS) * SLOT_MS
}

interface OpenStreams {
  readonly acknowledged: Promise<void>
  readonly close: () => Promise<void>
  readonly notifications: () => number
}

/**
 * Opens `STREAMS` listen streams, stream `s` subscribed to `<prefix>-<s*10 .. s*10+9>`, ten per key; calls
 * `onUpdate(index, arrivalMs)` for each `notifications/resources/updated`.
 */
const openStreams = (
  server: Server,
  prefix: string,
  onUpdate: (index: number, atMs: number) => void,
  from = 0,
  to = STREAMS
): OpenStreams => {
  const controllers: Array<AbortController> = []
  let acks = 0
  let count = 0
  let resolveAcks: () => void = () => {}
  let rejectAcks: (e: unknown) => void = () => {}
  const acknowledged = new Promise<void>((resolve, reject) => {
    resolveAcks = resolve
    rejectAcks = reject
  })
  const done: Array<Promise<void>> = []
  for (let s = from; s < to; s++) {
    const controller = new AbortController()
    controllers.push(controller)
    const uris = Array.from({ length: PER_STREAM }, (_, j) => `service://read/crypto:${prefix}-${s * PER_STREAM + j}`)
    const key = server.keys[Math.floor(s / 10)] as string
    done.push(
      (async () => {
        const res = await fetch(`${server.url}/api/mcp`, {
          method: "POST",
          signal: controller.signal,
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            authorization: `Bearer ${key}`,
            "mcp-protocol-version": VERSION,
            "mcp-method": "subscriptions/listen"
          },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: s,
            method: "subscriptions/listen",
            params: { notifications: { resourceSubscriptions: uris }, _meta: META }
          })
        })
        if (res.status !== 200 || res.body === null)
          throw new Error(`listen ${s}: HTTP ${res.status} ${await res.text()}`)
        const reader = res.body.getReader()
        const decoder = new TextDecoder()
        let buffer = ""
        try {
          while (true) {
            const { value, done: end } = await reader.read()
            if (end) return
            const atMs = Date.now()
            buffer += decoder.decode(value, { stream: true })
            for (let cut = buffer.indexOf("\n\n"); cut >= 0; cut = buffer.indexOf("\n\n")) {
              const block = buffer.slice(0, cut)
              buffer = buffer.slice(cut + 2)
              if (!block.startsWith("data: ")) continue
              const m = JSON.parse(block.slice(6)) as { method?: string; params?: { uri?: string } }
              if (m.method === "notifications/subscriptions/acknowledged") {
                if (++acks === to - from) resolveAcks()
              } else if (m.method === "notifications/resources/updated") {
                count++
                onUpdate(Number(/-(\d+)$/.exec(m.params?.uri ?? "")?.[1]), atMs)
              }
            }
          }
        } catch {
          // aborted
        }
      })().catch((e: unknown) => {
        // A refused stream fails the run (through `acknowledged`), not the process: the server is still stopped.
        if (!controller.signal.aborted) rejectAcks(e)
      })
    )
  }
  return {
    acknowledged,
    notifications: () => count,
    close: async () => {
      for (const c of controllers) c.abort()
      await Promise.allSettled(done)
    }
  }
}

const quantile = (sorted: ReadonlyArray<number>, q: number): number =>
  sorted.length === 0 ? Number.NaN : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number)

const median = (xs: ReadonlyArray<number>): number =>
  quantile(
    [...xs].sort((a, b) => a - b),
    0.5
  )

const readLoad = async (server: Server) => {
  const key = server.keys.at(-1) as string
  const result = await autocannon({
    url: `${server.url}/api/v1/read?id=crypto:bench-7`,
    headers: { authorization: `Bearer ${key}` },
    connections: 50,
    duration: DURATION
  })
  return { rps: result.requests.average, non2xx: result.non2xx }
}

/** The server's background work over a window: CPU share, and the watcher's reads and floor looks a second. */
interface WatchWindow {
  readonly seconds: number
  readonly cpuPct: number
  readonly assetReadsPerS: number
  readonly readsPerS: number
  readonly floorLooksPerS: number
  readonly floorSkippedPerS: number
}

export interface ListenBench {
  readonly streams: number
  readonly resources: number
  readonly slotMs: number
  readonly idle:
    | {
        readonly rssGrowthKbPerStream: number
        readonly heapGrowthKbPerStream: number
        /** The same for the second half of the streams alone. */
        readonly marginal: { readonly rssGrowthKbPerStream: number; readonly heapGrowthKbPerStream: number }
        readonly withoutStreams: WatchWindow
        readonly withStreams: WatchWindow
      }
    | undefined
  readonly active?: {
    readonly latencyMs: { readonly p50: number; readonly p99: number; readonly max: number; readonly count: number }
    readonly quietLatencyMs: { readonly p50: number; readonly p99: number; readonly count: number }
    readonly readRps: {
      readonly without: ReadonlyArray<number>
      readonly with: ReadonlyArray<number>
      readonly ratio: number
    }
    readonly non2xx: number
  }
  readonly targets: ReadonlyArray<{ readonly name: string; readonly value: string; readonly met: boolean }>
}

const mb = (bytes: number) => Math.round(bytes / 1024 / 1024)

/** The server's background work over `IDLE_S` seconds, from its own counters (collections for the stats left out). */
const watchWindow = async (server: Server): Promise<WatchWindow> => {
  const a = await server.stats()
  await sleep(IDLE_S * 1_000)
  const b = await server.stats()
  const seconds = (b.atMs - a.atMs) / 1_000
  const cpuUs = b.cpuBeforeGcUs.user + b.cpuBeforeGcUs.system - (a.cpuUs.user + a.cpuUs.system)
  const rate = (f: (s: ServerStats["listen"]) => number) =>
    Math.round(((f(b.listen) - f(a.listen)) / seconds) * 10) / 10
  return {
    seconds: Math.round(seconds * 10) / 10,
    cpuPct: Math.round((cpuUs / 1e6 / seconds) * 1000) / 10,
    assetReadsPerS: rate((l) => l.assetsRead),
    readsPerS: rate((l) => l.reads),
    floorLooksPerS: rate((l) => l.floorLooks),
    floorSkippedPerS: rate((l) => l.floorSkipped)
  }
}

export const listenBench = async (log: (line: string) => void): Promise<ListenBench> => {
  const server = await startListenServer()
  try {
    // Warm the server's paths before measuring memory.
    await readLoad(server)
    const targets: Array<{ readonly name: string; readonly value: string; readonly met: boolean }> = []
    let idleResult: ListenBench["idle"]
    if (PARTS.includes("idle")) {
      const before = await server.stats()
      log(`listen bench: server up (${server.url}), RSS ${mb(before.memory.rss)} MB before the idle streams\n`)
      // The server's background cost with no stream: the floor of what idle streams add to.
      const quiet = await watchWindow(server)

      // Idle streams: 1,000 over 10,000 assets that change once an hour, opened in two halves; each half measured
      // once the watcher has read every one of its assets. The second half's growth is the marginal cost of a
      // stream (what the first stream's code paths and caches cost once is in the first half only).
      const settled = async (streams: OpenStreams, assets: number) => {
        await streams.acknowledged
        for (;;) {
          const s = await server.stats()
          if (s.listen.assetsRead - before.listen.assetsRead >= assets) return s
          await sleep(500)
        }
      }
      const half = Math.floor(STREAMS / 2)
      const first = openStreams(server, "idle", () => {}, 0, half)
      const mid = await settled(first, half * PER_STREAM)
      const second = openStreams(server, "idle", () => {}, half, STREAMS)
      const withIdle = await settled(second, ASSETS)
      // With BENCH_LISTEN_SNAPSHOT=<path>, a heap snapshot of the server with the idle streams open, to see what
      // a stream holds (compare one taken with fewer streams).
      const snapshotPath = process.env.BENCH_LISTEN_SNAPSHOT
      if (snapshotPath !== undefined) {
        await server.command(`snapshot ${snapshotPath}`)
      }
      const perStreamKb = (from: ServerStats, to: ServerStats, n: number, f: (m: NodeJS.MemoryUsage) => number) =>
        Math.round(((f(to.memory) - f(from.memory)) / 1024 / n) * 10) / 10
      const rss = (m: NodeJS.MemoryUsage) => m.rss
      const heap = (m: NodeJS.MemoryUsage) => m.heapUsed + m.external
      const rssKb = perStreamKb(before, withIdle, STREAMS, rss)
      const heapKb = perStreamKb(before, withIdle, STREAMS, heap)
      const marginalRssKb = perStreamKb(mid, withIdle, STREAMS - half, rss)
      const marginalHeapKb = perStreamKb(mid, withIdle, STREAMS - half, heap)
      log(
        `  ${STREAMS} idle streams over ${ASSETS} resources: RSS ${mb(withIdle.memory.rss)} MB (+${rssKb} KB per stream; the second half +${marginalRssKb} KB), heap and external +${heapKb} KB per stream (the second half +${marginalHeapKb} KB)\n`
      )
      const open = await watchWindow(server)
      idleResult = {
        rssGrowthKbPerStream: rssKb,
        heapGrowthKbPerStream: heapKb,
        marginal: { rssGrowthKbPerStream: marginalRssKb, heapGrowthKbPerStream: marginalHeapKb },
        withoutStreams: quiet,
        withStreams: open
      }
      log(
        `  background over ${IDLE_S} s: without streams ${quiet.cpuPct}% CPU; with the idle streams ${open.cpuPct}% CPU, ${open.assetReadsPerS} asset reads/s, ${open.floorLooksPerS} floor looks/s (${open.floorSkippedPerS} answered by the revision)\n`
      )
      targets.push(
        { name: "RSS growth per idle listen stream <= 20 KB", value: `${rssKb} KB`, met: rssKb <= 20 },
        {
          // The idle assets change once an hour, so their `next_update_at` asks for one read of each an hour
          // (assets / 3,600 s); the 15 s floor adds none while their revision stays (its looks are counted apart).
          name: "idle streams' background reads: only those the assets' hourly next_update_at asks for (asset reads/s, 10,000 idle subscriptions)",
          value: `${open.assetReadsPerS}/s (due: ${(ASSETS / 3_600).toFixed(1)}/s)`,
          met: open.assetReadsPerS <= (ASSETS / 3_600) * 1.1
        }
      )
      await first.close()
      await second.close()
      await sleep(2_000)
    }
    if (!PARTS.includes("active"))
      return { streams: STREAMS, resources: ASSETS, slotMs: SLOT_MS, idle: idleResult, targets }

    // Active streams: latency in a quiet window, then read throughput with and without them, alternating.
    const latencies: Array<number> = []
    const quiet: Array<number> = []
    let sink: Array<number> = quiet
    const record = (index: number, atMs: number) => {
      sink.push(atMs - lastChangeOf(server.epochMs, index, atMs))
    }
    const without: Array<number> = []
    const withStreams: Array<number> = []
    let non2xx = 0
    for (let round = 0; round < ROUNDS; round++) {
      const plain = await readLoad(server)
      without.push(plain.rps)
      non2xx += plain.non2xx
      const active = openStreams(server, "bench", record)
      await active.acknowledged
      // The watcher's first read of every asset (its baseline) is not a change: let it pass, then every subscribed
      // asset changes within one slot; in the first round, a slot with no load measures the quiet latency.
      sink = []
      await sleep(3_000)
      sink = round === 0 ? quiet : latencies
      await sleep(SLOT_MS + 1_000)
      sink = latencies
      const loaded = await readLoad(server)
      withStreams.push(loaded.rps)
      non2xx += loaded.non2xx
      log(
        `  round ${round + 1}: read ${Math.round(plain.rps)} req/s without, ${Math.round(loaded.rps)} with ${STREAMS} active streams (${active.notifications()} notifications)\n`
      )
      await active.close()
      await sleep(1_000)
    }
    const sorted = [...latencies].sort((a, b) => a - b)
    const quietSorted = [...quiet].sort((a, b) => a - b)
    const ratio = median(withStreams) / median(without)
    const latencyMs = {
      p50: quantile(sorted, 0.5),
      p99: quantile(sorted, 0.99),
      max: sorted.at(-1) ?? Number.NaN,
      count: sorted.length
    }
    const quietLatencyMs = {
      p50: quantile(quietSorted, 0.5),
      p99: quantile(quietSorted, 0.99),
      count: quietSorted.length
    }
    const p99All = Math.max(latencyMs.p99, quietLatencyMs.p99)
    targets.push(
      { name: "notification latency p99 <= 1 s", value: `${p99All} ms`, met: p99All <= 1_000 },
      { name: "paid read throughput with the streams >= 0.9x", value: `${ratio.toFixed(3)}x`, met: ratio >= 0.9 },
      { name: "no non-2xx reads", value: String(non2xx), met: non2xx === 0 }
    )
    return {
      streams: STREAMS,
      resources: ASSETS,
      slotMs: SLOT_MS,
      idle: idleResult,
      active: {
        latencyMs,
        quietLatencyMs,
        readRps: { without, with: withStreams, ratio: Math.round(ratio * 1000) / 1000 },
        non2xx
      },
      targets
    }
  } finally {
    server.child.kill("SIGTERM")
  }
}
