/**
 * `market-data sources`: what the ingesting instance persisted in the database's market store (last success,
 * lag, freshness, last error per source component, SEC EDGAR included); the simulated feed and the memory store
 * keep their statuses inside the serving process, which the command says (exit 0), pointing at `coverage`.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { SourceStatus } from "@market-data/core"
import { makePgMarketStore, openPglite } from "@market-data/postgres"
import { ConfigProvider, Effect } from "effect"
import { describe, expect, it } from "vitest"
import { type Io, runCli } from "../src/Cli.ts"
import { migrateToLatest } from "../src/Migrate.ts"

const capture = () => {
  const out: Array<string> = []
  const err: Array<string> = []
  const io: Io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }
  return { io, out, err }
}

const withEnv = (env: Record<string, string>) =>
  ConfigProvider.layer(ConfigProvider.fromEnvRecord({ MARKET_DATA_SIM_UNIVERSE: "registry", ...env }))

const run = (env: Record<string, string>, ...argv: Array<string>) => {
  const c = capture()
  return Effect.runPromise(runCli(["sources", ...argv], c.io).pipe(Effect.provide(withEnv(env)))).then((code) => ({
    code,
    ...c
  }))
}

describe("market-data sources", () => {
  it("says the memory store and the simulated feed keep statuses in the serving process, exit 0", async () => {
    const memory = await run({ DATABASE_URL: "memory", MARKET_DATA_FEED: "live" })
    expect(memory.code).toBe(0)
    expect(memory.out.join("\n")).toContain("DATABASE_URL=memory")
    expect(memory.out.join("\n")).toContain("/api/v1/coverage?id=")
    const json = await run({ DATABASE_URL: "memory" }, "--json")
    expect(json.code).toBe(0)
    expect(JSON.parse(json.out[0] as string)).toMatchObject({ in_process: true, sources: [], feed: "simulated" })

    const dir = join(mkdtempSync(join(tmpdir(), "md-sources-")), "store")
    try {
      const simulated = await run({ MARKET_DATA_DIR: dir })
      expect(simulated.code).toBe(0)
      expect(simulated.out.join("\n")).toMatch(/simulated feed .* inside the serving process/)
      expect(existsSync(dir), "the embedded store is neither opened nor created").toBe(false)
      const none = await run({ MARKET_DATA_DIR: dir, MARKET_DATA_FEED: "live" })
      expect(none.code).toBe(0)
      expect(none.out.join("\n")).toContain("nothing has been ingested")
    } finally {
      rmSync(join(dir, ".."), { recursive: true, force: true })
    }
  })

  it("refuses unknown options and extra words, exit 2", async () => {
    expect((await run({ DATABASE_URL: "memory" }, "--bogus", "x")).code).toBe(2)
    expect((await run({ DATABASE_URL: "memory" }, "extra")).code).toBe(2)
  })

  it("reports every component the live instance stored: last success, lag, status, last error", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "md-sources-")), "store")
    const nowMs = Date.now()
    const statuses: ReadonlyArray<SourceStatus> = [
      {
        source: "live",
        venue: "binance",
        component: "bars",
        newestMs: nowMs - 60_000,
        cadenceMs: 15 * 60_000,
        checkedMs: nowMs - 30_000,
        failing: false,
        lastSuccessMs: nowMs - 30_000
      },
      {
        source: "live",
        venue: "okx",
        component: "funding",
        newestMs: nowMs - 2 * 3_600_000,
        cadenceMs: 8 * 3_600_000,
        checkedMs: nowMs - 10_000,
        failing: false,
        lastSuccessMs: nowMs - 10_000,
        detail: "no data for XYZ-USDT-SWAP (not listed)"
      },
      {
        source: "live",
        venue: "sec",
        component: "filings",
        newestMs: nowMs - 3 * 3_600_000,
        cadenceMs: 10 * 60_000,
        checkedMs: nowMs - 5_000,
        failing: true,
        detail: "status: submissions CIK0000320193: HTTP 503: down",
        lastError: "status: submissions CIK0000320193: HTTP 503: down",
        lastSuccessMs: nowMs - 3 * 3_600_000
      },
      {
        source: "live",
        venue: "sec",
        component: "tickers",
        newestMs: 0,
        cadenceMs: 86_400_000,
        checkedMs: nowMs - 5_000,
        failing: true,
        detail: "network: company_tickers.json: connection refused",
        lastError: "network: company_tickers.json: connection refused"
      }
    ]
    try {
      const database = await openPglite(dir)
      await migrateToLatest(database.db)
      await Effect.runPromise(makePgMarketStore(database).putStatus(statuses))
      await database.close()

      const env = { MARKET_DATA_DIR: dir, MARKET_DATA_FEED: "live" }
      const json = await run(env, "--json")
      expect(json.code).toBe(0)
      const report = JSON.parse(json.out[0] as string)
      expect(report.in_process).toBe(false)
      const byKey = Object.fromEntries(report.sources.map((s: any) => [`${s.venue}/${s.component}`, s]))
      expect(Object.keys(byKey)).toEqual(["binance/bars", "okx/funding", "sec/filings", "sec/tickers"])
      expect(byKey["binance/bars"]).toMatchObject({
        source: "live",
        status: "live",
        last_success_at: new Date(nowMs - 30_000).toISOString()
      })
      expect(byKey["binance/bars"].lag_seconds).toBeGreaterThanOrEqual(60)
      expect(byKey["binance/bars"].lag_seconds).toBeLessThan(120)
      expect(byKey["binance/bars"].error).toBeUndefined()
      expect(byKey["okx/funding"]).toMatchObject({ status: "live", detail: "no data for XYZ-USDT-SWAP (not listed)" })
      expect(byKey["sec/filings"]).toMatchObject({
        status: "stale",
        error: "status: submissions CIK0000320193: HTTP 503: down",
        last_success_at: new Date(nowMs - 3 * 3_600_000).toISOString()
      })
      expect(byKey["sec/tickers"]).toMatchObject({ status: "stale", last_success_at: null, lag_seconds: null })

      const text = await run(env)
      expect(text.code).toBe(0)
      const lines = text.out
      expect(lines[0]).toMatch(/^SOURCE\s+VENUE\s+COMPONENT\s+STATUS\s+LAST SUCCESS\s+LAG\s+ERROR$/)
      expect(lines.find((l) => l.includes("binance") && l.includes("bars"))).toMatch(/live .* 1m \d\ds\s+-$/)
      expect(lines.find((l) => l.includes("filings"))).toMatch(/stale .* 3h 00m\s+status: submissions .*HTTP 503/)
      expect(lines.find((l) => l.includes("tickers"))).toMatch(/stale\s+never\s+-\s+network: company_tickers/)
      expect(text.err.join("\n")).toContain("2 failing")
    } finally {
      rmSync(join(dir, ".."), { recursive: true, force: true })
    }
  }, 60_000)
})
