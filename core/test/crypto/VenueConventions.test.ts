/**
 * Venue conventions in the answers (issue #29, point 10): `liquidations` says when its totals are a lower bound
 * and why, venue by venue, and only then; `open_interest.by_venue` marks the venues whose own figure counts both
 * sides. End to end over the in-memory store and a deterministic fixture, results decoded against their schemas
 * with excess properties refused; and the classification itself, case by case.
 */
import { assert, describe, it } from "@effect/vitest"
import { makeMemoryMarketStore } from "@market-data/memory"
import { Effect, Exit, Schema } from "effect"
import { TestClock } from "effect/testing"
import { type CryptoAsset, cryptoAsset, directoryEntryOf } from "../../src/crypto/Assets.ts"
import { makeCryptoPlaneOver } from "../../src/crypto/CryptoPlane.ts"
import { MarketStore } from "../../src/crypto/Market.ts"
import type { CryptoUniverse } from "../../src/crypto/Universe.ts"
import { listedVenues, makeUniverseRef } from "../../src/crypto/Universe.ts"
import {
  countsBothSides,
  LowerBoundReasons,
  liquidationLowerBound,
  VenueConventions
} from "../../src/crypto/VenueConventions.ts"
import { decodeParams, isApiError } from "../../src/Params.ts"
import type { Handler, HandlerInput } from "../../src/Pipeline.ts"
import { planeHandlers } from "../../src/Planes.ts"
import { operation } from "../../src/Registry.ts"
import * as R from "../../src/Results.ts"
import { type AssetFixture, buildFixture, writeFixture } from "./support/MarketFixture.ts"

const END = Date.UTC(2026, 10, 20, 12, 0)
const NOW = END + 60_000
const BTC = cryptoAsset("crypto:bitcoin") as CryptoAsset

/** The asset with only the listings on `venues` (a universe of its own, so the registry stays as it is). */
const listedOn = (asset: CryptoAsset, venues: ReadonlyArray<string>): CryptoAsset => ({
  ...asset,
  listings: asset.listings.filter((l) => venues.includes(l.venue))
})

const universeOf = (assets: ReadonlyArray<CryptoAsset>): CryptoUniverse => ({
  version: Symbol("test universe"),
  assets,
  byId: new Map(assets.map((a) => [a.id, a])),
  core: assets.filter((a) => a.tier === "core"),
  entries: new Map(assets.map((a) => [a.id, directoryEntryOf(a, true)])),
  venues: new Map(assets.map((a) => [a, listedVenues(a)])),
  fromDirectory: false
})

/** A plane over `assets`, their fixture written (`edit` may drop columns first), and a caller of its operations. */
const setup = (assets: ReadonlyArray<CryptoAsset>, edit: (f: ReadonlyArray<AssetFixture>) => void = () => {}) =>
  Effect.gen(function* () {
    const fixture = buildFixture(assets, END, 12, 7)
    edit(fixture)
    const store = makeMemoryMarketStore()
    yield* writeFixture(store, fixture, END)
    yield* TestClock.setTime(NOW)
    const plane = yield* makeCryptoPlaneOver(makeUniverseRef(universeOf(assets))).pipe(
      Effect.provideService(MarketStore, store)
    )
    const handlers = planeHandlers([plane])
    return (name: string, id: string) =>
      Effect.gen(function* () {
        const op = operation(name) as NonNullable<ReturnType<typeof operation>>
        const decoded = decodeParams(op, [["id", id]])
        if (isApiError(decoded)) return yield* Effect.fail(decoded)
        const input: HandlerInput = {
          op,
          params: decoded,
          principal: { _tag: "Anonymous", client: "test", rateLimitPerMinute: 60 },
          rate: { limit: 60, remaining: 59, resetAtMs: NOW, allowed: true },
          nowMs: NOW
        }
        const out = yield* (handlers.get(name) as Handler)(input)
        assert.strictEqual(out._tag, "Json")
        const body = (out as Extract<typeof out, { _tag: "Json" }>).body
        const exit = Schema.decodeUnknownExit(R.single(op.result) as unknown as Schema.Codec<unknown, unknown>, {
          onExcessProperty: "error"
        })(body)
        if (Exit.isFailure(exit)) assert.fail(`${name} does not decode: ${String(exit.cause)}`)
        return (body as { data: any }).data
      })
  })

/** Drops the liquidation rows of `venue` from every asset of the fixture (the venue delivered none). */
const withoutLiquidations = (venue: string) => (fixture: ReadonlyArray<AssetFixture>) => {
  for (const a of fixture)
    for (const v of a.venues)
      if (v.venue === venue) {
        v.liqT.length = 0
        v.liqLong.length = 0
        v.liqShort.length = 0
      }
}

