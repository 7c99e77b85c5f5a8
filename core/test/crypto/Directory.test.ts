/**
 * The asset directory's pure rules: multipliers, renames, the slug rule, ID permanence under merge (a
 * property over arbitrary refresh sequences), collisions and the tier rule. Real venue listings: see
 * adapters/sources/test/live/Listings.test.ts.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { CryptoAssets } from "../../src/crypto/Assets.ts"
import {
  type AssetDirectory,
  coinIndex,
  directoryTier,
  mergeDirectory,
  type ObservedListing,
  renamed,
  seedDirectory,
  slugFor,
  splitMultiplier,
  toDirectoryEntry,
  type VenueSnapshot
} from "../../src/crypto/Directory.ts"
import { universeOfDirectory } from "../../src/crypto/Universe.ts"
import { resolveQuery } from "../../src/Resolve.ts"

const T0 = Date.UTC(2026, 0, 1)

/** A listing as a venue parser makes it: the venue base split by `splitMultiplier`. */
const listing = (
  venue: string,
  symbol: string,
  venueBase: string,
  extra: Partial<ObservedListing> = {}
): ObservedListing => {
  const split = splitMultiplier(venueBase)
  if (split === undefined) throw new Error(`not a ticker: ${venueBase}`)
  return {
    venue,
    market: "perp",
    symbol,
    base: split.base,
    quote: venue === "hyperliquid" ? "USDC" : "USDT",
    multiplier: split.multiplier,
    status: "trading",
    ...extra
  }
}

const NO_COINS = coinIndex([])
const asset = (d: AssetDirectory, id: string) => d.assets.find((a) => a.id === id)
const holderOf = (d: AssetDirectory, venue: string, symbol: string) =>
  d.assets.filter((a) => a.listings.some((l) => l.venue === venue && l.symbol === symbol)).map((a) => a.id)

describe("splitMultiplier", () => {
  it("splits every bundle form off and names the tokens per unit", () => {
    const cases: ReadonlyArray<readonly [string, string, number]> = [
      ["1000PEPE", "PEPE", 1_000],
      ["kPEPE", "PEPE", 1_000],
      ["kSHIB", "SHIB", 1_000],
      ["1000000MOG", "MOG", 1_000_000],
      ["1000SATS", "SATS", 1_000],
      ["10000SATS", "SATS", 10_000],
      ["1000000BABYDOGE", "BABYDOGE", 1_000_000],
      ["1MBABYDOGE", "BABYDOGE", 1_000_000],
      ["SHIB1000", "SHIB", 1_000],
      ["1000X", "X", 1_000],
      ["10000QUBIC", "QUBIC", 10_000]
    ]
    for (const [venueBase, base, multiplier] of cases)
      expect(splitMultiplier(venueBase), venueBase).toEqual({ base, multiplier })
  })

  it("keeps digit-leading and digit-ending tickers that are not bundles whole", () => {
    for (const t of ["1INCH", "0G", "2Z", "4", "42", "LUNA2", "BANANAS31", "API3", "C98", "USD1", "B2", "AI16Z", "BTC"])
      expect(splitMultiplier(t), t).toEqual({ base: t, multiplier: 1 })
  })

  it("refuses what is not a ticker", () => {
    for (const t of ["", "btc", "@1", "BTC-USD", "xyz:TSLA", "k"]) expect(splitMultiplier(t), t).toBeUndefined()
  })
})

