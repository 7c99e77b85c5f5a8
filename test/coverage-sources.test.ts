/**
 * `coverage` reports each source feeding an asset (`sources`: last success, lag, freshness, last error), over
 * the simulated feed (every component live, from the simulated source) and over a live feed whose every base
 * URL is a closed port on this machine (every component stale, carrying the connection error). The answers
 * validate against the published result schema. Nothing leaves 127.0.0.1.
 */
import { Results } from "@market-data/core"
import { createMarketData, type MarketDataClient } from "@market-data/embedded"
import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

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
const KEY = `mdk_${"Srces".repeat(6)}XY`
const decodeCoverage = Schema.decodeUnknownSync(Results.single(Results.CoverageResult))

interface SourceRow {
  readonly source: string
  readonly venue: string
  readonly component: string
  readonly last_success_at: string | null
  readonly lag_seconds: number | null
  readonly status: string
  readonly error?: string
}

const coverage = async (md: MarketDataClient, params: Record<string, string>) => {
  const r = await md.call("coverage", params)
  expect(r.status, JSON.stringify(r.body)).toBe(200)
  decodeCoverage(r.body)
  return (r.body as { data: Record<string, unknown> }).data
}

let simulated: MarketDataClient
let live: MarketDataClient

// The variables this file sets, restored after it: a worker may run other files after this one
// (vitest.config.ts: `isolate: false`).
const ENV_SET = [...SOURCES, "MARKET_DATA_LIVE_TIMEOUT_MS", "MARKET_DATA_SEC_USER_AGENT"]
const envBefore = new Map(ENV_SET.map((name) => [name, process.env[name]]))

beforeAll(async () => {
  simulated = await createMarketData({ store: "memory", apiKey: KEY, ensureCredits: 10 })
  for (const name of SOURCES) process.env[name] = CLOSED
  process.env.MARKET_DATA_LIVE_TIMEOUT_MS = "2000"
  process.env.MARKET_DATA_SEC_USER_AGENT = "market-data tests ops@example.com"
  live = await createMarketData({ store: "memory", feed: "live", apiKey: KEY, ensureCredits: 10 })
}, 90_000)
afterAll(async () => {
  await simulated?.close()
  await live?.close()
  for (const [name, value] of envBefore) {
    if (value === undefined) delete process.env[name]
    else process.env[name] = value
  }
})

describe("coverage sources", () => {
  it("over the simulated feed: every component of every venue listing the asset, live, no error", async () => {
    // A tick delayed by a loaded machine can leave one component `delayed` for a moment: ask again briefly.
    let sources: ReadonlyArray<SourceRow> = []
    for (let i = 0; i < 20; i++) {
      sources = (await coverage(simulated, { id: "crypto:bitcoin" })).sources as ReadonlyArray<SourceRow>
      if (sources.length > 0 && sources.every((s) => s.status === "live")) break
      await new Promise((r) => setTimeout(r, 500))
    }
    expect(sources.length).toBeGreaterThan(4)
    const venues = [...new Set(sources.map((s) => s.venue))]
    expect(venues.length).toBeGreaterThanOrEqual(2)
    expect(venues).toEqual([...venues].sort())
    expect(sources.map((s) => s.component)).toEqual(expect.arrayContaining(["bars", "funding", "books"]))
    for (const s of sources) {
      const what = `${s.venue}/${s.component}`
      expect(s.source, what).toBe("simulated")
      expect(s.status, what).toBe("live")
      expect(s.error, what).toBeUndefined()
      expect(s.lag_seconds, what).toBeGreaterThanOrEqual(0)
      expect(Date.parse(s.last_success_at as string), what).toBeGreaterThan(Date.UTC(2020, 0, 1))
    }
    // Browse rows stay small.
    const browse = await coverage(simulated, { plane: "crypto", limit: "3" })
    for (const row of browse.rows as ReadonlyArray<Record<string, unknown>>) expect(row.sources).toBeUndefined()
    // The simulated filings are generated at start: no SEC EDGAR source to report.
    const resolved = await simulated.call("resolve", { q: "ALDR" })
    const equityId = (resolved.body as { data: { coverage: unknown; matches: Array<{ asset_id: string }> } }).data
      .matches[0]?.asset_id as string
    expect(equityId).toMatch(/^eq:/)
    expect((await coverage(simulated, { id: equityId })).sources).toEqual([])
  }, 30_000)

  it("over a live feed whose sources fail: every component stale, with the error, never a success", async () => {
    const deadline = Date.now() + 20_000
    let sources: ReadonlyArray<SourceRow> = []
    while (Date.now() < deadline) {
      sources = (await coverage(live, { id: "crypto:bitcoin" })).sources as ReadonlyArray<SourceRow>
      if (sources.length > 0 && sources.every((s) => s.error !== undefined)) break
      await new Promise((r) => setTimeout(r, 250))
    }
    expect(sources.length).toBeGreaterThan(4)
    expect(new Set(sources.map((s) => s.venue))).toEqual(new Set(["binance", "bybit", "hyperliquid", "okx"]))
    for (const s of sources) {
      const what = `${s.venue}/${s.component}`
      expect(s.source, what).toBe("live")
      expect(s.status, what).toBe("stale")
      expect(s.last_success_at, what).toBeNull()
      expect(s.lag_seconds, what).toBeNull()
      expect(s.error, what).toMatch(/^(network|timeout): /)
    }
  }, 30_000)
})
