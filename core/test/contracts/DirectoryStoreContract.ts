/**
 * Contract suite of the asset directory store port. Every implementation (memory, PGlite, PostgreSQL) runs it:
 * `directoryStoreContract("memory", () => layerMemoryDirectoryStore)`. Each test gets a fresh layer from `make`.
 */
import { Effect, type Layer } from "effect"
import { describe, expect, it } from "vitest"
import {
  type AssetDirectory,
  coinIndex,
  type ObservedListing,
  seedDirectory,
  type VenueSnapshot
} from "../../src/crypto/Directory.ts"
import { AssetDirectoryStore } from "../../src/crypto/DirectoryStore.ts"

const T0 = Date.UTC(2026, 0, 1)

const perp = (venue: string, symbol: string, base: string, extra: Partial<ObservedListing> = {}): ObservedListing => ({
  venue,
  market: "perp",
  symbol,
  base,
  quote: "USDT",
  multiplier: 1,
  status: "trading",
  ...extra
})

const COINS = coinIndex([
  { id: "zeta-chain", symbol: "zeta", name: "ZetaChain" },
  { id: "wenlambo", symbol: "wen", name: "Wen" },
  { id: "wen-2", symbol: "wen", name: "Wen Too" }
])

const binance: VenueSnapshot = {
  venue: "binance",
  listings: [
    perp("binance", "BTCUSDT", "BTC"),
    perp("binance", "1000PEPEUSDT", "PEPE", { multiplier: 1000 }),
    perp("binance", "ZETAUSDT", "ZETA"),
    perp("binance", "ZETAUSDC", "ZETA", { quote: "USDC" })
  ]
}
const okx: VenueSnapshot = {
  venue: "okx",
  listings: [
    perp("okx", "ZETA-USDT-SWAP", "ZETA", { contractSize: "0.0001" }),
    perp("okx", "WEN-USDT-SWAP", "WEN", { contractSize: "10000000" })
  ]
}

const ids = (d: AssetDirectory) => d.assets.map((a) => a.id)
const asset = (d: AssetDirectory, id: string) => d.assets.find((a) => a.id === id)

