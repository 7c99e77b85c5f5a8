/**
 * Configuration of the live sources, read from the environment through Effect `Config` (`loadLiveConfig`, which
 * the composition root calls when `MARKET_DATA_FEED=live`), or built directly (`liveConfig`) in tests. Every
 * problem names its variable. SEC EDGAR refuses anonymous clients, so `MARKET_DATA_SEC_USER_AGENT` (a name and a
 * contact e-mail, as the SEC asks) is required in live mode.
 */
import { Config, ConfigProvider, Data, Effect } from "effect"
import { PRICES_DEFAULT_BASE_URL, PRICES_DEFAULT_PER_MINUTE } from "./PriceFeed.ts"
import { type LiveVenue, LiveVenues } from "./Venue.ts"
import { BINANCE_DEFAULT_BASE_URL } from "./venues/binance/Rest.ts"
import { BYBIT_DEFAULT_BASE_URL } from "./venues/bybit/Rest.ts"
import { HYPERLIQUID_DEFAULT_BASE_URL } from "./venues/hyperliquid/Rest.ts"
import { OKX_DEFAULT_BASE_URL } from "./venues/okx/Rest.ts"

export const SEC_DATA_DEFAULT_BASE_URL = "https://data.sec.gov"
export const SEC_ARCHIVES_DEFAULT_BASE_URL = "https://www.sec.gov"

/** Companies followed by default: Apple, Microsoft, Alphabet, Amazon, NVIDIA. */
export const DEFAULT_SEC_CIKS: ReadonlyArray<string> = ["320193", "789019", "1652044", "1018724", "1045810"]
/** 13F filers followed by default: Berkshire Hathaway. */
export const DEFAULT_SEC_13F_FILERS: ReadonlyArray<string> = ["1067983"]

export interface LiveConfig {
  readonly venues: ReadonlyArray<LiveVenue>
  readonly baseUrls: Readonly<Record<LiveVenue, string>> & {
    /** data.sec.gov: submissions and companyfacts. */
    readonly secData: string
    /** www.sec.gov: the Archives (filing documents) and the ticker lists. */
    readonly secArchives: string
    /** The equities' daily price source (Yahoo Finance's chart endpoint). */
    readonly prices: string
  }
  /**
   * Websocket base URLs of the venues: their market streams (`stream/MarketStream.ts`: top of book, mark, index,
   * funding, the forming bar) and, for Binance, Bybit and OKX, their liquidations (`stream/Liquidation.ts`). A
   * venue without one runs no stream: its books are polled over REST, and Binance's and Bybit's liquidations
   * component is not reported (OKX's stays on its REST poll).
   */
  readonly wsBaseUrls: Readonly<Partial<Record<LiveVenue, string>>>
  /**
   * OKX's business websocket base URL (its candles are served at `/ws/v5/business` only); absent: the OKX
   * websocket base URL's; `off`: no candles streamed (the forming bar over REST).
   */
  readonly okxWsBusinessBaseUrl?: string | undefined
  /**
   * The market streams read their frames on a worker thread of their own (`stream/WorkerStreams.ts`; default),
   * or, `false`, on the thread that answers requests (`MARKET_DATA_STREAM_THREAD=off`).
   */
  readonly streamThread: boolean
  /**
   * The stream worker thread's niceness, 0 to 19 (`MARKET_DATA_STREAM_THREAD_NICE`, default 10): above the
   * answering thread's, so that a request is served first when both want a core (`stream/ThreadPriority.ts`).
   */
  readonly streamThreadNice: number
  /** `User-Agent` sent to SEC EDGAR: a name and a contact e-mail. */
  readonly secUserAgent: string
  /** Companies whose filings are ingested (CIKs without leading zeros). */
  readonly secCiks: ReadonlyArray<string>
  /** Institutional managers whose 13F-HR reports are ingested (the holders of the covered companies). */
  readonly sec13fFilers: ReadonlyArray<string>
  /** The equities' daily price connector: `yahoo` (Yahoo Finance's chart endpoint) or `off`. */
  readonly prices: "yahoo" | "off"
  /** Requests per minute to the price source (one at a time). */
  readonly pricesPerMinute: number
  /** Every SEC request of the process shares one limiter at this many requests per second (2 to 10; the SEC's limit is 10). */
  readonly secMaxRequestsPerSecond: number
  /** Follow every company's new Form 4, 13F-HR, 10-K, 10-Q and 8-K filings (EDGAR's latest-filings feed and daily index). */
  readonly secFollowDailyIndex: boolean
  /** Days of 15-minute history fetched at first start. */
  readonly backfillDays: number
  /** Days of funding settlements fetched at first start. */
  readonly fundingBackfillDays: number
  /** Per-request timeout (ms). */
  readonly requestTimeoutMs: number
  /** Random delay added to each poll (ms). */
  readonly jitterMs: number
  /** How long a leader's lease lasts without renewal (ms); it renews every third of it. */
  readonly leaderLeaseMs: number
  /** This instance's name in the leader lock. */
  readonly instanceId: string
  /** How often the asset directory's listing job reads the venues' instrument lists (ms; default one hour). */
  readonly listingsEveryMs: number
  /** The public coin list (CoinGecko `coins/list` shape) that names new assets, or `off` (the bundled coins only). */
  readonly coinListUrl: string
}

