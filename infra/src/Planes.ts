/**
 * The data planes and their feeds, for the life of a scope.
 *
 * The simulated feed (the default) regenerates its history from `MARKET_DATA_SEED` at every start into
 * in-memory plane stores: a year of 15-minute crypto data for the whole universe (about 3 s) that then ticks
 * on each venue's cadence, and five fictional companies whose filings are generated in the SEC's own formats
 * and parsed by the real parsers. Simulated data is never persisted: the same seed gives the same history,
 * and PostgreSQL's market tables are for live data. The account stores (keys, credits, idempotency, rate
 * limit) are whatever the configuration names, independently.
 */
import {
  Equity,
  type EquityStore,
  type MarketStore,
  MarketStore as MarketStoreTag,
  makeCryptoPlane,
  type PlaneOperations
} from "@market-data/core"
import { makeMemoryEquityStore, makeMemoryMarketStore } from "@market-data/memory"
import { loadSimulatedEquity, simulatedEquity, startSimulatedCrypto } from "@market-data/sources"
import { Clock, Effect, type Scope } from "effect"
import { type AppConfig, ConfigProblem } from "./AppConfig.ts"
import type { OpenedStores } from "./Stores.ts"

export interface OpenedPlanes {
  readonly planes: ReadonlyArray<PlaneOperations>
  /** The feed, in words, for the startup line. */
  readonly description: string
  /** The plane stores, for tools and tests that look inside. */
  readonly market: MarketStore["Service"]
  readonly equity: EquityStore["Service"]
}

/** Opens the planes the configuration's feed fills. */
export const openPlanes = (
  config: AppConfig,
  _stores: OpenedStores
): Effect.Effect<OpenedPlanes, ConfigProblem, Scope.Scope> =>
  Effect.gen(function* () {
    if (config.feed === "live") {
      return yield* Effect.fail(
        new ConfigProblem(
          "MARKET_DATA_FEED=live is not available in this version: the live venue and SEC EDGAR connectors have not landed. Use MARKET_DATA_FEED=simulated (the default)."
        )
      )
    }
    const market = makeMemoryMarketStore()
    const equity = makeMemoryEquityStore()

    yield* Effect.logInfo("simulated market: generating a year of history", { seed: config.seed })
    const crypto = yield* startSimulatedCrypto({ seed: config.seed }).pipe(
      Effect.provideService(MarketStoreTag, market)
    )
    yield* Effect.logInfo("simulated market ready").pipe(
      Effect.annotateLogs({
        rows: crypto.report.rows,
        from: new Date(crypto.report.fromMs).toISOString(),
        to: new Date(crypto.report.toMs).toISOString(),
        ms: Math.round(crypto.report.durationMs)
      })
    )

    // The simulated filings end today (UTC), so prices and filings are as fresh as the clock says.
    const today = new Date(yield* Clock.currentTimeMillis).toISOString().slice(0, 10)
    const filings = simulatedEquity(config.seed, { asOf: today })
    const loaded = yield* loadSimulatedEquity(filings).pipe(Effect.provideService(Equity.EquityStore, equity))
    yield* Effect.logInfo("simulated filings loaded").pipe(
      Effect.annotateLogs({ companies: loaded.companies, facts: loaded.facts, filings: loaded.filings })
    )

    const cryptoPlane = yield* makeCryptoPlane.pipe(Effect.provideService(MarketStoreTag, market))
    // Builds every asset's baselines in the background, so the first `rank` or `read` need not.
    yield* cryptoPlane.warm.pipe(
      Effect.tap(() => Effect.logInfo("crypto baselines warm")),
      Effect.forkScoped
    )
    const equityPlane = yield* Equity.makeEquityPlane({ source: "simulated" }).pipe(
      Effect.provideService(Equity.EquityStore, equity)
    )
    return {
      planes: [
        { ...cryptoPlane, source: "simulated" },
        { ...equityPlane, source: "simulated" }
      ],
      description: `simulated (seed ${config.seed}; not live market data)`,
      market,
      equity
    }
  })
