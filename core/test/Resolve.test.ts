/**
 * `resolve` over planes that have only a directory: ranking, case-insensitivity, contested queries,
 * networks, per-plane limits; and the wiring: `resolve`/`coverage` answer 501 until planes are given, then
 * answer for a key at zero credits, and `schema`/`docs changelog` say so.
 */
import { assert, describe, it } from "@effect/vitest"
import { memoryStores } from "@market-data/memory"
import { Effect, Layer, Schema } from "effect"
import * as Digest from "effect/crypto/Digest"
import * as SecureRandom from "effect/crypto/SecureRandom"
import fc from "fast-check"
import { createKey } from "../src/Admin.ts"
import { CryptoAssets, directoryEntryOf } from "../src/crypto/Assets.ts"
import { layerHandlers } from "../src/Discovery.ts"
import { type Answer, type ApiRequest, handle, Settings } from "../src/Pipeline.ts"
import type { DirectoryEntry, PlaneOperations, Tier } from "../src/Planes.ts"
import {
  editDistance,
  maxSuggestionDistance,
  normalizeQuery,
  type ResolveAnswer,
  ResolveScores,
  resolveQuery
} from "../src/Resolve.ts"
import * as R from "../src/Results.ts"

const entry = (
  asset_id: string,
  symbol: string,
  name: string,
  tier: Tier,
  more: {
    readonly networks?: ReadonlyArray<string>
    readonly aliases?: ReadonlyArray<string>
    readonly alive?: boolean
  } = {}
): DirectoryEntry => ({
  asset_id,
  plane: asset_id.startsWith("eq:") ? "equity" : "crypto",
  symbol,
  name,
  tier,
  networks: more.networks ?? [],
  aliases: more.aliases ?? [],
  alive: more.alive ?? true
})

/** One plane per plane present in `entries`, with a directory and lookups and no data operations. */
const directoryPlanes = (entries: ReadonlyArray<DirectoryEntry>): ReadonlyArray<PlaneOperations> =>
  (["crypto", "equity"] as const)
    .filter((plane) => entries.some((e) => e.plane === plane))
    .map((plane) => {
      const mine = entries.filter((e) => e.plane === plane)
      return {
        plane,
        perAsset: new Map(),
        calls: new Map(),
        directory: Effect.sync(() => mine),
        lookup: (id: string) => Effect.sync(() => mine.find((e) => e.asset_id === id))
      }
    })

const UNIVERSE: ReadonlyArray<DirectoryEntry> = [
  entry("crypto:bitcoin", "BTC", "Bitcoin", "core", { networks: ["bitcoin"] }),
  entry("crypto:bitcoin-cash", "BCH", "Bitcoin Cash", "listed_token", { networks: ["bitcoin-cash"] }),
  entry("crypto:wrapped-bitcoin", "WBTC", "Wrapped Bitcoin", "contract_token", { networks: ["ethereum"] }),
  entry("crypto:ethereum", "ETH", "Ethereum", "core", { networks: ["ethereum"] }),
  entry("crypto:polygon-ecosystem-token", "POL", "POL Token", "core", {
    networks: ["ethereum", "polygon"],
    aliases: ["MATIC", "Polygon"]
  }),
  entry("crypto:usd-coin", "USDC", "USD Coin", "listed_token", { networks: ["ethereum", "solana", "base"] }),
  entry("crypto:usd-coin-wormhole", "USDC", "USD Coin (Wormhole)", "contract_token", { networks: ["solana"] }),
  entry("crypto:terra-luna", "LUNA", "Terra", "prices_only", { alive: false }),
  entry("crypto:terra-luna-2", "LUNA", "Terra 2.0", "listed_token"),
  entry("crypto:coin-one", "COIN", "Coin One", "discovery_only"),
  entry("crypto:zeta-a", "ZETX", "Zeta X", "listed_token", { alive: false }),
  entry("crypto:zeta-b", "ZETY", "Zeta Y", "listed_token"),
  entry("eq:1679788:COIN", "COIN", "Coinbase Global, Inc.", "full"),
  entry("eq:320193:AAPL", "AAPL", "Apple Inc.", "full", { aliases: ["Apple Computer"] }),
  entry("eq:1652044:GOOGL", "GOOGL", "Alphabet Inc.", "full", { aliases: ["Google"] }),
  entry("eq:1652044:GOOG", "GOOG", "Alphabet Inc.", "equity", { aliases: ["Google"] })
]

