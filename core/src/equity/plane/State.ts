/**
 * The equity plane's shared state, created once per plane (`makeEquityState`): the store it reads, the options,
 * the statement-table cache, and the reads every operation family shares (the issuer, its facts, filings and
 * recent bars, the answer's freshness), with the plain helpers the families print with (`unavailable`, figures,
 * market cap, price percentiles). The families (`Read.ts`, `Price.ts`, `Technicals.ts`, `Profile.ts`,
 * `Valuation.ts`, `Fundamentals.ts`, `Financials.ts`, `Events.ts`, `Holders.ts`, `Series.ts`, `Directory.ts`) read
 * it over the per-company preamble of `Operation.ts`; `../EquityPlane.ts` assembles them.
 */
import { Effect } from "effect"
import { type ApiError, apiError } from "../../Errors.ts"
import type { DirectoryEntry } from "../../Planes.ts"
import type { CompanyCoverage, DailyBar, EquityStore } from "../EquityStore.ts"
import { fromNumber } from "../Exact.ts"
import type { Company, Fact, Filing } from "../Model.ts"
import { FactBook, type financialsTable, LineItems } from "../Statements.ts"
import type { Figure, SharesOutstanding, UnavailableReason } from "../Valuation.ts"
import { closedBarsThroughMs, DAY_MS, type Freshness, filingsFreshness, priceFreshness } from "./Freshness.ts"
import { BASELINE, baselineStart, contextual } from "./Measures.ts"

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

export type Unavailable = Record<string, { readonly reason: UnavailableReason; readonly detail?: string }>

/** Concepts the equity operations read beyond the statement lines. */
export const DIVIDEND_CONCEPTS: ReadonlyArray<string> = [
  "CommonStockDividendsPerShareDeclared",
  "CommonStockDividendsPerShareCashPaid"
]
export const SPLIT_CONCEPTS: ReadonlyArray<string> = [
  "StockholdersEquityNoteStockSplitConversionRatio1",
  "StockholdersEquityNoteStockSplitConversionRatio"
]
export const FACT_CONCEPTS: ReadonlyArray<string> = [
  ...new Set([
    ...LineItems.flatMap((l) => l.concepts),
    "EntityCommonStockSharesOutstanding",
    ...DIVIDEND_CONCEPTS,
    ...SPLIT_CONCEPTS
  ])
]

export const PERIODIC_FORMS: ReadonlySet<string> = new Set([
  "10-K",
  "10-Q",
  "20-F",
  "40-F",
  "10-K/A",
  "10-Q/A",
  "20-F/A",
  "40-F/A",
  "10-KT"
])

/** `eq:<cik>:<ticker>` parts, or undefined. */
export const parseEquityId = (id: string): { readonly cik: string; readonly ticker: string } | undefined => {
  const m = /^eq:([1-9][0-9]{0,9}):([A-Z0-9.-]+)$/.exec(id)
  return m === null ? undefined : { cik: m[1] as string, ticker: m[2] as string }
}

/** An issuer and what is held for it (`EquityStore.issuer`). */
export interface Loaded {
  readonly company: Company
  readonly coverage: CompanyCoverage
}

/** The company's filings, newest first, with the clocks' inputs. */
export interface LatestFilings {
  readonly filings: ReadonlyArray<Filing>
  readonly acceptedMs: number | null
  readonly lastPeriodicFiled: string | null
}

