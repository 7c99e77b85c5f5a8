/**
 * The live feeds' entry point: `startLiveFeeds` validates the configuration, then, in the background, contends
 * for the leader lock; the instance that holds it runs every venue feed and the SEC fetcher, renewing its lease
 * every third of it, and stops ingesting the moment a renewal fails (another instance then takes over). Every
 * instance serves from the shared store either way. Closing the scope stops the feeds and releases the lock.
 */

import {
  type AssetDirectory,
  AssetDirectoryStore,
  type CryptoAsset,
  CryptoAssets,
  dailyIndexThrough,
  type EquityStore,
  type LeaderLock,
  LIVE_INGEST_LOCK,
  MarketStore,
  type QuoteBoard,
  SEC_VENUE,
  type StreamedBar
} from "@market-data/core"
import { Clock, Effect, type Scope } from "effect"
import { parseCompanyTickers } from "../sec/index.ts"
import { makeCryptoFeed } from "./CryptoFeed.ts"
import { makeDirectoryJob } from "./DirectoryJob.ts"
import { type ComponentRef, recordFailure, recordSuccess, sourceErrorText } from "./Health.ts"
import { fetchText, SourceError } from "./Http.ts"
import { type LiveConfig, type LiveConfigError, validateLiveConfig } from "./LiveConfig.ts"
import { makePriceFeed, makePriceLimiter, PRICES_BACKFILL_DAYS, PRICES_POLL_MS, runPricePass } from "./PriceFeed.ts"
import { backoffSchedule, pollSchedule } from "./Schedules.ts"
import { type DailyIndexFollower, makeDailyIndexFollower } from "./SecDailyIndex.ts"
import { makeSecFeed, makeSecLimiter } from "./SecFeed.ts"
import { runLiquidationStream, StreamVenues } from "./stream/Liquidation.ts"
import { type MarketStreamStats, runMarketStream } from "./stream/MarketStream.ts"
import { LiquidationProtocols, StreamProtocols } from "./stream/Protocols.ts"
import { runMarketStreamsOnWorker } from "./stream/WorkerStreams.ts"
import {
  type BarRow,
  type Instrument,
  instrumentsOf,
  type LiveVenue,
  perpListingsOf,
  type VenueConnector,
  type VenueListing
} from "./Venue.ts"
import { makeBinance } from "./venues/binance/Rest.ts"
import { makeBybit } from "./venues/bybit/Rest.ts"
import { makeHyperliquid } from "./venues/hyperliquid/Rest.ts"
import { makeOkx } from "./venues/okx/Rest.ts"
import { okxTopicUrl } from "./venues/okx/Stream.ts"

/** How often each covered company's submissions feed is read. */
export const SEC_POLL_MS = 10 * 60_000
/** How often the ticker list is refreshed. */
export const SEC_TICKERS_POLL_MS = 24 * 3_600_000
/** Form 4 and 13F documents fetched at first start reach this far back. */
export const SEC_DOCUMENT_LOOKBACK_DAYS = 400

/**
 * SEC EDGAR's health in the market store's status model (venue `sec`): `filings`, one poll of every covered
 * company and followed 13F filer (failing only when every one of them failed; the others are named in
 * `detail`), and `tickers`, the ticker list.
 */
export const SEC_FILINGS: ComponentRef = { venue: SEC_VENUE, component: "filings", cadenceMs: SEC_POLL_MS }
export const SEC_TICKERS: ComponentRef = { venue: SEC_VENUE, component: "tickers", cadenceMs: SEC_TICKERS_POLL_MS }
/** How often the daily-index follower looks for a newly published day (EDGAR publishes each day's index that night). */
export const SEC_DAILY_INDEX_POLL_MS = 30 * 60_000
/**
 * The daily-index follower (every company's new filings): `newestMs` is the end of the last day fully processed,
 * so its lag is about a day when healthy (a day's index appears after the day ends); the cadence is a day.
 */
export const SEC_DAILY_INDEX: ComponentRef = { venue: SEC_VENUE, component: "dailyIndex", cadenceMs: 24 * 3_600_000 }

/** How often the latest-filings feed is read (its 100 newest entries). */
export const SEC_LATEST_POLL_MS = 2 * 60_000
/** The latest-filings feed follower: `newestMs` is the start of its last complete poll. */
export const SEC_LATEST: ComponentRef = { venue: SEC_VENUE, component: "latestFilings", cadenceMs: SEC_LATEST_POLL_MS }

