/**
 * The equity plane: the equity operations over the `EquityStore`, plugged into the operations through
 * `PlaneOperations` (see `Planes.ts`). Per asset: `read`, `price`, `technicals`, `profile`, `valuation`,
 * `growth`, `fundamentals`; per call: `financials`, `events`, `holders`, `series`; and the directory of covered
 * companies (tier `full` with daily prices, `equity` filings only).
 *
 * Freshness (DECISIONS, Freshness `status`):
 * - price-based answers (and any answer with a figure that moves with the price: `profile` with its market cap,
 *   `valuation`, the `read` headline): `closed` outside the US regular session (`next_update_at` = the next open); in session
 *   `live` when the last daily bar is the last closed session, `delayed` when it is 1 to 3 sessions behind
 *   (with `dailyCloseDelayed`, as in live mode, `delayed` also when it is the last closed session: the previous
 *   session's close while the market trades);
 *   `stale` when more than 3 sessions behind (at any hour). `as_of` is the close of the last bar's session.
 * - filings-based answers: `live` when the latest periodic report (10-K, 10-Q, 20-F, 40-F and amendments) is
 *   at most 135 days old (a quarter plus the filing deadline), `delayed` up to 405 days, else `stale`.
 *   `next_update_at` is the expected next periodic report (latest + 91 days) for statement-based answers, and
 *   the next moment EDGAR accepts filings (business days 06:00 to 22:00 New York) for `events` and `holders`.
 * - percentiles of price measures are ranked against the last year of daily values (`baseline` window `1y`,
 *   cadence `1d`); below 30 values the measure is `insufficient_history`.
 */
import { Clock, Effect, Ref } from "effect"
import { chargeFor } from "../Billing.ts"
import { decodeCursor, encodeCursor } from "../Cursor.ts"
import { adx, atrPct, MovingAveragePeriods, rsi, sma } from "../crypto/Technicals.ts"
import { type ApiError, apiError } from "../Errors.ts"
import { isApiError } from "../Params.ts"
import { percentileRank, sortedFinite } from "../Percentile.ts"
import type { Handler, HandlerInput, HandlerOutput } from "../Pipeline.ts"
import type { DirectoryEntry, PlaneForAsset, PlaneOperations } from "../Planes.ts"
import { type CompanyCoverage, type DailyBar, EquityStore } from "./EquityStore.ts"
import { fromNumber } from "./Exact.ts"
import { holdersOf } from "./Holders.ts"
import { insiderSummary, insiderTrades } from "./Insider.ts"
import {
  isSessionOpen,
  isTradingDay,
  lastClosedSession,
  newYorkDate,
  nextSessionOpenMs,
  sessionCloseMs,
  sessionOpenMs
} from "./MarketHours.ts"
import type { Company, Fact, Filing } from "./Model.ts"
import {
  citedOf,
  dateOf,
  dayOf,
  FactBook,
  financialsTable,
  LineItems,
  lineItem,
  type PeriodKind,
  type Statement
} from "./Statements.ts"
import {
  type Figure,
  fundamentals,
  growth,
  multipleHistory,
  type SharesOutstanding,
  sharesOutstanding,
  type UnavailableReason,
  valuation
} from "./Valuation.ts"

export interface EquityPlaneOptions {
  /** Reported as `baseline.source` so that simulated data never passes for live data (e.g. `simulated`, `sec`). */
  readonly source?: string
  /**
   * The source of one company's data, by CIK, where the store mixes sources (the simulated feed on a database
   * that also holds ingested SEC filings); it wins over `source` in `baseline.source` and, through the plane's
   * `sourceOf`, in `X-Data-Source`.
   */
  readonly sourceOf?: (cik: string) => string
  /**
   * How long the directory (`resolve`, `coverage`) reuses its snapshot of the store, in ms (default 60 s; 0
   * reads the store on every call). Per-asset lookups always read the store.
   */
  readonly directoryCacheMs?: number
  /**
   * The stored daily bars come from a daily source (the live mode's price connector, or files loaded with
   * `ingest prices`): during the session the newest price is the previous session's close, so price-based answers
   * say `delayed` rather than `live` (see `priceFreshness`).
   */
  readonly dailyCloseDelayed?: boolean
  /**
   * The EDGAR day through which every followed filing of every company has been processed (live mode's
   * daily-index watermark), or undefined while none is known. When given and known, the equity `read` answers it
   * as `filings_indexed_through` instead of the company's latest filing date on file.
   */
  readonly filingsIndexedThrough?: Effect.Effect<string | undefined>
}

type Status = "live" | "delayed" | "stale" | "closed"
type Unavailable = Record<string, { readonly reason: UnavailableReason; readonly detail?: string }>

interface Freshness {
  readonly as_of: string
  readonly status: Status
  readonly next_update_at: string
}

const DAY_MS = 86_400_000
const iso = (ms: number) => new Date(ms).toISOString()

/** Trailing window of the price percentiles, in days, and its label. */
const BASELINE_DAYS = 365
const BASELINE = { window: "1y", cadence: "1d" } as const

/** Concepts the equity operations read beyond the statement lines. */
const DIVIDEND_CONCEPTS = ["CommonStockDividendsPerShareDeclared", "CommonStockDividendsPerShareCashPaid"]
const SPLIT_CONCEPTS = [
  "StockholdersEquityNoteStockSplitConversionRatio1",
  "StockholdersEquityNoteStockSplitConversionRatio"
]
const FACT_CONCEPTS = [
  ...new Set([
    ...LineItems.flatMap((l) => l.concepts),
    "EntityCommonStockSharesOutstanding",
    ...DIVIDEND_CONCEPTS,
    ...SPLIT_CONCEPTS
  ])
]

const PERIODIC_FORMS = new Set(["10-K", "10-Q", "20-F", "40-F", "10-K/A", "10-Q/A", "20-F/A", "40-F/A", "10-KT"])

/** SIC divisions (the SEC's Standard Industrial Classification) named as sectors. */
export const sectorOfSic = (sic: string | null): string | null => {
  if (sic === null || !/^\d{3,4}$/.test(sic)) return null
  const n = Number(sic)
  if (n >= 100 && n <= 999) return "Agriculture, Forestry and Fishing"
  if (n >= 1000 && n <= 1499) return "Mining"
  if (n >= 1500 && n <= 1799) return "Construction"
  if (n >= 2000 && n <= 3999) return "Manufacturing"
  if (n >= 4000 && n <= 4999) return "Transportation, Communications and Utilities"
  if (n >= 5000 && n <= 5199) return "Wholesale Trade"
  if (n >= 5200 && n <= 5999) return "Retail Trade"
  if (n >= 6000 && n <= 6799) return "Finance, Insurance and Real Estate"
  if (n >= 7000 && n <= 8999) return "Services"
  if (n >= 9100 && n <= 9729) return "Public Administration"
  if (n >= 9900 && n <= 9999) return "Nonclassifiable"
  return null
}

