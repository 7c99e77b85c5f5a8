/**
 * The perpetuals a replay venue lists: real Binance USD-M names from the recorded `exchangeInfo`
 * (`../shared/data/crypto/listings/binance_fapi_v1_exchangeInfo_2025-12-24_NOLICENSE.json`, read in place, never
 * copied) when the folder is there, else (or past the recorded ones) synthetic names `C<k>USDT`.
 *
 * From the recording: every `PERPETUAL` on a coin (`underlyingType: COIN`), USDT-margined ones first, then the
 * USDC-margined ones whose base no USDT perpetual has (a second symbol of one base would be skipped by the
 * service's directory as `same_asset`, so every listed symbol is one streamed asset). Each keeps its recorded
 * `exchangeInfo` entry (status forced to `TRADING`: the replay trades everything it lists) for its filters; the
 * price level comes from its tick size (about ten thousand ticks to the price: one tick is a basis point), the
 * best-known coins at round prices of their own.
 */
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { splitMultiplier } from "@market-data/core"

export const RECORDED_EXCHANGE_INFO = fileURLToPath(
  new URL(
    "../../../../shared/data/crypto/listings/binance_fapi_v1_exchangeInfo_2025-12-24_NOLICENSE.json",
    import.meta.url
  )
)

/** One listed perpetual of the replay venue. */
export interface ReplaySymbol {
  /** `BTCUSDT`, `1000PEPEUSDT`, `C17USDT`. */
  readonly symbol: string
  /** The venue's base asset (`1000PEPE`). */
  readonly baseAsset: string
  /** The ticker of the asset (`PEPE`): the venue base without its multiplier. */
  readonly ticker: string
  /** Tokens one unit of the symbol's price and quantity stands for (`1000PEPEUSDT`: 1000). */
  readonly tokensPerUnit: number
  readonly quoteAsset: "USDT" | "USDC"
  /** The price grid, as text (`"0.10"`) and as a number. */
  readonly tickText: string
  readonly tick: number
  /** Decimals of a price on the grid. */
  readonly decimals: number
  /** The starting price, in ticks. */
  readonly startTicks: number
  /** Funding interval (hours): 8, or 4 for every seventh symbol (listed in `fundingInfo`). */
  readonly fundingIntervalHours: number
  /** The `exchangeInfo` entry served for it. */
  readonly info: Record<string, unknown>
}

