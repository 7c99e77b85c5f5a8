/**
 * The simulated market's sub-second stream: the same ingest interface the venue streams use (`QuoteBoard.ts` in
 * the core), so freshness, `as_of` and status behave alike in both modes and the embedded default is what
 * production is.
 *
 * - The quote ticker (`runQuoteTicker`), every `QUOTE_TICK_MS` of Effect's `Clock` (so `TestClock` drives it),
 *   applies every simulated listing's top of book (`applyQuote`: best bid and ask with their sizes, the first
 *   level of the book stored at the venue's cadence for the same instant) and, for a perpetual, its ticker
 *   (`applyTicker`: mark, index, funding rate, predicted rate, next funding, open interest), and reports each
 *   venue's stream up (`setHealth`: `books` and, where it lists perpetuals, `fundingState`; newest event time the
 *   tick's). Between two 15-minute closes the price follows a Brownian bridge toward the next close
 *   (`Simulation.momentOf`), deterministic from the seed and the instant, so an instant reads the same whichever
 *   ticks ran before.
 * - The bar still forming (`SimulatedStream.bar`), as the live venues' forming-bar job writes it: refreshed
 *   every minute, served in front of the stored bars (`withSimulatedStream`) without writing to the store (the
 *   memory store would rewrite a year-long series for each replaced row). As in live mode it moves the end of
 *   the asset's data, and with it `as_of`, with the clock.
 *
 * Cost, measured: a tick of the whole 428-asset market (1,163 listings) takes about 1 ms of CPU, so 4 Hz costs
 * well under 1 % of a core; every asset ticks every 250 ms (no tiers, no rotation). While nobody reads the
 * streamed state for a minute the ticker idles at one tick per 2.5 s (an idle embedded process, or a test clock
 * run through a day, does not pay for 345,600 ticks a day that nobody sees). See docs/performance.md.
 */
import {
  type Component,
  type MarketStore,
  type QuoteBoard,
  type RangeQuery,
  type Series,
  type SeriesExtent,
  type SeriesKind,
  type SourceStatus,
  withQuoteBoard
} from "@market-data/core"
import { Clock, Effect } from "effect"
import type { Simulation } from "./Engine.ts"

/** The quote ticker's cadence (ms). */
export const QUOTE_TICK_MS = 250

/** The quote ticker ticks at its full pace while the streamed state was read within this (ms)... */
export const ACTIVE_MS = 60_000
/** ...and otherwise this often (ms): half the stream's status cadence. */
export const IDLE_TICK_MS = 2_500

/** How often the bars still forming are refreshed (ms): as the live venues' forming-bar job. */
export const FORMING_EVERY_MS = 60_000

/** The forming bars' refresh time for a stream time: the latest whole minute. */
export const formingTimeOf = (atMs: number): number => Math.floor(atMs / FORMING_EVERY_MS) * FORMING_EVERY_MS

/** One bar still forming (`t` its open time), values rounded as the stored bars'. */
export interface FormingBar {
  readonly t: number
  readonly open: number
  readonly high: number
  readonly low: number
  readonly close: number
  readonly volume: number
}

/**
 * What the quote ticker shares with the store the plane reads (`withSimulatedStream`): the bars still forming, as
 * of the latest whole minute the ticker reached, and whether the plane has read the stream lately.
 */
export interface SimulatedStream {
  /** Sets the simulation whose bars form (the feed does, once it made it). */
  readonly attach: (sim: Simulation) => void
  /** Moves the bars still forming to `atMs` (a refresh time); a new time changes `version`. */
  readonly advance: (atMs: number) => void
  /** The bar forming on `venue` for `assetId` (undefined: none, or before the first refresh). */
  readonly bar: (assetId: string, venue: string) => FormingBar | undefined
  /** The venues an asset is simulated on. */
  readonly venuesOf: (assetId: string) => ReadonlyArray<string>
  /** Changes with every refresh of the bars still forming. */
  readonly version: () => number
  /** Records a read of the streamed state (books, funding states, statuses). */
  readonly touch: () => void
  /** Whether the streamed state was read since the last call (and clears it). */
  readonly takeTouched: () => boolean
}