/** `eq:<cik>:<ticker>` parts, or undefined. */
export const parseEquityId = (id: string): { readonly cik: string; readonly ticker: string } | undefined => {
  const m = /^eq:([1-9][0-9]{0,9}):([A-Z0-9.-]+)$/.exec(id)
  return m === null ? undefined : { cik: m[1] as string, ticker: m[2] as string }
}

// ---------------------------------------------------------------------------------------------------------------
// Freshness
// ---------------------------------------------------------------------------------------------------------------

/** Trading days d with `after < d <= through`. */
const sessionsBetween = (after: string, through: string): number => {
  let n = 0
  for (let d = dayOf(after) + 1; d <= dayOf(through); d++) if (isTradingDay(d)) n++
  return n
}

/**
 * The newest daily bar an answer may use: the one of the last closed session (its `t` is that session's open).
 * A bar of the session still running is left out: its close is not a close yet, and an answer built on it would
 * describe "now" (a new `as_of` and ETag on every request) while nothing new can be known before the close.
 */
export const closedBarsThroughMs = (nowMs: number): number => sessionOpenMs(lastClosedSession(nowMs))

/**
 * Freshness of an answer computed from daily bars. With `closeIsDelayed` (a daily source that publishes a session's
 * bar after its close, such as the live price connector), an answer during the session is `delayed` even when it
 * holds the last closed session: it is the previous session's close while the market trades.
 */
export const priceFreshness = (lastBarMs: number, nowMs: number, closeIsDelayed = false): Freshness => {
  const barDate = newYorkDate(lastBarMs)
  const expected = lastClosedSession(nowMs)
  const behind = barDate >= expected ? 0 : sessionsBetween(barDate, expected)
  const asOf = Math.min(sessionCloseMs(barDate), nowMs)
  const open = isSessionOpen(nowMs)
  const today = newYorkDate(nowMs)
  const next = open ? sessionCloseMs(today) : nextSessionOpenMs(nowMs)
  if (behind > 3) return { as_of: iso(asOf), status: "stale", next_update_at: iso(next) }
  if (!open) return { as_of: iso(asOf), status: "closed", next_update_at: iso(next) }
  return { as_of: iso(asOf), status: behind === 0 && !closeIsDelayed ? "live" : "delayed", next_update_at: iso(next) }
}

const MINUTE_MS = 60_000

/**
 * The next moment EDGAR accepts filings (business days 06:00 to 22:00 New York). While it accepts them, a filing
 * can arrive at any moment; the answer is then the start of the next minute, so that two requests in the same minute
 * get the same `next_update_at` (and the same ETag, which a conditional request needs) instead of one that moves
 * with every millisecond.
 */
export const nextEdgarMomentMs = (nowMs: number): number => {
  let day = dayOf(newYorkDate(nowMs))
  for (let i = 0; i < 15; i++, day++) {
    if (!isTradingDay(day)) continue
    const open = sessionOpenMs(dateOf(day)) - 3.5 * 3_600_000
    // 22:00 New York: EDGAR's hours do not follow the market's early closes.
    const close = sessionOpenMs(dateOf(day)) + 12.5 * 3_600_000
    if (nowMs < open) return open
    if (nowMs < close) return Math.min(close, Math.floor(nowMs / MINUTE_MS) * MINUTE_MS + MINUTE_MS)
  }
  return nowMs + DAY_MS
}

/** Freshness of an answer computed from filings. */
export const filingsFreshness = (
  latest: { readonly acceptedMs: number | null; readonly lastPeriodicFiled: string | null },
  nowMs: number,
  next: "periodic" | "stream"
): Freshness => {
  const asOf = latest.acceptedMs ?? nowMs
  const periodic = latest.lastPeriodicFiled
  const ageDays = periodic === null ? Number.POSITIVE_INFINITY : (nowMs - Date.parse(`${periodic}T00:00:00Z`)) / DAY_MS
  const status: Status = ageDays <= 135 ? "live" : ageDays <= 405 ? "delayed" : "stale"
  const expected = periodic === null ? Number.NaN : Date.parse(`${periodic}T00:00:00Z`) + 91 * DAY_MS
  const nextMs =
    next === "periodic" && Number.isFinite(expected) && expected > nowMs ? expected : nextEdgarMomentMs(nowMs)
  return { as_of: iso(Math.min(asOf, nowMs)), status, next_update_at: iso(Math.max(nextMs, nowMs)) }
}

// ---------------------------------------------------------------------------------------------------------------
// Price measures
// ---------------------------------------------------------------------------------------------------------------

const contextual = (
  series: ReadonlyArray<number>,
  baselineFrom: number
): { readonly value: number; readonly pctl: number } | { readonly value: number | null; readonly n: number } => {
  const value = series[series.length - 1]
  if (value === undefined || !Number.isFinite(value)) return { value: null, n: 0 }
  const baseline = sortedFinite(series.slice(baselineFrom))
  const pctl = percentileRank(value, baseline)
  return pctl === undefined ? { value, n: baseline.length } : { value: round(value, 6), pctl }
}

const round = (x: number, places: number) => Number(x.toFixed(places))

/** Daily close-to-close returns in percent, aligned with the bars (NaN for the first). */
const returnsPct = (bars: ReadonlyArray<DailyBar>): Array<number> =>
  bars.map((b, i) => (i === 0 ? Number.NaN : (b.c / (bars[i - 1] as DailyBar).c - 1) * 100))

/** Position of each close within the high-low range of the trailing 7 calendar days, 0 to 100. */
const rangePos7dPct = (bars: ReadonlyArray<DailyBar>): Array<number> => {
  const out: Array<number> = []
  let from = 0
  for (let i = 0; i < bars.length; i++) {
    const b = bars[i] as DailyBar
    while ((bars[from] as DailyBar).tMs <= b.tMs - 7 * DAY_MS) from++
    let hi = Number.NEGATIVE_INFINITY
    let lo = Number.POSITIVE_INFINITY
    for (let j = from; j <= i; j++) {
      hi = Math.max(hi, (bars[j] as DailyBar).h)
      lo = Math.min(lo, (bars[j] as DailyBar).l)
    }
    out.push(hi > lo ? ((b.c - lo) / (hi - lo)) * 100 : Number.NaN)
  }
  return out
}

/** Index of the first bar inside the baseline window ending at the last bar. */
const baselineStart = (bars: ReadonlyArray<DailyBar>): number => {
  const last = bars[bars.length - 1]
  if (last === undefined) return 0
  const from = last.tMs - BASELINE_DAYS * DAY_MS
  const i = bars.findIndex((b) => b.tMs > from)
  return i < 0 ? 0 : i
}

