/**
 * The equities' daily price connector against a local replay server answering Yahoo-shaped chart JSON (the
 * project's hand-made fixtures, and the real recording when `../shared/data/prices` is present): a pass writes the
 * closed sessions' bars through `EquityStore.putBars`, every ticker its own series (a two-class issuer gets two
 * series, and its two assets answer two prices); an HTML page answered with 200, a 403 and a 503 are source
 * failures (nothing stored, venue `yahoo` component `bars` failing, shown in `coverage` `sources`); an unknown symbol
 * is a per-ticker problem; and the equity plane then answers `price`, `technicals`, `valuation` and the `read`
 * headline from the connector's bars, `delayed` while the session runs.
 */
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { type Company, Equity, type EquityStore, type MarketStore } from "@market-data/core"
import { Clock, ConfigProvider, Effect, Exit, Fiber, Result, Scope } from "effect"
import { TestClock } from "effect/testing"
import { coverageHandler } from "../../../../core/src/Coverage.ts"
import { makeEquityPlane } from "../../../../core/src/equity/EquityPlane.ts"
import { decodeParams, isApiError } from "../../../../core/src/Params.ts"
import { operation } from "../../../../core/src/Registry.ts"
import { callPlanes, dataOf } from "../../../../core/test/support/PlaneCall.ts"
import { makeMemoryEquityStore } from "../../../memory/src/MemoryEquityStore.ts"
import { makeMemoryLeaderLock } from "../../../memory/src/MemoryLeaderLock.ts"
import { makeMemoryMarketStore } from "../../../memory/src/MemoryMarketStore.ts"
import { type LiveConfig, liveConfig, loadLiveConfig, validateLiveConfig } from "../../src/live/LiveConfig.ts"
import { startLiveFeeds } from "../../src/live/LiveFeeds.ts"
import {
  type ChartBars,
  makePriceFeed,
  makePriceLimiter,
  PRICES_BACKFILL_DAYS,
  parseYahooChart,
  runPricePass
} from "../../src/live/PriceFeed.ts"
import { eventually, type FakeRequest, fakeServer, pumpClock, type Reply, realPause, sharedText } from "./FakeServer.ts"
import * as Y from "./fixtures/Yahoo.ts"

const sharedPricesPresent = existsSync(fileURLToPath(new URL("../../../../../shared/data/prices/", import.meta.url)))
const YAHOO_RECORDING = "prices/yahoo_v8_chart_AAPL_1d_2020-08-31_to_2020-11-06.json"

const APPLE: Company = {
  cik: "320193",
  name: "Apple Inc.",
  tickers: ["AAPL"],
  exchanges: ["Nasdaq"],
  sic: null,
  sicDescription: null,
  fiscalYearEnd: "0926",
  formerNames: []
}
const AAPL = "eq:320193:AAPL"
const UA = "service-market-data tests"

const chartPath = (ticker: string) => `/v8/finance/chart/${ticker}`

/**
 * AAPL and SNOW answer the fixture, BRK-A and BRK-B (a two-class issuer) at two price levels; anything else is
 * unknown (404 with Yahoo's error JSON).
 */
const yahooRoute = (r: FakeRequest): Reply => {
  if (r.path === chartPath("AAPL")) return { json: Y.chartJson({ symbol: "AAPL" }) }
  if (r.path === chartPath("BRK-A")) return { json: Y.chartJson({ symbol: "BRK-A", nullRow: -1, scale: 1500 }) }
  if (r.path === chartPath("BRK-B")) return { json: Y.chartJson({ symbol: "BRK-B", nullRow: -1, scale: 0.9 }) }
  if (r.path === chartPath("SNOW")) return { json: Y.chartJson({ symbol: "SNOW", nullRow: -1 }) }
  return { status: 404, json: Y.unknownSymbolJson }
}

const seed = (equity: EquityStore["Service"]) =>
  Effect.gen(function* () {
    yield* equity.putCompany(APPLE)
    // An issuer known only from the ticker list is fetched too (one ticker per CIK).
    yield* equity.putTickers([{ cik: "1640147", ticker: "SNOW", name: "Snowflake Inc.", exchange: "NYSE" }])
  })

