/**
 * The equities' daily price connector: daily bars for every equity asset the store holds (`EquityStore.issuers`,
 * the list the equity directory serves: stored companies, every CIK of the ticker list, every Form 4 issuer with a
 * ticker) from Yahoo Finance's chart endpoint, written with `EquityStore.putBars`, the store path
 * `market-data ingest prices` writes through (bars keyed by session open; a repeated bar replaces the stored one).
 *
 * Every ticker is its own series (`eq:<cik>:<ticker>`, bars keyed by CIK and ticker): share classes (BRK-A and
 * BRK-B, GOOGL and GOOG) trade at their own prices. So every ticker of every issuer is fetched, one request per
 * ticker, each written under its own ticker. A ticker the source does not know (a warrant, a preferred or a note line
 * Yahoo does not carry, a delisted symbol) is a per-ticker problem named in the status detail; the issuer's other
 * tickers are fetched all the same. An issuer with no ticker at all (a Form 4 issuer whose reports name none) has
 * nothing to fetch: it is skipped and counted in the status detail.
 *
 * Source: `GET <base>/v8/finance/chart/<TICKER>?period1=<s>&period2=<s>&interval=1d&events=div,split`
 * (default base `https://query1.finance.yahoo.com`). Keyless, but unofficial and undocumented: Yahoo publishes no
 * terms for programmatic use of it (its general terms allow personal, non-commercial use), no rate limit, and may
 * change or withdraw it without notice. The answer is JSON `{"chart": {"result": [{"meta", "timestamp": [s...],
 * "events"?: {"splits", "dividends"}, "indicators": {"quote": [{"open", "high", "low", "close", "volume"}]}}]}}`;
 * each timestamp is the session's open; prices are split-adjusted (not dividend-adjusted), float32-rounded,
 * and read to the `meta.priceHint` decimals (default 4). A session's bar is published after its close, so the
 * newest price is always the previous session's close (the equity plane's `delayed` status while the market trades).
 *
 * Why this source: the candidates with real recorded samples were Yahoo's chart JSON and Stooq's daily CSV; Stooq's
 * download reportedly now wants a key behind a CAPTCHA and answers non-browser clients with an HTML proof-of-work
 * page (status 200), so only Yahoo is keyless today.
 *
 * What counts as a source failure (the pass stops, the status of venue `yahoo`, component `bars` says `failing` with
 * the error, and the backoff retries, honouring `Retry-After`): any non-2xx other than 404 (403, 429, 503 ...), a
 * timeout, a network error, and a 2xx body that is not the chart JSON (an HTML page answered with 200, such as a
 * consent, CAPTCHA or proof-of-work page, is never parsed as prices). Per ticker, not a source failure: 404 or a chart
 * `error` (an unknown or delisted symbol), and bad rows (a null or non-positive price, a high below the low): those
 * rows are skipped and named in the status `detail`.
 *
 * Incremental and spread over time: a pass reads the issuer list once (one grouped query per table, with each
 * ticker's newest bar), then fetches only the tickers whose newest stored bar is older than the last closed
 * session, at most once per closed session, through one limiter (`MARKET_DATA_PRICES_PER_MINUTE` requests per
 * minute, one at a time; at the default 60, the first backfill of the whole ticker list, about 10,000 tickers (one
 * request each), takes about three hours, and each later pass fetches each ticker once after each close);
 * a ticker with no bars
 * gets `backfillDays` of history, the others the days
 * since their newest bar (plus a week of overlap, so a corrected bar replaces the stored one). Only bars of closed
 * sessions are stored. A split inside a fetched range (new to this process) re-fetches the ticker's whole stored range,
 * so its history stays on one split basis.
 */
import type { DailyBar, EquityStore, MarketStore } from "@market-data/core"
import { Equity, PRICES_VENUE } from "@market-data/core"
import { Decimal } from "decimal.js"
import { Clock, Effect, Result } from "effect"
import { type ComponentRef, recordFailure, recordSuccess, sourceErrorText } from "./Health.ts"
import { fetchText, SourceError } from "./Http.ts"
import { makeLimiter, type RequestLimiter } from "./Limiter.ts"

