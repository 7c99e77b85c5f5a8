/**
 * The listing job against local replay servers of the four venues, each listing at least 300 instruments (built
 * here from the venues' recorded shapes: the bundled well-known tickers, then made-up ones), and the crypto plane
 * serving the directory it keeps (live mode's universe): `coverage` lists every instrument's asset, `resolve`
 * finds multiplier symbols under their asset and answers a shared ticker with `best: null`, a listing added
 * between two refreshes appears without a restart, a removed one becomes `alive: false`, a failed refresh keeps
 * the last directory, unreadable symbols are named in the venue's `listings` source detail, and `rank` scans the
 * directory's whole core tier.
 */
import { assert, describe, it } from "@effect/vitest"
import {
  type AssetDirectory,
  AssetDirectoryStore,
  MarketStore,
  makeCryptoPlaneOver,
  makeUniverseRef,
  type PlaneOperations,
  universeOfDirectory,
  WellKnownAssets
} from "@market-data/core"
import { Effect, Option, Queue } from "effect"
import { TestClock } from "effect/testing"
import type { ReportsSources } from "../../../../core/src/Coverage.ts"
import { coverageHandler } from "../../../../core/src/Coverage.ts"
import { decodeParams, isApiError } from "../../../../core/src/Params.ts"
import type { Handler, HandlerOutput } from "../../../../core/src/Pipeline.ts"
import { planeHandlers } from "../../../../core/src/Planes.ts"
import { operation } from "../../../../core/src/Registry.ts"
import { resolveHandler } from "../../../../core/src/Resolve.ts"
import { makeMemoryDirectoryStore } from "../../../memory/src/MemoryDirectoryStore.ts"
import { makeMemoryMarketStore } from "../../../memory/src/MemoryMarketStore.ts"
import { makeCryptoFeed } from "../../src/live/CryptoFeed.ts"
import { makeDirectoryJob, skippedDetail } from "../../src/live/DirectoryJob.ts"
import { COIN_LIST_DEFAULT_URL, liveConfig } from "../../src/live/LiveConfig.ts"
import { makeConnector } from "../../src/live/LiveFeeds.ts"
import { makeBinance } from "../../src/live/venues/binance/Rest.ts"
import { type FakeRequest, fakeServer, notFound, type Reply } from "./FakeServer.ts"
import * as F from "./fixtures/Binance.ts"

const BAR_MS = 15 * 60_000
const SPECIAL = new Set(["SHIB", "PEPE", "MOG", "SATS", "USDT", "USDC", "TON"])

/** 200 real tickers (the bundled well-known coins), then made-up ones (`QZAA`, `QZAB`, ...) up to 330. */
const BASES: ReadonlyArray<string> = (() => {
  const real = [...new Set(WellKnownAssets.map(([, s]) => s.toUpperCase()))].filter(
    (s) => /^[A-Z][A-Z0-9]*[A-Z]$/.test(s) && !SPECIAL.has(s)
  )
  const made: Array<string> = []
  for (let i = 0; made.length < 130; i++)
    made.push(`QZ${String.fromCharCode(65 + Math.floor(i / 26))}${String.fromCharCode(65 + (i % 26))}`)
  return [...real.slice(0, 200), ...made]
})()

/** What the replay servers list now; tests change it between refreshes. */
interface Lists {
  bases: Array<string>
  /** Listing endpoints answer 503. */
  down: ReadonlySet<string>
}