describe("venue conventions in the answers", () => {
  it.effect("liquidations with Binance data carry lower_bound, naming Binance's snapshot stream", () =>
    Effect.gen(function* () {
      const call = yield* setup([BTC])
      const l = yield* call("liquidations", BTC.id)
      assert.isNotNull(l.total_24h_usd)
      assert.isNotNull(l.intensity_pct_of_oi_24h)
      assert.deepStrictEqual(l.lower_bound.figures, ["total_24h_usd", "intensity_pct_of_oi_24h"])
      // Every venue delivered: Binance and OKX deliver part of their liquidations; Bybit all; Hyperliquid's
      // (simulated) rows are summed, so it is not missing.
      assert.deepStrictEqual(
        l.lower_bound.venues.map((v: { venue: string; reason: string }) => [v.venue, v.reason]),
        [
          ["binance", "snapshot_stream"],
          ["okx", "page_capped"]
        ]
      )
      for (const v of l.lower_bound.venues) assert.isAbove(v.detail.length, 20)
      assert.include(l.lower_bound.venues[0].detail, "per symbol per second")
    })
  )

  it.effect("liquidations from Bybit alone (complete) carry no lower_bound", () =>
    Effect.gen(function* () {
      const call = yield* setup([listedOn(BTC, ["bybit"])])
      const l = yield* call("liquidations", BTC.id)
      assert.isNotNull(l.total_24h_usd)
      assert.notProperty(l, "lower_bound")
    })
  )

  it.effect(
    "a listed venue with no liquidation on record makes the totals a lower bound (no_data, not_published)",
    () =>
      Effect.gen(function* () {
        const call = yield* setup([listedOn(BTC, ["bybit", "binance", "hyperliquid"])], (f) => {
          withoutLiquidations("binance")(f)
          withoutLiquidations("hyperliquid")(f)
        })
        const l = yield* call("liquidations", BTC.id)
        assert.deepStrictEqual(
          l.lower_bound.venues.map((v: { venue: string; reason: string }) => [v.venue, v.reason]),
          [
            ["binance", "no_data"],
            ["hyperliquid", "not_published"]
          ]
        )
      })
  )

  it.effect("no liquidation anywhere: the figures are null (unavailable) and no lower_bound is given", () =>
    Effect.gen(function* () {
      const call = yield* setup([listedOn(BTC, ["binance", "bybit"])], (f) => {
        withoutLiquidations("binance")(f)
        withoutLiquidations("bybit")(f)
      })
      const l = yield* call("liquidations", BTC.id)
      assert.isNull(l.total_24h_usd)
      assert.notProperty(l, "lower_bound")
      assert.strictEqual(l.unavailable.total_24h_usd.reason, "no_data")
    })
  )

  it.effect("open_interest.by_venue marks the venues whose own figure counts both sides, and only those", () =>
    Effect.gen(function* () {
      const call = yield* setup([BTC])
      const o = yield* call("open_interest", BTC.id)
      const rows = new Map(o.by_venue.map((r: { venue: string }) => [r.venue, r]))
      assert.strictEqual(rows.size, 4)
      assert.deepStrictEqual(Object.keys(rows.get("binance") as object), ["venue", "usd"])
      assert.deepStrictEqual(Object.keys(rows.get("okx") as object), ["venue", "usd"])
      assert.strictEqual((rows.get("bybit") as { venue_counts: string }).venue_counts, "both_sides")
      assert.strictEqual((rows.get("hyperliquid") as { venue_counts: string }).venue_counts, "both_sides")
    })
  )
})

describe("the conventions table", () => {
  it("states each venue's open-interest count and liquidation completeness as their documentation does", () => {
    const of = (venue: string) => VenueConventions.find((c) => c.venue === venue)
    assert.deepStrictEqual(
      VenueConventions.map((c) => [c.venue, c.openInterest.counts, c.liquidations.completeness]),
      [
        ["binance", "one_side", "lower_bound"],
        ["bybit", "both_sides", "complete"],
        ["okx", "one_side", "lower_bound"],
        ["hyperliquid", "both_sides", "not_published"]
      ]
    )
    assert.strictEqual(of("binance")?.liquidations.reason, "snapshot_stream")
    assert.strictEqual(of("okx")?.liquidations.reason, "page_capped")
    for (const c of VenueConventions)
      if (c.liquidations.completeness !== "complete")
        assert.include(LowerBoundReasons as ReadonlyArray<string>, c.liquidations.reason)
    assert.deepStrictEqual(["binance", "bybit", "okx", "hyperliquid", "dex"].map(countsBothSides), [
      false,
      true,
      false,
      true,
      false
    ])
  })

  it("names a venue only when its part is partial or missing, in the listing order", () => {
    const all = ["binance", "bybit", "okx", "hyperliquid"]
    const reasons = (venues: ReadonlyArray<string>, withData: ReadonlyArray<string>) =>
      liquidationLowerBound(venues, withData).map((v) => `${v.venue}:${v.reason}`)
    assert.deepStrictEqual(reasons(all, ["binance", "bybit", "okx"]), [
      "binance:snapshot_stream",
      "okx:page_capped",
      "hyperliquid:not_published"
    ])
    assert.deepStrictEqual(reasons(["bybit"], ["bybit"]), [])
    assert.deepStrictEqual(reasons(["bybit", "binance"], ["bybit"]), ["binance:no_data"])
    assert.deepStrictEqual(reasons(["bybit", "bybit"], []), ["bybit:no_data"])
    // A venue outside the table with data makes no claim; without data its share is missing.
    assert.deepStrictEqual(reasons(["bybit", "newvenue"], ["bybit", "newvenue"]), [])
    assert.deepStrictEqual(reasons(["bybit", "newvenue"], ["bybit"]), ["newvenue:no_data"])
  })
})