/** The plane's shared state: made once per plane, read by every operation family. */
export interface EquityState {
  readonly store: EquityStore["Service"]
  readonly options: EquityPlaneOptions
  /** `baseline.source` of one company's answers (empty when no source is configured). */
  readonly sourceFor: (cik: string) => { readonly source?: string }
  /** The issuer (`EquityStore.issuer`): a stored company, or one the ticker list or a Form 4 names. */
  readonly load: (cik: string) => Effect.Effect<Loaded | undefined>
  /** The facts the operations read beyond the statement lines, and their book. */
  readonly bookOf: (cik: string) => Effect.Effect<{ readonly facts: ReadonlyArray<Fact>; readonly book: FactBook }>
  readonly latestFilings: (cik: string, coverage: CompanyCoverage) => Effect.Effect<LatestFilings>
  /**
   * The bars of one ticker (the asset's own series: share classes trade apart) of the last year and a half
   * (enough for a 200-bar average and a 1-year baseline).
   */
  readonly recentBars: (cik: string, ticker: string, nowMs: number) => Effect.Effect<ReadonlyArray<DailyBar>>
  /** Price-based freshness, or filings freshness for a company without bars. */
  readonly freshnessOf: (
    cik: string,
    coverage: CompanyCoverage,
    bars: ReadonlyArray<DailyBar>,
    nowMs: number
  ) => Effect.Effect<Freshness>
  /**
   * Statement tables by company and parameters. Building one is the costly part of `financials` (about 5 ms
   * for 20 quarters); the facts' count and newest filing date stamp the version, so a new filing (which a
   * restatement always is) rebuilds it.
   */
  readonly tables: Map<string, { readonly version: string; readonly table: ReturnType<typeof financialsTable> }>
}

/** The shared state of one plane over `store`. */
export const makeEquityState = (store: EquityStore["Service"], options: EquityPlaneOptions): EquityState => {
  const sourceFor = (cik: string): { readonly source?: string } => {
    const source = options.sourceOf?.(cik) ?? options.source
    return source === undefined ? {} : { source }
  }
  const load = (cik: string): Effect.Effect<Loaded | undefined> => store.issuer(cik)
  const bookOf = (cik: string) =>
    Effect.map(store.facts(cik, FACT_CONCEPTS), (facts) => ({ facts, book: new FactBook(facts) }))
  const latestFilings = (cik: string, coverage: CompanyCoverage): Effect.Effect<LatestFilings> =>
    Effect.map(store.filings(cik), (filings) => {
      const accepted = filings[0] === undefined ? null : Date.parse(filings[0].acceptedAt)
      const periodic = filings.find((f) => PERIODIC_FORMS.has(f.form))
      return {
        filings,
        acceptedMs: accepted,
        lastPeriodicFiled: periodic?.filedAt ?? coverage.lastFiledAt
      }
    })
  const recentBars = (cik: string, ticker: string, nowMs: number) =>
    store.bars(cik, ticker, { fromMs: nowMs - 550 * DAY_MS, toMs: closedBarsThroughMs(nowMs) })
  const closeDelayed = options.dailyCloseDelayed === true
  const freshnessOf = (
    cik: string,
    coverage: CompanyCoverage,
    bars: ReadonlyArray<DailyBar>,
    nowMs: number
  ): Effect.Effect<Freshness> => {
    const last = bars[bars.length - 1]
    if (last !== undefined) return Effect.succeed(priceFreshness(last.tMs, nowMs, closeDelayed))
    return Effect.map(latestFilings(cik, coverage), (latest) => filingsFreshness(latest, nowMs, "periodic"))
  }
  return { store, options, sourceFor, load, bookOf, latestFilings, recentBars, freshnessOf, tables: new Map() }
}

/** The CIK and ticker of a directory entry of this plane (its ID parses: the directory made it). */
export const idOf = (entry: DirectoryEntry) => parseEquityId(entry.asset_id) as { cik: string; ticker: string }

export const unknown = (entry: DirectoryEntry): ApiError =>
  apiError("unknown_asset", `no asset ${entry.asset_id}; find canonical IDs with \`resolve\``)

export const lastPrice = (bars: ReadonlyArray<DailyBar>) => bars[bars.length - 1]?.c ?? null

/** A ticker's line by its suffix: preferreds (`JPM-PD`, `BAC-PL`), warrants, units and rights are not common stock. */
const NOT_COMMON = /[-.](P[A-Z]?|WTS?|WS|UN?|RTS?|R)$/

/**
 * The class root of a ticker, to find share classes of one company: `BRK-A` and `BRK-B` share `BRK`, `GOOGL` and
 * `GOOG` share `GOOG` (a class letter after a separator, or one letter more than a sibling).
 */