const setup = (route: (r: FakeRequest) => Reply = yahooRoute) =>
  Effect.gen(function* () {
    yield* TestClock.setTime(Y.NOW_MS)
    const server = yield* fakeServer(route)
    const equity = makeMemoryEquityStore()
    const market = makeMemoryMarketStore()
    yield* seed(equity)
    const feed = makePriceFeed(
      equity,
      { baseUrl: server.url, timeoutMs: 5_000, backfillDays: PRICES_BACKFILL_DAYS, userAgent: UA },
      makePriceLimiter(600)
    )
    yield* pumpClock(100)
    return { server, equity, market, feed }
  })

const pricesStatus = (market: MarketStore["Service"]) =>
  Effect.map(market.status, (all) => all.find((s) => s.venue === "yahoo" && s.component === "bars"))

describe("Yahoo chart parsing", () => {
  it.skipIf(!sharedPricesPresent)("reads the real recording: 49 bars at session opens, the 4:1 split", () => {
    const r = parseYahooChart(sharedText(YAHOO_RECORDING))
    assert.isTrue(Result.isSuccess(r))
    const { bars, skipped, splitsMs } = (r as Result.Success<ChartBars, never>).success
    assert.lengthOf(bars, 49)
    assert.lengthOf(skipped, 0)
    assert.strictEqual(bars[0]?.tMs, Equity.sessionOpenMs("2020-08-31"))
    // 129.0399932861328 as recorded (a float32), read to the answer's priceHint (2 decimals).
    assert.strictEqual(bars[0]?.c, 129.04)
    assert.strictEqual(bars.at(-1)?.tMs, Equity.sessionOpenMs("2020-11-06"))
    assert.deepStrictEqual(splitsMs, [Equity.sessionOpenMs("2020-08-31")])
  })
  if (!sharedPricesPresent) it("real Yahoo recording absent: ../shared/data/prices not found; skipped", () => {})

  it("reads the hand-made chart: float32 prices to the priceHint, a null row skipped with its reason", () => {
    const r = parseYahooChart(JSON.stringify(Y.chartJson({ symbol: "AAPL" })))
    assert.isTrue(Result.isSuccess(r))
    const { bars, skipped } = (r as Result.Success<ChartBars, never>).success
    assert.lengthOf(bars, Y.DAYS.length - 1)
    assert.deepStrictEqual(skipped, [`${Y.DAYS[Y.NULL_ROW]}: a price is missing or not above 0`])
    assert.strictEqual(bars[0]?.c, Y.closeOf(0))
    assert.strictEqual(bars.at(-1)?.c, Y.closeOf(Y.DAYS.length - 1))
  })

  it("a weekend row is skipped; a weekday the calendar has closed is kept, as ingest prices keeps it", () => {
    // Thanksgiving 2026 is Thursday the 26th; the 28th is a Saturday.
    const r = parseYahooChart(
      JSON.stringify(Y.chartJson({ symbol: "AAPL", days: ["2026-11-25", "2026-11-26", "2026-11-28"], nullRow: -1 }))
    )
    assert.isTrue(Result.isSuccess(r))
    const { bars, skipped } = (r as Result.Success<ChartBars, never>).success
    assert.deepStrictEqual(
      bars.map((b) => b.tMs),
      [Equity.sessionOpenMs("2026-11-25"), Equity.sessionOpenMs("2026-11-26")]
    )
    assert.deepStrictEqual(skipped, ["2026-11-28: a Saturday, not a US session"])
  })

  it("an HTML page or JSON that is no chart is a blocked source; a chart error is an unknown symbol", () => {
    const kind = (text: string) => {
      const r = parseYahooChart(text)
      return Result.isFailure(r) ? r.failure.kind : "bars"
    }
    assert.strictEqual(kind(Y.proofOfWorkHtml), "blocked")
    assert.strictEqual(kind(`\n  ${Y.forbiddenHtml}`), "blocked")
    assert.strictEqual(kind(`{"finance":{"result":null}}`), "blocked")
    assert.strictEqual(kind("Too Many Requests"), "blocked")
    assert.strictEqual(kind(JSON.stringify(Y.unknownSymbolJson)), "symbol")
  })
})

