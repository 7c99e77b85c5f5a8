/**
 * What a live feed does when its source misbehaves: 429 with Retry-After (the backoff waits as told), 5xx,
 * malformed JSON, a malformed field, a truncated body, a server that never answers (timeout), no server at all
 * (connection refused). Each time: no crash, nothing of the bad answer stored, the components marked failing
 * (freshness `stale`), and the next successful poll clears it.
 */
import { assert, describe, it } from "@effect/vitest"
import { type Component, freshnessOf, MarketStore, type SourceStatus } from "@market-data/core"
import { Duration, Effect, Fiber, Layer, Schedule } from "effect"
import { TestClock } from "effect/testing"
import { makeMemoryMarketStore } from "../../../memory/src/MemoryMarketStore.ts"
import { makeCryptoFeed } from "../../src/live/CryptoFeed.ts"
import { fetchText, parseRetryAfterMs, SourceError } from "../../src/live/Http.ts"
import { backoffSchedule, delayToNextSlot } from "../../src/live/Schedules.ts"
import { makeBinance } from "../../src/live/venues/binance/Rest.ts"
import { eventually, type FakeRequest, fakeServer, type Reply, realPause, refusedUrl } from "./FakeServer.ts"
import * as F from "./fixtures/Binance.ts"
import { binanceRoute } from "./fixtures/Binance.ts"

const ASSETS = ["crypto:bitcoin"]

const setup = (baseUrl: (serverUrl: string) => string = (u) => u, timeoutMs = 5_000) =>
  Effect.gen(function* () {
    const store = makeMemoryMarketStore()
    let fault: ((r: FakeRequest) => Reply | undefined) | undefined
    const server = yield* fakeServer((r) => fault?.(r) ?? binanceRoute(r))
    const feed = yield* makeCryptoFeed(makeBinance({ baseUrl: baseUrl(server.url), timeoutMs }), {
      backfillDays: 1,
      fundingBackfillDays: 2,
      jitterMs: 0,
      assetIds: ASSETS
    }).pipe(Effect.provide(Layer.succeed(MarketStore)(store)))
    const status = (component: Component) =>
      Effect.map(store.status, (all) => all.find((s) => s.venue === "binance" && s.component === component))
    return {
      store,
      server,
      feed,
      status,
      breakWith: (f: ((r: FakeRequest) => Reply | undefined) | undefined) => {
        fault = f
      }
    }
  })

const stale = (s: SourceStatus | undefined, nowMs: number) => (s === undefined ? "none" : freshnessOf(s, nowMs))

describe("Retry-After and the backoff schedule", () => {
  it("reads Retry-After as seconds or as an HTTP date", () => {
    assert.strictEqual(parseRetryAfterMs("120", 0), 120_000)
    assert.strictEqual(parseRetryAfterMs("Fri, 20 Nov 2026 12:08:00 GMT", Date.parse("2026-11-20T12:07:00Z")), 60_000)
    assert.isUndefined(parseRetryAfterMs(null, 0))
    assert.isUndefined(parseRetryAfterMs("soon", 0))
  })

  it.effect("backs off 2 s, 4 s, 8 s (±20 %), capped, and never sooner than Retry-After", () =>
    Effect.gen(function* () {
      const step = yield* Schedule.toStep(backoffSchedule(10_000))
      const plain = new SourceError({ source: "t", kind: "status", what: "x", message: "503", status: 503 })
      const told = new SourceError({
        source: "t",
        kind: "status",
        what: "x",
        message: "429",
        status: 429,
        retryAfterMs: 60_000
      })
      const delays: Array<number> = []
      for (const input of [plain, plain, plain, plain, told]) {
        const [, d] = yield* step(0, input)
        delays.push(Duration.toMillis(d))
      }
      assert.isTrue((delays[0] as number) >= 1_600 && (delays[0] as number) <= 2_400, `first ${delays[0]}`)
      assert.isTrue((delays[1] as number) >= 3_200 && (delays[1] as number) <= 4_800, `second ${delays[1]}`)
      assert.isTrue((delays[2] as number) >= 6_400 && (delays[2] as number) <= 9_600, `third ${delays[2]}`)
      assert.strictEqual(delays[3], 10_000, "capped")
      assert.strictEqual(delays[4], 60_000, "Retry-After wins over the cap")
    })
  )

  it("polls on the cadence grid plus an offset", () => {
    const at = (hhmmss: string) => Date.parse(`2026-11-20T${hhmmss}.000Z`)
    assert.strictEqual(delayToNextSlot(at("12:07:00"), 15 * 60_000, 3_000), at("12:15:03") - at("12:07:00"))
    assert.strictEqual(delayToNextSlot(at("12:15:02"), 15 * 60_000, 3_000), 1_000)
    assert.strictEqual(delayToNextSlot(at("12:15:03"), 15 * 60_000, 3_000), 15 * 60_000)
  })
})

