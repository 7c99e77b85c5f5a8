/**
 * `coverage`: what the service covers, from the planes' directories. Key required, zero credits.
 *
 * - `id` form: the one asset's row `{asset_id, plane, symbol, name, tier, alive, operations}`; an ID no
 *   plane knows is `404 unknown_asset`.
 * - browse form (no `id`): `{rows, next_cursor}`, filtered by `plane`, `tier` and `alive`, ordered by asset
 *   ID (so crypto before equity), `limit` rows per page. `next_cursor` is an opaque base64url token that
 *   resumes after the last row of the page (keyset, so pages neither repeat nor skip rows when the directory
 *   is unchanged) and is bound to the operation and its other parameters: reused with a different `plane`,
 *   `tier`, `alive` or `limit`, it is `400 invalid_cursor`.
 *
 * `operations` lists, in the registry's order, every operation that serves the asset's plane and tier
 * (`tierServes`), `resolve` and `coverage` included.
 *
 * `sources` (one-asset form only, additive; present when the plane reports source statuses): the health of
 * each source component feeding the asset, `[{source, venue, component, last_success_at, lag_seconds, status,
 * error?, detail?}]`: for a crypto asset every component of each venue listing it (in live mode also the
 * venue's `listings`), for an equity SEC EDGAR (venue `sec`). `lag_seconds` is the age of the component's newest
 * data, `status` its freshness (`live` within one cadence, `delayed` up to three, `stale` beyond or while
 * failing), `error` the last fetch error while it fails, `detail` what its last good run left out (the
 * instruments a listing skipped, with their reasons).
 * Browse rows stay small and carry no `sources`; the browse's first page (no `cursor`, additive) carries the
 * source summary of the planes browsed (`sources`, rows as above, `sourceSummaryOf`), so the instruments a
 * listing skipped are named there too.
 */
import { Effect } from "effect"
import { type Plane, Planes, planeOf } from "./AssetId.ts"
import { decodeCursor, encodeCursor } from "./Cursor.ts"
import { cryptoAsset } from "./crypto/Assets.ts"
import {
  type Freshness,
  freshnessOf,
  lastSuccessOf,
  PRICES_VENUE,
  SEC_VENUE,
  type SourceStatus
} from "./crypto/Market.ts"
import { apiError } from "./Errors.ts"
import type { Handler } from "./Pipeline.ts"
import { type DirectoryEntry, type PlaneOperations, tierServes } from "./Planes.ts"
import { Operations } from "./Registry.ts"

export interface CoverageRow {
  readonly asset_id: string
  readonly plane: Plane
  readonly symbol: string
  readonly name: string
  readonly tier: DirectoryEntry["tier"]
  readonly alive: boolean
  readonly operations: ReadonlyArray<string>
  /** One-asset form only: the health of the sources feeding the asset. */
  readonly sources?: ReadonlyArray<CoverageSource>
}

/** The health of one source component, as `coverage` reports it. */
export interface CoverageSource {
  /** Which feed: `simulated` or `live`. */
  readonly source: string
  /** `binance`, `bybit`, `okx`, `hyperliquid`, ... or `sec` (SEC EDGAR). */
  readonly venue: string
  readonly component: string
  /** When fetching it last succeeded (ISO 8601), or null when it never has (or it is unknown). */
  readonly last_success_at: string | null
  /** Age of its newest data in whole seconds, or null when it has delivered nothing. */
  readonly lag_seconds: number | null
  readonly status: Freshness
  /** The last fetch error, while it is failing. */
  readonly error?: string
  /**
   * While it succeeds: what its last run left out (a listing's skipped instruments with their reasons, the
   * instruments a venue had no data for).
   */
  readonly detail?: string
}

/**
 * What a plane may add for `coverage`: the store's source statuses (every venue and component). Optional, so
 * planes with only a directory (tests, other embeddings) answer without `sources`.
 */
export interface ReportsSources {
  readonly sourceStatus?: Effect.Effect<ReadonlyArray<SourceStatus>>
  /**
   * The statuses as they apply to one asset (`MarketStore.assetStatuses`: a symbol its venue's stream does not
   * serve reads its own REST state), for the one-asset form. Optional: where absent, the venues' statuses.
   */
  readonly assetSourceStatus?: (
    assetId: string,
    statuses: ReadonlyArray<SourceStatus>
  ) => Effect.Effect<ReadonlyArray<SourceStatus>>
}