export const PRICES_DEFAULT_BASE_URL = "https://query1.finance.yahoo.com"
/** Default request rate: one request per second. */
export const PRICES_DEFAULT_PER_MINUTE = 60
/** History fetched for a ticker with no bars (enough for a 200-bar average and a one-year baseline). */
export const PRICES_BACKFILL_DAYS = 550

const DAY_MS = 86_400_000

/** How often a pass runs (a pass fetches only tickers behind the last closed session). */
export const PRICES_POLL_MS = 15 * 60_000
/** The connector's health in the status model: venue `yahoo`, component `bars`, daily data. */
export const PRICES_BARS: ComponentRef = { venue: PRICES_VENUE, component: "bars", cadenceMs: DAY_MS }
/** A long pass records its progress (a success as of the pass's start) after every this many fetched tickers. */
const PROGRESS_EVERY = 25
/** Days re-read before the newest stored bar on an incremental fetch. */
const OVERLAP_DAYS = 7

export interface PriceFeedOptions {
  readonly baseUrl: string
  readonly timeoutMs: number
  readonly backfillDays: number
  /** `User-Agent` sent with every request. */
  readonly userAgent: string
}

/** The connector's limiter: `perMinute` requests per minute, one at a time (no bursts). */
export const makePriceLimiter = (perMinute: number): RequestLimiter =>
  makeLimiter({ capacity: 1, windowMs: Math.max(1, Math.round(60_000 / perMinute)) })

/** A chart answer read: its good bars (oldest first), the reasons rows were skipped, and split times (ms). */
export interface ChartBars {
  readonly bars: ReadonlyArray<DailyBar>
  readonly skipped: ReadonlyArray<string>
  readonly splitsMs: ReadonlyArray<number>
}

/** Why a 2xx answer is not a chart: `blocked` (a page, not data: a source failure) or `symbol` (no such symbol). */
export type ChartProblem = { readonly kind: "blocked" | "symbol"; readonly message: string }

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

/**
 * Reads a Yahoo v8 chart answer. A body that is not JSON (an HTML page), or JSON that is not a chart, is `blocked`;
 * a chart naming an error or holding no result is `symbol`. Rows with a missing, non-finite or non-positive price, a
 * high below the open, close or low, or a low above the open or close, or dated on a weekend, are skipped with their
 * reason (a weekday the market calendar has closed is kept, as `ingest prices` keeps it: the source published it).
 */
