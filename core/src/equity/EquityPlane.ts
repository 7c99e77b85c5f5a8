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
 *
 * This file only assembles the plane. Each operation family lives in `plane/`, over one shared state per plane
 * (`plane/State.ts`: the store, the options, the statement-table cache, the reads the families share):
 *
 * - `plane/Operation.ts`: the per-company preamble of every operation (now, the company, `unknown_asset`), the
 *   call answer and cursor; `plane/Freshness.ts`: the clocks; `plane/Measures.ts`: price measures and percentiles;
 * - `plane/Read.ts` (`read`), `plane/Price.ts` (`price`), `plane/Technicals.ts` (`technicals`),
 *   `plane/Profile.ts` (`profile`), `plane/Valuation.ts` (`valuation`), `plane/Fundamentals.ts` (`growth`,
 *   `fundamentals`);
 * - `plane/Financials.ts` (`financials`), `plane/Events.ts` (`events`), `plane/Holders.ts` (`holders`),
 *   `plane/Series.ts` (`series`), `plane/Directory.ts` (the directory and `lookup`).
 */
import { Effect } from "effect"
import type { Handler } from "../Pipeline.ts"
import type { PlaneForAsset, PlaneOperations } from "../Planes.ts"
import { EquityStore } from "./EquityStore.ts"
import { makeDirectory } from "./plane/Directory.ts"
import { makeEvents } from "./plane/Events.ts"
import { makeFinancials } from "./plane/Financials.ts"
import { makeFundamentals, makeGrowth } from "./plane/Fundamentals.ts"
import { makeHolders } from "./plane/Holders.ts"
import { makePrice } from "./plane/Price.ts"
import { makeProfile } from "./plane/Profile.ts"
import { makeRead } from "./plane/Read.ts"
import { makeSeries } from "./plane/Series.ts"
import { type EquityPlaneOptions, makeEquityState, parseEquityId } from "./plane/State.ts"
import { makeTechnicals } from "./plane/Technicals.ts"
import { makeValuation } from "./plane/Valuation.ts"

export {
  closedBarsThroughMs,
  filingsFreshness,
  nextEdgarMomentMs,
  priceFreshness
} from "./plane/Freshness.ts"
export { sectorOfSic } from "./plane/Profile.ts"
export { aggregateDaily, rangeStartMs, summarize } from "./plane/Series.ts"
export { type EquityPlaneOptions, parseEquityId } from "./plane/State.ts"

/** Builds the equity plane over the store. Time comes from `Clock`. */
export const makeEquityPlane = (options: EquityPlaneOptions = {}): Effect.Effect<PlaneOperations, never, EquityStore> =>
  Effect.gen(function* () {
    const st = makeEquityState(yield* EquityStore, options)
    const { directory, lookup } = yield* makeDirectory(st)
    const perAsset = new Map<string, PlaneForAsset>([
      ["read", makeRead(st)],
      ["price", makePrice(st)],
      ["technicals", makeTechnicals(st)],
      ["profile", makeProfile(st)],
      ["valuation", makeValuation(st)],
      ["growth", makeGrowth(st)],
      ["fundamentals", makeFundamentals(st)]
    ])
    const calls = new Map<string, Handler>([
      ["financials", makeFinancials(st)],
      ["events", makeEvents(st)],
      ["holders", makeHolders(st)],
      ["series", makeSeries(st)]
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