/** CoinGecko's public coin list: every coin's ID, ticker and name. */
export const COIN_LIST_DEFAULT_URL = "https://api.coingecko.com/api/v3/coins/list"

/** A live-mode configuration problem, naming the variable. */
export class LiveConfigError extends Data.TaggedError("LiveConfigError")<{
  readonly variable: string
  readonly message: string
}> {}

const DEFAULT_BASE_URLS: LiveConfig["baseUrls"] = {
  binance: BINANCE_DEFAULT_BASE_URL,
  bybit: BYBIT_DEFAULT_BASE_URL,
  okx: OKX_DEFAULT_BASE_URL,
  hyperliquid: HYPERLIQUID_DEFAULT_BASE_URL,
  secData: SEC_DATA_DEFAULT_BASE_URL,
  secArchives: SEC_ARCHIVES_DEFAULT_BASE_URL,
  prices: PRICES_DEFAULT_BASE_URL
}

/** Binance USD-M futures' websocket host (its routed endpoints are `/public` and `/market`). */
export const BINANCE_WS_DEFAULT_BASE_URL = "wss://fstream.binance.com"
/** Bybit v5's websocket host (linear perpetuals at `/v5/public/linear`). */
export const BYBIT_WS_DEFAULT_BASE_URL = "wss://stream.bybit.com"
/** OKX v5's public websocket host (its public channels are at `/ws/v5/public`, its candles at `/ws/v5/business`). */
export const OKX_WS_DEFAULT_BASE_URL = "wss://ws.okx.com:8443"
/** Hyperliquid's websocket host (at `/ws`). */
export const HYPERLIQUID_WS_DEFAULT_BASE_URL = "wss://api.hyperliquid.xyz"

const DEFAULT_WS_BASE_URLS: Readonly<Record<LiveVenue, string>> = {
  binance: BINANCE_WS_DEFAULT_BASE_URL,
  bybit: BYBIT_WS_DEFAULT_BASE_URL,
  okx: OKX_WS_DEFAULT_BASE_URL,
  hyperliquid: HYPERLIQUID_WS_DEFAULT_BASE_URL
}

/**
 * The default websocket base URL of each streaming venue: its public websocket while its REST base URL is its
 * public API; none (no stream) when the REST base URL points elsewhere (a local replay server or a proxy has no
 * stream of the venue's to offer, and the service must not reach the real venue behind its operator's back).
 */
export const defaultWsBaseUrls = (baseUrls: LiveConfig["baseUrls"]): LiveConfig["wsBaseUrls"] => {
  const out: Partial<Record<LiveVenue, string>> = {}
  for (const venue of LiveVenues) {
    if (baseUrls[venue] === DEFAULT_BASE_URLS[venue]) out[venue] = DEFAULT_WS_BASE_URLS[venue]
  }
  return out
}