const binance = (bases: ReadonlyArray<string>) => ({
  timezone: "UTC",
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
    ...[
      ["1000SHIBUSDT", "1000SHIB"],
      ["1000PEPEUSDT", "1000PEPE"],
      ["1000000MOGUSDT", "1000000MOG"],
      ["1000SATSUSDT", "1000SATS"],
      ["TONUSDT", "TON"],
      ["币安人生USDT", "币安人生"]
    ].map(([symbol, baseAsset]) => ({
      symbol,
      contractType: "PERPETUAL",
      status: "TRADING",
      baseAsset,
      quoteAsset: "USDT",
      marginAsset: "USDT",
      underlyingType: "COIN"
    })),
    { symbol: "BTCDOMUSDT", contractType: "PERPETUAL", status: "TRADING", underlyingType: "INDEX" },
    { symbol: "BTCUSDT_261226", contractType: "CURRENT_QUARTER", status: "TRADING", baseAsset: "BTC" }
  ]
})
const bybit = (bases: ReadonlyArray<string>) => ({
  retCode: 0,
  retMsg: "OK",
  result: {
    category: "linear",
    nextPageCursor: "",
    list: [
      ...[...bases.map((b) => [`${b}USDT`, b]), ["SHIB1000USDT", "SHIB1000"], ["1000PEPEUSDT", "1000PEPE"]].map(
        ([symbol, baseCoin]) => ({
          symbol,
          contractType: "LinearPerpetual",
          status: "Trading",
          baseCoin,
          quoteCoin: "USDT",
          settleCoin: "USDT",
          fundingInterval: 480
        })
      ),
      { symbol: "BTCUSD", contractType: "InversePerpetual", status: "Trading", baseCoin: "BTC", settleCoin: "BTC" }
    ]
  }
})
const okx = (bases: ReadonlyArray<string>) => ({
  code: "0",
  msg: "",
  data: [...bases, "SHIB", "PEPE", "TON"].map((b) => ({
    instId: `${b}-USDT-SWAP`,
    instType: "SWAP",
    ctType: "linear",
    settleCcy: "USDT",
    state: "live",
    ctVal: "1",
    ctMult: "1"
  }))
})
const hyperliquid = (bases: ReadonlyArray<string>) => ({
  universe: [...bases, "kSHIB", "kPEPE"].map((name) => ({ name, szDecimals: 1, maxLeverage: 10 }))
})
/** Spot lists: the first 50 bases, `QZSPOT` (spot only, on Binance and OKX), and pairs the directory skips. */
const SPOT_BASES = (bases: ReadonlyArray<string>) => [...bases.slice(0, 50), "QZSPOT"]
const binanceSpot = (bases: ReadonlyArray<string>) => ({
  timezone: "UTC",
  symbols: [
    ...SPOT_BASES(bases).map((b) => ({
      symbol: `${b}USDT`,
      status: "TRADING",
      baseAsset: b,
      quoteAsset: "USDT",
      isSpotTradingAllowed: true,
      permissions: ["SPOT"]
    })),
    { symbol: "ETHBTC", status: "TRADING", baseAsset: "ETH", quoteAsset: "BTC", permissions: ["SPOT"] },
    { symbol: "EURUSDT", status: "TRADING", baseAsset: "EUR", quoteAsset: "USDT", permissions: ["SPOT"] },
    { symbol: "BTCUPUSDT", status: "TRADING", baseAsset: "BTCUP", quoteAsset: "USDT", permissions: ["LEVERAGED"] }
  ]
})
const bybitSpot = (bases: ReadonlyArray<string>) => ({
  retCode: 0,
  retMsg: "OK",
  result: {
    category: "spot",
    list: bases
      .slice(0, 50)
      .map((b) => ({ symbol: `${b}USDT`, baseCoin: b, quoteCoin: "USDT", status: "Trading", innovation: "0" }))
  }
})
const okxSpot = (bases: ReadonlyArray<string>) => ({
  code: "0",
  msg: "",
  data: SPOT_BASES(bases).map((b) => ({
    instId: `${b}-USDT`,
    instType: "SPOT",
    baseCcy: b,
    quoteCcy: "USDT",
    state: "live"
  }))
})
const hyperliquidSpot = {
  tokens: [
    { name: "USDC", index: 0 },
    { name: "PURR", index: 1 }
  ],
  universe: [{ name: "PURR/USDC", tokens: [1, 0], index: 0 }]
}
const coinList = [
  ...WellKnownAssets.map(([id, symbol, name]) => ({ id, symbol, name })),
  { id: "mog-coin", symbol: "mog", name: "Mog Coin" },
  { id: "newcoin-protocol", symbol: "newc", name: "NewCoin Protocol" }
]

const route =
  (lists: Lists) =>
  (r: FakeRequest): Reply => {
    const info = (r.body as { type?: string } | undefined)?.type
    const venue =
      r.path === "/fapi/v1/exchangeInfo"
        ? "binance"
        : r.path === "/api/v3/exchangeInfo"
          ? "binance-spot"
          : r.path === "/v5/market/instruments-info"
            ? r.query.get("category") === "spot"
              ? "bybit-spot"
              : "bybit"
            : r.path === "/api/v5/public/instruments"
              ? r.query.get("instType") === "SPOT"
                ? "okx-spot"
                : "okx"
              : r.path === "/info" && info === "meta"
                ? "hyperliquid"
                : r.path === "/info" && info === "spotMeta"
                  ? "hyperliquid-spot"
                  : r.path === "/coins/list"
                    ? "coingecko"
                    : undefined
    if (venue === undefined) return notFound
    if (lists.down.has(venue) || lists.down.has(venue.replace(/-spot$/, "")))
      return { status: 503, text: "maintenance" }
    switch (venue) {
      case "binance-spot":
        return { json: binanceSpot(lists.bases) }
      case "bybit-spot":
        return { json: bybitSpot(lists.bases) }
      case "okx-spot":
        return { json: okxSpot(lists.bases) }
      case "hyperliquid-spot":
        return { json: hyperliquidSpot }
      case "binance":
        return { json: binance(lists.bases) }
      case "bybit":
        return { json: bybit(lists.bases) }
      case "okx":
        return { json: okx(lists.bases) }
      case "hyperliquid":
        return { json: hyperliquid(lists.bases) }
      default:
        return { json: coinList }
    }
  }

