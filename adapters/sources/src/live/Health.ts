/**
 * Source health as the live connectors record it: one `SourceStatus` per `(venue, component)` in the market
 * store (`source: "live"`), written after every run. A success moves `newestMs` forward (never back), sets
 * `lastSuccessMs` and clears `lastError`; a failure keeps `newestMs` and `lastSuccessMs` (so lag keeps growing
 * from the last good data), sets `failing`, and keeps the error text in `lastError` (and `detail`) until the
 * next success. The crypto venues and SEC EDGAR (`SEC_VENUE`) record alike, so `coverage` and
 * `market-data sources` report every source's last success, lag and error from one place.
 */
import type { Component, MarketStore, SourceStatus } from "@market-data/core"
import { Clock, Effect } from "effect"
import type { SourceError } from "./Http.ts"

/** Longest error or detail text kept in a status. */
export const STATUS_TEXT_MAX = 300

/** A source error as one line of status text. */
export const sourceErrorText = (e: SourceError): string =>
  `${e.kind}: ${e.what}: ${e.message}`.slice(0, STATUS_TEXT_MAX)

const previousOf = (store: MarketStore["Service"], venue: string, component: Component) =>
  Effect.map(store.status, (all) => all.find((s) => s.venue === venue && s.component === component))

export interface ComponentRef {
  readonly venue: string
  readonly component: Component
  /** Expected time between updates (ms). */
  readonly cadenceMs: number
}

/**
 * Records a successful run: data up to `newestMs` (a stored newer time is kept), `lastSuccessMs` now, no
 * error; `detail` names what part of the run delivered nothing (failed instruments or companies), if any.
 */
export const recordSuccess = (
  store: MarketStore["Service"],
  ref: ComponentRef,
  fields: {
    readonly newestMs: number
    readonly detail?: string | undefined
    /** Longest `detail` kept (default `STATUS_TEXT_MAX`); a listing's names every skipped instrument. */
    readonly detailMax?: number
  }
): Effect.Effect<void> =>
  Effect.gen(function* () {
    const nowMs = yield* Clock.currentTimeMillis
    const before = yield* previousOf(store, ref.venue, ref.component)
    const status: SourceStatus = {
      source: "live",
      venue: ref.venue,
      component: ref.component,
      newestMs: Math.max(before?.newestMs ?? 0, fields.newestMs),
      cadenceMs: ref.cadenceMs,
      checkedMs: nowMs,
      failing: false,
      lastSuccessMs: nowMs,
      ...(fields.detail === undefined ? {} : { detail: fields.detail.slice(0, fields.detailMax ?? STATUS_TEXT_MAX) })
    }
    yield* store.putStatus([status])
  })

/** Records a failed run: the newest data time and last success are kept, the error text is kept until a success. */
export const recordFailure = (store: MarketStore["Service"], ref: ComponentRef, error: string): Effect.Effect<void> =>
  Effect.gen(function* () {
    const nowMs = yield* Clock.currentTimeMillis
    const before = yield* previousOf(store, ref.venue, ref.component)
    const text = error.slice(0, STATUS_TEXT_MAX)
    const status: SourceStatus = {
      source: "live",
      venue: ref.venue,
      component: ref.component,
      newestMs: before?.newestMs ?? 0,
      cadenceMs: ref.cadenceMs,
      checkedMs: nowMs,
      failing: true,
      detail: text,
      lastError: text,
      ...(before?.lastSuccessMs === undefined ? {} : { lastSuccessMs: before.lastSuccessMs })
    }
    yield* store.putStatus([status])
  })
