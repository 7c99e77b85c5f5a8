/**
 * The live feed with no network: every source's base URL is a closed port on this machine (so nothing leaves
 * it). The service starts, serves, says its data is live-sourced but stale, lists what is missing as
 * `source_down`, and keeps running; a start without the SEC User-Agent is refused with a clear message.
 */
import { spawnSync } from "node:child_process"
import { join } from "node:path"
import { createMarketData, type MarketDataClient } from "@market-data/embedded"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const ROOT = join(import.meta.dirname, "..")
const CLOSED = "http://127.0.0.1:9"
const SOURCES = [
  "MARKET_DATA_BINANCE_BASE_URL",
  "MARKET_DATA_BYBIT_BASE_URL",
  "MARKET_DATA_OKX_BASE_URL",
  "MARKET_DATA_HYPERLIQUID_BASE_URL",
  "MARKET_DATA_SEC_BASE_URL",
  "MARKET_DATA_SEC_ARCHIVES_BASE_URL",
  "MARKET_DATA_PRICES_BASE_URL"
]
const KEY = `mdk_${"Offln".repeat(6)}XY`
let md: MarketDataClient

beforeAll(async () => {
  for (const name of SOURCES) process.env[name] = CLOSED
  process.env.MARKET_DATA_LIVE_TIMEOUT_MS = "2000"
  process.env.MARKET_DATA_SEC_USER_AGENT = "market-data tests ops@example.com"
  md = await createMarketData({ feed: "live", apiKey: KEY, ensureCredits: 100 })
}, 60_000)
afterAll(() => md?.close())

describe("the live feed with no network", () => {
  it("serves stale, live-sourced answers naming the failing source, and keeps serving", async () => {
    // Wait (polling, bounded) until the first polls have failed and the price says so.
    const deadline = Date.now() + 20_000
    for (;;) {
      const r = await md.call("price", { id: "crypto:bitcoin" })
      const data = (r.body as { data?: { status?: string; unavailable?: Record<string, { reason: string }> } }).data
      if (data?.status === "stale" && data.unavailable?.usd?.reason === "source_down") break
      if (Date.now() > deadline) throw new Error(`the price never went stale: ${JSON.stringify(r.body)}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    for (let i = 0; i < 3; i++) {
      const r = await md.call("price", { id: "crypto:bitcoin" })
      expect(r.status).toBe(200)
      expect(r.dataSource).toBe("live")
      const data = (r.body as { data: Record<string, unknown> }).data
      expect(data.status).toBe("stale")
      expect(data.usd).toBeNull()
      expect(Date.parse(data.as_of as string)).toBeGreaterThan(Date.UTC(2020, 0, 1))
      const unavailable = data.unavailable as Record<string, { reason: string }>
      expect(unavailable.usd?.reason).toBe("source_down")
      await new Promise((r) => setTimeout(r, 500))
    }
    const read = await md.call("read", { id: "crypto:ethereum" })
    expect(read.status).toBe(200)
    expect((read.body as { data: { status: string } }).data.status).toBe("stale")
    // Discovery is unaffected.
    expect((await md.call("resolve", { q: "bitcoin" })).status).toBe(200)
  }, 30_000)

  it("refuses to start without the SEC User-Agent, saying which variable and why, exit 2", () => {
    const env: Record<string, string> = { ...(process.env as Record<string, string>) }
    delete env.MARKET_DATA_SEC_USER_AGENT
    const r = spawnSync(process.execPath, [join(ROOT, "infra/src/bin.ts"), "serve"], {
      env: { ...env, MARKET_DATA_FEED: "live", DATABASE_URL: "memory", PORT: "0" },
      encoding: "utf8",
      timeout: 30_000
    })
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/MARKET_DATA_SEC_USER_AGENT is required with MARKET_DATA_FEED=live/)
  }, 40_000)
})