/** Calls a discovery or plane operation as the pipeline would after authentication. */
const call = (handler: Handler, name: string, params: ReadonlyArray<readonly [string, string]>) =>
  Effect.suspend(() => {
    const op = operation(name)
    if (op === undefined) return assert.fail(`no operation ${name}`)
    const decoded = decodeParams(op, params)
    if (isApiError(decoded)) return assert.fail(decoded.message)
    const nowMs = Date.now()
    return handler({
      op,
      params: decoded,
      principal: { _tag: "Anonymous", client: "test", rateLimitPerMinute: 60 },
      rate: { limit: 60, remaining: 59, resetAtMs: nowMs, allowed: true },
      nowMs
    })
  })
const dataOf = <A>(out: HandlerOutput): A => (out as { readonly body: { readonly data: A } }).body.data

interface Row {
  readonly asset_id: string
  readonly symbol: string
  readonly tier: string
  readonly alive: boolean
  readonly sources?: ReadonlyArray<{
    venue: string
    component: string
    status: string
    detail?: string
    error?: string
  }>
}
interface Resolved {
  readonly best: { readonly asset_id: string } | null
  readonly matches: ReadonlyArray<{ readonly asset_id: string; readonly warnings: ReadonlyArray<{ code: string }> }>
}

/** A fake world, the job over it, and the plane serving the directory it keeps. */
const setUp = Effect.gen(function* () {
  const lists: Lists = { bases: [...BASES], down: new Set() }
  const server = yield* fakeServer(route(lists))
  const config = liveConfig({
    secUserAgent: "Market Data Tests tests@example.com",
    baseUrls: {
      binance: server.url,
      bybit: server.url,
      okx: server.url,
      hyperliquid: server.url,
      secData: server.url,
      secArchives: server.url,
      prices: server.url
    },
    requestTimeoutMs: 2_000,
    jitterMs: 0
  })
  const market = makeMemoryMarketStore()
  const directoryStore = makeMemoryDirectoryStore()
  const universeOf = (d: AssetDirectory) => universeOfDirectory(d)
  const universe = makeUniverseRef(universeOf(yield* directoryStore.load))
  const job = yield* makeDirectoryJob({
    connectors: config.venues.map((v) => makeConnector(v, config)),
    coinListUrl: `${server.url}/coins/list`,
    timeoutMs: 2_000,
    everyMs: 3_600_000,
    jitterMs: 0,
    onDirectory: (d) => Effect.sync(() => universe.set(universeOf(d)))
  }).pipe(Effect.provideService(MarketStore, market), Effect.provideService(AssetDirectoryStore, directoryStore))
  const plane = yield* makeCryptoPlaneOver(universe).pipe(Effect.provideService(MarketStore, market))
  const planes: ReadonlyArray<PlaneOperations & ReportsSources> = [
    { ...plane, source: "live", sourceStatus: market.status }
  ]
  const coverage = coverageHandler(planes)
  const resolve = resolveHandler(planes)
  const rank = planeHandlers(planes).get("rank") as Handler
  const browse = Effect.gen(function* () {
    const rows: Array<Row> = []
    let cursor: string | undefined
    do {
      const params: Array<readonly [string, string]> = [
        ["plane", "crypto"],
        ["limit", "500"]
      ]
      if (cursor !== undefined) params.push(["cursor", cursor])
      const page = dataOf<{ rows: Array<Row>; next_cursor: string | null }>(yield* call(coverage, "coverage", params))
      rows.push(...page.rows)
      cursor = page.next_cursor ?? undefined
    } while (cursor !== undefined)
    return rows
  })
  return {
    lists,
    server,
    market,
    directoryStore,
    universe,
    job,
    browse,
    coverage,
    one: (id: string) => Effect.map(call(coverage, "coverage", [["id", id]]), dataOf<Row>),
    resolve: (q: string) => Effect.map(call(resolve, "resolve", [["q", q]]), dataOf<Resolved>),
    rank: Effect.map(
      call(rank, "rank", [["limit", "50"]]),
      dataOf<{ coverage: { scanned: number; excluded: number; excluded_by_reason: Record<string, number> } }>
    )
  }
})