describe("a live feed under faults", () => {
  it.effect("429 with Retry-After: marked failing, waits as told, then recovers on the next attempt", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(F.NOW_MS)
      const { server, feed, status, breakWith } = yield* setup()
      let answered429 = 0
      breakWith((r) => {
        if (r.path !== "/fapi/v1/premiumIndex" || answered429 > 0) return undefined
        answered429++
        return { status: 429, headers: { "Retry-After": "40" }, json: { code: -1003, msg: "Too many requests" } }
      })
      const premium = () => server.requests.filter((q) => q.path === "/fapi/v1/premiumIndex").length
      const fiber = yield* Effect.forkChild(feed.scheduled.tickers)
      assert.isTrue(yield* eventually(() => Effect.map(status("openInterest"), (s) => s?.failing === true)))
      const failing = yield* status("openInterest")
      assert.include(failing?.detail ?? "", "HTTP 429")
      assert.strictEqual(stale(failing, F.NOW_MS), "stale")
      yield* TestClock.adjust("39 seconds")
      yield* realPause(100)
      assert.strictEqual(premium(), 1, "no retry before Retry-After has passed")
      yield* TestClock.adjust("2 seconds")
      assert.isTrue(yield* eventually(() => Effect.map(status("openInterest"), (s) => s?.failing === false)))
      assert.strictEqual(premium(), 2)
      const ok = yield* status("openInterest")
      assert.strictEqual(stale(ok, F.NOW_MS + 41_000), "live")
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.scoped)
  )

  const faultCase = (name: string, reply: Reply, expectKind: string, options: { readonly timeoutMs?: number } = {}) =>
    it.live(`${name}: failing with nothing stored, no crash, recovered by the next poll`, () =>
      Effect.gen(function* () {
        const { store, feed, status, breakWith } = yield* setup(undefined, options.timeoutMs ?? 5_000)
        yield* feed.once.listings
        breakWith((r) => (r.path === "/fapi/v1/klines" ? reply : undefined))
        const failed = yield* Effect.flip(feed.once.bars)
        assert.strictEqual(failed.kind, expectKind)
        const s = yield* status("bars")
        assert.isTrue(s?.failing)
        assert.strictEqual(s?.newestMs, 0)
        assert.include(s?.detail ?? "", `${expectKind}:`)
        assert.strictEqual(stale(s, Date.now()), "stale")
        assert.lengthOf(
          yield* store.read("bars", { assetId: "crypto:bitcoin", fromMs: 0, toMs: Number.MAX_SAFE_INTEGER }),
          0
        )
        assert.lengthOf(
          yield* store.read("takerFlow", { assetId: "crypto:bitcoin", fromMs: 0, toMs: Number.MAX_SAFE_INTEGER }),
          0
        )
        // The source mends: the next poll stores and clears the flag.
        breakWith((r) =>
          r.path === "/fapi/v1/klines"
            ? {
                json: [
                  [
                    Math.floor(Date.now() / 900_000) * 900_000 - 900_000,
                    "1",
                    "2",
                    "0.5",
                    "1.5",
                    "10",
                    0,
                    "15",
                    1,
                    "5",
                    "7.5",
                    "0"
                  ]
                ]
              }
            : undefined
        )
        yield* feed.once.bars
        const mended = yield* status("bars")
        assert.isFalse(mended?.failing)
        assert.isUndefined(mended?.detail)
        assert.strictEqual(stale(mended, Date.now()), "live")
      }).pipe(Effect.scoped)
    )

  faultCase("HTTP 503", { status: 503, text: "<html>Service Unavailable</html>" }, "status")
  faultCase("malformed JSON", { text: '{"not": json' }, "format")
  faultCase(
    "a malformed field (a price that is not a number)",
    {
      json: [
        [Math.floor(Date.now() / 900_000) * 900_000 - 1_800_000, "abc", "1", "1", "1", "1", 0, "1", 1, "1", "1", "0"]
      ]
    },
    "format"
  )
  faultCase("an answer that is not the documented shape", { json: { code: -1121, msg: "Invalid symbol." } }, "format")
  faultCase("a truncated body", "truncate", "network")
  faultCase("a server that never answers", "hang", "timeout", { timeoutMs: 300 })

  it.effect("a 403 (the venue refusing this client) stops the run at once: the other symbols are not tried", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(F.NOW_MS)
      const store = makeMemoryMarketStore()
      const server = yield* fakeServer((r) =>
        r.path === "/fapi/v1/klines" ? { status: 403, text: "Forbidden" } : binanceRoute(r)
      )
      const feed = yield* makeCryptoFeed(makeBinance({ baseUrl: server.url, timeoutMs: 5_000 }), {
        backfillDays: 1,
        fundingBackfillDays: 2,
        jitterMs: 0,
        assetIds: ["crypto:bitcoin", "crypto:sui", "crypto:pepe"]
      }).pipe(Effect.provide(Layer.succeed(MarketStore)(store)))
      yield* feed.once.listings
      const e = yield* Effect.flip(feed.once.bars)
      assert.deepStrictEqual([e.kind, e.status], ["status", 403])
      assert.lengthOf(
        server.requests.filter((q) => q.path === "/fapi/v1/klines"),
        1
      )
    }).pipe(Effect.scoped)
  )

  it.live("no server at all (connection refused): failing, no crash", () =>
    Effect.gen(function* () {
      const url = yield* refusedUrl
      const { feed, status } = yield* setup(() => url)
      const failed = yield* Effect.flip(feed.once.bars)
      assert.strictEqual(failed.kind, "network")
      assert.include(failed.message, "ECONNREFUSED")
      const s = yield* status("bars")
      assert.isTrue(s?.failing)
      assert.strictEqual(stale(s, Date.now()), "stale")
    }).pipe(Effect.scoped)
  )

  it.effect("a request that hangs is abandoned at the timeout, not before", () =>
    Effect.gen(function* () {
      const server = yield* fakeServer(() => "hang")
      const fiber = yield* Effect.forkChild(
        Effect.flip(fetchText({ source: "t", url: `${server.url}/x`, timeoutMs: 200 }))
      )
      // The server holds the request (real I/O, waited for in real time); the timeout runs on the Clock.
      assert.isTrue(yield* eventually(() => server.requests.length === 1), "the request reached the server")
      yield* TestClock.adjust("199 millis")
      assert.isUndefined(fiber.pollUnsafe(), "still waiting 1 ms before the timeout")
      yield* TestClock.adjust("1 millis")
      const e = yield* Fiber.join(fiber)
      assert.strictEqual(e.kind, "timeout")
      assert.include(e.message, "200 ms")
    }).pipe(Effect.scoped)
  )
})