const resolve = (q: string, options: { limit?: number; network?: string } = {}): ResolveAnswer =>
  resolveQuery([UNIVERSE.filter((e) => e.plane === "crypto"), UNIVERSE.filter((e) => e.plane === "equity")], q, {
    limit: options.limit ?? 10,
    network: options.network
  })
const ids = (a: ResolveAnswer) => a.matches.map((m) => m.asset_id)
const isResolveBody = Schema.is(R.single(R.ResolveResult))

describe("resolve: ranking", () => {
  it("ranks exact symbol > exact name > prefix > substring > alias, as documented", () => {
    const s = ResolveScores
    assert.isTrue(s.exact_symbol > s.exact_name)
    assert.isTrue(s.exact_name > s.symbol_prefix && s.symbol_prefix > s.name_prefix)
    assert.isTrue(s.name_prefix > s.symbol_substring && s.symbol_substring > s.name_substring)
    assert.isTrue(s.name_substring > s.exact_alias && s.exact_alias > s.alias_prefix)
    assert.isTrue(s.alias_prefix > s.alias_substring && s.alias_substring > 0)

    const btc = resolve("btc")
    assert.strictEqual(btc.best?.asset_id, "crypto:bitcoin")
    assert.deepStrictEqual(
      btc.matches.map((m) => [m.asset_id, m.score]),
      [
        ["crypto:bitcoin", s.exact_symbol],
        ["crypto:wrapped-bitcoin", s.symbol_substring]
      ]
    )
    const bitcoin = resolve("bitcoin")
    assert.deepStrictEqual(
      bitcoin.matches.map((m) => [m.asset_id, m.score]),
      [
        ["crypto:bitcoin", s.exact_name],
        ["crypto:bitcoin-cash", s.name_prefix],
        ["crypto:wrapped-bitcoin", s.name_substring]
      ]
    )
    assert.strictEqual(bitcoin.best?.asset_id, "crypto:bitcoin")
    // An alias ranks below any direct match, and alone still resolves.
    const matic = resolve("matic")
    assert.strictEqual(matic.best?.asset_id, "crypto:polygon-ecosystem-token")
    assert.strictEqual(matic.best?.score, s.exact_alias)
    const poly = resolve("poly")
    assert.deepStrictEqual(
      poly.matches.map((m) => [m.asset_id, m.score]),
      [["crypto:polygon-ecosystem-token", s.alias_prefix]]
    )
  })

  it("is case-, width- and whitespace-insensitive and echoes the query as given", () => {
    for (const q of ["AAPL", "aapl", "Aapl", "ＡＡＰＬ", "  aapl ", "apple  INC."]) {
      const a = resolve(q)
      assert.strictEqual(a.best?.asset_id, "eq:320193:AAPL", q)
      assert.strictEqual(a.query, q)
    }
  })

  it("normalizes every text alike: NFKC, lower case, folded whitespace (its fast path included, property)", () => {
    const reference = (s: string) => s.normalize("NFKC").toLowerCase().replace(/\s+/g, " ").trim()
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: fc.constantFrom(..."aZ09 -.()\t"), maxLength: 12 }),
          fc.string({ unit: "grapheme", maxLength: 12 }),
          fc.string({ maxLength: 12 })
        ),
        (s) => normalizeQuery(s) === reference(s) && normalizeQuery(normalizeQuery(s)) === normalizeQuery(s)
      ),
      { numRuns: 2000, seed: 5 }
    )
  })

  it("resolves a canonical ID to itself, case-insensitively", () => {
    assert.strictEqual(resolve("crypto:ethereum").best?.asset_id, "crypto:ethereum")
    assert.strictEqual(resolve("EQ:320193:aapl").best?.asset_id, "eq:320193:AAPL")
    assert.strictEqual(resolve("crypto:ethereum").best?.score, ResolveScores.exact_symbol)
  })

  it("resolves a company by its SEC CIK, with or without leading zeros or a CIK prefix", () => {
    for (const q of ["320193", "0000320193", "CIK0000320193", "cik 320193"]) {
      const a = resolve(q)
      assert.strictEqual(a.best?.asset_id, "eq:320193:AAPL", q)
      assert.strictEqual(a.best?.score, ResolveScores.exact_symbol, q)
    }
    // Another number is not Apple's CIK, and a CIK never matches a crypto asset.
    assert.notInclude(ids(resolve("3201930")), "eq:320193:AAPL")
    assert.strictEqual(resolve("320193").coverage.crypto.matches, 0)
  })

  it("prefers the live asset and the richer tier within one score, and orders totally", () => {
    // Both GOOG* have the symbol prefix "goo": the full tier ranks before the filings-only one.
    const goo = resolve("goo")
    assert.deepStrictEqual(ids(goo), ["eq:1652044:GOOGL", "eq:1652044:GOOG"])
    assert.strictEqual(goo.matches[0]?.score, goo.matches[1]?.score)
    // An exact symbol still beats a richer tier.
    assert.deepStrictEqual(ids(resolve("goog")), ["eq:1652044:GOOG", "eq:1652044:GOOGL"])
    // A unique exact name is best even when its asset is dead.
    const terra = resolve("terra")
    assert.deepStrictEqual(ids(terra), ["crypto:terra-luna", "crypto:terra-luna-2"])
    assert.strictEqual(terra.best?.asset_id, "crypto:terra-luna")
    // Dead assets rank after live ones at the same score and tier.
    assert.deepStrictEqual(ids(resolve("zet")), ["crypto:zeta-b", "crypto:zeta-a"])
    assert.deepStrictEqual(ids(resolve("lun")), ["crypto:terra-luna-2", "crypto:terra-luna"])
    assert.deepStrictEqual(ids(resolve("zeta")), ["crypto:zeta-b", "crypto:zeta-a"])
  })

  it("finds nothing for an unknown query, and needs two characters for substring matches", () => {
    const none = resolve("zzzz-nothing")
    assert.isNull(none.best)
    assert.deepStrictEqual(none.matches, [])
    assert.deepStrictEqual(none.coverage, { crypto: { matches: 0 }, equity: { matches: 0 } })
    // "w" is a prefix of WBTC and "Wrapped Bitcoin" only; it is in many names but substrings need 2 characters.
    assert.deepStrictEqual(ids(resolve("w")), ["crypto:wrapped-bitcoin"])
    assert.isTrue(ids(resolve("oi")).includes("crypto:bitcoin"))
  })
})