/** The status `newestMs` of a watermark day: the UTC midnight after it. */
export const dailyIndexNewestMs = (day: string): number => Date.parse(`${day}T00:00:00Z`) + 86_400_000

export const makeConnector = (venue: LiveVenue, config: LiveConfig): VenueConnector => {
  const options = { baseUrl: config.baseUrls[venue], timeoutMs: config.requestTimeoutMs }
  switch (venue) {
    case "binance":
      return makeBinance(options)
    case "bybit":
      return makeBybit(options)
    case "okx":
      return makeOkx(options)
    case "hyperliquid":
      return makeHyperliquid(options)
  }
}

/**
 * The liquidation streams of the configured venues that publish them over a websocket (Binance, Bybit, OKX) and
 * have a websocket base URL, run by the leader over the shared connection manager, each over that venue's
 * perpetuals (`followInstruments`: the registry's, or those of `universe`, live mode's asset directory, followed as
 * it changes: a listing the directory job adds is counted without a restart).
 */
export const liquidationStreams = (
  config: LiveConfig,
  universe?: () => ReadonlyArray<CryptoAsset>
): ReadonlyArray<Effect.Effect<void, never, MarketStore>> =>
  StreamVenues.flatMap((venue) => {
    const baseUrl = config.wsBaseUrls[venue]
    if (!config.venues.includes(venue) || baseUrl === undefined) return []
    const protocol = LiquidationProtocols[venue]
    const followed = followInstruments(venue, config, universe, "liquidations", !protocol.needsContractSizes)
    const stream = runLiquidationStream(protocol, {
      baseUrl,
      instruments: followed.instruments,
      timeoutMs: config.requestTimeoutMs
    })
    return [Effect.all([followed.refresh, stream], { concurrency: "unbounded", discard: true })]
  })

/** How often each instance re-reads a streamed venue's instrument list (its symbols and contract sizes). */
export const STREAM_LISTINGS_EVERY_MS = 30 * 60_000

/**
 * A venue's perpetuals for a stream, by venue symbol (the universe's perpetual listings that the venue lists, with
 * the contract sizes of its instrument list), and the job keeping that list: read at start and every
 * `STREAM_LISTINGS_EVERY_MS` (one request to the venue's listing endpoint), retried with backoff while it fails.
 * `instruments` answers the same map object while neither the listing nor the universe changed (the stream sees
 * "unchanged" without comparing). Until the first listing arrives it answers an empty map, or, with `provisional`
 * (a stream that needs no contract sizes: a venue whose quantities are in the symbol's own units), the universe's
 * listings as they are, so the venue's REST being down does not hold the stream back.
 */
export const followInstruments = (
  venue: LiveVenue,
  config: LiveConfig,
  universe: (() => ReadonlyArray<CryptoAsset>) | undefined,
  what: string,
  provisional = false
): {
  readonly instruments: () => ReadonlyMap<string, Instrument>
  readonly refresh: Effect.Effect<void>
} => {
  const connector = makeConnector(venue, config)
  let listed: ReadonlyMap<string, VenueListing> | undefined
  let seen: { listed: unknown; universe: unknown } = { listed: undefined, universe: undefined }
  let map: ReadonlyMap<string, Instrument> = new Map()
  let assumed: { readonly universe: unknown; readonly listed: ReadonlyMap<string, VenueListing> } | undefined
  const instruments = (): ReadonlyMap<string, Instrument> => {
    const u = universe?.() ?? CryptoAssets
    let l = listed
    if (l === undefined) {
      if (!provisional) return map
      if (assumed?.universe !== u)
        assumed = {
          universe: u,
          listed: new Map(
            perpListingsOf(u, venue).map((p) => [p.listing.symbol, { symbol: p.listing.symbol }] as const)
          )
        }
      l = assumed.listed
    }
    if (seen.listed === l && seen.universe === u) return map
    seen = { listed: l, universe: u }
    map = new Map(instrumentsOf(venue, l, undefined, u).instruments.map((i) => [i.symbol, i] as const))
    return map
  }
  const refresh = connector.listings.pipe(
    Effect.tap((l) =>
      Effect.sync(() => {
        listed = l
      })
    ),
    Effect.tapError((e) => Effect.logWarning(`live ${venue} ${what}: instrument list failing: ${sourceErrorText(e)}`)),
    Effect.retry(backoffSchedule(5 * 60_000)),
    Effect.repeat(pollSchedule(STREAM_LISTINGS_EVERY_MS, 0, config.jitterMs)),
    Effect.orDie,
    Effect.asVoid
  )
  return { instruments, refresh }
}

