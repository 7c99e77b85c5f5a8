/**
 * The crypto plane over the simulated market (the service's default feed): a year of history for the whole
 * universe, backfilled once into the in-memory store. Every core asset must answer every crypto operation with
 * real numbers and percentiles (nothing `unavailable`), in the documented shapes; the other tiers answer what
 * their tier serves and are refused the rest.
 */
import { assert, layer } from "@effect/vitest"
import { makeMemoryMarketStore } from "@market-data/memory"
import { SimulatedCrypto } from "@market-data/sources"
import { Context, Effect, Exit, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"
import { CryptoAssets } from "../../src/crypto/Assets.ts"
import { makeCryptoPlane } from "../../src/crypto/CryptoPlane.ts"
import { MarketStore } from "../../src/crypto/Market.ts"
import type { ApiError } from "../../src/Errors.ts"
import { decodeParams, isApiError } from "../../src/Params.ts"
import type { Handler, HandlerInput } from "../../src/Pipeline.ts"
import { type PlaneOperations, planeHandlers, tierServes } from "../../src/Planes.ts"
import { operation } from "../../src/Registry.ts"
import * as R from "../../src/Results.ts"

const NOW = Date.UTC(2026, 10, 20, 12, 0) + 60_000

class Simulated extends Context.Service<
  Simulated,
  { readonly plane: PlaneOperations; readonly handlers: ReadonlyMap<string, Handler> }
>()("test/crypto/Simulated") {
  static readonly layer = Layer.effect(Simulated)(
    Effect.gen(function* () {
      const store = makeMemoryMarketStore()
      const sim = SimulatedCrypto.makeSimulation({ seed: 7, nowMs: NOW })
      yield* SimulatedCrypto.backfill(sim, NOW).pipe(Effect.provideService(MarketStore, store))
      const plane = yield* makeCryptoPlane.pipe(Effect.provideService(MarketStore, store))
      const started = performance.now()
      yield* Effect.andThen(TestClock.setTime(NOW), plane.warm).pipe(Effect.provide(TestClock.layer()))
      console.info(
        `warm-up of the whole universe (a year of baselines each): ${(performance.now() - started).toFixed(0)} ms`
      )
      return { plane, handlers: planeHandlers([plane]) }
    })
  )
}

const call = (name: string, params: ReadonlyArray<readonly [string, unknown]>) =>
  Effect.gen(function* () {
    const { handlers } = yield* Simulated
    const op = operation(name) as NonNullable<ReturnType<typeof operation>>
    const decoded = decodeParams(op, params)
    if (isApiError(decoded)) return yield* Effect.fail(decoded)
    const input: HandlerInput = {
      op,
      params: decoded,
      principal: { _tag: "Anonymous", client: "test", rateLimitPerMinute: 60 },
      rate: { limit: 60, remaining: 59, resetAtMs: NOW, allowed: true },
      nowMs: NOW
    }
    const out = yield* (handlers.get(name) as Handler)(input)
    assert.strictEqual(out._tag, "Json")
    return out as Extract<typeof out, { _tag: "Json" }>
  })

const decodes = (name: string, body: unknown, batch = false) => {
  const op = operation(name) as NonNullable<ReturnType<typeof operation>>
  const schema = (batch ? R.batch(op.result) : R.single(op.result)) as unknown as Schema.Codec<unknown, unknown>
  // Strict: a field the schema (and so `schema`, OpenAPI and MCP outputSchema) does not declare fails.
  const exit = Schema.decodeUnknownExit(schema, { onExcessProperty: "error" })(body)
  if (Exit.isFailure(exit)) assert.fail(`${name} does not decode: ${String(exit.cause)}`)
}

/** Every `{value, pctl}` in a result, with its path. */
const contextuals = (x: unknown, path = ""): Array<[string, { value: number; pctl: number }]> => {
  if (x === null || typeof x !== "object") return []
  if ("value" in x && "pctl" in x) return [[path, x as { value: number; pctl: number }]]
  return Object.entries(x).flatMap(([k, v]) => contextuals(v, path === "" ? k : `${path}.${k}`))
}

const CORE = CryptoAssets.filter((a) => a.tier === "core").map((a) => a.id)
const PER_ASSET = [
  "read",
  "price",
  "funding",
  "open_interest",
  "orderflow",
  "liquidations",
  "liquidity",
  "technicals",
  "structure"
] as const

layer(Simulated.layer, { timeout: 120_000 })("crypto plane over the simulated market", (it) => {
  it.effect("every core asset answers every per-asset operation with numbers and percentiles, nothing missing", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      for (const name of PER_ASSET) {
        for (let i = 0; i < CORE.length; i += 10) {
          const ids = CORE.slice(i, i + 10)
          const out = yield* call(name, ids.length === 1 ? [["id", ids[0]]] : [["ids", ids.join(",")]])
          const body = out.body as { data: ReadonlyArray<any>; refused: ReadonlyArray<unknown> }
          if (ids.length > 1) {
            decodes(name, body, true)
            assert.deepStrictEqual(body.refused, [])
            assert.deepStrictEqual(
              body.data.map((d) => d.asset_id),
              ids
            )
          }
          for (const d of ids.length === 1 ? [body.data] : body.data) {
            assert.isUndefined(d.unavailable, `${name} ${d.asset_id}: ${JSON.stringify(d.unavailable)}`)
            assert.strictEqual(d.status, "live", `${name} ${d.asset_id}`)
            const cs = contextuals(d)
            if (name !== "structure") assert.isAbove(cs.length, 0, `${name} ${d.asset_id} has no contextual values`)
            for (const [path, c] of cs) {
              assert.isTrue(Number.isFinite(c.value), `${name} ${d.asset_id} ${path}`)
              assert.isTrue(c.pctl >= 0 && c.pctl <= 100, `${name} ${d.asset_id} ${path}`)
            }
          }
        }
      }
    })
  )

  it.effect("funding spreads its assets over the bands, and read assessments vary across the universe", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const reads: Array<any> = []
      for (let i = 0; i < CORE.length; i += 10) {
        const out = yield* call("read", [["ids", CORE.slice(i, i + 10).join(",")]])
        reads.push(...(out.body as { data: Array<any> }).data)
      }
      for (const r of reads) {
        assert.strictEqual(r.baseline.n, 2160)
        assert.strictEqual(r.baseline.source, "simulated")
        assert.isNumber(r.headline.price_usd)
      }
      const pctls = reads.map((r) => r.headline.funding_rate_8h_pct.pctl)
      assert.isAbove(Math.max(...pctls) - Math.min(...pctls), 20)
    })
  )

  it.effect("series and rank over the core tier", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      for (const id of CORE.slice(0, 3)) {
        const bars = yield* call("series", [["id", id]])
        decodes("series", bars.body)
        assert.strictEqual((bars.body as any).data.bars.length, 120)
        const summary = yield* call("series", [
          ["id", id],
          ["view", "summary"],
          ["range", "max"],
          ["interval", "1w"]
        ])
        decodes("series", summary.body)
        assert.isAbove((summary.body as any).data.summary.bar_count, 50)
      }
      // The first scan samples the baselines it has not seen yet; the second is the steady state.
      yield* call("rank", [["limit", "50"]])
      const started = performance.now()
      const rank = yield* call("rank", [["limit", "50"]])
      const warm = performance.now() - started
      decodes("rank", rank.body)
      const d = (rank.body as any).data
      assert.strictEqual(d.coverage.scanned, CORE.length)
      assert.strictEqual(d.coverage.ranked, CORE.length)
      assert.strictEqual(rank.creditsCharged, CORE.length)
      console.info(`rank over ${CORE.length} core assets, baselines warm: ${warm.toFixed(1)} ms`)
    })
  )

  it.effect("the other tiers answer what their tier serves and are refused the rest", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      for (const a of CryptoAssets.filter((x) => x.tier !== "core")) {
        for (const name of [...PER_ASSET, "series"] as const) {
          const served = tierServes(a.tier, name)
          const result = yield* Effect.result(call(name, [["id", a.id]]))
          if (!served) {
            assert.strictEqual(result._tag, "Failure", `${name} ${a.id}`)
            assert.strictEqual((result as { failure: ApiError }).failure.code, "not_covered")
            continue
          }
          assert.strictEqual(result._tag, "Success", `${name} ${a.id}`)
          const body = (result as { success: { body: any } }).success.body
          decodes(name, body)
          if (name === "price") assert.isNumber(body.data.usd, a.id)
        }
      }
    })
  )
})
