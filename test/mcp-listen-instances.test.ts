/**
 * Push across instances (issue #31, point 5): two `market-data serve` processes in live mode on one server
 * PostgreSQL database (TEST_DATABASE_URL; skipped with a message when unset), pointed at a replay Binance
 * (`support/replay/binance-venue.ts`) with its websocket streams off, so that only the instance holding the leader
 * lock (`LiveFeeds.ts`, `PgLeaderLock`) fetches books and bars over REST and writes them to the store; the other
 * serves what it re-reads from the store. A 2026-07-28 `subscriptions/listen` stream on the instance that does not
 * lead, subscribed to one asset resource, receives `notifications/resources/updated` for it once the data the
 * leader ingested reaches it, and reading the resource there costs one credit and shows the change (any part of the
 * content: a book, bar, funding or open interest the leader wrote, not necessarily the price).
 *
 * About two minutes: the leader's start, then up to the follower's one-minute refresh from the store.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { postgresTestDatabase, TEST_DATABASE_URL, type TestDatabase } from "../adapters/postgres/test/support.ts"
import { type ReplayVenue, startBinanceReplay } from "./support/replay/binance-venue.ts"
import { liveServiceEnv, type ServedPerp, servedPerps, sleep, startFakeSec } from "./support/replay/live-service.ts"
import { SERVE_ENTRY, type ServerProcess, startServerProcess, stopServerProcess } from "./support/server-process.ts"

const KEY = `mdk_${"Lstn2".repeat(6)}XY`
const VERSION = "2026-07-28"
const META = {
  "io.modelcontextprotocol/protocolVersion": VERSION,
  "io.modelcontextprotocol/clientInfo": { name: "listen-instances-test", version: "1.0.0" },
  "io.modelcontextprotocol/clientCapabilities": {}
}

/** Polls `check` every `everyMs` until it answers true; fails with `what` (and the last state) past `timeoutMs`. */
const until = async (
  what: string,
  timeoutMs: number,
  check: () => Promise<boolean> | boolean,
  state: () => string = () => "",
  everyMs = 250
): Promise<void> => {
  const t0 = Date.now()
  for (;;) {
    if (await check()) return
    if (Date.now() - t0 > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms (${state()})`)
    await sleep(everyMs)
  }
}

let nextId = 1

/** One 2026-07-28 request with the key: the body's `_meta` and the mirrored headers. */
const post = async (base: string, method: string, params: Record<string, unknown> = {}) => {
  const id = nextId++
  const name = method === "resources/read" ? params.uri : method === "tools/call" ? params.name : undefined
  const res = await fetch(`${base}/api/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${KEY}`,
      "mcp-protocol-version": VERSION,
      "mcp-method": method,
      ...(typeof name === "string" ? { "mcp-name": name } : {})
    },
    body: JSON.stringify({ jsonrpc: "2.0", id, method, params: { ...params, _meta: META } })
  })
  return { status: res.status, body: (await res.json()) as any }
}

const creditsRemaining = async (base: string): Promise<number> => {
  const r = await post(base, "tools/call", { name: "usage", arguments: {} })
  return r.body.result.structuredContent.data.credits_remaining
}

/** A paid `resources/read` of an asset resource: the credits charged and the `read` data it carries. */
const readResource = async (base: string, uri: string) => {
  const r = await post(base, "resources/read", { uri })
  const contents = r.body.result?.contents?.[0]
  return {
    charged: r.body.result?._meta?.credits_charged as number | undefined,
    data: contents === undefined ? undefined : (JSON.parse(contents.text).data as Record<string, unknown>),
    raw: r.body
  }
}

/** An open listen stream with the key: its SSE data messages as they arrive. */
const openListen = async (base: string, uris: ReadonlyArray<string>) => {
  const controller = new AbortController()
  const id = nextId++
  const res = await fetch(`${base}/api/mcp`, {
    method: "POST",
    signal: controller.signal,
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${KEY}`,
      "mcp-protocol-version": VERSION,
      "mcp-method": "subscriptions/listen"
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "subscriptions/listen",
      params: { notifications: { resourceSubscriptions: uris }, _meta: META }
    })
  })
  const messages: Array<{ readonly method?: string; readonly params?: any; readonly atMs: number }> = []
  let ended = false
  void (async () => {
    if (res.body === null) return
    const reader = res.body.getReader()
    const decoder = new TextDecoder()
    let buffer = ""
    try {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        buffer += decoder.decode(value, { stream: true })
        let cut = buffer.indexOf("\n\n")
        while (cut >= 0) {
          const block = buffer.slice(0, cut)
          buffer = buffer.slice(cut + 2)
          if (block.startsWith("data: ")) messages.push({ ...JSON.parse(block.slice(6)), atMs: Date.now() })
          cut = buffer.indexOf("\n\n")
        }
      }
    } catch {
      // aborted
    }
    ended = true
  })()
  return { id, res, messages, ended: () => ended, close: () => controller.abort() }
}

