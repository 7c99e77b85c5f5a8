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
 *   RSS (/proc VmRSS) before and after opening them, after the watcher's first reads have settled;
 * - paid `read` throughput (HTTP, 50 connections, autocannon) with the 1,000 active streams open within 10 % of
 *   without: alternating rounds (`BENCH_LISTEN_ROUNDS`, default 3) of `BENCH_SECONDS` each, medians compared.
 *
 * The load generator, the 1,000 SSE readers and autocannon share this process, so a notification's measured
 * latency includes this process's own delays (an upper bound of the server's).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"
import autocannon from "autocannon"
import { memoryOf, ROOT, startCommand } from "./process.ts"

const STREAMS = Number(process.env.BENCH_LISTEN_STREAMS ?? 1_000)
const PER_STREAM = 10
const ASSETS = STREAMS * PER_STREAM
const SLOT_MS = Number(process.env.BENCH_LISTEN_SLOT_MS ?? 10_000)
const ROUNDS = Number(process.env.BENCH_LISTEN_ROUNDS ?? 3)
const DURATION = Number(process.env.BENCH_SECONDS ?? 10)
const VERSION = "2026-07-28"
const META = {
  "io.modelcontextprotocol/protocolVersion": VERSION,
  "io.modelcontextprotocol/clientCapabilities": {}
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

interface Server {
  readonly url: string
  readonly keys: ReadonlyArray<string>
  readonly epochMs: number
  readonly child: ChildProcess
}

const startListenServer = (): Promise<Server> =>
  new Promise((resolve, reject) => {
    const command = startCommand()
    const child = spawn(process.execPath, [...command.flags, "--expose-gc", join(ROOT, "bench", "listen-server.ts")], {
      cwd: ROOT,
      env: {
        ...process.env,
        ...command.env,
        BENCH_LISTEN_ASSETS: String(ASSETS),
        BENCH_LISTEN_SLOT_MS: String(SLOT_MS),
        BENCH_LISTEN_KEYS: String(STREAMS / 10 + 1)
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    let err = ""
    child.stdout?.on("data", (d) => {
      out += d
      const line = out.split("\n").find((l) => l.startsWith("{"))
      if (line !== undefined && out.includes("\n")) {
        const parsed = JSON.parse(line) as { url: string; keys: Array<string>; epochMs: number }
        resolve({ ...parsed, child })
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
const openStreams = (server: Server, prefix: string, onUpdate: (index: number, atMs: number) => void): OpenStreams => {
  const controllers: Array<AbortController> = []
  let acks = 0
  let count = 0
  let resolveAcks: () => void = () => {}
  const acknowledged = new Promise<void>((r) => {
    resolveAcks = r
  })
  const done: Array<Promise<void>> = []
  for (let s = 0; s < STREAMS; s++) {
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
                if (++acks === STREAMS) resolveAcks()
              } else if (m.method === "notifications/resources/updated") {
                count++
                onUpdate(Number(/-(\d+)$/.exec(m.params?.uri ?? "")?.[1]), atMs)
              }
            }
          }
        } catch {
          // aborted
        }
      })()
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

export interface ListenBench {
  readonly streams: number
  readonly resources: number
  readonly slotMs: number
  readonly idleRssGrowthKbPerStream: number
  readonly latencyMs: { readonly p50: number; readonly p99: number; readonly max: number; readonly count: number }
  readonly quietLatencyMs: { readonly p50: number; readonly p99: number; readonly count: number }
  readonly readRps: {
    readonly without: ReadonlyArray<number>
    readonly with: ReadonlyArray<number>
    readonly ratio: number
  }
  readonly non2xx: number
  readonly targets: ReadonlyArray<{ readonly name: string; readonly value: string; readonly met: boolean }>
}

export const listenBench = async (log: (line: string) => void): Promise<ListenBench> => {
  const server = await startListenServer()
  const pid = server.child.pid
  try {
    // Warm the server's paths before measuring memory.
    await readLoad(server)
    const settledRss = async () => {
      server.child.kill("SIGUSR2")
      await sleep(2_000)
      return memoryOf(pid).rss
    }
    const before = await settledRss()
    log(`listen bench: server up (${server.url}), RSS ${before} MB before the idle streams\n`)

    // Idle streams: 1,000 over 10,000 assets that change once an hour.
    const idle = openStreams(server, "idle", () => {})
    await idle.acknowledged
    // The watcher's first read of each asset, then a collection.
    await sleep(5_000)
    const withIdle = await settledRss()
    const idleKb = ((withIdle - before) * 1024) / STREAMS
    log(
      `  ${STREAMS} idle streams over ${ASSETS} resources: RSS ${withIdle} MB (+${(idleKb).toFixed(1)} KB per stream)\n`
    )
    await idle.close()
    await sleep(2_000)

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
    return {
      streams: STREAMS,
      resources: ASSETS,
      slotMs: SLOT_MS,
      idleRssGrowthKbPerStream: Math.round(idleKb * 10) / 10,
      latencyMs,
      quietLatencyMs,
      readRps: { without, with: withStreams, ratio: Math.round(ratio * 1000) / 1000 },
      non2xx,
      targets: [
        { name: "notification latency p99 <= 1 s", value: `${p99All} ms`, met: p99All <= 1_000 },
        {
          name: "RSS growth per idle listen stream <= 20 KB",
          value: `${idleKb.toFixed(1)} KB`,
          met: idleKb <= 20
        },
        { name: "paid read throughput with the streams >= 0.9x", value: `${ratio.toFixed(3)}x`, met: ratio >= 0.9 },
        { name: "no non-2xx reads", value: String(non2xx), met: non2xx === 0 }
      ]
    }
  } finally {
    server.child.kill("SIGTERM")
  }
}