/** Bars aggregated to weeks (Monday start, New York dates) or calendar months. */
export const aggregateDaily = (bars: ReadonlyArray<DailyBar>, interval: "1d" | "1w" | "1mo"): Array<DailyBar> => {
  if (interval === "1d") return [...bars]
  const out: Array<DailyBar> = []
  let key = ""
  for (const b of bars) {
    const date = newYorkDate(b.tMs)
    const day = dayOf(date)
    const k = interval === "1mo" ? date.slice(0, 7) : String(day - ((day + 3) % 7))
    const cur = out[out.length - 1]
    if (k !== key || cur === undefined) {
      out.push({ ...b })
      key = k
      continue
    }
    out[out.length - 1] = {
      tMs: cur.tMs,
      o: cur.o,
      h: Math.max(cur.h, b.h),
      l: Math.min(cur.l, b.l),
      c: b.c,
      v: cur.v + b.v
    }
  }
  return out
}

// ---------------------------------------------------------------------------------------------------------------
// The plane
// ---------------------------------------------------------------------------------------------------------------

interface Loaded {
  readonly company: Company
  readonly coverage: CompanyCoverage
}

/** Builds the equity plane over the store. Time comes from `Clock`. */
export const makeEquityPlane = (options: EquityPlaneOptions = {}): Effect.Effect<PlaneOperations, never, EquityStore> =>
  Effect.gen(function* () {
    const store = yield* EquityStore
    const sourceFor = (cik: string): { readonly source?: string } => {
      const source = options.sourceOf?.(cik) ?? options.source
      return source === undefined ? {} : { source }
    }

    const tierOf = (c: CompanyCoverage) => (c.bars > 0 ? ("full" as const) : ("equity" as const))

    const aliveOf = (c: CompanyCoverage, nowMs: number): boolean =>
      c.bars > 0 && c.lastBarMs !== null
        ? priceFreshness(c.lastBarMs, nowMs).status !== "stale"
        : c.lastFiledAt !== null && nowMs - Date.parse(`${c.lastFiledAt}T00:00:00Z`) <= 400 * DAY_MS

    const cikOf = (entry: DirectoryEntry) => (parseEquityId(entry.asset_id) as { cik: string }).cik

    const entryOf = (company: Company, coverage: CompanyCoverage, ticker: string, nowMs: number): DirectoryEntry => ({
      asset_id: `eq:${company.cik}:${ticker}`,
      plane: "equity",
      symbol: ticker,
      name: company.name,
      tier: tierOf(coverage),
      networks: [],
      aliases: [
        ...company.tickers.filter((t) => t !== ticker),
        ...company.formerNames,
        company.cik,
        company.cik.padStart(10, "0")
      ],
      alive: aliveOf(coverage, nowMs)
    })

    // The directory's snapshot of the issuers and what is held for them, reused for `directoryCacheMs`: every
    // company of the ticker list is an asset (about 10,000), and `resolve` and `coverage` read the directory on
    // every call. The store lists them from counts per table, never from a company's rows. `alive` is
    // recomputed from the snapshot on each read.
    const cacheMs = options.directoryCacheMs ?? 60_000
    // The entries are kept with the snapshot and an entry object is replaced only when its `alive` changes:
    // `resolve` keeps its normalized text per entry object, so about 10,000 fresh objects per call would have it
    // normalize every name and alias again on every query.
    const snapshot = yield* Ref.make<
      | {
          readonly atMs: number
          readonly entries: ReadonlyArray<DirectoryEntry>
          /** Each entry's company coverage, aligned with `entries`. */
          readonly coverages: ReadonlyArray<CompanyCoverage>
        }
      | undefined
    >(undefined)

    const directory = Effect.gen(function* () {
      const nowMs = yield* Clock.currentTimeMillis
      const snap = yield* Ref.get(snapshot)
      if (snap === undefined || nowMs - snap.atMs >= cacheMs || nowMs < snap.atMs) {
        const entries: Array<DirectoryEntry> = []
        const coverages: Array<CompanyCoverage> = []
        // Every ticker is an asset (`eq:<cik>:<ticker>`), the company's other tickers among its aliases.
        for (const { company, coverage } of yield* store.issuers) {
          for (const ticker of new Set(company.tickers)) {
            if (parseEquityId(`eq:${company.cik}:${ticker}`) === undefined) continue
            entries.push(entryOf(company, coverage, ticker, nowMs))
            coverages.push(coverage)
          }
        }
        yield* Ref.set(snapshot, { atMs: nowMs, entries, coverages })
        return entries
      }
      let changed = false
      const entries = snap.entries.map((e, i) => {
        const alive = aliveOf(snap.coverages[i] as CompanyCoverage, nowMs)
        if (alive === e.alive) return e
        changed = true
        return { ...e, alive }
      })
      if (changed) yield* Ref.set(snapshot, { ...snap, entries })
      return entries
    })

    /** The issuer (`EquityStore.issuer`): a stored company, or one the ticker list or a Form 4 names. */
    const load = (cik: string): Effect.Effect<Loaded | undefined> => store.issuer(cik)

    const lookup = (assetId: string) =>
      Effect.gen(function* () {
        const id = parseEquityId(assetId)
        if (id === undefined) return undefined
        const loaded = yield* load(id.cik)
        if (loaded === undefined || !loaded.company.tickers.includes(id.ticker)) return undefined
        const nowMs = yield* Clock.currentTimeMillis
        return entryOf(loaded.company, loaded.coverage, id.ticker, nowMs)
      })

    const bookOf = (cik: string) =>
      Effect.map(store.facts(cik, FACT_CONCEPTS), (facts) => ({ facts, book: new FactBook(facts) }))

    const latestFilings = (cik: string, coverage: CompanyCoverage) =>
      Effect.map(store.filings(cik), (filings) => {
        const accepted = filings[0] === undefined ? null : Date.parse(filings[0].acceptedAt)
        const periodic = filings.find((f) => PERIODIC_FORMS.has(f.form))
        return {
          filings,
          acceptedMs: accepted,
          lastPeriodicFiled: periodic?.filedAt ?? coverage.lastFiledAt
        }
      })

    /** The bars of the last year and a half (enough for a 200-bar average and a 1-year baseline). */
    const recentBars = (cik: string, nowMs: number) =>
      store.bars(cik, { fromMs: nowMs - 550 * DAY_MS, toMs: closedBarsThroughMs(nowMs) })

    const lastPrice = (bars: ReadonlyArray<DailyBar>) => bars[bars.length - 1]?.c ?? null

    const marketCap = (price: number | null, shares: SharesOutstanding | null): number | null =>
      price === null || shares === null ? null : Number(fromNumber(price).times(shares.shares).toFixed(2))

    const figure = (f: Figure, name: string, unavailable: Unavailable): string | null => {
      if (f.value !== null) return f.value
      unavailable[name] = { reason: f.reason, detail: f.detail }
      return null
    }

    const withUnavailable = <A extends object>(result: A, unavailable: Unavailable) =>
      Object.keys(unavailable).length === 0 ? result : { ...result, unavailable }

    /** Price-based freshness, or filings freshness for a company without bars. */
    const freshnessOf = (cik: string, loaded: CompanyCoverage, bars: ReadonlyArray<DailyBar>, nowMs: number) =>
      Effect.gen(function* () {
        const last = bars[bars.length - 1]
        if (last !== undefined) return priceFreshness(last.tMs, nowMs, options.dailyCloseDelayed === true)
        return filingsFreshness(yield* latestFilings(cik, loaded), nowMs, "periodic")
      })

    const priceContext = (bars: ReadonlyArray<DailyBar>, unavailable: Unavailable) => {
      const from = baselineStart(bars)
      const put = (name: string, series: ReadonlyArray<number>) => {
        const c = contextual(series, from)
        if ("pctl" in c) return c
        unavailable[name] =
          c.value === null
            ? { reason: "no_data", detail: "not enough bars to compute it" }
            : {
                reason: "insufficient_history",
                detail: `${c.n} daily values in the ${BASELINE.window} baseline; at least 30 are needed for a percentile`
              }
        return null
      }
      return { put, n: bars.length - from }
    }

    // -- per asset -------------------------------------------------------------------------------------------

    const read: PlaneForAsset = (entry) =>
      Effect.gen(function* () {
        const nowMs = yield* Clock.currentTimeMillis
        const cik = cikOf(entry)
        const loaded = yield* load(cik)
        if (loaded === undefined) return yield* Effect.fail(unknown(entry))
        const { facts, book } = yield* bookOf(cik)
        const bars = yield* recentBars(cik, nowMs)
        const unavailable: Unavailable = {}
        const price = lastPrice(bars)
        const shares = sharesOutstanding(facts)
        let returnPct: { value: number; pctl: number } | null = null
        let n = 0
        if (price === null) {
          const why = { reason: "not_covered" as const, detail: `tier \`${entry.tier}\` has filings but no price feed` }
          unavailable.price_usd = why
          unavailable.market_cap_usd = why
          unavailable.pe_ttm = why
          unavailable.return_24h_pct = why
        } else {
          const ctx = priceContext(bars, unavailable)
          returnPct = ctx.put("return_24h_pct", returnsPct(bars))
          n = ctx.n
          if (shares === null)
            unavailable.market_cap_usd = { reason: "no_data", detail: "no shares outstanding on file" }
        }
        const pe = price === null ? null : figure(valuation(book, price, shares).peTtm, "pe_ttm", unavailable)
        const freshness = yield* freshnessOf(cik, loaded.coverage, bars, nowMs)
        // Live mode: the daily-index watermark (every company's filings processed through that day); otherwise,
        // and until the follower completed a day, the company's latest filing date on file.
        const watermark = options.filingsIndexedThrough === undefined ? undefined : yield* options.filingsIndexedThrough
        const indexedThrough = watermark ?? loaded.coverage.lastFiledAt ?? undefined
        return withUnavailable(
          {
            asset_id: entry.asset_id,
            symbol: entry.symbol,
            name: entry.name,
            class: entry.tier,
            ...freshness,
            baseline: { ...BASELINE, n, ...sourceFor(cik) },
            headline: {
              price_usd: price,
              market_cap_usd: marketCap(price, shares),
              pe_ttm: pe,
              return_24h_pct: returnPct
            },
            ...(indexedThrough === undefined ? {} : { filings_indexed_through: indexedThrough })
          },
          unavailable
        )
      })

    const price: PlaneForAsset = (entry) =>
      Effect.gen(function* () {
        const nowMs = yield* Clock.currentTimeMillis
        const cik = cikOf(entry)
        const loaded = yield* load(cik)
        if (loaded === undefined) return yield* Effect.fail(unknown(entry))
        const bars = yield* recentBars(cik, nowMs)
        const unavailable: Unavailable = {}
        const last = bars[bars.length - 1]
        if (last === undefined) {
          return {
            asset_id: entry.asset_id,
            ...(yield* freshnessOf(cik, loaded.coverage, bars, nowMs)),
            usd: null,
            unavailable: { usd: { reason: "no_data" as const, detail: "no daily bars on file" } }
          }
        }
        const ctx = priceContext(bars, unavailable)
        const shares = sharesOutstanding(
          yield* store.facts(cik, [
            "EntityCommonStockSharesOutstanding",
            "WeightedAverageNumberOfDilutedSharesOutstanding"
          ])
        )
        const quotes = { reason: "not_covered" as const, detail: "equity prices are daily bars; no quotes" }
        unavailable.bid_usd = quotes
        unavailable.ask_usd = quotes
        if (shares === null) unavailable.market_cap_usd = { reason: "no_data", detail: "no shares outstanding on file" }
        return withUnavailable(
          {
            asset_id: entry.asset_id,
            ...priceFreshness(last.tMs, nowMs, options.dailyCloseDelayed === true),
            usd: last.c,
            return_24h_pct: ctx.put("return_24h_pct", returnsPct(bars)),
            range_pos_7d_pct: ctx.put("range_pos_7d_pct", rangePos7dPct(bars)),
            bid_usd: null,
            ask_usd: null,
            market: { market_cap_usd: marketCap(last.c, shares) }
          },
          unavailable
        )
      })

    const technicals: PlaneForAsset = (entry, params) =>
      Effect.gen(function* () {
        const nowMs = yield* Clock.currentTimeMillis
        const cik = cikOf(entry)
        const loaded = yield* load(cik)
        if (loaded === undefined) return yield* Effect.fail(unknown(entry))
        const timeframe = typeof params.timeframe === "string" ? params.timeframe : "1d"
        const bars = yield* recentBars(cik, nowMs)
        const freshness = yield* freshnessOf(cik, loaded.coverage, bars, nowMs)
        const unavailable: Unavailable = {}
        if (timeframe !== "1d") {
          // Nothing to serve: refused \`not_covered\` (uncharged; in a batch, listed under \`refused\`).
          return yield* Effect.fail(
            apiError(
              "not_covered",
              `${entry.asset_id}: equity prices are daily bars; technicals serve timeframe=1d only`,
              { param: "timeframe" }
            )
          )
        }
        const hlc = { high: bars.map((b) => b.h), low: bars.map((b) => b.l), close: bars.map((b) => b.c) }
        const ctx = priceContext(bars, unavailable)
        const movingAverages: Record<string, number | null> = {}
        for (const p of MovingAveragePeriods) {
          const v = sma(hlc.close, p)[bars.length - 1]
          movingAverages[`sma_${p}`] = v === undefined || !Number.isFinite(v) ? null : round(v, 6)
        }
        return withUnavailable(
          {
            asset_id: entry.asset_id,
            ...freshness,
            timeframe,
            rsi_14: ctx.put("rsi_14", rsi(hlc.close)),
            adx_14: ctx.put("adx_14", adx(hlc).adx),
            atr_14_pct: ctx.put("atr_14_pct", atrPct(hlc)),
            moving_averages: movingAverages
          },
          unavailable
        )
      })

    const profile: PlaneForAsset = (entry) =>
      Effect.gen(function* () {
        const nowMs = yield* Clock.currentTimeMillis
        const cik = cikOf(entry)
        const loaded = yield* load(cik)
        if (loaded === undefined) return yield* Effect.fail(unknown(entry))
        const facts = yield* store.facts(cik, [
          "EntityCommonStockSharesOutstanding",
          "WeightedAverageNumberOfDilutedSharesOutstanding"
        ])
        const bars = yield* recentBars(cik, nowMs)
        const shares = sharesOutstanding(facts)
        const price = lastPrice(bars)
        const unavailable: Unavailable = {}
        const company = loaded.company
        const sector = sectorOfSic(company.sic)
        if (sector === null) unavailable.sector = { reason: "no_data", detail: "no SIC code on file" }
        if (shares === null) unavailable.shares_outstanding = { reason: "no_data", detail: "no share count filed" }
        const cap = marketCap(price, shares)
        if (cap === null) {
          unavailable.market_cap_usd =
            price === null
              ? { reason: "not_covered", detail: `tier \`${entry.tier}\` has no price feed` }
              : { reason: "no_data", detail: "no shares outstanding on file" }
        }
        // The market cap moves with the price: with one, the profile's clocks are the price's (its next update
        // is the next session close or open, not the next periodic report); without one, the filings'.
        const freshness =
          cap !== null
            ? yield* freshnessOf(cik, loaded.coverage, bars, nowMs)
            : filingsFreshness(yield* latestFilings(cik, loaded.coverage), nowMs, "periodic")
        return withUnavailable(
          {
            asset_id: entry.asset_id,
            ...freshness,
            name: company.name,
            tickers: company.tickers,
            exchanges: company.exchanges,
            sector,
            industry: company.sicDescription,
            sic: company.sic,
            fiscal_year_end: company.fiscalYearEnd,
            market_cap_usd: cap,
            shares_outstanding: shares?.shares ?? null,
            ...(shares === null
              ? {}
              : { shares_outstanding_as_of: shares.asOf, shares_outstanding_concept: shares.concept })
          },
          unavailable
        )
      })

    const valuationOp: PlaneForAsset = (entry) =>
      Effect.gen(function* () {
        const nowMs = yield* Clock.currentTimeMillis
        const cik = cikOf(entry)
        const loaded = yield* load(cik)
        if (loaded === undefined) return yield* Effect.fail(unknown(entry))
        const { facts, book } = yield* bookOf(cik)
        const bars = yield* recentBars(cik, nowMs)
        const shares = sharesOutstanding(facts)
        const v = valuation(book, lastPrice(bars), shares)
        const unavailable: Unavailable = {}
        // Percentiles of today's multiples among their daily values over the baseline year.
        const window = bars.slice(baselineStart(bars))
        const history = multipleHistory(
          book,
          shares,
          window.map((b) => ({ date: newYorkDate(b.tMs), close: b.c }))
        )
        const pctl = (name: string, value: string | null, series: ReadonlyArray<number>): number | null => {
          if (value === null) return null
          const baseline = sortedFinite(series)
          const p = percentileRank(Number(value), baseline)
          if (p !== undefined) return p
          unavailable[`${name}_pctl`] = {
            reason: "insufficient_history",
            detail: `${baseline.length} daily values in the ${BASELINE.window} baseline; at least 30 are needed`
          }
          return null
        }
        const pe = figure(v.peTtm, "pe_ttm", unavailable)
        const ps = figure(v.psTtm, "ps_ttm", unavailable)
        const ev = figure(v.evEbitdaTtm, "ev_ebitda_ttm", unavailable)
        return withUnavailable(
          {
            asset_id: entry.asset_id,
            ...(yield* freshnessOf(cik, loaded.coverage, bars, nowMs)),
            pe_ttm: pe,
            ps_ttm: ps,
            ev_ebitda_ttm: ev,
            price_usd: lastPrice(bars),
            pe_ttm_pctl: pctl("pe_ttm", pe, history.peTtm),
            ps_ttm_pctl: pctl("ps_ttm", ps, history.psTtm),
            ev_ebitda_ttm_pctl: pctl("ev_ebitda_ttm", ev, history.evEbitdaTtm),
            baseline: { ...BASELINE, n: window.length, ...sourceFor(cik) }
          },
          unavailable
        )
      })

    const filingsBased =
      (compute: (book: FactBook, unavailable: Unavailable) => object): PlaneForAsset =>
      (entry) =>
        Effect.gen(function* () {
          const nowMs = yield* Clock.currentTimeMillis
          const cik = cikOf(entry)
          const loaded = yield* load(cik)
          if (loaded === undefined) return yield* Effect.fail(unknown(entry))
          const { book } = yield* bookOf(cik)
          const unavailable: Unavailable = {}
          const fields = compute(book, unavailable)
          const freshness = filingsFreshness(yield* latestFilings(cik, loaded.coverage), nowMs, "periodic")
          return withUnavailable({ asset_id: entry.asset_id, ...freshness, ...fields }, unavailable)
        })

    const growthOp = filingsBased((book, unavailable) => {
      const g = growth(book)
      return {
        revenue_growth_yoy_pct: figure(g.revenueGrowthYoyPct, "revenue_growth_yoy_pct", unavailable),
        eps_growth_yoy_pct: figure(g.epsGrowthYoyPct, "eps_growth_yoy_pct", unavailable),
        free_cash_flow_growth_yoy_pct: figure(g.freeCashFlowGrowthYoyPct, "free_cash_flow_growth_yoy_pct", unavailable),
        ttm_end: g.revenueGrowthYoyPct.value === null ? null : g.revenueGrowthYoyPct.asOf
      }
    })

    const fundamentalsOp = filingsBased((book, unavailable) => {
      const f = fundamentals(book)
      return {
        revenue_ttm: figure(f.revenueTtm, "revenue_ttm", unavailable),
        eps_ttm: figure(f.epsTtm, "eps_ttm", unavailable),
        free_cash_flow_ttm: figure(f.freeCashFlowTtm, "free_cash_flow_ttm", unavailable),
        ttm_end: f.revenueTtm.value === null ? null : f.revenueTtm.asOf
      }
    })

    // -- calls -----------------------------------------------------------------------------------------------

    /** The admitted call's company (the `Planes` seam has already refused unknown and uncovered IDs). */
    const callTarget = (input: HandlerInput) =>
      Effect.gen(function* () {
        const assetId = String(input.params.id)
        const id = parseEquityId(assetId)
        const loaded = id === undefined ? undefined : yield* load(id.cik)
        if (id === undefined || loaded === undefined) {
          return yield* Effect.fail(
            apiError("unknown_asset", `no asset ${assetId}; find canonical IDs with \`resolve\``)
          )
        }
        return { assetId, cik: id.cik, ...loaded }
      })

    const answer = <A extends { readonly next_update_at: string }>(input: HandlerInput, data: A): HandlerOutput => ({
      _tag: "Json",
      body: { data },
      creditsCharged: chargeFor(input.op, {}),
      nextUpdateAtMs: Date.parse(data.next_update_at)
    })

    const cursorPosition = (input: HandlerInput): Effect.Effect<string | undefined, ApiError> => {
      const c = input.params.cursor
      if (typeof c !== "string") return Effect.succeed(undefined)
      const p = decodeCursor(input.op.name, input.params, c)
      return isApiError(p) ? Effect.fail(p) : Effect.succeed(p)
    }

    /**
     * Statement tables by company and parameters. Building one is the costly part of `financials` (about 5 ms
     * for 20 quarters); the facts' count and newest filing date stamp the version, so a new filing (which a
     * restatement always is) rebuilds it.
     */
    const tables = new Map<string, { readonly version: string; readonly table: ReturnType<typeof financialsTable> }>()
    const factsVersion = (facts: ReadonlyArray<{ readonly filed: string }>): string => {
      let newest = ""
      for (const f of facts) if (f.filed > newest) newest = f.filed
      return `${facts.length}:${newest}`
    }

    const financials: Handler = (input) =>
      Effect.gen(function* () {
        const nowMs = yield* Clock.currentTimeMillis
        const t = yield* callTarget(input)
        // `as_known_on` (beyond the contract, once the registry declares it): the statements as known that day,
        // before later restatements.
        const asKnownOn = typeof input.params.as_known_on === "string" ? input.params.as_known_on : undefined
        const facts = yield* store.facts(t.cik, FACT_CONCEPTS)
        const statements = (input.params.statements ?? ["income", "balance", "cash_flow"]) as ReadonlyArray<Statement>
        const kind = (input.params.period_kind ?? "annual") as PeriodKind
        const count = typeof input.params.periods === "number" ? input.params.periods : 4
        const withBasis = input.params.basis_concepts === true
        const key = `${t.cik}|${asKnownOn ?? ""}|${statements.join(",")}|${kind}|${count}`
        const version = factsVersion(facts)
        let cached = tables.get(key)
        if (cached?.version !== version) {
          const book = new FactBook(facts, asKnownOn === undefined ? {} : { asKnownOn })
          cached = { version, table: financialsTable(book, { statements, kind, count }) }
          if (tables.size >= 2_000) tables.clear()
          tables.set(key, cached)
        }
        const table = cached.table
        const values: Record<string, object> = {}
        for (const line of table.lines) {
          values[line.key] = {
            unit: line.unit,
            by_period: line.cells.map((c) => c?.value ?? null),
            ...(withBasis ? { basis_concepts: line.basisConcepts } : {})
          }
        }
        const freshness = filingsFreshness(yield* latestFilings(t.cik, t.coverage), nowMs, "periodic")
        const unavailable: Unavailable =
          table.periods.length === 0
            ? {
                financials: {
                  reason: "no_data",
                  detail:
                    t.coverage.facts === 0
                      ? "no XBRL facts of this company are on file (its companyfacts is not ingested yet)"
                      : `no ${kind} periods filed for ${statements.join(", ")}`
                }
              }
            : {}
        return answer(
          input,
          withUnavailable(
            {
              asset_id: t.assetId,
              ...freshness,
              ...(asKnownOn === undefined ? {} : { as_known_on: asKnownOn }),
              periods: table.periods.map((p) => ({
                id: p.id,
                form: p.form,
                accession: p.accession,
                filed_at: p.filedAt,
                restated: p.restated,
                start: p.start,
                end: p.end,
                derived: p.derived
              })),
              values
            },
            unavailable
          )
        )
      })

    const events: Handler = (input) =>
      Effect.gen(function* () {
        const nowMs = yield* Clock.currentTimeMillis
        const t = yield* callTarget(input)
        const types = (input.params.types ?? ["filings", "insider", "dividends", "splits"]) as ReadonlyArray<string>
        const since = typeof input.params.since === "string" ? input.params.since : undefined
        const form = typeof input.params.form === "string" ? input.params.form.toUpperCase() : undefined
        const limit = typeof input.params.limit === "number" ? input.params.limit : 50
        const after = yield* cursorPosition(input)
        const latest = yield* latestFilings(t.cik, t.coverage)
        const all: Array<EventRow> = []
        if (types.includes("filings")) {
          for (const f of latest.filings) {
            if (form !== undefined && f.form.toUpperCase() !== form) continue
            all.push(filingEvent(f))
          }
        }
        const reports = types.includes("insider") ? yield* store.ownershipReports(t.cik) : []
        if (types.includes("insider")) all.push(...insiderEvents(reports))
        if (types.includes("dividends") || types.includes("splits")) {
          const facts = yield* store.facts(t.cik, [...DIVIDEND_CONCEPTS, ...SPLIT_CONCEPTS])
          if (types.includes("dividends")) all.push(...dividendEvents(new FactBook(facts)))
          if (types.includes("splits")) all.push(...splitEvents(facts))
        }
        const selected = all
          .filter((e) => since === undefined || e.event.date >= since)
          .sort((a, b) => compareDesc(a, b))
        let start = 0
        if (after !== undefined) {
          const [key, uid] = splitPosition(after)
          start = selected.findIndex((e) => e.key < key || (e.key === key && e.uid < uid))
          if (start < 0) start = selected.length
        }
        const page = selected.slice(start, start + limit)
        const lastRow = page[page.length - 1]
        const more = start + limit < selected.length && lastRow !== undefined
        const summary = types.includes("insider") ? insiderSummary(reports, newYorkDate(nowMs)) : undefined
        return answer(input, {
          asset_id: t.assetId,
          ...filingsFreshness(latest, nowMs, "stream"),
          events: page.map((e) => e.event),
          ...(summary === undefined
            ? {}
            : {
                insider_summary_90d: {
                  open_market_buys: summary.openMarketBuys,
                  open_market_sales: summary.openMarketSales,
                  net_shares: summary.netShares,
                  unique_insiders: summary.uniqueInsiders,
                  from: summary.from,
                  through: summary.through
                }
              }),
          next_cursor: more ? encodeCursor(input.op.name, input.params, `${lastRow.key}|${lastRow.uid}`) : null
        })
      })

    const holders: Handler = (input) =>
      Effect.gen(function* () {
        const nowMs = yield* Clock.currentTimeMillis
        const t = yield* callTarget(input)
        const limit = typeof input.params.limit === "number" ? input.params.limit : 25
        const after = yield* cursorPosition(input)
        const offset = after === undefined ? 0 : Number(after)
        if (!Number.isSafeInteger(offset) || offset < 0) {
          return yield* Effect.fail(
            apiError("invalid_cursor", "`cursor` is not a cursor this service issued", { param: "cursor" })
          )
        }
        const held = yield* store.holdings(t.cik)
        const shares = sharesOutstanding(
          yield* store.facts(t.cik, [
            "EntityCommonStockSharesOutstanding",
            "WeightedAverageNumberOfDilutedSharesOutstanding"
          ])
        )
        const out = holdersOf(held.reports, held.holdings, shares?.shares ?? null)
        const page = out.rows.slice(offset, offset + limit)
        const unavailable: Unavailable = {}
        if (out.rows.length === 0)
          unavailable.holders = { reason: "no_data", detail: "no 13F report on file lists this company" }
        if (shares === null && out.rows.length > 0) {
          unavailable.pct_of_shares_outstanding = { reason: "no_data", detail: "no shares outstanding on file" }
        }
        const latest = yield* latestFilings(t.cik, t.coverage)
        const lastReportMs = out.rows.reduce((m, r) => Math.max(m, Date.parse(`${r.filedAt}T00:00:00Z`)), 0)
        const freshness = filingsFreshness(
          {
            acceptedMs: lastReportMs > 0 ? lastReportMs : latest.acceptedMs,
            lastPeriodicFiled: latest.lastPeriodicFiled
          },
          nowMs,
          "stream"
        )
        return answer(
          input,
          withUnavailable(
            {
              asset_id: t.assetId,
              ...freshness,
              report_period: out.reportPeriod,
              holders: page.map((h) => ({
                filer_cik: h.filerCik,
                name: h.name,
                shares: h.shares,
                value_usd: h.valueUsd,
                pct_of_shares_outstanding: h.pctOfSharesOutstanding,
                change_shares: h.changeShares,
                filed_at: h.filedAt,
                report_period: h.reportPeriod,
                form: h.form,
                accession: h.accession
              })),
              ...(shares === null ? {} : { shares_outstanding: shares.shares, shares_outstanding_as_of: shares.asOf }),
              next_cursor:
                offset + limit < out.rows.length
                  ? encodeCursor(input.op.name, input.params, String(offset + limit))
                  : null
            },
            unavailable
          )
        )
      })

    const series: Handler = (input) =>
      Effect.gen(function* () {
        const nowMs = yield* Clock.currentTimeMillis
        const t = yield* callTarget(input)
        const view = input.params.view === "summary" ? "summary" : "bars"
        const range = typeof input.params.range === "string" ? input.params.range : "1y"
        const interval = typeof input.params.interval === "string" ? input.params.interval : "1d"
        const limit = typeof input.params.limit === "number" ? input.params.limit : 120
        const after = yield* cursorPosition(input)
        const fromMs = rangeStartMs(range, nowMs)
        const toMs = closedBarsThroughMs(nowMs)
        const all = yield* store.bars(t.cik, fromMs === undefined ? { toMs } : { fromMs, toMs })
        const last = all[all.length - 1]
        const freshness =
          last === undefined
            ? filingsFreshness(yield* latestFilings(t.cik, t.coverage), nowMs, "periodic")
            : priceFreshness(last.tMs, nowMs, options.dailyCloseDelayed === true)
        const base = { asset_id: t.assetId, ...freshness, interval, range }
        if (interval !== "1d" && interval !== "1w" && interval !== "1mo") {
          // An empty answer would serve nothing: refused \`not_covered\`, uncharged, like a not-covered \`id\`.
          return yield* Effect.fail(
            apiError(
              "not_covered",
              `${t.assetId}: equity prices are daily bars; series serves interval 1d, 1w or 1mo`,
              { param: "interval" }
            )
          )
        }
        const bars = aggregateDaily(all, interval)
        if (view === "summary") {
          const summary = summarize(bars, interval)
          return answer(
            input,
            summary === undefined
              ? {
                  ...base,
                  summary: {},
                  unavailable: { summary: { reason: "no_data" as const, detail: "no bars in range" } }
                }
              : { ...base, summary }
          )
        }
        let end = bars.length
        if (after !== undefined) {
          const before = Number(after)
          if (!Number.isSafeInteger(before)) {
            return yield* Effect.fail(
              apiError("invalid_cursor", "`cursor` is not a cursor this service issued", { param: "cursor" })
            )
          }
          end = bars.findIndex((b) => b.tMs >= before)
          if (end < 0) end = bars.length
        }
        const page = bars.slice(Math.max(0, end - limit), end)
        const first = page[0]
        const more = first !== undefined && end - limit > 0
        return answer(
          input,
          withUnavailable(
            {
              ...base,
              bars: page.map((b) => ({ t: iso(b.tMs), o: b.o, h: b.h, l: b.l, c: b.c, v: b.v })),
              next_cursor: more ? encodeCursor(input.op.name, input.params, String(first.tMs)) : null
            },
            bars.length === 0 ? { bars: { reason: "no_data", detail: "no daily bars in range" } } : {}
          )
        )
      })

    const perAsset = new Map<string, PlaneForAsset>([
      ["read", read],
      ["price", price],
      ["technicals", technicals],
      ["profile", profile],
      ["valuation", valuationOp],
      ["growth", growthOp],
      ["fundamentals", fundamentalsOp]
    ])
    const calls = new Map<string, Handler>([
      ["financials", financials],
      ["events", events],
      ["holders", holders],
      ["series", series]
    ])
    const bySource = options.sourceOf
    const sourceOf =
      bySource === undefined
        ? {}
        : {
            sourceOf: (assetId: string) => {
              const id = parseEquityId(assetId)
              return id === undefined ? undefined : bySource(id.cik)
            }
          }
    return { plane: "equity" as const, perAsset, calls, directory, lookup, ...sourceOf }
  })

