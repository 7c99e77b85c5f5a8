/**
 * Building blocks of the crypto plane's results: how figures and times are printed, the `unavailable` block
 * (`Gaps`), the freshness clocks every result carries, and the keys and moments the result memo uses.
 */
import type { CanonicalParams } from "../../Params.ts"
import { CadenceWindow, MinBaselineN, percentileRank } from "../../Percentile.ts"
import type { ResultFreshness } from "../Freshness.ts"
import type { SourceStatus } from "../Market.ts"
import { PrintPrecision } from "../Measures.ts"

export type Reason =
  | "not_covered"
  | "no_data"
  | "insufficient_history"
  | "source_stale"
  | "source_down"
  | "not_applicable"
export type Unavailable = Record<string, { reason: Reason; detail?: string }>

/**
 * Ten significant digits: enough for any market measurement, without binary noise in the JSON. USD amounts
 * and prices (a token may trade at 1e-8 USD) are printed so.
 */
export const roundValue = (x: number): number => (x === 0 ? 0 : Number(x.toPrecision(PrintPrecision.significantDigits)))

export const ratioScale = 10 ** PrintPrecision.ratioDecimals
/**
 * A percentage, rate, ratio or indicator value as printed: ten significant digits and at most 12 decimal
 * places (`PrintPrecision`), so the rounding residue of a difference of equal inputs (3.5e-18) prints as 0.
 */
export const roundRatio = (x: number): number => roundValue(Math.round(x * ratioScale) / ratioScale)

/** A figure as printed, by its name: USD amounts (`usd`, `..._usd`) by `roundValue`, the rest by `roundRatio`. */
export const roundFigure = (name: string, x: number): number =>
  name === "usd" || name.endsWith("_usd") || name.endsWith(".usd") ? roundValue(x) : roundRatio(x)

/** ISO 8601 text of a time. */
export const iso = (ms: number): string => new Date(ms).toISOString()

/** Most per-asset results remembered at once (operations x assets x parameter sets in use). */
export const MaxMemoizedResults = 4096

/** The parameters a per-asset result depends on, as text: all but the asset IDs, in name order. */
export const paramsKey = (params: CanonicalParams): string => {
  let key = ""
  for (const name of Object.keys(params).sort()) {
    if (name === "id" || name === "ids") continue
    key += `${name}=${JSON.stringify(params[name])};`
  }
  return key
}

/**
 * The first moment after `nowMs` at which something timed on the grid `newestMs + k * cadenceMs` can change:
 * freshness compares ages with `<=` (live up to one cadence, delayed up to three) and `next_update_at` moves
 * to the next slot once a slot has passed, so every change happens 1 ms after a grid point.
 */
export const nextChangeMs = (newestMs: number, cadenceMs: number, nowMs: number): number =>
  newestMs + Math.ceil((nowMs - newestMs) / cadenceMs) * cadenceMs + 1

/** Collects `unavailable` entries while a result is built. */
export class Gaps {
  readonly entries: Unavailable = {}
  add(component: string, reason: Reason, detail?: string): null {
    this.entries[component] = detail === undefined ? { reason } : { reason, detail }
    return null
  }
  /**
   * `{value, pctl}` of `value` in `window`, or null with the reason recorded: for a missing value `missing` when
   * given (why it is missing, e.g. `insufficient_history`), else `no_data`.
   */
  contextual(
    component: string,
    value: number,
    window: CadenceWindow | ArrayLike<number> | undefined,
    missing?: { readonly reason: Reason; readonly detail: string }
  ): { value: number; pctl: number; n: number } | null {
    if (!Number.isFinite(value)) {
      return missing === undefined
        ? this.add(component, "no_data", "its inputs are missing in the store")
        : this.add(component, missing.reason, missing.detail)
    }
    const sorted = window ?? []
    const pctl = sorted instanceof CadenceWindow ? sorted.rank(value) : percentileRank(value, sorted)
    const n = sorted instanceof CadenceWindow ? sorted.n : sorted.length
    if (pctl === undefined) {
      return this.add(
        component,
        "insufficient_history",
        `${n} baseline samples; a percentile needs at least ${MinBaselineN}`
      )
    }
    return { value: roundFigure(component, value), pctl, n }
  }
  plain(component: string, value: number | undefined): number | null {
    if (value === undefined || !Number.isFinite(value)) return this.add(component, "no_data")
    return roundFigure(component, value)
  }
  /**
   * The sources feeding this result are failing: what is missing is missing because of them, so `no_data`
   * becomes `source_down` (DECISIONS: the reason names the cause a client can act on: wait and retry).
   */
  blameFailingSource(): void {
    for (const [component, entry] of Object.entries(this.entries)) {
      if (entry.reason !== "no_data") continue
      this.entries[component] = {
        reason: "source_down",
        detail: entry.detail === undefined ? "its source is failing" : `${entry.detail}; its source is failing`
      }
    }
  }
  /** `unavailable` when something is missing (the key is absent otherwise). */
  get block(): { unavailable?: Unavailable } {
    return Object.keys(this.entries).length === 0 ? {} : { unavailable: this.entries }
  }
}

export const clocks = (f: ResultFreshness) => ({
  as_of: iso(f.asOfMs),
  status: f.status,
  next_update_at: iso(f.nextUpdateAtMs)
})

export const sourceOf = (statuses: ReadonlyArray<SourceStatus>): { source?: string } =>
  statuses[0] === undefined ? {} : { source: statuses[0].source }