/** Whether the board serves an asset's top of book on `venue` from a live stream now (else REST polls it). */
export const streamedOn =
  (board: QuoteBoard, venue: string) =>
  (assetId: string): boolean =>
    board.health(venue)?.up === true && board.quote(assetId, venue) !== undefined && !board.isSilent(assetId, venue)

/** A streamed bar as the feed writes it. */
const barRowOf = (b: StreamedBar): BarRow => ({
  t: b.t,
  open: b.open,
  high: b.high,
  low: b.low,
  close: b.close,
  volume: b.volume,
  ...(b.takerBuyUsd === undefined ? {} : { takerBuyUsd: b.takerBuyUsd, takerSellUsd: b.takerSellUsd ?? 0 })
})

/** The forming bar of `slotMs` as the venue's kline stream last sent it, while the stream serves the asset. */
export const streamedBarOn =
  (board: QuoteBoard, venue: string) =>
  (assetId: string, slotMs: number): BarRow | undefined => {
    if (!streamedOn(board, venue)(assetId)) return undefined
    const b = board.bar(assetId, venue)
    return b === undefined || b.t !== slotMs ? undefined : barRowOf(b)
  }

/** The bar opening at `slotMs` as the venue's kline stream sent it closed (final), whatever the stream does since. */
export const streamedClosedBarOn =
  (board: QuoteBoard, venue: string) =>
  (assetId: string, slotMs: number): BarRow | undefined => {
    const b = board.closedBar(assetId, venue)
    return b === undefined || b.t !== slotMs ? undefined : barRowOf(b)
  }

/**
 * The market streams of every configured venue that has a websocket base URL and a stream protocol, each into
 * `board`, over that venue's perpetuals of the universe (the registry's, or live mode's asset directory's, followed
 * as it changes). Every instance runs them (not only the leader): public streams cost no request weight, and each
 * instance's answers are then as fresh as the venue (LiveDoc, "Every instance equally fresh"). The symbols and
 * contract sizes come from the venue's instrument list, read by each instance at start and every
 * `STREAM_LISTINGS_EVERY_MS` (one request to each venue's listing endpoint).
 */
export const marketStreams = (deps: {
  readonly config: LiveConfig
  readonly board: QuoteBoard
  readonly universe?: (() => ReadonlyArray<CryptoAsset>) | undefined
  readonly stats?: Partial<Record<LiveVenue, MarketStreamStats>>
}): ReadonlyArray<Effect.Effect<void>> => {
  const venues = deps.config.venues.flatMap((venue) => {
    const baseUrl = deps.config.wsBaseUrls[venue]
    const protocol = StreamProtocols[venue]
    if (baseUrl === undefined || protocol === undefined) return []
    return [{ venue, baseUrl, protocol, followed: followInstruments(venue, deps.config, deps.universe, "streams") }]
  })
  if (venues.length === 0) return []
  const business = deps.config.okxWsBusinessBaseUrl
  if (deps.config.streamThread) {
    // Every venue's streams on one worker thread (`WorkerStreams.ts`): the frames' garbage is not the answering
    // thread's. The listing jobs stay here and send each change of the followed set to the worker.
    const onWorker = runMarketStreamsOnWorker(
      venues.map((v) => ({
        venue: v.venue,
        baseUrl: v.baseUrl,
        businessBaseUrl: v.venue === "okx" ? business : undefined,
        timeoutMs: deps.config.requestTimeoutMs,
        instruments: v.followed.instruments
      })),
      deps.board,
      deps.stats,
      { nice: deps.config.streamThreadNice }
    )
    return [...venues.map((v) => v.followed.refresh), onWorker]
  }
  return venues.map(({ venue, baseUrl, protocol, followed }) => {
    const stream = runMarketStream(
      protocol,
      {
        baseUrl,
        // OKX's candles are on its business endpoint, which may have a base URL of its own.
        url: venue === "okx" && business !== undefined ? okxTopicUrl(baseUrl, business) : undefined,
        instruments: followed.instruments,
        timeoutMs: deps.config.requestTimeoutMs
      },
      deps.board,
      deps.stats?.[venue]
    )
    return Effect.all([followed.refresh, stream], { concurrency: "unbounded", discard: true })
  })
}

