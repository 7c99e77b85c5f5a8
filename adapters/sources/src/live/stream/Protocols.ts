/** Each venue's stream protocols (`venues/<venue>/Stream.ts`, `venues/<venue>/Liquidations.ts`). */

import type { LiveVenue } from "../Venue.ts"
import { binanceLiquidationProtocol } from "../venues/binance/Liquidations.ts"
import { binanceStreamProtocol } from "../venues/binance/Stream.ts"
import { bybitLiquidationProtocol } from "../venues/bybit/Liquidations.ts"
import { bybitStreamProtocol } from "../venues/bybit/Stream.ts"
import { hyperliquidStreamProtocol } from "../venues/hyperliquid/Stream.ts"
import { okxLiquidationProtocol } from "../venues/okx/Liquidations.ts"
import { okxStreamProtocol } from "../venues/okx/Stream.ts"
import type { LiquidationProtocol, StreamVenue } from "./Liquidation.ts"
import type { MarketStreamProtocol } from "./Protocol.ts"

/** The market streams (every instance): top of book, mark, index, funding, the forming bar. */
export const StreamProtocols: Readonly<Partial<Record<LiveVenue, MarketStreamProtocol>>> = {
  binance: binanceStreamProtocol,
  bybit: bybitStreamProtocol,
  okx: okxStreamProtocol,
  hyperliquid: hyperliquidStreamProtocol
}

/** The liquidation streams (the leader). Hyperliquid publishes no market-wide liquidations. */
export const LiquidationProtocols: Readonly<Record<StreamVenue, LiquidationProtocol>> = {
  binance: binanceLiquidationProtocol,
  bybit: bybitLiquidationProtocol,
  okx: okxLiquidationProtocol
}