describe("price connector against a replay server", () => {
  it.effect(
    "a pass writes the closed sessions' bars of every equity asset, then asks again only after the next close",
    () =>
      Effect.gen(function* () {
        const { server, equity, market, feed } = yield* setup()
        const report = yield* runPricePass(feed, market)
        assert.strictEqual(report.fetched, 2)
        // 60 sessions through today: today's (still forming) is not stored, nor AAPL's row of nulls.
        const aapl = yield* equity.bars("320193", "AAPL", {})
        assert.lengthOf(aapl, Y.DAYS.length - 2)
        assert.strictEqual(aapl.at(-1)?.tMs, Equity.sessionOpenMs(Y.LAST_CLOSED))
        assert.strictEqual(aapl.at(-1)?.c, Y.closeOf(Y.DAYS.length - 2))
        assert.notInclude(
          aapl.map((b) => b.tMs),
          Equity.sessionOpenMs(Y.DAYS[Y.NULL_ROW] as string)
        )
        assert.lengthOf(yield* equity.bars("1640147", "SNOW", {}), Y.DAYS.length - 1, "the ticker-list issuer too")
        assert.include(report.problems.join(" "), "AAPL: 1 rows skipped")

        const first = server.requests.find((r) => r.path === chartPath("AAPL"))
        assert.strictEqual(first?.query.get("interval"), "1d")
        assert.strictEqual(
          Number(first?.query.get("period1")),
          Math.floor((Y.NOW_MS - PRICES_BACKFILL_DAYS * 86_400_000) / 1000)
        )
        assert.strictEqual(first?.headers["user-agent"], UA)

        const status = yield* pricesStatus(market)
        assert.strictEqual(status?.failing, false)
        assert.isAtLeast(status?.lastSuccessMs ?? 0, Y.NOW_MS)

        // Later the same session: nothing is asked again.
        const before = server.requests.length
        yield* TestClock.setTime(Y.NOW_MS + 3_600_000)
        const again = yield* runPricePass(feed, market)
        assert.strictEqual(again.fetched, 0)
        assert.strictEqual(server.requests.length, before)

        // After today's close: an incremental fetch from a week before the newest bar stores today's bar.
        yield* TestClock.setTime(Equity.sessionCloseMs(Y.TODAY) + 30 * 60_000)
        const next = yield* runPricePass(feed, market)
        assert.strictEqual(next.fetched, 2)
        const incremental = server.requests.filter((r) => r.path === chartPath("AAPL")).at(-1)
        assert.strictEqual(
          Number(incremental?.query.get("period1")),
          Math.floor((Equity.sessionOpenMs(Y.LAST_CLOSED) - 7 * 86_400_000) / 1000)
        )
        assert.strictEqual((yield* equity.bars("320193", "AAPL", {})).at(-1)?.tMs, Equity.sessionOpenMs(Y.TODAY))
      }).pipe(Effect.scoped)
  )

  const blocked: ReadonlyArray<readonly [string, Reply, string]> = [
    ["an HTML page with status 200", { headers: { "Content-Type": "text/html" }, text: Y.proofOfWorkHtml }, "format"],
    ["a 403 page", { status: 403, headers: { "Content-Type": "text/html" }, text: Y.forbiddenHtml }, "status"],
    [
      "a 503 page",
      { status: 503, headers: { "Content-Type": "text/html", "Retry-After": "120" }, text: Y.unavailableHtml },
      "status"
    ]
  ]
  for (const [name, reply, kind] of blocked) {
    it.effect(
      `${name} is a source failure: nothing stored, the source failing in coverage, mended by the next pass`,
      () =>
        Effect.gen(function* () {
          let broken = true
          const { equity, market, feed } = yield* setup((r) => (broken ? reply : yahooRoute(r)))
          const e = yield* Effect.flip(runPricePass(feed, market))
          assert.strictEqual(e._tag, "SourceError")
          assert.strictEqual(e.source, "yahoo")
          assert.strictEqual(e.kind, kind)
          if (kind === "status") assert.strictEqual(e.status, (reply as { status: number }).status)
          if (e.status === 503) assert.strictEqual(e.retryAfterMs, 120_000, "Retry-After reaches the backoff")
          assert.lengthOf(yield* equity.bars("320193", "AAPL", {}), 0, "no page is parsed as prices")
          assert.lengthOf(yield* equity.bars("1640147", "SNOW", {}), 0, "the pass stops at a source failure")

          const status = yield* pricesStatus(market)
          assert.strictEqual(status?.failing, true)
          assert.include(status?.lastError ?? "", kind === "format" ? "HTML page" : `HTTP ${e.status}`)

          // `coverage` for the equity lists the price source, stale, with the error.
          const plane = yield* makeEquityPlane({ source: "sec", dailyCloseDelayed: true }).pipe(
            Effect.provideService(Equity.EquityStore, equity)
          )
          const op = operation("coverage")!
          const params = decodeParams(op, [["id", AAPL]])
          if (isApiError(params)) return assert.fail(params.message)
          const out = yield* coverageHandler([{ ...plane, sourceStatus: market.status }])({
            op,
            params,
            principal: { _tag: "Anonymous", client: "test", rateLimitPerMinute: 60 },
            rate: { limit: 60, remaining: 59, resetAtMs: Y.NOW_MS, allowed: true },
            nowMs: Y.NOW_MS
          })
          const row = dataOf<{ sources: ReadonlyArray<Record<string, unknown>> }>(out)
          const source = row.sources.find((s) => s.venue === "yahoo")
          assert.strictEqual(source?.component, "bars")
          assert.strictEqual(source?.status, "stale")
          assert.include(String(source?.error), kind === "format" ? "HTML page" : `HTTP ${e.status}`)

          broken = false
          yield* runPricePass(feed, market)
          assert.strictEqual((yield* pricesStatus(market))?.failing, false)
          assert.lengthOf(yield* equity.bars("320193", "AAPL", {}), Y.DAYS.length - 2)
        }).pipe(Effect.scoped)
    )
  }

  it.effect("an unknown symbol is a problem of that ticker, named in the status detail; the others load", () =>
    Effect.gen(function* () {
      const { equity, market, feed } = yield* setup()
      yield* equity.putTickers([{ cik: "9999999", ticker: "GONE", name: "Gone Corp", exchange: null }])
      const report = yield* runPricePass(feed, market)
      assert.strictEqual(report.fetched, 3)
      assert.include(report.problems.join(" "), "GONE: not found (HTTP 404)")
      assert.lengthOf(yield* equity.bars("320193", "AAPL", {}), Y.DAYS.length - 2)
      const status = yield* pricesStatus(market)
      assert.strictEqual(status?.failing, false)
      assert.include(status?.detail ?? "", "GONE: not found")
    }).pipe(Effect.scoped)
  )

  it.effect("a split new to the service re-reads the ticker's whole stored range, on the new basis", () =>
    Effect.gen(function* () {
      const splitDay = Y.DAYS[Y.DAYS.length - 1] as string
      let split = false
      const { server, equity, market, feed } = yield* setup((r) =>
        split && r.path === chartPath("AAPL")
          ? { json: Y.chartJson({ symbol: "AAPL", splits: { [splitDay]: "2:1" } }) }
          : yahooRoute(r)
      )
      yield* runPricePass(feed, market)
      split = true
      yield* TestClock.setTime(Equity.sessionCloseMs(Y.TODAY) + 30 * 60_000)
      yield* runPricePass(feed, market)
      const aaplRequests = server.requests.filter((r) => r.path === chartPath("AAPL"))
      assert.lengthOf(aaplRequests, 3, "backfill, incremental, then the whole stored range")
      const oldest = (yield* equity.bars("320193", "AAPL", {}))[0]?.tMs as number
      assert.strictEqual(Number(aaplRequests[2]?.query.get("period1")), Math.floor((oldest - 86_400_000) / 1000))
    }).pipe(Effect.scoped)
  )

  it.effect("the limiter spreads requests at the configured rate", () =>
    Effect.gen(function* () {
      const limiter = makePriceLimiter(30)
      const times: Array<number> = []
      const fiber = yield* Effect.forkChild(
        Effect.forEach(
          [1, 2, 3, 4],
          () =>
            Effect.andThen(
              limiter.take(1),
              Effect.flatMap(Clock.currentTimeMillis, (t) => Effect.sync(() => times.push(t)))
            ),
          { concurrency: "unbounded" }
        )
      )
      yield* TestClock.adjust("10 seconds")
      yield* Fiber.join(fiber)
      assert.deepStrictEqual(times, [0, 2_000, 4_000, 6_000])
    })
  )
})