/**
 * The venues whose statuses describe an asset's sources: a crypto asset's listing venues; SEC EDGAR and the daily
 * price connector for equities (a venue with no status recorded, such as the price connector when it is off or in
 * the simulated mode, shows no row).
 */
export const sourceVenuesOf = (entry: Pick<DirectoryEntry, "asset_id" | "plane" | "venues">): ReadonlyArray<string> =>
  entry.plane === "equity"
    ? [SEC_VENUE, PRICES_VENUE]
    : (entry.venues ?? [...new Set((cryptoAsset(entry.asset_id)?.listings ?? []).map((l) => l.venue))])

/** One status as a `coverage` source row at `nowMs`. */
export const coverageSource = (s: SourceStatus, nowMs: number): CoverageSource => {
  const lastSuccess = lastSuccessOf(s)
  const error = s.failing ? (s.lastError ?? s.detail) : undefined
  return {
    source: s.source,
    venue: s.venue,
    component: s.component,
    last_success_at: lastSuccess === undefined ? null : new Date(lastSuccess).toISOString(),
    lag_seconds: s.newestMs > 0 ? Math.max(0, Math.round((nowMs - s.newestMs) / 1000)) : null,
    status: freshnessOf(s, nowMs),
    ...(error === undefined ? {} : { error }),
    ...(!s.failing && s.detail !== undefined ? { detail: s.detail } : {})
  }
}

/** Source statuses in one order everywhere: by venue, then component. */
const byVenueThenComponent = (a: SourceStatus, b: SourceStatus): number =>
  a.venue === b.venue
    ? a.component < b.component
      ? -1
      : a.component > b.component
        ? 1
        : 0
    : a.venue < b.venue
      ? -1
      : 1

/** The source rows of an asset: the statuses of its venues (sorted by venue, then component). */
export const sourcesOf = (
  entry: Pick<DirectoryEntry, "asset_id" | "plane" | "venues">,
  statuses: ReadonlyArray<SourceStatus>,
  nowMs: number
): ReadonlyArray<CoverageSource> => {
  const venues = sourceVenuesOf(entry)
  return statuses
    .filter((s) => venues.includes(s.venue))
    .sort(byVenueThenComponent)
    .map((s) => coverageSource(s, nowMs))
}

/**
 * The browse form's source summary for the planes browsed: every source status feeding them (a crypto plane:
 * every venue's components, the venues' `listings` and the coin list; an equity plane: SEC EDGAR and the daily
 * price connector), sorted by venue then component. A listing's `detail` names every instrument it skipped,
 * with the reason.
 */
export const sourceSummaryOf = (
  planes: ReadonlyArray<Plane>,
  statuses: ReadonlyArray<SourceStatus>,
  nowMs: number
): ReadonlyArray<CoverageSource> => {
  const equityVenue = (venue: string) => venue === SEC_VENUE || venue === PRICES_VENUE
  const seen = new Set<string>()
  return statuses
    .filter((s) => planes.includes(equityVenue(s.venue) ? "equity" : "crypto"))
    .filter((s) => {
      const key = `${s.venue}\u0000${s.component}`
      if (seen.has(key)) return false
      seen.add(key)
      return true
    })
    .sort(byVenueThenComponent)
    .map((s) => coverageSource(s, nowMs))
}

/** The operations that serve an asset of `entry`'s plane and tier, in registry order. */
export const operationsFor = (entry: Pick<DirectoryEntry, "plane" | "tier">): ReadonlyArray<string> =>
  Operations.filter((op) => op.planes.includes(entry.plane) && tierServes(entry.tier, op.name)).map((op) => op.name)

/** The coverage row of a directory entry. */
export const coverageRow = (e: DirectoryEntry): CoverageRow => ({
  asset_id: e.asset_id,
  plane: e.plane,
  symbol: e.symbol,
  name: e.name,
  tier: e.tier,
  alive: e.alive,
  operations: operationsFor(e)
})

// ---------------------------------------------------------------------------------------------------------------
// The handler
// ---------------------------------------------------------------------------------------------------------------

