/**
 * A venue's websocket protocol, as the shared connection manager (`MarketStream.ts`) drives it: which
 * topics a symbol needs, how to (un)subscribe them, the venue's limits, its keep-alive, and a reader that turns
 * one frame into updates of a `VenueSink` (in the venue's own units: the stream runner `MarketStream.ts` maps
 * symbols to canonical assets and converts units).
 *
 * Each venue's protocol lives in its own folder (`venues/<venue>/Stream.ts`) with the documentation it follows.
 */
import type { Component } from "@market-data/core"
import type { Instrument, LiveVenue } from "../Venue.ts"

/** What one ticker frame says of one symbol, in the venue's units (absent: not in this frame). */
export interface VenueTickerFields {
  readonly mark?: number | undefined
  readonly index?: number | undefined
  /** The running interval's funding rate, a fraction per interval. */
  readonly fundingRate?: number | undefined
  readonly predictedRate?: number | undefined
  readonly nextFundingMs?: number | undefined
  readonly intervalMs?: number | undefined
  /** Open interest in USD, one side, where the venue gives it so. */
  readonly oiUsd?: number | undefined
  /** Open interest in the venue's quantity unit (contracts or base units of the symbol), one side. */
  readonly oiQuantity?: number | undefined
}

/** The 15-minute bar still forming, as a kline stream sends it (venue price and quantity units). */
export interface VenueBar {
  /** The bar's open time (a multiple of 15 minutes). */
  readonly openMs: number
  readonly open: number
  readonly high: number
  readonly low: number
  readonly close: number
  /** In the venue's quantity unit (contracts or units of the symbol). */
  readonly volume: number
  /** Quote (USD) volume, and its taker-buy part, where the venue sends them (Binance). */
  readonly quoteVolume?: number | undefined
  readonly takerBuyQuote?: number | undefined
  /** The venue says the bar is closed and final (Binance `x: true`, Bybit `confirm: true`). */
  readonly closed?: boolean | undefined
}

/** One liquidation as a venue printed it (its price and quantity units: the sink converts). */
export interface VenueLiquidation {
  readonly symbol: string
  /** The venue's time of the liquidation. */
  readonly t: number
  /** `long`: a long position was liquidated (a forced sell); `short`: a forced buy. */
  readonly side: "long" | "short"
  /** Price per unit of the symbol (USDT). */
  readonly price: number
  /** In the venue's quantity unit (contracts or units of the symbol). */
  readonly quantity: number
}

/** Where a reader puts what it read (venue symbols, venue price and quantity units). */
export interface VenueSink {
  readonly quote: (symbol: string, t: number, bid: number, bidSize: number, ask: number, askSize: number) => void
  readonly ticker: (symbol: string, t: number, fields: VenueTickerFields) => void
  /** The forming 15-minute bar (kline streams). */
  readonly bar?: (symbol: string, t: number, bar: VenueBar) => void
  /**
   * The liquidations of one frame, all at once: a frame with one bad print is skipped whole, so nothing of it is
   * counted (liquidation streams).
   */
  readonly liquidations?: (prints: ReadonlyArray<VenueLiquidation>) => void
}

/** What one frame was, beside the data it carried. */
export type FrameKind =
  | { readonly kind: "data" }
  /**
   * A (un)subscription request answered: its id as sent (request ids start at 100), or the topics it names where
   * the venue acknowledges topic by topic.
   */
  | { readonly kind: "ack"; readonly id?: string | undefined; readonly topics?: ReadonlyArray<string> | undefined }
  /** A request refused, or topics the venue refuses (an error frame naming them). */
  | {
      readonly kind: "refused"
      readonly id?: string | undefined
      readonly topics?: ReadonlyArray<string> | undefined
      readonly message: string
    }
  | { readonly kind: "pong" }
  /** The venue's numbering shows a lost message for a topic: resubscribe it (its next snapshot repairs it). */
  | { readonly kind: "gap"; readonly topic: string; readonly message: string }
  | { readonly kind: "other" }

/** Reads frames of one connection (its state, such as delta bases and sequence numbers, is the connection's). */
export interface StreamReader {
  /** Reads one text frame; throws `Malformed` (`../Parse.ts`) when it is not the documented format. */
  readonly read: (text: string, sink: VenueSink) => FrameKind
  /** Forgets a topic's state (before it is subscribed again). */
  readonly reset?: (topic: string) => void
}

/** A venue's documented websocket limits, and what this service chooses within them. */
export interface StreamLimits {
  /** Topics one connection carries at most. */
  readonly topicsPerConnection: number
  /** Topics one (un)subscribe message carries at most. */
  readonly topicsPerMessage: number
  /** Messages the client sends per second on one connection, at most. */
  readonly messagesPerSecond: number
  /** New connections per second to the venue from this process, at most (the venues limit them per IP). */
  readonly connectsPerSecond: number
  /** The venue closes a connection after this long: it is replaced before then (undefined: no such limit). */
  readonly maxLifetimeMs?: number | undefined
  /** The client's keep-alive period (its `ping` frame), and how long silence may last before the link is dead. */
  readonly pingEveryMs: number
  readonly silenceMs: number
  /** A subscribed symbol not mentioned for this long is served from REST (`QuoteBoard.setSilent`). */
  readonly symbolSilenceMs: number
}

export interface MarketStreamProtocol {
  readonly venue: LiveVenue
  /**
   * The websocket URL of a topic's endpoint under a base URL (Binance routes book data to `/public`, the rest to
   * `/market`): topics of one endpoint share connections.
   */
  readonly url: (baseUrl: string, topic: string) => string
  /** The components the stream carries (each venue's status model: `books`, `fundingState`). */
  readonly components: ReadonlyArray<Component>
  /** Topics that cover every symbol (all-market channels). */
  readonly marketTopics: ReadonlyArray<string>
  /** The per-symbol topics of a symbol (its instrument, where the stream follows one, may add some). */
  readonly symbolTopics: (symbol: string, instrument?: Instrument) => ReadonlyArray<string>
  /** The symbol a per-symbol topic is for (undefined for market topics). */
  readonly symbolOfTopic: (topic: string) => string | undefined
  readonly subscribe: (topics: ReadonlyArray<string>, id: number) => string
  readonly unsubscribe: (topics: ReadonlyArray<string>, id: number) => string
  /** The client's keep-alive frame (undefined: none; the venue's pings are answered by the websocket). */
  readonly ping?: string | undefined
  readonly limits: StreamLimits
  readonly reader: () => StreamReader
  /** What the streams are, for LiveDoc and the status detail. */
  readonly describe: string
  /**
   * The kline stream marks a bar's last update as closed (`VenueBar.closed`): the feed stores closed bars from the
   * stream and asks REST only for those it missed (`CryptoFeed.ts`, closed-bars job).
   */
  readonly closedBars?: boolean | undefined
}