const unknown = (entry: DirectoryEntry): ApiError =>
  apiError("unknown_asset", `no asset ${entry.asset_id}; find canonical IDs with \`resolve\``)

// ---------------------------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------------------------

interface EventRow {
  /** Sort key, newest first: acceptance time for filings, the event date (00:00 UTC) for the others. */
  readonly key: string
  /** Tie-breaker, unique within a company's events. */
  readonly uid: string
  readonly event: { readonly type: string; readonly date: string } & Record<string, unknown>
}

const compareDesc = (a: EventRow, b: EventRow): number =>
  a.key !== b.key ? (a.key < b.key ? 1 : -1) : a.uid === b.uid ? 0 : a.uid < b.uid ? 1 : -1

const splitPosition = (p: string): readonly [string, string] => {
  const i = p.indexOf("|")
  return i < 0 ? [p, ""] : [p.slice(0, i), p.slice(i + 1)]
}

const filingEvent = (f: Filing): EventRow => ({
  key: f.acceptedAt,
  uid: `filings:${f.accession}`,
  event: {
    type: "filings",
    date: f.filedAt,
    form: f.form,
    accession: f.accession,
    filed_at: f.filedAt,
    accepted_at: f.acceptedAt,
    url: f.url,
    report_date: f.reportDate,
    description: f.primaryDocDescription,
    items: f.items
  }
})

