/**
 * `startLiveFeeds`: configuration checked first; of two instances sharing one leader lock exactly one ingests
 * (its store receives source statuses, the other's none); when the leader stops, the other takes over. The
 * sources here are a local fake that answers 503 to everything, so also: an unreachable world degrades to
 * `failing` statuses and never crashes.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { makeMemoryEquityStore } from "../../../memory/src/MemoryEquityStore.ts"
import { makeMemoryLeaderLock } from "../../../memory/src/MemoryLeaderLock.ts"
import { makeMemoryMarketStore } from "../../../memory/src/MemoryMarketStore.ts"
import { type LiveConfig, LiveEnvironment, liveConfig } from "../../src/live/LiveConfig.ts"
import { liveSourcesDoc } from "../../src/live/LiveDoc.ts"
import { startLiveFeeds } from "../../src/live/LiveFeeds.ts"
import { eventually, fakeServer, realPause, refusedUrl, sharedSecPresent, sharedText } from "./FakeServer.ts"

const configFor = (url: string, instanceId: string): LiveConfig =>
  liveConfig({
    secUserAgent: "Market Data Tests tests@example.com",
    venues: ["binance", "hyperliquid"],
    baseUrls: { binance: url, bybit: url, okx: url, hyperliquid: url, secData: url, secArchives: url, prices: url },
    secCiks: ["320193"],
    sec13fFilers: [],
    backfillDays: 1,
    requestTimeoutMs: 1_000,
    jitterMs: 0,
    leaderLeaseMs: 300,
    instanceId
  })

const instance = (config: LiveConfig, leader: ReturnType<typeof makeMemoryLeaderLock>) =>
  Effect.gen(function* () {
    const market = makeMemoryMarketStore()
    const equity = makeMemoryEquityStore()
    const scope = yield* Scope.make()
    yield* startLiveFeeds({ market, equity, config, leader }).pipe(Scope.provide(scope))
    return { market, equity, scope, statuses: () => Effect.map(market.status, (s) => s.length) }
  })

describe("startLiveFeeds", () => {
  it.effect("refuses to start without a SEC User-Agent", () =>
    Effect.gen(function* () {
      const e = yield* Effect.flip(
        startLiveFeeds({
          market: makeMemoryMarketStore(),
          equity: makeMemoryEquityStore(),
          config: { ...configFor("http://127.0.0.1:9", "a"), secUserAgent: "" },
          leader: makeMemoryLeaderLock()
        }).pipe(Effect.scoped)
      )
      assert.strictEqual(e.variable, "MARKET_DATA_SEC_USER_AGENT")
    })
  )

  it.live("one of two instances ingests; the other takes over when the leader stops", () =>
    Effect.gen(function* () {
      const server = yield* fakeServer(() => ({ status: 503, text: "down for maintenance" }))
      const inner = makeMemoryLeaderLock()
      // Counts b's attempts to take the lock: the test waits on them instead of on time.
      let bAttempts = 0
      const lock: typeof inner = {
        ...inner,
        acquire: (name, holder, leaseMs) =>
          Effect.suspend(() => {
            if (holder === "b") bAttempts++
            return inner.acquire(name, holder, leaseMs)
          })
      }
      const a = yield* instance(configFor(server.url, "a"), lock)
      const b = yield* instance(configFor(server.url, "b"), lock)

      // a came first and leads: its store shows the (failing) sources, b's shows nothing after b has been
      // refused the lock three times (an attempt every lease / 3).
      assert.isTrue(yield* eventually(() => Effect.map(a.statuses(), (n) => n > 0)))
      assert.isTrue(yield* eventually(() => bAttempts >= 3), "b keeps contending")
      assert.strictEqual(yield* b.statuses(), 0, "b does not ingest while a leads")
      const failing = yield* a.market.status
      assert.isTrue(failing.every((s) => s.failing && s.source === "live"))
      // The venues and SEC EDGAR (its status under venue `sec`).
      assert.sameMembers([...new Set(failing.map((s) => s.venue))], ["binance", "hyperliquid", "sec"])
      assert.isTrue(failing.every((s) => (s.detail ?? "").includes("HTTP 503")))

      // a stops (shutdown releases the lock): b takes over within a third of the lease.
      yield* Scope.close(a.scope, Exit.void)
      assert.isTrue(yield* eventually(() => Effect.map(b.statuses(), (n) => n > 0)))
      yield* Scope.close(b.scope, Exit.void)
    }).pipe(Effect.scoped)
  )

  it.live("a leader that loses its lock (a failed renewal) stops ingesting at once", () =>
    Effect.gen(function* () {
      const server = yield* fakeServer(() => ({ status: 503, text: "down" }))
      const inner = makeMemoryLeaderLock()
      let taken = false
      // Another instance takes the lock: this one's renewals and attempts are refused from then on.
      const lock: typeof inner = {
        acquire: (name, holder, leaseMs) => (taken ? Effect.succeed(false) : inner.acquire(name, holder, leaseMs)),
        renew: (name, holder, leaseMs) => (taken ? Effect.succeed(false) : inner.renew(name, holder, leaseMs)),
        release: inner.release
      }
      const a = yield* instance(configFor(server.url, "a"), lock)
      assert.isTrue(yield* eventually(() => server.requests.length > 0))
      taken = true
      // Within a renewal period (lease / 3 = 100 ms) the feeds are interrupted; in-flight requests finish.
      yield* realPause(400)
      const settled = server.requests.length
      // Longer than the first backoff (at most 2.4 s): a feed still running would have retried by then.
      yield* realPause(3_000)
      assert.strictEqual(server.requests.length, settled, "no request after the lock was lost")
      yield* Scope.close(a.scope, Exit.void)
    }).pipe(Effect.scoped)
  )

  it.live("a defect inside ingestion (a store that throws once) restarts ingestion instead of ending it", () =>
    Effect.gen(function* () {
      const server = yield* fakeServer(() => ({ status: 503, text: "down" }))
      const inner = makeMemoryMarketStore()
      let thrown = 0
      const market: typeof inner = {
        ...inner,
        putStatus: (rows) =>
          thrown === 0
            ? Effect.sync(() => {
                thrown++
              }).pipe(Effect.andThen(Effect.die(new Error("store bug"))))
            : inner.putStatus(rows)
      }
      const scope = yield* Scope.make()
      yield* startLiveFeeds({
        market,
        equity: makeMemoryEquityStore(),
        config: configFor(server.url, "a"),
        leader: makeMemoryLeaderLock()
      }).pipe(Scope.provide(scope))
      assert.isTrue(yield* eventually(() => Effect.map(inner.status, (st) => st.length > 0)))
      assert.strictEqual(thrown, 1)
      yield* Scope.close(scope, Exit.void)
    }).pipe(Effect.scoped)
  )

  it.live("starting with no network at all degrades to failing sources and keeps running", () =>
    Effect.gen(function* () {
      const url = yield* refusedUrl
      const lock = makeMemoryLeaderLock()
      const a = yield* instance(configFor(url, "offline"), lock)
      assert.isTrue(
        yield* eventually(() =>
          Effect.map(a.market.status, (s) =>
            s.some((x) => x.venue === "binance" && x.failing && (x.detail ?? "").includes("network"))
          )
        )
      )
      // Still leading and retrying: the lock is held, the process is fine.
      assert.isFalse(yield* lock.acquire("market-data/live-ingest", "someone-else", 300))
      yield* Scope.close(a.scope, Exit.void)
      assert.isTrue(yield* lock.acquire("market-data/live-ingest", "someone-else", 300), "released at shutdown")
    }).pipe(Effect.scoped)
  )
})

describe(
  sharedSecPresent
    ? "startLiveFeeds with SEC EDGAR"
    : "startLiveFeeds with SEC EDGAR (SKIPPED: ../shared/data/sec is absent)",
  () => {
    it.live.skipIf(!sharedSecPresent)(
      "ingests the covered company's filings and its ticker row from a fake EDGAR",
      () =>
        Effect.gen(function* () {
          const submissions = sharedText("sec/submissions/CIK0000320193.json")
          const facts = sharedText("sec/companyfacts/CIK0000320193.json")
          const tickers = sharedText("sec/tickers/company_tickers.json")
          const server = yield* fakeServer((r) =>
            r.path === "/submissions/CIK0000320193.json"
              ? { text: submissions }
              : r.path === "/api/xbrl/companyfacts/CIK0000320193.json"
                ? { text: facts }
                : r.path === "/files/company_tickers.json"
                  ? { text: tickers }
                  : { status: 404, text: "not here" }
          )
          const equity = makeMemoryEquityStore()
          const scope = yield* Scope.make()
          yield* startLiveFeeds({
            market: makeMemoryMarketStore(),
            equity,
            config: { ...configFor(server.url, "sec"), venues: [] },
            leader: makeMemoryLeaderLock()
          }).pipe(Scope.provide(scope))
          assert.isTrue(yield* eventually(() => Effect.map(equity.tickers, (t) => t.length > 0)))
          assert.isTrue(yield* eventually(() => Effect.map(equity.filings("320193"), (f) => f.length >= 1005)))
          const rows = yield* equity.tickers
          assert.isTrue(
            rows.every((t) => t.cik === "320193"),
            "only covered companies' rows"
          )
          assert.isTrue(rows.some((t) => t.ticker === "AAPL"))
          assert.strictEqual((yield* equity.company("320193"))?.name, "Apple Inc.")
          yield* Scope.close(scope, Exit.void)
        }).pipe(Effect.scoped)
    )
  }
)

describe("liveSourcesDoc", () => {
  it("names every venue, every variable, the limits and the failure behaviour, with no unfilled value", () => {
    for (const word of [
      "Binance",
      "Bybit",
      "OKX",
      "Hyperliquid",
      "SEC EDGAR",
      "ctVal",
      "kPEPE",
      "1000PEPEUSDT",
      "Retry-After"
    ])
      assert.include(liveSourcesDoc, word)
    for (const [name] of LiveEnvironment) assert.include(liveSourcesDoc, `\`${name}\``)
    assert.notInclude(liveSourcesDoc, "undefined")
    assert.notInclude(liveSourcesDoc, "NaN")
    assert.include(liveSourcesDoc, "every 15 min, a few seconds after the bar closes")
  })
})
