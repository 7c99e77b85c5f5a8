/**
 * A small deterministic plane for exercising the pipeline in tests: known assets answer a fixed result,
 * unknown ones are refused, and an asset can be made slow (gated on a latch) or transiently failing. It uses
 * the real `perAssetHandler`, so batches, refusals and charges follow production code.
 */
import { Effect, Latch, Ref } from "effect"
import { planeOf } from "../../src/AssetId.ts"
import { apiError } from "../../src/Errors.ts"
import { type AssetOutcome, perAssetHandler } from "../../src/PerAsset.ts"
import type { Handler } from "../../src/Pipeline.ts"

export interface TestPlane {
  readonly handlers: ReadonlyMap<string, Handler>
  /** How many times any asset was computed. */
  readonly executions: Effect.Effect<number>
  /** Opens the gate for slow assets. */
  readonly release: Effect.Effect<void>
}

export const KNOWN = new Set([
  "crypto:bitcoin",
  "crypto:ethereum",
  "crypto:solana",
  "crypto:dogecoin",
  "crypto:cardano",
  "crypto:ripple",
  "crypto:litecoin",
  "eq:320193:AAPL",
  "eq:789019:MSFT"
])

/**
 * `crypto:slow` waits for `release` (or, with `slowMs`, sleeps that long); `crypto:flaky` fails with 503
 * `source_unavailable`.
 */
export const makeTestPlane = (options: { readonly nextUpdateAtMs?: number; readonly slowMs?: number } = {}) =>
  Effect.gen(function* () {
    const count = yield* Ref.make(0)
    const gate = yield* Latch.make(false)
    // Plain combinators rather than a generator, as the real planes' per-asset path (`admit` in Planes.ts): the
    // money bench serves this plane, so what it measures is the pipeline's cost, not a fixture's.
    const forAsset = (id: string): Effect.Effect<AssetOutcome, ReturnType<typeof apiError>> => {
      const counted = Ref.update(count, (n) => n + 1)
      if (id === "crypto:slow") {
        const wait = options.slowMs === undefined ? gate.await : Effect.sleep(options.slowMs)
        return Effect.andThen(
          counted,
          Effect.map(wait, () => delivered(id))
        )
      }
      if (id === "crypto:flaky") {
        return Effect.flatMap(counted, () => Effect.fail(apiError("source_unavailable", "test source is down")))
      }
      return Effect.map(
        counted,
        (): AssetOutcome =>
          KNOWN.has(id) ? delivered(id) : { _tag: "Refused", reason: "unknown_asset", message: `no asset ${id}` }
      )
    }
    // An asset's result never changes here: like the real planes, which hand back the same object while the
    // data is unchanged, the plane keeps one per asset (so its envelope is serialized once, `PerAsset`).
    const next = new Date(options.nextUpdateAtMs ?? 4_102_444_800_000).toISOString()
    const results = new Map<string, AssetOutcome & { readonly _tag: "Delivered" }>()
    const delivered = (id: string): AssetOutcome & { readonly _tag: "Delivered" } => {
      const kept = results.get(id)
      if (kept !== undefined) return kept
      const result = {
        asset_id: id,
        plane: planeOf(id),
        as_of: "2026-01-01T00:00:00.000Z",
        status: "live",
        next_update_at: next,
        usd: id.length * 1000.5
      }
      const outcome = { _tag: "Delivered", result } as const
      results.set(id, outcome)
      return outcome
    }
    const handler = perAssetHandler((id) => forAsset(id))
    const plane: TestPlane = {
      handlers: new Map<string, Handler>([
        ["read", handler],
        ["price", handler],
        ["funding", handler]
      ]),
      executions: Ref.get(count),
      release: gate.open
    }
    return plane
  })