export const parseYahooChart = (text: string): Result.Result<ChartBars, ChartProblem> => {
  const head = text.trimStart().slice(0, 200)
  if (head.startsWith("<") || /<html|<!doctype/i.test(head)) {
    return Result.fail({ kind: "blocked", message: `an HTML page, not chart data: ${head.slice(0, 80)}` })
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return Result.fail({ kind: "blocked", message: `not JSON: ${head.slice(0, 80)}` })
  }
  const chart = isRecord(json) ? json.chart : undefined
  if (!isRecord(chart)) return Result.fail({ kind: "blocked", message: "JSON without a chart object" })
  if (isRecord(chart.error)) {
    const e = chart.error
    return Result.fail({
      kind: "symbol",
      message: `${String(e.code ?? "error")}: ${String(e.description ?? "")}`.slice(0, 200)
    })
  }
  const result = Array.isArray(chart.result) ? chart.result[0] : undefined
  if (!isRecord(result)) return Result.fail({ kind: "symbol", message: "the chart holds no result" })
  const meta = isRecord(result.meta) ? result.meta : {}
  const hint = typeof meta.priceHint === "number" && Number.isInteger(meta.priceHint) ? meta.priceHint : 4
  const decimals = Math.min(Math.max(hint, 2), 8)
  const timestamps = result.timestamp === undefined ? [] : result.timestamp
  const indicators = isRecord(result.indicators) ? result.indicators : undefined
  const quote = indicators !== undefined && Array.isArray(indicators.quote) ? indicators.quote[0] : undefined
  if (!Array.isArray(timestamps) || (timestamps.length > 0 && !isRecord(quote))) {
    return Result.fail({ kind: "blocked", message: "a chart without timestamp and indicators.quote arrays" })
  }
  const column = (name: string): ReadonlyArray<unknown> => {
    const c = isRecord(quote) ? quote[name] : undefined
    return Array.isArray(c) ? c : []
  }
  const [open, high, low, close, volume] = ["open", "high", "low", "close", "volume"].map(column) as [
    ReadonlyArray<unknown>,
    ReadonlyArray<unknown>,
    ReadonlyArray<unknown>,
    ReadonlyArray<unknown>,
    ReadonlyArray<unknown>
  ]
  const price = (v: unknown): number =>
    typeof v === "number" && Number.isFinite(v) ? new Decimal(v).toDecimalPlaces(decimals).toNumber() : Number.NaN
  const bars = new Map<number, DailyBar>()
  const skipped: Array<string> = []
  timestamps.forEach((ts, i) => {
    if (typeof ts !== "number" || !Number.isFinite(ts)) {
      skipped.push(`row ${i}: timestamp ${JSON.stringify(ts)} is not a number`)
      return
    }
    const date = Equity.newYorkDate(ts * 1000)
    // As `ingest prices`: a bar on a weekday the calendar has closed is kept (the source published it); a weekend
    // date is not a session.
    const closed = Equity.closedReason(Equity.dayOf(date))
    if (closed === "Saturday" || closed === "Sunday") {
      skipped.push(`${date}: a ${closed}, not a US session`)
      return
    }
    const [o, h, l, c] = [price(open[i]), price(high[i]), price(low[i]), price(close[i])] as [
      number,
      number,
      number,
      number
    ]
    const v = typeof volume[i] === "number" && Number.isFinite(volume[i]) ? (volume[i] as number) : Number.NaN
    if (!(o > 0 && h > 0 && l > 0 && c > 0)) skipped.push(`${date}: a price is missing or not above 0`)
    else if (!(v >= 0)) skipped.push(`${date}: volume is missing`)
    else if (h < Math.max(o, c, l)) skipped.push(`${date}: high ${h} is below open, close or low`)
    else if (l > Math.min(o, c)) skipped.push(`${date}: low ${l} is above open or close`)
    else {
      const tMs = Equity.sessionOpenMs(date)
      bars.set(tMs, { tMs, o, h, l, c, v })
    }
  })
  const events = isRecord(result.events) ? result.events : {}
  const splits = isRecord(events.splits) ? Object.values(events.splits) : []
  const splitsMs = splits
    .map((s) => (isRecord(s) && typeof s.date === "number" ? s.date * 1000 : Number.NaN))
    .filter((ms) => Number.isFinite(ms))
  return Result.succeed({ bars: [...bars.values()].sort((a, b) => a.tMs - b.tMs), skipped, splitsMs })
}

/** One ticker the connector fetches: its issuer's CIK, the ticker, and its newest stored bar. */
export interface PriceTarget {
  readonly cik: string
  readonly ticker: string
  /** The newest stored bar's open of this ticker (null: none), as the store's issuer list reports it. */
  readonly lastBarMs: number | null
}

/** Every ticker of every issuer the store holds, as the connector fetches it, and the CIKs with no ticker. */
export interface PriceTargets {
  readonly targets: ReadonlyArray<PriceTarget>
  readonly withoutTicker: ReadonlyArray<string>
}

/** The store's issuers (`EquityStore.issuers`, by CIK) as price targets, each ticker its own; one read of the store. */
export const priceTargets = (store: EquityStore["Service"]): Effect.Effect<PriceTargets> =>
  Effect.map(store.issuers, (issuers) => {
    const targets: Array<PriceTarget> = []
    const withoutTicker: Array<string> = []
    for (const { company, coverage } of issuers) {
      const tickers = [...new Set(company.tickers.filter((t) => t !== ""))]
      if (tickers.length === 0) withoutTicker.push(company.cik)
      const newest = new Map(coverage.tickerBars.map((t) => [t.ticker, t.lastBarMs]))
      for (const ticker of tickers) targets.push({ cik: company.cik, ticker, lastBarMs: newest.get(ticker) ?? null })
    }
    return { targets, withoutTicker }
  })

