/**
 * The tier rule's history half (DirectoryDoc "Tiers"): a perpetual on two venues is `core` at once, served, and
 * until its baselines hold `MinBaselineN` hourly samples its percentiles answer `insufficient_history` with the
 * sample count, and `rank` counts it as excluded under that reason (scanned, not ranked, not hidden).
 */
import { assert, describe, it } from "@effect/vitest"
import { makeMemoryMarketStore } from "@market-data/memory"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { cryptoAsset } from "../../src/crypto/Assets.ts"
import { makeCryptoPlane } from "../../src/crypto/CryptoPlane.ts"
import { MarketStore } from "../../src/crypto/Market.ts"
import { decodeParams, isApiError } from "../../src/Params.ts"
import { MinBaselineN } from "../../src/Percentile.ts"
import type { Handler, HandlerInput } from "../../src/Pipeline.ts"
import { planeHandlers } from "../../src/Planes.ts"
import { operation } from "../../src/Registry.ts"
import { buildFixture, writeFixture } from "./support/MarketFixture.ts"

const END = Date.UTC(2026, 10, 20, 12, 0)
const NOW = END + 60_000
const asset = (id: string) => cryptoAsset(id) as NonNullable<ReturnType<typeof cryptoAsset>>
/** Bitcoin with 100 days behind it; Ethereum, also core, listed two days ago. */
const LONG = buildFixture([asset("crypto:bitcoin")], END, 100, 42)
const SHORT = buildFixture([asset("crypto:ethereum")], END, 2, 43)

const setup = Effect.gen(function* () {
  const store = makeMemoryMarketStore()
  yield* writeFixture(store, [...LONG, ...SHORT], END)
  yield* TestClock.setTime(NOW)
  const plane = yield* makeCryptoPlane.pipe(Effect.provideService(MarketStore, store))
  const handlers = planeHandlers([plane])
  return (name: string, params: ReadonlyArray<readonly [string, unknown]>) =>
    Effect.gen(function* () {
      const op = operation(name)
      if (op === undefined) return assert.fail(`no operation ${name}`)
      const decoded = decodeParams(op, params)
      if (isApiError(decoded)) return assert.fail(decoded.message)
      const input: HandlerInput = {
        op,
        params: decoded,
        principal: { _tag: "Anonymous", client: "test", rateLimitPerMinute: 60 },
        rate: { limit: 60, remaining: 59, resetAtMs: NOW, allowed: true },
        nowMs: NOW
      }
      const out = yield* (handlers.get(name) as Handler)(input)
      assert.strictEqual(out._tag, "Json")
      return (out as { body: { data: any } }).body.data
    })
})

describe("a core asset whose history is shorter than its baselines need", () => {
  it.effect("is core and served now: its value is there, its percentiles say insufficient_history with the count", () =>
    Effect.gen(function* () {
      const call = yield* setup
      assert.strictEqual(asset("crypto:ethereum").tier, "core")
      const price = yield* call("price", [["id", "crypto:ethereum"]])
      assert.strictEqual(price.status, "live")
      assert.isNumber(price.usd)
      // return_24h is computed (two days of bars), but its baseline has fewer hourly samples than a percentile needs.
      assert.isNull(price.return_24h_pct)
      const why = price.unavailable.return_24h_pct
      assert.strictEqual(why.reason, "insufficient_history")
      const n = Number(/^(\d+) baseline samples/.exec(why.detail)?.[1])
      assert.isBelow(n, MinBaselineN)
      assert.include(why.detail, `at least ${MinBaselineN}`)
      // Bitcoin, with a hundred days behind it, has the percentile.
      const btc = yield* call("price", [["id", "crypto:bitcoin"]])
      assert.isNumber(btc.return_24h_pct.pctl)
    })
  )

  it.effect("rank scans it and counts it excluded as insufficient_history; the long-history asset is ranked", () =>
    Effect.gen(function* () {
      const call = yield* setup
      const r = yield* call("rank", [
        ["metric", "return_24h_pct"],
        ["limit", "50"]
      ])
      assert.deepStrictEqual(
        r.rows.map((row: { asset_id: string }) => row.asset_id),
        ["crypto:bitcoin"]
      )
      assert.strictEqual(r.coverage.excluded_by_reason.insufficient_history, 1)
      assert.strictEqual(r.coverage.ranked, 1)
      assert.strictEqual(r.coverage.scanned, r.coverage.ranked + r.coverage.excluded)
    })
  )
})