describe("resolve: suggestions when nothing matches", () => {
  const near = (a: ResolveAnswer) => (a.suggestions ?? []).map((x) => [x.asset_id, x.matched, x.distance])

  it("suggests the nearest symbols and names, nearest first, only when nothing matches", () => {
    // A deleted letter in a name, a transposition inside a word of a name, a wrong letter in a symbol.
    assert.deepStrictEqual(near(resolve("Etherum")), [["crypto:ethereum", "name", 1]])
    assert.deepStrictEqual(near(resolve("appel"))[0], ["eq:320193:AAPL", "name", 1])
    const btx = resolve("BTX")
    assert.deepStrictEqual(btx.matches, [])
    assert.deepStrictEqual(btx.suggestions?.[0], {
      asset_id: "crypto:bitcoin",
      plane: "crypto",
      symbol: "BTC",
      name: "Bitcoin",
      tier: "core",
      matched: "symbol",
      distance: 1
    })
    // An alias counts ("Gogle" is one edit from Google); both share it: the richer tier first.
    assert.deepStrictEqual(near(resolve("gogle")).slice(0, 2), [
      ["eq:1652044:GOOGL", "alias", 1],
      ["eq:1652044:GOOG", "alias", 1]
    ])
    // Nothing near: an empty list. Something matching: no suggestions at all.
    assert.deepStrictEqual(resolve("zzzz-nothing").suggestions, [])
    assert.isUndefined(resolve("bitcoin").suggestions)
    // The network filter applies to suggestions too.
    assert.deepStrictEqual(near(resolve("Etherum", { network: "solana" })), [])
    assert.isTrue(isResolveBody({ data: resolve("BTX") }))
  })

  it("edit distance: insertions, deletions, substitutions and adjacent transpositions, bounded", () => {
    assert.strictEqual(editDistance("kitten", "sitting", 5), 3)
    assert.strictEqual(editDistance("ab", "ba", 3), 1)
    assert.strictEqual(editDistance("", "abc", 5), 3)
    assert.strictEqual(editDistance("abcdef", "a", 2), 3)
    assert.strictEqual(maxSuggestionDistance(3), 1)
    assert.strictEqual(maxSuggestionDistance(9), 3)
    assert.strictEqual(maxSuggestionDistance(80), 4)
  })
})