describe("equity answers from the connector's prices", () => {
  it.effect.skipIf(!sharedPricesPresent)(
    "the real Yahoo recording replayed: every bar stored, price answers its last close",
    () =>
      Effect.gen(function* () {
        const recorded = sharedText(YAHOO_RECORDING)
        // Monday 2020-11-09, 10:00 New York: the recording ends with Friday's session.
        const now = Date.UTC(2020, 10, 9, 15, 0)
        const { equity, market, feed } = yield* setup((r) =>
          r.path === chartPath("AAPL") ? { text: recorded } : { status: 404, json: Y.unknownSymbolJson }
        )
        yield* TestClock.setTime(now)
        const report = yield* runPricePass(feed, market)
        assert.strictEqual(report.bars, 49)
        const bars = yield* equity.bars("320193", "AAPL", {})
        assert.lengthOf(bars, 49)
        const quote = (
          JSON.parse(recorded) as {
            chart: { result: Array<{ indicators: { quote: Array<{ close: Array<number> }> } }> }
          }
        ).chart.result[0]?.indicators.quote[0]?.close as Array<number>
        const lastClose = Number((quote.at(-1) as number).toFixed(2))
        assert.strictEqual(bars.at(-1)?.c, lastClose)
        const plane = yield* makeEquityPlane({ source: "sec", dailyCloseDelayed: true }).pipe(
          Effect.provideService(Equity.EquityStore, equity)
        )
        const price = dataOf<Record<string, any>>(yield* callPlanes([plane], "price", [["id", AAPL]], now))
        assert.strictEqual(price.usd, lastClose)
        assert.strictEqual(price.status, "delayed")
      }).pipe(Effect.scoped)
  )

  it.effect(
    "price, technicals, valuation and the read headline answer from the bars; delayed while the market trades",
    () =>
      Effect.gen(function* () {
        const { equity, market, feed } = yield* setup()
        yield* runPricePass(feed, market)
        const plane = yield* makeEquityPlane({ source: "sec", dailyCloseDelayed: true }).pipe(
          Effect.provideService(Equity.EquityStore, equity)
        )
        const call = (name: string, nowMs = Y.NOW_MS) =>
          Effect.map(callPlanes([plane], name, [["id", AAPL]], nowMs), dataOf<Record<string, any>>)
        const lastClose = Y.closeOf(Y.DAYS.length - 2)

        const price = yield* call("price")
        assert.strictEqual(price.usd, lastClose, "Monday's close")
        assert.strictEqual(price.status, "delayed", "the previous session's close while the session runs")
        assert.strictEqual(price.as_of, new Date(Equity.sessionCloseMs(Y.LAST_CLOSED)).toISOString())

        const technicals = yield* call("technicals")
        assert.strictEqual(technicals.status, "delayed")
        assert.isNumber(technicals.rsi_14?.value)

        const valuation = yield* call("valuation")
        assert.strictEqual(valuation.price_usd, lastClose)
        assert.strictEqual(valuation.status, "delayed")

        const read = yield* call("read")
        assert.strictEqual(read.headline.price_usd, lastClose)
        assert.strictEqual(read.status, "delayed")

        // Outside the session the same data is `closed`, as for any equity.
        yield* TestClock.setTime(Equity.sessionCloseMs(Y.TODAY) + 3_600_000)
        const evening = yield* call("price", Equity.sessionCloseMs(Y.TODAY) + 3_600_000)
        assert.strictEqual(evening.status, "closed")
      }).pipe(Effect.scoped)
  )
})