export const directoryStoreContract = (name: string, make: () => Layer.Layer<AssetDirectoryStore>) => {
  const run = <A, E>(effect: Effect.Effect<A, E, AssetDirectoryStore>) =>
    Effect.runPromise(Effect.provide(effect, make()))

  describe(`${name}: AssetDirectoryStore`, () => {
    it("answers the seed directory before anything is saved", () =>
      run(
        Effect.gen(function* () {
          const store = yield* AssetDirectoryStore
          expect(yield* store.load).toEqual(seedDirectory())
          expect(yield* store.coinList).toBeUndefined()
        })
      ))

    it("keeps what a merge made, exactly, and answers it on load", () =>
      run(
        Effect.gen(function* () {
          const store = yield* AssetDirectoryStore
          const result = yield* store.merge([binance, okx], { coins: COINS, nowMs: T0 })
          expect(result.added).toEqual(["crypto:wen", "crypto:zeta-chain"])
          const loaded = yield* store.load
          expect(loaded).toEqual(result.directory)
          const zeta = asset(loaded, "crypto:zeta-chain")
          expect(zeta?.listings.map((l) => [l.venue, l.symbol, l.quote, l.contractSize ?? null])).toEqual([
            ["binance", "ZETAUSDC", "USDC", null],
            ["binance", "ZETAUSDT", "USDT", null],
            ["okx", "ZETA-USDT-SWAP", "USDT", "0.0001"]
          ])
          expect(asset(loaded, "crypto:wen")?.listings[0]?.contractSize).toBe("10000000")
          expect(asset(loaded, "crypto:pepe")?.listings.find((l) => l.venue === "binance")?.multiplier).toBe(1000)
        })
      ))

    it("never removes an asset: one delisted everywhere stays, alive: false, under its ID", () =>
      run(
        Effect.gen(function* () {
          const store = yield* AssetDirectoryStore
          yield* store.merge([binance, okx], { coins: COINS, nowMs: T0 })
          const later = yield* store.merge([{ venue: "okx", listings: [okx.listings[0] as ObservedListing] }], {
            coins: COINS,
            nowMs: T0 + 3_600_000
          })
          expect(later.delisted).toEqual(["crypto:wen"])
          const loaded = yield* store.load
          const wen = asset(loaded, "crypto:wen")
          expect(wen?.alive).toBe(false)
          expect(wen?.listings.map((l) => [l.symbol, l.status, l.lastTradingMs])).toEqual([
            ["WEN-USDT-SWAP", "delisted", T0]
          ])
          // Binance was not refreshed: its listings stand.
          expect(asset(loaded, "crypto:zeta-chain")?.listings.filter((l) => l.status === "trading")).toHaveLength(3)
          expect(loaded.updatedMs).toBe(T0 + 3_600_000)
          // Saving a directory without an asset leaves the stored asset alone.
          yield* store.save({ assets: loaded.assets.filter((a) => a.id !== "crypto:wen"), updatedMs: T0 })
          expect(ids(yield* store.load)).toEqual(ids(loaded))
          expect((yield* store.load).updatedMs).toBe(T0 + 3_600_000)
        })
      ))

    it("refuses, as a defect, a save that gives a venue symbol to another asset, and changes nothing", () =>
      run(
        Effect.gen(function* () {
          const store = yield* AssetDirectoryStore
          const { directory } = yield* store.merge([okx], { coins: COINS, nowMs: T0 })
          const zeta = asset(directory, "crypto:zeta-chain")
          if (zeta === undefined) throw new Error("zeta missing")
          const thief = { ...zeta, id: "crypto:other-zeta", symbol: "ZETA2" }
          const exit = yield* Effect.exit(store.save({ assets: [thief], updatedMs: T0 + 1 }))
          expect(exit._tag).toBe("Failure")
          expect(String(exit)).toContain("DirectoryConflict")
          const after = yield* store.load
          expect(asset(after, "crypto:other-zeta")).toBeUndefined()
          expect(after).toEqual(directory)
          // A seed symbol is held by its seed asset from the start.
          const btc = asset(seedDirectory(), "crypto:bitcoin")
          if (btc === undefined) throw new Error("bitcoin missing")
          const steal = yield* Effect.exit(store.save({ assets: [{ ...btc, id: "crypto:btc-2" }], updatedMs: T0 }))
          expect(steal._tag).toBe("Failure")
        })
      ))

    it("a perpetual and a spot pair under one venue symbol are two listings; each market's list delists only its own", () =>
      run(
        Effect.gen(function* () {
          const store = yield* AssetDirectoryStore
          const spot = (symbol: string, base: string): ObservedListing => ({
            ...perp("binance", symbol, base),
            market: "spot"
          })
          yield* store.merge(
            [
              { ...binance, markets: ["perp"] },
              { venue: "binance", markets: ["spot"], listings: [spot("BTCUSDT", "BTC"), spot("ZETAUSDT", "ZETA")] }
            ],
            { coins: COINS, nowMs: T0 }
          )
          const btc = asset(yield* store.load, "crypto:bitcoin")
          expect(btc?.listings.filter((l) => l.venue === "binance").map((l) => [l.symbol, l.market, l.status])).toEqual(
            [
              ["BTCUSDT", "perp", "trading"],
              ["BTCUSDT", "spot", "trading"]
            ]
          )
          // The spot list alone, without BTCUSDT: the spot pair is delisted, the perpetual keeps trading.
          yield* store.merge([{ venue: "binance", markets: ["spot"], listings: [spot("ZETAUSDT", "ZETA")] }], {
            coins: COINS,
            nowMs: T0 + 1
          })
          const after = yield* store.load
          expect(
            asset(after, "crypto:bitcoin")
              ?.listings.filter((l) => l.venue === "binance")
              .map((l) => [l.symbol, l.market, l.status])
          ).toEqual([
            ["BTCUSDT", "perp", "trading"],
            ["BTCUSDT", "spot", "delisted"]
          ])
          expect(asset(after, "crypto:zeta-chain")?.listings.filter((l) => l.market === "spot").length).toBe(1)
        })
      ))

    it("two merges at once: both land, and one listing makes one asset", () =>
      run(
        Effect.gen(function* () {
          const store = yield* AssetDirectoryStore
          const [a, b] = yield* Effect.all(
            [store.merge([binance], { coins: COINS, nowMs: T0 }), store.merge([okx], { coins: COINS, nowMs: T0 + 1 })],
            { concurrency: "unbounded" }
          )
          expect([...a.added, ...b.added].filter((id) => id === "crypto:zeta-chain")).toHaveLength(1)
          const loaded = yield* store.load
          expect(ids(loaded).filter((id) => id.startsWith("crypto:zeta"))).toEqual(["crypto:zeta-chain"])
          expect(asset(loaded, "crypto:zeta-chain")?.listings.map((l) => l.symbol)).toEqual([
            "ZETAUSDC",
            "ZETAUSDT",
            "ZETA-USDT-SWAP"
          ])
        })
      ))

    it("caches the coin list, replacing it whole", () =>
      run(
        Effect.gen(function* () {
          const store = yield* AssetDirectoryStore
          const first = {
            coins: [
              { id: "bitcoin", symbol: "btc", name: "Bitcoin" },
              { id: "pepe", symbol: "pepe", name: "Pepe" }
            ],
            fetchedMs: T0
          }
          yield* store.saveCoinList(first)
          expect(yield* store.coinList).toEqual(first)
          const second = { coins: [{ id: "ethereum", symbol: "eth", name: "Ethereum" }], fetchedMs: T0 + 1 }
          yield* store.saveCoinList(second)
          expect(yield* store.coinList).toEqual(second)
        })
      ))
  })
}
