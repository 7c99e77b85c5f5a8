/**
 * One directory refresh over the memory store: venues that answer are merged, a venue that fails (or answers
 * something unreadable) keeps its last good listings, skipped instruments are reported, new assets are named from
 * the cached coin list or, before one was fetched, from the bundled well-known coins. Every trading perpetual is
 * served (fed, as the universe built from the directory lists it) or named in the report with its reason: over
 * hand-made lists (a ticker several coins share, renamed tickers, a base the coin list lacks, two coins under one
 * ticker) and over the real recorded lists in `../shared/data/crypto/listings` (skipped when absent).
 */
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { type AssetDirectory, AssetDirectoryStore, type CoinEntry, universeOfDirectory } from "@market-data/core"
import { layerMemoryDirectoryStore } from "@market-data/memory"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { type ListingSource, type RefreshReport, refreshDirectory } from "../../src/live/DirectoryRefresh.ts"
import { SourceError } from "../../src/live/Http.ts"
import { perpListingsOf } from "../../src/live/Venue.ts"

const T0 = Date.UTC(2026, 2, 1)
const HOUR = 3_600_000

const binanceBody = (...bases: ReadonlyArray<string>) => ({
  symbols: [
    ...bases.map((b) => ({
      symbol: `${b}USDT`,
      contractType: "PERPETUAL",
      status: "TRADING",
      baseAsset: b,
      quoteAsset: "USDT",
      marginAsset: "USDT",
      underlyingType: "COIN"
    })),
    { symbol: "BTCDOMUSDT", contractType: "PERPETUAL", status: "TRADING", underlyingType: "INDEX" }
  ]
})
const okxBody = (...bases: ReadonlyArray<string>) => ({
  code: "0",
  data: bases.map((b) => ({
    instId: `${b}-USDT-SWAP`,
    instType: "SWAP",
    ctType: "linear",
    settleCcy: "USDT",
    state: "live",
    ctVal: "1",
    ctMult: "1"
  }))
})
const down = (source: string) =>
  Effect.fail(new SourceError({ source, kind: "timeout", what: "instrument list", message: "timed out" }))

const listing = (d: AssetDirectory, id: string, venue: string) =>
  d.assets
    .find((a) => a.id === id)
    ?.listings.filter((l) => l.venue === venue)
    .map((l) => [l.symbol, l.status])

describe("refreshDirectory", () => {
  it("merges the venues that answered and keeps the last good listings of those that failed", () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const store = yield* AssetDirectoryStore
        yield* store.saveCoinList({
          coins: [{ id: "newcoin-protocol", symbol: "newc", name: "NewCoin" }],
          fetchedMs: T0
        })
        const first = yield* refreshDirectory(
          [
            { venue: "binance", fetch: Effect.succeed(binanceBody("BTC", "NEWC")) },
            { venue: "okx", fetch: down("okx") }
          ],
          T0
        )
        expect(first.venues.map((v) => [v.venue, v.ok])).toEqual([
          ["binance", true],
          ["okx", false]
        ])
        const b = first.venues[0]
        expect(b?.ok === true && b.skipped.map((s) => [s.symbol, s.reason])).toEqual([["BTCDOMUSDT", "index"]])
        expect(first.merge.added).toEqual(["crypto:newcoin-protocol"])
        // OKX failed: the seed's OKX listings stand, still trading.
        expect(listing(first.merge.directory, "crypto:bitcoin", "okx")).toEqual([["BTC-USDT-SWAP", "trading"]])
        // Binance answered without ETH: delisted there.
        expect(listing(first.merge.directory, "crypto:ethereum", "binance")).toEqual([["ETHUSDT", "delisted"]])

        const second = yield* refreshDirectory(
          [
            { venue: "binance", fetch: Effect.succeed({ unexpected: true }) },
            { venue: "okx", fetch: Effect.succeed(okxBody("BTC", "NEWC")) }
          ],
          T0 + HOUR
        )
        const failed = second.venues[0]
        expect(failed?.ok === false && failed.error.kind).toBe("format")
        const d = yield* store.load
        expect(listing(d, "crypto:newcoin-protocol", "binance")).toEqual([["NEWCUSDT", "trading"]])
        expect(listing(d, "crypto:newcoin-protocol", "okx")).toEqual([["NEWC-USDT-SWAP", "trading"]])
        expect(listing(d, "crypto:ethereum", "okx")).toEqual([["ETH-USDT-SWAP", "delisted"]])
      }).pipe(Effect.provide(layerMemoryDirectoryStore))
    ))

  it("names new assets from the bundled well-known coins before any coin list was fetched", () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const r = yield* refreshDirectory(
          [{ venue: "binance", fetch: Effect.succeed(binanceBody("ATOM", "ZZZQ")) }],
          T0
        )
        expect(r.merge.added).toEqual(["crypto:cosmos", "crypto:zzzq"])
        const a = r.merge.directory.assets.find((x) => x.id === "crypto:cosmos")
        expect([a?.name, a?.slugSource]).toEqual(["Cosmos Hub", "well_known"])
      }).pipe(Effect.provide(layerMemoryDirectoryStore))
    ))
})