/** The `User-Agent` the price connector sends (it names the service; no operator contact goes to the source). */
export const PRICES_USER_AGENT = "service-market-data/1.0 (daily prices)"

/**
 * One run of the daily-index follower from the stored watermark (`dailyIndex` status). Progress is recorded
 * before a failure, so the watermark keeps every day completed; a day that could not be completed (or a
 * throttling answer) fails the run: the status shows it failing, the job's backoff retries it, and the watermark
 * stays on the day before it.
 */
export const dailyIndexRun = (deps: {
  readonly market: MarketStore["Service"]
  readonly follower: DailyIndexFollower
}): Effect.Effect<void, SourceError> =>
  Effect.gen(function* () {
    const nowMs = yield* Clock.currentTimeMillis
    const watermark = dailyIndexThrough(yield* deps.market.status)
    const today = new Date(nowMs).toISOString().slice(0, 10)
    const r = yield* deps.follower.run(watermark, today, nowMs)
    if (r.days.length > 0 || r.unreadable.length > 0)
      yield* Effect.logInfo(
        `live sec daily index: ${r.days.join(", ") || "no day"} processed, through ${r.through ?? "-"}: ${r.filings} filings, ${r.companies} companies${r.unreadable.length > 0 ? `; unreadable: ${r.unreadable.join("; ")}` : ""}`
      )
    if (r.through !== undefined)
      yield* recordSuccess(deps.market, SEC_DAILY_INDEX, {
        newestMs: dailyIndexNewestMs(r.through),
        detail: r.unreadable.length === 0 ? undefined : `unreadable: ${r.unreadable.join("; ")}`
      })
    if (r.failure !== undefined) {
      yield* Effect.logWarning(
        `live sec daily index: the day after ${r.through ?? "the start"} is not complete: ${r.blocking.join("; ") || sourceErrorText(r.failure)}`
      )
      return yield* Effect.fail(r.failure)
    }
  })

/**
 * One poll of the latest-filings feed: new followed filings stored, their companies refreshed; a fetch that failed
 * (or a throttling answer) fails the poll, so the status shows it and the job backs off. Its status `newestMs` is
 * the poll's start when every filing in the feed was handled.
 */
export const latestFilingsRun = (deps: {
  readonly market: MarketStore["Service"]
  readonly follower: DailyIndexFollower
}): Effect.Effect<void, SourceError> =>
  Effect.gen(function* () {
    const nowMs = yield* Clock.currentTimeMillis
    const r = yield* deps.follower.latest(nowMs)
    if (r.filings > 0 || r.unreadable.length > 0)
      yield* Effect.logInfo(
        `live sec latest filings: ${r.filings} new filings${r.unreadable.length > 0 ? `; unreadable: ${r.unreadable.join("; ")}` : ""}`
      )
    if (r.firstError !== undefined) return yield* Effect.fail(r.firstError)
    yield* recordSuccess(deps.market, SEC_LATEST, {
      newestMs: nowMs,
      detail: r.unreadable.length === 0 ? undefined : `unreadable: ${r.unreadable.join("; ")}`
    })
  })

/**
 * One run of a SEC job until it succeeds: each failed run marks its component failing (with the error, so
 * `sources` shows it) before the backoff (2 s, 4 s, ... capped at the cadence or 5 minutes, never sooner than
 * the source's `Retry-After`) runs it again.
 */
export const retriedRun = (
  market: MarketStore["Service"],
  component: ComponentRef,
  run: Effect.Effect<void, SourceError>,
  cadenceMs: number
): Effect.Effect<void, SourceError> =>
  run.pipe(
    Effect.tapError((e) => recordFailure(market, component, sourceErrorText(e))),
    Effect.retry(backoffSchedule(Math.min(cadenceMs, 5 * 60_000)))
  )

/**
 * The asset directory in live mode: where it is stored, the crypto universe the feeds ingest (built from it),
 * and what to do with each refreshed directory (rebuild that universe).
 */
export interface LiveDirectory {
  readonly store: AssetDirectoryStore["Service"]
  readonly universe: () => ReadonlyArray<CryptoAsset>
  readonly update: (directory: AssetDirectory) => Effect.Effect<void>
}

