/**
 * Source health as the live connectors record it: a failure keeps the newest data time and the last success
 * and stores the error text; the next success clears it and moves the last success. SEC EDGAR records alike,
 * under venue `sec` (components `filings` and `tickers`), from a fake EDGAR that first fails, then answers.
 */
import { assert, describe, it } from "@effect/vitest"
import { freshnessOf, SEC_VENUE, type SourceStatus } from "@market-data/core"
import { Effect, Exit, Scope } from "effect"
import { TestClock } from "effect/testing"
import { makeMemoryEquityStore } from "../../../memory/src/MemoryEquityStore.ts"
import { makeMemoryLeaderLock } from "../../../memory/src/MemoryLeaderLock.ts"
import { makeMemoryMarketStore } from "../../../memory/src/MemoryMarketStore.ts"
import { recordFailure, recordSuccess } from "../../src/live/Health.ts"
import { liveConfig } from "../../src/live/LiveConfig.ts"
import { SEC_FILINGS, SEC_TICKERS, startLiveFeeds } from "../../src/live/LiveFeeds.ts"
import { eventually, fakeServer, sharedSecPresent, sharedText } from "./FakeServer.ts"

const BARS = { venue: "binance", component: "bars", cadenceMs: 15 * 60_000 } as const

describe("recordSuccess / recordFailure", () => {
  it.effect("keep newest time and last success through failures; the error lasts until the next success", () =>
    Effect.gen(function* () {
      const store = makeMemoryMarketStore()
      const get = Effect.map(store.status, (all) => all.find((s) => s.venue === "binance") as SourceStatus)
      yield* TestClock.setTime(1_000_000)
      yield* recordFailure(store, BARS, "network: /fapi/v1/klines: connection refused")
      let s = yield* get
      assert.deepStrictEqual(
        [s.failing, s.newestMs, s.lastSuccessMs, s.lastError, s.detail, s.checkedMs],
        [
          true,
          0,
          undefined,
          "network: /fapi/v1/klines: connection refused",
          "network: /fapi/v1/klines: connection refused",
          1_000_000
        ]
      )
      yield* TestClock.setTime(2_000_000)
      yield* recordSuccess(store, BARS, { newestMs: 1_900_000 })
      s = yield* get
      assert.deepStrictEqual(
        [s.failing, s.newestMs, s.lastSuccessMs, s.lastError, s.detail],
        [false, 1_900_000, 2_000_000, undefined, undefined]
      )
      yield* TestClock.setTime(3_000_000)
      yield* recordFailure(store, BARS, `status: /fapi/v1/klines: HTTP 502: ${"x".repeat(500)}`)
      s = yield* get
      assert.deepStrictEqual([s.failing, s.newestMs, s.lastSuccessMs], [true, 1_900_000, 2_000_000])
      assert.strictEqual(s.lastError?.length, 300, "error text is bounded")
      assert.strictEqual(freshnessOf(s, 3_000_000), "stale")
      // A success with older data keeps the newer stored time, and names what delivered nothing.
      yield* TestClock.setTime(4_000_000)
      yield* recordSuccess(store, BARS, { newestMs: 1_000, detail: "no data for ETHUSDT (format)" })
      s = yield* get
      assert.deepStrictEqual(
        [s.failing, s.newestMs, s.lastSuccessMs, s.lastError, s.detail],
        [false, 1_900_000, 4_000_000, undefined, "no data for ETHUSDT (format)"]
      )
    })
  )
})

describe(
  sharedSecPresent ? "SEC EDGAR source health" : "SEC EDGAR source health (SKIPPED: ../shared/data/sec is absent)",
  () => {
    it.live.skipIf(!sharedSecPresent)(
      "is recorded under venue sec: failing with the error while EDGAR fails, then live with a last success",
      () =>
        Effect.gen(function* () {
          const server = yield* fakeServer(() => ({ status: 503, text: "down for maintenance" }))
          const market = makeMemoryMarketStore()
          const scope = yield* Scope.make()
          const config = liveConfig({
            secUserAgent: "Market Data Tests tests@example.com",
            venues: [],
            baseUrls: {
              binance: server.url,
              bybit: server.url,
              okx: server.url,
              hyperliquid: server.url,
              secData: server.url,
              secArchives: server.url,
              prices: server.url
            },
            secCiks: ["320193"],
            sec13fFilers: [],
            backfillDays: 1,
            requestTimeoutMs: 1_000,
            jitterMs: 0,
            leaderLeaseMs: 300,
            instanceId: "health"
          })
          yield* startLiveFeeds({
            market,
            equity: makeMemoryEquityStore(),
            config,
            leader: makeMemoryLeaderLock()
          }).pipe(Scope.provide(scope))
          const sec = (component: string) =>
            Effect.map(market.status, (all) => all.find((s) => s.venue === SEC_VENUE && s.component === component))
          assert.isTrue(
            yield* eventually(() =>
              Effect.map(
                Effect.all([sec("filings"), sec("tickers")]),
                ([f, t]) => f?.failing === true && t?.failing === true
              )
            )
          )
          const failing = (yield* sec("filings")) as SourceStatus
          assert.match(failing.lastError ?? "", /^status: GET \/submissions\/CIK0000320193\.json: HTTP 503/)
          assert.deepStrictEqual(
            [failing.source, failing.newestMs, failing.lastSuccessMs, failing.cadenceMs],
            ["live", 0, undefined, SEC_FILINGS.cadenceMs]
          )
          assert.strictEqual((yield* sec("tickers"))?.cadenceMs, SEC_TICKERS.cadenceMs)

          const submissions = sharedText("sec/submissions/CIK0000320193.json")
          const facts = sharedText("sec/companyfacts/CIK0000320193.json")
          const tickers = sharedText("sec/tickers/company_tickers.json")
          server.setRoute((r) =>
            r.path === "/submissions/CIK0000320193.json"
              ? { text: submissions }
              : r.path === "/api/xbrl/companyfacts/CIK0000320193.json"
                ? { text: facts }
                : r.path === "/files/company_tickers.json"
                  ? { text: tickers }
                  : { status: 404, text: "not here" }
          )
          // The backoff retries after about 2 s.
          assert.isTrue(
            yield* eventually(() => Effect.map(sec("filings"), (s) => s !== undefined && !s.failing)).pipe(
              Effect.flatMap((ok) =>
                ok ? Effect.succeed(true) : eventually(() => Effect.map(sec("filings"), (s) => s?.failing === false))
              )
            )
          )
          const ok = (yield* sec("filings")) as SourceStatus
          assert.isUndefined(ok.lastError)
          assert.isAbove(ok.lastSuccessMs ?? 0, 0)
          assert.isAbove(ok.newestMs, 0, "the poll read EDGAR as of its start")
          assert.strictEqual(freshnessOf(ok, Date.now()), "live")
          yield* Scope.close(scope, Exit.void)
        }).pipe(Effect.scoped),
      30_000
    )
  }
)