describe("one asset behind many venue symbols", () => {
  it("PEPE on Binance 1000PEPEUSDT/1000PEPEUSDC, Bybit 1000PEPEUSDT, OKX PEPE-USDT-SWAP, Hyperliquid kPEPE", () => {
    const { directory, added } = mergeDirectory(
      seedDirectory(T0),
      [
        {
          venue: "binance",
          listings: [
            listing("binance", "1000PEPEUSDT", "1000PEPE"),
            listing("binance", "1000PEPEUSDC", "1000PEPE", { quote: "USDC" })
          ]
        },
        { venue: "bybit", listings: [listing("bybit", "1000PEPEUSDT", "1000PEPE")] },
        { venue: "okx", listings: [listing("okx", "PEPE-USDT-SWAP", "PEPE", { contractSize: "10000000" })] },
        { venue: "hyperliquid", listings: [listing("hyperliquid", "kPEPE", "kPEPE")] }
      ],
      { coins: NO_COINS, nowMs: T0 }
    )
    expect(added).toEqual([])
    const pepe = asset(directory, "crypto:pepe")
    expect(pepe?.listings.map((l) => [l.venue, l.symbol, l.multiplier, l.status])).toEqual([
      ["binance", "1000PEPEUSDC", 1000, "trading"],
      ["binance", "1000PEPEUSDT", 1000, "trading"],
      ["bybit", "1000PEPEUSDT", 1000, "trading"],
      ["hyperliquid", "kPEPE", 1000, "trading"],
      ["okx", "PEPE-USDT-SWAP", 1, "trading"]
    ])
    expect(pepe?.listings.find((l) => l.venue === "okx")?.contractSize).toBe("10000000")
    // resolve finds the bundle symbols under the asset.
    const entries = directory.assets.map((a) => toDirectoryEntry(a, "core"))
    for (const q of ["kPEPE", "1000PEPEUSDT", "1000pepeusdc"])
      expect(resolveQuery([entries], q, { limit: 5 }).best?.asset_id, q).toBe("crypto:pepe")
  })

  it("SATS under 1000SATS (Binance), 10000SATS (Bybit) and SATS (OKX) is one new asset", () => {
    const { directory, added } = mergeDirectory(
      seedDirectory(T0),
      [
        { venue: "binance", listings: [listing("binance", "1000SATSUSDT", "1000SATS")] },
        { venue: "bybit", listings: [listing("bybit", "10000SATSUSDT", "10000SATS")] },
        { venue: "okx", listings: [listing("okx", "SATS-USDT-SWAP", "SATS")] }
      ],
      { coins: coinIndex([{ id: "sats-ordinals", symbol: "sats", name: "SATS (Ordinals)" }]), nowMs: T0 }
    )
    expect(added).toEqual(["crypto:sats-ordinals"])
    const sats = asset(directory, "crypto:sats-ordinals")
    expect(sats?.listings.map((l) => [l.symbol, l.multiplier])).toEqual([
      ["1000SATSUSDT", 1000],
      ["10000SATSUSDT", 10000],
      ["SATS-USDT-SWAP", 1]
    ])
    expect(sats?.slugSource).toBe("coin_list")
  })

  it("a renamed ticker is the same asset under its new ticker; old units convert", () => {
    expect(renamed("MKR")).toEqual({ ticker: "SKY", tokensPerOld: 24_000 })
    expect(renamed("BTC")).toEqual({ ticker: "BTC", tokensPerOld: 1 })
    const { directory } = mergeDirectory(
      seedDirectory(T0),
      [
        { venue: "binance", listings: [listing("binance", "POLUSDT", "POL"), listing("binance", "SKYUSDT", "SKY")] },
        {
          venue: "hyperliquid",
          listings: [
            listing("hyperliquid", "MATIC", "MATIC", { status: "delisted" }),
            listing("hyperliquid", "MKR", "MKR", { status: "delisted" }),
            listing("hyperliquid", "FTM", "FTM", { status: "delisted" }),
            listing("hyperliquid", "S", "S")
          ]
        }
      ],
      { coins: NO_COINS, nowMs: T0 }
    )
    const pol = asset(directory, "crypto:polygon-ecosystem-token")
    expect([pol?.symbol, pol?.aliases, pol?.slugSource]).toEqual(["POL", ["MATIC"], "rename_table"])
    expect(pol?.listings.map((l) => [l.venue, l.symbol, l.status])).toEqual([
      ["binance", "POLUSDT", "trading"],
      ["hyperliquid", "MATIC", "delisted"]
    ])
    const sky = asset(directory, "crypto:sky")
    expect(sky?.listings.find((l) => l.symbol === "MKR")?.multiplier).toBe(24_000)
    expect(asset(directory, "crypto:sonic-3")?.listings.map((l) => l.symbol)).toEqual(["FTM", "S"])
    expect(directory.assets.filter((a) => ["MATIC", "MKR", "FTM"].includes(a.symbol))).toEqual([])
  })

  it("an asset known under the old ticker keeps its ID and moves to the new ticker", () => {
    const before = mergeDirectory(seedDirectory(T0), [], { coins: NO_COINS, nowMs: T0 }).directory
    const matic = {
      id: "crypto:matic-network",
      symbol: "MATIC",
      name: "Polygon",
      aliases: [],
      coingeckoId: "matic-network",
      slugSource: "well_known" as const,
      listings: [{ ...listing("binance", "MATICUSDT", "MATIC"), firstSeenMs: T0, lastTradingMs: T0 }],
      alive: true,
      firstSeenMs: T0
    }
    const { directory, added } = mergeDirectory(
      { ...before, assets: [...before.assets, matic] },
      [{ venue: "binance", listings: [listing("binance", "POLUSDT", "POL")] }],
      { coins: NO_COINS, nowMs: T0 + 1 }
    )
    expect(added).toEqual([])
    const a = asset(directory, "crypto:matic-network")
    expect([a?.symbol, a?.aliases, a?.alive]).toEqual(["POL", ["MATIC"], true])
    expect(a?.listings.map((l) => [l.symbol, l.status])).toEqual([
      ["MATICUSDT", "delisted"],
      ["POLUSDT", "trading"]
    ])
  })
})