const insiderEvents = (reports: Parameters<typeof insiderTrades>[0]): Array<EventRow> =>
  insiderTrades(reports).map(({ report, transaction: t }, i) => {
    const owner = report.owners[0]
    const roles = report.owners.flatMap((o) => [
      ...(o.isDirector ? ["director"] : []),
      ...(o.isOfficer ? [o.officerTitle ?? "officer"] : []),
      ...(o.isTenPercentOwner ? ["10% owner"] : []),
      ...(o.isOther ? ["other"] : [])
    ])
    return {
      key: `${t.transactionDate}T00:00:00.000Z`,
      uid: `insider:${report.accession}:${String(report.transactions.indexOf(t)).padStart(4, "0")}:${i}`,
      event: {
        type: "insider",
        date: t.transactionDate,
        accession: report.accession,
        form: report.form,
        filed_at: report.filedAt,
        insider_cik: owner?.cik ?? null,
        insider_name: owner?.name ?? null,
        insider_roles: [...new Set(roles)],
        code: t.code,
        open_market: t.table === "non_derivative" && (t.code === "P" || t.code === "S"),
        acquired_disposed: t.acquiredDisposed,
        shares: t.shares,
        price_usd: t.pricePerShare,
        shares_owned_after: t.sharesOwnedAfter,
        direct_indirect: t.directIndirect,
        security_title: t.securityTitle,
        table: t.table
      }
    }
  })

