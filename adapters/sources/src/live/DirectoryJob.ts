/**
 * The asset directory's listing job (live mode): at start and then every `listingsEveryMs` (one hour by
 * default), each configured venue's instrument list is fetched through its connector (`instrumentList`: the
 * venue's limiter, timeout, error kinds) and merged into the stored directory (`refreshDirectory`); the public
 * coin list that names new assets is fetched the same way (at most once a day) and cached in the store.
 *
 * - Status: one `listings` component per venue (and venue `coingecko` for the coin list) in the market store's
 *   source status, so `coverage` shows it beside the venue's other components. A venue that answered records a
 *   success whose `detail` names what it skipped (unreadable symbols first, by name, then the other reasons,
 *   among them `same_asset`: a perpetual another symbol of its asset on the venue feeds);
 *   one that failed records its error and keeps its last good listings.
 * - Failures back off like every live job (`Retry-After` honoured); a run in which every venue failed is
 *   retried, never crashes the feeds, and delists nothing.
 * - After each refresh `onDirectory` gets the directory (the crypto plane's universe is rebuilt from it, and the
 *   venue feeds pick up new instruments at once: bulk quotes first, history behind them).
 */
import { type AssetDirectory, AssetDirectoryStore, MarketStore, type SkippedListing } from "@market-data/core"
import { Clock, Effect } from "effect"
import { parseCoinList } from "./CoinList.ts"
import { type ListingSource, type RefreshReport, refreshDirectory } from "./DirectoryRefresh.ts"
import { type ComponentRef, recordFailure, recordSuccess, sourceErrorText } from "./Health.ts"
import { fetchJson, type SourceError } from "./Http.ts"
import { makeLimiter } from "./Limiter.ts"
import { decode } from "./Parse.ts"
import { backoffSchedule, pollSchedule } from "./Schedules.ts"
import type { VenueConnector } from "./Venue.ts"

/** The venue under which the coin list's status is recorded. */
export const COIN_LIST_VENUE = "coingecko"
/** A cached coin list younger than this is not fetched again. */
export const COIN_LIST_MAX_AGE_MS = 24 * 3_600_000

export interface DirectoryJobOptions {
  readonly connectors: ReadonlyArray<VenueConnector>
  /** The coin list's URL, or `off`. */
  readonly coinListUrl: string
  readonly timeoutMs: number
  readonly everyMs: number
  readonly jitterMs: number
  /** Gets the directory after every refresh (also one in which every venue failed: the stored one). */
  readonly onDirectory: (directory: AssetDirectory, report: RefreshReport) => Effect.Effect<void>
}

/**
 * Longest listings `detail` kept: room for every instrument a venue skips (Binance's spot list skips about 1,500
 * pairs quoted in other currencies, some 15,000 characters), far above the 300 of other status texts.
 */
export const LISTINGS_DETAIL_MAX = 64_000

/**
 * A venue's skipped instruments as one status line: the unreadable ones by name first (nothing the service
 * cannot parse goes unnamed), then each other reason with its count and symbols (`same_asset` with the symbol
 * that feeds the asset).
 */
export const skippedDetail = (skipped: ReadonlyArray<SkippedListing>): string | undefined => {
  if (skipped.length === 0) return undefined
  const byReason = new Map<string, Array<SkippedListing>>()
  for (const s of skipped) byReason.set(s.reason, [...(byReason.get(s.reason) ?? []), s])
  const parts: Array<string> = []
  const unparsable = byReason.get("unparsable") ?? []
  if (unparsable.length > 0)
    parts.push(`unparsable ${unparsable.length}: ${unparsable.map((s) => `${s.symbol} (${s.detail})`).join(", ")}`)
  for (const [reason, list] of byReason) {
    if (reason === "unparsable") continue
    const name = (s: SkippedListing) => (reason === "same_asset" ? `${s.symbol} (${s.detail})` : s.symbol)
    parts.push(`${reason} ${list.length}: ${list.map(name).join(", ")}`)
  }
  const text = `skipped ${skipped.length}: ${parts.join("; ")}`
  return text.length <= LISTINGS_DETAIL_MAX ? text : `${text.slice(0, LISTINGS_DETAIL_MAX - 1)}\u2026`
}