describe("slugFor", () => {
  const coins = coinIndex([
    { id: "zeta-chain", symbol: "zeta", name: "ZetaChain" },
    { id: "wen-1", symbol: "wen", name: "Wen" },
    { id: "wen-2", symbol: "wen", name: "Wen Again" },
    { id: "newt", symbol: "xyz", name: "A coin whose ID is another ticker" }
  ])
  const free = { coins, taken: () => false }

  it("follows the rule in order: rename table, well-known by market cap, the one coin, fallback", () => {
    expect(slugFor("S", free)).toEqual({
      slug: "sonic-3",
      name: "Sonic",
      coingeckoId: "sonic-3",
      source: "rename_table"
    })
    // Several coins share ATOM and USDT; the bundled well-known list settles it by market cap.
    expect(slugFor("ATOM", free)).toMatchObject({ slug: "cosmos", source: "well_known" })
    expect(slugFor("USDT", free)).toMatchObject({ slug: "tether", source: "well_known" })
    expect(slugFor("ZETA", free)).toEqual({
      slug: "zeta-chain",
      name: "ZetaChain",
      coingeckoId: "zeta-chain",
      source: "coin_list"
    })
    // Two coins, none well known: no guess.
    expect(slugFor("WEN", free)).toEqual({ slug: "wen", name: "WEN", source: "fallback" })
    expect(slugFor("NOPE", free)).toEqual({ slug: "nope", name: "NOPE", source: "fallback" })
  })

  it("never takes a slug already used, nor (for the fallback) another coin's ID", () => {
    expect(slugFor("NEWT", free).slug).toBe("newt-2")
    expect(slugFor("ZETA", { coins, taken: (s) => s === "zeta-chain" })).toMatchObject({
      slug: "zeta",
      source: "fallback"
    })
    expect(slugFor("NOPE", { coins, taken: (s) => s === "nope" || s === "nope-2" }).slug).toBe("nope-3")
  })
})

