/**
 * The data planes and their feeds, for the life of a scope.
 *
 * The simulated feed (the default) regenerates its history from `MARKET_DATA_SEED` at every start into
 * in-memory plane stores: a year of 15-minute crypto data for the whole universe (`MARKET_DATA_SIM_UNIVERSE`:
 * the default's 428 assets from the simulated venues' listings take about a minute of CPU, the registry's 35 about
 * 5 s; `serve` generates it in the background after it listens, asset by asset, see
 * `OpenPlanesOptions.progressive`) that then ticks
 * on each venue's cadence and streams every 250 ms through a quote board, as the live venue streams do (the plane
 * reads it through `withSimulatedStream`), and 525 fictional companies (five hand-made,
 * `MARKET_DATA_SIMULATED_COMPANIES` generated) whose filings are generated in the SEC's own formats and parsed by the real parsers. The simulated
 * market is served from memory; on the embedded default its history is also kept in the data folder
 * (`SIMULATED_HISTORY_FOLDER`, see `History.ts` in the sources), so a reopened folder reads it back and generates
 * only the gap to now; with `DATABASE_URL=memory` or on server PostgreSQL it is regenerated at every start (the
 * same seed gives the same history, and PostgreSQL's market tables are for live data). Filings are: on a database (PGlite or PostgreSQL)
 * the equity plane serves the database's equity store, which holds what `market-data ingest` loaded, and the
 * simulated companies are written into it at start (`loadSimulatedEquityOnDatabase`), and the plane reads it
 * through a one-minute cache (`cachedEquityReads`); on `DATABASE_URL=memory` they stay in memory. The account stores (keys, credits, idempotency, rate limit) are whatever the
 * configuration names, independently.
 */

import { join } from "node:path"
import {
  type AssetDirectory,
  apiError,
  type CompanyHoldings,
  type CryptoAsset,
  DAY_MS,
  dailyIndexThrough,
  Equity,
  type EquityStore,
  type Handler,
  type LeaderLock,
  type MarketStore,
  MarketStore as MarketStoreTag,
  makeCryptoPlaneOver,
  makeQuoteBoard,
  makeUniverseRef,
  type PlaneForAsset,
  type PlaneOperations,
  pricedAssets,
  staticUniverse,
  universeOfDirectory,
  withQuoteBoard
} from "@market-data/core"
import {
  type MemoryMarketStore,
  makeMemoryDirectoryStore,
  makeMemoryEquityStore,
  makeMemoryLeaderLock,
  makeMemoryMarketStore,
  makeWriteThroughMarketStore,
  warmMarketStore
} from "@market-data/memory"
import {
  copyEquityRows,
  type Database,
  inBulkTransaction,
  makePgDirectoryStore,
  makePgEquityStore,
  makePgLeaderLock,
  makePgMarketStore,
  pgliteLeaderLock
} from "@market-data/postgres"
import {
  type EquityLoadReport,
  generatedManagers,
  generatedProfiles,
  isSimulatedCik,
  type LiveConfigError,
  loadLiveConfig,
  loadSimulatedEquity,
  MaxGeneratedCompanies,
  makeSimulatedUniverse,
  SimulatedCompanies,
  SimulatedCrypto,
  SimulatedEquityVersion,
  SimulatedManagers,
  simulatedBarsByTicker,
  simulatedEquity,
  startLiveFeeds,
  startSimulatedCrypto
} from "@market-data/sources"
import { Clock, Effect, Schedule, type Scope } from "effect"
import { type AppConfig, ConfigProblem } from "./AppConfig.ts"
import { releaseFreedMemory } from "./Memory.ts"
import { noStartProgress, type StartProgress } from "./StartProgress.ts"
import type { OpenedStores } from "./Stores.ts"

/**
 * The source of an equity company's data under the simulated feed: the fictional companies are `simulated`;
 * anything else in the store came from SEC files that `market-data ingest` loaded, so it is `sec`. Only the
 * data of the simulated companies is generated; the label follows the company, not the feed.
 */
export const simulatedFeedEquitySource = (cik: string): "simulated" | "sec" =>
  isSimulatedCik(cik) ? "simulated" : "sec"

export interface OpenedPlanes {
  readonly planes: ReadonlyArray<PlaneOperations>
  /** The feed, in words, for the startup line. */
  readonly description: string
  /** The plane stores, for tools and tests that look inside. */
  readonly market: MarketStore["Service"]
  readonly equity: EquityStore["Service"]
  /** What the planes still lack before every answer can be given (`/readyz`); empty once the baselines are warm. */
  readonly missing: () => ReadonlyArray<string>
  /** The simulated crypto backfill's report once it is done (the simulated feed only). */
  readonly simulatedReport?: () => SimulatedCrypto.BackfillReport | undefined
}

