/**
 * What a request holds before it runs and what it may be charged, from the registry's price rules
 * (DECISIONS, Billing): per delivered asset for `read` and the domain operations (a batch holds the price of
 * every requested asset), per call for `series`, `holders`, `financials`, `events`, per returned row for
 * `rank`. Refused assets, errors, 304s and replays charge nothing new.
 */
import { planeOf } from "./AssetId.ts"
import type { CanonicalParams } from "./Params.ts"
import { type OperationSpec, unitPrice } from "./Registry.ts"

/** The IDs a per-asset request names, in order. */
export const requestedIds = (params: CanonicalParams): ReadonlyArray<string> => {
  if (Array.isArray(params.ids)) return params.ids as ReadonlyArray<string>
  return typeof params.id === "string" ? [params.id] : []
}

/** Credits held before executing: the most this request can be charged. */
export const holdFor = (op: OperationSpec, params: CanonicalParams): number => {
  switch (op.price.per) {
    case "asset":
      return requestedIds(params).reduce((sum, id) => sum + unitPrice(op, planeOf(id)), 0)
    case "call":
      return op.price.credits
    case "row":
      return op.price.credits * (typeof params.limit === "number" ? params.limit : 0)
    case "free":
      return 0
  }
}

/** The charge for what was delivered: per-asset prices of the delivered IDs, one call, or `rows` rows. */
export const chargeFor = (
  op: OperationSpec,
  delivered: { readonly assetIds?: ReadonlyArray<string>; readonly rows?: number }
): number => {
  switch (op.price.per) {
    case "asset":
      return (delivered.assetIds ?? []).reduce((sum, id) => sum + unitPrice(op, planeOf(id)), 0)
    case "call":
      return op.price.credits
    case "row":
      return op.price.credits * (delivered.rows ?? 0)
    case "free":
      return 0
  }
}
