/**
 * One directory refresh over the memory store: venues that answer are merged, a venue that fails (or answers
 * something unreadable) keeps its last good listings, skipped instruments are reported, new assets are named from
 * the cached coin list or, before one was fetched, from the bundled well-known coins.
 */
import { type AssetDirectory, AssetDirectoryStore } from "@market-data/core"
import { layerMemoryDirectoryStore } from "@market-data/memory"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { refreshDirectory } from "../../src/live/DirectoryRefresh.ts"
import { SourceError } from "../../src/live/Http.ts"

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