describe("collisions", () => {
  it("two coins with one ticker stay two assets; resolve answers best: null with symbol_collision", () => {
    const { directory } = mergeDirectory(
      seedDirectory(T0),
      [
        { venue: "binance", listings: [listing("binance", "TONUSDT", "TON")] },
        { venue: "okx", listings: [listing("okx", "TON-USDT-SWAP", "TON")] }
      ],
      { coins: NO_COINS, nowMs: T0 }
    )
    // The venue listing goes to the asset already listed on venues (Toncoin), not the on-chain Tokamak token.
    expect(holderOf(directory, "binance", "TONUSDT")).toEqual(["crypto:toncoin"])
    expect(asset(directory, "crypto:tokamak-network")?.listings.map((l) => l.venue)).toEqual(["dex"])
    const entries = directory.assets.map((a) => toDirectoryEntry(a, directoryTier(a, { historyReady: true })))
    const answer = resolveQuery([entries], "TON", { limit: 10 })
    expect(answer.best).toBeNull()
    expect(answer.matches.map((m) => m.asset_id).sort()).toEqual(["crypto:tokamak-network", "crypto:toncoin"])
    for (const m of answer.matches) expect(m.warnings.map((w) => w.code)).toContain("symbol_collision")
  })
})

describe("two coins trading under one ticker on one venue", () => {
  // Binance 2025-12: 1000000BOBUSDT (a 2022 meme coin) and BOBUSDT (listed 2025-11) are two coins named BOB.
  const bob = [listing("binance", "1000000BOBUSDT", "1000000BOB"), listing("binance", "BOBUSDT", "BOB")]

  it("are two assets, each with its own symbol; resolve answers best: null", () => {
    const { directory, added } = mergeDirectory(seedDirectory(T0), [{ venue: "binance", listings: bob }], {
      coins: NO_COINS,
      nowMs: T0
    })
    expect(added).toEqual(["crypto:bob", "crypto:bob-2"])
    expect(holderOf(directory, "binance", "1000000BOBUSDT")).toEqual(["crypto:bob"])
    expect(holderOf(directory, "binance", "BOBUSDT")).toEqual(["crypto:bob-2"])
    const entries = directory.assets.map((a) => toDirectoryEntry(a, directoryTier(a, { historyReady: true })))
    expect(resolveQuery([entries], "BOB", { limit: 10 }).best).toBeNull()
    // A second one listed later is a new asset too; the first keeps its ID.
    const first = mergeDirectory(seedDirectory(T0), [{ venue: "binance", listings: [bob[0] as ObservedListing] }], {
      coins: NO_COINS,
      nowMs: T0
    })
    const later = mergeDirectory(first.directory, [{ venue: "binance", listings: bob }], {
      coins: NO_COINS,
      nowMs: T0 + 1
    })
    expect(later.added).toEqual(["crypto:bob-2"])
    expect(holderOf(later.directory, "binance", "1000000BOBUSDT")).toEqual(["crypto:bob"])
  })

  it("but one coin's USDT and USDC symbols, its spot pair, a new bundle replacing the old, and a rename stay one", () => {
    const { directory } = mergeDirectory(
      seedDirectory(T0),
      [
        {
          venue: "binance",
          listings: [
            listing("binance", "QZQUSDT", "QZQ"),
            listing("binance", "QZQUSDC", "QZQ", { quote: "USDC" }),
            listing("binance", "QZQUSDT", "QZQ", { market: "spot" }),
            listing("binance", "MKRUSDT", "MKR"),
            listing("binance", "SKYUSDT", "SKY")
          ]
        }
      ],
      { coins: NO_COINS, nowMs: T0 }
    )
    expect(asset(directory, "crypto:qzq")?.listings.map((l) => [l.symbol, l.market])).toEqual([
      ["QZQUSDC", "perp"],
      ["QZQUSDT", "perp"],
      ["QZQUSDT", "spot"]
    ])
    expect(asset(directory, "crypto:sky")?.listings.map((l) => [l.symbol, l.multiplier])).toEqual([
      ["MKRUSDT", 24_000],
      ["SKYUSDT", 1]
    ])
    // The venue re-denominates: 1000QZQUSDT replaces QZQUSDT in one refresh, the old one no longer shown.
    const next = mergeDirectory(
      directory,
      [{ venue: "binance", markets: ["perp"], listings: [listing("binance", "1000QZQUSDT", "1000QZQ")] }],
      { coins: NO_COINS, nowMs: T0 + 1 }
    )
    expect(next.added).toEqual([])
    expect(holderOf(next.directory, "binance", "1000QZQUSDT")).toEqual(["crypto:qzq"])
  })
})