export interface OpenPlanesOptions {
  /**
   * Generate the simulated market in the background, asset by asset, instead of before returning (`serve` does,
   * so the server listens at once): each asset's crypto operations answer once its history is generated and
   * its baselines sampled; until then they answer `503 source_unavailable` with `Retry-After: 1` (transient:
   * nothing is charged), and `rank` until every asset is ready. The equity plane is loaded before returning
   * either way. The memory kept is smaller too: see `SIMULATED_KEPT_DENSE_DAYS`.
   */
  readonly progressive?: boolean
  /**
   * The kept history's missing segments being written by a child process meanwhile
   * (`startSimulatedHistoryApart`): a progressive start reads each back as the child reports it done.
   */
  readonly apart?: SimulatedCrypto.HistoryApart
  /** Where the start's steps are reported until the server listens (`StartProgress.ts`). */
  readonly progress?: StartProgress
}

/**
 * With a progressive start, what the simulated feed keeps of the dense per-bar series (mark/index, open
 * interest, taker flow, book metrics, the bars of non-primary listings) once an asset's baselines are sampled.
 * The generator writes 120 days of them, and the plane's first sampling reads them all (90 days of hourly
 * samples from 8 days before the first, and the one-year funding baseline weighs venues by open interest where
 * it has it); afterwards the plane only ever reads them from 8 days before its newest sample (every other read
 * is of the primary listing's bars, funding and liquidations, which are kept whole). Dropping the rest changes
 * no answer (`infra/test/ProgressivePlanes.test.ts`) and leaves about 100 MB of the 240 MB a blocking start
 * keeps.
 */
/**
 * The simulated crypto market the configuration names (`MARKET_DATA_SIM_UNIVERSE`): its universe, the assets
 * generated (in the order a progressive start fills them) and their model parameters.
 */
const simulatedMarket = (config: AppConfig) => {
  if (config.simulatedUniverse !== "market") {
    return { universe: staticUniverse, priced: pricedAssets(), profiles: undefined }
  }
  const built = makeSimulatedUniverse()
  return { universe: built.universe, priced: built.priced, profiles: built.profiles }
}

/** The folder of the kept simulated crypto history inside the embedded default's data folder. */
export const SIMULATED_HISTORY_FOLDER = "simulated-market"

/**
 * Where the simulated crypto history is kept between starts: on the embedded default, in the data folder beside
 * PGlite's files (one process at a time holds it, by the lock file); nowhere with `DATABASE_URL=memory` (nothing
 * persists) or on server PostgreSQL, where every instance regenerates its own (a shared database is for live
 * data; several instances would race on one folder; see docs/storage.md).
 */
const simulatedHistory = (config: AppConfig) =>
  config.store._tag === "Embedded"
    ? { history: SimulatedCrypto.makeSimulatedHistoryStore(join(config.store.dir, SIMULATED_HISTORY_FOLDER)) }
    : {}

/**
 * On the embedded default, begins the kept simulated history (`simulated-market/`) and starts a child process
 * writing the segments it lacks (all of them on an empty folder: see `Apart.ts` in the sources), for the
 * progressive start to read back as they come (`OpenPlanesOptions.apart`). `serve` calls it first thing, so the
 * child generates while PGlite is created and migrated and the filings load. Undefined when nothing is missing,
 * and with `DATABASE_URL=memory`, server PostgreSQL or the live feed (nothing is kept there). The child is
 * killed, should it still run, when the scope closes.
 */
export const startSimulatedHistoryApart = (
  config: AppConfig
): Effect.Effect<SimulatedCrypto.HistoryApart | undefined, never, Scope.Scope> => {
  const kept = simulatedHistory(config)
  if (config.feed === "live" || kept.history === undefined) return Effect.succeed(undefined)
  const sim = simulatedMarket(config)
  return SimulatedCrypto.startHistoryApart(kept.history, {
    seed: config.seed,
    assets: sim.priced,
    ...(sim.profiles === undefined ? {} : { profiles: sim.profiles })
  })
}

/** The log line of a simulated market whose history is generated. */
const logMarketReady = (report: {
  readonly rows: number
  readonly fromMs: number
  readonly toMs: number
  readonly durationMs: number
}) =>
  Effect.logInfo("simulated market ready").pipe(
    Effect.annotateLogs({
      rows: report.rows,
      from: new Date(report.fromMs).toISOString(),
      to: new Date(report.toMs).toISOString(),
      ms: Math.round(report.durationMs)
    })
  )