/** The cited fact per period of the given facts (`citedOf`: the latest periodic report's, else the latest). */
const latestPerPeriod = (facts: ReadonlyArray<Fact>): Array<Fact> => {
  const by = new Map<string, Array<Fact>>()
  for (const f of facts) {
    const k = `${f.start ?? ""}|${f.end}`
    by.set(k, [...(by.get(k) ?? []), f])
  }
  return [...by.values()].map((xs) => citedOf(xs))
}

/**
 * Dividends declared per share by fiscal quarter (filed, or a fourth quarter derived as FY - nine months and
 * flagged), dated at the quarter's end.
 */
const dividendEvents = (book: FactBook): Array<EventRow> => {
  const line = lineItem("dividends_declared_per_share")
  const out: Array<EventRow> = []
  for (const q of book.periods("quarter")) {
    const cell = book.cell(line, q)
    if (cell === null) continue
    out.push({
      key: `${q.end}T00:00:00.000Z`,
      uid: `dividends:${q.end}`,
      event: {
        type: "dividends",
        date: q.end,
        period_start: q.start,
        period_end: q.end,
        per_share_usd: cell.value,
        concept: cell.concepts[0] ?? null,
        derived: cell.derived,
        form: cell.form,
        accession: cell.accession,
        filed_at: cell.filed
      }
    })
  }
  return out
}