describe("ID permanence", () => {
  // A small universe of venue symbols, with bundles, renames and a shared ticker, so sequences collide often.
  const pool: ReadonlyArray<ObservedListing> = [
    listing("binance", "BTCUSDT", "BTC"),
    listing("binance", "1000PEPEUSDT", "1000PEPE"),
    listing("binance", "POLUSDT", "POL"),
    listing("binance", "NEWAUSDT", "NEWA"),
    listing("binance", "TONUSDT", "TON"),
    listing("bybit", "10000SATSUSDT", "10000SATS"),
    listing("bybit", "NEWAUSDT", "NEWA"),
    listing("bybit", "SHIB1000USDT", "SHIB1000"),
    listing("hyperliquid", "TON", "TON"),
    listing("okx", "SATS-USDT-SWAP", "SATS"),
    listing("okx", "NEWB-USDT-SWAP", "NEWB"),
    listing("okx", "MOG-USDT-SWAP", "MOG"),
    listing("hyperliquid", "MATIC", "MATIC"),
    listing("hyperliquid", "kPEPE", "kPEPE"),
    listing("hyperliquid", "NEWB", "NEWB"),
    listing("hyperliquid", "WEN", "WEN"),
    listing("binance", "1000000WENUSDT", "1000000WEN"),
    listing("binance", "WENUSDT", "WEN")
  ]
  const venues = ["binance", "bybit", "okx", "hyperliquid"]
  const coins = coinIndex([
    { id: "wen-1", symbol: "wen", name: "Wen" },
    { id: "wen-2", symbol: "wen", name: "Wen Again" },
    { id: "newa-token", symbol: "newa", name: "New A" }
  ])

  const refresh = fc.array(
    fc.record({
      venue: fc.constantFrom(...venues),
      picks: fc.array(fc.record({ i: fc.nat(pool.length - 1), delisted: fc.boolean() }), { maxLength: 8 })
    }),
    { maxLength: 4 }
  )

  it("an ID, once assigned, keeps its symbols, identity and place; nothing is removed", () => {
    fc.assert(
      fc.property(fc.array(refresh, { minLength: 1, maxLength: 8 }), (steps) => {
        // Another coin under the ticker TON already holds Hyperliquid's TON: it must keep it, though the seed's
        // Toncoin would win a match by ticker.
        const seed = seedDirectory(T0)
        const other = {
          id: "crypto:ton-other",
          symbol: "TON",
          name: "Another TON",
          aliases: [],
          slugSource: "fallback" as const,
          listings: [{ ...listing("hyperliquid", "TON", "TON"), firstSeenMs: T0, lastTradingMs: T0 }],
          alive: true,
          firstSeenMs: T0
        }
        let directory: AssetDirectory = { ...seed, assets: [...seed.assets, other] }
        const owner = new Map<string, string>()
        const identity = new Map<string, string>()
        const record = (d: AssetDirectory) => {
          for (const a of d.assets) {
            const id = JSON.stringify([a.coingeckoId ?? null, a.slugSource, a.firstSeenMs])
            const seen = identity.get(a.id)
            if (seen !== undefined) expect(id, a.id).toBe(seen)
            identity.set(a.id, id)
            for (const l of a.listings) {
              const key = `${l.venue} ${l.symbol}`
              const held = owner.get(key)
              if (held !== undefined) expect(a.id, key).toBe(held)
              owner.set(key, a.id)
            }
          }
        }
        record(directory)
        steps.forEach((step, k) => {
          const snapshots: Array<VenueSnapshot> = step.map((s) => ({
            venue: s.venue,
            listings: s.picks
              .map((p) => {
                const l = pool[p.i] as ObservedListing
                return p.delisted ? { ...l, status: "delisted" as const } : l
              })
              .filter((l) => l.venue === s.venue)
          }))
          const before = directory
          const result = mergeDirectory(before, snapshots, { coins, nowMs: T0 + (k + 1) * 3_600_000 })
          directory = result.directory
          const ids = directory.assets.map((a) => a.id)
          expect(new Set(ids).size).toBe(ids.length)
          for (const a of before.assets) expect(ids, a.id).toContain(a.id)
          for (const a of directory.assets) {
            expect(a.alive, a.id).toBe(a.listings.some((l) => l.status === "trading"))
            // Every venue refreshed now shows exactly what its snapshot said.
            // The last snapshot of a venue in a refresh is what the venue shows.
            for (const s of snapshots.filter((x, j) => !snapshots.slice(j + 1).some((y) => y.venue === x.venue)))
              for (const l of a.listings.filter((x) => x.venue === s.venue)) {
                const shown = s.listings.filter((x) => x.symbol === l.symbol).at(-1)
                expect(l.status, `${a.id} ${l.symbol}`).toBe(shown === undefined ? "delisted" : shown.status)
              }
          }
          for (const id of result.added) expect(before.assets.map((a) => a.id)).not.toContain(id)
          record(directory)
        })
      }),
      { numRuns: 100 }
    )
  })

  it("an asset delisted everywhere stays, alive: false, and comes back under the same ID", () => {
    const listed = [listing("okx", "NEWB-USDT-SWAP", "NEWB")]
    const one = mergeDirectory(seedDirectory(T0), [{ venue: "okx", listings: listed }], { coins, nowMs: T0 })
    expect(one.added).toEqual(["crypto:newb"])
    const gone = mergeDirectory(one.directory, [{ venue: "okx", listings: [] }], { coins, nowMs: T0 + 1 })
    expect(gone.delisted).toContain("crypto:newb")
    expect(asset(gone.directory, "crypto:newb")?.alive).toBe(false)
    expect(directoryTier(asset(gone.directory, "crypto:newb") as never, { historyReady: true })).toBe("discovery_only")
    const back = mergeDirectory(
      gone.directory,
      [{ venue: "hyperliquid", listings: [listing("hyperliquid", "NEWB", "NEWB")] }],
      {
        coins,
        nowMs: T0 + 2
      }
    )
    expect(back.added).toEqual([])
    expect(back.relisted).toEqual(["crypto:newb"])
    expect(holderOf(back.directory, "hyperliquid", "NEWB")).toEqual(["crypto:newb"])
  })
})