export const makeSimulatedStream = (): SimulatedStream => {
  let sim: Simulation | undefined
  let atMs = 0
  let version = 0
  let touched = false
  // Computed once per listing, refresh and step of the simulation.
  const cache = new Map<string, { atMs: number; steps: number; bar: FormingBar }>()
  return {
    attach: (s) => {
      sim = s
      cache.clear()
      version++
    },
    advance: (ms) => {
      if (ms === atMs) return
      atMs = ms
      version++
    },
    bar: (assetId, venue) => {
      if (sim === undefined || atMs === 0) return undefined
      const key = `${assetId}\u0000${venue}`
      const hit = cache.get(key)
      if (hit !== undefined && hit.atMs === atMs && hit.steps === sim.stepsDrawn) return hit.bar
      const bar = sim.formingBar(assetId, venue, atMs)
      // None yet (an asset a progressive start is still generating) is asked again next time.
      if (bar !== undefined) cache.set(key, { atMs, steps: sim.stepsDrawn, bar })
      return bar
    },
    venuesOf: (assetId) => sim?.venuesOfAsset(assetId) ?? [],
    version: () => version,
    touch: () => {
      touched = true
    },
    takeTouched: () => {
      const was = touched
      touched = false
      return was
    }
  }
}

const streams = new WeakMap<Simulation, ReadonlyMap<string, ReadonlyArray<Component>>>()
/** The venues a simulation lists on, with the components their simulated stream carries. */
const streamsOf = (sim: Simulation): ReadonlyMap<string, ReadonlyArray<Component>> => {
  const known = streams.get(sim)
  if (known !== undefined) return known
  const out = new Map<string, ReadonlyArray<Component>>()
  for (const v of sim.venues) {
    const perp = out.get(v.listing.venue)?.includes("fundingState") === true || v.perp
    out.set(v.listing.venue, perp ? ["books", "fundingState"] : ["books"])
  }
  streams.set(sim, out)
  return out
}

/** The stream's time for a clock reading: the latest tick of the quote grid. */
export const quoteTickOf = (nowMs: number, everyMs = QUOTE_TICK_MS): number => Math.floor(nowMs / everyMs) * everyMs

/**
 * One tick of the stream at `atMs` (`nowMs` the clock): every generated listing's quote and ticker (only asset
 * `assetIndex`'s when given: a progressive start streams each asset as soon as it is generated), then the health
 * of the venues streamed (`sinceMs`: when the stream started).
 */
export const streamTick = (
  sim: Simulation,
  board: QuoteBoard,
  atMs: number,
  sinceMs: number,
  nowMs = atMs,
  assetIndex?: number
) => {
  sim.streamQuotes(
    atMs,
    (assetId, venue, quote, ticker) => {
      board.applyQuote(assetId, venue, quote)
      if (ticker !== undefined) board.applyTicker(assetId, venue, ticker)
    },
    assetIndex === undefined ? undefined : (i) => i === assetIndex
  )
  const venues = assetIndex === undefined ? undefined : new Set(sim.venuesOfAsset(sim.assetList[assetIndex]?.id ?? ""))
  for (const [venue, components] of streamsOf(sim)) {
    if (venues !== undefined && !venues.has(venue)) continue
    board.setHealth(venue, {
      components,
      up: true,
      newestMs: atMs,
      lastFrameMs: nowMs,
      sinceMs,
      updateEveryMs: QUOTE_TICK_MS
    })
  }
}