describe("resolve: contested queries", () => {
  it("a symbol that is both a token and a covered equity: best null, symbol_collision naming the other", () => {
    const a = resolve("COIN")
    assert.isNull(a.best)
    const top = a.matches.filter((m) => m.score === ResolveScores.exact_symbol)
    assert.deepStrictEqual(top.map((m) => m.asset_id).sort(), ["crypto:coin-one", "eq:1679788:COIN"])
    for (const m of top) {
      assert.deepStrictEqual(
        m.warnings.map((w) => [w.code, w.asset_id]),
        [["symbol_collision", m.plane === "crypto" ? "eq:1679788:COIN" : "crypto:coin-one"]]
      )
      assert.include(m.warnings[0]?.message ?? "", m.plane === "crypto" ? "eq:1679788:COIN" : "crypto:coin-one")
    }
    // Lower matches carry no warnings.
    for (const m of a.matches.filter((m) => m.score < ResolveScores.exact_symbol))
      assert.deepStrictEqual(m.warnings, [])
    assert.isTrue(isResolveBody({ data: a }))
  })

  it("two crypto assets sharing a symbol (one of them dead): best null, both warned", () => {
    const a = resolve("luna")
    assert.isNull(a.best)
    assert.deepStrictEqual(ids(a), ["crypto:terra-luna-2", "crypto:terra-luna"])
    assert.deepStrictEqual(
      a.matches.map((m) => m.warnings.map((w) => [w.code, w.asset_id])),
      [[["symbol_collision", "crypto:terra-luna"]], [["symbol_collision", "crypto:terra-luna-2"]]]
    )
  })

  it("two equities sharing a name: name_collision", () => {
    const a = resolve("alphabet inc.")
    assert.isNull(a.best)
    assert.deepStrictEqual(
      a.matches.map((m) => m.warnings.map((w) => w.code)),
      [["name_collision"], ["name_collision"]]
    )
  })

  it("tied partial matches: best null with ambiguous_query; a unique top match is best despite lower ones", () => {
    const a = resolve("googl")
    assert.strictEqual(a.best?.asset_id, "eq:1652044:GOOGL")
    const google = resolve("google")
    assert.isNull(google.best)
    assert.deepStrictEqual(
      google.matches.map((m) => m.warnings.map((w) => w.code)),
      [["ambiguous_query"], ["ambiguous_query"]]
    )
  })
})