export const SIMULATED_KEPT_DENSE_DAYS = 10

const TRIMMED_KINDS = ["markIndex", "openInterest", "takerFlow", "bookMetrics"] as const

/** Drops what the plane no longer reads of a simulated asset whose baselines are sampled. */
const trimSampledAsset = (market: MemoryMarketStore, asset: CryptoAsset, nowMs: number) => {
  const cutoff = nowMs - SIMULATED_KEPT_DENSE_DAYS * DAY_MS
  for (const kind of TRIMMED_KINDS) market.trim(kind, asset.id, cutoff)
  const others = asset.listings.slice(1).map((l) => l.venue)
  if (others.length > 0) market.trim("bars", asset.id, cutoff, others)
}

/**
 * The crypto plane answering `503 source_unavailable` (`Retry-After: 1`) for an asset whose history is not
 * generated yet, and for plane-wide calls (`rank`) until every asset is.
 */
const gateCryptoPlane = (
  plane: PlaneOperations,
  isReady: (assetId: string | undefined) => boolean,
  progress: () => string
): PlaneOperations => {
  const notReady = (what: string) =>
    Effect.fail(
      apiError(
        "source_unavailable",
        `the service is starting: the simulated market's history for ${what} is still being generated (${progress()}); retry in a second`,
        { retryAfterSeconds: 1 }
      )
    )
  return {
    ...plane,
    perAsset: new Map(
      [...plane.perAsset].map(([op, forAsset]): [string, PlaneForAsset] => [
        op,
        (entry, params, input) => (isReady(entry.asset_id) ? forAsset(entry, params, input) : notReady(entry.asset_id))
      ])
    ),
    calls: new Map(
      [...plane.calls].map(([op, handler]): [string, Handler] => [
        op,
        (input) => {
          const id = typeof input.params.id === "string" ? input.params.id : undefined
          return isReady(id) ? handler(input) : notReady(id ?? "every asset")
        }
      ])
    )
  }
}

/** Opens the planes the configuration's feed fills. */
export const openPlanes = (
  config: AppConfig,
  stores: OpenedStores,
  options: OpenPlanesOptions = {}
): Effect.Effect<OpenedPlanes, ConfigProblem, Scope.Scope> =>
  Effect.gen(function* () {
    if (config.feed === "live") return yield* openLivePlanes(config, stores, options.progressive === true)
    if (options.progressive === true)
      return yield* openSimulatedProgressively(config, stores, options.apart, options.progress)
    const market = makeMemoryMarketStore()
    // The sub-second stream, through the venue streams' ingest interface: the plane reads each listing's streamed
    // top of book, ticker and stream status, and the bar still forming, in front of what the feed stores.
    const quotes = makeQuoteBoard()
    const stream = SimulatedCrypto.makeSimulatedStream()
    const served = SimulatedCrypto.withSimulatedStream(market, quotes, stream)
    // On a database the filings persist (the simulated companies beside whatever `market-data ingest` loaded);
    // with DATABASE_URL=memory they live in this process.
    const database = stores.database
    const persistent = database === undefined ? undefined : makePgEquityStore(database)
    const equity: EquityStore["Service"] = persistent ?? makeMemoryEquityStore()

    const sim = simulatedMarket(config)
    yield* Effect.logInfo("simulated market: generating a year of history", {
      seed: config.seed,
      assets: sim.priced.length
    })
    const crypto = yield* startSimulatedCrypto({
      seed: config.seed,
      assets: sim.priced,
      ...(sim.profiles === undefined ? {} : { profiles: sim.profiles }),
      ...simulatedHistory(config),
      quotes,
      stream
    }).pipe(Effect.provideService(MarketStoreTag, market))
    yield* logMarketReady(crypto.report)

    yield* loadFilings(config, database, equity)

    const cryptoPlane = yield* makeCryptoPlaneOver(makeUniverseRef(sim.universe)).pipe(
      Effect.provideService(MarketStoreTag, served)
    )
    // Builds every asset's baselines in the background, so the first `rank` or `read` need not.
    let warm = false
    yield* cryptoPlane.warm.pipe(
      Effect.tap(() => {
        warm = true
        return Effect.logInfo("crypto baselines warm")
      }),
      Effect.forkScoped
    )
    // On a database the plane reads through a short-lived cache: a company's facts and filings are read on
    // every request, and PGlite reads them about ten times slower than memory.
    const equityPlane = yield* Equity.makeEquityPlane({
      source: "simulated",
      sourceOf: simulatedFeedEquitySource
    }).pipe(
      Effect.provideService(Equity.EquityStore, persistent === undefined ? equity : cachedEquityReads(persistent))
    )
    return {
      planes: [
        { ...cryptoPlane, source: "simulated" },
        { ...equityPlane, source: "simulated" }
      ],
      description: `simulated (seed ${config.seed}; not live market data)`,
      market: served,
      equity,
      missing: () => (warm ? [] : ["crypto baselines: being computed"]),
      simulatedReport: () => crypto.report
    }
  })

