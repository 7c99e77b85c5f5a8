/**
 * What each perpetual venue's own figures mean, as its documentation states them, and how the service makes
 * them comparable. One table feeds the live connectors' conversions (their module comments cite it), the
 * `domains` docs ("Venue conventions") and the provenance the answers carry, so the three cannot drift apart.
 *
 * Open interest: every answer gives USD of one side (each open long is matched by a short; one side counts the
 * contracts once). A venue that publishes both sides summed is halved to one side, or read from its one-side
 * field where it has one; `open_interest.by_venue` marks such a venue's row (`venue_counts: "both_sides"`).
 *
 * Liquidations: a venue either pushes every liquidation (complete), pushes or serves only part of them (the
 * figures built from it are a lower bound), or publishes none to the public. `liquidations` says when its totals
 * are a lower bound and why, venue by venue (`lower_bound`), and only then.
 */

/** How a venue counts its own open-interest figure: each matched long/short once, or both sides summed. */
export type OpenInterestCount = "one_side" | "both_sides"

/** How much of the venue's liquidations the service receives. */
export type LiquidationCompleteness = "complete" | "lower_bound" | "not_published"

/** Why a venue's part of a liquidation total is (or makes the total) a lower bound. */
export const LowerBoundReasons = ["snapshot_stream", "page_capped", "not_published", "no_data"] as const
export type LowerBoundReason = (typeof LowerBoundReasons)[number]

/** The liquidation figures a lower bound applies to: the total, and the total over open interest. */
export const LowerBoundFigures = ["total_24h_usd", "intensity_pct_of_oi_24h"] as const
export type LowerBoundFigure = (typeof LowerBoundFigures)[number]

export interface VenueConvention {
  readonly venue: string
  readonly name: string
  readonly openInterest: {
    /** How the venue's headline open interest counts. */
    readonly counts: OpenInterestCount
    /** The unit of the venue's figure. */
    readonly unit: string
    /** How the service turns it into USD of one side. */
    readonly toOneSideUsd: string
    /** Where the venue says so. */
    readonly source: string
  }
  readonly liquidations: {
    readonly completeness: LiquidationCompleteness
    /** Set when `completeness` is not `complete`. */
    readonly reason?: LowerBoundReason
    /** What the service reads, and what the venue says it covers. */
    readonly feed: string
    /** The sentence an answer carries beside the reason. */
    readonly detail: string
    readonly source: string
  }
}