describe("resolve: network and limit", () => {
  it("network keeps only crypto matches on that network, case-insensitively, and can settle a contest", () => {
    const all = resolve("usdc")
    assert.isNull(all.best)
    const eth = resolve("usdc", { network: "Ethereum" })
    assert.strictEqual(eth.best?.asset_id, "crypto:usd-coin")
    assert.strictEqual(eth.best?.network, "ethereum")
    assert.deepStrictEqual(eth.best?.warnings, [])
    const sol = resolve("usdc", { network: "solana" })
    assert.isNull(sol.best)
    assert.deepStrictEqual(ids(sol), ["crypto:usd-coin", "crypto:usd-coin-wormhole"])
    for (const m of sol.matches) assert.strictEqual(m.network, "solana")
    // Equities live on no network: a network drops them all.
    const coin = resolve("coin", { network: "ethereum" })
    assert.isTrue(coin.matches.every((m) => m.plane === "crypto"))
    assert.strictEqual(coin.coverage.equity.matches, 0)
    assert.deepStrictEqual(resolve("aapl", { network: "ethereum" }).matches, [])
    assert.deepStrictEqual(resolve("btc", { network: "nowhere" }).matches, [])
  })

  it("reports a single network without a filter and none when the asset is on several", () => {
    assert.strictEqual(resolve("btc").best?.network, "bitcoin")
    assert.isUndefined(resolve("pol").best?.network)
    assert.isUndefined(resolve("aapl").best?.network)
  })

  it("limit caps the matches per plane; coverage counts every match", () => {
    const a = resolve("coin", { limit: 1 })
    assert.deepStrictEqual(a.matches.map((m) => m.plane).sort(), ["crypto", "equity"])
    const full = resolve("coin", { limit: 25 })
    assert.strictEqual(a.coverage.crypto.matches, full.matches.filter((m) => m.plane === "crypto").length)
    assert.isTrue(a.coverage.crypto.matches > 1)
    assert.strictEqual(a.coverage.equity.matches, 1)
    // The limited list is the head of each plane's full ranking, and still contested.
    assert.deepStrictEqual(
      a.matches.map((m) => m.asset_id).sort(),
      [
        full.matches.find((m) => m.plane === "crypto")?.asset_id,
        full.matches.find((m) => m.plane === "equity")?.asset_id
      ].sort()
    )
    assert.isNull(a.best)
    // A collision with an asset cut by the limit is still a collision.
    const luna = resolve("luna", { limit: 1 })
    assert.strictEqual(luna.matches.length, 1)
    assert.isNull(luna.best)
    assert.strictEqual(luna.matches[0]?.warnings[0]?.asset_id, "crypto:terra-luna")
  })
})

describe("resolve: over the crypto plane's real asset registry", () => {
  const directory = CryptoAssets.map((a) => directoryEntryOf(a, true))
  const over = (q: string, network?: string) => resolveQuery([directory], q, { limit: 25, network })

  it("every canonical ID resolves to itself", () => {
    for (const a of CryptoAssets) assert.strictEqual(over(a.id).best?.asset_id, a.id, a.id)
  })

  it("every symbol resolves to its asset, or is contested by exactly the assets sharing it", () => {
    for (const a of CryptoAssets) {
      const sharing = CryptoAssets.filter((b) => b.symbol.toLowerCase() === a.symbol.toLowerCase()).map((b) => b.id)
      const answer = over(a.symbol)
      if (sharing.length === 1) {
        assert.strictEqual(answer.best?.asset_id, a.id, a.symbol)
        continue
      }
      assert.isNull(answer.best, a.symbol)
      const mine = answer.matches.find((m) => m.asset_id === a.id)
      assert.deepStrictEqual(
        mine?.warnings.map((w) => [w.code, w.asset_id]),
        sharing.filter((id) => id !== a.id).map((id) => ["symbol_collision", id]),
        a.symbol
      )
    }
  })

  it("every asset is found by its name and, on each of its networks, by its symbol", () => {
    for (const a of CryptoAssets) {
      assert.include(ids(over(a.name)), a.id, a.name)
      for (const n of a.networks) assert.include(ids(over(a.symbol, n.toUpperCase())), a.id, `${a.symbol} on ${n}`)
    }
  })
})

// ---------------------------------------------------------------------------------------------------------------
// Wiring through the pipeline
// ---------------------------------------------------------------------------------------------------------------