/**
 * Runs forever: every `everyMs` of the `Clock` (on its grid: ticks at multiples of `everyMs`), streams the
 * simulated market into `board` (`streamTick`) and, on each whole minute, refreshes the bars still forming.
 * Assets a progressive start has not generated yet are left out until they are. With `stream`, the ticker idles
 * while nobody reads: after `ACTIVE_MS` without a read of the streamed state (`SimulatedStream.touch`) it ticks
 * every `IDLE_TICK_MS` instead (well inside the stream's 5 s status cadence, so statuses stay `live`), and back
 * at `everyMs` from the tick after the next read. A tick late by several periods (a paused process) is one tick,
 * at the latest grid time.
 */
export const runQuoteTicker = (
  sim: Simulation,
  board: QuoteBoard,
  stream?: SimulatedStream,
  options: { readonly everyMs?: number; readonly sinceMs?: number } = {}
): Effect.Effect<never> =>
  Effect.gen(function* () {
    const everyMs = options.everyMs ?? QUOTE_TICK_MS
    const started = yield* Clock.currentTimeMillis
    const sinceMs = options.sinceMs ?? started
    let due = quoteTickOf(started, everyMs)
    let activeUntil = started + ACTIVE_MS
    while (true) {
      const now = yield* Clock.currentTimeMillis
      if (now < due) {
        yield* Effect.sleep(due - now)
        continue
      }
      const atMs = quoteTickOf(now, everyMs)
      streamTick(sim, board, atMs, sinceMs, now)
      stream?.advance(formingTimeOf(atMs))
      if (stream === undefined || stream.takeTouched()) activeUntil = atMs + ACTIVE_MS
      due = atMs < activeUntil ? atMs + everyMs : (Math.floor(atMs / IDLE_TICK_MS) + 1) * IDLE_TICK_MS
    }
  })

/** `series` of one bars read with each venue's forming bar added where `within` its time and newer than the rest. */
const withForming = (
  series: ReadonlyArray<Series<"bars">>,
  assetId: string,
  venues: ReadonlyArray<string>,
  stream: SimulatedStream,
  within: (t: number) => boolean,
  keep = Number.POSITIVE_INFINITY
): ReadonlyArray<Series<"bars">> => {
  let out: Array<Series<"bars">> | undefined
  for (const venue of venues) {
    const bar = stream.bar(assetId, venue)
    if (bar === undefined || !within(bar.t)) continue
    const i = series.findIndex((s) => s.venue === venue)
    const s = series[i]
    const n = s?.t.length ?? 0
    if (s !== undefined && n > 0 && (s.t[n - 1] as number) >= bar.t) continue
    // The newest `keep` rows: the forming one last.
    const from = Math.max(0, n + 1 - keep)
    const column = (stored: Float64Array | undefined, value: number) => {
      const c = new Float64Array(n - from + 1)
      if (stored !== undefined) c.set(stored.subarray(from, n))
      c[n - from] = value
      return c
    }
    const row: Series<"bars"> = {
      kind: "bars",
      assetId,
      venue,
      t: column(s?.t, bar.t),
      open: column(s?.open, bar.open),
      high: column(s?.high, bar.high),
      low: column(s?.low, bar.low),
      close: column(s?.close, bar.close),
      volume: column(s?.volume, bar.volume)
    }
    out ??= [...series]
    if (i < 0) out.push(row)
    else out[out.indexOf(s as Series<"bars">)] = row
  }
  if (out === undefined) return series
  return out.sort((a, b) => (a.venue < b.venue ? -1 : a.venue > b.venue ? 1 : 0))
}