/**
 * The default coin list: CoinGecko's while the venues are the public ones; none (`off`: the bundled well-known
 * coins name new assets) when a venue's base URL points elsewhere (a replay server or a proxy), so the service
 * never reaches a public source its operator did not point it at.
 */
export const defaultCoinListUrl = (baseUrls: LiveConfig["baseUrls"]): string =>
  LiveVenues.every((v) => baseUrls[v] === DEFAULT_BASE_URLS[v]) ? COIN_LIST_DEFAULT_URL : "off"

/** A configuration with defaults for everything but the SEC user agent. */
export const liveConfig = (overrides: Partial<LiveConfig> & { readonly secUserAgent: string }): LiveConfig => ({
  venues: LiveVenues,
  baseUrls: DEFAULT_BASE_URLS,
  wsBaseUrls: defaultWsBaseUrls(overrides.baseUrls ?? DEFAULT_BASE_URLS),
  secCiks: DEFAULT_SEC_CIKS,
  sec13fFilers: DEFAULT_SEC_13F_FILERS,
  prices: "yahoo",
  pricesPerMinute: PRICES_DEFAULT_PER_MINUTE,
  secMaxRequestsPerSecond: 10,
  secFollowDailyIndex: true,
  backfillDays: 90,
  fundingBackfillDays: 365,
  requestTimeoutMs: 10_000,
  streamThread: true,
  streamThreadNice: 10,
  jitterMs: 2_000,
  leaderLeaseMs: 30_000,
  instanceId: `md-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
  listingsEveryMs: 30 * 60_000,
  coinListUrl: defaultCoinListUrl(overrides.baseUrls ?? DEFAULT_BASE_URLS),
  ...overrides
})

/**
 * The SEC's rule for automated access: a `User-Agent` naming the company or person and a contact e-mail
 * ("Sample Company Name AdminContact@<sample company domain>.com").
 */
export const validateSecUserAgent = (value: string | undefined): LiveConfigError | undefined => {
  const text = value?.trim() ?? ""
  if (text === "")
    return new LiveConfigError({
      variable: "MARKET_DATA_SEC_USER_AGENT",
      message:
        'MARKET_DATA_SEC_USER_AGENT is required with MARKET_DATA_FEED=live: SEC EDGAR refuses requests without a User-Agent naming you and a contact e-mail, e.g. "Example Corp ops@example.com"'
    })
  if (!/[^\s@]+@[^\s@]+\.[^\s@]+/.test(text))
    return new LiveConfigError({
      variable: "MARKET_DATA_SEC_USER_AGENT",
      message: `MARKET_DATA_SEC_USER_AGENT must contain a contact e-mail (the SEC asks for one), e.g. "Example Corp ops@example.com"; got ${JSON.stringify(text)}`
    })
  // The SEC's form is "Name email": a name besides the address (the SEC answers 403 to an address alone).
  if (!text.split(/\s+/).some((word) => !word.includes("@") && /[A-Za-z]/.test(word)))
    return new LiveConfigError({
      variable: "MARKET_DATA_SEC_USER_AGENT",
      message: `MARKET_DATA_SEC_USER_AGENT must be of the form "Name email" (a name, then a contact e-mail), e.g. "Example Corp ops@example.com"; got ${JSON.stringify(text)}`
    })
  if (/[\r\n]/.test(text))
    return new LiveConfigError({
      variable: "MARKET_DATA_SEC_USER_AGENT",
      message: "MARKET_DATA_SEC_USER_AGENT must be one line"
    })
  return undefined
}

/** Checks a configuration built in code (what `loadLiveConfig` checks after reading the environment). */
/** `MARKET_DATA_STREAM_THREAD_NICE` out of its range; `got` as the message shows it. */
const niceRefused = (got: string) =>
  new LiveConfigError({
    variable: "MARKET_DATA_STREAM_THREAD_NICE",
    message: `MARKET_DATA_STREAM_THREAD_NICE must be an integer from 0 (the process's priority) to 19; got ${got}`
  })

export const validateLiveConfig = (config: LiveConfig): Effect.Effect<LiveConfig, LiveConfigError> =>
  Effect.suspend(() => {
    const ua = validateSecUserAgent(config.secUserAgent)
    if (ua !== undefined) return Effect.fail(ua)
    for (const [name, url] of Object.entries(config.baseUrls)) {
      if (!/^https?:\/\/[^\s]+$/.test(url))
        return Effect.fail(
          new LiveConfigError({
            variable: baseUrlVariable(name),
            message: `${baseUrlVariable(name)} must be an http(s) URL; got ${JSON.stringify(url)}`
          })
        )
    }
    for (const [name, url] of Object.entries(config.wsBaseUrls)) {
      if (url !== undefined && !/^wss?:\/\/[^\s]+$/.test(url))
        return Effect.fail(
          new LiveConfigError({
            variable: wsBaseUrlVariable(name),
            message: `${wsBaseUrlVariable(name)} must be a ws(s) URL or "off"; got ${JSON.stringify(url)}`
          })
        )
    }
    if (
      config.okxWsBusinessBaseUrl !== undefined &&
      config.okxWsBusinessBaseUrl !== "off" &&
      !/^wss?:\/\/[^\s]+$/.test(config.okxWsBusinessBaseUrl)
    )
      return Effect.fail(
        new LiveConfigError({
          variable: OKX_WS_BUSINESS_VARIABLE,
          message: `${OKX_WS_BUSINESS_VARIABLE} must be a ws(s) URL or "off"; got ${JSON.stringify(config.okxWsBusinessBaseUrl)}`
        })
      )
    if (!Number.isInteger(config.streamThreadNice) || config.streamThreadNice < 0 || config.streamThreadNice > 19)
      return Effect.fail(niceRefused(String(config.streamThreadNice)))
    for (const cik of [...config.secCiks, ...config.sec13fFilers]) {
      if (!/^\d{1,10}$/.test(cik))
        return Effect.fail(
          new LiveConfigError({ variable: "MARKET_DATA_SEC_CIKS", message: `not a CIK: ${JSON.stringify(cik)}` })
        )
    }
    if (
      !(
        Number.isInteger(config.listingsEveryMs) &&
        config.listingsEveryMs >= 60_000 &&
        config.listingsEveryMs <= 86_400_000
      )
    )
      return Effect.fail(
        new LiveConfigError({
          variable: "MARKET_DATA_LIVE_LISTINGS_MINUTES",
          message: `MARKET_DATA_LIVE_LISTINGS_MINUTES must be a whole number of minutes from 1 to 1440; got ${config.listingsEveryMs / 60_000}`
        })
      )
    if (config.coinListUrl !== "off" && !/^https?:\/\/[^\s]+$/.test(config.coinListUrl))
      return Effect.fail(
        new LiveConfigError({
          variable: "MARKET_DATA_COIN_LIST_URL",
          message: `MARKET_DATA_COIN_LIST_URL must be an http(s) URL or "off"; got ${JSON.stringify(config.coinListUrl)}`
        })
      )
    if (!(config.backfillDays >= 1 && config.backfillDays <= 400))
      return Effect.fail(
        new LiveConfigError({
          variable: "MARKET_DATA_LIVE_BACKFILL_DAYS",
          message: "MARKET_DATA_LIVE_BACKFILL_DAYS must be 1 to 400"
        })
      )
    if (
      !(
        Number.isInteger(config.secMaxRequestsPerSecond) &&
        config.secMaxRequestsPerSecond >= 2 &&
        config.secMaxRequestsPerSecond <= 10
      )
    )
      return Effect.fail(
        new LiveConfigError({
          variable: "MARKET_DATA_SEC_MAX_RPS",
          message: `MARKET_DATA_SEC_MAX_RPS must be a whole number from 2 to 10 (the SEC allows at most 10 requests per second); got ${config.secMaxRequestsPerSecond}`
        })
      )
    if (!(Number.isInteger(config.pricesPerMinute) && config.pricesPerMinute >= 1 && config.pricesPerMinute <= 600))
      return Effect.fail(
        new LiveConfigError({
          variable: "MARKET_DATA_PRICES_PER_MINUTE",
          message: `MARKET_DATA_PRICES_PER_MINUTE must be a whole number from 1 to 600; got ${config.pricesPerMinute}`
        })
      )
    if (!(config.requestTimeoutMs >= 100))
      return Effect.fail(
        new LiveConfigError({
          variable: "MARKET_DATA_LIVE_TIMEOUT_MS",
          message: "MARKET_DATA_LIVE_TIMEOUT_MS must be at least 100"
        })
      )
    return Effect.succeed(config)
  })

const baseUrlVariable = (key: string): string =>
  key === "secData"
    ? "MARKET_DATA_SEC_BASE_URL"
    : key === "secArchives"
      ? "MARKET_DATA_SEC_ARCHIVES_BASE_URL"
      : key === "prices"
        ? "MARKET_DATA_PRICES_BASE_URL"
        : `MARKET_DATA_${key.toUpperCase()}_BASE_URL`

const wsBaseUrlVariable = (venue: string): string => `MARKET_DATA_${venue.toUpperCase()}_WS_BASE_URL`
const OKX_WS_BUSINESS_VARIABLE = "MARKET_DATA_OKX_WS_BUSINESS_BASE_URL"

const list = (text: string): ReadonlyArray<string> =>
  text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .map((s) => (/^\d+$/.test(s) ? String(Number(s)) : s))

/**
 * Environment variables read by `loadLiveConfig`, with their defaults. The websocket base URLs default as shown
 * only while the venue's REST base URL is its public API (`defaultWsBaseUrls`); `off` turns a stream off.
 */
export const LiveEnvironment = [
  ["MARKET_DATA_SEC_USER_AGENT", "(required in live mode)"],
  ["MARKET_DATA_SEC_CIKS", DEFAULT_SEC_CIKS.join(",")],
  ["MARKET_DATA_SEC_13F_FILERS", DEFAULT_SEC_13F_FILERS.join(",")],
  ["MARKET_DATA_SEC_MAX_RPS", "10"],
  ["MARKET_DATA_SEC_DAILY_INDEX", "on"],
  ["MARKET_DATA_LIVE_VENUES", LiveVenues.join(",")],
  ["MARKET_DATA_BINANCE_BASE_URL", BINANCE_DEFAULT_BASE_URL],
  ["MARKET_DATA_BYBIT_BASE_URL", BYBIT_DEFAULT_BASE_URL],
  ["MARKET_DATA_OKX_BASE_URL", OKX_DEFAULT_BASE_URL],
  ["MARKET_DATA_HYPERLIQUID_BASE_URL", HYPERLIQUID_DEFAULT_BASE_URL],
  ["MARKET_DATA_BINANCE_WS_BASE_URL", BINANCE_WS_DEFAULT_BASE_URL],
  ["MARKET_DATA_BYBIT_WS_BASE_URL", BYBIT_WS_DEFAULT_BASE_URL],
  ["MARKET_DATA_OKX_WS_BASE_URL", OKX_WS_DEFAULT_BASE_URL],
  ["MARKET_DATA_HYPERLIQUID_WS_BASE_URL", HYPERLIQUID_WS_DEFAULT_BASE_URL],
  [OKX_WS_BUSINESS_VARIABLE, "(MARKET_DATA_OKX_WS_BASE_URL's)"],
  ["MARKET_DATA_STREAM_THREAD", "on"],
  ["MARKET_DATA_SEC_BASE_URL", SEC_DATA_DEFAULT_BASE_URL],
  ["MARKET_DATA_SEC_ARCHIVES_BASE_URL", SEC_ARCHIVES_DEFAULT_BASE_URL],
  ["MARKET_DATA_PRICES", "yahoo"],
  ["MARKET_DATA_PRICES_PER_MINUTE", String(PRICES_DEFAULT_PER_MINUTE)],
  ["MARKET_DATA_PRICES_BASE_URL", PRICES_DEFAULT_BASE_URL],
  ["MARKET_DATA_LIVE_BACKFILL_DAYS", "90"],
  ["MARKET_DATA_LIVE_TIMEOUT_MS", "10000"]
] as const

/** Whether an environment variable is set at all, even to the empty string (which `Config` reads as unset). */
const isSet = (name: string): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    const provider = yield* ConfigProvider.ConfigProvider
    const segments = name.split("_")
    const parent = yield* provider.load(segments.slice(0, -1)).pipe(Effect.orElseSucceed(() => undefined))
    return parent !== undefined && parent._tag === "Record" && parent.keys.has(segments[segments.length - 1] as string)
  })