/** Loads the simulated filings into the equity store (the database's, or memory), logging what it did. */
const loadFilings = (
  config: AppConfig,
  database: Database | undefined,
  equity: EquityStore["Service"],
  onProgress: (state: string) => void = () => undefined
) =>
  Effect.gen(function* () {
    // The simulated filings end today (UTC), so prices and filings are as fresh as the clock says.
    const today = new Date(yield* Clock.currentTimeMillis).toISOString().slice(0, 10)
    const loadStarted = yield* Clock.currentTimeMillis
    const loaded =
      database === undefined
        ? yield* loadSimulatedEquity(
            simulatedEquity(config.seed, { asOf: today, generated: config.simulatedCompanies })
          ).pipe(Effect.provideService(Equity.EquityStore, equity))
        : yield* loadSimulatedEquityOnDatabase(
            database,
            { seed: config.seed, asOf: today, generated: config.simulatedCompanies },
            onProgress
          )
    yield* Effect.logInfo(
      loaded === "unchanged" ? "simulated filings already in the database" : "simulated filings loaded"
    ).pipe(
      Effect.annotateLogs(
        loaded === "unchanged"
          ? {
              companies: SimulatedCompanies.length + config.simulatedCompanies,
              ms: (yield* Clock.currentTimeMillis) - loadStarted
            }
          : {
              companies: loaded.companies,
              facts: loaded.facts,
              filings: loaded.filings,
              bars: loaded.bars,
              ms: (yield* Clock.currentTimeMillis) - loadStarted
            }
      )
    )
  })

/**
 * The simulated planes with the market generated in the background (`OpenPlanesOptions.progressive`): the
 * filings are loaded first, then this returns while the crypto history is generated asset by asset, each
 * asset's baselines sampled as soon as its history is in the store (what `warm` does for all at the end of a
 * blocking start), and what the plane no longer reads dropped (`SIMULATED_KEPT_DENSE_DAYS`). Same seed, same
 * data, same answers as the blocking start; only earlier.
 */