/** A deterministic generator (mulberry32). */
export const rng = (seed: number): (() => number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** A string's 32-bit FNV-1a hash. */
export const hash = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

const decimalsOf = (tickText: string): number => {
  const dot = tickText.indexOf(".")
  if (dot < 0) return 0
  return tickText.slice(dot + 1).replace(/0+$/, "").length
}

/** Round prices of the best-known coins (USD per venue unit). */
const KNOWN_PRICES: Readonly<Record<string, number>> = {
  BTCUSDT: 91_000,
  ETHUSDT: 3_100,
  BNBUSDT: 880,
  SOLUSDT: 140,
  XRPUSDT: 2.1,
  DOGEUSDT: 0.15,
  ADAUSDT: 0.42,
  LINKUSDT: 13.5,
  LTCUSDT: 82,
  AVAXUSDT: 13,
  "1000PEPEUSDT": 0.0045,
  "1000SHIBUSDT": 0.0085
}

const startTicksOf = (symbol: string, tick: number, random: () => number): number => {
  const known = KNOWN_PRICES[symbol]
  if (known !== undefined) return Math.max(100, Math.round(known / tick))
  // Three to thirty thousand ticks: a tick is 0.3 to 3 basis points, as on most Binance perpetuals.
  return Math.round(10 ** (3.5 + random()))
}

/** `10^exponent` as a price text (`-3`: `0.001`). */
const tickTextOf = (exponent: number): string =>
  exponent >= 0 ? String(10 ** exponent) : (10 ** exponent).toFixed(-exponent)

const synthetic = (k: number, seed: number): ReplaySymbol => {
  const random = rng(seed ^ hash(`C${k}`))
  // Prices from about 1e-4 to 1e4 USD: the tick a power of ten about four orders below.
  const exponent = Math.floor(random() * 8) - 8
  const tickText = tickTextOf(exponent)
  const tick = Number(tickText)
  const symbol = `C${k}USDT`
  return {
    symbol,
    baseAsset: `C${k}`,
    ticker: `C${k}`,
    tokensPerUnit: 1,
    quoteAsset: "USDT",
    tickText,
    tick,
    decimals: decimalsOf(tickText),
    startTicks: startTicksOf(symbol, tick, random),
    fundingIntervalHours: k % 7 === 3 ? 4 : 8,
    info: {
      symbol,
      pair: symbol,
      contractType: "PERPETUAL",
      deliveryDate: 4133404800000,
      onboardDate: 1569398400000,
      status: "TRADING",
      baseAsset: `C${k}`,
      quoteAsset: "USDT",
      marginAsset: "USDT",
      pricePrecision: decimalsOf(tickText),
      quantityPrecision: 0,
      baseAssetPrecision: 8,
      quotePrecision: 8,
      underlyingType: "COIN",
      underlyingSubType: [],
      filters: [
        { filterType: "PRICE_FILTER", tickSize: tickText, minPrice: tickText, maxPrice: "1000000" },
        { filterType: "LOT_SIZE", maxQty: "10000000", minQty: "1", stepSize: "1" }
      ],
      orderTypes: ["LIMIT", "MARKET"],
      timeInForce: ["GTC", "IOC", "FOK", "GTX"]
    }
  }
}

/**
 * `n` perpetuals: the recorded ones first (unless `syntheticOnly`), then synthetic ones. `recordedOnlyUpTo`
 * caps how many recorded names are used.
 */
export const replaySymbols = (
  n: number,
  options: { readonly seed?: number; readonly syntheticOnly?: boolean } = {}
): ReadonlyArray<ReplaySymbol> => {
  const seed = options.seed ?? 20261120
  const out: Array<ReplaySymbol> = []
  if (options.syntheticOnly !== true && existsSync(RECORDED_EXCHANGE_INFO)) {
    const body = JSON.parse(readFileSync(RECORDED_EXCHANGE_INFO, "utf8")) as {
      symbols: ReadonlyArray<Record<string, unknown>>
    }
    const coins = body.symbols.filter(
      (s) =>
        s.contractType === "PERPETUAL" &&
        s.underlyingType === "COIN" &&
        (s.quoteAsset === "USDT" || s.quoteAsset === "USDC") &&
        s.marginAsset === s.quoteAsset &&
        typeof s.baseAsset === "string" &&
        splitMultiplier(s.baseAsset) !== undefined
    )
    const tickers = new Set<string>()
    for (const quote of ["USDT", "USDC"]) {
      for (const s of coins) {
        if (out.length >= n) break
        if (s.quoteAsset !== quote) continue
        const baseAsset = s.baseAsset as string
        const split = splitMultiplier(baseAsset) as { base: string; multiplier: number }
        if (tickers.has(split.base)) continue
        tickers.add(split.base)
        const symbol = s.symbol as string
        const filter = (s.filters as ReadonlyArray<Record<string, unknown>>).find(
          (f) => f.filterType === "PRICE_FILTER"
        )
        // Symbols not trading yet were recorded with a zero tick: one about six orders below their maximum price.
        const recordedTick = String(filter?.tickSize ?? "0")
        const maxPrice = Number(filter?.maxPrice ?? 0)
        const tickText =
          Number(recordedTick) > 0
            ? recordedTick
            : maxPrice > 0
              ? tickTextOf(Math.min(-1, Math.floor(Math.log10(maxPrice)) - 6))
              : "0.0001"
        const tick = Number(tickText)
        const random = rng(seed ^ hash(symbol))
        out.push({
          symbol,
          baseAsset,
          ticker: split.base,
          tokensPerUnit: split.multiplier,
          quoteAsset: quote as "USDT" | "USDC",
          tickText,
          tick,
          decimals: decimalsOf(tickText),
          startTicks: startTicksOf(symbol, tick, random),
          fundingIntervalHours: out.length % 7 === 3 ? 4 : 8,
          info: {
            ...s,
            status: "TRADING",
            filters: (s.filters as ReadonlyArray<Record<string, unknown>>).map((f) =>
              f.filterType === "PRICE_FILTER" ? { ...f, tickSize: tickText } : f
            )
          }
        })
      }
    }
  }
  const taken = new Set(out.flatMap((s) => [s.symbol, s.ticker]))
  for (let k = 0; out.length < n; k++) {
    const s = synthetic(k, seed)
    // A synthetic name never shadows a recorded one (`C98USDT` is a real perpetual).
    if (!taken.has(s.symbol) && !taken.has(s.ticker)) out.push(s)
  }
  return out
}
