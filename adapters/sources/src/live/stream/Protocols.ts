/** Each venue's market-stream protocol (`venues/<venue>/Stream.ts`). */

import type { LiveVenue } from "../Venue.ts"
import { binanceStreamProtocol } from "../venues/binance/Stream.ts"
import { bybitStreamProtocol } from "../venues/bybit/Stream.ts"
import { hyperliquidStreamProtocol } from "../venues/hyperliquid/Stream.ts"
import { okxStreamProtocol } from "../venues/okx/Stream.ts"
import type { MarketStreamProtocol } from "./Protocol.ts"

export const StreamProtocols: Readonly<Partial<Record<LiveVenue, MarketStreamProtocol>>> = {
  binance: binanceStreamProtocol,
  bybit: bybitStreamProtocol,
  okx: okxStreamProtocol,
  hyperliquid: hyperliquidStreamProtocol
}