// ---------------------------------------------------------------------------------------------------------
// Every trading perpetual served or named

type Row = Record<string, unknown>
const perp = (symbol: string, baseAsset: string, extra: Row = {}): Row => ({
  symbol,
  contractType: "PERPETUAL",
  status: "TRADING",
  baseAsset,
  quoteAsset: "USDT",
  marginAsset: "USDT",
  underlyingType: "COIN",
  ...extra
})
const usdc = (symbol: string, baseAsset: string): Row =>
  perp(symbol, baseAsset, { quoteAsset: "USDC", marginAsset: "USDC" })
const tradingPerps = (body: { readonly symbols: ReadonlyArray<Row> }) =>
  body.symbols.filter((s) => s.contractType === "PERPETUAL" && s.status === "TRADING").map((s) => s.symbol as string)

/** One refresh with `coins` cached; the report, the directory and what the universe built from it feeds. */
const refreshWith = (coins: ReadonlyArray<CoinEntry>, rounds: ReadonlyArray<ReadonlyArray<ListingSource>>) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* AssetDirectoryStore
      yield* store.saveCoinList({ coins, fetchedMs: T0 })
      let report: RefreshReport | undefined
      for (const [i, sources] of rounds.entries()) report = yield* refreshDirectory(sources, T0 + i * HOUR)
      const done = report as RefreshReport
      const directory = done.merge.directory
      const universe = universeOfDirectory(directory)
      const fedBy = (venue: string, symbol: string) =>
        perpListingsOf(universe.assets, venue as "binance").find((l) => l.listing.symbol === symbol)?.assetId
      const named = (venue: string, symbol: string) =>
        done.venues.flatMap((v) => (v.ok && v.venue === venue ? v.skipped : [])).find((x) => x.symbol === symbol)
      return { report: done, directory, universe, fedBy, named }
    }).pipe(Effect.provide(layerMemoryDirectoryStore))
  )