export const makeDirectoryJob = (options: DirectoryJobOptions) =>
  Effect.gen(function* () {
    const market = yield* MarketStore
    const directoryStore = yield* AssetDirectoryStore
    const ref = (venue: string): ComponentRef => ({ venue, component: "listings", cadenceMs: options.everyMs })
    const coinLimiter = makeLimiter({ capacity: 5, windowMs: 60_000 })

    /** Fetches the coin list when the cached one is missing or older than a day; a failure keeps the cache. */
    const refreshCoinList = Effect.gen(function* () {
      if (options.coinListUrl === "off") return
      const nowMs = yield* Clock.currentTimeMillis
      const cached = yield* directoryStore.coinList
      if (cached !== undefined && nowMs - cached.fetchedMs < COIN_LIST_MAX_AGE_MS) return
      const fetched = yield* Effect.result(
        coinLimiter.take(1).pipe(
          Effect.andThen(
            fetchJson({ source: COIN_LIST_VENUE, url: options.coinListUrl, timeoutMs: options.timeoutMs })
          ),
          Effect.flatMap((body) => decode(COIN_LIST_VENUE, "coin list", body, parseCoinList))
        )
      )
      if (fetched._tag === "Failure") {
        yield* recordFailure(market, ref(COIN_LIST_VENUE), sourceErrorText(fetched.failure))
        yield* Effect.logWarning(`live coin list: failing: ${sourceErrorText(fetched.failure)}`)
        return
      }
      const { coins, skipped } = fetched.success
      yield* directoryStore.saveCoinList({ coins, fetchedMs: nowMs })
      yield* recordSuccess(
        market,
        { ...ref(COIN_LIST_VENUE), cadenceMs: COIN_LIST_MAX_AGE_MS },
        {
          newestMs: nowMs,
          detail: skipped.length === 0 ? undefined : `${skipped.length} entries not taken (no usable or a repeated id)`
        }
      )
    })

    const sources: ReadonlyArray<ListingSource> = options.connectors.flatMap((c) => [
      ...(c.instrumentList === undefined ? [] : [{ venue: c.venue, market: "perp" as const, fetch: c.instrumentList }]),
      ...(c.spotInstrumentList === undefined
        ? []
        : [{ venue: c.venue, market: "spot" as const, fetch: c.spotInstrumentList }])
    ])

    /** One refresh: coin list (when due), every venue's list, merge, statuses, then `onDirectory`. */
    const once: Effect.Effect<RefreshReport, SourceError> = Effect.gen(function* () {
      yield* refreshCoinList
      const nowMs = yield* Clock.currentTimeMillis
      const report = yield* refreshDirectory(sources, nowMs).pipe(
        Effect.provideService(AssetDirectoryStore, directoryStore)
      )
      // One `listings` status per venue over its perpetual and spot lists: failing while either fails (the
      // other's listings are merged all the same), else naming what both skipped.
      for (const venue of [...new Set(report.venues.map((v) => v.venue))]) {
        const lists = report.venues.filter((v) => v.venue === venue)
        // Each error names its endpoint (`network: GET /api/v3/exchangeInfo: ...`), so the list is plain.
        const failed = lists.flatMap((v) => (v.ok ? [] : [sourceErrorText(v.error)]))
        if (failed.length === 0) {
          yield* recordSuccess(market, ref(venue), {
            newestMs: nowMs,
            detail: skippedDetail(lists.flatMap((v) => (v.ok ? v.skipped : []))),
            detailMax: LISTINGS_DETAIL_MAX
          })
        } else {
          yield* recordFailure(market, ref(venue), failed.join("; "))
          yield* Effect.logWarning(`live listings ${venue}: failing, last good listings kept: ${failed.join("; ")}`)
        }
      }
      const m = report.merge
      if (m.added.length + m.delisted.length + m.relisted.length > 0)
        yield* Effect.logInfo(
          `live listings: ${m.directory.assets.length} assets; ${m.added.length} new, ${m.delisted.length} delisted, ${m.relisted.length} listed again`
        )
      yield* options.onDirectory(m.directory, report)
      // Every venue failed: retried with backoff (nothing was merged, so nothing was lost).
      const failed = report.venues.filter((v) => !v.ok)
      const first = failed[0]
      if (sources.length > 0 && failed.length === sources.length && first !== undefined && !first.ok)
        return yield* Effect.fail(first.error)
      return report
    })

    /** The first refresh now, then one every `everyMs`, forever; failures back off. */
    const run = once.pipe(
      Effect.retry(backoffSchedule(Math.min(options.everyMs, 5 * 60_000))),
      Effect.repeat(pollSchedule(options.everyMs, 10_000, options.jitterMs)),
      Effect.orDie,
      Effect.withSpan("live.listings"),
      Effect.asVoid
    )
    return { once, run }
  })

export type DirectoryJob = Effect.Success<ReturnType<typeof makeDirectoryJob>>