/**
 * `MARKET_DATA_LIVE_VENUES`: unset means every venue; set to the empty string or `none`, no crypto venue (live
 * mode on SEC EDGAR alone); otherwise a comma-separated list of venue names. An unknown name is refused, naming
 * the accepted values.
 */
const readVenues: Effect.Effect<ReadonlyArray<LiveVenue>, LiveConfigError | Config.ConfigError> = Effect.gen(
  function* () {
    const text = yield* Config.String("MARKET_DATA_LIVE_VENUES").pipe(Config.withDefault(""))
    if (text.trim() === "") return (yield* isSet("MARKET_DATA_LIVE_VENUES")) ? [] : LiveVenues
    if (text.trim().toLowerCase() === "none") return []
    const names = list(text).map((v) => v.toLowerCase())
    const unknown = names.find((v) => !(LiveVenues as ReadonlyArray<string>).includes(v))
    if (unknown !== undefined || names.length === 0) {
      return yield* Effect.fail(
        new LiveConfigError({
          variable: "MARKET_DATA_LIVE_VENUES",
          message: `unknown venue ${JSON.stringify(unknown ?? text)}; accepted: a comma-separated list of ${LiveVenues.join(", ")}, or \`none\` (or empty) for no crypto venue`
        })
      )
    }
    return [...new Set(names)] as ReadonlyArray<LiveVenue>
  }
)