const classSiblings = (a: string, b: string): boolean => {
  const root = (t: string) => t.replace(/[-.][A-Z]$/, "")
  if (root(a) === root(b) && root(a) !== a) return true
  return (a.length === b.length + 1 && a.startsWith(b)) || (b.length === a.length + 1 && b.startsWith(a))
}

/**
 * Why a company's price-based figures (market cap, P/E, P/S, EV/EBITDA) are not given for one of its tickers, or
 * undefined when they are. The filed share count (`dei:EntityCommonStockSharesOutstanding`, summed over the classes
 * of the latest cover page) and per-share earnings are the company's, not one line's, so:
 * - a preferred, warrant, unit or right line (by its suffix: `JPM-PD`, `XYZ-WT`) has none: they belong to the common
 *   stock;
 * - a company with two common share classes (tickers of one root: `BRK-A`/`BRK-B`, `GOOGL`/`GOOG`) has none on any
 *   class: the filings as stored give no count per class, and one class's price times every class's shares would be
 *   wrong (Berkshire's class A trades at 1,500 times class B);
 * - otherwise they are given on the company's primary ticker (the first the SEC lists for it that is common stock
 *   and, where it has one, exchange-listed: `JPM`, `ASML`, `T`) and not on its other lines (an OTC ordinary beside
 *   an ADR, exchange-traded notes), whose answers name it.
 */
export const classesBlockPriceFigures = (
  company: Company,
  ticker: string
): { readonly reason: UnavailableReason; readonly detail: string } | undefined => {
  const tickers = [...new Set(company.tickers)]
  if (tickers.length <= 1) return undefined
  // An OTC line beside an exchange-listed one (a foreign ordinary such as `ASMLF` beside the ADR `ASML`) is not a
  // class of its own; between OTC lines alone (`LVMUY`, `LVMHF`) the classes are looked for as usual.
  const otc = (t: string) => (company.exchanges[company.tickers.indexOf(t)] ?? "").toUpperCase() === "OTC"
  const listed = tickers.filter((t) => !NOT_COMMON.test(t) && !otc(t))
  const common = listed.length > 0 ? listed : tickers.filter((t) => !NOT_COMMON.test(t))
  const primary = common[0] ?? tickers[0]
  if (NOT_COMMON.test(ticker)) {
    return {
      reason: "not_applicable",
      detail: `${ticker} is a preferred, warrant, unit or right line of ${company.name}; its filed share count and per-share earnings are the common stock's (${primary})`
    }
  }
  const classes = common.filter((t) => common.some((o) => o !== t && classSiblings(t, o)))
  if (classes.includes(ticker)) {
    return {
      reason: "not_applicable",
      detail: `${company.name} has share classes (${classes.join(", ")}) and its filed share count is theirs together, with no count per class on file, so no figure from one class's price is given`
    }
  }
  if (ticker !== primary) {
    return {
      reason: "not_applicable",
      detail: `${company.name} trades under ${tickers.length} tickers (${tickers.join(", ")}); its market cap and price multiples are given on its primary ticker ${primary}`
    }
  }
  return undefined
}

export const marketCap = (price: number | null, shares: SharesOutstanding | null): number | null =>
  price === null || shares === null ? null : Number(fromNumber(price).times(shares.shares).toFixed(2))

/** A figure's value, or null with its reason named under `unavailable`. */
export const figure = (f: Figure, name: string, unavailable: Unavailable): string | null => {
  if (f.value !== null) return f.value
  unavailable[name] = { reason: f.reason, detail: f.detail }
  return null
}

export const withUnavailable = <A extends object>(result: A, unavailable: Unavailable) =>
  Object.keys(unavailable).length === 0 ? result : { ...result, unavailable }

/** Puts price measures as contextual values, naming what cannot be ranked under `unavailable`. */
export const priceContext = (bars: ReadonlyArray<DailyBar>, unavailable: Unavailable) => {
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
