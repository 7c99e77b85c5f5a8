/**
 * The simulated crypto feed, the service's default source: backfills the market store with a year of
 * 15-minute history generated from the seed, then ticks forever on Effect's `Clock` (so `TestClock` drives it):
 * at every 15-minute close it appends bars, mark/index, open interest, taker flow, book metrics, liquidations
 * and due funding settlements; at every venue's cadence it refreshes that venue's books and funding states;
 * and it keeps the source status (`source: "simulated"`) current so freshness is computed honestly.
 *
 * Sub-second state goes through the same ingest interface as the live venue streams: given a quote board
 * (`SimulatedCryptoOptions.quotes`), a quote ticker (`Quotes.ts`) applies every listing's top of book and ticker
 * to it every 250 ms of the `Clock` and reports each venue's stream up, the price moving between 15-minute closes
 * along a bridge toward the next close (`Simulation.momentOf`); the books stored at each venue's cadence are the
 * depth behind that top, built around the same moment; and every minute it refreshes the bars still forming
 * (`SimulatedStream`), as the live venues' forming-bar job does. Served through `withSimulatedStream`, `price`,
 * `liquidity` and `funding` then read the streamed state, the `books` and `fundingState` statuses follow the
 * stream (a 5 s cadence), and the end of each asset's data (so `as_of`) moves with the clock, as in live mode.
 * While nothing reads the streamed state for a minute the ticker idles at one tick per 2.5 s.
 *
 * Storage choice: the feed serves from the in-memory `MarketStore` (PGlite ingests tens of millions of rows far
 * too slowly). Without a kept history (`SimulatedCryptoOptions.history`) the year is regenerated from the seed at
 * every start (the genesis sits on a 7-day grid, so restarts within a week regenerate identical data). With one
 * (the embedded default keeps it in the data folder, see `History.ts`) each asset's data and model state are
 * read back from its segment file and only the steps between its newest stored bar and now are generated; an
 * asset whose file is missing, corrupt or of another history is generated from the genesis (with a log line),
 * and its file written anew.
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
  type QuoteBoard,
  SeriesColumns,
  type SourceStatus
} from "@market-data/core"
import { Clock, Effect, type Fiber, type Scope } from "effect"
import { SIMULATED_CRYPTO_VERSION, Simulation } from "./Engine.ts"
import {
  float32Exact,
  type HistoryIdentity,
  type KeptAsset,
  type KeptSeries,
  type SimulatedHistoryStore,
  universeDigest
} from "./History.ts"
import { type AssetProfile, AssetProfiles, VenueProfiles } from "./Profiles.ts"
import { formingTimeOf, quoteTickOf, runQuoteTicker, type SimulatedStream, streamTick } from "./Quotes.ts"

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
  /**
   * Where the generated history is kept between starts (a reopened folder then generates only the gap to now).
   * Absent: regenerated at every start.
   */
  readonly history?: SimulatedHistoryStore
  /**
   * The segments of `history` another process is writing meanwhile (`startHistoryApart` in `Apart.ts`): the
   * backfill waits for each of those assets' segment and reads it back as a reopen does.
   */
  readonly apart?: HistoryApart
  /**
   * The process's quote board (`QuoteBoard.ts`), the ingest interface of the venue streams: given, a quote ticker
   * streams every listing's top of book and ticker into it every `QUOTE_TICK_MS` (`Quotes.ts`), from the start
   * (a progressive start's assets as they are generated). Serve the store through `withSimulatedStream`.
   */
  readonly quotes?: QuoteBoard
  /**
   * With `quotes`: what the quote ticker shares with the store served (`withSimulatedStream`): the bars still
   * forming, refreshed every minute, and whether the streamed state is being read.
   */
  readonly stream?: SimulatedStream
}