/**
 * Everything the leader runs: the venue feeds, the liquidation streams, the SEC fetcher and the equities' daily
 * price connector (unless `prices` is `off`), concurrently, forever; with a `directory`, also the listing job
 * (`DirectoryJob.ts`), and the venue feeds ingest the directory's listings instead of the hand-written registry.
 */
export const ingestAll = (deps: {
  readonly market: MarketStore["Service"]
  readonly equity: EquityStore["Service"]
  readonly config: LiveConfig
  readonly directory?: LiveDirectory | undefined
  /** The process's streamed state: where a venue streams, its books job polls only what the stream does not serve. */
  readonly board?: QuoteBoard | undefined
}): Effect.Effect<void> =>
  Effect.gen(function* () {
    const { config, board } = deps
    const connectors = config.venues.map((venue) => makeConnector(venue, config))
    const feeds = yield* Effect.forEach(connectors, (connector) =>
      makeCryptoFeed(connector, {
        backfillDays: config.backfillDays,
        fundingBackfillDays: config.fundingBackfillDays,
        jitterMs: config.jitterMs,
        ...(deps.directory === undefined ? {} : { universe: deps.directory.universe }),
        ...(board === undefined ||
        config.wsBaseUrls[connector.venue] === undefined ||
        StreamProtocols[connector.venue] === undefined
          ? {}
          : {
              streamed: streamedOn(board, connector.venue),
              streamedBar: streamedBarOn(board, connector.venue),
              ...(StreamProtocols[connector.venue]?.closedBars === true
                ? { streamedClosedBar: streamedClosedBarOn(board, connector.venue) }
                : {}),
              streamedQuote: (assetId: string) =>
                streamedOn(board, connector.venue)(assetId) ? board.quote(assetId, connector.venue) : undefined
            })
      }).pipe(Effect.provideService(MarketStore, deps.market))
    )
    const directory = deps.directory
    const listingJob =
      directory === undefined
        ? []
        : [
            yield* makeDirectoryJob({
              connectors,
              coinListUrl: config.coinListUrl,
              timeoutMs: config.requestTimeoutMs,
              everyMs: config.listingsEveryMs,
              jitterMs: config.jitterMs,
              onDirectory: (next, report) =>
                Effect.gen(function* () {
                  yield* directory.update(next)
                  // The feeds take the new instrument lists at once; a new (or returning) listing gets its bulk
                  // quote first and its history behind it, in the background of the listing job.
                  const grew = report.merge.added.length + report.merge.relisted.length > 0
                  yield* Effect.forEach(
                    feeds,
                    (f) =>
                      Effect.gen(function* () {
                        yield* Effect.ignore(f.once.listings)
                        if (!grew) return
                        yield* Effect.ignore(f.once.start)
                        yield* Effect.ignore(f.once.tickers)
                        yield* Effect.ignore(f.once.bars)
                        yield* Effect.ignore(f.once.funding)
                      }).pipe(Effect.provideService(MarketStore, deps.market)),
                    { concurrency: "unbounded", discard: true }
                  ).pipe(Effect.forkChild)
                })
            }).pipe(
              Effect.provideService(MarketStore, deps.market),
              Effect.provideService(AssetDirectoryStore, directory.store)
            )
          ]
    const sec = makeSecFeed(
      deps.equity,
      {
        dataBaseUrl: config.baseUrls.secData,
        archivesBaseUrl: config.baseUrls.secArchives,
        userAgent: config.secUserAgent,
        ciks: config.secCiks,
        thirteenFFilers: config.sec13fFilers,
        timeoutMs: config.requestTimeoutMs,
        documentLookbackDays: SEC_DOCUMENT_LOOKBACK_DAYS
      },
      makeSecLimiter(config.secMaxRequestsPerSecond)
    )
    const follower = makeDailyIndexFollower(sec, deps.equity, { archivesBaseUrl: config.baseUrls.secArchives })
    const secDailyIndex = dailyIndexRun({ market: deps.market, follower })
    const secLatest = latestFilingsRun({ market: deps.market, follower })

    /** One SEC poll: every company and filer; fails only when every one of them failed (then backs off). */
    const secPoll = Effect.gen(function* () {
      const nowMs = yield* Clock.currentTimeMillis
      const targets = [
        ...config.secCiks.map((cik) => ({ cik, run: sec.pollCompany(cik, nowMs) })),
        ...config.sec13fFilers
          .filter((cik) => !config.secCiks.includes(cik))
          .map((cik) => ({ cik, run: sec.pollFiler(cik, nowMs) }))
      ]
      let failures = 0
      let first: SourceError | undefined
      const notYet: Array<string> = []
      for (const t of targets) {
        const r = yield* Effect.result(t.run)
        if (r._tag === "Failure") {
          failures++
          first ??= r.failure
          notYet.push(`CIK ${t.cik} (${r.failure.kind})`)
          yield* Effect.logWarning(
            `live sec: CIK ${t.cik} failing: ${r.failure.kind} ${r.failure.what}: ${r.failure.message}`
          )
        } else if (
          r.success.newFilings + r.success.ownershipReports + r.success.holdingsReports > 0 ||
          r.success.problems.length > 0
        ) {
          if (r.success.problems.length > 0) notYet.push(`CIK ${t.cik} (${r.success.problems.length} documents)`)
          yield* Effect.logInfo(
            `live sec: CIK ${t.cik}: ${r.success.newFilings} new filings, ${r.success.facts} facts, ${r.success.ownershipReports} Form 4s, ${r.success.holdingsReports} 13F reports${r.success.problems.length > 0 ? `; not yet: ${r.success.problems.join("; ")}` : ""}`
          )
        }
      }
      if (targets.length > 0 && failures === targets.length && first !== undefined) return yield* Effect.fail(first)
      // The poll read EDGAR as of its start: the filings are current to then.
      yield* recordSuccess(deps.market, SEC_FILINGS, {
        newestMs: nowMs,
        detail: notYet.length === 0 ? undefined : `not yet: ${notYet.join(", ")}`
      })
    })

    const secTickers = Effect.gen(function* () {
      yield* sec.limiter.take(1)
      const text = yield* fetchText({
        source: "sec",
        url: `${config.baseUrls.secArchives}/files/company_tickers.json`,
        timeoutMs: config.requestTimeoutMs,
        headers: { "User-Agent": config.secUserAgent }
      })
      const parsed = parseCompanyTickers(text)
      if (parsed._tag === "Failure") {
        return yield* Effect.fail(
          new SourceError({
            source: "sec",
            kind: "format",
            what: "company_tickers.json",
            message: parsed.failure.message
          })
        )
      }
      const covered = new Set(config.secCiks)
      yield* deps.equity.putTickers(parsed.success.filter((t) => covered.has(t.cik)))
      yield* recordSuccess(deps.market, SEC_TICKERS, { newestMs: yield* Clock.currentTimeMillis })
    })

    /** A SEC job: each failed run marks its component failing (with the error) before the backoff retries it. */
    const secJob = (
      component: ComponentRef,
      run: Effect.Effect<void, SourceError>,
      cadenceMs: number,
      offsetMs: number
    ) =>
      retriedRun(deps.market, component, run, cadenceMs).pipe(
        Effect.repeat(pollSchedule(cadenceMs, offsetMs, config.jitterMs)),
        Effect.orDie,
        Effect.asVoid
      )

    const prices = makePriceFeed(
      deps.equity,
      {
        baseUrl: config.baseUrls.prices,
        timeoutMs: config.requestTimeoutMs,
        backfillDays: PRICES_BACKFILL_DAYS,
        userAgent: PRICES_USER_AGENT
      },
      makePriceLimiter(config.pricesPerMinute)
    )
    const pricesJob = runPricePass(prices, deps.market).pipe(
      Effect.tap((r) =>
        r.fetched === 0
          ? Effect.void
          : Effect.logInfo(
              `live prices: ${r.fetched} tickers fetched, ${r.bars} bars written, ${r.upToDate} up to date${r.problems.length > 0 ? `; not loaded: ${r.problems.slice(0, 10).join("; ")}` : ""}`
            )
      ),
      Effect.tapError((e) => Effect.logWarning(`live prices: failing: ${e.kind} ${e.what}: ${e.message}`)),
      Effect.retry(backoffSchedule(5 * 60_000)),
      Effect.repeat(pollSchedule(PRICES_POLL_MS, 2 * 60_000, config.jitterMs)),
      Effect.orDie,
      Effect.asVoid
    )

    yield* Effect.all(
      [
        ...listingJob.map((job) => job.run),
        ...feeds.map((f) => f.run.pipe(Effect.provideService(MarketStore, deps.market))),
        ...liquidationStreams(config, deps.directory?.universe).map((stream) =>
          stream.pipe(Effect.provideService(MarketStore, deps.market))
        ),
        secJob(SEC_FILINGS, secPoll, SEC_POLL_MS, 45_000),
        secJob(SEC_TICKERS, secTickers, SEC_TICKERS_POLL_MS, 5 * 60_000),
        ...(config.prices === "off" ? [] : [pricesJob]),
        ...(config.secFollowDailyIndex
          ? [
              secJob(SEC_DAILY_INDEX, secDailyIndex, SEC_DAILY_INDEX_POLL_MS, 90_000),
              secJob(SEC_LATEST, secLatest, SEC_LATEST_POLL_MS, 20_000)
            ]
          : [])
      ],
      { concurrency: "unbounded", discard: true }
    )
  })

