/**
 * The live crypto feed of one venue: jobs that fill the `MarketStore` from a `VenueConnector` and keep each
 * component's `SourceStatus` (`source: "live"`) honest, so freshness reads `live`, `delayed` or `stale`.
 *
 * Jobs and cadences (each resumes from the store's own extent, so its first run is the backfill):
 * | job | components | cadence |
 * |---|---|---|
 * | listings | (instruments, symbol mapping) | 1 h |
 * | closed bars | the closed bar as the kline stream sent it (`x: true`, `confirm: true`), where the venue streams klines | 15 min, 1 s after the close, waiting up to 15 s |
 * | bars | `bars` (+ `takerFlow` where klines carry it): history, and the closed bars the stream did not deliver | 15 min, 2 s after the close (17 s where the stream delivers them) |
 * | forming bar | the bar still forming, rewritten until it closes (`bars`, and `takerFlow` on Binance) | 1 min (Hyperliquid 3 min) |
 * | funding | `funding` (settlements) | 1 h, 30 s after the hour |
 * | tickers | `markIndex`, `openInterest`, `fundingState` (+ open-interest history backfill) | 15 min, at +8 s |
 * | books | `books` every minute (at +30 s), `bookMetrics` once per 15-minute bucket | 1 min |
 * | taker flow | `takerFlow` where published apart from klines (OKX) | 15 min |
 * | liquidations | `liquidations` where published over REST (OKX) | 5 min |
 *
 * Binance's, Bybit's and OKX's liquidations come over websockets, outside these jobs (`stream/Liquidation.ts`, run
 * beside the feeds by `LiveFeeds.ts`); OKX's REST poll stays as their backfill and fallback, writing the same
 * one-minute rows (each side the larger count).
 *
 * Failures: a run that fails as a whole (the venue unreachable, 429/418/5xx, a timeout, a body that is not the
 * documented format) marks its components `failing` (freshness `stale`), keeps their newest time, stores nothing
 * of that answer, and is retried with exponential backoff honouring `Retry-After`; the next successful run clears
 * the flag. One instrument failing (a venue dropping a symbol) does not fail the run: the others are stored and
 * the status names the missing ones in `detail`; that asset's own bars age, which its freshness shows. Each
 * status also keeps when the component last succeeded and, while it fails, the error text (`Health.ts`). A 429,
 * 418, 403 or 451 stops the run at once, so a venue that limits or refuses us is not hammered.
 */
import {
  type AnySeriesInput,
  BAR_MS,
  type BookSnapshot,
  bookMetricsOf,
  type Component,
  type CryptoAsset,
  CryptoAssets,
  CryptoVenues,
  HOUR_MS,
  MarketStore,
  type SeriesKind
} from "@market-data/core"
import { Clock, Effect } from "effect"
import { recordFailure, recordSuccess, sourceErrorText } from "./Health.ts"
import { SourceError } from "./Http.ts"
import { backoffSchedule, pollSchedule } from "./Schedules.ts"
import {
  type BarRow,
  type Instrument,
  instrumentsOf,
  type LiquidationRow,
  type Page,
  type VenueConnector
} from "./Venue.ts"

export interface CryptoFeedOptions {
  /** Days of 15-minute history fetched at first start (bars, taker flow). */
  readonly backfillDays: number
  /** Days of funding settlements fetched at first start (the funding `pctl_1y` needs a year). */
  readonly fundingBackfillDays: number
  /** Canonical assets to ingest; default: every registry asset listed on the venue. */
  readonly assetIds?: ReadonlyArray<string>
  /** Random delay added to each poll (ms). */
  readonly jitterMs: number
  /**
   * The assets whose listings the feed ingests, read at each listings refresh: live mode's asset directory
   * universe (`UniverseRef`). Default: the hand-written registry.
   */
  readonly universe?: () => ReadonlyArray<CryptoAsset>
  /**
   * Where the venue's market stream runs (`stream/MarketStream.ts`): whether it serves an asset's top of book now.
   * The books job then polls, each minute, only the instruments it does not serve (stream down, symbol refused or
   * silent), and every book once per 15-minute bucket for the depth behind the top and the book metrics.
   */
  readonly streamed?: (assetId: string) => boolean
  /**
   * Where the venue streams klines: the forming bar opening at `slotMs` as the stream last sent it (undefined: not
   * streamed now). The forming-bar job writes it instead of asking REST for it.
   */
  readonly streamedBar?: (assetId: string, slotMs: number) => BarRow | undefined
  /**
   * Where the venue streams klines and marks the closed bar (Binance `x: true`, Bybit `confirm: true`): the bar
   * opening at `slotMs` as the stream sent it closed (undefined: not received). At each close the closed-bars job
   * stores it, and the bars job asks REST only for the bars the stream missed.
   */
  readonly streamedClosedBar?: (assetId: string, slotMs: number) => BarRow | undefined
  /**
   * Where the venue streams: the streamed top of book of an asset now (undefined: not streamed), which every REST
   * book of a depth run is reconciled against (`reconcileBook`); mismatches are logged and counted in the `rest`
   * status.
   */
  readonly streamedQuote?: (assetId: string) => { readonly bid: number; readonly ask: number } | undefined
}