describe("the listing job and the directory as the crypto universe (live mode)", () => {
  it("each replay server lists at least 300 instruments", () => {
    assert.isAtLeast(binance(BASES).symbols.length, 300)
    assert.isAtLeast(bybit(BASES).result.list.length, 300)
    assert.isAtLeast(okx(BASES).data.length, 300)
    assert.isAtLeast(hyperliquid(BASES).universe.length, 300)
  })

  it.live(
    "coverage lists every instrument's asset; resolve finds multiplier symbols; a shared ticker is contested",
    () =>
      Effect.gen(function* () {
        const w = yield* setUp
        // Before the first refresh: the seed's core tier (the memoized scan must not outlive the universe).
        const seedCore = w.universe.get().core.length
        assert.strictEqual((yield* w.rank).coverage.scanned, seedCore)
        const report = yield* w.job.once
        assert.deepStrictEqual(
          report.venues.map((v) => [v.venue, v.market, v.ok]),
          ["binance", "bybit", "okx", "hyperliquid"].flatMap((v) => [
            [v, "perp", true],
            [v, "spot", true]
          ])
        )
        const rows = yield* w.browse
        const ids = new Set(rows.map((r) => r.asset_id))
        // Every listed instrument's asset is listed by coverage, alive or not (no data is fed here).
        const directory = yield* w.directoryStore.load
        const holder = new Map<string, string>()
        for (const a of directory.assets) for (const l of a.listings) holder.set(`${l.venue} ${l.symbol}`, a.id)
        for (const s of binance(BASES).symbols.filter(
          (x) => x.contractType === "PERPETUAL" && x.symbol !== "BTCDOMUSDT" && x.symbol !== "币安人生USDT"
        )) {
          const id = holder.get(`binance ${s.symbol}`)
          assert.isDefined(id, s.symbol)
          assert.isTrue(ids.has(id as string), `${s.symbol} -> ${id} in coverage`)
        }
        for (const h of hyperliquid(BASES).universe)
          assert.isTrue(ids.has(holder.get(`hyperliquid ${h.name}`) as string), h.name)
        for (const b of bybit(BASES).result.list.filter((x) => x.contractType === "LinearPerpetual"))
          assert.isTrue(ids.has(holder.get(`bybit ${b.symbol}`) as string), b.symbol)
        for (const o of okx(BASES).data) assert.isTrue(ids.has(holder.get(`okx ${o.instId}`) as string), o.instId)
        assert.isAtLeast(rows.length, 330)

        // Multiplier symbols across venues are one asset, found by resolve under any of its venue symbols.
        for (const q of ["1000SHIBUSDT", "SHIB1000USDT", "kSHIB", "SHIB"]) {
          const r = yield* w.resolve(q)
          assert.strictEqual(r.best?.asset_id, "crypto:shiba-inu", q)
        }
        assert.strictEqual((yield* w.resolve("1000000MOGUSDT")).best?.asset_id, "crypto:mog-coin")
        // SATS is in no coin list here: the fallback slug, found under Binance's bundle symbol.
        assert.strictEqual(holder.get("binance 1000SATSUSDT"), "crypto:sats")
        assert.strictEqual((yield* w.resolve("1000SATSUSDT")).best?.asset_id, "crypto:sats")
        assert.strictEqual((yield* w.resolve("kPEPE")).best?.asset_id, "crypto:pepe")
        // Toncoin (perpetuals) and Tokamak Network (on-chain) share TON: no best, a warning on each.
        const ton = yield* w.resolve("TON")
        assert.isNull(ton.best)
        assert.includeMembers(
          ton.matches.map((m) => m.asset_id),
          ["crypto:toncoin", "crypto:tokamak-network"]
        )
        for (const m of ton.matches.filter(
          (x) => x.asset_id === "crypto:toncoin" || x.asset_id === "crypto:tokamak-network"
        ))
          assert.include(
            m.warnings.map((x) => x.code),
            "symbol_collision"
          )

        // The symbol nobody can parse is named in Binance's listings status, which coverage shows for its assets.
        const btc = yield* w.one("crypto:bitcoin")
        const listings = btc.sources?.find((s) => s.venue === "binance" && s.component === "listings")
        assert.isDefined(listings)
        assert.strictEqual(listings?.status, "live")
        assert.include(listings?.detail ?? "", "币安人生USDT")
        assert.include(listings?.detail ?? "", "unparsable")

        // The browse's first page carries the source summary: every listing's skipped instruments, by name and
        // reason; later pages do not repeat it.
        const first = dataOf<{ next_cursor: string | null; sources?: NonNullable<Row["sources"]> }>(
          yield* call(w.coverage, "coverage", [
            ["plane", "crypto"],
            ["limit", "100"]
          ])
        )
        const summary = first.sources?.find((s) => s.venue === "binance" && s.component === "listings")
        assert.include(summary?.detail ?? "", "unparsable 1: 币安人生USDT")
        assert.include(summary?.detail ?? "", "index 1: BTCDOMUSDT")
        assert.include(summary?.detail ?? "", "not_perpetual 1: BTCUSDT_261226")
        assert.deepStrictEqual(
          (first.sources ?? []).filter((s) => s.component === "listings").map((s) => s.venue),
          ["binance", "bybit", "coingecko", "hyperliquid", "okx"]
        )
        const second = dataOf<{ sources?: unknown }>(
          yield* call(w.coverage, "coverage", [
            ["plane", "crypto"],
            ["limit", "100"],
            ["cursor", first.next_cursor as string]
          ])
        )
        assert.isUndefined(second.sources)
        // Equity browse: no crypto venue in its summary.
        const equity = dataOf<{ sources?: ReadonlyArray<unknown> }>(
          yield* call(w.coverage, "coverage", [["plane", "equity"]])
        )
        assert.isUndefined(equity.sources)

        // Spot: a pair joins its perpetual's asset (a second listing on the venue); a spot-only coin is an asset
        // of tier listed_token; the pairs the directory does not take are named with their reasons.
        const bitcoin = directory.assets.find((a) => a.id === "crypto:bitcoin")
        assert.deepStrictEqual(
          bitcoin?.listings.filter((l) => l.venue === "binance").map((l) => [l.symbol, l.market]),
          [
            ["BTCUSDT", "perp"],
            ["BTCUSDT", "spot"]
          ]
        )
        const spotOnly = yield* w.one("crypto:qzspot")
        assert.strictEqual(spotOnly.tier, "listed_token")
        assert.isTrue(rows.some((r) => r.asset_id === "crypto:qzspot" && r.tier === "listed_token"))
        assert.strictEqual((yield* w.resolve("QZSPOT")).best?.asset_id, "crypto:qzspot")
        assert.include(summary?.detail ?? "", "leveraged_token 1: BTCUPUSDT")
        assert.include(summary?.detail ?? "", "not_crypto 1: EURUSDT")
        assert.include(summary?.detail ?? "", "unsupported_quote 1: ETHBTC")

        // rank scans the directory's whole core tier (perpetuals on two venues), not the registry's.
        const core = w.universe.get().core.length
        assert.isAbove(core, 300)
        const ranked = yield* w.rank
        assert.strictEqual(ranked.coverage.scanned, core)
        assert.strictEqual(ranked.coverage.excluded, core)
        assert.strictEqual(ranked.coverage.excluded_by_reason.no_data, core)
      })
  )

  it.live(
    "a listing added between refreshes appears without a restart; one removed everywhere becomes alive: false",
    () =>
      Effect.gen(function* () {
        const w = yield* setUp
        yield* w.job.once
        // QZAB trades and has live bars on its primary venue: alive.
        const gone = "crypto:qzab"
        const nowMs = Date.now()
        const slot = Math.floor(nowMs / BAR_MS) * BAR_MS
        const times = [slot - 2 * BAR_MS, slot - BAR_MS, slot]
        yield* w.market.write([
          {
            kind: "bars",
            assetId: gone,
            venue: "binance",
            t: times,
            open: times.map(() => 1),
            high: times.map(() => 1.1),
            low: times.map(() => 0.9),
            close: times.map(() => 1),
            volume: times.map(() => 100)
          }
        ])
        yield* w.market.putStatus(
          ["binance", "bybit", "okx", "hyperliquid"].map((venue) => ({
            source: "live" as const,
            venue,
            component: "bars" as const,
            newestMs: nowMs,
            cadenceMs: BAR_MS,
            checkedMs: nowMs,
            failing: false,
            lastSuccessMs: nowMs
          }))
        )
        assert.strictEqual((yield* w.one(gone)).alive, true)
        assert.isNull((yield* w.resolve("NEWC")).best)

        w.lists.bases = [...BASES.filter((b) => b !== "QZAB"), "NEWC"]
        const second = yield* w.job.once
        assert.deepStrictEqual(second.merge.added, ["crypto:newcoin-protocol"])
        assert.deepStrictEqual(second.merge.delisted, [gone])

        const added = yield* w.one("crypto:newcoin-protocol")
        assert.strictEqual(added.symbol, "NEWC")
        assert.strictEqual(added.tier, "core")
        assert.strictEqual((yield* w.resolve("NEWC")).best?.asset_id, "crypto:newcoin-protocol")

        // Delisted everywhere: still resolvable, alive: false though its old bars are fresh, discovery only.
        const removed = yield* w.one(gone)
        assert.strictEqual(removed.alive, false)
        assert.strictEqual(removed.tier, "discovery_only")
        assert.strictEqual((yield* w.resolve("QZAB")).best?.asset_id, gone)
        const deadRows = (yield* w.browse).filter((r) => !r.alive).map((r) => r.asset_id)
        assert.include(deadRows, gone)
      })
  )

  it.live("a failed refresh keeps the last directory; a failing venue keeps its listings and says so", () =>
    Effect.gen(function* () {
      const w = yield* setUp
      yield* w.job.once
      const before = (yield* w.browse).map((r) => [r.asset_id, r.tier, r.alive])
      const coreBefore = w.universe.get().core.length

      // Every venue down: the refresh fails (and is retried by the job), nothing is delisted.
      w.lists.down = new Set(["binance", "bybit", "okx", "hyperliquid"])
      w.lists.bases = []
      const failed = yield* Effect.flip(w.job.once)
      assert.strictEqual(failed.kind, "status")
      assert.deepStrictEqual(
        (yield* w.browse).map((r) => [r.asset_id, r.tier, r.alive]),
        before
      )
      assert.strictEqual(w.universe.get().core.length, coreBefore)
      const status = (yield* w.one("crypto:bitcoin")).sources?.find(
        (s) => s.venue === "okx" && s.component === "listings"
      )
      assert.strictEqual(status?.status, "stale")
      assert.include(status?.error ?? "", "503")

      // Only OKX down, the others list nothing more than before: OKX's listings stay trading.
      w.lists.down = new Set(["okx"])
      w.lists.bases = [...BASES]
      yield* w.job.once
      const directory = yield* w.directoryStore.load
      const sol = directory.assets.find((a) => a.id === "crypto:solana")
      assert.strictEqual(sol?.listings.find((l) => l.venue === "okx")?.status, "trading")
    })
  )

  it.effect("the running job notices a new listing within the hour: the default cadence, its jitter included", () =>
    Effect.gen(function* () {
      const defaults = liveConfig({ secUserAgent: "Market Data Tests tests@example.com" })
      const lists: Lists = { bases: [...BASES], down: new Set() }
      const server = yield* fakeServer(route(lists))
      const config = liveConfig({
        secUserAgent: "Market Data Tests tests@example.com",
        baseUrls: {
          binance: server.url,
          bybit: server.url,
          okx: server.url,
          hyperliquid: server.url,
          secData: server.url,
          secArchives: server.url,
          prices: server.url
        }
      })
      const refreshed = yield* Queue.unbounded<ReadonlyArray<string>>()
      const directoryStore = makeMemoryDirectoryStore()
      const job = yield* makeDirectoryJob({
        connectors: config.venues.map((v) => makeConnector(v, config)),
        coinListUrl: `${server.url}/coins/list`,
        timeoutMs: config.requestTimeoutMs,
        everyMs: defaults.listingsEveryMs,
        jitterMs: defaults.jitterMs,
        onDirectory: (_, report) => Queue.offer(refreshed, report.merge.added).pipe(Effect.asVoid)
      }).pipe(
        Effect.provideService(MarketStore, makeMemoryMarketStore()),
        Effect.provideService(AssetDirectoryStore, directoryStore)
      )
      // The worst moment: the first refresh runs just after an hourly slot, so the next is a whole hour away.
      yield* TestClock.setTime(Date.UTC(2026, 10, 20, 12, 0, 10) + 1)
      yield* Effect.forkScoped(job.run)
      yield* Queue.take(refreshed)
      lists.bases = [...BASES, "NEWC"]
      // Nothing is fetched between two slots...
      yield* TestClock.adjust(defaults.listingsEveryMs / 2)
      assert.isTrue(Option.isNone(yield* Queue.poll(refreshed)))
      // ...and the listing is noticed by the next one: a listing that appears just after a refresh waits one
      // cadence, the slot's offset and the jitter at most, and that is within the hour.
      assert.isAtMost(defaults.listingsEveryMs + 10_000 + defaults.jitterMs, 3_600_000)
      yield* TestClock.adjust(defaults.listingsEveryMs / 2 + defaults.jitterMs)
      assert.deepStrictEqual(yield* Queue.take(refreshed), ["crypto:newcoin-protocol"])
      const newc = (yield* directoryStore.load).assets.find((a) => a.id === "crypto:newcoin-protocol")
      assert.strictEqual(newc?.symbol, "NEWC")
    }).pipe(Effect.scoped)
  )

  it("the coin list is fetched from CoinGecko only while the venues are the public ones", () => {
    assert.strictEqual(liveConfig({ secUserAgent: "A Tester a@example.com" }).coinListUrl, COIN_LIST_DEFAULT_URL)
    const local = "http://127.0.0.1:9"
    const replay = liveConfig({
      secUserAgent: "A Tester a@example.com",
      baseUrls: { ...liveConfig({ secUserAgent: "A Tester a@example.com" }).baseUrls, okx: local }
    })
    assert.strictEqual(replay.coinListUrl, "off")
  })

  it("skipped instruments: the unreadable ones first, by name", () => {
    const detail = skippedDetail([
      { venue: "binance", symbol: "BTCDOMUSDT", reason: "index", detail: "underlyingType INDEX" },
      { venue: "binance", symbol: "币安人生USDT", reason: "unparsable", detail: "base is not an ASCII ticker" }
    ])
    assert.strictEqual(
      detail,
      "skipped 2: unparsable 1: 币安人生USDT (base is not an ASCII ticker); index 1: BTCDOMUSDT"
    )
    assert.isUndefined(skippedDetail([]))
    // A perpetual another symbol of its asset feeds: named with that symbol.
    assert.strictEqual(
      skippedDetail([
        { venue: "binance", symbol: "BTCUSDC", reason: "same_asset", detail: "crypto:bitcoin fed from BTCUSDT" }
      ]),
      "skipped 1: same_asset 1: BTCUSDC (crypto:bitcoin fed from BTCUSDT)"
    )
  })

  it("skipped instruments: every one is named, also far past the 300 characters of other status texts", () => {
    const skipped = Array.from({ length: 400 }, (_, i) => ({
      venue: "binance",
      symbol: `PAIR${i}BTC`,
      reason: "unsupported_quote" as const,
      detail: "quoted in BTC"
    }))
    const detail = skippedDetail(skipped) ?? ""
    for (const s of skipped) assert.include(detail, `${s.symbol},`.replace(/,$/, ""))
    assert.isTrue(detail.endsWith("PAIR399BTC"), detail.slice(-40))
  })
})

