/**
 * The simulated crypto feed, the service's default source: backfills the market store with a year of
 * 15-minute history generated from the seed, then ticks forever on Effect's `Clock` (so `TestClock` drives it):
 * at every 15-minute close it appends bars, mark/index, open interest, taker flow, book metrics, liquidations
 * and due funding settlements; at every venue's cadence it refreshes that venue's books and funding states;
 * and it keeps the source status (`source: "simulated"`) current so freshness is computed honestly.
 *
 * Storage choice: the simulated history is regenerated from the seed at every start, not persisted. A year of
 * 15-minute data for the whole universe is ~16 million rows across the series; PGlite ingests far too slowly
 * for the 10 s start budget, while regenerating takes a few seconds and yields the same history again (the
 * genesis sits on a 7-day grid, so restarts within a week regenerate identical data). The composition root
 * therefore runs the simulated feed on the in-memory `MarketStore`; the PostgreSQL store is for live feeds,
 * whose volume arrives at real-time pace.
 *
 * Determinism: same seed, same clock, same data. The ticker stamps rows with scheduled times (multiples of the
 * bar interval and of each venue's cadence), never with the moment it happened to wake up.
 */
import {
  BAR_MS,
  type Component,
  type CryptoAsset,
  CryptoVenues,
  DAY_MS,
  MarketStore,
  pricedAssets,
  type SourceStatus
} from "@market-data/core"
import { Clock, Effect, type Fiber, type Scope } from "effect"
import { Simulation, type VenueSink } from "./Engine.ts"
import { type AssetProfile, VenueProfiles } from "./Profiles.ts"

/** While it runs, the feed deletes rows older than this once a day (the migration's documented retention). */
export const SIMULATED_RETENTION_DAYS = 400

/** History generated at start: at least this many days of 15-minute bars. */
export const SIMULATED_HISTORY_DAYS = 366
/**
 * Mark/index, open interest, taker flow, book metrics and the bars of non-primary listings are written for this
 * many most recent days (the plane's baselines read 90 d of them); the primary listing's bars, funding and
 * liquidations cover the whole history.
 */
export const SIMULATED_DENSE_HISTORY_DAYS = 120
/** The simulation's genesis sits on this grid (so restarts within a week regenerate the same history). */
export const GENESIS_GRID_MS = 7 * DAY_MS

export interface SimulatedCryptoOptions {
  /** `MARKET_DATA_SEED`. */
  readonly seed: string | number
  /** Start time; default: the `Clock`. */
  readonly nowMs?: number
  /** Assets to simulate; default: every asset with listings. */
  readonly assets?: ReadonlyArray<CryptoAsset>
  /** The assets' model parameters, by ID; default: the registry's (`AssetProfiles`). */
  readonly profiles?: Readonly<Record<string, AssetProfile>>
  readonly historyDays?: number
  readonly denseHistoryDays?: number
  /**
   * A progressive start: called once each asset's whole history is in the store, with its venues' statuses and
   * its listings' books and funding states, before the next asset is generated; the backfill yields to other
   * fibers between assets, so a server can answer while it runs. Assets are generated in `pricedAssets` order
   * (Bitcoin first); each asset's data is the same in whatever order they are generated (own random streams).
   */
  readonly afterAsset?: (asset: CryptoAsset) => Effect.Effect<void>
}

export interface BackfillReport {
  /** Open time of the first bar. */
  readonly fromMs: number
  /** Close time of the last bar (the backfill's "now", on the 15-minute grid). */
  readonly toMs: number
  readonly steps: number
  readonly assets: number
  readonly listings: number
  /** Rows written across every series kind. */
  readonly rows: number
  /** Wall time the backfill took (ms). */
  readonly durationMs: number
  /** CPU time the process spent meanwhile (ms): the budget measure that other load on the machine cannot inflate. */
  readonly cpuMs: number
}

export interface SimulatedCrypto {
  readonly simulation: Simulation
  readonly report: BackfillReport
  /** The ticker fiber (interrupted when the scope closes). */
  readonly ticker: Fiber.Fiber<never>
}

/** Steps generated between two yields of a progressive start. */
const PROGRESSIVE_CHUNK_STEPS = 4096

/** The genesis for a start at `nowMs` with `historyDays` of history. */
export const genesisFor = (nowMs: number, historyDays: number): number =>
  Math.floor((nowMs - historyDays * DAY_MS) / GENESIS_GRID_MS) * GENESIS_GRID_MS

/** A simulation of `options` (not yet run). */
export const makeSimulation = (options: SimulatedCryptoOptions & { readonly nowMs: number }): Simulation => {
  const genesisMs = genesisFor(options.nowMs, options.historyDays ?? SIMULATED_HISTORY_DAYS)
  const denseFrom =
    Math.floor((options.nowMs - (options.denseHistoryDays ?? SIMULATED_DENSE_HISTORY_DAYS) * DAY_MS) / BAR_MS) * BAR_MS
  return new Simulation({
    seed: String(options.seed),
    assets: options.assets ?? pricedAssets(),
    genesisMs,
    denseFromMs: Math.max(genesisMs, denseFrom),
    ...(options.profiles === undefined ? {} : { profiles: options.profiles })
  })
}

