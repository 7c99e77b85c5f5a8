import { describe, expect, it } from "vitest"
import { planeOf } from "../../src/AssetId.ts"
import { CryptoAssets, CryptoVenues, cryptoAsset, cryptoAssetsBySymbol, perpListings } from "../../src/crypto/Assets.ts"
import { HOUR_MS } from "../../src/crypto/Market.ts"

describe("crypto asset registry", () => {
  it("gives every asset a unique canonical crypto ID", () => {
    const ids = CryptoAssets.map((a) => a.id)
    expect(new Set(ids).size).toBe(ids.length)
    for (const id of ids) expect(planeOf(id)).toBe("crypto")
    expect(cryptoAsset("crypto:bitcoin")?.symbol).toBe("BTC")
    expect(cryptoAsset("crypto:nope")).toBeUndefined()
  })

  it("covers at least 20 core perpetuals and every crypto tier", () => {
    const byTier = (t: string) => CryptoAssets.filter((a) => a.tier === t)
    expect(byTier("core").length).toBeGreaterThanOrEqual(20)
    for (const t of ["listed_token", "contract_token", "prices_only", "discovery_only"]) {
      expect(byTier(t).length, t).toBeGreaterThan(0)
    }
    for (const a of byTier("core")) expect(perpListings(a).length, a.id).toBeGreaterThanOrEqual(3)
    for (const a of byTier("contract_token")) {
      expect(a.networks.length, a.id).toBeGreaterThan(0)
      for (const n of a.networks) expect(a.contracts[n], `${a.id} on ${n}`).toBeDefined()
    }
    expect(byTier("discovery_only").every((a) => a.listings.length === 0)).toBe(true)
  })

  it("lists only known venues, perpetuals settling every 1, 4 or 8 hours, with a 4-hour listing among them", () => {
    const venues = new Set(CryptoVenues.map((v) => v.id))
    const intervals = new Set<number>()
    for (const a of CryptoAssets) {
      for (const l of a.listings) {
        expect(venues.has(l.venue), `${a.id} on ${l.venue}`).toBe(true)
        if (l.market === "perp") intervals.add(l.fundingIntervalMs as number)
        else expect(l.fundingIntervalMs).toBeUndefined()
      }
    }
    expect([...intervals].sort((x, y) => x - y)).toEqual([HOUR_MS, 4 * HOUR_MS, 8 * HOUR_MS])
  })

  it("finds assets by symbol regardless of case", () => {
    expect(cryptoAssetsBySymbol("sol").map((a) => a.id)).toEqual(["crypto:solana"])
    expect(cryptoAssetsBySymbol("ZZZZ")).toEqual([])
    // A symbol two crypto assets share, for `resolve`'s collision warnings.
    expect(cryptoAssetsBySymbol("TON").map((a) => a.id)).toEqual(["crypto:toncoin", "crypto:tokamak-network"])
  })
})
