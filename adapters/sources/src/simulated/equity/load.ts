/**
 * Loads the simulated equity source (`simulatedEquity`) into the `EquityStore`: companies, ticker lists, facts,
 * filings, CUSIPs, Form 4 reports, 13F reports and daily bars. Every write is idempotent on its natural key, so
 * loading the same simulation twice leaves the store as it was.
 */
import { EquityStore } from "@market-data/core"
import { Effect } from "effect"
import { type SimulatedEquity, simulatedBarsByTicker } from "./SimulatedEquity.ts"

/** What one load wrote (rows new to the store; bars count every bar written or replaced). */
export interface EquityLoadReport {
  readonly companies: number
  readonly facts: number
  readonly filings: number
  readonly ownershipReports: number
  readonly holdingsReports: number
  readonly bars: number
}

/** Writes a simulation into the store. */
export const loadSimulatedEquity = (sim: SimulatedEquity): Effect.Effect<EquityLoadReport, never, EquityStore> =>
  Effect.gen(function* () {
    const store = yield* EquityStore
    let facts = 0
    let filings = 0
    let bars = 0
    const series = simulatedBarsByTicker(sim)
    for (const company of sim.companies) {
      yield* store.putCompany(company)
      facts += yield* store.putFacts(company.cik, sim.factsByCik.get(company.cik) ?? [])
      filings += yield* store.putFilings(company.cik, sim.submissions.get(company.cik)?.filings ?? [])
      yield* store.putSecurities(company.cik, sim.securities.get(company.cik) ?? [])
      for (const [ticker, list] of series.get(company.cik) ?? [])
        bars += yield* store.putBars(company.cik, ticker, list)
    }
    yield* store.putTickers(sim.tickers)
    const ownershipReports = yield* store.putOwnershipReports(sim.ownershipReports)
    const holdingsReports = yield* store.putHoldingsReports(sim.holdingsReports)
    return { companies: sim.companies.length, facts, filings, ownershipReports, holdingsReports, bars }
  })