/** `store` with the bars still forming (`stream.bar`) in front of its bars; writes go to `store` unchanged. */
export const withFormingBars = (store: MarketStore["Service"], stream: SimulatedStream): MarketStore["Service"] => {
  const venuesFor = (assetId: string, venue: string | undefined) =>
    venue === undefined ? stream.venuesOf(assetId) : stream.venuesOf(assetId).filter((v) => v === venue)
  const read = <K extends SeriesKind>(kind: K, query: RangeQuery): Effect.Effect<ReadonlyArray<Series<K>>> => {
    if (kind !== "bars") return store.read(kind, query)
    const within = (t: number) => t >= query.fromMs && t < query.toMs
    return Effect.map(store.read("bars", query), (series) =>
      withForming(series, query.assetId, venuesFor(query.assetId, query.venue), stream, within)
    ) as unknown as Effect.Effect<ReadonlyArray<Series<K>>>
  }
  const latest = <K extends SeriesKind>(
    kind: K,
    query: { readonly assetId: string; readonly venue?: string; readonly n: number; readonly atMs?: number }
  ): Effect.Effect<ReadonlyArray<Series<K>>> => {
    if (kind !== "bars") return store.latest(kind, query)
    const within = (t: number) => query.n > 0 && (query.atMs === undefined || t <= query.atMs)
    return Effect.map(store.latest("bars", query), (series) =>
      withForming(series, query.assetId, venuesFor(query.assetId, query.venue), stream, within, query.n)
    ) as unknown as Effect.Effect<ReadonlyArray<Series<K>>>
  }
  const extent = (kind: SeriesKind, assetId: string) =>
    kind !== "bars"
      ? store.extent(kind, assetId)
      : Effect.map(store.extent("bars", assetId), (extents) => {
          let out: Array<SeriesExtent> | undefined
          for (const venue of stream.venuesOf(assetId)) {
            const bar = stream.bar(assetId, venue)
            if (bar === undefined) continue
            const i = extents.findIndex((e) => e.venue === venue)
            const e = extents[i]
            if (e !== undefined && e.lastMs >= bar.t) continue
            out ??= [...extents]
            if (e === undefined) out.push({ venue, firstMs: bar.t, lastMs: bar.t, count: 1 })
            else out[i] = { ...e, lastMs: bar.t, count: e.count + 1 }
          }
          if (out === undefined) return extents
          return out.sort((a, b) => (a.venue < b.venue ? -1 : a.venue > b.venue ? 1 : 0))
        })
  const revision = store.revision
  const seriesRevision = store.seriesRevision
  return {
    ...store,
    read,
    latest,
    extent,
    ...(revision === undefined ? {} : { revision: () => revision() + stream.version() }),
    ...(seriesRevision === undefined
      ? {}
      : { seriesRevision: (assetId: string) => seriesRevision(assetId) + stream.version() })
  }
}

/**
 * The store the simulated crypto plane reads: `store` with the bars still forming in front of its bars
 * (`withFormingBars`) and the stream's quotes, tickers and statuses in front of its books, funding states and
 * statuses (`withQuoteBoard`, the live streams' decorator). The streamed components' statuses say
 * `source: "simulated"` like every other status of the simulated feed (the board's overlay writes `live`, the
 * live streams' source), so simulated data never passes for live data.
 */
export const withSimulatedStream = (
  store: MarketStore["Service"],
  board: QuoteBoard,
  stream: SimulatedStream
): MarketStore["Service"] => {
  const served = withQuoteBoard(withFormingBars(store, stream), board)
  // Reads of the streamed state keep the quote ticker at its full pace.
  const touched = Effect.sync(() => stream.touch())
  let cache: { from: ReadonlyArray<SourceStatus>; value: ReadonlyArray<SourceStatus> } | undefined
  const status = Effect.map(Effect.andThen(touched, served.status), (all) => {
    if (cache !== undefined && cache.from === all) return cache.value
    const value = all.some((s) => s.source !== "simulated")
      ? all.map((s) => (s.source === "simulated" ? s : { ...s, source: "simulated" as const }))
      : all
    cache = { from: all, value }
    return value
  })
  return {
    ...served,
    status,
    books: (assetId, venue) => Effect.andThen(touched, served.books(assetId, venue)),
    fundingStates: (assetId, venue) => Effect.andThen(touched, served.fundingStates(assetId, venue))
  }
}