/** Segments of a kept history that another process (`Apart.ts`) writes while the backfill runs. */
export interface HistoryApart {
  /** The assets (indexes in simulation order) whose segments it writes; it writes them in that order. */
  readonly indexes: ReadonlySet<number>
  /** The writer's process ID, when it is a process that could be started. */
  readonly pid?: number
  /** The CPU time (ms) the writer used, once it has finished. */
  readonly cpuMs: () => number | undefined
  /**
   * Waits until the segment of asset `index` (and of every asset of `indexes` before it) is written, or the
   * writer is gone; answers why it is gone when it failed before writing it (those assets are then generated here).
   */
  readonly ready: (index: number) => Effect.Effect<string | undefined>
  /** How far the writer is: segments written so far, and whether it still runs (for a start's progress lines). */
  readonly progress?: () => { readonly written: number; readonly running: boolean }
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
  /** Steps generated, summed over the assets (a fresh start: `steps` per asset; a reopen: only the gaps). */
  readonly generatedSteps: number
  /** Assets read back from a kept history (the rest were generated from the genesis). */
  readonly keptAssets: number
  /** Of those, the assets whose segment another process wrote during this start (`SimulatedCryptoOptions.apart`). */
  readonly apartAssets: number
  /** Bytes of kept history read and written. */
  readonly historyBytesRead: number
  readonly historyBytesWritten: number
  /** Wall time (ms) spent reading and checking kept segments, and writing them. */
  readonly historyReadMs: number
  readonly historyWriteMs: number
}

export interface SimulatedCrypto {
  readonly simulation: Simulation
  readonly report: BackfillReport
  /** The ticker fiber (interrupted when the scope closes). */
  readonly ticker: Fiber.Fiber<never>
  /** The quote ticker fiber, with `SimulatedCryptoOptions.quotes` (interrupted when the scope closes). */
  readonly quoteTicker?: Fiber.Fiber<never>
}

/** Steps generated between two yields of a progressive start. */
const PROGRESSIVE_CHUNK_STEPS = 4096

/**
 * Steps (15-minute bars: one day) a read-back segment must lag the run's end before a start writes it again. A
 * restart within the day generates the few bars since the segment's end from its kept state (the same bars, the
 * generator being deterministic) instead of rewriting the asset's 2.4 MB; a longer gap rewrites it, so what a
 * start regenerates stays under a day an asset.
 */
export const KEPT_REWRITE_STEPS = 96

/** The genesis for a start at `nowMs` with `historyDays` of history. */
export const genesisFor = (nowMs: number, historyDays: number): number =>
  Math.floor((nowMs - historyDays * DAY_MS) / GENESIS_GRID_MS) * GENESIS_GRID_MS

/** A simulation of `options` (not yet run); its genesis is `genesisMs` when given (a kept history's). */
export const makeSimulation = (
  options: SimulatedCryptoOptions & { readonly nowMs: number; readonly genesisMs?: number }
): Simulation => {
  const genesisMs = options.genesisMs ?? genesisFor(options.nowMs, options.historyDays ?? SIMULATED_HISTORY_DAYS)
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

/** Series kinds written only for the dense window (and the bars of every listing but the primary one). */
const DENSE_KINDS: ReadonlySet<string> = new Set(["markIndex", "openInterest", "takerFlow", "bookMetrics"])

/** Rows `from..to` of a series (views, no copy). */
const sliceSeries = (s: KeptSeries, from: number, to: number): KeptSeries => {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(s))
    out[k] = v instanceof Float64Array || v instanceof Float32Array ? v.subarray(from, to) : v
  return out as unknown as KeptSeries
}

/**
 * What of a kept asset's series a start at `sim`'s clock serves: rows from `cutoffMs` on (the retention), and of
 * the dense series only the steps whose bar closes after the simulation's `denseFromMs` (as the generator
 * writes them).
 */