/** One page of a browse: rows after `after` (by asset ID), and the position to resume after, if any. */
export const browsePage = (
  entries: ReadonlyArray<DirectoryEntry>,
  filter: { readonly tier?: string | undefined; readonly alive?: boolean | undefined },
  after: string | undefined,
  limit: number
): { readonly rows: ReadonlyArray<CoverageRow>; readonly resumeAfter: string | undefined } => {
  const matching = entries.filter(
    (e) =>
      (filter.tier === undefined || e.tier === filter.tier) &&
      (filter.alive === undefined || e.alive === filter.alive) &&
      (after === undefined || e.asset_id > after)
  )
  // Directories usually come sorted by ID already (the asset directory is): sort only when they are not.
  let sorted = true
  for (let i = 1; i < matching.length && sorted; i++)
    sorted = (matching[i - 1] as DirectoryEntry).asset_id < (matching[i] as DirectoryEntry).asset_id
  if (!sorted) matching.sort((a, b) => (a.asset_id < b.asset_id ? -1 : a.asset_id > b.asset_id ? 1 : 0))
  const page = matching.slice(0, limit)
  const last = page.at(-1)
  return {
    rows: page.map(coverageRow),
    resumeAfter: matching.length > limit && last !== undefined ? last.asset_id : undefined
  }
}

/** The `coverage` handler over the planes' directories. */
export const coverageHandler = (planes: ReadonlyArray<PlaneOperations & ReportsSources>): Handler => {
  const byPlane = new Map<Plane, PlaneOperations & ReportsSources>(planes.map((p) => [p.plane, p]))
  return (input) =>
    Effect.gen(function* () {
      const { op, params } = input
      const id = params.id
      if (typeof id === "string") {
        const plane = planeOf(id)
        const impl = plane === undefined ? undefined : byPlane.get(plane)
        const entry = impl === undefined ? undefined : yield* impl.lookup(id)
        if (entry === undefined) {
          return yield* Effect.fail(
            apiError("unknown_asset", `no asset ${id}; find canonical IDs with \`resolve\``, { param: "id" })
          )
        }
        const statuses = impl?.sourceStatus
        if (statuses === undefined) {
          return { _tag: "Json" as const, body: { data: coverageRow(entry) }, creditsCharged: 0 }
        }
        const all = yield* statuses
        const own = impl?.assetSourceStatus === undefined ? all : yield* impl.assetSourceStatus(entry.asset_id, all)
        const row: CoverageRow = { ...coverageRow(entry), sources: sourcesOf(entry, own, input.nowMs) }
        return { _tag: "Json" as const, body: { data: row }, creditsCharged: 0 }
      }
      let after: string | undefined
      if (typeof params.cursor === "string") {
        const position = decodeCursor(op.name, params, params.cursor)
        if (typeof position !== "string") return yield* Effect.fail(position)
        after = position
      }
      const wanted = Planes.filter((p) => params.plane === undefined || params.plane === p)
      const directories = yield* Effect.forEach(wanted, (p) => byPlane.get(p)?.directory ?? Effect.succeed([]))
      const limit = typeof params.limit === "number" ? params.limit : 100
      const page = browsePage(
        directories.flat(),
        {
          tier: typeof params.tier === "string" ? params.tier : undefined,
          alive: typeof params.alive === "boolean" ? params.alive : undefined
        },
        after,
        limit
      )
      const next_cursor = page.resumeAfter === undefined ? null : encodeCursor(op.name, params, page.resumeAfter)
      // The first page (no cursor) adds the source summary of the planes browsed, when they report statuses.
      const reporting = wanted.flatMap((p) => {
        const status = byPlane.get(p)?.sourceStatus
        return status === undefined ? [] : [{ plane: p, status }]
      })
      if (after !== undefined || reporting.length === 0)
        return { _tag: "Json" as const, body: { data: { rows: page.rows, next_cursor } }, creditsCharged: 0 }
      const statuses = yield* Effect.forEach(reporting, (r) => r.status)
      const sources = sourceSummaryOf(
        reporting.map((r) => r.plane),
        statuses.flat(),
        input.nowMs
      )
      return { _tag: "Json" as const, body: { data: { rows: page.rows, next_cursor, sources } }, creditsCharged: 0 }
    })
}