/** Reads the live configuration from the environment (Effect `Config`) and validates it. */
export const loadLiveConfig: Effect.Effect<LiveConfig, LiveConfigError> = Effect.gen(function* () {
  const read = (name: string, fallback: string) => Config.String(name).pipe(Config.withDefault(fallback))
  const secUserAgent = yield* read("MARKET_DATA_SEC_USER_AGENT", "")
  const ciks = list(yield* read("MARKET_DATA_SEC_CIKS", DEFAULT_SEC_CIKS.join(",")))
  const filers = list(yield* read("MARKET_DATA_SEC_13F_FILERS", DEFAULT_SEC_13F_FILERS.join(",")))
  const venueNames = yield* readVenues
  const trimSlash = (u: string) => u.replace(/\/+$/, "")
  const baseUrls: LiveConfig["baseUrls"] = {
    binance: trimSlash(yield* read("MARKET_DATA_BINANCE_BASE_URL", BINANCE_DEFAULT_BASE_URL)),
    bybit: trimSlash(yield* read("MARKET_DATA_BYBIT_BASE_URL", BYBIT_DEFAULT_BASE_URL)),
    okx: trimSlash(yield* read("MARKET_DATA_OKX_BASE_URL", OKX_DEFAULT_BASE_URL)),
    hyperliquid: trimSlash(yield* read("MARKET_DATA_HYPERLIQUID_BASE_URL", HYPERLIQUID_DEFAULT_BASE_URL)),
    secData: trimSlash(yield* read("MARKET_DATA_SEC_BASE_URL", SEC_DATA_DEFAULT_BASE_URL)),
    secArchives: trimSlash(yield* read("MARKET_DATA_SEC_ARCHIVES_BASE_URL", SEC_ARCHIVES_DEFAULT_BASE_URL)),
    prices: trimSlash(yield* read("MARKET_DATA_PRICES_BASE_URL", PRICES_DEFAULT_BASE_URL))
  }
  // A websocket base URL: set, "off" (no stream), or unset (the default for the REST base URL).
  const wsBaseUrls: Partial<Record<LiveVenue, string>> = { ...defaultWsBaseUrls(baseUrls) }
  for (const venue of LiveVenues) {
    const text = (yield* read(wsBaseUrlVariable(venue), "")).trim()
    if (text.toLowerCase() === "off") delete wsBaseUrls[venue]
    else if (text !== "") wsBaseUrls[venue] = trimSlash(text)
  }
  const okxBusiness = (yield* read(OKX_WS_BUSINESS_VARIABLE, "")).trim()
  const streamThread = (yield* read("MARKET_DATA_STREAM_THREAD", "on")).trim().toLowerCase()
  if (streamThread !== "on" && streamThread !== "off")
    return yield* Effect.fail(
      new LiveConfigError({
        variable: "MARKET_DATA_STREAM_THREAD",
        message: `MARKET_DATA_STREAM_THREAD must be \`on\` or \`off\`; got ${JSON.stringify(streamThread)}`
      })
    )
  const niceText = (yield* read("MARKET_DATA_STREAM_THREAD_NICE", "10")).trim()
  const streamThreadNice = Number(niceText)
  if (!/^\d{1,2}$/.test(niceText) || streamThreadNice > 19)
    return yield* Effect.fail(niceRefused(JSON.stringify(niceText)))
  const prices = (yield* read("MARKET_DATA_PRICES", "yahoo")).trim().toLowerCase()
  if (prices !== "yahoo" && prices !== "off") {
    return yield* Effect.fail(
      new LiveConfigError({
        variable: "MARKET_DATA_PRICES",
        message: `MARKET_DATA_PRICES must be yahoo or off; got ${JSON.stringify(prices)}`
      })
    )
  }
  const pricesPerMinute = yield* Config.Int("MARKET_DATA_PRICES_PER_MINUTE").pipe(
    Config.withDefault(PRICES_DEFAULT_PER_MINUTE)
  )
  const backfillDays = yield* Config.Int("MARKET_DATA_LIVE_BACKFILL_DAYS").pipe(Config.withDefault(90))
  const requestTimeoutMs = yield* Config.Int("MARKET_DATA_LIVE_TIMEOUT_MS").pipe(Config.withDefault(10_000))
  const secMaxRequestsPerSecond = yield* Config.Int("MARKET_DATA_SEC_MAX_RPS").pipe(Config.withDefault(10))
  const dailyIndex = (yield* read("MARKET_DATA_SEC_DAILY_INDEX", "on")).trim().toLowerCase()
  if (dailyIndex !== "on" && dailyIndex !== "off")
    return yield* Effect.fail(
      new LiveConfigError({
        variable: "MARKET_DATA_SEC_DAILY_INDEX",
        message: `MARKET_DATA_SEC_DAILY_INDEX must be \`on\` or \`off\`; got ${JSON.stringify(dailyIndex)}`
      })
    )
  const listingsMinutes = yield* Config.Int("MARKET_DATA_LIVE_LISTINGS_MINUTES").pipe(Config.withDefault(30))
  const coinListUrl = (yield* read("MARKET_DATA_COIN_LIST_URL", defaultCoinListUrl(baseUrls))).trim()
  const config = liveConfig({
    listingsEveryMs: listingsMinutes * 60_000,
    coinListUrl: coinListUrl.toLowerCase() === "off" ? "off" : coinListUrl,
    secUserAgent,
    secCiks: ciks,
    sec13fFilers: filers,
    venues: venueNames,
    baseUrls,
    wsBaseUrls,
    ...(okxBusiness === ""
      ? {}
      : { okxWsBusinessBaseUrl: okxBusiness.toLowerCase() === "off" ? "off" : trimSlash(okxBusiness) }),
    prices,
    pricesPerMinute,
    backfillDays,
    requestTimeoutMs,
    secMaxRequestsPerSecond,
    secFollowDailyIndex: dailyIndex === "on",
    streamThread: streamThread === "on",
    streamThreadNice
  })
  return yield* validateLiveConfig(config)
}).pipe(
  Effect.catchTag("ConfigError", (e) =>
    Effect.fail(
      new LiveConfigError({ variable: "MARKET_DATA_LIVE_*", message: `invalid live configuration: ${e.message}` })
    )
  )
)