describe("directoryTier", () => {
  const at = (...ls: ReadonlyArray<ObservedListing>) => ({
    listings: ls.map((l) => ({ ...l, firstSeenMs: T0, lastTradingMs: T0 }))
  })
  const a = listing("binance", "AUSDT", "A")
  const b = listing("okx", "A-USDT-SWAP", "A")

  it("core needs perpetuals trading on two venues and history for the baselines", () => {
    expect(directoryTier(at(a, b), { historyReady: true })).toBe("core")
    expect(directoryTier(at(a, b), { historyReady: false })).toBe("listed_token")
    expect(directoryTier(at(a, listing("binance", "AUSDC", "A", { quote: "USDC" })), { historyReady: true })).toBe(
      "listed_token"
    )
    expect(directoryTier(at(a, { ...b, status: "delisted" }), { historyReady: true })).toBe("listed_token")
    expect(directoryTier(at({ ...a, market: "spot" }), { historyReady: true })).toBe("listed_token")
    expect(directoryTier(at({ ...a, venue: "dex", market: "spot" }), { historyReady: true })).toBe("contract_token")
    expect(directoryTier(at(), { historyReady: true })).toBe("discovery_only")
  })

  it("a seed tier stands unless the rule makes the asset core; a seed core asset must qualify", () => {
    expect(directoryTier(at({ ...a, market: "spot" }), { historyReady: true, seedTier: "prices_only" })).toBe(
      "prices_only"
    )
    expect(directoryTier(at(a, b), { historyReady: true, seedTier: "contract_token" })).toBe("core")
    expect(directoryTier(at(a), { historyReady: true, seedTier: "core" })).toBe("listed_token")
    expect(directoryTier(at(), { historyReady: true, seedTier: "contract_token" })).toBe("discovery_only")
    // Known to discovery only (Pi Network) until a venue lists it: then its perpetual is served.
    expect(directoryTier(at(), { historyReady: true, seedTier: "discovery_only" })).toBe("discovery_only")
    expect(directoryTier(at(b), { historyReady: true, seedTier: "discovery_only" })).toBe("listed_token")
  })

  it("the seed directory keeps today's tiers of the hand-written registry", () => {
    const seed = seedDirectory(T0)
    expect(seed.assets.map((a) => a.id).sort()).toEqual(CryptoAssets.map((a) => a.id).sort())
    for (const a of CryptoAssets) {
      const s = asset(seed, a.id)
      if (s === undefined) throw new Error(a.id)
      expect(directoryTier(s, { historyReady: true, seedTier: a.tier }), a.id).toBe(a.tier)
    }
  })
})