describe("a two-class issuer through the connector", () => {
  const BERKSHIRE: Company = {
    cik: "1067983",
    name: "Berkshire Hathaway Inc",
    tickers: ["BRK-A", "BRK-B"],
    exchanges: ["NYSE", "NYSE"],
    sic: null,
    sicDescription: null,
    fiscalYearEnd: "1231",
    formerNames: []
  }

  it.effect("each class is fetched and stored as its own series; its asset answers its own prices", () =>
    Effect.gen(function* () {
      const { server, equity, market, feed } = yield* setup()
      yield* equity.putCompany(BERKSHIRE)
      const report = yield* runPricePass(feed, market)
      assert.strictEqual(report.fetched, 4, "AAPL, SNOW, BRK-A and BRK-B: one request each")
      assert.deepStrictEqual(
        server.requests.map((r) => r.path).filter((p) => p.includes("BRK")),
        [chartPath("BRK-A"), chartPath("BRK-B")]
      )
      const a = yield* equity.bars(BERKSHIRE.cik, "BRK-A", {})
      const b = yield* equity.bars(BERKSHIRE.cik, "BRK-B", {})
      assert.lengthOf(a, Y.DAYS.length - 1)
      assert.lengthOf(b, Y.DAYS.length - 1)
      assert.deepStrictEqual(
        a.map((x) => x.tMs),
        b.map((x) => x.tMs)
      )
      for (let i = 0; i < a.length; i++) assert.isAbove(a[i]!.c, 1000 * b[i]!.c, `session ${i}`)
      const coverage = (yield* equity.issuer(BERKSHIRE.cik))?.coverage
      assert.deepStrictEqual(
        coverage?.tickerBars.map((t) => [t.ticker, t.bars]),
        [
          ["BRK-A", a.length],
          ["BRK-B", b.length]
        ]
      )

      const plane = yield* makeEquityPlane({ source: "sec", dailyCloseDelayed: true }).pipe(
        Effect.provideService(Equity.EquityStore, equity)
      )
      const call = (name: string, id: string) =>
        Effect.map(callPlanes([plane], name, [["id", id]], Y.NOW_MS), dataOf<Record<string, any>>)
      for (const [id, bars] of [
        ["eq:1067983:BRK-A", a],
        ["eq:1067983:BRK-B", b]
      ] as const) {
        const lastClose = bars.at(-1)?.c
        assert.strictEqual((yield* call("price", id)).usd, lastClose, id)
        assert.strictEqual((yield* call("read", id)).headline.price_usd, lastClose, id)
        const valuation = yield* call("valuation", id)
        assert.strictEqual(valuation.price_usd, lastClose, id)
        // Two classes and one filed share count: no multiple from one class's price.
        assert.strictEqual(valuation.unavailable?.pe_ttm?.reason, "not_applicable", id)
        const technicals = yield* call("technicals", id)
        const closes = bars.slice(-20).map((x) => x.c)
        assert.closeTo(
          technicals.moving_averages.sma_20,
          closes.reduce((s, c) => s + c, 0) / 20,
          1e-6 * Math.max(1, lastClose ?? 1),
          id
        )
      }
    }).pipe(Effect.scoped)
  )
})