if (TEST_DATABASE_URL === undefined) {
  console.warn("MCP listen across instances SKIPPED: set TEST_DATABASE_URL=postgres://... to run it")
  describe.skip("listen on the instance that does not lead (skipped: TEST_DATABASE_URL is not set)", () => {})
} else {
  describe("two live instances on one PostgreSQL: a listener on the one that does not lead", () => {
    let venue: ReplayVenue
    let sec: { url: string; close: () => Promise<void> }
    let t: TestDatabase
    let leader: ServerProcess | undefined
    let follower: ServerProcess | undefined

    beforeAll(async () => {
      // Books that move about every 200 ms, so the leader's every REST poll of a book finds it moved.
      venue = await startBinanceReplay({ symbols: 12, meanIntervalMs: 200 })
      sec = await startFakeSec()
      t = await postgresTestDatabase(TEST_DATABASE_URL as string, 4)
    }, 120_000)

    afterAll(async () => {
      await Promise.all([leader && stopServerProcess(leader), follower && stopServerProcess(follower)])
      await venue?.close()
      await sec?.close()
      await t?.drop()
    })

    it("is notified of a change the leader ingested, and reads it for one credit", async () => {
      // No websocket streams: books and bars reach an instance only as the leader's REST ingestion writes them.
      const env = {
        DATABASE_URL: t.url as string,
        DATABASE_POOL_SIZE: "6",
        ...liveServiceEnv(venue, sec.url, KEY, { MARKET_DATA_BINANCE_WS_BASE_URL: "off" })
      }
      const a = await startServerProcess(env, { entry: SERVE_ENTRY, args: ["serve"], startTimeoutMs: 90_000 })
      leader = a
      // On a fresh schema nothing else holds this deployment's lock (it is per schema: `PgLeaderLock`), so the
      // first attempt, made before the instance listens, takes it; the wait covers a loaded machine's start.
      await until(
        "the first instance leads ingestion",
        60_000,
        () => /leads ingestion/.test(a.stdout()),
        () => a.stdout().split("\n").slice(-8).join("\n")
      )
      let perps: Array<ServedPerp> = []
      await until(
        "the leader serves the venue's perpetuals",
        90_000,
        async () => {
          perps = await servedPerps(a.base, KEY, venue)
          return perps.length > 0
        },
        () => `${perps.length} served`,
        500
      )
      const f = await startServerProcess(env, { entry: SERVE_ENTRY, args: ["serve"], startTimeoutMs: 90_000 })
      follower = f

      // An asset the follower serves with a price (the data the leader wrote before the follower started).
      let uri = ""
      let before: Record<string, unknown> | undefined
      await until(
        "the follower serves a perpetual's read",
        90_000,
        async () => {
          for (const p of perps) {
            const r = await readResource(f.base, `service://read/${p.assetId}`)
            if (r.data !== undefined) {
              uri = `service://read/${p.assetId}`
              before = r.data
              return true
            }
          }
          return false
        },
        () => `${perps.length} perpetuals`,
        1_000
      )
      expect(f.stdout()).not.toMatch(/leads ingestion/)

      const openedMs = Date.now()
      const stream = await openListen(f.base, [uri])
      try {
        expect(stream.res.status).toBe(200)
        expect(stream.res.headers.get("content-type")).toContain("text/event-stream")
        const updated = () =>
          stream.messages.filter((m) => m.method === "notifications/resources/updated" && m.params?.uri === uri)
        await until(
          "the acknowledgement",
          10_000,
          () => stream.messages.some((m) => m.method === "notifications/subscriptions/acknowledged"),
          () => JSON.stringify(stream.messages)
        )
        // The leader polls books over REST and writes them; the follower re-reads the store every minute.
        await until(
          `notifications/resources/updated for ${uri} on the follower`,
          150_000,
          () => updated().length > 0 || stream.ended(),
          () => `${stream.messages.length} messages`,
          250
        )
        expect(stream.ended(), JSON.stringify(stream.messages)).toBe(false)
        expect(updated()[0]?.params._meta).toEqual({ "io.modelcontextprotocol/subscriptionId": stream.id })
        // Still the follower: the change it announced is one the leader ingested.
        expect(f.stdout()).not.toMatch(/leads ingestion/)

        const creditsBefore = await creditsRemaining(f.base)
        const after = await readResource(f.base, uri)
        expect(after.charged, JSON.stringify(after.raw)).toBe(1)
        expect(await creditsRemaining(f.base)).toBe(creditsBefore - 1)
        expect(after.data).toBeDefined()
        // The price comes only from what the leader wrote (this instance has no stream and does not ingest).
        // The notification says the content changed, not which part: the leader's REST ingestion may have written a
        // newer book, bar, funding or open interest for it, each moving `as_of` or a value, so the read differs from
        // the one before and its clock has not gone back.
        const priceOf = (d: Record<string, unknown> | undefined) => (d?.headline as { price_usd?: unknown })?.price_usd
        expect(after.data, "the read shows what the leader ingested since").not.toEqual(before)
        expect(Date.parse(String(after.data?.as_of))).toBeGreaterThanOrEqual(Date.parse(String(before?.as_of)))
        const leaderRead = await readResource(a.base, uri)
        const at = updated().map((m) => new Date(m.atMs).toISOString())
        console.info(
          `listen across instances: listen opened ${new Date(openedMs).toISOString()}, notified ${at.join(", ")}; follower price ${priceOf(before)} then ${priceOf(after.data)} (next_update_at before: ${before?.next_update_at}); leader's now ${priceOf(leaderRead.data)}`
        )
      } finally {
        stream.close()
      }
    }, 300_000)
  })
}
