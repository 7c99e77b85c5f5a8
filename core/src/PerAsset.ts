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
 * What one holder derives from an object, kept on the object itself: a non-enumerable symbol property (absent
 * from its JSON, its keys and its spreads), so it lives and dies with the object. Not a `WeakMap`: a map per
 * handler keyed by result objects grew to tens of thousands of entries between full collections (every result
 * replaced since the last one), and V8 goes over every entry of such tables in the full collection's pause
 * (ephemerons: a third to three fifths of the answering thread's 145 to 210 ms full collections under the streams
 * bench, docs/performance-log.md). An object that cannot take a property (frozen) keeps its record in a `WeakMap`.
 */
export const makeDerived = <D extends object>(name: string, empty: () => D): ((target: object) => D) => {
  const key = Symbol(name)
  const frozen = new WeakMap<object, D>()
  return (target) => {
    const own = (target as { readonly [k: symbol]: D | undefined })[key]
    if (own !== undefined) return own
    const d = frozen.get(target) ?? empty()
    if (Object.isExtensible(target)) Object.defineProperty(target, key, { value: d })
    else frozen.set(target, d)
    return d
  }
}

/** What a per-asset handler derives from one result object (see `perAssetHandler`). */
interface ResultDerived {
  /** Exactly `JSON.stringify({ data: result })`. */
  text?: string
  /** `next_update_at` as epoch ms (NaN when absent or unreadable). */
  nextMs?: number
  /** The output of a single-`id` request. */
  output?: HandlerOutput
}

/**
 * Builds a per-asset operation's handler from what it does for one asset. The handler remembers, per result
 * object, its serialized envelope and its `next_update_at`: planes hand back the same object while its data is
 * unchanged, so each is computed once. The memory is the handler's own (a plane's handlers are built per service
 * instance; each handler its own property on the result) and goes with the result objects.
 */
export const perAssetHandler = (forAsset: ForAsset): Handler => {
  const derivedOf = makeDerived<ResultDerived>("perAssetHandler", () => ({}))
  const singleText = (result: object): string => {
    const d = derivedOf(result)
    d.text ??= `{"data":${JSON.stringify(result)}}`
    return d.text
  }
  const nextUpdateOf = (result: { readonly next_update_at?: string } & object): number => {
    const d = derivedOf(result)
    d.nextMs ??= result.next_update_at === undefined ? Number.NaN : Date.parse(result.next_update_at)
    return d.nextMs
  }
  /**
   * The output of a single-`id` request per result object: `{data: result}`, its text, its charge and its
   * `next_update_at` depend on the result alone (the handler is one operation's, and the result names its asset),
   * so a result served again is answered with the same output, built once. Outputs are never modified.
   */
  const singleOutput = (op: HandlerInput["op"], id: string, result: { readonly next_update_at?: string } & object) => {
    const d = derivedOf(result)
    if (d.output === undefined) {
      const next = nextUpdateOf(result)
      d.output = {
        _tag: "Json" as const,
        body: { data: result },
        text: singleText(result),
        creditsCharged: chargeFor(op, { assetIds: [id] }),
        ...(Number.isNaN(next) ? {} : { nextUpdateAtMs: next })
      }
    }
    return d.output
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