const keptWindow = (sim: Simulation, asset: CryptoAsset, kept: KeptAsset, cutoffMs: number) => {
  const primary = asset.listings[0]?.venue
  return kept.series.flatMap((s) => {
    const dense = DENSE_KINDS.has(s.kind) || (s.kind === "bars" && s.venue !== primary)
    // Bars and taker flow are stamped at the step's open, the other dense kinds at its close.
    const shift = s.kind === "bars" || s.kind === "takerFlow" ? BAR_MS : 0
    let from = 0
    while (
      from < s.t.length &&
      ((s.t[from] as number) < cutoffMs || (dense && (s.t[from] as number) + shift <= sim.options.denseFromMs))
    )
      from++
    return from >= s.t.length ? [] : [sliceSeries(s, from, s.t.length)]
  })
}

/** `first`'s rows then `then`'s, per (kind, venue): every row of `then` is newer than every row of `first`. */
const appendSeries = (first: ReadonlyArray<KeptSeries>, then: ReadonlyArray<KeptSeries>): Array<KeptSeries> => {
  const key = (s: KeptSeries) => `${s.kind}\u0000${s.venue}`
  const out = new Map<string, KeptSeries>()
  for (const s of [...first, ...then]) {
    const before = out.get(key(s))
    if (before === undefined) {
      out.set(key(s), s)
      continue
    }
    const merged: Record<string, unknown> = { kind: s.kind, assetId: s.assetId, venue: s.venue }
    for (const name of ["t", ...SeriesColumns[s.kind]]) {
      const a = (before as unknown as Record<string, ArrayLike<number>>)[name] as ArrayLike<number>
      const b = (s as unknown as Record<string, ArrayLike<number>>)[name] as ArrayLike<number>
      // Float32 rows read back stay float32 when the new rows are float32-exact too: the same values, half the
      // bytes copied, and the store (which narrows such a column anyway) need not check every value again.
      const col =
        a instanceof Float32Array && float32Exact(b)
          ? new Float32Array(a.length + b.length)
          : new Float64Array(a.length + b.length)
      col.set(a)
      col.set(b, a.length)
      merged[name] = col
    }
    out.set(key(s), merged as unknown as KeptSeries)
  }
  return [...out.values()]
}

const seriesRows = (series: ReadonlyArray<KeptSeries>): number => series.reduce((n, s) => n + s.t.length, 0)

/**
 * The assets that track another (`AssetProfile.peg`) and those they track, as groups: each member's index to
 * its group's members (indexes in simulation order). Such a group resumes from a kept history only as a whole
 * and from one step (a tracking asset reads its peg's path over the steps it generates).
 */
export const pegGroups = (sim: Simulation): ReadonlyMap<number, ReadonlyArray<number>> => {
  const groups = new Map<number, Array<number>>()
  const rootOf = (i: number): number => {
    const peg = sim.pegOf(i)
    const p = peg === undefined ? -1 : sim.indexOf(peg)
    return p < 0 ? i : rootOf(p)
  }
  sim.assetList.forEach((_, i) => {
    const root = rootOf(i)
    if (root !== i || sim.assetList.some((_, j) => j !== i && rootOf(j) === i)) {
      groups.set(root, [...(groups.get(root) ?? []), i])
    }
  })
  const byMember = new Map<number, ReadonlyArray<number>>()
  for (const members of groups.values()) for (const i of members) byMember.set(i, members)
  return byMember
}

/**
 * The kept assets of one peg group (`pegGroups`) a start resumes: every member when all are usable and kept at
 * one step, else none, every member then to be generated afresh with why.
 */
const planPegGroup = (
  sim: Simulation,
  history: SimulatedHistoryStore,
  steps: number,
  members: ReadonlyArray<number>,
  kept: Map<number, { asset: KeptAsset; bytes: number }>,
  fresh: Map<number, string>
) => {
  const loaded = members.map((i) => ({ i, result: loadUsable(sim, history, i, steps) }))
  const usable = loaded.flatMap(({ i, result }) => (result._tag === "Loaded" ? [{ i, ...result }] : []))
  const step = usable[0]?.asset.step
  if (usable.length === members.length && usable.every((u) => u.asset.step === step)) {
    for (const u of usable) kept.set(u.i, u)
  } else {
    for (const { i, result } of loaded) {
      fresh.set(
        i,
        result._tag === "Loaded"
          ? "an asset it tracks or that tracks it is regenerated"
          : result._tag === "Invalid"
            ? result.reason
            : "not kept"
      )
    }
  }
}

