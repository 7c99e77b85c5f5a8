/**
 * The venues' instrument lists as directory listings: hand-made fixtures in each venue's shape (always run), and
 * the real recorded lists in `../shared/data/crypto/listings` (skipped with a message when absent), merged into one
 * directory with the real CoinGecko coin list.
 */
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import {
  type AssetDirectory,
  coinIndex,
  directoryTier,
  mergeDirectory,
  resolveQuery,
  seedDirectory,
  toDirectoryEntry
} from "@market-data/core"
import { describe, expect, it } from "vitest"
import {
  ListingParsers,
  type ParsedListings,
  parseBinanceListings,
  parseBinanceSpotListings,
  parseBybitListings,
  parseBybitSpotListings,
  parseHyperliquidListings,
  parseHyperliquidSpotListings,
  parseOkxListings,
  parseOkxSpotListings
} from "../../src/live/Listings.ts"
import { Malformed } from "../../src/live/Parse.ts"

const reasons = (p: ParsedListings) =>
  Object.fromEntries(
    [...new Set(p.skipped.map((s) => s.reason))].sort().map((r) => [r, p.skipped.filter((s) => s.reason === r).length])
  )
const bySymbol = (p: ParsedListings, symbol: string) => p.listings.find((l) => l.symbol === symbol)
const skip = (p: ParsedListings, symbol: string) => p.skipped.find((s) => s.symbol === symbol)?.reason