/** What one pass did. */
export interface PricePassReport {
  /** Equity assets (tickers) visited (0: the store holds none yet, and nothing is recorded). */
  readonly targets: number
  /** Tickers fetched this pass. */
  readonly fetched: number
  /** Bars written (new or replaced). */
  readonly bars: number
  /** Tickers already holding the last closed session, or already tried for it. */
  readonly upToDate: number
  /** Issuers skipped because nothing names a ticker for them (Form 4 issuers whose reports give none). */
  readonly withoutTicker: number
  /** Per-ticker problems (unknown symbols, skipped rows), for the status detail and the log. */
  readonly problems: ReadonlyArray<string>
}

export const makePriceFeed = (
  store: EquityStore["Service"],
  options: PriceFeedOptions,
  limiter: RequestLimiter = makePriceLimiter(PRICES_DEFAULT_PER_MINUTE)
) => {
  /** `cik|ticker` -> the last closed session it was fetched for (a ticker with no newer bar is not asked again). */
  const triedFor = new Map<string, string>()
  /** `cik|ticker|split ms` of splits whose whole range was re-fetched by this process. */
  const splitsDone = new Set<string>()

  const chart = (ticker: string, fromMs: number, toMs: number) =>
    Effect.andThen(
      limiter.take(1),
      fetchText({
        source: "yahoo",
        url: `${options.baseUrl}/v8/finance/chart/${encodeURIComponent(ticker)}?period1=${Math.floor(fromMs / 1000)}&period2=${Math.ceil(toMs / 1000)}&interval=1d&events=div%2Csplit&includePrePost=false`,
        timeoutMs: options.timeoutMs,
        headers: { "User-Agent": options.userAgent, Accept: "application/json" }
      })
    )

  /**
   * The chart of one ticker, read: a source failure fails; an unknown symbol (404 or a chart error) is a per-ticker
   * problem (`undefined`).
   */
  const readChart = (
    ticker: string,
    fromMs: number,
    toMs: number,
    problems: Array<string>
  ): Effect.Effect<ChartBars | undefined, SourceError> =>
    Effect.gen(function* () {
      const text = yield* chart(ticker, fromMs, toMs).pipe(
        Effect.catchIf(
          (e) => e.kind === "status" && e.status === 404,
          (e) => Effect.succeed(e)
        )
      )
      if (typeof text !== "string") {
        problems.push(`${ticker}: not found (HTTP 404)`)
        return undefined
      }
      const parsed = parseYahooChart(text)
      if (Result.isSuccess(parsed)) return parsed.success
      if (parsed.failure.kind === "symbol") {
        problems.push(`${ticker}: ${parsed.failure.message}`)
        return undefined
      }
      return yield* Effect.fail(
        new SourceError({
          source: "yahoo",
          kind: "format",
          what: `GET /v8/finance/chart/${ticker}`,
          message: parsed.failure.message
        })
      )
    })

  /**
   * Fetches and stores the bars of closed sessions of one ticker, under that ticker; returns the bars written. When
   * the source does not know the ticker, its reason is a problem.
   */
  const fetchTicker = (
    target: PriceTarget,
    nowMs: number,
    problems: Array<string>
  ): Effect.Effect<number, SourceError> =>
    Effect.gen(function* () {
      const { cik, ticker, lastBarMs } = target
      const throughMs = Equity.closedBarsThroughMs(nowMs)
      const fromMs = lastBarMs === null ? nowMs - options.backfillDays * DAY_MS : lastBarMs - OVERLAP_DAYS * DAY_MS
      const read = yield* readChart(ticker, fromMs, nowMs, problems)
      if (read === undefined) return 0
      if (read.skipped.length > 0) {
        problems.push(`${ticker}: ${read.skipped.length} rows skipped (${read.skipped.slice(0, 3).join("; ")})`)
      }
      let bars = read.bars
      // A split new to this process, when older bars are stored: they are on the old basis. Re-read the whole
      // stored range (the source answers it split-adjusted) so the history stays on one basis.
      const freshSplits = read.splitsMs.filter((ms) => !splitsDone.has(`${cik}|${ticker}|${ms}`))
      if (freshSplits.length > 0 && lastBarMs !== null) {
        const first = (yield* store.bars(cik, ticker, {}))[0]
        if (first !== undefined && first.tMs < fromMs) {
          const whole = yield* readChart(ticker, first.tMs - DAY_MS, nowMs, problems)
          if (whole === undefined) return 0
          bars = whole.bars
        }
      }
      for (const ms of freshSplits) splitsDone.add(`${cik}|${ticker}|${ms}`)
      const closed = bars.filter((b) => b.tMs <= throughMs)
      if (closed.length === 0) return 0
      yield* store.putBars(cik, ticker, closed)
      return closed.length
    })

  /**
   * One pass over every equity asset (see the module comment). Fails with the first source failure (what was
   * fetched before it stays stored; the next pass resumes from the store). `onProgress` runs after every fetched
   * ticker, so a long pass can report its progress.
   */
  const pass = (onProgress: (report: PricePassReport) => Effect.Effect<void> = () => Effect.void) =>
    Effect.gen(function* () {
      const nowMs = yield* Clock.currentTimeMillis
      const session = Equity.lastClosedSession(nowMs)
      const throughMs = Equity.closedBarsThroughMs(nowMs)
      const { targets, withoutTicker } = yield* priceTargets(store)
      const problems: Array<string> = []
      let fetched = 0
      let bars = 0
      let upToDate = 0
      const report = (): PricePassReport => ({
        targets: targets.length,
        fetched,
        bars,
        upToDate,
        withoutTicker: withoutTicker.length,
        problems
      })
      for (const target of targets) {
        const key = `${target.cik}|${target.ticker}`
        if (triedFor.get(key) === session) {
          upToDate++
          continue
        }
        if (target.lastBarMs !== null && target.lastBarMs >= throughMs) {
          upToDate++
          continue
        }
        bars += yield* fetchTicker(target, nowMs, problems)
        fetched++
        triedFor.set(key, session)
        yield* onProgress(report())
      }
      return report()
    })

  return { pass, fetchTicker, limiter }
}

