/**
 * What every venue's listing parser (`venues/<venue>/Listing.ts`) shares: the result shape, reading each instrument
 * with its symbol, and the verdicts for a linear perpetual and a spot pair (`Listings.ts` says what is read).
 */
import { DirectoryQuotes, type ObservedListing, type SkippedListing, splitMultiplier } from "@market-data/core"
import type { Json } from "./Parse.ts"
import type { LiveVenue } from "./Venue.ts"

export interface ParsedListings {
  readonly listings: ReadonlyArray<ObservedListing>
  readonly skipped: ReadonlyArray<SkippedListing>
}

export type Verdict = ObservedListing | Omit<SkippedListing, "venue" | "symbol">

export const text = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined)

/** Reads each instrument; an instrument that is not an object or has no symbol is skipped as `unparsable`. */
export const each = (
  venue: LiveVenue,
  rows: ReadonlyArray<unknown>,
  symbolOf: (row: Json) => string | undefined,
  read: (row: Json, symbol: string) => Verdict
): ParsedListings => {
  const listings: Array<ObservedListing> = []
  const skipped: Array<SkippedListing> = []
  rows.forEach((value, i) => {
    const row = typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : undefined
    const symbol = row === undefined ? undefined : symbolOf(row)
    if (row === undefined || symbol === undefined) {
      skipped.push({ venue, symbol: `#${i}`, reason: "unparsable", detail: "instrument without a symbol" })
      return
    }
    const v = read(row, symbol)
    if ("reason" in v) skipped.push({ venue, symbol, ...v })
    else listings.push(v)
  })
  return { listings, skipped }
}

export const linear = (
  venue: LiveVenue,
  symbol: string,
  venueBase: string | undefined,
  quote: string | undefined,
  extra: { readonly contractSize?: string; readonly status?: ObservedListing["status"] } = {}
): Verdict => {
  if (quote === undefined || !DirectoryQuotes.includes(quote))
    return { reason: "unsupported_quote", detail: `margined in ${quote ?? "(none)"}, not USDT or USDC` }
  const split = venueBase === undefined ? undefined : splitMultiplier(venueBase)
  if (split === undefined)
    return { reason: "unparsable", detail: `base ${JSON.stringify(venueBase)} is not an ASCII ticker (A-Z, 0-9)` }
  return {
    venue,
    market: "perp",
    symbol,
    base: split.base,
    quote,
    multiplier: split.multiplier,
    ...(extra.contractSize === undefined ? {} : { contractSize: extra.contractSize }),
    status: extra.status ?? "trading"
  }
}

// ---------------------------------------------------------------------------------------------------------
// Spot

/** Fiat currencies the venues trade as spot pairs against a stablecoin (`EURUSDT`): not crypto assets. */
export const FiatBases: ReadonlySet<string> = new Set([
  "AUD",
  "BRL",
  "CAD",
  "CHF",
  "EUR",
  "GBP",
  "IDR",
  "JPY",
  "MXN",
  "NGN",
  "PLN",
  "RUB",
  "TRY",
  "UAH",
  "USD",
  "ZAR",
  "ARS",
  "COP",
  "CZK",
  "RON"
])

export const spotPair = (
  venue: LiveVenue,
  symbol: string,
  venueBase: string | undefined,
  quote: string | undefined
): Verdict => {
  if (quote === undefined || !DirectoryQuotes.includes(quote))
    return { reason: "unsupported_quote", detail: `quoted in ${quote ?? "(none)"}, not USDT or USDC` }
  if (venueBase !== undefined && FiatBases.has(venueBase))
    return { reason: "not_crypto", detail: `fiat currency ${venueBase}` }
  const split = venueBase === undefined ? undefined : splitMultiplier(venueBase)
  if (split === undefined)
    return { reason: "unparsable", detail: `base ${JSON.stringify(venueBase)} is not an ASCII ticker (A-Z, 0-9)` }
  return { venue, market: "spot", symbol, base: split.base, quote, multiplier: split.multiplier, status: "trading" }
}

export const strings = (v: unknown): ReadonlyArray<string> =>
  Array.isArray(v) ? v.flatMap((x) => (typeof x === "string" ? [x] : Array.isArray(x) ? strings(x) : [])) : []