describe("price connector in live mode", () => {
  const liveWith = (url: string, prices: LiveConfig["prices"]) =>
    liveConfig({
      secUserAgent: "Market Data Tests tests@example.com",
      venues: [],
      baseUrls: { binance: url, bybit: url, okx: url, hyperliquid: url, secData: url, secArchives: url, prices: url },
      secCiks: [],
      sec13fFilers: [],
      prices,
      requestTimeoutMs: 1_000,
      jitterMs: 0,
      leaderLeaseMs: 300,
      instanceId: `prices-${prices}`
    })

  it.live("the leader runs it beside SEC EDGAR: a blocked source shows failing under venue yahoo", () =>
    Effect.gen(function* () {
      const server = yield* fakeServer((r) =>
        r.path.startsWith("/v8/finance/chart/")
          ? { status: 403, headers: { "Content-Type": "text/html" }, text: Y.forbiddenHtml }
          : { status: 404, text: "not here" }
      )
      const market = makeMemoryMarketStore()
      const equity = makeMemoryEquityStore()
      yield* seed(equity)
      const scope = yield* Scope.make()
      yield* startLiveFeeds({
        market,
        equity,
        config: liveWith(server.url, "yahoo"),
        leader: makeMemoryLeaderLock()
      }).pipe(Scope.provide(scope))
      assert.isTrue(yield* eventually(() => Effect.map(pricesStatus(market), (s) => s?.failing === true)))
      assert.include((yield* pricesStatus(market))?.lastError ?? "", "HTTP 403")
      assert.strictEqual(
        server.requests.find((r) => r.path.startsWith("/v8/"))?.headers["user-agent"]?.includes("service-market-data"),
        true
      )
      yield* Scope.close(scope, Exit.void)
    }).pipe(Effect.scoped)
  )

  it.live("MARKET_DATA_PRICES=off: no request to the price source and no status", () =>
    Effect.gen(function* () {
      const server = yield* fakeServer(() => ({ status: 404, text: "not here" }))
      const market = makeMemoryMarketStore()
      const equity = makeMemoryEquityStore()
      yield* seed(equity)
      const scope = yield* Scope.make()
      yield* startLiveFeeds({
        market,
        equity,
        config: liveWith(server.url, "off"),
        leader: makeMemoryLeaderLock()
      }).pipe(Scope.provide(scope))
      // SEC EDGAR's ticker job asks the server: once it has, the feeds are running.
      assert.isTrue(yield* eventually(() => server.requests.length > 0))
      yield* realPause(300)
      assert.isUndefined(server.requests.find((r) => r.path.startsWith("/v8/")))
      assert.isUndefined(yield* pricesStatus(market))
      yield* Scope.close(scope, Exit.void)
    }).pipe(Effect.scoped)
  )
})