describe("listing parsers on hand-made fixtures", () => {
  it("Binance: linear USDT/USDC perpetuals only, every other row skipped with its reason", () => {
    const row = (symbol: string, baseAsset: string, quote: string, extra: object = {}) => ({
      symbol,
      contractType: "PERPETUAL",
      status: "TRADING",
      baseAsset,
      quoteAsset: quote,
      marginAsset: quote,
      underlyingType: "COIN",
      ...extra
    })
    const p = parseBinanceListings({
      symbols: [
        row("BTCUSDT", "BTC", "USDT"),
        row("1000PEPEUSDC", "1000PEPE", "USDC"),
        row("1MBABYDOGEUSDT", "1MBABYDOGE", "USDT"),
        row("1INCHUSDT", "1INCH", "USDT"),
        row("0GUSDT", "0G", "USDT", { underlyingType: "PREMARKET" }),
        row("BTCDOMUSDT", "BTCDOM", "USDT", { underlyingType: "INDEX" }),
        row("ETHBTC", "ETH", "BTC"),
        row("BTCUSDT_260327", "BTC", "USDT", { contractType: "CURRENT_QUARTER" }),
        row("OLDUSDT", "OLD", "USDT", { status: "SETTLING" }),
        row("XAUUSDT", "XAU", "USDT", { contractType: "TRADIFI_PERPETUAL", underlyingType: "COMMODITY" }),
        row("BADUSDT", "bad!", "USDT"),
        { contractType: "PERPETUAL" },
        "not an object"
      ]
    })
    expect(p.listings.map((l) => [l.symbol, l.base, l.quote, l.multiplier])).toEqual([
      ["BTCUSDT", "BTC", "USDT", 1],
      ["1000PEPEUSDC", "PEPE", "USDC", 1000],
      ["1MBABYDOGEUSDT", "BABYDOGE", "USDT", 1_000_000],
      ["1INCHUSDT", "1INCH", "USDT", 1],
      ["0GUSDT", "0G", "USDT", 1]
    ])
    expect(p.skipped.map((s) => [s.symbol, s.reason])).toEqual([
      ["BTCDOMUSDT", "index"],
      ["ETHBTC", "unsupported_quote"],
      ["BTCUSDT_260327", "not_perpetual"],
      ["OLDUSDT", "not_trading"],
      ["XAUUSDT", "not_crypto"],
      ["BADUSDT", "unparsable"],
      ["#11", "unparsable"],
      ["#12", "unparsable"]
    ])
    expect(() => parseBinanceListings({ nope: [] })).toThrow(Malformed)
  })

  it("Bybit: the v5 envelope or rows keyed by symbol; suffix multipliers", () => {
    const row = (symbol: string, baseCoin: string, extra: object = {}) => ({
      symbol,
      contractType: "LinearPerpetual",
      status: "Trading",
      baseCoin,
      quoteCoin: "USDT",
      settleCoin: "USDT",
      ...extra
    })
    const rows = [
      row("SHIB1000USDT", "SHIB1000"),
      row("10000SATSUSDT", "10000SATS"),
      row("LUNA2USDT", "LUNA2"),
      row("BTCUSD", "BTC", { contractType: "InversePerpetual", settleCoin: "BTC" }),
      row("NEWUSDT", "NEW", { status: "PreLaunch" })
    ]
    const enveloped = parseBybitListings({ retCode: 0, result: { category: "linear", list: rows } })
    const keyed = parseBybitListings(Object.fromEntries(rows.map((r) => [r.symbol, r])))
    expect(keyed).toEqual(enveloped)
    expect(enveloped.listings.map((l) => [l.symbol, l.base, l.multiplier])).toEqual([
      ["SHIB1000USDT", "SHIB", 1000],
      ["10000SATSUSDT", "SATS", 10000],
      ["LUNA2USDT", "LUNA2", 1]
    ])
    expect(reasons(enveloped)).toEqual({ inverse: 1, not_trading: 1 })
  })

  it("OKX: linear USDT/USDC swaps, the contract size exact from ctVal x ctMult", () => {
    const row = (instId: string, extra: object = {}) => ({
      instId,
      instType: "SWAP",
      ctType: "linear",
      settleCcy: instId.split("-")[1],
      state: "live",
      ctVal: "1",
      ctMult: "1",
      ...extra
    })
    const p = parseOkxListings({
      code: "0",
      data: [
        row("PEPE-USDT-SWAP", { ctVal: "10000000" }),
        row("BTC-USDC-SWAP", { ctVal: "0.0001" }),
        row("SATS-USDT-SWAP", { ctVal: "0.0000001", ctMult: "10" }),
        row("BTC-USD-SWAP", { ctType: "inverse", settleCcy: "BTC" }),
        row("SOL-USD_UM-SWAP", { settleCcy: "USD" }),
        row("ETH-USD_UM-SWAP", { state: "preopen", ctType: "", ctVal: "" }),
        row("XYZ-USDT-SWAP", { ctVal: "" })
      ]
    })
    expect(p.listings.map((l) => [l.symbol, l.base, l.quote, l.multiplier, l.contractSize])).toEqual([
      ["PEPE-USDT-SWAP", "PEPE", "USDT", 1, "10000000"],
      ["BTC-USDC-SWAP", "BTC", "USDC", 1, "0.0001"],
      ["SATS-USDT-SWAP", "SATS", "USDT", 1, "0.000001"]
    ])
    expect(p.skipped.map((s) => [s.symbol, s.reason])).toEqual([
      ["BTC-USD-SWAP", "inverse"],
      ["SOL-USD_UM-SWAP", "unsupported_quote"],
      ["ETH-USD_UM-SWAP", "not_trading"],
      ["XYZ-USDT-SWAP", "unparsable"]
    ])
  })

  it("Hyperliquid: every perpetual, k-names split, delisted ones kept as delisted", () => {
    const p = parseHyperliquidListings([
      {
        universe: [
          { name: "BTC", szDecimals: 5 },
          { name: "kPEPE", szDecimals: 0 },
          { name: "MATIC", szDecimals: 1, isDelisted: true },
          { name: "2Z", szDecimals: 0 },
          { name: "xyz:TSLA", szDecimals: 2 }
        ]
      },
      []
    ])
    expect(p.listings.map((l) => [l.symbol, l.base, l.quote, l.multiplier, l.status])).toEqual([
      ["BTC", "BTC", "USDC", 1, "trading"],
      ["kPEPE", "PEPE", "USDC", 1000, "trading"],
      ["MATIC", "MATIC", "USDC", 1, "delisted"],
      ["2Z", "2Z", "USDC", 1, "trading"]
    ])
    expect(p.skipped).toEqual([
      {
        venue: "hyperliquid",
        symbol: "xyz:TSLA",
        reason: "unparsable",
        detail: 'base "xyz:TSLA" is not an ASCII ticker (A-Z, 0-9)'
      }
    ])
    expect(() => parseHyperliquidListings([{ universe: "no" }])).toThrow(Malformed)
  })
})

