/**
 * Honest source labels under the simulated feed: a company whose data came from SEC files (`market-data ingest`
 * writes it into the same equity store as the simulated companies) answers `X-Data-Source: sec` and
 * `baseline.source: "sec"`; the fictional companies and the simulated crypto market stay `simulated`; a batch
 * mixing them names both.
 */
import { assert, describe, it } from "@effect/vitest"
import { SimulatedCompanies } from "@market-data/sources"
import { Effect, References } from "effect"
import { TestClock } from "effect/testing"
import { callPlanes, dataOf } from "../../core/test/support/PlaneCall.ts"
import { testConfig } from "../../test/support/server.ts"
import { openPlanes, simulatedFeedEquitySource } from "../src/Planes.ts"
import { openStores } from "../src/Stores.ts"

const NOW = Date.UTC(2026, 10, 23, 15, 7, 30)
const DAY_MS = 86_400_000

/** An ingested company: what `ingest sec` writes for a real filer (CIK, tickers, a filing) and daily prices. */
const APPLE = {
  cik: "320193",
  name: "Apple Inc.",
  tickers: ["AAPL"],
  exchanges: ["Nasdaq"],
  sic: "3571",
  sicDescription: "Electronic Computers",
  fiscalYearEnd: "0927",
  formerNames: []
}

const sourceOf = (out: { readonly _tag: string }) => (out as { readonly dataSource?: string }).dataSource

describe("data-source labels on the simulated feed", () => {
  it("labels each fictional company simulated and anything else sec", () => {
    for (const c of SimulatedCompanies) assert.strictEqual(simulatedFeedEquitySource(c.cik), "simulated")
    assert.strictEqual(simulatedFeedEquitySource("320193"), "sec")
  })

  it.effect("answers an ingested SEC company as sec, the simulated ones as simulated, a mixed batch as both", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const config = testConfig({ seed: 20261123 })
      const opened = yield* openPlanes(config, yield* openStores(config))
      const equity = opened.equity
      yield* equity.putCompany(APPLE)
      yield* equity.putTickers([{ cik: "320193", ticker: "AAPL", name: "Apple Inc.", exchange: "Nasdaq" }])
      const sessions = Array.from({ length: 60 }, (_, i) => Date.UTC(2026, 8, 1, 13, 30) + i * DAY_MS)
      yield* equity.putBars(
        "320193",
        "AAPL",
        sessions.map((tMs, i) => ({ tMs, o: 200 + i, h: 202 + i, l: 199 + i, c: 201 + i, v: 1_000_000 }))
      )
      const call = (name: string, params: ReadonlyArray<readonly [string, string]>) =>
        callPlanes(opened.planes, name, params, NOW)

      const apple = yield* call("read", [["id", "eq:320193:AAPL"]])
      assert.strictEqual(sourceOf(apple), "sec")
      assert.strictEqual(dataOf<{ baseline: { source: string } }>(apple).baseline.source, "sec")

      const simulated = yield* call("read", [["id", "eq:9990001:ALDR"]])
      assert.strictEqual(sourceOf(simulated), "simulated")
      assert.strictEqual(dataOf<{ baseline: { source: string } }>(simulated).baseline.source, "simulated")

      const valuation = yield* call("valuation", [["id", "eq:320193:AAPL"]])
      assert.strictEqual(sourceOf(valuation), "sec")
      assert.strictEqual(dataOf<{ baseline: { source: string } }>(valuation).baseline.source, "sec")
      assert.strictEqual(sourceOf(yield* call("series", [["id", "eq:320193:AAPL"]])), "sec")
      assert.strictEqual(sourceOf(yield* call("price", [["id", "crypto:bitcoin"]])), "simulated")

      const batch = yield* call("read", [["ids", "eq:320193:AAPL,crypto:bitcoin,eq:9990002:BWPC"]])
      assert.strictEqual(sourceOf(batch), "sec,simulated")
      const rows = dataOf<ReadonlyArray<{ asset_id: string; baseline: { source?: string } }>>(batch)
      assert.deepStrictEqual(
        rows.map((r) => [r.asset_id, r.baseline.source]),
        [
          ["eq:320193:AAPL", "sec"],
          ["crypto:bitcoin", "simulated"],
          ["eq:9990002:BWPC", "simulated"]
        ]
      )
    }).pipe(Effect.scoped, Effect.provideService(References.MinimumLogLevel, "None"))
  )
})