describe("every trading perpetual is served or named", () => {
  // A coin list as the replay had it (2025-07): a ticker several coins share (POPCAT, QZCAT, SKY, S),
  // the renamed tickers' old coins still listed (maker, fantom).
  const coins: ReadonlyArray<CoinEntry> = [
    { id: "monero", symbol: "xmr", name: "Monero" },
    { id: "popcat", symbol: "popcat", name: "Popcat" },
    { id: "popcat-token", symbol: "popcat", name: "Popcat Token" },
    { id: "qzcat", symbol: "qzcat", name: "QzCat" },
    { id: "qzcat-sol", symbol: "qzcat", name: "QzCat (Solana)" },
    { id: "maker", symbol: "mkr", name: "Maker" },
    { id: "sky", symbol: "sky", name: "Sky" },
    { id: "skycoin", symbol: "sky", name: "Skycoin" },
    { id: "fantom", symbol: "ftm", name: "Fantom" },
    { id: "sonic-3", symbol: "s", name: "Sonic" },
    { id: "agent-s", symbol: "s", name: "Agent S" }
  ]
  // Binance USD-M as in 2024-10: XMR (the registry knows it spot only), POPCAT (the registry knows it on-chain),
  // MKR and FTM before their new tickers were listed, a base no coin has, Pi Network (known to discovery only),
  // two coins under one ticker, a USDC twin, an index.
  const october = {
    symbols: [
      perp("BTCUSDT", "BTC"),
      usdc("BTCUSDC", "BTC"),
      perp("XMRUSDT", "XMR"),
      perp("POPCATUSDT", "POPCAT"),
      perp("MKRUSDT", "MKR"),
      perp("FTMUSDT", "FTM"),
      perp("QZCATUSDT", "QZCAT"),
      perp("QZNONEUSDT", "QZNONE"),
      perp("PIUSDT", "PI"),
      perp("1000000QZBOBUSDT", "1000000QZBOB"),
      perp("QZBOBUSDT", "QZBOB"),
      { symbol: "BTCDOMUSDT", contractType: "PERPETUAL", status: "TRADING", underlyingType: "INDEX" }
    ]
  }
  const binance = (body: unknown): ListingSource => ({ venue: "binance", fetch: Effect.succeed(body) })

  it("a registry asset listed spot or on-chain, a shared ticker, a renamed ticker, a base the coin list lacks", async () => {
    const r = await refreshWith(coins, [[binance(october)]])
    for (const symbol of tradingPerps(october))
      expect(r.fedBy("binance", symbol) ?? r.named("binance", symbol)?.reason, symbol).toBeDefined()
    // Served, each under the asset the rules give it, and priced from it: the plane prices an asset from its
    // first listing, so the perpetual comes before the registry's spot pair or pool.
    const fed = Object.fromEntries(
      ["XMRUSDT", "POPCATUSDT", "MKRUSDT", "FTMUSDT", "QZCATUSDT", "QZNONEUSDT", "PIUSDT", "QZBOBUSDT"].map((s) => [
        s,
        r.fedBy("binance", s)
      ])
    )
    expect(fed).toEqual({
      XMRUSDT: "crypto:monero",
      POPCATUSDT: "crypto:popcat",
      MKRUSDT: "crypto:sky",
      FTMUSDT: "crypto:sonic-3",
      // Two coins share QZCAT, none well known: the fallback slug (the lower-case ticker is a coin's ID).
      QZCATUSDT: "crypto:qzcat-2",
      QZNONEUSDT: "crypto:qznone",
      PIUSDT: "crypto:pi-network",
      QZBOBUSDT: "crypto:qzbob-2"
    })
    expect(r.fedBy("binance", "1000000QZBOBUSDT")).toBe("crypto:qzbob")
    for (const id of ["crypto:monero", "crypto:popcat"]) {
      const a = r.universe.byId.get(id)
      expect([a?.listings[0]?.venue, a?.listings[0]?.market], id).toEqual(["binance", "perp"])
    }
    expect(r.universe.byId.get("crypto:sky")?.listings[0]).toMatchObject({ symbol: "MKRUSDT", tokensPerUnit: 24_000 })
    expect(r.universe.byId.get("crypto:pi-network")?.tier).toBe("listed_token")
    // Named with their reasons.
    expect(r.named("binance", "BTCDOMUSDT")?.reason).toBe("index")
    expect(r.named("binance", "BTCUSDC")).toMatchObject({
      reason: "same_asset",
      detail: "crypto:bitcoin fed from BTCUSDT"
    })
  })

  it("old and new ticker trading together: the new one feeds the asset, the old one is named same_asset", async () => {
    const both = { symbols: [...october.symbols, perp("SKYUSDT", "SKY"), perp("SUSDT", "S")] }
    const r = await refreshWith(coins, [[binance(october)], [binance(both)]])
    for (const symbol of tradingPerps(both))
      expect(r.fedBy("binance", symbol) ?? r.named("binance", symbol)?.reason, symbol).toBeDefined()
    expect([r.fedBy("binance", "SKYUSDT"), r.fedBy("binance", "SUSDT")]).toEqual(["crypto:sky", "crypto:sonic-3"])
    expect(r.named("binance", "MKRUSDT")).toMatchObject({ reason: "same_asset", detail: "crypto:sky fed from SKYUSDT" })
    expect(r.named("binance", "FTMUSDT")).toMatchObject({
      reason: "same_asset",
      detail: "crypto:sonic-3 fed from SUSDT"
    })
    const twins = r.report.venues.flatMap((v) => (v.ok ? v.skipped : [])).filter((x) => x.reason === "same_asset")
    expect(twins.map((x) => x.symbol).sort()).toEqual(["BTCUSDC", "FTMUSDT", "MKRUSDT"])
  })
})

const LISTINGS = fileURLToPath(new URL("../../../../../shared/data/crypto/listings/", import.meta.url))
const present = existsSync(LISTINGS)
if (!present) console.warn(`SKIPPED: the real listing replay needs ${LISTINGS}, which is absent`)
const real = (file: string): unknown => JSON.parse(readFileSync(LISTINGS + file, "utf8"))