const service = (planes: ReadonlyArray<PlaneOperations>) =>
  Effect.gen(function* () {
    const base = Layer.mergeAll(
      memoryStores(),
      Layer.succeed(Settings)({ rateLimitPerMinute: 1000 }),
      Digest.layerWebCrypto,
      SecureRandom.layerWebCrypto
    )
    const ctx = yield* Layer.build(layerHandlers([], planes).pipe(Layer.provideMerge(base)))
    const key = yield* createKey({ credits: 7 }).pipe(Effect.provide(ctx))
    const call = (operation: string, params: ReadonlyArray<readonly [string, string]>, keyed = true) =>
      handle({
        operation,
        params,
        authorization: keyed ? [`Bearer ${key.key}`] : [],
        client: "test"
      } satisfies ApiRequest).pipe(Effect.provide(ctx))
    return { call }
  })

const code = (a: Answer) => (a.outcome._tag === "Failure" ? a.outcome.error.code : undefined)
const json = (a: Answer): any => (a.outcome._tag === "Json" ? JSON.parse(a.outcome.body) : undefined)

describe("resolve and coverage: wiring", () => {
  it.effect("answer 501 not_implemented until planes are given, and the changelog lists them", () =>
    Effect.gen(function* () {
      const s = yield* service([])
      assert.strictEqual(code(yield* s.call("resolve", [["q", "btc"]])), "not_implemented")
      assert.strictEqual(code(yield* s.call("coverage", [])), "not_implemented")
      const changelog = yield* s.call("docs", [["section", "changelog"]])
      const md = changelog.outcome._tag === "Markdown" ? changelog.outcome.markdown : ""
      const temporary = md.split("\n").find((l) => l.startsWith("Temporary:")) ?? ""
      assert.include(temporary, "`resolve`")
      assert.include(temporary, "`coverage`")
    }).pipe(Effect.scoped)
  )

  it.effect("with planes: answer for a key at zero credits; schema and the changelog say they are available", () =>
    Effect.gen(function* () {
      const s = yield* service(directoryPlanes(UNIVERSE))
      assert.strictEqual(code(yield* s.call("resolve", [["q", "btc"]], false)), "unauthenticated")
      assert.strictEqual(code(yield* s.call("coverage", [], false)), "unauthenticated")
      const r = yield* s.call("resolve", [
        ["q", "BTC"],
        ["limit", "3"]
      ])
      assert.strictEqual(r.outcome._tag === "Json" && r.outcome.creditsCharged, 0)
      const body = json(r)
      assert.isTrue(isResolveBody(body))
      assert.strictEqual(body.data.best.asset_id, "crypto:bitcoin")
      const c = yield* s.call("coverage", [["id", "crypto:bitcoin"]])
      assert.strictEqual(json(c).data.tier, "core")
      const usage = json(yield* s.call("usage", []))
      assert.strictEqual(usage.data.credits_remaining, 7)
      const schema = json(yield* s.call("schema", [["resource", "resolve"]]))
      assert.strictEqual(schema.data.status, "available")
      const served = yield* s.call("docs", [["section", "changelog"]])
      const text = served.outcome._tag === "Markdown" ? served.outcome.markdown : ""
      // The changelog's temporary line no longer lists resolve and coverage (data operations it still does).
      const temporary = text.split("\n").find((l) => l.startsWith("Temporary:")) ?? ""
      assert.notInclude(temporary, "`resolve`")
      assert.notInclude(temporary, "`coverage`")
      assert.include(temporary, "`funding`")
      // A plane with a directory only implements no data operation.
      assert.strictEqual(code(yield* s.call("price", [["id", "crypto:bitcoin"]])), "not_implemented")
    }).pipe(Effect.scoped)
  )

  it.effect("decodes resolve's parameters before searching", () =>
    Effect.gen(function* () {
      const s = yield* service(directoryPlanes(UNIVERSE))
      const missing = yield* s.call("resolve", [])
      assert.strictEqual(code(missing), "missing_parameter")
      const long = yield* s.call("resolve", [["q", "x".repeat(81)]])
      assert.strictEqual(code(long), "invalid_parameter")
      const limit = yield* s.call("resolve", [
        ["q", "coin"],
        ["limit", "26"]
      ])
      assert.strictEqual(code(limit), "invalid_parameter")
    }).pipe(Effect.scoped)
  )
})
