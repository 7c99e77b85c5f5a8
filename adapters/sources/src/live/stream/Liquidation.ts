/**
 * What the venues' liquidation stream protocols (`venues/<venue>/Liquidations.ts`) share with the stream that runs
 * them (`../LiquidationStreams.ts`): a print, what one message says, subscription requests, the protocol's shape,
 * and the checked readers of a side and an amount.
 */

import { Malformed, num } from "../Parse.ts"

/** The venues whose liquidations come over a websocket. */
export const StreamVenues = ["binance", "bybit"] as const
export type StreamVenue = (typeof StreamVenues)[number]

/** One liquidation as a venue printed it, in USD. */
export interface LiquidationPrint {
  readonly symbol: string
  readonly t: number
  /** `long`: a long position was liquidated (a forced sell); `short`: a forced buy. */
  readonly side: "long" | "short"
  readonly usd: number
}

/** What one websocket message says. */
export type StreamMessage =
  | { readonly _tag: "prints"; readonly prints: ReadonlyArray<LiquidationPrint> }
  | { readonly _tag: "subscribed"; readonly id: string }
  | { readonly _tag: "refused"; readonly id: string; readonly message: string }
  | { readonly _tag: "pong" }
  | { readonly _tag: "other" }

/** A subscription request: its id (as its answer names it), the venue symbols it covers, the frame to send. */
export interface SubscriptionRequest {
  readonly id: string
  readonly symbols: ReadonlyArray<string>
  readonly text: string
}

/** A venue's websocket protocol for liquidations. */
export interface StreamProtocol {
  readonly venue: StreamVenue
  /** The websocket URL under a base URL. */
  readonly url: (baseUrl: string) => string
  readonly subscriptions: (symbols: ReadonlyArray<string>) => ReadonlyArray<SubscriptionRequest>
  /** Reads one parsed message; throws `Malformed` when it is not the documented format. */
  readonly read: (message: unknown) => StreamMessage
  /** The keep-alive frame the client sends, and how often. */
  readonly ping: { readonly text: string; readonly everyMs: number }
  /** One subscription carries every symbol (Binance `!forceOrder@arr`): a new symbol needs no request. */
  readonly allSymbols: boolean
}

export const side = (value: string, long: string, short: string, path: string): "long" | "short" => {
  if (value === long) return "long"
  if (value === short) return "short"
  throw new Malformed(`${path}: not ${long} or ${short} (${JSON.stringify(value).slice(0, 20)})`)
}

export const nonNegative = (value: unknown, path: string): number => {
  const n = num(value, path)
  if (n < 0) throw new Malformed(`${path}: negative`)
  return n
}