describe("spot listing parsers on hand-made fixtures (each venue's documented shape)", () => {
  it("Binance spot: USDT/USDC pairs; other quotes, fiat bases, leveraged tokens and halted pairs skipped", () => {
    const row = (symbol: string, baseAsset: string, quoteAsset: string, extra: object = {}) => ({
      symbol,
      status: "TRADING",
      baseAsset,
      quoteAsset,
      isSpotTradingAllowed: true,
      permissions: ["SPOT"],
      ...extra
    })
    const p = parseBinanceSpotListings({
      symbols: [
        row("BTCUSDT", "BTC", "USDT"),
        row("SOLUSDC", "SOL", "USDC"),
        row("1000SATSUSDT", "1000SATS", "USDT"),
        row("ETHBTC", "ETH", "BTC"),
        row("EURUSDT", "EUR", "USDT"),
        row("BTCUPUSDT", "BTCUP", "USDT", { permissions: ["LEVERAGED"] }),
        row("ETHUPUSDT", "ETHUP", "USDT", { permissions: [], permissionSets: [["LEVERAGED"]] }),
        row("OLDUSDT", "OLD", "USDT", { status: "BREAK" }),
        row("币安USDT", "币安", "USDT")
      ]
    })
    expect(p.listings.map((l) => [l.symbol, l.market, l.base, l.quote, l.multiplier])).toEqual([
      ["BTCUSDT", "spot", "BTC", "USDT", 1],
      ["SOLUSDC", "spot", "SOL", "USDC", 1],
      ["1000SATSUSDT", "spot", "SATS", "USDT", 1000]
    ])
    expect(p.skipped.map((x) => [x.symbol, x.reason])).toEqual([
      ["ETHBTC", "unsupported_quote"],
      ["EURUSDT", "not_crypto"],
      ["BTCUPUSDT", "leveraged_token"],
      ["ETHUPUSDT", "leveraged_token"],
      ["OLDUSDT", "not_trading"],
      ["币安USDT", "unparsable"]
    ])
  })

  it("Bybit, OKX and Hyperliquid spot", () => {
    const bybit = parseBybitSpotListings({
      retCode: 0,
      result: {
        category: "spot",
        list: [
          { symbol: "BTCUSDT", baseCoin: "BTC", quoteCoin: "USDT", status: "Trading", innovation: "0" },
          { symbol: "BTCEUR", baseCoin: "BTC", quoteCoin: "EUR", status: "Trading" },
          { symbol: "NEWUSDT", baseCoin: "NEW", quoteCoin: "USDT", status: "PreLaunch" }
        ]
      }
    })
    expect(bybit.listings.map((l) => [l.venue, l.symbol, l.market, l.base])).toEqual([
      ["bybit", "BTCUSDT", "spot", "BTC"]
    ])
    expect(bybit.skipped.map((x) => x.reason)).toEqual(["unsupported_quote", "not_trading"])

    const okx = parseOkxSpotListings({
      code: "0",
      data: [
        { instId: "BTC-USDT", instType: "SPOT", baseCcy: "BTC", quoteCcy: "USDT", state: "live" },
        { instId: "PEPE-USDC", instType: "SPOT", baseCcy: "PEPE", quoteCcy: "USDC", state: "live" },
        { instId: "ETH-BTC", instType: "SPOT", baseCcy: "ETH", quoteCcy: "BTC", state: "live" },
        { instId: "NEW-USDT", instType: "SPOT", baseCcy: "NEW", quoteCcy: "USDT", state: "preopen" }
      ]
    })
    expect(okx.listings.map((l) => [l.symbol, l.base, l.quote])).toEqual([
      ["BTC-USDT", "BTC", "USDT"],
      ["PEPE-USDC", "PEPE", "USDC"]
    ])
    expect(okx.skipped.map((x) => x.reason)).toEqual(["unsupported_quote", "not_trading"])

    const hl = parseHyperliquidSpotListings({
      tokens: [
        { name: "USDC", index: 0 },
        { name: "PURR", index: 1 },
        { name: "HYPE", index: 150 },
        { name: "USDT0", index: 268 }
      ],
      universe: [
        { name: "PURR/USDC", tokens: [1, 0], index: 0 },
        { name: "@107", tokens: [150, 0], index: 107 },
        { name: "@166", tokens: [268, 0], index: 166 },
        { name: "@200", tokens: [150, 268], index: 200 },
        { name: "@999", tokens: [7, 0], index: 999 }
      ]
    })
    expect(hl.listings.map((l) => [l.symbol, l.base, l.quote, l.market])).toEqual([
      ["PURR/USDC", "PURR", "USDC", "spot"],
      ["@107", "HYPE", "USDC", "spot"],
      ["@166", "USDT0", "USDC", "spot"]
    ])
    expect(hl.skipped.map((x) => [x.symbol, x.reason])).toEqual([
      ["@200", "unsupported_quote"],
      ["@999", "unparsable"]
    ])
    expect(() => parseHyperliquidSpotListings({ universe: [] })).toThrow(Malformed)
  })

  it("a spot-only asset is listed_token; a perpetual and a spot pair under one symbol are two listings of one asset", () => {
    const T = Date.UTC(2026, 0, 1)
    const spot = parseBinanceSpotListings({
      symbols: [
        { symbol: "BTCUSDT", status: "TRADING", baseAsset: "BTC", quoteAsset: "USDT", permissions: ["SPOT"] },
        { symbol: "QZSPOTUSDT", status: "TRADING", baseAsset: "QZSPOT", quoteAsset: "USDT", permissions: ["SPOT"] }
      ]
    })
    const perp = parseBinanceListings({
      symbols: [
        {
          symbol: "BTCUSDT",
          contractType: "PERPETUAL",
          status: "TRADING",
          baseAsset: "BTC",
          quoteAsset: "USDT",
          marginAsset: "USDT"
        }
      ]
    })
    const { directory } = mergeDirectory(
      seedDirectory(T),
      [
        { venue: "binance", markets: ["perp"], listings: perp.listings },
        { venue: "binance", markets: ["spot"], listings: spot.listings }
      ],
      { coins: coinIndex([]), nowMs: T }
    )
    const only = directory.assets.find((a) => a.symbol === "QZSPOT")
    expect(only && directoryTier(only, { historyReady: true })).toBe("listed_token")
    const btc = directory.assets.find((a) => a.id === "crypto:bitcoin")
    expect(btc?.listings.filter((l) => l.venue === "binance").map((l) => [l.symbol, l.market])).toEqual([
      ["BTCUSDT", "perp"],
      ["BTCUSDT", "spot"]
    ])
  })
})