describe("price connector configuration", () => {
  it.effect("MARKET_DATA_PRICES and MARKET_DATA_PRICES_PER_MINUTE are read and checked", () =>
    Effect.gen(function* () {
      const env = (extra: Record<string, string>) =>
        ConfigProvider.layer(
          ConfigProvider.fromEnvRecord({ MARKET_DATA_SEC_USER_AGENT: "Tests tests@example.com", ...extra })
        )
      const defaults = yield* loadLiveConfig.pipe(Effect.provide(env({})))
      assert.strictEqual(defaults.prices, "yahoo")
      assert.strictEqual(defaults.pricesPerMinute, 60)
      assert.strictEqual(defaults.baseUrls.prices, "https://query1.finance.yahoo.com")
      const set = yield* loadLiveConfig.pipe(
        Effect.provide(
          env({
            MARKET_DATA_PRICES: "off",
            MARKET_DATA_PRICES_PER_MINUTE: "20",
            MARKET_DATA_PRICES_BASE_URL: "http://127.0.0.1:9/y/"
          })
        )
      )
      assert.deepStrictEqual(
        [set.prices, set.pricesPerMinute, set.baseUrls.prices],
        ["off", 20, "http://127.0.0.1:9/y"]
      )
      const bad = yield* Effect.flip(loadLiveConfig.pipe(Effect.provide(env({ MARKET_DATA_PRICES: "stooq" }))))
      assert.strictEqual(bad.variable, "MARKET_DATA_PRICES")
      const rate = yield* Effect.flip(
        validateLiveConfig(liveConfig({ secUserAgent: "T t@example.com", pricesPerMinute: 0 }))
      )
      assert.strictEqual(rate.variable, "MARKET_DATA_PRICES_PER_MINUTE")
    })
  )
})