/** The four perpetual venues' conventions. */
export const VenueConventions: ReadonlyArray<VenueConvention> = [
  {
    venue: "binance",
    name: "Binance",
    openInterest: {
      counts: "one_side",
      unit: "units of the symbol (a USD-M contract is one unit: 1 BTC for BTCUSDT, 1,000 PEPE for 1000PEPEUSDT)",
      toOneSideUsd: "`openInterest` x mark price (`premiumIndex`); history `sumOpenInterestValue` (USD)",
      source: "USD-M futures REST: Open Interest, Open Interest Statistics"
    },
    liquidations: {
      completeness: "lower_bound",
      reason: "snapshot_stream",
      feed: "websocket `!forceOrder@arr`: for each symbol only the latest liquidation within each 1,000 ms is pushed, as a snapshot; the REST history was withdrawn",
      detail:
        "Binance's all-market liquidation stream is a snapshot: at most the latest liquidation per symbol per second, so busier seconds are under-counted",
      source: "USD-M futures websocket: All Market Liquidation Order Streams"
    }
  },
  {
    venue: "bybit",
    name: "Bybit",
    openInterest: {
      counts: "both_sides",
      unit: "coins (a linear contract is one coin); `openInterestValue` in USD",
      toOneSideUsd:
        "`singleOpenInterestValue` (USD, one side; published since 2026-06-11); where a row lacks it, `openInterestValue` / 2. History: `singleOpenInterest` (or `openInterest` / 2) x the open of its 15-minute bar",
      source:
        "v5 Get Tickers (`openInterest`, `openInterestValue`: both sides; `singleOpenInterest`, `singleOpenInterestValue`: single side), Get Open Interest (`openInterest`: the sum of both sides)"
    },
    liquidations: {
      completeness: "complete",
      feed: "websocket `allLiquidation.<symbol>`: pushes all liquidations that occur on Bybit, every 500 ms, while connected (an outage's liquidations are not recovered)",
      detail: "Bybit's allLiquidation stream pushes every liquidation",
      source: "v5 websocket: All Liquidation"
    }
  },
  {
    venue: "okx",
    name: "OKX",
    openInterest: {
      counts: "one_side",
      unit: "contracts of `ctVal` x `ctMult` coins (BTC-USDT-SWAP: 0.01 BTC)",
      toOneSideUsd: "`oi` x `ctVal` x `ctMult` x mark price (OKX's own `oiUsd` agrees); history `oiUsd`",
      source: "v5 Get open interest (`oi` contracts, `oiCcy` coins, `oiUsd` USD), Get instruments"
    },
    liquidations: {
      completeness: "lower_bound",
      reason: "page_capped",
      feed: "websocket `liquidation-orders` (`SWAP`, every swap; at most one liquidation order a second per instrument family), beside REST `public/liquidation-orders` (liquidation orders of the last day, at most 100 a request) polled every 5 minutes for the newest 100 filled orders of each instrument family (more in 5 minutes are not read) as backfill and fallback; each one-minute bucket keeps the larger count of the two, never their sum. OKX does not state that either lists every liquidation (the channel says its data is not the total)",
      detail:
        "OKX's liquidation stream pushes at most one order a second per instrument family and its REST list is polled every 5 minutes for the newest 100: each minute is the larger of the two counts, and OKX does not state that either is complete",
      source: "v5 Liquidation orders channel; Get liquidation orders"
    }
  },
  {
    venue: "hyperliquid",
    name: "Hyperliquid",
    openInterest: {
      counts: "both_sides",
      unit: "coins (kPEPE: 1,000 PEPE)",
      toOneSideUsd: "`openInterest` x `markPx` / 2",
      source:
        "info `metaAndAssetCtxs` (`openInterest` in coins); Hyperliquid defines open interest as the sum of absolute position sizes (HIP-3 open interest caps), longs and shorts both counted"
    },
    liquidations: {
      completeness: "not_published",
      reason: "not_published",
      feed: "none: the info API and the public websocket carry no market-wide liquidations (only feeds scoped to one user's address)",
      detail: "Hyperliquid publishes no market-wide liquidations: its share of the total is missing",
      source: "info endpoint and websocket subscriptions"
    }
  }
]

/** A venue's conventions, when it is one of the four perpetual venues. */
export const venueConvention = (venue: string): VenueConvention | undefined =>
  VenueConventions.find((c) => c.venue === venue)

/** Whether a venue's own open-interest figure counts both sides (the answer shows one side). */
export const countsBothSides = (venue: string): boolean => venueConvention(venue)?.openInterest.counts === "both_sides"

/** One venue behind a lower bound. */
export interface LowerBoundVenue {
  readonly venue: string
  readonly reason: LowerBoundReason
  readonly detail: string
}

const NO_DATA_DETAIL = "no liquidation of this venue is on record for the asset: its share of the total is missing"

/**
 * The venues that make an asset's liquidation totals a lower bound, in the order of `perpVenues` (the asset's
 * perpetual venues): each that delivered liquidations under a partial convention (Binance's snapshot stream,
 * OKX's capped poll), and each that delivered none at all (Hyperliquid publishes none; another venue has none on
 * record). Empty when every perpetual venue delivered under a complete convention. `withData` are the venues
 * whose liquidation series the figures were computed from. (No imports: `Results.ts` reads this module's lists.)
 */
export const liquidationLowerBound = (
  perpVenues: ReadonlyArray<string>,
  withData: ReadonlyArray<string>
): ReadonlyArray<LowerBoundVenue> => {
  const out: Array<LowerBoundVenue> = []
  for (const venue of new Set(perpVenues)) {
    const c = venueConvention(venue)
    if (!withData.includes(venue)) {
      out.push(
        c?.liquidations.completeness === "not_published"
          ? { venue, reason: "not_published", detail: c.liquidations.detail }
          : { venue, reason: "no_data", detail: NO_DATA_DETAIL }
      )
    } else if (c?.liquidations.completeness === "lower_bound" && c.liquidations.reason !== undefined) {
      out.push({ venue, reason: c.liquidations.reason, detail: c.liquidations.detail })
    }
  }
  return out
}