export type PriceFeed = ReturnType<typeof makePriceFeed>

const problemsDetail = (report: PricePassReport): string | undefined => {
  const parts: Array<string> = []
  const problems = report.problems
  if (problems.length > 0) {
    parts.push(`${problems.length} not loaded: ${problems.slice(0, 5).join("; ")}${problems.length > 5 ? "; ..." : ""}`)
  }
  if (report.withoutTicker > 0) {
    parts.push(
      `${report.withoutTicker} ${report.withoutTicker === 1 ? "issuer" : "issuers"} without a ticker skipped (Form 4 issuers whose reports name none)`
    )
  }
  return parts.length === 0 ? undefined : parts.join("; ")
}

/**
 * One pass with its health recorded in the market store's status (venue `yahoo`, component `bars`): a success as
 * of the pass's start (also every few fetched tickers of a long pass; none while the store holds no equity asset),
 * its per-ticker problems in `detail`; a
 * source failure marks the component failing with the error, and fails (the caller backs off and retries).
 */
export const runPricePass = (
  feed: PriceFeed,
  market: MarketStore["Service"]
): Effect.Effect<PricePassReport, SourceError> =>
  Effect.gen(function* () {
    const startMs = yield* Clock.currentTimeMillis
    const report = yield* feed.pass((r) =>
      r.fetched % PROGRESS_EVERY === 0
        ? recordSuccess(market, PRICES_BARS, { newestMs: startMs, detail: problemsDetail(r) })
        : Effect.void
    )
    // With no equity asset yet there is nothing to vouch for: no status until the first pass that has work.
    if (report.targets > 0) {
      yield* recordSuccess(market, PRICES_BARS, { newestMs: startMs, detail: problemsDetail(report) })
    }
    return report
  }).pipe(Effect.tapError((e) => recordFailure(market, PRICES_BARS, sourceErrorText(e))))
