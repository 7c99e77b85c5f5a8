/**
 * `coverage` source rows (pure): which statuses describe an asset (its listing venues; SEC EDGAR for an
 * equity), lag and freshness at `now`, the last success (recorded, or the last check of a writer that records
 * only successes), and the error only while failing. The rows validate against the published schema.
 */

import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { coverageSource, sourcesOf, sourceVenuesOf } from "../src/Coverage.ts"
import { cryptoAsset } from "../src/crypto/Assets.ts"
import { PRICES_VENUE, SEC_VENUE, type SourceStatus } from "../src/crypto/Market.ts"
import { CoverageRow } from "../src/Results.ts"

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0)
const MIN = 60_000

const status = (venue: string, component: SourceStatus["component"], fields: Partial<SourceStatus>): SourceStatus => ({
  source: "live",
  venue,
  component,
  newestMs: NOW - MIN,
  cadenceMs: 15 * MIN,
  checkedMs: NOW - MIN,
  failing: false,
  ...fields
})

describe("coverage sources", () => {
  it("describe a crypto asset by its listing venues and an equity by SEC EDGAR and its daily price source", () => {
    const btcVenues = [...new Set(cryptoAsset("crypto:bitcoin")?.listings.map((l) => l.venue))]
    expect(sourceVenuesOf({ asset_id: "crypto:bitcoin", plane: "crypto" })).toEqual(btcVenues)
    expect(sourceVenuesOf({ asset_id: "crypto:not-an-asset", plane: "crypto" })).toEqual([])
    expect(sourceVenuesOf({ asset_id: "eq:320193:AAPL", plane: "equity" })).toEqual([SEC_VENUE, PRICES_VENUE])
    const statuses = [
      status("sec", "filings", {}),
      status("yahoo", "bars", {}),
      status("binance", "funding", {}),
      status("binance", "bars", {}),
      status("nowhere", "bars", {})
    ]
    const btc = sourcesOf({ asset_id: "crypto:bitcoin", plane: "crypto" }, statuses, NOW)
    expect(btc.map((s) => `${s.venue}/${s.component}`)).toEqual(["binance/bars", "binance/funding"])
    const aapl = sourcesOf({ asset_id: "eq:320193:AAPL", plane: "equity" }, statuses, NOW)
    expect(aapl.map((s) => `${s.venue}/${s.component}`)).toEqual(["sec/filings", "yahoo/bars"])
  })

  it("report lag, freshness, last success and the error while failing", () => {
    expect(coverageSource(status("binance", "bars", { lastSuccessMs: NOW - 30_000 }), NOW)).toEqual({
      source: "live",
      venue: "binance",
      component: "bars",
      last_success_at: new Date(NOW - 30_000).toISOString(),
      lag_seconds: 60,
      status: "live"
    })
    expect(coverageSource(status("binance", "bars", { newestMs: NOW - 40 * MIN }), NOW).status).toBe("delayed")
    // The simulated feed records no success time: its last check (a success) stands in.
    expect(coverageSource(status("x", "bars", { source: "simulated" }), NOW).last_success_at).toBe(
      new Date(NOW - MIN).toISOString()
    )
    const down = coverageSource(
      status("okx", "funding", {
        failing: true,
        newestMs: NOW - 90 * MIN,
        lastSuccessMs: NOW - 90 * MIN,
        lastError: "timeout: /api/v5/public/funding-rate-history: no answer in 10000 ms",
        detail: "timeout: /api/v5/public/funding-rate-history: no answer in 10000 ms"
      }),
      NOW
    )
    expect(down).toMatchObject({ status: "stale", lag_seconds: 5_400, error: expect.stringMatching(/^timeout: /) })
    // Never delivered, failing, no success recorded: nothing is made up.
    expect(coverageSource(status("okx", "books", { failing: true, newestMs: 0, detail: "network: x" }), NOW)).toEqual({
      source: "live",
      venue: "okx",
      component: "books",
      last_success_at: null,
      lag_seconds: null,
      status: "stale",
      error: "network: x"
    })
    // A partial problem of a successful run is not an error.
    expect(coverageSource(status("okx", "bars", { detail: "no data for X (not listed)" }), NOW).error).toBeUndefined()
  })

  it("validate against the CoverageRow schema, with and without sources", () => {
    const row = {
      asset_id: "crypto:bitcoin",
      plane: "crypto",
      symbol: "BTC",
      name: "Bitcoin",
      tier: "core",
      alive: false,
      operations: ["coverage"]
    }
    const decode = Schema.decodeUnknownSync(CoverageRow)
    decode(row)
    decode({
      ...row,
      sources: [
        coverageSource(status("okx", "books", { failing: true, newestMs: 0, detail: "network: x" }), NOW),
        coverageSource(status("binance", "bars", {}), NOW)
      ]
    })
    expect(() => decode({ ...row, sources: [{ venue: "binance" }] })).toThrow()
  })
})