describe("price connector over the whole ticker list", () => {
  const GENERATED = 1_000
  const tickerOf = (i: number) => `T${String(i).padStart(4, "0")}`
  const cikOf = (i: number) => String(2_000_000 + i)
  const days = Y.DAYS.slice(-6)
  /** The generated tickers and a Form 4 issuer's answer a short chart; BAD1 is unknown; the rest as `yahooRoute`. */
  const route = (r: FakeRequest): Reply => {
    const m = /^\/v8\/finance\/chart\/(T\d{4}|F4CO)$/.exec(r.path)
    if (m !== null) return { json: Y.chartJson({ symbol: m[1] as string, days, nullRow: -1 }) }
    return yahooRoute(r)
  }
  const form4 = (cik: string, ticker: string, accession: string) => ({
    form: "4",
    accession,
    filedAt: "2026-10-01",
    periodOfReport: "2026-09-30",
    issuerCik: cik,
    issuerName: `Issuer ${cik}`,
    issuerTicker: ticker,
    owners: [],
    transactions: [],
    dateOfOriginalSubmission: null
  })

  it.effect(
    "every issuer of a 1,000-ticker list gets bars, one request each at the limiter's pace; no ticker: counted",
    () =>
      Effect.gen(function* () {
        const { server, equity, market } = yield* setup(route)
        yield* equity.putTickers(
          Array.from({ length: GENERATED }, (_, i) => ({
            cik: cikOf(i),
            ticker: tickerOf(i),
            name: `Generated ${i}`,
            exchange: "Nasdaq"
          }))
        )
        // An issuer whose first ticker (by the list's order) the source does not know: a problem; its other is fetched.
        yield* equity.putTickers([
          { cik: "3000001", ticker: "BAD1", name: "Two Lines Inc.", exchange: "NYSE" },
          { cik: "3000001", ticker: tickerOf(GENERATED), name: "Two Lines Inc.", exchange: "NYSE" }
        ])
        // Form 4 issuers: one naming a ticker (an asset, fetched), one naming none (skipped, counted).
        yield* equity.putOwnershipReports([
          form4("4000001", "F4CO", "0000000000-26-000001"),
          form4("4000002", "NONE", "0000000000-26-000002")
        ])
        const base = makePriceLimiter(6_000)
        const takes: Array<number> = []
        const limiter = {
          ...base,
          take: (w?: number) =>
            Effect.andThen(
              base.take(w),
              Effect.flatMap(Clock.currentTimeMillis, (t) => Effect.sync(() => takes.push(t)))
            )
        }
        const feed = makePriceFeed(
          equity,
          { baseUrl: server.url, timeoutMs: 5_000, backfillDays: PRICES_BACKFILL_DAYS, userAgent: UA },
          limiter
        )
        const report = yield* runPricePass(feed, market)
        // AAPL and SNOW (the seed), the generated list, the two tickers of the two-line issuer and the Form 4
        // issuer's ticker: every ticker is an asset of its own.
        const tickers = GENERATED + 5
        assert.strictEqual(report.targets, tickers)
        assert.strictEqual(report.fetched, tickers)
        assert.strictEqual(report.withoutTicker, 1)
        assert.deepStrictEqual(
          report.problems.filter((p) => p.includes("not found")),
          ["BAD1: not found (HTTP 404)"]
        )

        // One request per ticker; every request through the limiter, spaced by it.
        const charts = server.requests.filter((r) => r.path.startsWith("/v8/finance/chart/"))
        assert.strictEqual(charts.length, tickers)
        assert.strictEqual(new Set(charts.map((r) => r.path)).size, tickers)
        assert.strictEqual(takes.length, charts.length)
        for (let i = 1; i < takes.length; i++) {
          assert.isAtLeast((takes[i] as number) - (takes[i - 1] as number), base.windowMs, `request ${i}`)
        }

        // Every asset of the ticker list has prices: each generated CIK holds its bars, as do the others.
        const held = new Map((yield* equity.issuers).map((x) => [x.company.cik, x.coverage.bars]))
        for (let i = 0; i < GENERATED; i++) assert.strictEqual(held.get(cikOf(i)), days.length - 1, tickerOf(i))
        assert.strictEqual(held.get("3000001"), days.length - 1)
        assert.strictEqual(held.get("4000001"), days.length - 1)
        assert.strictEqual(held.get("4000002"), 0)

        const status = yield* pricesStatus(market)
        assert.strictEqual(status?.failing, false)
        assert.include(status?.detail ?? "", "1 issuer without a ticker skipped")

        // The rest of the session: nothing is asked again.
        yield* TestClock.setTime(Y.NOW_MS + 3_600_000)
        const again = yield* runPricePass(feed, market)
        assert.strictEqual(again.fetched, 0)
        assert.strictEqual(again.upToDate, tickers)
        assert.strictEqual(server.requests.filter((r) => r.path.startsWith("/v8/")).length, tickers)
      }).pipe(Effect.scoped)
  )

  it.effect("after the next close, every ticker is asked again, the unknown one too (once per closed session)", () =>
    Effect.gen(function* () {
      const { server, equity, market, feed } = yield* setup(route)
      yield* equity.putTickers([
        { cik: "3000001", ticker: "BAD1", name: "Two Lines Inc.", exchange: "NYSE" },
        { cik: "3000001", ticker: "T0001", name: "Two Lines Inc.", exchange: "NYSE" }
      ])
      yield* runPricePass(feed, market)
      yield* TestClock.setTime(Y.NOW_MS + 3_600_000)
      yield* runPricePass(feed, market)
      yield* TestClock.setTime(Equity.sessionCloseMs(Y.TODAY) + 30 * 60_000)
      yield* runPricePass(feed, market)
      const paths = server.requests.map((r) => r.path).filter((p) => p.endsWith("BAD1") || p.endsWith("T0001"))
      assert.deepStrictEqual(paths, [chartPath("BAD1"), chartPath("T0001"), chartPath("BAD1"), chartPath("T0001")])
      assert.lengthOf(yield* equity.bars("3000001", "T0001", {}), days.length, "through today's close")
      assert.lengthOf(yield* equity.bars("3000001", "BAD1", {}), 0)
    }).pipe(Effect.scoped)
  )
})