/**
 * Whether a REST book agrees with the streamed top of book read at about the same moment: their mids within five
 * streamed spreads or 0.5 % of each other, whichever is wider (books move between the two reads; a stream that
 * froze or a symbol mapped to another instrument does not stay that close). Undefined: nothing to compare.
 */
export const reconcileBook = (
  rest: BookSnapshot,
  streamed: { readonly bid: number; readonly ask: number } | undefined
): "match" | "mismatch" | undefined => {
  const bid = rest.bids[0]?.[0]
  const ask = rest.asks[0]?.[0]
  if (streamed === undefined || bid === undefined || ask === undefined) return undefined
  const restMid = (bid + ask) / 2
  const streamedMid = (streamed.bid + streamed.ask) / 2
  const tolerance = Math.max(5 * (streamed.ask - streamed.bid), 0.005 * streamedMid)
  return Math.abs(restMid - streamedMid) <= tolerance ? "match" : "mismatch"
}

const DAY_MS = 24 * HOUR_MS
const MINUTE_MS = 60_000
/** Open-interest and taker-volume history endpoints keep about 30 days; asking for 29 stays inside. */
const OI_HISTORY_DAYS = 29
/** The share of a venue's request budget the books job plans its cycle with (`booksEveryMs`). */
const BOOKS_BUDGET_SHARE = 0.5
/** The bars the start fetches first for each instrument without any (`runRecentBars`): a day. */
const RECENT_BARS_MS = DAY_MS
/**
 * How long after a close the closed-bars job waits for the stream's closed bars (a venue sends the closing kline
 * with the first trade of the next bar or at the close; a quiet symbol later), and when the bars job then asks REST
 * for what did not come.
 */
export const CLOSED_BAR_WAIT_MS = 15_000
/** How often the closed-bars job looks for closed bars still to come during that wait. */
const CLOSED_BAR_POLL_MS = 500

/** Cadence of a component's updates, as its status reports it. */
export const componentCadenceMs = (venue: string, component: Component): number => {
  switch (component) {
    case "funding":
      return CryptoVenues.find((v) => v.id === venue)?.fundingIntervalMs ?? 8 * HOUR_MS
    case "books":
      return MINUTE_MS
    case "liquidations":
      return 5 * MINUTE_MS
    default:
      return BAR_MS
  }
}

/** A run's outcome per component: the newest data time and the instruments that failed. */
interface Progress {
  newestMs: number
  readonly failed: Array<string>
  ok: number
  firstError: SourceError | undefined
}

/**
 * Answers that stop a run at once instead of trying the next instrument: rate limits (429; Binance's 418 ban),
 * and refusals of the client as a whole (403, Bybit's IP limit and web firewalls; 451, a restricted location).
 */
const fatal = (e: SourceError) =>
  e.kind === "status" && (e.status === 429 || e.status === 418 || e.status === 403 || e.status === 451)

/** Columns of rows as a series input. */
const series = <K extends SeriesKind, R extends { readonly t: number }>(
  kind: K,
  assetId: string,
  venue: string,
  rows: ReadonlyArray<R>,
  columns: ReadonlyArray<string>
): AnySeriesInput => {
  const out: Record<string, unknown> = { kind, assetId, venue, t: rows.map((r) => r.t) }
  for (const c of columns) out[c] = rows.map((r) => (r as unknown as Record<string, number>)[c])
  return out as unknown as AnySeriesInput
}

