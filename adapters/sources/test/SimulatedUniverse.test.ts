/**
 * The simulated default's universe at production scale (`makeSimulatedUniverse`): built by the real directory
 * logic from the simulated venues' listings, so it has what production has: over 400 assets, over 200 of them
 * `core`, multiplier symbols resolved under their asset, a renamed ticker, and ticker collisions that `resolve`
 * answers with `best: null`. Prices and market caps at believable late-2025 magnitudes, and every asset
 * simulated plausibly over a short history.
 */
import { assert, describe, it } from "@effect/vitest"
import { CryptoAssets, DAY_MS, MarketStore, resolveQuery } from "@market-data/core"
import { makeMemoryMarketStore } from "@market-data/memory"
import { Effect } from "effect"
import { backfill, makeSimulation } from "../src/simulated/crypto/index.ts"
import { makeSimulatedUniverse, SimulatedHomonyms } from "../src/simulated/crypto/Universe.ts"

const built = makeSimulatedUniverse()
const { universe, profiles } = built
const entries = [...universe.entries.values()]
const cap = (id: string) => (universe.byId.get(id)?.circulatingSupply ?? 0) * (profiles[id]?.priceUsd ?? 0)

describe("the simulated universe", () => {
  it("holds at least 400 assets, at least 200 of them core by the directory's tier rule", () => {
    assert.isAtLeast(universe.assets.length, 400)
    assert.isAtLeast(universe.core.length, 200)
    assert.isAtLeast(built.priced.length, 400)
    assert.isTrue(universe.fromDirectory)
    // Every core asset trades perpetuals on at least two venues (the rule, applied by the directory).
    for (const a of universe.core) {
      assert.isAtLeast(new Set(a.listings.filter((l) => l.market === "perp").map((l) => l.venue)).size, 2, a.id)
    }
    assert.strictEqual(universe.assets.filter((a) => a.tier === "listed_token").length > 100, true)
  })

  it("keeps every registry asset with its listings, and is the same at every build", () => {
    for (const a of CryptoAssets) {
      const served = universe.byId.get(a.id)
      assert.isDefined(served, a.id)
      assert.deepStrictEqual(
        served?.listings.map((l) => `${l.venue}:${l.symbol}`).sort(),
        a.listings.map((l) => `${l.venue}:${l.symbol}`).sort(),
        a.id
      )
    }
    const again = makeSimulatedUniverse()
    assert.deepStrictEqual(
      again.universe.assets.map((a) => [a.id, a.tier, a.listings, a.circulatingSupply]),
      universe.assets.map((a) => [a.id, a.tier, a.listings, a.circulatingSupply])
    )
    assert.deepStrictEqual(again.profiles, profiles)
  })

  it("quotes sub-cent assets in bundles, and resolve finds each bundle symbol under its asset", () => {
    const bundled = universe.assets.flatMap((a) =>
      a.listings.filter((l) => (l.tokensPerUnit ?? 1) > 1).map((l) => ({ asset: a, listing: l }))
    )
    const forms = new Set(
      bundled.map(({ listing }) => listing.symbol.replace(/[A-Z]{2,}/g, "X").replace(/X(USDT)?$/, "X"))
    )
    // Prefix (1000X, 1000000X), Hyperliquid's k prefix, Bybit's suffix (X1000000), and the rename's 24,000.
    assert.isAtLeast(bundled.length, 20)
    for (const form of ["1000X", "kX"]) assert.isTrue(forms.has(form), `no ${form} form in ${[...forms].join(" ")}`)
    assert.isTrue(
      bundled.some(({ listing }) => listing.tokensPerUnit === 1_000_000),
      "no million-token bundle"
    )
    for (const { asset, listing } of bundled.filter(({ asset }) => !asset.id.startsWith("crypto:sky"))) {
      const answer = resolveQuery([entries], listing.symbol, { limit: 3 })
      assert.strictEqual(answer.best?.asset_id, asset.id, `${listing.symbol} resolves to ${answer.best?.asset_id}`)
      // A bundle's price per venue unit is the token price times the bundle: the token stays sub-cent.
      assert.isBelow(profiles[asset.id]?.priceUsd ?? 1, 0.01, asset.id)
    }
  })

  it("files a renamed ticker's listings under the new ticker (MATICUSDT under POL)", () => {
    const pol = universe.byId.get("crypto:polygon-ecosystem-token")
    assert.strictEqual(pol?.symbol, "POL")
    assert.isTrue(pol?.listings.some((l) => l.symbol === "MATICUSDT"))
    assert.strictEqual(resolveQuery([entries], "MATIC", { limit: 3 }).best?.asset_id, pol?.id)
  })

  it("has at least three ticker collisions, each answered best: null with symbol_collision", () => {
    const bySymbol = new Map<string, Array<string>>()
    for (const a of universe.assets) bySymbol.set(a.symbol, [...(bySymbol.get(a.symbol) ?? []), a.id])
    const shared = [...bySymbol].filter(([, ids]) => ids.length > 1)
    assert.isAtLeast(shared.length, 3)
    for (const [ticker] of SimulatedHomonyms) {
      const answer = resolveQuery([entries], ticker, { limit: 5 })
      assert.isNull(answer.best, ticker)
      assert.isAtLeast(answer.matches.length, 2)
      for (const m of answer.matches)
        assert.include(
          m.warnings.map((w) => w.code),
          "symbol_collision"
        )
      // One of the two is the venue-listed coin, the other an on-chain token.
      const tiers = answer.matches.map((m) => m.tier).sort()
      assert.include(tiers, "contract_token")
    }
  })

  it("prices the well-known assets at late-2025 magnitudes, market caps in a believable order", () => {
    const price = (id: string) => profiles[id]?.priceUsd ?? Number.NaN
    assert.isTrue(price("crypto:bitcoin") > 70_000 && price("crypto:bitcoin") < 130_000)
    assert.isTrue(price("crypto:ethereum") > 2_000 && price("crypto:ethereum") < 5_000)
    assert.isTrue(price("crypto:solana") > 100 && price("crypto:solana") < 260)
    assert.isAbove(cap("crypto:bitcoin"), cap("crypto:ethereum"))
    assert.isAbove(cap("crypto:ethereum"), cap("crypto:solana"))
    // Past the registry, the assets come in market-cap order, each below Ethereum and Solana.
    const registry = new Set(CryptoAssets.map((a) => a.id))
    const rest = built.priced.filter((a) => !registry.has(a.id))
    assert.isAtLeast(rest.length, 350)
    for (let i = 1; i < rest.length; i++) {
      const a = rest[i - 1]?.id as string
      const b = rest[i]?.id as string
      assert.isAtLeast(cap(a), cap(b), `${a} before ${b}`)
    }
    assert.isBelow(cap(rest[0]?.id as string), cap("crypto:solana"))
    // No well-known coin priced like a meme coin or above Bitcoin.
    for (const a of rest.slice(0, 150)) {
      assert.isTrue(price(a.id) > 0.0005 && price(a.id) < 5_000, `${a.id} at ${price(a.id)}`)
    }
  })

  it.effect(
    "simulates every asset: a week of history with positive, finite prices near each profile's level",
    () =>
      Effect.gen(function* () {
        const nowMs = Date.UTC(2026, 10, 23, 6, 7, 12)
        const store = makeMemoryMarketStore()
        const sim = makeSimulation({ seed: "400", nowMs, assets: built.priced, profiles, historyDays: 7 })
        const report = yield* backfill(sim, nowMs).pipe(Effect.provideService(MarketStore, store))
        assert.strictEqual(report.assets, built.priced.length)
        for (const a of built.priced) {
          const primary = a.listings[0]
          const bars = yield* store.read("bars", {
            assetId: a.id,
            ...(primary === undefined ? {} : { venue: primary.venue }),
            fromMs: nowMs - DAY_MS,
            toMs: nowMs
          })
          const closes = bars[0]?.close
          const close = closes?.[closes.length - 1]
          assert.isDefined(close, `${a.id}: no bars`)
          const level = profiles[a.id]?.priceUsd as number
          assert.isTrue(Number.isFinite(close) && (close as number) > 0, `${a.id}: close ${close}`)
          // Its magnitude holds: a fortnight at most (the genesis is on a 7-day grid) of trends and jumps stays
          // within a factor of 10 of the starting level.
          assert.isTrue(
            (close as number) / level < 10 && level / (close as number) < 10,
            `${a.id}: ${close} vs ${level}`
          )
        }
      }),
    120_000
  )
})
