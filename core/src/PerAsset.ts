/**
 * The shape shared by `read` and the 12 domain operations: one result per asset. A plane supplies what to do
 * for one asset; this module turns it into the operation's answer: `{data}` for `id`, `{data: [...], refused}`
 * for `ids` (request order kept), a single refused `id` answered as its error, uncharged, and the charge of
 * what was delivered.
 */
import { Effect } from "effect"
import { chargeFor, requestedIds } from "./Billing.ts"
import { type ApiError, apiError } from "./Errors.ts"
import type { CanonicalParams } from "./Params.ts"
import type { Handler, HandlerInput } from "./Pipeline.ts"

export type RefusalReason = "unknown_asset" | "plane_mismatch" | "not_covered"

export type AssetOutcome =
  /** `result` is the per-asset object; it carries `next_update_at` (ISO 8601). */
  | { readonly _tag: "Delivered"; readonly result: { readonly next_update_at?: string } & object }
  | { readonly _tag: "Refused"; readonly reason: RefusalReason; readonly message: string }

export type ForAsset = (
  id: string,
  params: CanonicalParams,
  input: HandlerInput
) => Effect.Effect<AssetOutcome, ApiError>

/** Builds a per-asset operation's handler from what it does for one asset. */
export const perAssetHandler =
  (forAsset: ForAsset): Handler =>
  (input) =>
    Effect.gen(function* () {
      const ids = requestedIds(input.params)
      const outcomes = yield* Effect.forEach(ids, (id) => forAsset(id, input.params, input))
      const delivered: Array<string> = []
      const data: Array<object> = []
      const refused: Array<{ id: string; reason: RefusalReason }> = []
      let nextUpdateAtMs: number | undefined
      outcomes.forEach((o, i) => {
        const id = ids[i] as string
        if (o._tag === "Refused") {
          refused.push({ id, reason: o.reason })
          return
        }
        delivered.push(id)
        data.push(o.result)
        const next = o.result.next_update_at === undefined ? Number.NaN : Date.parse(o.result.next_update_at)
        if (!Number.isNaN(next)) nextUpdateAtMs = nextUpdateAtMs === undefined ? next : Math.min(nextUpdateAtMs, next)
      })
      if (!Array.isArray(input.params.ids)) {
        const only = outcomes[0]
        if (only?._tag === "Refused") return yield* Effect.fail(apiError(only.reason, only.message, { param: "id" }))
      }
      const body = Array.isArray(input.params.ids) ? { data, refused } : { data: data[0] }
      return {
        _tag: "Json" as const,
        body,
        creditsCharged: chargeFor(input.op, { assetIds: delivered }),
        ...(nextUpdateAtMs === undefined ? {} : { nextUpdateAtMs })
      }
    })