/**
 * Asset `index`'s kept history, when it is whole and can resume this run (not past its end; its state fits).
 * `scratch`: read into the history store's reused buffer (see `SimulatedHistoryStore.load`).
 */
const loadUsable = (sim: Simulation, history: SimulatedHistoryStore, index: number, steps: number, scratch = false) => {
  const result = history.load((sim.assetList[index] as CryptoAsset).id, scratch)
  if (result._tag !== "Loaded") return result
  if (result.asset.step > steps) return { _tag: "Invalid" as const, reason: "newer than now (the clock went back)" }
  if (result.asset.state.length !== sim.stateLength(index))
    return { _tag: "Invalid" as const, reason: "state does not fit" }
  return result
}

/**
 * Generates every closed bar from the genesis to `nowMs` into the store, asset by asset (each asset's arrays are
 * written in one batch per series and then dropped), logging progress. With a kept `history`, each asset whose
 * segment is usable is read back and only its steps after the kept ones are generated; every asset that changed
 * is kept again.
 */
export const backfill = (
  sim: Simulation,
  nowMs: number,
  afterAsset?: (asset: CryptoAsset) => Effect.Effect<void>,
  keptIn?: SimulatedHistoryStore,
  apartIn?: HistoryApart
): Effect.Effect<BackfillReport, never, MarketStore> =>
  Effect.gen(function* () {
    const store = yield* MarketStore
    const started = performance.now()
    const cpuStarted = process.cpuUsage()
    const steps = Math.max(0, Math.floor((nowMs - sim.openOf(sim.nextStep)) / BAR_MS))
    const run = sim.startRun(steps)
    const assets = sim.assetList
    const endStep = run.start + run.steps
    const toMs = sim.openOf(endStep)
    const cutoffMs = toMs - SIMULATED_RETENTION_DAYS * DAY_MS
    let rows = 0
    let generatedSteps = 0
    let keptAssets = 0
    let apartAssets = 0
    let historyBytesRead = 0
    let historyBytesWritten = 0
    let historyReadMs = 0
    let historyWriteMs = 0
    // A kept history covers a simulation from its genesis: a backfill that does not start there keeps nothing.
    const history = run.start === 0 ? keptIn : undefined
    const apart = history === undefined ? undefined : apartIn
    // Peg groups are planned as a whole when the first member is reached (its segments all written by then).
    const groups = history === undefined ? undefined : pegGroups(sim)
    const keptGroups = new Map<number, { asset: KeptAsset; bytes: number }>()
    const fresh = new Map<number, string>()
    const planned = new Set<ReadonlyArray<number>>()
    let apartFailure: string | undefined
    let apartWaitMs = 0
    yield* Effect.logInfo(
      `simulated crypto: backfilling ${assets.length} assets, ${steps} bars each from ${new Date(sim.openOf(run.start)).toISOString()}${history === undefined ? "" : ` (kept history in ${history.dir})`}`
    )
    for (let i = 0; i < assets.length; i++) {
      const asset = assets[i] as CryptoAsset
      let kept: KeptAsset | undefined
      if (history !== undefined && groups !== undefined) {
        const members = groups.get(i)
        if (apart?.indexes.has(i) === true) {
          // Waits (without holding the thread) for the other process to write this asset's segment, and those
          // of its whole peg group.
          const waitStarted = performance.now()
          const failure = yield* apart.ready(Math.max(i, ...(members ?? [])))
          apartWaitMs += performance.now() - waitStarted
          if (failure !== undefined && apartFailure === undefined) {
            apartFailure = failure
            yield* Effect.logWarning(
              `simulated crypto: the child process generating the kept history failed (${failure}); generating the rest in this process`
            )
          }
        }
        const readStarted = performance.now()
        if (members !== undefined && !planned.has(members)) {
          planned.add(members)
          planPegGroup(sim, history, steps, members, keptGroups, fresh)
        }
        const fromGroup = keptGroups.get(i)
        // Held only until used: the file's bytes go once the store has copied them.
        keptGroups.delete(i)
        const why = fresh.get(i)
        const result =
          fromGroup !== undefined
            ? ({ _tag: "Loaded", ...fromGroup } as const)
            : why !== undefined
              ? ({ _tag: "Invalid", reason: why } as const)
              : // Written to the store (which copies) and saved before the next asset's load: a reused buffer.
                loadUsable(sim, history, i, steps, true)
        historyReadMs += performance.now() - readStarted
        if (result._tag === "Loaded") {
          kept = result.asset
          keptAssets++
          if (apart?.indexes.has(i) === true) apartAssets++
          historyBytesRead += result.bytes
        } else if (result._tag === "Invalid") {
          yield* Effect.logWarning(
            `simulated crypto: the kept history of ${asset.id} is not used (${result.reason}); generating it from the genesis`
          )
        }
      }
      const part = sim.beginAsset(run, i, kept === undefined ? undefined : { step: kept.step, state: kept.state })
      generatedSteps += run.steps - part.k
      if (afterAsset === undefined) sim.advanceAsset(part, run.steps)
      else {
        // A progressive start answers requests meanwhile: a few thousand steps at a time (some milliseconds).
        while (!sim.advanceAsset(part, PROGRESSIVE_CHUNK_STEPS)) yield* Effect.yieldNow
      }
      const sinks = sim.endAsset(part)
      const generated = sinks.flatMap((s) => s.batches())
      const rewrite = history !== undefined && (kept === undefined || kept.step + KEPT_REWRITE_STEPS <= endStep)
      // The store takes the kept rows and the new ones as two appends (it allocates each series once for both);
      // they are joined only for a segment that is rewritten.
      const batches =
        kept === undefined
          ? generated
          : rewrite
            ? appendSeries(keptWindow(sim, asset, kept, cutoffMs), generated)
            : [...keptWindow(sim, asset, kept, cutoffMs), ...generated]
      rows += seriesRows(batches)
      yield* store.write(batches)
      // A segment that lags by less than `KEPT_REWRITE_STEPS` is not rewritten: a quick restart would otherwise
      // write every asset's whole segment again for a few new bars, which the next start regenerates anyway.
      if (history !== undefined && rewrite) {
        const writeStarted = performance.now()
        historyBytesWritten += history.save({
          assetId: asset.id,
          step: endStep,
          state: sim.assetState(i),
          series: batches
        })
        historyWriteMs += performance.now() - writeStarted
      }
      if (afterAsset !== undefined) {
        // The asset is complete: what the end of the backfill writes for every venue, written now for its own.
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
    const apartCpuMs = apart?.cpuMs()
    yield* Effect.logInfo(
      `simulated crypto: backfill done, ${rows} rows in ${Math.round(durationMs)} ms (${Math.round(cpuMs)} ms CPU; source: simulated)${history === undefined ? "" : `; ${keptAssets} of ${assets.length} assets read back from the kept history (${apartAssets} written by a child process during this start${apartCpuMs === undefined ? "" : `, ${Math.round(apartCpuMs)} ms of its CPU`}${apart === undefined ? "" : `; ${Math.round(apartWaitMs)} ms waited for it`}) in ${Math.round(historyReadMs)} ms, ${generatedSteps} asset-steps generated`}`
    )
    return {
      fromMs: sim.openOf(run.start),
      toMs,
      steps,
      assets: assets.length,
      listings: sim.venues.length,
      rows,
      durationMs,
      cpuMs,
      generatedSteps,
      keptAssets,
      apartAssets,
      historyBytesRead,
      historyBytesWritten,
      historyReadMs: Math.round(historyReadMs),
      historyWriteMs: Math.round(historyWriteMs)
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

/** What names the kept history of `options`' simulation: it is reused only by the same generator, seed and universe. */
export const keptHistoryIdentity = (options: SimulatedCryptoOptions): HistoryIdentity => {
  const assets = options.assets ?? pricedAssets()
  const profiles = options.profiles ?? AssetProfiles
  return {
    generator: SIMULATED_CRYPTO_VERSION,
    seed: String(options.seed),
    universe: universeDigest({
      assets: assets.map((a) => ({ id: a.id, listings: a.listings, profile: profiles[a.id] })),
      venues: VenueProfiles,
      historyDays: options.historyDays ?? SIMULATED_HISTORY_DAYS,
      denseHistoryDays: options.denseHistoryDays ?? SIMULATED_DENSE_HISTORY_DAYS
    })
  }
}

/**
 * Begins the kept history in `history` for a start of `options` at `nowMs` (`SimulatedHistoryStore.begin`): the
 * kept one when it is this simulation's and recent enough, else a new one (every old segment deleted, with a log
 * line). Answers its identity and genesis. Idempotent: a second call in the same start keeps what the first began.
 */
export const beginKeptHistory = (
  history: SimulatedHistoryStore,
  options: SimulatedCryptoOptions,
  nowMs: number
): Effect.Effect<{ readonly identity: HistoryIdentity; readonly genesisMs: number; readonly kept: boolean }> =>
  Effect.gen(function* () {
    const historyDays = options.historyDays ?? SIMULATED_HISTORY_DAYS
    const genesisMs = genesisFor(nowMs, historyDays)
    const identity = keptHistoryIdentity(options)
    // A kept history is extended while its genesis is at most two history spans back (its oldest rows past the
    // retention are dropped as it is read); older, a fresh year costs less than the gap would.
    const begun = history.begin(
      identity,
      genesisMs,
      (kept) => kept <= genesisMs && nowMs - kept <= 2 * historyDays * DAY_MS
    )
    if (!begun.kept) {
      yield* Effect.logInfo(
        `simulated crypto: starting a new kept history in ${history.dir} (${begun.reason ?? "new"})`
      )
    }
    return { identity, genesisMs: begun.genesisMs, kept: begun.kept }
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
    const genesisMs =
      options.history === undefined
        ? genesisFor(nowMs, options.historyDays ?? SIMULATED_HISTORY_DAYS)
        : (yield* beginKeptHistory(options.history, options, nowMs)).genesisMs
    const simulation = makeSimulation({ ...options, nowMs, genesisMs })
    const board = options.quotes
    const stream = board === undefined ? undefined : options.stream
    stream?.attach(simulation)
    // Streams what is generated at the clock's tick (only asset `assetIndex`, when given), as the quote ticker does.
    const streamNow = (assetIndex?: number) =>
      Effect.gen(function* () {
        if (board === undefined) return
        const now = yield* Clock.currentTimeMillis
        const atMs = quoteTickOf(now)
        streamTick(simulation, board, atMs, nowMs, now, assetIndex)
        stream?.advance(formingTimeOf(atMs))
      })
    // Started first: a progressive start's assets stream from the moment each is generated, and go on streaming.
    const quoteTicker =
      board === undefined
        ? undefined
        : yield* Effect.forkScoped(runQuoteTicker(simulation, board, stream, { sinceMs: nowMs }))
    const afterAsset = options.afterAsset
    const report = yield* backfill(
      simulation,
      nowMs,
      afterAsset === undefined
        ? undefined
        : (asset) => Effect.andThen(streamNow(simulation.indexOf(asset.id)), afterAsset(asset)),
      options.history,
      options.apart
    )
    // The whole market streamed before this returns, whenever the quote ticker's fiber next runs.
    yield* streamNow()
    const ticker = yield* Effect.forkScoped(runTicker(simulation))
    return { simulation, report, ticker, ...(quoteTicker === undefined ? {} : { quoteTicker }) }
  })