const rowsOf = (sinks: ReadonlyArray<VenueSink>): number =>
  sinks.reduce((n, s) => n + s.batches().reduce((m, b) => m + b.t.length, 0), 0)

const venuesOf = (sim: Simulation): ReadonlyArray<string> => [...new Set(sim.venues.map((v) => v.listing.venue))]

const fundingCadence = (venue: string): number =>
  CryptoVenues.find((v) => v.id === venue)?.fundingIntervalMs ?? 8 * 3_600_000

/** Status rows of `venue` after a 15-minute step closing at `closeMs`. */
const stepStatus = (venue: string, closeMs: number, lastFundingMs: number): Array<SourceStatus> => {
  const perBar: ReadonlyArray<Component> = [
    "bars",
    "markIndex",
    "openInterest",
    "takerFlow",
    "bookMetrics",
    "liquidations"
  ]
  const rows: Array<SourceStatus> = perBar.map((component) => ({
    source: "simulated",
    venue,
    component,
    newestMs: closeMs,
    cadenceMs: BAR_MS,
    checkedMs: closeMs,
    failing: false
  }))
  if (lastFundingMs > 0) {
    rows.push({
      source: "simulated",
      venue,
      component: "funding",
      newestMs: lastFundingMs,
      cadenceMs: fundingCadence(venue),
      checkedMs: closeMs,
      failing: false
    })
  }
  return rows
}

const tickStatus = (venue: string, atMs: number, perp: boolean): Array<SourceStatus> =>
  (perp ? (["books", "fundingState"] as const) : (["books"] as const)).map((component) => ({
    source: "simulated",
    venue,
    component,
    newestMs: atMs,
    cadenceMs: VenueProfiles[venue]?.cadenceMs ?? BAR_MS,
    checkedMs: atMs,
    failing: false
  }))

/** Newest funding settlement (ms) per venue; funding settles on UTC multiples of each listing's interval. */
const lastFundingBefore = (sim: Simulation, venue: string, closeMs: number): number => {
  let newest = 0
  for (const v of sim.venues) {
    if (v.listing.venue !== venue || !v.perp) continue
    const t = Math.floor(closeMs / v.intervalMs) * v.intervalMs
    if (t > sim.options.genesisMs && t > newest) newest = t
  }
  return newest
}

/** Books, funding states and status of `venue` (or every venue) as of `atMs`. */
const refreshLatest = (sim: Simulation, atMs: number, venue?: string) =>
  Effect.gen(function* () {
    const store = yield* MarketStore
    yield* store.putBooks(sim.books(atMs, venue))
    yield* store.putFundingStates(sim.fundingStates(atMs, venue))
    const venues = venue === undefined ? venuesOf(sim) : [venue]
    yield* store.putStatus(
      venues.flatMap((v) =>
        tickStatus(
          v,
          atMs,
          sim.venues.some((l) => l.listing.venue === v && l.perp)
        )
      )
    )
  })

const closeOfLastStep = (sim: Simulation): number => sim.openOf(sim.nextStep)

/**
 * Generates every closed bar from the genesis to `nowMs` into the store, asset by asset (each asset's arrays are
 * written in one batch per series and then dropped), logging progress.
 */