/**
 * Starts the live feeds in the background of the current scope: validates `config` (failing with
 * `LiveConfigError`, e.g. without `MARKET_DATA_SEC_USER_AGENT`), then contends for the leader lock and, while it
 * leads, ingests. Returns as soon as the background fiber is running; nothing in it can fail or crash the
 * process (unreachable sources show as `failing`/`stale` in the source status).
 */
export const startLiveFeeds = (deps: {
  readonly market: MarketStore["Service"]
  readonly equity: EquityStore["Service"]
  readonly config: LiveConfig
  readonly leader: LeaderLock["Service"]
  readonly directory?: LiveDirectory | undefined
  /**
   * The process's streamed state (`QuoteBoard`): every instance runs the venues' market streams into it, leader or
   * not; the plane reads it through `withQuoteBoard`. Absent: no market streams (books polled over REST).
   */
  readonly board?: QuoteBoard | undefined
  readonly streamStats?: Partial<Record<LiveVenue, MarketStreamStats>>
}): Effect.Effect<void, LiveConfigError, Scope.Scope> =>
  Effect.gen(function* () {
    const config = yield* validateLiveConfig(deps.config)
    const { leader, board } = deps
    const leaseMs = config.leaderLeaseMs
    const holder = config.instanceId
    const ingest = ingestAll({ market: deps.market, equity: deps.equity, config, directory: deps.directory, board })
    if (board !== undefined) {
      const streams = marketStreams({
        config,
        board,
        universe: deps.directory?.universe,
        ...(deps.streamStats === undefined ? {} : { stats: deps.streamStats })
      })
      if (streams.length > 0) {
        yield* Effect.logInfo(
          `live streams: ${config.venues.filter((v) => config.wsBaseUrls[v] !== undefined && StreamProtocols[v] !== undefined).join(", ")} (every instance)`
        )
        yield* Effect.forkScoped(Effect.all(streams, { concurrency: "unbounded", discard: true }))
      }
    }

    /** Completes when the lease is lost (a renewal answers false). */
    const holdLease = Effect.gen(function* () {
      while (true) {
        yield* Effect.sleep(Math.max(1, Math.floor(leaseMs / 3)))
        if (!(yield* leader.renew(LIVE_INGEST_LOCK, holder, leaseMs))) return
      }
    })

    const contend = Effect.gen(function* () {
      while (true) {
        if (yield* leader.acquire(LIVE_INGEST_LOCK, holder, leaseMs)) {
          yield* Effect.logInfo(
            `live feeds: ${holder} leads ingestion (${config.venues.length === 0 ? "no crypto venue" : config.venues.join(", ")}, SEC EDGAR${config.prices === "off" ? "" : ", daily prices"})`
          )
          const ended = yield* Effect.exit(Effect.raceFirst(ingest, holdLease))
          if (ended._tag === "Failure") {
            // A bug, not a source failure (those never leave the jobs): log it, step down, start afresh.
            yield* Effect.logError(`live feeds: ingestion stopped by a defect; restarting`, ended.cause)
            yield* leader.release(LIVE_INGEST_LOCK, holder)
            yield* Effect.sleep(Math.max(1, Math.floor(leaseMs / 3)))
          } else {
            yield* Effect.logWarning(`live feeds: ${holder} lost the leader lock; ingestion stopped, serving only`)
          }
        } else {
          yield* Effect.sleep(Math.max(1, Math.floor(leaseMs / 3)))
        }
      }
    })

    yield* Effect.addFinalizer(() => leader.release(LIVE_INGEST_LOCK, holder))
    yield* Effect.forkScoped(contend)
  })
