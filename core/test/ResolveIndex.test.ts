/**
 * `resolve`'s directory index: the same answers as a scan of every entry (random queries over a directory of
 * 1,000 crypto and 10,000 equity entries with collisions, aliases, CIKs and non-ASCII names), and a query reads
 * only its candidates once a directory is indexed.
 */
import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { CryptoAssets, directoryEntryOf } from "../src/crypto/Assets.ts"
import type { DirectoryEntry, Tier } from "../src/Planes.ts"
import { makeResolveMemo, resolveQuery } from "../src/Resolve.ts"

/** A deterministic generator (mulberry32), so the directory is the same on every run. */
const rng = (seed: number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
const WORDS = [
  "Alpha",
  "Beta",
  "Holdings",
  "Corp",
  "Network",
  "Protocol",
  "Inc",
  "Café",
  "Ｔｏｋｅｎ",
  "Zürich",
  "Labs"
]

const build = (): { crypto: ReadonlyArray<DirectoryEntry>; equity: ReadonlyArray<DirectoryEntry> } => {
  const r = rng(16)
  const pick = <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(r() * xs.length)] as A
  const ticker = (min: number, max: number) =>
    Array.from({ length: min + Math.floor(r() * (max - min + 1)) }, () => pick([...LETTERS])).join("")
  const crypto: Array<DirectoryEntry> = CryptoAssets.map((a) => directoryEntryOf(a, true))
  const tiers: ReadonlyArray<Tier> = ["core", "listed_token", "contract_token", "discovery_only"]
  while (crypto.length < 1_000) {
    // Short tickers collide often (several assets per ticker), as the real directory's do.
    const symbol = ticker(2, 4)
    crypto.push({
      asset_id: `crypto:${symbol.toLowerCase()}-${crypto.length}`,
      plane: "crypto",
      symbol,
      name: `${pick(WORDS)} ${symbol} ${pick(WORDS)}`,
      tier: pick(tiers),
      networks: r() < 0.3 ? [pick(["ethereum", "solana", "base"])] : [],
      aliases: r() < 0.2 ? [`1000${symbol}USDT`, `k${symbol}`] : [],
      alive: r() < 0.9
    })
  }
  const equity: Array<DirectoryEntry> = []
  while (equity.length < 10_000) {
    const cik = String(1_000 + Math.floor(r() * 2_000_000))
    const symbol = ticker(1, 5)
    equity.push({
      asset_id: `eq:${cik}:${symbol}`,
      plane: "equity",
      symbol,
      name: `${pick(WORDS)} ${ticker(3, 8).toLowerCase()} ${pick(WORDS)}`,
      tier: r() < 0.5 ? "full" : "equity",
      networks: [],
      aliases: r() < 0.1 ? [ticker(2, 4)] : [],
      alive: r() < 0.8
    })
  }
  return { crypto, equity }
}

const { crypto, equity } = build()
const DIRECTORIES = [crypto, equity]

/** Queries drawn from the directory's own texts (whole, prefixes, inner pieces, CIKs, mangled case), and noise. */
const queries = (): fc.Arbitrary<string> => {
  const all = [...crypto, ...equity]
  const entryArb = fc.integer({ min: 0, max: all.length - 1 }).map((i) => all[i] as DirectoryEntry)
  const textOf = fc
    .tuple(entryArb, fc.integer({ min: 0, max: 4 }))
    .map(
      ([e, k]) =>
        [e.symbol, e.name, e.asset_id, e.aliases[0] ?? e.symbol, /^eq:(\d+):/.exec(e.asset_id)?.[1] ?? e.name][
          k
        ] as string
    )
  const piece = fc.tuple(textOf, fc.nat(), fc.nat()).map(([t, a, b]) => {
    const cps = [...t]
    const from = a % Math.max(1, cps.length)
    return cps.slice(from, from + 1 + (b % Math.max(1, cps.length - from))).join("")
  })
  return fc.oneof(
    textOf,
    piece,
    piece.map((p) => p.toUpperCase()),
    textOf.map((t) => `  ${t.toLowerCase()} `),
    textOf.map((t) => (/^\d+$/.test(t) ? `cik${t.padStart(10, "0")}` : t)),
    fc.string({ minLength: 0, maxLength: 4 }),
    fc.constantFrom("b", "e", "1", "é", "ｔ", "0000001234", "bitcoin", "x")
  )
}

describe("resolve index", () => {
  it("answers exactly as a scan of every entry, on random queries (1,000 crypto, 10,000 equity entries)", () => {
    // Indexed from the second query on: warm it up so every compared query goes through the index.
    const memo = makeResolveMemo()
    resolveQuery(DIRECTORIES, "btc", { limit: 10, memo })
    resolveQuery(DIRECTORIES, "btc", { limit: 10, memo })
    fc.assert(
      fc.property(
        queries(),
        fc.integer({ min: 1, max: 50 }),
        fc.option(fc.constantFrom("ethereum", "solana", "base", "ETHEREUM"), { nil: undefined }),
        (q, limit, network) => {
          const indexed = resolveQuery(DIRECTORIES, q, { limit, network, memo })
          const scanned = resolveQuery(DIRECTORIES, q, { limit, network, scan: true, memo })
          assert.deepStrictEqual(indexed, scanned)
        }
      ),
      { numRuns: 300, seed: 16 }
    )
  })

  it("reads only a query's candidates once a directory is indexed, not every entry", () => {
    let reads = 0
    const counted = new Proxy([...equity], {
      get(target, key, receiver) {
        if (typeof key === "string" && /^\d+$/.test(key)) reads++
        return Reflect.get(target, key, receiver)
      }
    }) as ReadonlyArray<DirectoryEntry>
    const target = equity[1234] as DirectoryEntry
    const q = target.asset_id
    const memo = makeResolveMemo()
    const first = resolveQuery([counted], q, { limit: 5, memo })
    resolveQuery([counted], q, { limit: 5, memo })
    reads = 0
    const third = resolveQuery([counted], q, { limit: 5, memo })
    assert.deepStrictEqual(third, first)
    assert.strictEqual(third.best?.asset_id, target.asset_id)
    assert.isBelow(reads, 20, `read ${reads} of ${equity.length} entries`)
  })

  it("keeps each memo's index to itself: a second owner's first query scans every entry", () => {
    let reads = 0
    const counted = new Proxy([...equity], {
      get(target, key, receiver) {
        if (typeof key === "string" && /^\d+$/.test(key)) reads++
        return Reflect.get(target, key, receiver)
      }
    }) as ReadonlyArray<DirectoryEntry>
    const q = (equity[77] as DirectoryEntry).asset_id
    const a = makeResolveMemo()
    resolveQuery([counted], q, { limit: 5, memo: a })
    resolveQuery([counted], q, { limit: 5, memo: a })
    reads = 0
    resolveQuery([counted], q, { limit: 5, memo: a })
    assert.isBelow(reads, 20, "the memo that indexed the directory reads its candidates")
    reads = 0
    resolveQuery([counted], q, { limit: 5, memo: makeResolveMemo() })
    assert.isAtLeast(reads, equity.length, "a fresh memo has no index of it")
  })
})