describe("the venue feeds follow the directory (live mode)", () => {
  it.effect(
    "a listing the job adds is ingested without a restart, priced per token by the directory's multiplier",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(F.NOW_MS)
        let listed = false
        const NEW = "1000000NEWCUSDT"
        const symbols = () => [
          ...F.exchangeInfo.symbols.map((x) => ({
            ...x,
            quoteAsset: "USDT",
            marginAsset: "USDT",
            underlyingType: "COIN"
          })),
          ...(listed
            ? [
                {
                  symbol: NEW,
                  contractType: "PERPETUAL",
                  status: "TRADING",
                  baseAsset: "1000000NEWC",
                  quoteAsset: "USDT",
                  marginAsset: "USDT",
                  underlyingType: "COIN"
                }
              ]
            : [])
        ]
        const t = Date.parse("2026-11-20T11:45:00.000Z")
        const server = yield* fakeServer((r) =>
          r.path === "/fapi/v1/exchangeInfo"
            ? { json: { ...F.exchangeInfo, symbols: symbols() } }
            : r.path === "/fapi/v1/klines" && r.query.get("symbol") === NEW
              ? {
                  json: listed
                    ? [[t, "2.5", "2.6", "2.4", "2.55", "40", t + BAR_MS - 1, "100", 10, "20", "50", "0"]]
                    : []
                }
              : F.binanceRoute(r)
        )
        const market = makeMemoryMarketStore()
        const directoryStore = makeMemoryDirectoryStore()
        const universe = makeUniverseRef(universeOfDirectory(yield* directoryStore.load))
        const connector = makeBinance({ baseUrl: server.url, timeoutMs: 5_000 })
        const job = yield* makeDirectoryJob({
          connectors: [connector],
          coinListUrl: "off",
          timeoutMs: 5_000,
          everyMs: 3_600_000,
          jitterMs: 0,
          onDirectory: (d) => Effect.sync(() => universe.set(universeOfDirectory(d)))
        }).pipe(Effect.provideService(MarketStore, market), Effect.provideService(AssetDirectoryStore, directoryStore))
        const feed = yield* makeCryptoFeed(connector, {
          backfillDays: 1,
          fundingBackfillDays: 2,
          jitterMs: 0,
          universe: () => universe.get().assets
        }).pipe(Effect.provideService(MarketStore, market))
        const barsOf = (assetId: string) =>
          market.read("bars", { assetId, fromMs: 0, toMs: F.NOW_MS + 3_600_000, venue: "binance" })

        yield* job.once
        yield* feed.once.listings.pipe(Effect.provideService(MarketStore, market))
        yield* feed.once.bars.pipe(Effect.provideService(MarketStore, market))
        assert.lengthOf(yield* barsOf("crypto:newc"), 0)

        listed = true
        const report = yield* job.once
        assert.deepStrictEqual(report.merge.added, ["crypto:newc"])
        yield* feed.once.listings.pipe(Effect.provideService(MarketStore, market))
        yield* feed.once.bars.pipe(Effect.provideService(MarketStore, market))
        const [bars] = yield* barsOf("crypto:newc")
        assert.deepStrictEqual([...(bars?.t ?? [])], [t])
        // One venue unit is a million tokens: the price per token is 2.55 / 1,000,000, the volume 40 million.
        assert.closeTo(bars?.close[0] as number, 2.55e-6, 1e-15)
        assert.strictEqual(bars?.volume[0], 40_000_000)
      }).pipe(Effect.scoped)
  )

  it.effect(
    "the issue's four (2024-10): XMR and POPCAT, which the registry knows spot and on-chain, and MKR and FTM, renamed, are priced from their perpetuals",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(F.NOW_MS)
        const t = Date.parse("2026-11-20T11:45:00.000Z")
        const closes: Record<string, string> = {
          XMRUSDT: "160.50",
          POPCATUSDT: "0.4800",
          MKRUSDT: "1500.0",
          FTMUSDT: "0.7000"
        }
        const server = yield* fakeServer((r) => {
          const symbol = r.query.get("symbol") ?? ""
          if (r.path === "/fapi/v1/exchangeInfo")
            return {
              json: {
                ...F.exchangeInfo,
                symbols: Object.keys(closes).map((s) => ({
                  symbol: s,
                  contractType: "PERPETUAL",
                  status: "TRADING",
                  baseAsset: s.replace(/USDT$/, ""),
                  quoteAsset: "USDT",
                  marginAsset: "USDT",
                  underlyingType: "COIN"
                }))
              }
            }
          const c = closes[symbol]
          if (r.path === "/fapi/v1/klines" && c !== undefined)
            return { json: [[t, c, c, c, c, "10", t + BAR_MS - 1, "100", 10, "5", "50", "0"]] }
          return F.binanceRoute(r)
        })
        const market = makeMemoryMarketStore()
        const directoryStore = makeMemoryDirectoryStore()
        const universe = makeUniverseRef(universeOfDirectory(yield* directoryStore.load))
        const connector = makeBinance({ baseUrl: server.url, timeoutMs: 5_000 })
        const job = yield* makeDirectoryJob({
          connectors: [connector],
          coinListUrl: "off",
          timeoutMs: 5_000,
          everyMs: 3_600_000,
          jitterMs: 0,
          onDirectory: (d) => Effect.sync(() => universe.set(universeOfDirectory(d)))
        }).pipe(Effect.provideService(MarketStore, market), Effect.provideService(AssetDirectoryStore, directoryStore))
        const feed = yield* makeCryptoFeed(connector, {
          backfillDays: 1,
          fundingBackfillDays: 2,
          jitterMs: 0,
          universe: () => universe.get().assets
        }).pipe(Effect.provideService(MarketStore, market))
        yield* job.once
        yield* feed.once.listings.pipe(Effect.provideService(MarketStore, market))
        yield* feed.once.bars.pipe(Effect.provideService(MarketStore, market))

        const plane = yield* makeCryptoPlaneOver(universe).pipe(Effect.provideService(MarketStore, market))
        const price = planeHandlers([{ ...plane, source: "live" }]).get("price") as Handler
        const op = operation("price")
        if (op === undefined) return assert.fail("no operation price")
        const usdOf = (id: string) =>
          Effect.gen(function* () {
            const params = decodeParams(op, [["id", id]])
            if (isApiError(params)) return assert.fail(params.message)
            const out = yield* price({
              op,
              params,
              principal: { _tag: "Anonymous", client: "test", rateLimitPerMinute: 60 },
              rate: { limit: 60, remaining: 59, resetAtMs: F.NOW_MS, allowed: true },
              nowMs: F.NOW_MS
            })
            return (out as { readonly body: { readonly data: { readonly usd: number | null } } }).body.data.usd
          })
        // Per token: MKR's price is 24,000 SKY (MKR upgrades to SKY 1:24,000), FTM's one S.
        assert.deepStrictEqual(
          [
            yield* usdOf("crypto:monero"),
            yield* usdOf("crypto:popcat"),
            yield* usdOf("crypto:sonic-3"),
            yield* usdOf("crypto:sky")
          ],
          [160.5, 0.48, 0.7, 0.0625]
        )
      }).pipe(Effect.scoped)
  )
})