const LISTINGS = fileURLToPath(new URL("../../../../../shared/data/crypto/listings/", import.meta.url))
const present = existsSync(LISTINGS)
if (!present) console.warn(`SKIPPED: the real venue listing tests need ${LISTINGS}, which is absent`)
const real = (file: string): unknown => JSON.parse(readFileSync(LISTINGS + file, "utf8"))
const FILES = {
  binance: "binance_fapi_v1_exchangeInfo_2025-12-24_NOLICENSE.json",
  bybit: "bybit_v5_market_instruments-info_linear-usdt-trading-keyed_2026-02-07_NOLICENSE.json",
  okx: "okx_api_v5_public_instruments_SWAP-wrapped_2025-11-03_NOLICENSE.json",
  hyperliquid: "hyperliquid_info_metaAndAssetCtxs_2026-03-10_NOLICENSE.json"
} as const

describe.skipIf(!present)(
  present ? "the venues' real listings" : "the venues' real listings (SKIPPED: ../shared/data is absent)",
  () => {
    const parsed = present
      ? (Object.fromEntries(
          Object.entries(FILES).map(([venue, file]) => [venue, ListingParsers[venue as keyof typeof FILES](real(file))])
        ) as { readonly [V in keyof typeof FILES]: ParsedListings })
      : undefined
    const get = () => parsed as NonNullable<typeof parsed>

    it("Binance: 549 of 554 trading perpetuals (BTCDOM, ALL: indexes; ETHBTC: BTC-margined; two non-ASCII tickers)", () => {
      const p = get().binance
      expect(p.listings).toHaveLength(549)
      expect(p.listings.length + p.skipped.length).toBe(660)
      expect(reasons(p)).toEqual({
        index: 4,
        not_crypto: 2,
        not_perpetual: 10,
        not_trading: 92,
        unparsable: 2,
        unsupported_quote: 1
      })
      // Tickers written in Chinese characters are named, not dropped.
      expect(p.skipped.find((s) => s.symbol === "币安人生USDT")).toMatchObject({ reason: "unparsable" })
      expect(p.listings.filter((l) => l.quote === "USDC")).toHaveLength(37)
      expect(p.listings.filter((l) => l.multiplier > 1)).toHaveLength(18)
      for (const s of ["BTCDOMUSDT", "ALLUSDT", "DEFIUSDT"]) expect(skip(p, s), s).toBe("index")
      expect(skip(p, "ETHBTC")).toBe("unsupported_quote")
      expect(bySymbol(p, "1000000MOGUSDT")).toMatchObject({ base: "MOG", multiplier: 1_000_000 })
      expect(bySymbol(p, "1MBABYDOGEUSDT")).toMatchObject({ base: "BABYDOGE", multiplier: 1_000_000 })
      expect(bySymbol(p, "1000SATSUSDT")).toMatchObject({ base: "SATS", multiplier: 1000 })
      for (const [s, base] of [
        ["1INCHUSDT", "1INCH"],
        ["0GUSDT", "0G"],
        ["BANANAS31USDT", "BANANAS31"]
      ])
        expect(bySymbol(p, s as string), s).toMatchObject({ base, multiplier: 1 })
    })

    it("Bybit: all 555 USDT perpetuals, 10000SATS and the suffix form SHIB1000", () => {
      const p = get().bybit
      expect(p.listings).toHaveLength(555)
      expect(p.skipped).toEqual([])
      expect(p.listings.filter((l) => l.multiplier > 1)).toHaveLength(19)
      expect(bySymbol(p, "10000SATSUSDT")).toMatchObject({ base: "SATS", multiplier: 10_000 })
      expect(bySymbol(p, "SHIB1000USDT")).toMatchObject({ base: "SHIB", multiplier: 1000 })
      expect(bySymbol(p, "1000000BABYDOGEUSDT")).toMatchObject({ base: "BABYDOGE", multiplier: 1_000_000 })
      expect(bySymbol(p, "LUNA2USDT")).toMatchObject({ base: "LUNA2", multiplier: 1 })
    })

    it("OKX: 247 USDT and 2 USDC linear swaps; inverse, pre-open and USD-settled ones skipped", () => {
      const p = get().okx
      expect(p.listings).toHaveLength(249)
      expect(p.listings.filter((l) => l.quote === "USDC").map((l) => l.symbol)).toEqual([
        "BTC-USDC-SWAP",
        "ETH-USDC-SWAP"
      ])
      expect(reasons(p)).toEqual({ inverse: 15, not_trading: 2, unsupported_quote: 1 })
      expect(p.listings.every((l) => l.multiplier === 1)).toBe(true)
      expect(bySymbol(p, "PEPE-USDT-SWAP")?.contractSize).toBe("10000000")
      expect(bySymbol(p, "BTC-USDT-SWAP")?.contractSize).toBe("0.01")
    })

    it("Hyperliquid: 229 perpetuals, 39 of them delisted, k-names split", () => {
      const p = get().hyperliquid
      expect(p.listings).toHaveLength(229)
      expect(p.skipped).toEqual([])
      expect(p.listings.filter((l) => l.status === "delisted")).toHaveLength(39)
      expect(p.listings.filter((l) => l.multiplier === 1000).map((l) => l.symbol)).toEqual([
        "kPEPE",
        "kSHIB",
        "kBONK",
        "kLUNC",
        "kFLOKI",
        "kDOGS",
        "kNEIRO"
      ])
    })

    it("Binance spot (2021-10-12): every TRADING USDT/USDC pair is a spot listing; the rest named with a reason", () => {
      const p = parseBinanceSpotListings(real("binance_api_v3_exchangeInfo_2021-10-12.json"))
      const rows = (real("binance_api_v3_exchangeInfo_2021-10-12.json") as { symbols: Array<Record<string, unknown>> })
        .symbols
      expect(p.listings.length + p.skipped.length).toBe(rows.length)
      const taken = rows.filter(
        (r) =>
          r.status === "TRADING" &&
          (r.quoteAsset === "USDT" || r.quoteAsset === "USDC") &&
          !(r.permissions as Array<string>).includes("LEVERAGED") &&
          !["EUR", "GBP", "AUD", "BRL", "TRY", "RUB", "UAH", "NGN", "ZAR", "IDR"].includes(r.baseAsset as string)
      )
      expect(p.listings.map((l) => l.symbol).sort()).toEqual(taken.map((r) => r.symbol).sort())
      expect(p.listings.length).toBeGreaterThan(250)
      expect(p.listings.every((l) => l.market === "spot")).toBe(true)
      expect(skip(p, "BTCUPUSDT")).toBe("leveraged_token")
      expect(skip(p, "ETHBTC")).toBe("unsupported_quote")
      expect(skip(p, "EURUSDT")).toBe("not_crypto")
      expect(bySymbol(p, "1INCHUSDT")?.base).toBe("1INCH")
      // Merged beside the perpetuals: a spot pair joins its perpetual's asset; a spot-only coin is listed_token.
      const T = Date.UTC(2026, 0, 1)
      const { directory } = mergeDirectory(
        seedDirectory(T),
        [
          { venue: "binance", markets: ["perp"], listings: get().binance.listings },
          { venue: "binance", markets: ["spot"], listings: p.listings }
        ],
        { coins: coinIndex([]), nowMs: T }
      )
      const btc = directory.assets.find((a) => a.id === "crypto:bitcoin")
      expect(btc?.listings.filter((l) => l.venue === "binance" && l.symbol === "BTCUSDT").map((l) => l.market)).toEqual(
        ["perp", "spot"]
      )
      const spotOnly = directory.assets.filter(
        (a) => a.listings.length > 0 && a.listings.every((l) => l.market === "spot" && l.venue === "binance")
      )
      expect(spotOnly.length).toBeGreaterThan(10)
      for (const a of spotOnly) expect(directoryTier(a, { historyReady: true })).toBe("listed_token")
    })

    it("merged with the real coin list: one asset per coin across venues and multipliers, no symbol twice", () => {
      const coins = coinIndex(
        real("coingecko_api_v3_coins_list_2025-08-24_NOLICENSE.json") as ReadonlyArray<{
          id: string
          symbol: string
          name: string
        }>
      )
      const T = Date.UTC(2026, 2, 10)
      const { directory, added } = mergeDirectory(
        seedDirectory(T),
        Object.entries(get()).map(([venue, p]) => ({ venue, listings: p.listings })),
        { coins, nowMs: T }
      )
      const holders = (d: AssetDirectory, venue: string, symbol: string) =>
        d.assets.filter((a) => a.listings.some((l) => l.venue === venue && l.symbol === symbol)).map((a) => a.id)
      const one = (venue: string, symbol: string) => {
        const h = holders(directory, venue, symbol)
        expect(h, `${venue} ${symbol}`).toHaveLength(1)
        return h[0]
      }
      // Every listing is held by exactly one asset.
      const total = Object.values(get()).reduce((n, p) => n + p.listings.length, 0)
      const held = directory.assets.flatMap((a) => a.listings.filter((l) => l.venue !== "dex"))
      const seedOnly = held.filter((l) => !Object.values(get()).some((p) => bySymbol(p, l.symbol)?.market === l.market))
      expect(held.length - seedOnly.length).toBe(total)
      // One asset behind every multiplier form.
      expect(
        [
          one("binance", "1000PEPEUSDT"),
          one("binance", "1000PEPEUSDC"),
          one("bybit", "1000PEPEUSDT"),
          one("okx", "PEPE-USDT-SWAP"),
          one("hyperliquid", "kPEPE")
        ].every((id) => id === "crypto:pepe")
      ).toBe(true)
      const sats = one("binance", "1000SATSUSDT")
      expect([one("bybit", "10000SATSUSDT"), one("okx", "SATS-USDT-SWAP")]).toEqual([sats, sats])
      expect([one("binance", "1000000MOGUSDT"), one("bybit", "1000000MOGUSDT"), one("okx", "MOG-USDT-SWAP")]).toEqual([
        "crypto:mog-coin",
        "crypto:mog-coin",
        "crypto:mog-coin"
      ])
      expect(one("bybit", "SHIB1000USDT")).toBe(one("hyperliquid", "kSHIB"))
      expect(one("binance", "1MBABYDOGEUSDT")).toBe(one("bybit", "1000000BABYDOGEUSDT"))
      // Renamed tickers: the old Hyperliquid listing sits with the new ticker's asset.
      expect(one("hyperliquid", "MATIC")).toBe(one("binance", "POLUSDT"))
      expect(one("hyperliquid", "RNDR")).toBe(one("binance", "RENDERUSDT"))
      expect(one("hyperliquid", "FTM")).toBe("crypto:sonic-3")
      expect(one("hyperliquid", "MKR")).toBe("crypto:sky")
      // Digit-leading tickers are their own assets.
      for (const s of ["1INCHUSDT", "0GUSDT", "BANANAS31USDT"]) expect(one("binance", s)).not.toBe(undefined)
      expect(one("bybit", "2ZUSDT")).toBe(one("hyperliquid", "2Z"))
      const luna2 = directory.assets.find((a) => a.id === one("bybit", "LUNA2USDT"))
      expect([luna2?.symbol, luna2?.listings.every((l) => l.multiplier === 1)]).toEqual(["LUNA2", true])
      // The scale of the whole market, and the tier rule over it.
      expect(added.length).toBeGreaterThan(400)
      const tiers = directory.assets.map((a) => directoryTier(a, { historyReady: true }))
      expect(tiers.filter((t) => t === "core").length).toBeGreaterThan(200)
      // TON stays contested between Toncoin and the on-chain Tokamak Network.
      const entries = directory.assets.map((a, i) => toDirectoryEntry(a, tiers[i] ?? "discovery_only"))
      expect(resolveQuery([entries], "TON", { limit: 10 }).best).toBeNull()
      // Multiplier symbols resolve to their asset.
      for (const q of ["1000PEPEUSDT", "kPEPE", "1000000MOGUSDT", "SHIB1000USDT"])
        expect(resolveQuery([entries], q, { limit: 10 }).best?.asset_id, q).toBe(
          q === "1000000MOGUSDT" ? "crypto:mog-coin" : q === "SHIB1000USDT" ? "crypto:shiba-inu" : "crypto:pepe"
        )
    })
  }
)
