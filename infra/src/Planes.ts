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
  CryptoAssets,
  DAY_MS,
  Equity,
  type EquityStore,
  type LeaderLock,
  type MarketStore,
  MarketStore as MarketStoreTag,
  makeCryptoPlane,
  type PlaneOperations
} from "@market-data/core"
import {
  makeMemoryEquityStore,
  makeMemoryLeaderLock,
  makeMemoryMarketStore,
  makeWriteThroughMarketStore,
  warmMarketStore
} from "@market-data/memory"
import { makePgEquityStore, makePgLeaderLock, makePgMarketStore, pgliteLeaderLock } from "@market-data/postgres"
import {
  type LiveConfigError,
  loadLiveConfig,
  loadSimulatedEquity,
  simulatedEquity,
  startLiveFeeds,
  startSimulatedCrypto
} from "@market-data/sources"
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
  stores: OpenedStores
): Effect.Effect<OpenedPlanes, ConfigProblem, Scope.Scope> =>
  Effect.gen(function* () {
    if (config.feed === "live") return yield* openLivePlanes(config, stores)
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

/** How much stored live history the in-memory hot store is filled with at start (the baselines read 98 days). */
const LIVE_WARM_DAYS = 120

/**
 * The live feed: public venue APIs and SEC EDGAR into the same plane stores. On a database the market store
 * writes through to PostgreSQL (what is served has been persisted) and is warmed from it at start; filings
 * live in the database. One instance ingests (a leader lock: a PostgreSQL advisory lock, or trivially the
 * one PGlite or memory process) while all serve. With no network the sources are marked failing and every
 * answer says so (`stale`, `unavailable`); nothing crashes, and the next poll recovers.
 */
const openLivePlanes = (
  config: AppConfig,
  stores: OpenedStores
): Effect.Effect<OpenedPlanes, ConfigProblem, Scope.Scope> =>
  Effect.gen(function* () {
    const problem = (e: LiveConfigError) => new ConfigProblem(`${e.variable}: ${e.message}`)
    const live = yield* loadLiveConfig.pipe(Effect.mapError(problem))
    const database = stores.database
    const hot = makeMemoryMarketStore()
    let market: MarketStore["Service"] = hot
    let equity: EquityStore["Service"] = makeMemoryEquityStore()
    if (database !== undefined) {
      const persistent = makePgMarketStore(database)
      market = makeWriteThroughMarketStore(hot, persistent)
      equity = makePgEquityStore(database)
      const nowMs = yield* Clock.currentTimeMillis
      const ids = CryptoAssets.map((a) => a.id)
      const rows = yield* warmMarketStore(hot, persistent, ids, nowMs - LIVE_WARM_DAYS * DAY_MS, nowMs + DAY_MS)
      yield* Effect.logInfo("live market: warmed from the database").pipe(Effect.annotateLogs({ rows }))
    }
    const leader: LeaderLock["Service"] =
      config.store._tag === "Postgres"
        ? yield* Effect.acquireRelease(
            Effect.sync(() => makePgLeaderLock((config.store as { readonly url: string }).url)),
            (l) => l.close
          )
        : config.store._tag === "Embedded"
          ? pgliteLeaderLock
          : makeMemoryLeaderLock()
    yield* startLiveFeeds({ market, equity, config: live, leader }).pipe(Effect.mapError(problem))

    const cryptoPlane = yield* makeCryptoPlane.pipe(Effect.provideService(MarketStoreTag, market))
    yield* cryptoPlane.warm.pipe(Effect.forkScoped)
    const equityPlane = yield* Equity.makeEquityPlane({ source: "sec" }).pipe(
      Effect.provideService(Equity.EquityStore, equity)
    )
    return {
      planes: [
        { ...cryptoPlane, source: "live" },
        { ...equityPlane, source: "live" }
      ],
      description: `live (${live.venues.join(", ")}, SEC EDGAR)`,
      market,
      equity
    }
  })
