/** Live sources: the four venue connectors, the SEC EDGAR fetcher, the equities' daily price connector, their scheduler and the entry point. */

export { type ParsedCoinList, parseCoinList } from "./CoinList.ts"
export { type CryptoFeed, type CryptoFeedOptions, makeCryptoFeed } from "./CryptoFeed.ts"
export {
  COIN_LIST_MAX_AGE_MS,
  COIN_LIST_VENUE,
  type DirectoryJob,
  type DirectoryJobOptions,
  makeDirectoryJob,
  skippedDetail
} from "./DirectoryJob.ts"
export { type ListingSource, type RefreshReport, refreshDirectory, type VenueRefresh } from "./DirectoryRefresh.ts"
export { fetchJson, fetchText, SourceError } from "./Http.ts"
export { makeLimiter, type RequestLimiter } from "./Limiter.ts"
export {
  ListingParsers,
  type ParsedListings,
  parseBinanceListings,
  parseBybitListings,
  parseHyperliquidListings,
  parseOkxListings
} from "./Listings.ts"
export {
  COIN_LIST_DEFAULT_URL,
  type LiveConfig,
  LiveConfigError,
  LiveEnvironment,
  liveConfig,
  loadLiveConfig,
  validateLiveConfig,
  validateSecUserAgent
} from "./LiveConfig.ts"
export { liveSourcesDoc } from "./LiveDoc.ts"
export { ingestAll, type LiveDirectory, liquidationStreams, makeConnector, startLiveFeeds } from "./LiveFeeds.ts"
export {
  type ChartBars,
  makePriceFeed,
  makePriceLimiter,
  PRICES_BARS,
  PRICES_DEFAULT_BASE_URL,
  type PriceFeed,
  type PricePassReport,
  type PriceTarget,
  type PriceTargets,
  parseYahooChart,
  priceTargets,
  runPricePass
} from "./PriceFeed.ts"
export { backoffSchedule, pollSchedule } from "./Schedules.ts"
export { type DailyIndexFollower, FOLLOWED_FORMS, makeDailyIndexFollower } from "./SecDailyIndex.ts"
export { makeSecFeed, makeSecLimiter, type SecFeed } from "./SecFeed.ts"
export {
  LIQUIDATION_BUCKET_MS,
  type LiquidationProtocol,
  type LiquidationStreamOptions,
  runLiquidationStream,
  type StreamVenue,
  StreamVenues
} from "./stream/Liquidation.ts"
export { LiquidationProtocols, StreamProtocols } from "./stream/Protocols.ts"
export { type Instrument, type LiveVenue, LiveVenues, type VenueConnector } from "./Venue.ts"
export { makeBinance } from "./venues/binance/Rest.ts"
export { makeBybit } from "./venues/bybit/Rest.ts"
export { makeHyperliquid } from "./venues/hyperliquid/Rest.ts"
export { makeOkx } from "./venues/okx/Rest.ts"
