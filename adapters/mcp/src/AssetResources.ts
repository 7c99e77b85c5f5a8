/**
 * Asset resources: `service://read/{asset_id}` is the `read` result of one asset. Reading one is the paid `read`
 * operation run through the core pipeline exactly as the `read` tool runs it (the key of the POST, one credit, the
 * same refusals, the same rate unit, the POST's `Idempotency-Key`); keyless, it is refused `unauthenticated` and
 * serves nothing. The caching hints come from the data: `ttlMs` is the time to the result's `next_update_at`, and
 * `cacheScope` is `private` (a key paid for it).
 */
import {
  type Answer,
  apiError,
  ErrorCatalog,
  handle,
  MCP_ASSET_URI_PREFIX,
  type PipelineServices
} from "@market-data/core"
import { Effect } from "effect"
import { failure, type RequestId, RpcCode, type RpcResponse, success } from "./JsonRpc.ts"

export const ASSET_URI_PREFIX = MCP_ASSET_URI_PREFIX

export const ASSET_RESOURCE_TEMPLATE = {
  uriTemplate: `${ASSET_URI_PREFIX}{asset_id}`,
  name: "asset-read",
  title: "The situation of one asset (`read`)",
  description:
    "The `read` result of one asset as JSON, {asset_id} a canonical ID (crypto:<slug> or eq:<cik>:<ticker>; turn symbols into IDs with the `resolve` tool). Paid: needs the API key, 1 credit per read, exactly as the `read` tool. Subscribable at 2026-07-28 with `subscriptions/listen` (`resourceSubscriptions`): the notification is free, reading it is the paid read.",
  mimeType: "application/json"
} as const

/** The asset ID of an asset resource URI, or undefined when the URI is not one. */
export const assetIdOf = (uri: string): string | undefined => {
  if (!uri.startsWith(ASSET_URI_PREFIX)) return undefined
  const id = uri.slice(ASSET_URI_PREFIX.length)
  return id.length > 0 && id.length <= 200 && !/[\s/?#]/.test(id) ? id : undefined
}

/** What the asset read needs from the POST. */
export interface AssetReadContext {
  readonly authorization: ReadonlyArray<string>
  readonly idempotencyKey: ReadonlyArray<string> | "ambiguous"
  readonly client: string
  readonly forwardedFor: ReadonlyArray<string>
  /** 2026-07-28 answers resource-not-found as -32602 with caching hints; the older revisions as -32002. */
  readonly modern: boolean
}

/** Milliseconds from `nowMs` to the body's `data.next_update_at` (0 when past or absent, `fallbackMs` if unreadable). */
export const ttlOfBody = (body: string, nowMs: number, fallbackMs: number): number => {
  try {
    const parsed = JSON.parse(body) as { readonly data?: { readonly next_update_at?: unknown } }
    const next = parsed.data?.next_update_at
    if (typeof next !== "string") return fallbackMs
    const at = Date.parse(next)
    return Number.isFinite(at) ? Math.max(0, Math.round(at - nowMs)) : fallbackMs
  } catch {
    return fallbackMs
  }
}

/** Reads `service://read/<id>` through the pipeline as the `read` operation. */
export const readAsset = (
  id: RequestId,
  uri: string,
  assetId: string,
  context: AssetReadContext
): Effect.Effect<{ readonly response: RpcResponse; readonly answer: Answer | undefined }, never, PipelineServices> =>
  Effect.gen(function* () {
    if (context.idempotencyKey === "ambiguous") {
      // An Idempotency-Key on a POST with several paid messages applies to none: refused before anything runs.
      const error = apiError(
        "invalid_idempotency_key",
        "an Idempotency-Key header applies to a POST that carries exactly one tools/call or resources/read; send each in its own POST"
      )
      return { answer: undefined, response: errorResponse(id, uri, error, context) }
    }
    const answer = yield* handle({
      operation: "read",
      params: [["id", assetId]],
      authorization: context.authorization,
      idempotencyKey: context.idempotencyKey,
      client: context.client,
      forwardedFor: context.forwardedFor
    })
    const o = answer.outcome
    const contents = (body: string, credits: number, dataSource: string | undefined, replayed: boolean) =>
      success(id, {
        contents: [{ uri, mimeType: "application/json", text: body }],
        _meta: {
          credits_charged: credits,
          ...(dataSource === undefined ? {} : { data_source: dataSource }),
          ...(replayed ? { idempotent_replayed: true } : {})
        },
        ...(context.modern ? { ttlMs: ttlOfBody(body, answer.nowMs, 0), cacheScope: "private" as const } : {})
      })
    switch (o._tag) {
      case "Json":
        return { answer, response: contents(o.body, o.creditsCharged, o.dataSource, false) }
      case "Replay":
        if (o.answer.status >= 400) {
          const stored = JSON.parse(o.answer.body) as {
            readonly error: { readonly code: string; readonly message: string }
          }
          return {
            answer,
            response: failure(id, RpcCode.ServerError, stored.error.message, { ...stored, idempotent_replayed: true })
          }
        }
        return {
          answer,
          response: contents(
            o.answer.body,
            Number(o.answer.headers["x-credits-charged"] ?? 0),
            o.answer.headers["x-data-source"],
            true
          )
        }
      case "Failure":
        return { answer, response: errorResponse(id, uri, o.error, context) }
      default:
        return {
          answer,
          response: errorResponse(id, uri, apiError("internal_error", "unexpected answer to read"), context)
        }
    }
  })

const errorResponse = (
  id: RequestId,
  uri: string,
  error: ReturnType<typeof apiError>,
  context: AssetReadContext
): RpcResponse => {
  if (error.code === "unknown_asset" || (error.code === "invalid_parameter" && error.param === "id")) {
    return failure(
      id,
      context.modern ? RpcCode.InvalidParams : RpcCode.ResourceNotFound,
      `Resource not found: ${uri.slice(0, 200)}: ${error.message}`,
      { uri, ...error.toBody() }
    )
  }
  const code = ErrorCatalog[error.code].status >= 500 ? RpcCode.InternalError : RpcCode.ServerError
  return failure(id, code, error.message, {
    ...error.toBody(),
    ...(error.retryAfterSeconds === undefined ? {} : { retry_after_seconds: error.retryAfterSeconds })
  })
}
