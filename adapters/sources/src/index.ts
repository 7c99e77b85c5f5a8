/** @market-data/sources: data sources (simulated market, SEC filings and their parsers). */

export {
  type LiveConfig,
  LiveConfigError,
  liveConfig,
  liveSourcesDoc,
  loadLiveConfig,
  startLiveFeeds
} from "./live/index.ts"
export * from "./sec/index.ts"
export { type SimulatedCryptoOptions, startSimulatedCrypto } from "./simulated/crypto/Feed.ts"
export * as SimulatedCrypto from "./simulated/crypto/index.ts"
export { makeSimulatedUniverse, type SimulatedUniverse } from "./simulated/crypto/Universe.ts"
export * from "./simulated/equity/index.ts"