export const backfill = (
  sim: Simulation,
  nowMs: number,
  afterAsset?: (asset: CryptoAsset) => Effect.Effect<void>
): Effect.Effect<BackfillReport, never, MarketStore> =>
  Effect.gen(function* () {
    const store = yield* MarketStore
    const started = performance.now()
    const cpuStarted = process.cpuUsage()
    const steps = Math.max(0, Math.floor((nowMs - sim.openOf(sim.nextStep)) / BAR_MS))
    const run = sim.startRun(steps)
    const assets = sim.assetList
    let rows = 0
    yield* Effect.logInfo(
      `simulated crypto: backfilling ${assets.length} assets, ${steps} bars each from ${new Date(sim.openOf(run.start)).toISOString()}`
    )
    for (let i = 0; i < assets.length; i++) {
      let sinks: Array<VenueSink>
      if (afterAsset === undefined) sinks = sim.runAsset(run, i)
      else {
        // A progressive start answers requests meanwhile: a few thousand steps at a time (some milliseconds).
        const part = sim.beginAsset(run, i)
        while (!sim.advanceAsset(part, PROGRESSIVE_CHUNK_STEPS)) yield* Effect.yieldNow
        sinks = sim.endAsset(part)
      }
      rows += rowsOf(sinks)
      yield* store.write(sinks.flatMap((s) => s.batches()))
      if (afterAsset !== undefined) {
        // The asset is complete: what the end of the backfill writes for every venue, written now for its own.
        const asset = assets[i] as CryptoAsset
        const toMs = sim.openOf(run.start + run.steps)
        const venues = [...new Set(sinks.map((s) => s.venue))]
        yield* store.putStatus(venues.flatMap((v) => stepStatus(v, toMs, lastFundingBefore(sim, v, toMs))))
        const atMs = Math.max(nowMs, yield* Clock.currentTimeMillis)
        for (const v of venues) {
          const every = VenueProfiles[v]?.cadenceMs ?? BAR_MS
          const tick = Math.max(toMs, Math.floor(atMs / every) * every)
          yield* store.putBooks(sim.books(tick, v, asset.id))
          yield* store.putFundingStates(sim.fundingStates(tick, v, asset.id))
          yield* store.putStatus(
            tickStatus(
              v,
              tick,
              sim.venues.some((l) => l.listing.venue === v && l.perp)
            )
          )
        }
        yield* afterAsset(asset)
        yield* Effect.yieldNow
      }
      if ((i + 1) % 8 === 0 || i === assets.length - 1) {
        yield* Effect.logInfo(`simulated crypto: backfilled ${i + 1}/${assets.length} assets`)
      }
    }
    sim.finishRun(run)
    const toMs = closeOfLastStep(sim)
    yield* store.putStatus(venuesOf(sim).flatMap((v) => stepStatus(v, toMs, lastFundingBefore(sim, v, toMs))))
    // Books and funding states as of each venue's latest cadence tick at or before now; "now" read again from
    // the Clock, since generating the history took a few seconds of it.
    const servedMs = Math.max(nowMs, yield* Clock.currentTimeMillis)
    for (const v of venuesOf(sim)) {
      const every = VenueProfiles[v]?.cadenceMs ?? BAR_MS
      yield* refreshLatest(sim, Math.max(toMs, Math.floor(servedMs / every) * every), v)
    }
    const durationMs = performance.now() - started
    const cpu = process.cpuUsage(cpuStarted)
    const cpuMs = (cpu.user + cpu.system) / 1000
    yield* Effect.logInfo(
      `simulated crypto: backfill done, ${rows} rows in ${Math.round(durationMs)} ms (${Math.round(cpuMs)} ms CPU; source: simulated)`
    )
    return {
      fromMs: sim.openOf(run.start),
      toMs,
      steps,
      assets: assets.length,
      listings: sim.venues.length,
      rows,
      durationMs,
      cpuMs
    }
  })

/**
 * Runs forever: sleeps on the `Clock` until the next 15-minute close or venue tick, then appends what is due.
 * Steps are never skipped: after a long pause it catches up step by step. Once a day it deletes rows older than
 * `SIMULATED_RETENTION_DAYS`, so a long-running process holds a bounded history.
 */
export const runTicker = (sim: Simulation): Effect.Effect<never, never, MarketStore> =>
  Effect.gen(function* () {
    const store = yield* MarketStore
    const venues = venuesOf(sim)
    const cadence = new Map(venues.map((v) => [v, VenueProfiles[v]?.cadenceMs ?? BAR_MS]))
    const start = yield* Clock.currentTimeMillis
    const nextTick = new Map(
      venues.map((v) => [v, (Math.floor(start / (cadence.get(v) as number)) + 1) * (cadence.get(v) as number)])
    )
    let lastPruneMs = start
    while (true) {
      const now = yield* Clock.currentTimeMillis
      let stepped = false
      while (closeOfLastStep(sim) + BAR_MS <= now) {
        const sinks = sim.step()
        yield* store.write(sinks.flatMap((s) => s.batches()))
        stepped = true
      }
      if (stepped) {
        const closeMs = closeOfLastStep(sim)
        yield* store.putStatus(venues.flatMap((v) => stepStatus(v, closeMs, lastFundingBefore(sim, v, closeMs))))
        if (Math.floor(closeMs / DAY_MS) !== Math.floor(lastPruneMs / DAY_MS)) {
          yield* store.prune(closeMs - SIMULATED_RETENTION_DAYS * DAY_MS)
          lastPruneMs = closeMs
        }
      }
      for (const v of venues) {
        const due = nextTick.get(v) as number
        if (due > now) continue
        const every = cadence.get(v) as number
        const at = Math.floor(now / every) * every
        yield* refreshLatest(sim, at, v)
        nextTick.set(v, at + every)
      }
      const wake = Math.min(closeOfLastStep(sim) + BAR_MS, ...nextTick.values())
      yield* Effect.sleep(Math.max(0, wake - now))
    }
  })

/**
 * Starts the simulated feed: backfills the store (at least a year up to now) and forks the ticker into the
 * current scope. The composition root runs it on the in-memory `MarketStore` with `MARKET_DATA_SEED`.
 */
export const startSimulatedCrypto = (
  options: SimulatedCryptoOptions
): Effect.Effect<SimulatedCrypto, never, MarketStore | Scope.Scope> =>
  Effect.gen(function* () {
    const nowMs = options.nowMs ?? (yield* Clock.currentTimeMillis)
    const simulation = makeSimulation({ ...options, nowMs })
    const report = yield* backfill(simulation, nowMs, options.afterAsset)
    const ticker = yield* Effect.forkScoped(runTicker(simulation))
    return { simulation, report, ticker }
  })