describe("universeOfDirectory with the universe it replaces", () => {
  it("gives the same universe for an unchanged directory, and keeps the unchanged assets' objects on a change", () => {
    const snapshot = (symbols: ReadonlyArray<string>): VenueSnapshot => ({
      venue: "binance",
      markets: ["perp"],
      listings: symbols.map((s) => listing("binance", `${s}USDT`, s))
    })
    const first = mergeDirectory(seedDirectory(T0), [snapshot(["BTC", "ETH", "ZZTOP"])], {
      coins: NO_COINS,
      nowMs: T0
    }).directory
    const u1 = universeOfDirectory(first)
    // A later refresh that changes nothing (a new updatedMs, new objects of the same content).
    const again = mergeDirectory(first, [snapshot(["BTC", "ETH", "ZZTOP"])], { coins: NO_COINS, nowMs: T0 + 1_800_000 })
    const same = universeOfDirectory(structuredClone(again.directory), { previous: u1 })
    expect(same).toBe(u1)
    // A new listing: a new universe (its version changes), every other asset the object it was.
    const grown = mergeDirectory(first, [snapshot(["BTC", "ETH", "ZZTOP", "NEWCOIN"])], {
      coins: NO_COINS,
      nowMs: T0 + 3_600_000
    }).directory
    const u2 = universeOfDirectory(grown, { previous: u1 })
    expect(u2).not.toBe(u1)
    expect(u2.version).not.toBe(u1.version)
    expect(u2.assets.length).toBe(u1.assets.length + 1)
    for (const a of u1.assets) {
      expect(u2.byId.get(a.id), a.id).toBe(a)
      expect(u2.entries.get(a.id), a.id).toBe(u1.entries.get(a.id))
    }
    const added = u2.assets.find((a) => !u1.byId.has(a.id))
    expect(added?.symbol).toBe("NEWCOIN")
    // Built without `previous`, the same directory gives equal content in new objects.
    const fresh = universeOfDirectory(grown)
    expect(fresh.assets).toEqual(u2.assets)
    expect(fresh.byId.get("crypto:bitcoin")).not.toBe(u2.byId.get("crypto:bitcoin"))
  })
})