describe.skipIf(!present)(
  present
    ? "every trading perpetual served or named: the real lists"
    : "every trading perpetual served or named: the real lists (SKIPPED: ../shared/data is absent)",
  () => {
    const load = () => ({
      binance: real("binance_fapi_v1_exchangeInfo_2025-12-24_NOLICENSE.json") as { symbols: Array<Row> },
      bybit: real("bybit_v5_market_instruments-info_linear-usdt-trading-keyed_2026-02-07_NOLICENSE.json"),
      okx: real("okx_api_v5_public_instruments_SWAP-wrapped_2025-11-03_NOLICENSE.json"),
      hyperliquid: real("hyperliquid_info_metaAndAssetCtxs_2026-03-10_NOLICENSE.json"),
      coins: real("coingecko_api_v3_coins_list_2025-08-24_NOLICENSE.json") as ReadonlyArray<CoinEntry>
    })
    const sources = (lists: ReturnType<typeof load>): ReadonlyArray<ListingSource> =>
      (["binance", "bybit", "okx", "hyperliquid"] as const).map((venue) => ({
        venue,
        fetch: Effect.succeed(lists[venue] as unknown)
      }))

    it("Binance USD-M (2025-12) with the others and the coin list (2025-08): every PERPETUAL+TRADING symbol", async () => {
      const lists = load()
      const r = await refreshWith(lists.coins, [sources(lists)])
      const symbols = tradingPerps(lists.binance)
      expect(symbols.length).toBe(554)
      const missing = symbols.filter((s) => r.fedBy("binance", s) === undefined && r.named("binance", s) === undefined)
      expect(missing).toEqual([])
      // Every other venue's trading perpetual too.
      for (const v of r.report.venues.filter((x) => x.venue !== "binance")) {
        const held = r.directory.assets.flatMap((a) =>
          a.listings.filter((l) => l.venue === v.venue && l.market === "perp" && l.status === "trading")
        )
        expect(held.length, v.venue).toBe(v.ok ? v.listings - (v.venue === "hyperliquid" ? 39 : 0) : -1)
        for (const l of held)
          expect(
            r.fedBy(v.venue, l.symbol) ?? r.named(v.venue, l.symbol)?.reason,
            `${v.venue} ${l.symbol}`
          ).toBeDefined()
      }
      // The four: XMR and POPCAT served (priced from the perpetual), MKR and FTM settling (named), their
      // new tickers served.
      expect(r.fedBy("binance", "XMRUSDT")).toBe("crypto:monero")
      expect(r.fedBy("binance", "POPCATUSDT")).toBe("crypto:popcat")
      for (const id of ["crypto:monero", "crypto:popcat", "crypto:aerodrome", "crypto:mog-coin"])
        expect(r.universe.byId.get(id)?.listings[0]?.market, id).toBe("perp")
      expect(r.named("binance", "MKRUSDT")?.reason).toBe("not_trading")
      expect(r.named("binance", "FTMUSDT")?.reason).toBe("not_trading")
      expect([r.fedBy("binance", "SKYUSDT"), r.fedBy("binance", "SUSDT")]).toEqual(["crypto:sky", "crypto:sonic-3"])
      // Two coins named BOB: two assets, both served.
      const bob = [r.fedBy("binance", "1000000BOBUSDT"), r.fedBy("binance", "BOBUSDT")]
      expect(bob.every((id) => id !== undefined) && bob[0] !== bob[1]).toBe(true)
      // The 37 USDC twins (and OKX's two) are named, with the symbol that feeds their asset; the indexes too.
      const twins = r.report.venues.flatMap((v) => (v.ok ? v.skipped : [])).filter((x) => x.reason === "same_asset")
      expect(twins.map((x) => x.symbol).filter((x) => x.endsWith("USDC") || x.endsWith("-USDC-SWAP"))).toEqual(
        twins.map((x) => x.symbol)
      )
      expect(twins.length).toBe(37 + 2)
      expect(r.named("binance", "BTCUSDC")?.detail).toBe("crypto:bitcoin fed from BTCUSDT")
      expect(r.named("binance", "BTCDOMUSDT")?.reason).toBe("index")
    })

    it("the same list as in 2024-10 (MKRUSDT and FTMUSDT trading, SKY and S not listed yet): both served", async () => {
      const lists = load()
      // The recorded answer, changed in memory only: the two settling contracts back to TRADING, SKY and S out.
      const october = {
        ...lists.binance,
        symbols: lists.binance.symbols
          .filter((s) => s.symbol !== "SKYUSDT" && s.symbol !== "SUSDT")
          .map((s) => (s.symbol === "MKRUSDT" || s.symbol === "FTMUSDT" ? { ...s, status: "TRADING" } : s))
      }
      const r = await refreshWith(lists.coins, [[{ venue: "binance", fetch: Effect.succeed(october) }]])
      const missing = tradingPerps(october).filter(
        (s) => r.fedBy("binance", s) === undefined && r.named("binance", s) === undefined
      )
      expect(missing).toEqual([])
      expect([r.fedBy("binance", "MKRUSDT"), r.fedBy("binance", "FTMUSDT")]).toEqual(["crypto:sky", "crypto:sonic-3"])
      expect(r.universe.byId.get("crypto:sky")?.listings[0]?.tokensPerUnit).toBe(24_000)
    })
  }
)