const openSimulatedProgressively = (
  config: AppConfig,
  stores: OpenedStores,
  apart?: SimulatedCrypto.HistoryApart,
  progress: StartProgress = noStartProgress
): Effect.Effect<OpenedPlanes, ConfigProblem, Scope.Scope> =>
  Effect.gen(function* () {
    const market = makeMemoryMarketStore()
    // As in the blocking start: the plane reads the simulated stream in front of the stored data.
    const quotes = makeQuoteBoard()
    const stream = SimulatedCrypto.makeSimulatedStream()
    const served = SimulatedCrypto.withSimulatedStream(market, quotes, stream)
    const database = stores.database
    const persistent = database === undefined ? undefined : makePgEquityStore(database)
    const equity: EquityStore["Service"] = persistent ?? makeMemoryEquityStore()
    let filings: string | undefined
    yield* progress.during(
      `loading the simulated filings of ${SimulatedCompanies.length + config.simulatedCompanies} companies`,
      loadFilings(config, database, equity, (state) => {
        filings = state
        progress.tick()
      }),
      () => filings
    )

    const sim = simulatedMarket(config)
    const cryptoPlane = yield* makeCryptoPlaneOver(makeUniverseRef(sim.universe)).pipe(
      Effect.provideService(MarketStoreTag, served)
    )
    const total = sim.priced.length
    const ready = new Set<string>()
    let allReady = false
    const isReady = (assetId: string | undefined) => allReady || (assetId !== undefined && ready.has(assetId))
    let report: SimulatedCrypto.BackfillReport | undefined
    yield* Effect.logInfo("simulated market: generating a year of history in the background", {
      seed: config.seed,
      assets: total
    })
    yield* startSimulatedCrypto({
      seed: config.seed,
      assets: sim.priced,
      ...(sim.profiles === undefined ? {} : { profiles: sim.profiles }),
      ...simulatedHistory(config),
      ...(apart === undefined ? {} : { apart }),
      quotes,
      stream,
      afterAsset: (asset) =>
        Effect.gen(function* () {
          yield* cryptoPlane.warmAsset(asset.id)
          trimSampledAsset(market, asset, yield* Clock.currentTimeMillis)
          ready.add(asset.id)
        })
    }).pipe(
      Effect.provideService(MarketStoreTag, market),
      Effect.tap(() =>
        // The ticker keeps appending; once a day what the plane no longer reads is dropped again, so a long
        // uptime holds SIMULATED_KEPT_DENSE_DAYS of the dense series, not the retention's 400 days. Each asset's
        // baselines are sampled up to now first, so what its next sampling reads (from 8 days before) is kept.
        Effect.forEach(
          sim.priced,
          (asset) =>
            Effect.gen(function* () {
              yield* cryptoPlane.warmAsset(asset.id)
              trimSampledAsset(market, asset, yield* Clock.currentTimeMillis)
              yield* Effect.yieldNow
            }),
          { discard: true }
        ).pipe(
          Effect.andThen(releaseFreedMemory("daily trim of the simulated series")),
          Effect.repeat(Schedule.spaced("1 day")),
          Effect.delay("1 day"),
          Effect.forkScoped
        )
      ),
      Effect.tap((crypto) =>
        Effect.gen(function* () {
          allReady = true
          report = crypto.report
          yield* logMarketReady(crypto.report)
          yield* Effect.logInfo("crypto baselines warm")
          yield* releaseFreedMemory("crypto baselines warm")
        })
      ),
      Effect.forkScoped
    )

    const equityPlane = yield* Equity.makeEquityPlane({
      source: "simulated",
      sourceOf: simulatedFeedEquitySource
    }).pipe(
      Effect.provideService(Equity.EquityStore, persistent === undefined ? equity : cachedEquityReads(persistent))
    )
    return {
      planes: [
        {
          ...gateCryptoPlane(cryptoPlane, isReady, () => `${ready.size} of ${total} assets ready`),
          source: "simulated"
        },
        { ...equityPlane, source: "simulated" }
      ],
      description: `simulated (seed ${config.seed}; not live market data)`,
      market: served,
      equity,
      missing: () => (allReady ? [] : [`crypto baselines: ${ready.size} of ${total} assets ready`]),
      simulatedReport: () => report
    }
  })

/** How much stored live history the in-memory hot store is filled with at start (the baselines read 98 days). */
const LIVE_WARM_DAYS = 120
/** How often, and how far back, every live instance re-reads the market data from the database. */
const LIVE_REFRESH_EVERY = "1 minute"
const LIVE_REFRESH_MS = 3 * 60 * 60 * 1000

/**
 * The live feed: public venue APIs and SEC EDGAR into the same plane stores. On a database the market store
 * writes through to PostgreSQL (what is served has been persisted) and is warmed from it at start; filings
 * live in the database. One instance ingests (a leader lock: a PostgreSQL advisory lock, or trivially the
 * one PGlite or memory process) while all serve. With no network the sources are marked failing and every
 * answer says so (`stale`, `unavailable`); nothing crashes, and the next poll recovers.
 */