/** Stock splits from the split-ratio facts, one per date. */
const splitEvents = (facts: ReadonlyArray<Fact>): Array<EventRow> => {
  const splits = facts.filter((f) => SPLIT_CONCEPTS.includes(f.concept))
  const byDate = new Map<string, Fact>()
  for (const f of latestPerPeriod(splits)) {
    const cur = byDate.get(f.end)
    if (cur === undefined || f.filed > cur.filed) byDate.set(f.end, f)
  }
  return [...byDate.values()].map((f) => ({
    key: `${f.end}T00:00:00.000Z`,
    uid: `splits:${f.end}`,
    event: {
      type: "splits",
      date: f.end,
      ratio: f.value,
      concept: f.concept,
      form: f.form,
      accession: f.accession,
      filed_at: f.filed
    }
  }))
}

// ---------------------------------------------------------------------------------------------------------------
// Series
// ---------------------------------------------------------------------------------------------------------------

/** Start of a `series` range (undefined for `max`). */
export const rangeStartMs = (range: string, nowMs: number): number | undefined => {
  const days: Record<string, number> = { "1w": 7, "1mo": 31, "3mo": 92, "6mo": 183, "1y": 365, "5y": 1826 }
  if (range === "max") return undefined
  if (range === "ytd") return Date.parse(`${newYorkDate(nowMs).slice(0, 4)}-01-01T00:00:00Z`)
  return nowMs - (days[range] ?? 365) * DAY_MS
}

