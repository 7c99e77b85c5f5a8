/** Each venue's market-stream protocol (`venues/<venue>/Stream.ts`). */

import type { LiveVenue } from "../Venue.ts"
import { binanceStreamProtocol } from "../venues/binance/Stream.ts"
import type { MarketStreamProtocol } from "./Protocol.ts"

export const StreamProtocols: Readonly<Partial<Record<LiveVenue, MarketStreamProtocol>>> = {
  binance: binanceStreamProtocol
}