const openLivePlanes = (
  config: AppConfig,
  stores: OpenedStores,
  progressive: boolean
): Effect.Effect<OpenedPlanes, ConfigProblem, Scope.Scope> =>
  Effect.gen(function* () {
    const problem = (e: LiveConfigError) => new ConfigProblem(`${e.variable}: ${e.message}`)
    const live = yield* loadLiveConfig.pipe(Effect.mapError(problem))
    const database = stores.database
    const hot = makeMemoryMarketStore()
    let market: MarketStore["Service"] = hot
    let equity: EquityStore["Service"] = makeMemoryEquityStore()
    // The crypto universe is the stored asset directory (the registry's assets and listings until the first
    // listing refresh), rebuilt after each refresh and, on every instance, from the store every minute.
    const directoryStore = database === undefined ? makeMemoryDirectoryStore() : makePgDirectoryStore(database)
    const setFrom = (directory: AssetDirectory) =>
      Effect.sync(() => {
        loadedMs = directory.updatedMs
        // Unchanged assets keep their objects (and what answering remembers of them): `previous`.
        universe.set(universeOfDirectory(directory, { previous: universe.get() }))
      })
    const stored = yield* directoryStore.load
    let loadedMs = stored.updatedMs
    const universe = makeUniverseRef(universeOfDirectory(stored))
    const ids = () => universe.get().assets.map((a) => a.id)
    if (database !== undefined) {
      const persistent = makePgMarketStore(database)
      market = makeWriteThroughMarketStore(hot, persistent)
      equity = makePgEquityStore(database)
      const nowMs = yield* Clock.currentTimeMillis
      const rows = yield* warmMarketStore(hot, persistent, ids(), nowMs - LIVE_WARM_DAYS * DAY_MS, nowMs + DAY_MS)
      yield* Effect.logInfo("live market: warmed from the database").pipe(Effect.annotateLogs({ rows }))
      // Only the leader ingests; every instance serves. So each one re-reads the recent data (and the sources'
      // statuses) from the database every minute: an instance that does not lead stays as fresh as the leader.
      yield* Clock.currentTimeMillis.pipe(
        Effect.flatMap((now) => warmMarketStore(hot, persistent, ids(), now - LIVE_REFRESH_MS, now + DAY_MS)),
        Effect.catchCause((cause) => Effect.logWarning("live market: refresh from the database failed", cause)),
        Effect.repeat(Schedule.spaced(LIVE_REFRESH_EVERY)),
        Effect.delay(LIVE_REFRESH_EVERY),
        Effect.forkScoped
      )
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
    yield* directoryStore.load.pipe(
      // Rebuilt only when the store holds a newer refresh (the leader's own update already set it).
      Effect.flatMap((d) => (d.updatedMs === loadedMs ? Effect.void : Effect.asVoid(setFrom(d)))),
      Effect.catchCause((cause) => Effect.logWarning("live directory: reload from the store failed", cause)),
      Effect.repeat(Schedule.spaced(LIVE_REFRESH_EVERY)),
      Effect.delay(LIVE_REFRESH_EVERY),
      Effect.forkScoped
    )
    const directory = {
      store: directoryStore,
      universe: () => universe.get().assets,
      update: (next: AssetDirectory) => Effect.asVoid(setFrom(next))
    }
    // The venues' market streams (every instance) into the process's board; the plane reads the store with the
    // streamed top of book, funding states and stream statuses in front (`withQuoteBoard`).
    const board = makeQuoteBoard()
    yield* startLiveFeeds({ market, equity, config: live, leader, directory, board }).pipe(Effect.mapError(problem))

    // What the plane, `coverage`, `sources` and the metrics read: the store with the streams in front (writes pass).
    const served = withQuoteBoard(market, board)
    const cryptoPlane = yield* makeCryptoPlaneOver(universe).pipe(Effect.provideService(MarketStoreTag, served))
    // Once every asset's baselines are sampled, a server (`serve`) hands back what its start freed and bounds the
    // heap's growth between full collections (`releaseFreedMemory`), as the simulated planes do: under V8's own
    // factor the answering thread's heap grows to several times what is live before a full collection, and that
    // collection's pause (evacuation and sweeping) grows with it.
    let warm = false
    yield* cryptoPlane.warm.pipe(
      Effect.tap(() =>
        Effect.gen(function* () {
          warm = true
          yield* Effect.logInfo("crypto baselines warm")
          if (progressive) yield* releaseFreedMemory("crypto baselines warm")
        })
      ),
      Effect.forkScoped
    )
    // Equity prices in live mode are daily bars (the price connector's, or files loaded with `ingest prices`): while
    // the market trades the newest is the previous session's close, so price-based answers say `delayed`.
    const equityPlane = yield* Equity.makeEquityPlane({
      source: "sec",
      dailyCloseDelayed: true,
      // `filings_indexed_through`: the daily-index follower's watermark (only days whose filings all went in).
      filingsIndexedThrough: Effect.map(market.status, dailyIndexThrough)
    }).pipe(Effect.provideService(Equity.EquityStore, equity))
    return {
      planes: [
        { ...cryptoPlane, source: "live" },
        { ...equityPlane, source: "live" }
      ],
      description: `live (${live.venues.length === 0 ? "no crypto venue" : live.venues.join(", ")}, SEC EDGAR${live.prices === "off" ? "" : ", daily prices from Yahoo Finance"})`,
      market: served,
      equity,
      missing: () => (warm ? [] : ["crypto baselines: being computed"])
    }
  })

/** What a simulation is: the generator's version and its inputs (the same inputs generate the same data). */
export interface SimulationInputs {
  readonly seed: number
  readonly asOf: string
  readonly generated: number
}

const simulationName = (inputs: SimulationInputs): string =>
  `v${SimulatedEquityVersion} seed=${inputs.seed} as_of=${inputs.asOf} generated=${inputs.generated}`

/**
 * Writes the simulated companies into the database's equity store, where they sit beside what `market-data
 * ingest` loaded. The simulation depends on the generator's version, the seed, today's date (its history ends
 * today) and how many companies are generated, and the same accession numbers carry different documents in
 * different simulations, so merging one into another would mix two simulations. Instead the database names the
 * simulation it holds (table `equity_simulation`, written in the same transaction as the companies): when that is
 * this simulation and its companies are all there, a start writes nothing and generates nothing; otherwise every
 * simulated row (of every CIK the generator can make, and the simulated managers' 13F reports: numbers EDGAR has
 * not assigned) is deleted and the simulation generated and written anew. Check and replacement run in one
 * transaction under an advisory lock, so instances starting together on one PostgreSQL do it once and readers never
 * see half a simulation. The rows go in with `COPY` (`copyEquityRows`: on PGlite `COPY FROM '/dev/blob'`, the path the
 * SEC bulk ingest writes through), the same rows the store's own writes would leave. Measured in
 * docs/performance-log.md.
 */
export const loadSimulatedEquityOnDatabase = (
  database: Database,
  inputs: SimulationInputs,
  onProgress: (state: string) => void = () => undefined
): Effect.Effect<EquityLoadReport | "unchanged"> =>
  Effect.gen(function* () {
    const name = simulationName(inputs)
    const ciks = [...SimulatedCompanies, ...generatedProfiles(inputs.generated)].map((c) => c.cik)
    const loadedAtMs = yield* Clock.currentTimeMillis
    return yield* Effect.promise(() =>
      inBulkTransaction(database, async (s): Promise<EquityLoadReport | "unchanged"> => {
        await s.run("select pg_advisory_xact_lock(hashtext('market-data/simulated-equity'))")
        const row = (await s.run("select simulation from equity_simulation where id = 1")).rows[0]
        if (row?.simulation === name) {
          const present = await s.run(
            "select count(*) as n from equity_companies where cik in (select jsonb_array_elements_text($1::jsonb))",
            [JSON.stringify(ciks)]
          )
          if (Number(present.rows[0]?.n) === ciks.length) return "unchanged"
        }
        const sim = simulatedEquity(inputs.seed, {
          asOf: inputs.asOf,
          generated: inputs.generated,
          onProgress: (step, done, total) =>
            onProgress(`${step}: ${done} of ${total}${step === "generating" || step === "parsing" ? " companies" : ""}`)
        })
        onProgress("replacing an earlier simulation's rows")
        // Every simulated row, of this simulation's companies or an earlier one's: every CIK the generator can make,
        // and every manager's 13F reports.
        const companies = JSON.stringify(
          [...SimulatedCompanies, ...generatedProfiles(MaxGeneratedCompanies)].map((c) => c.cik)
        )
        const filers = JSON.stringify([
          ...[...SimulatedManagers, ...generatedManagers].map((m) => m.cik),
          ...JSON.parse(companies)
        ])
        const inList = (column: string, param: string) =>
          `${column} in (select jsonb_array_elements_text(${param}::jsonb))`
        await s.run(
          `delete from equity_insider_transactions where accession in
             (select accession from equity_ownership_reports where ${inList("issuer_cik", "$1")})`,
          [companies]
        )
        await s.run(`delete from equity_ownership_reports where ${inList("issuer_cik", "$1")}`, [companies])
        await s.run(
          `delete from equity_holdings where accession in
             (select accession from equity_holdings_reports where ${inList("filer_cik", "$1")})`,
          [filers]
        )
        await s.run(`delete from equity_holdings_reports where ${inList("filer_cik", "$1")}`, [filers])
        for (const table of [
          "equity_securities",
          "equity_bars",
          "equity_facts",
          "equity_filings",
          "equity_tickers",
          "equity_companies"
        ]) {
          onProgress(`replacing an earlier simulation's rows: ${table}`)
          await s.run(`delete from ${table} where ${inList("cik", "$1")}`, [companies])
        }
        // The simulated CIKs now hold no rows: the big tables take a plain COPY.
        onProgress("writing the rows into the database")
        const written = await copyEquityRows(
          s,
          {
            companies: sim.companies,
            tickers: sim.tickers,
            factsByCik: sim.factsByCik,
            filingsByCik: new Map([...sim.submissions].map(([cik, sub]) => [cik, sub.filings])),
            securitiesByCik: sim.securities,
            barsByCik: simulatedBarsByTicker(sim),
            ownershipReports: sim.ownershipReports,
            holdingsReports: sim.holdingsReports
          },
          (table, done) => onProgress(`writing ${table}${done === undefined ? "" : `: ${done}`}`)
        )
        await s.run(
          `insert into equity_simulation (id, simulation, companies, loaded_at_ms) values (1, $1, $2, $3)
             on conflict (id) do update set simulation = excluded.simulation, companies = excluded.companies,
               loaded_at_ms = excluded.loaded_at_ms`,
          [name, ciks.length, loadedAtMs]
        )
        return {
          companies: sim.companies.length,
          facts: written.facts,
          filings: written.filings,
          ownershipReports: written.ownershipReports,
          holdingsReports: written.holdingsReports,
          bars: written.bars
        }
      })
    )
  })

/** How long a cached read of the database's equity store is served (the plane's directory caches as long). */
const EQUITY_CACHE_MS = 60_000
/** At most this many cached rows (facts, filings, bars, ...) in all: about 100 MB at the largest. */
const EQUITY_CACHE_ROWS = 250_000

/**
 * The equity store with its reads cached for `EQUITY_CACHE_MS` (least recently used first out beyond
 * `EQUITY_CACHE_ROWS` rows): what `market-data ingest` writes into a shared PostgreSQL shows within a minute,
 * as the directory does. Bars are cached whole per company and cut to the asked range here, since every request
 * asks up to its own now. Writes go to the store and empty the cache.
 */
export const cachedEquityReads = (store: EquityStore["Service"]): EquityStore["Service"] => {
  const cache = new Map<string, { readonly atMs: number; readonly rows: number; readonly value: unknown }>()
  let rows = 0
  const drop = (key: string) => {
    const entry = cache.get(key)
    if (entry !== undefined) {
      rows -= entry.rows
      cache.delete(key)
    }
  }
  const cached = <A>(
    key: string,
    read: Effect.Effect<A>,
    sizeOf: (value: A) => number = (value) => (Array.isArray(value) ? value.length : 1)
  ): Effect.Effect<A> =>
    Effect.gen(function* () {
      const nowMs = yield* Clock.currentTimeMillis
      const hit = cache.get(key)
      if (hit !== undefined && nowMs >= hit.atMs && nowMs - hit.atMs < EQUITY_CACHE_MS) {
        cache.delete(key)
        cache.set(key, hit)
        return hit.value as A
      }
      drop(key)
      const value = yield* read
      const size = sizeOf(value)
      if (size <= EQUITY_CACHE_ROWS) {
        cache.set(key, { atMs: nowMs, rows: size, value })
        rows += size
        for (const oldest of cache.keys()) {
          if (rows <= EQUITY_CACHE_ROWS) break
          drop(oldest)
        }
      }
      return value
    })
  const write = <A>(effect: Effect.Effect<A>): Effect.Effect<A> =>
    Effect.ensuring(
      effect,
      Effect.sync(() => {
        cache.clear()
        rows = 0
      })
    )
  return {
    putCompany: (c) => write(store.putCompany(c)),
    putTickers: (e) => write(store.putTickers(e)),
    putFacts: (cik, f) => write(store.putFacts(cik, f)),
    putFilings: (cik, f) => write(store.putFilings(cik, f)),
    putOwnershipReports: (r) => write(store.putOwnershipReports(r)),
    putHoldingsReports: (r) => write(store.putHoldingsReports(r)),
    putSecurities: (cik, c) => write(store.putSecurities(cik, c)),
    putBars: (cik, ticker, b) => write(store.putBars(cik, ticker, b)),
    companies: cached("companies", store.companies),
    company: (cik) => cached(`company|${cik}`, store.company(cik)),
    tickers: cached("tickers", store.tickers),
    facts: (cik, concepts) =>
      cached(`facts|${cik}|${concepts === undefined ? "*" : concepts.join(",")}`, store.facts(cik, concepts)),
    filings: (cik) => cached(`filings|${cik}`, store.filings(cik)),
    ownershipReports: (cik) => cached(`ownership|${cik}`, store.ownershipReports(cik)),
    holdings: (cik) =>
      cached(`holdings|${cik}`, store.holdings(cik), (h: CompanyHoldings) => h.holdings.length + h.reports.length),
    bars: (cik, ticker, range) =>
      Effect.map(cached(`bars|${cik}|${ticker}`, store.bars(cik, ticker, {})), (all) => {
        const within = all.filter(
          (b) =>
            (range.fromMs === undefined || b.tMs >= range.fromMs) && (range.toMs === undefined || b.tMs <= range.toMs)
        )
        return range.limit === undefined ? within : within.slice(Math.max(0, within.length - range.limit))
      }),
    coverage: (cik) => cached(`coverage|${cik ?? "*"}`, store.coverage(cik)),
    issuers: cached("issuers", store.issuers),
    issuer: (cik) => cached(`issuer|${cik}`, store.issuer(cik))
  }
}