export const makeCryptoFeed = (connector: VenueConnector, options: CryptoFeedOptions) =>
  Effect.gen(function* () {
    const store = yield* MarketStore
    const venue = connector.venue
    let instruments: ReadonlyArray<Instrument> = []
    let missing: ReadonlyArray<string> = []

    /**
     * How often the books job runs: every minute while the venue's budget allows (a minute's books within half its
     * request rate, the rest left to bars, forming bars, tickers and funding), else every as many minutes as a
     * cycle of every instrument's book needs at that share (550 Binance perpetuals at weight 5: 6 minutes). Polling
     * faster could only queue behind the limiter and leave each cycle's books older than its cadence says.
     */
    const booksEveryMs = (): number => {
      const perMinute = ((connector.limiter.capacity * MINUTE_MS) / connector.limiter.windowMs) * BOOKS_BUDGET_SHARE
      const streamed = options.streamed
      const polled =
        streamed === undefined ? instruments.length : instruments.filter((i) => !streamed(i.assetId)).length
      return Math.max(1, Math.ceil((polled * (connector.bookWeight ?? 1)) / perMinute)) * MINUTE_MS
    }
    /** When the newest books run started, and its newest fetch (so far). */
    const booksRun = { startMs: 0, lastFetchMs: 0 }
    /**
     * The books status's cadence, as the runs measure it. The status's newest time is a run's start (every book of
     * the run is at least that new), and the next run's last book can come a cycle plus two runs' durations later.
     * So: a minute while a run takes seconds (as with a few dozen instruments), else the cycle plus twice the last
     * run's duration, in whole minutes. A run slowed by other jobs (the first hour's backfill shares the limiter)
     * lengthens the cadence the status gives, instead of reading `stale` while every book keeps coming.
     */
    const booksCadenceMs = (): number => {
      const every = booksEveryMs()
      const tookMs = Math.max(0, booksRun.lastFetchMs - booksRun.startMs)
      if (every <= MINUTE_MS && tookMs <= 15_000) return MINUTE_MS
      return Math.ceil((every + 2 * tookMs) / MINUTE_MS) * MINUTE_MS
    }
    const ref = (component: Component) => ({
      venue,
      component,
      cadenceMs: component === "books" ? booksCadenceMs() : componentCadenceMs(venue, component)
    })

    /** Marks components failing: newest time and last success kept, the error kept as `lastError`. */
    const markFailing = (components: ReadonlyArray<Component>, e: SourceError) =>
      Effect.gen(function* () {
        for (const c of components) yield* recordFailure(store, ref(c), sourceErrorText(e))
        yield* Effect.logWarning(`live ${venue}: ${components.join(", ")} failing: ${e.kind} ${e.what}: ${e.message}`)
      })

    /** Marks components fresh up to `newestMs` (keeping a newer stored time), naming failed instruments. */
    const markOk = (components: ReadonlyArray<Component>, p: Progress) =>
      Effect.gen(function* () {
        const problems = [...p.failed, ...missing.map((s) => `${s} (not listed)`)]
        for (const c of components) {
          yield* recordSuccess(store, ref(c), {
            newestMs: p.newestMs,
            detail: problems.length === 0 ? undefined : `no data for ${problems.join(", ")}`
          })
        }
      })

    const progress = (): Progress => ({ newestMs: 0, failed: [], ok: 0, firstError: undefined })

    /** The assets whose primary venue (the one their bars and price come from) is this one. */
    let primaryHere: ReadonlySet<string> = new Set()
    /** Open interest (USD) of each asset on this venue from the newest tickers: what "busiest" means below. */
    const activity = new Map<string, number>()
    /**
     * The instruments, those with the most open interest first (listing order among equals, and before the first
     * tickers): every per-instrument job, so the history that fills in behind the quotes reaches the busiest assets
     * first (DECISIONS, whole-market start-up).
     */
    const busiestFirst = (): ReadonlyArray<Instrument> =>
      activity.size === 0
        ? instruments
        : [...instruments].sort((a, b) => (activity.get(b.assetId) ?? 0) - (activity.get(a.assetId) ?? 0))

    /**
     * Runs `perInstrument` over every instrument; a fatal error (rate limit) stops at once, and a run in which no
     * instrument succeeded fails with the first error.
     */
    const eachInstrument = (
      components: ReadonlyArray<Component>,
      perInstrument: (i: Instrument, p: Progress) => Effect.Effect<void, SourceError>,
      only?: (i: Instrument) => Effect.Effect<boolean>,
      order: () => ReadonlyArray<Instrument> = busiestFirst
    ) =>
      Effect.gen(function* () {
        if (instruments.length === 0) yield* refreshListings
        const p = progress()
        for (const i of order()) {
          if (only !== undefined && !(yield* only(i))) continue
          const result = yield* Effect.result(perInstrument(i, p))
          if (result._tag === "Failure") {
            const e = result.failure
            if (fatal(e)) return yield* Effect.fail(e)
            p.failed.push(`${i.symbol} (${e.kind})`)
            p.firstError ??= e
          } else p.ok++
        }
        if (p.ok === 0 && p.firstError !== undefined) return yield* Effect.fail(p.firstError)
        yield* markOk(components, p)
      })

    /** Pages forward from `fromMs` to `toMs`, writing each page; returns the newest row time seen. */
    const pageForward = <R extends { readonly t: number }>(
      fromMs: number,
      toMs: number,
      fetchPage: (from: number, to: number) => Effect.Effect<Page<R>, SourceError>,
      write: (rows: ReadonlyArray<R>) => Effect.Effect<void>
    ) =>
      Effect.gen(function* () {
        let from = fromMs
        let newest = 0
        while (from < toMs) {
          const page = yield* fetchPage(from, toMs)
          const last = page.rows[page.rows.length - 1]
          if (last !== undefined) {
            yield* write(page.rows)
            newest = Math.max(newest, last.t)
          }
          // A page that does not advance ends the walk (never loop on a venue that repeats itself).
          if (page.nextMs <= from) break
          from = page.nextMs
        }
        return newest
      })

    /** This venue's stored extent of a series of an asset, or undefined. */
    const storedExtent = (kind: SeriesKind, assetId: string) =>
      Effect.map(store.extent(kind, assetId), (extents) => extents.find((e) => e.venue === venue))
    const lastStoredMs = (kind: SeriesKind, assetId: string) =>
      Effect.map(storedExtent(kind, assetId), (e) => e?.lastMs)

    // -- listings --------------------------------------------------------------------------------------------
    const refreshListings: Effect.Effect<void, SourceError> = Effect.gen(function* () {
      const listed = yield* connector.listings
      const universe = options.universe?.() ?? CryptoAssets
      const next = instrumentsOf(venue, listed, options.assetIds, universe)
      // The crypto plane's primary venue of an asset is its first listing's (`primaryVenue` in its state).
      primaryHere = new Set(universe.filter((a) => a.listings[0]?.venue === venue).map((a) => a.id))
      instruments = next.instruments
      missing = next.missing
      if (missing.length > 0) yield* Effect.logWarning(`live ${venue}: not listed now: ${missing.join(", ")}`)
    })

    // -- bars (+ taker flow from klines) ------------------------------------------------------------------------
    const barComponents: ReadonlyArray<Component> = connector.klinesCarryTakerFlow ? ["bars", "takerFlow"] : ["bars"]
    const writeBars = (i: Instrument, rows: ReadonlyArray<BarRow>) => {
      const batch: Array<AnySeriesInput> = [
        series("bars", i.assetId, venue, rows, ["open", "high", "low", "close", "volume"])
      ]
      if (connector.klinesCarryTakerFlow) {
        const flow = rows.map((r) => ({ t: r.t, buyUsd: r.takerBuyUsd ?? 0, sellUsd: r.takerSellUsd ?? 0 }))
        batch.push(series("takerFlow", i.assetId, venue, flow, ["buyUsd", "sellUsd"]))
      }
      return store.write(batch)
    }
    /** Instruments whose closed bars this process has fetched (the forming bar is written only after that). */
    const barsReady = new Set<string>()
    /**
     * Per instrument, the open time of the newest bar this process knows is stored final, with every bar before it
     * back to the first fetched (a REST fetch of closed bars, or the stream's closed bar next to one): the bars job
     * asks REST from the bar after it, so a bar stored while forming is fetched again once closed.
     */
    const finalMs = new Map<string, number>()
    const noteFinal = (assetId: string, t: number) => {
      if (t > (finalMs.get(assetId) ?? Number.NEGATIVE_INFINITY)) finalMs.set(assetId, t)
    }
    /** Instruments whose bars this process has fetched back to the backfill's start (behind what was stored). */
    const barsBackfilled = new Set<string>()

    /**
     * Two passes, so that a close is never queued behind history: first every instrument's bars forward from the
     * newest one stored (or known final) to now, one request each where the stream stored the closed bars it
     * missed; then, once per process, the history behind the first stored bar (the day the start fetched first,
     * `runRecentBars`, or a listing younger than the window: one request), busiest first. Before, each instrument's
     * history came before the next instrument's closed bar, so after a close early in a start the assets late in the
     * order read `delayed` for minutes on a venue with a small REST budget (Hyperliquid's ~30 candle requests a
     * minute).
     */
    const runBars = Effect.gen(function* () {
      const nowMs = yield* Clock.currentTimeMillis
      const toMs = Math.floor(nowMs / BAR_MS) * BAR_MS
      const backfillFrom = toMs - options.backfillDays * DAY_MS
      const fetch = (i: Instrument, fromMs: number, untilMs: number) =>
        pageForward(
          fromMs,
          untilMs,
          (from, to) => connector.bars(i, from, to),
          (rows) => writeBars(i, rows)
        )
      yield* eachInstrument(barComponents, (i, p) =>
        Effect.gen(function* () {
          const extent = yield* storedExtent("bars", i.assetId)
          // Every closed bar is stored final (the stream's closed bars, `runClosedBars`): nothing to ask REST for.
          if (extent !== undefined && (finalMs.get(i.assetId) ?? Number.NEGATIVE_INFINITY) >= toMs - BAR_MS) {
            p.newestMs = Math.max(p.newestMs, Math.min(nowMs, extent.lastMs + BAR_MS))
            return
          }
          let newest = 0
          if (extent === undefined) {
            newest = yield* fetch(i, backfillFrom, toMs)
            barsBackfilled.add(i.assetId)
          } else {
            // Forward from the newest stored bar itself (it may have been stored while still forming), or from the
            // first bar not known final, where that is older (bars the forming job or the stream stored past one
            // that never got its final values).
            const known = finalMs.get(i.assetId)
            const from = known === undefined ? extent.lastMs : Math.min(extent.lastMs, known + BAR_MS)
            newest = yield* fetch(i, from, toMs)
          }
          barsReady.add(i.assetId)
          // Every bar before `toMs` fetched now is closed, so final.
          const through = yield* lastStoredMs("bars", i.assetId)
          if (through !== undefined) noteFinal(i.assetId, Math.min(through, toMs - BAR_MS))
          // A bar's data runs to its close (a forming bar's: to now).
          p.newestMs = Math.max(
            p.newestMs,
            newest > 0 ? newest + BAR_MS : 0,
            through === undefined ? 0 : Math.min(nowMs, through + BAR_MS)
          )
        })
      )
      // The history behind, once per process. A failure leaves the instrument for the next run (the forward pass
      // above has reported its freshness); a rate limit stops the job as everywhere. It gives way at the next close:
      // the rest waits for the next run, after that run's forward pass (on a small REST budget the history of every
      // perpetual takes longer than a bar, and the forming bars wait for the closed one before them).
      for (const i of busiestFirst()) {
        if (barsBackfilled.has(i.assetId)) continue
        if ((yield* Clock.currentTimeMillis) >= toMs + BAR_MS) break
        const extent = yield* storedExtent("bars", i.assetId)
        if (extent === undefined) continue
        if (extent.firstMs > backfillFrom) {
          const result = yield* Effect.result(fetch(i, backfillFrom, Math.min(extent.firstMs, toMs)))
          if (result._tag === "Failure") {
            if (fatal(result.failure)) return yield* Effect.fail(result.failure)
            yield* Effect.logWarning(
              `live ${venue}: the bars history of ${i.symbol} behind ${new Date(extent.firstMs).toISOString()} not fetched (${result.failure.kind}); retried next run`
            )
            continue
          }
        }
        barsBackfilled.add(i.assetId)
      }
    })

    /**
     * The start's first pass (DECISIONS, whole-market start-up): a day of bars for each instrument that has none,
     * busiest first, one request each, so that every listed perpetual is alive with its price (and the day behind
     * it) within the venue's limit before any deep history is fetched; the bars job then fills the rest of the
     * backfill behind it (`barsBackfilled`).
     */
    const runRecentBars = Effect.gen(function* () {
      const nowMs = yield* Clock.currentTimeMillis
      const toMs = Math.floor(nowMs / BAR_MS) * BAR_MS
      const fromMs = toMs - Math.min(RECENT_BARS_MS, options.backfillDays * DAY_MS)
      yield* eachInstrument(
        barComponents,
        (i, p) =>
          Effect.gen(function* () {
            const newest = yield* pageForward(
              fromMs,
              toMs,
              (from, to) => connector.bars(i, from, to),
              (rows) => writeBars(i, rows)
            )
            barsReady.add(i.assetId)
            if (newest > 0) noteFinal(i.assetId, newest)
            p.newestMs = Math.max(p.newestMs, newest > 0 ? newest + BAR_MS : 0)
          }),
        (i) => Effect.map(storedExtent("bars", i.assetId), (e) => e === undefined),
        // The assets this venue is the primary of first: their price and `alive` wait for these bars (a venue
        // with costly bar requests, Hyperliquid's, reaches its own assets before the ones priced elsewhere).
        () => {
          const all = busiestFirst()
          return [...all.filter((i) => primaryHere.has(i.assetId)), ...all.filter((i) => !primaryHere.has(i.assetId))]
        }
      )
    })

    /** The bar still forming, refreshed between closes, so prices and freshness follow the clock. */
    const runForming = Effect.gen(function* () {
      const nowMs = yield* Clock.currentTimeMillis
      const slotMs = Math.floor(nowMs / BAR_MS) * BAR_MS
      if (!instruments.some((i) => barsReady.has(i.assetId))) return
      // The bars the stream holds first (no request), then those asked over REST, each group busiest first.
      const streamedFirst = () => {
        const all = busiestFirst()
        const streamed = (i: Instrument) => options.streamedBar?.(i.assetId, slotMs) !== undefined
        return [...all.filter(streamed), ...all.filter((i) => !streamed(i))]
      }
      yield* eachInstrument(
        barComponents,
        (i, p) =>
          Effect.gen(function* () {
            if (!barsReady.has(i.assetId)) return
            // Next to the bar before it (or as the first bar of a listing with none): one written past a missed
            // slot (after an outage) would leave a hole that the bars job, resuming from the newest stored bar,
            // never fills.
            const last = yield* lastStoredMs("bars", i.assetId)
            if (last !== undefined && last < slotMs - BAR_MS) return
            const bar = options.streamedBar?.(i.assetId, slotMs) ?? (yield* connector.formingBar(i, slotMs))
            if (bar !== undefined) {
              yield* writeBars(i, [bar])
              p.newestMs = nowMs
            }
          }),
        undefined,
        streamedFirst
      )
    })

    /**
     * At a close, where the venue's kline stream marks the closed bar: stores each instrument's closed bar as the
     * stream sent it (next to the bars stored before it, so never past a hole), waiting up to `CLOSED_BAR_WAIT_MS`
     * after the close for those still to come, so the bars job asks REST only for what the stream missed. Without
     * it every close cost a REST request per instrument (550 on Binance), queued behind the depth run and the
     * tickers, and an asset whose newest stored bar was a slot behind read `delayed` until its turn came.
     */
    const streamedClosedBar = options.streamedClosedBar
    const runClosedBars =
      streamedClosedBar === undefined
        ? undefined
        : Effect.gen(function* () {
            const startMs = yield* Clock.currentTimeMillis
            const closeMs = Math.floor(startMs / BAR_MS) * BAR_MS
            const closedMs = closeMs - BAR_MS
            if (instruments.length === 0) yield* refreshListings
            const waiting = new Map(instruments.filter((i) => barsReady.has(i.assetId)).map((i) => [i.assetId, i]))
            const p = progress()
            for (;;) {
              for (const [assetId, i] of waiting) {
                const bar = streamedClosedBar(assetId, closedMs)
                if (bar === undefined) continue
                waiting.delete(assetId)
                const last = yield* lastStoredMs("bars", assetId)
                // Only next to what is stored: a bar past a missed one would hide the hole from the bars job.
                if (last === undefined || last < closedMs - BAR_MS) continue
                yield* writeBars(i, [bar])
                p.ok++
                p.newestMs = Math.max(p.newestMs, closeMs)
                if ((finalMs.get(assetId) ?? Number.NEGATIVE_INFINITY) >= closedMs - BAR_MS)
                  noteFinal(assetId, closedMs)
              }
              const nowMs = yield* Clock.currentTimeMillis
              if (waiting.size === 0 || nowMs >= closeMs + CLOSED_BAR_WAIT_MS) break
              yield* Effect.sleep(CLOSED_BAR_POLL_MS)
            }
            if (p.ok > 0) yield* markOk(barComponents, p)
          })

    // -- funding settlements ------------------------------------------------------------------------------------
    const runFunding = Effect.gen(function* () {
      const nowMs = yield* Clock.currentTimeMillis
      yield* eachInstrument(["funding"], (i, p) =>
        Effect.gen(function* () {
          const last = yield* lastStoredMs("funding", i.assetId)
          const fromMs = last === undefined ? nowMs - options.fundingBackfillDays * DAY_MS : last + 1
          const newest = yield* pageForward(
            fromMs,
            nowMs + 1,
            (from, to) => connector.fundingHistory(i, from, to),
            (rows) => store.write([series("funding", i.assetId, venue, rows, ["rate", "intervalMs"])])
          )
          const stored = yield* lastStoredMs("funding", i.assetId)
          p.newestMs = Math.max(p.newestMs, newest, stored ?? 0)
        })
      )
    })

    // -- tickers: mark/index, open interest, funding state ----------------------------------------------------------
    const tickerComponents: ReadonlyArray<Component> = ["markIndex", "openInterest", "fundingState"]
    /** The slot of the newest ticker snapshots written (the start's, or a job run's). */
    let snapshotSlotMs = 0
    /**
     * Mark, index, open interest and funding state of every instrument: the venue's bulk endpoint (one request for
     * all symbols, or as few as the venue allows), so each listed perpetual has its quote within seconds.
     */
    const writeTickerSnapshots = Effect.gen(function* () {
      if (instruments.length === 0) yield* refreshListings
      const nowMs = yield* Clock.currentTimeMillis
      const slotMs = Math.floor(nowMs / BAR_MS) * BAR_MS
      const rows = yield* connector.tickers(busiestFirst(), nowMs)
      const batch: Array<AnySeriesInput> = []
      for (const r of rows) {
        batch.push(
          series("markIndex", r.assetId, venue, [{ t: slotMs, mark: r.mark, index: r.index }], ["mark", "index"])
        )
        batch.push(series("openInterest", r.assetId, venue, [{ t: slotMs, oiUsd: r.oiUsd }], ["oiUsd"]))
        activity.set(r.assetId, r.oiUsd)
      }
      yield* store.write(batch)
      yield* store.putFundingStates(rows.map((r) => ({ assetId: r.assetId, venue, t: nowMs, ...r.funding })))
      if (rows.length === 0 && instruments.length > 0) {
        return yield* Effect.fail(
          new SourceError({ source: venue, kind: "format", what: "tickers", message: "no ticker for any instrument" })
        )
      }
      snapshotSlotMs = slotMs
      const delivered = new Set(rows.map((r) => r.assetId))
      const p = progress()
      p.newestMs = slotMs
      for (const i of instruments) if (!delivered.has(i.assetId)) p.failed.push(`${i.symbol} (no ticker)`)
      yield* markOk(tickerComponents, p)
    })

    /** Instruments whose open-interest history this process has fetched back to the window's start. */
    const oiBackfilled = new Set<string>()
    const runTickers = Effect.gen(function* () {
      if (instruments.length === 0) yield* refreshListings
      const nowMs = yield* Clock.currentTimeMillis
      const slotMs = Math.floor(nowMs / BAR_MS) * BAR_MS
      const history = connector.openInterestHistory
      if (history !== undefined) {
        // Fills what snapshots missed: the window behind the first stored value, once per process (the first
        // start, whose snapshots came first), and a gap before this slot (an outage). Best effort: a venue without
        // history for a symbol still gets snapshots from now on.
        const windowFrom = slotMs - Math.min(options.backfillDays, OI_HISTORY_DAYS) * DAY_MS
        for (const i of busiestFirst()) {
          const extent = yield* storedExtent("openInterest", i.assetId)
          const ranges: Array<readonly [number, number]> = []
          if (extent === undefined) ranges.push([windowFrom, slotMs])
          else {
            if (!oiBackfilled.has(i.assetId) && extent.firstMs > windowFrom) ranges.push([windowFrom, extent.firstMs])
            if (extent.lastMs < slotMs - BAR_MS) ranges.push([Math.max(extent.lastMs + BAR_MS, windowFrom), slotMs])
          }
          let whole = true
          for (const [fromMs, untilMs] of ranges) {
            const r = yield* Effect.result(
              pageForward(
                fromMs,
                untilMs,
                (from, to) => history(i, from, to),
                (rows) => store.write([series("openInterest", i.assetId, venue, rows, ["oiUsd"])])
              )
            )
            if (r._tag === "Failure") {
              if (fatal(r.failure)) return yield* Effect.fail(r.failure)
              whole = false
            }
          }
          if (whole) oiBackfilled.add(i.assetId)
        }
      }
      // The start (or the previous run) may already have taken this slot's snapshots.
      if (snapshotSlotMs < slotMs) yield* writeTickerSnapshots
    })

    // -- books -----------------------------------------------------------------------------------------------
    /** The last depth run's reconciliation of REST books against the streamed tops, and the mismatches since start. */
    const reconciliation = { compared: 0, mismatched: 0, mismatchedTotal: 0, examples: [] as Array<string> }
    let metricsSlotMs = 0
    const runBooks = Effect.gen(function* () {
      const nowMs = yield* Clock.currentTimeMillis
      const slotMs = Math.floor(nowMs / BAR_MS) * BAR_MS
      const writeMetrics = slotMs > metricsSlotMs
      const metrics: Array<AnySeriesInput> = []
      booksRun.startMs = nowMs
      booksRun.lastFetchMs = nowMs
      // Streamed venues: between the 15-minute depth runs, only the books the stream does not serve.
      const streamed = options.streamed
      const only =
        writeMetrics || streamed === undefined ? undefined : (i: Instrument) => Effect.succeed(!streamed(i.assetId))
      if (writeMetrics) {
        reconciliation.compared = 0
        reconciliation.mismatched = 0
        reconciliation.examples = []
      }
      yield* eachInstrument(
        ["books"],
        (i, p) =>
          Effect.gen(function* () {
            const book = yield* connector.book(i, nowMs)
            booksRun.lastFetchMs = yield* Clock.currentTimeMillis
            const verdict = reconcileBook(book, options.streamedQuote?.(i.assetId))
            if (verdict !== undefined) {
              reconciliation.compared++
              if (verdict === "mismatch") {
                reconciliation.mismatched++
                reconciliation.mismatchedTotal++
                if (reconciliation.examples.length < 5) reconciliation.examples.push(i.symbol)
              }
            }
            yield* store.putBooks([book])
            p.newestMs = Math.max(p.newestMs, nowMs)
            const m = bookMetricsOf(book)
            if (writeMetrics && m !== undefined) {
              metrics.push(
                series(
                  "bookMetrics",
                  i.assetId,
                  venue,
                  [{ t: slotMs, ...m }],
                  ["mid", "spreadPct", "imbalance", "bidDepthUsd", "askDepthUsd"]
                )
              )
            }
          }),
        only
      )
      if (writeMetrics && reconciliation.mismatched > 0)
        yield* Effect.logWarning(
          `live ${venue}: ${reconciliation.mismatched} of ${reconciliation.compared} REST books disagree with the streamed top of book (${reconciliation.examples.join(", ")})`
        )
      if (writeMetrics && metrics.length > 0) {
        yield* store.write(metrics)
        metricsSlotMs = slotMs
        const p = progress()
        p.newestMs = slotMs
        yield* markOk(["bookMetrics"], p)
      }
    })

    // -- taker flow apart from klines (OKX) ------------------------------------------------------------------------
    const takerFlow = connector.takerFlow
    const runTakerFlow =
      takerFlow === undefined
        ? undefined
        : Effect.gen(function* () {
            const nowMs = yield* Clock.currentTimeMillis
            const toMs = Math.floor(nowMs / BAR_MS) * BAR_MS
            yield* eachInstrument(["takerFlow"], (i, p) =>
              Effect.gen(function* () {
                const last = yield* lastStoredMs("takerFlow", i.assetId)
                const fromMs =
                  last === undefined ? toMs - Math.min(options.backfillDays, OI_HISTORY_DAYS) * DAY_MS : last + BAR_MS
                const newest = yield* pageForward(
                  fromMs,
                  toMs,
                  (from, to) => takerFlow(i, from, to),
                  (rows) => store.write([series("takerFlow", i.assetId, venue, rows, ["buyUsd", "sellUsd"])])
                )
                const stored = yield* lastStoredMs("takerFlow", i.assetId)
                p.newestMs = Math.max(
                  p.newestMs,
                  newest > 0 ? newest + BAR_MS : 0,
                  stored === undefined ? 0 : stored + BAR_MS
                )
              })
            )
          })

    // -- liquidations (OKX) ------------------------------------------------------------------------------------
    const liquidations = connector.liquidations
    const runLiquidations =
      liquidations === undefined
        ? undefined
        : Effect.gen(function* () {
            const nowMs = yield* Clock.currentTimeMillis
            yield* eachInstrument(["liquidations"], (i, p) =>
              Effect.gen(function* () {
                const polled = yield* liquidations(i, nowMs)
                // The venue's liquidation stream (`stream/Liquidation.ts`) writes the same one-minute rows from its
                // own part of the liquidations: each side keeps the larger count, never their sum.
                const stored =
                  polled.length === 0
                    ? undefined
                    : (yield* store.read("liquidations", {
                        assetId: i.assetId,
                        venue,
                        fromMs: (polled[0] as LiquidationRow).t,
                        toMs: (polled[polled.length - 1] as LiquidationRow).t + 1
                      }))[0]
                const before = new Map<number, { readonly longUsd: number; readonly shortUsd: number }>()
                stored?.t.forEach((t, k) => {
                  before.set(t, { longUsd: stored.longUsd[k] as number, shortUsd: stored.shortUsd[k] as number })
                })
                const rows = polled.map((r): LiquidationRow => {
                  const b = before.get(r.t)
                  return b === undefined
                    ? r
                    : { t: r.t, longUsd: Math.max(r.longUsd, b.longUsd), shortUsd: Math.max(r.shortUsd, b.shortUsd) }
                })
                if (rows.length > 0)
                  yield* store.write([series("liquidations", i.assetId, venue, rows, ["longUsd", "shortUsd"])])
                // The answer covers everything up to now, including "no liquidations".
                p.newestMs = nowMs
              })
            )
          })

    // -- REST use: the weight spent in the last minute, as the venue's `rest` status says it ----------------------
    const restRef = { venue, component: "rest" as const, cadenceMs: MINUTE_MS }
    const runRestUsage = Effect.gen(function* () {
      const spent = yield* connector.limiter.spentLastMinute
      const allowed = Math.round((connector.limiter.capacity * MINUTE_MS) / connector.limiter.windowMs)
      yield* recordSuccess(store, restRef, {
        newestMs: yield* Clock.currentTimeMillis,
        detail: `REST request weight ${spent} in the last minute of ${allowed} allowed${
          options.streamed === undefined ? "" : "; top of book, mark and funding come from the venue's streams"
        }${
          reconciliation.compared === 0
            ? ""
            : `; reconciliation: ${reconciliation.mismatched} of ${reconciliation.compared} REST books disagreed with the stream in the last depth run (${reconciliation.mismatchedTotal} since start)${
                reconciliation.examples.length === 0 ? "" : `: ${reconciliation.examples.join(", ")}`
              }`
        }`
      })
    })

    /** One run that marks its components failing when it fails. */
    const attempt = (components: ReadonlyArray<Component>, run: Effect.Effect<void, SourceError>) =>
      Effect.tapError(run, (e) => markFailing(components, e))

    /** A job: retried with backoff until it succeeds, then repeated on its cadence; it never fails. */
    const job = (
      name: string,
      components: ReadonlyArray<Component>,
      run: Effect.Effect<void, SourceError>,
      cadenceMs: number | (() => number),
      offsetMs: number
    ): Effect.Effect<void> =>
      attempt(components, run).pipe(
        Effect.retry(backoffSchedule(Math.min(typeof cadenceMs === "number" ? cadenceMs : cadenceMs(), 5 * MINUTE_MS))),
        Effect.repeat(pollSchedule(cadenceMs, offsetMs, options.jitterMs)),
        // The backoff never gives up, so no failure gets here.
        Effect.orDie,
        Effect.withSpan(`live.${venue}.${name}`),
        Effect.asVoid
      )

    const allComponents: ReadonlyArray<Component> = [
      ...barComponents,
      "funding",
      ...tickerComponents,
      "books",
      "bookMetrics",
      ...(runTakerFlow === undefined ? [] : (["takerFlow"] as const)),
      ...(runLiquidations === undefined ? [] : (["liquidations"] as const))
    ]

    /**
     * The whole-market start (DECISIONS): every instrument's quote from the bulk tickers, then a day of bars for each
     * instrument without any, busiest first; the jobs fetch the history behind (bars, funding, open interest).
     */
    const start = Effect.gen(function* () {
      yield* Effect.ignore(attempt(tickerComponents, writeTickerSnapshots))
      yield* attempt(barComponents, runRecentBars)
    })

    const once = {
      listings: refreshListings,
      start,
      bars: attempt(barComponents, runBars),
      formingBar: attempt(barComponents, runForming),
      ...(runClosedBars === undefined ? {} : { closedBars: attempt(barComponents, runClosedBars) }),
      funding: attempt(["funding"], runFunding),
      tickers: attempt(tickerComponents, runTickers),
      books: attempt(["books"], runBooks),
      ...(runTakerFlow === undefined ? {} : { takerFlow: attempt(["takerFlow"], runTakerFlow) }),
      ...(runLiquidations === undefined ? {} : { liquidations: attempt(["liquidations"], runLiquidations) })
    }

    const scheduled = {
      // Bars first after each close, tickers next; books off the quarter-hour so they do not queue with them.
      books: job("books", ["books"], runBooks, booksEveryMs, 30_000),
      tickers: job("tickers", tickerComponents, runTickers, BAR_MS, 8_000),
      // Where the stream delivers the closed bars, the bars job comes after their wait and fetches only the rest.
      bars: job(
        "bars",
        barComponents,
        runBars,
        BAR_MS,
        runClosedBars === undefined ? 2_000 : CLOSED_BAR_WAIT_MS + 2_000
      ),
      ...(runClosedBars === undefined
        ? {}
        : { closedBars: job("closedBars", barComponents, runClosedBars, BAR_MS, 1_000) }),
      formingBar: job("formingBar", barComponents, runForming, connector.formingEveryMs, 40_000),
      funding: job("funding", ["funding"], runFunding, HOUR_MS, 30_000),
      ...(runTakerFlow === undefined
        ? {}
        : { takerFlow: job("takerFlow", ["takerFlow"], runTakerFlow, BAR_MS, 20_000) }),
      ...(runLiquidations === undefined
        ? {}
        : { liquidations: job("liquidations", ["liquidations"], runLiquidations, 5 * MINUTE_MS, 5_000) }),
      restUsage: runRestUsage.pipe(Effect.repeat(pollSchedule(MINUTE_MS, 55_000, 0)), Effect.asVoid),
      // Listings change rarely; a failure here only delays new symbols (the other jobs keep the last list).
      listings: job("listings", [], refreshListings, HOUR_MS, 10_000).pipe(Effect.delay(HOUR_MS))
    }

    return {
      venue,
      components: allComponents,
      /**
       * Runs the first listings fetch (retried like any job), the start (`start`), then every job concurrently,
       * forever.
       */
      run: Effect.gen(function* () {
        yield* attempt(allComponents, refreshListings).pipe(Effect.retry(backoffSchedule(5 * MINUTE_MS)), Effect.orDie)
        // A failed start only marks its components failing: the jobs retry with backoff.
        yield* Effect.ignore(start)
        yield* Effect.all(Object.values(scheduled), { concurrency: "unbounded", discard: true })
      }),
      /** One run of each job (marking its components failing when it fails), for tests and manual refreshes. */
      once,
      /** Each job on its schedule, forever. */
      scheduled
    }
  })

export type CryptoFeed = Effect.Success<ReturnType<typeof makeCryptoFeed>>
