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
import type { Handler, HandlerInput, HandlerOutput } from "./Pipeline.ts"

export type RefusalReason = "unknown_asset" | "plane_mismatch" | "not_covered"

export type AssetOutcome =
  /** `result` is the per-asset object; it carries `next_update_at` (ISO 8601). */
  | { readonly _tag: "Delivered"; readonly result: { readonly next_update_at?: string } & object }
  /** `param` names the parameter behind the refusal when it is not `id` (a single refused `id`'s error). */
  | { readonly _tag: "Refused"; readonly reason: RefusalReason; readonly message: string; readonly param?: string }

export type ForAsset = (
  id: string,
  params: CanonicalParams,
  input: HandlerInput
) => Effect.Effect<AssetOutcome, ApiError>

/**
 * Builds a per-asset operation's handler from what it does for one asset. The handler remembers, per result
 * object, its serialized envelope and its `next_update_at`: planes hand back the same object while its data is
 * unchanged, so each is computed once. The memory is the handler's own (a plane's handlers are built per service
 * instance) and goes with the result objects.
 */
export const perAssetHandler = (forAsset: ForAsset): Handler => {
  /** Exactly `JSON.stringify({ data: result })`, per result object. */
  const singleTexts = new WeakMap<object, string>()
  const singleText = (result: object): string => {
    let text = singleTexts.get(result)
    if (text === undefined) {
      text = `{"data":${JSON.stringify(result)}}`
      singleTexts.set(result, text)
    }
    return text
  }
  /** `next_update_at` of a result as epoch ms (NaN when absent or unreadable), per result object. */
  const nextUpdates = new WeakMap<object, number>()
  const nextUpdateOf = (result: { readonly next_update_at?: string } & object): number => {
    let ms = nextUpdates.get(result)
    if (ms === undefined) {
      ms = result.next_update_at === undefined ? Number.NaN : Date.parse(result.next_update_at)
      nextUpdates.set(result, ms)
    }
    return ms
  }
  /**
   * The output of a single-`id` request per result object: `{data: result}`, its text, its charge and its
   * `next_update_at` depend on the result alone (the handler is one operation's, and the result names its asset),
   * so a result served again is answered with the same output, built once. Outputs are never modified.
   */
  const singleOutputs = new WeakMap<object, HandlerOutput>()
  const singleOutput = (op: HandlerInput["op"], id: string, result: { readonly next_update_at?: string } & object) => {
    let out = singleOutputs.get(result)
    if (out === undefined) {
      const next = nextUpdateOf(result)
      out = {
        _tag: "Json" as const,
        body: { data: result },
        text: singleText(result),
        creditsCharged: chargeFor(op, { assetIds: [id] }),
        ...(Number.isNaN(next) ? {} : { nextUpdateAtMs: next })
      }
      singleOutputs.set(result, out)
    }
    return out
  }
  return (input) => {
    const params = input.params
    // One `id` (most requests): no list machinery, and the output of a result served before as it was.
    if (typeof params.id === "string" && !Array.isArray(params.ids)) {
      const id = params.id
      return Effect.flatMap(forAsset(id, params, input), (o) =>
        o._tag === "Refused"
          ? Effect.fail(apiError(o.reason, o.message, { param: o.param ?? "id" }))
          : Effect.succeed(singleOutput(input.op, id, o.result))
      )
    }
    const ids = requestedIds(input.params)
    const answer = (outcomes: ReadonlyArray<AssetOutcome>): Effect.Effect<HandlerOutput, ApiError> => {
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
        const next = nextUpdateOf(o.result)
        if (!Number.isNaN(next)) nextUpdateAtMs = nextUpdateAtMs === undefined ? next : Math.min(nextUpdateAtMs, next)
      })
      const single = !Array.isArray(input.params.ids)
      if (single) {
        const only = outcomes[0]
        if (only?._tag === "Refused") {
          return Effect.fail(apiError(only.reason, only.message, { param: only.param ?? "id" }))
        }
      }
      const body = single ? { data: data[0] } : { data, refused }
      return Effect.succeed({
        _tag: "Json" as const,
        body,
        ...(single && data[0] !== undefined ? { text: singleText(data[0]) } : {}),
        creditsCharged: chargeFor(input.op, { assetIds: delivered }),
        ...(nextUpdateAtMs === undefined ? {} : { nextUpdateAtMs })
      })
    }
    // One asset (the common case) without the list machinery; plain combinators, not a generator: this runs
    // for every data request.
    return ids.length === 1
      ? Effect.flatMap(forAsset(ids[0] as string, input.params, input), (o) => answer([o]))
      : Effect.flatMap(
          Effect.forEach(ids, (id) => forAsset(id, input.params, input)),
          answer
        )
  }
}