/** Periods per year of an interval, for annualizing volatility. */
const PER_YEAR: Record<string, number> = { "1d": 252, "1w": 52, "1mo": 12 }

/**
 * The summary view: first and last close, return, high, low, maximum drawdown (peak close to later trough
 * close), realized volatility (sample standard deviation of log returns between bars, annualized) and count.
 */
export const summarize = (bars: ReadonlyArray<DailyBar>, interval: string) => {
  const first = bars[0]
  const last = bars[bars.length - 1]
  if (first === undefined || last === undefined) return undefined
  let peak = first.c
  let drawdown = 0
  for (const b of bars) {
    peak = Math.max(peak, b.c)
    drawdown = Math.max(drawdown, (peak - b.c) / peak)
  }
  const logs = bars.slice(1).map((b, i) => Math.log(b.c / (bars[i] as DailyBar).c))
  const mean = logs.reduce((s, x) => s + x, 0) / Math.max(1, logs.length)
  const variance = logs.length < 2 ? Number.NaN : logs.reduce((s, x) => s + (x - mean) ** 2, 0) / (logs.length - 1)
  const vol = Math.sqrt(variance) * Math.sqrt(PER_YEAR[interval] ?? 252) * 100
  return {
    from: iso(first.tMs),
    to: iso(last.tMs),
    first_close: first.c,
    last_close: last.c,
    return_pct: round((last.c / first.c - 1) * 100, 6),
    high: Math.max(...bars.map((b) => b.h)),
    low: Math.min(...bars.map((b) => b.l)),
    max_drawdown_pct: round(drawdown * 100, 6),
    realized_volatility_pct: Number.isFinite(vol) ? round(vol, 6) : null,
    bar_count: bars.length
  }
}
