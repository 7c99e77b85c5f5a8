/**
 * The public error vocabulary of the service: one code per failure a client can see, with whether retrying
 * the same request can succeed. The HTTP status of each code is part of the published contract
 * (DECISIONS.md, "Errors"), so the catalog carries it as documentation data; transports read it from here so
 * that HTTP, MCP and the `errors` docs section can never disagree.
 */
import { Data, Schema } from "effect"

/** Every error code the service can answer. */
/**
 * What an `Idempotency-Key` is, in the one wording the served docs, the error text, the error table and the
 * OpenAPI schema share (checked by `validateIdempotencyKey`, core/src/Idempotency.ts).
 */
export const IDEMPOTENCY_KEY_RULE =
  "1 to 128 printable ASCII characters (letters, digits, punctuation, spaces), not starting or ending with a space"

/** `IDEMPOTENCY_KEY_RULE` as a JSON Schema pattern: printable ASCII, 1 to 128, no space at either end. */
export const IDEMPOTENCY_KEY_PATTERN = "^[!-~]([ -~]{0,126}[!-~])?$"

export const ErrorCodes = [
  "invalid_parameter",
  "missing_parameter",
  "conflicting_parameters",
  "parameter_requires",
  "invalid_idempotency_key",
  "invalid_cursor",
  "invalid_header",
  "unauthenticated",
  "insufficient_credits",
  "unknown_operation",
  "unknown_asset",
  "method_not_allowed",
  "idempotency_conflict",
  "request_in_progress",
  "uri_too_long",
  "headers_too_large",
  "plane_mismatch",
  "not_covered",
  "rate_limited",
  "internal_error",
  "not_implemented",
  "source_unavailable"
] as const

export type ErrorCode = (typeof ErrorCodes)[number]

export interface ErrorCatalogEntry {
  /** HTTP status published for this code. */
  readonly status: number
  /** Whether the same request may succeed when retried unchanged. */
  readonly retryable: boolean
  /** One sentence for the `errors` docs section. */
  readonly when: string
}

/** The one table of error codes: status, retryability and meaning. */
export const ErrorCatalog: { readonly [C in ErrorCode]: ErrorCatalogEntry } = {
  invalid_parameter: {
    status: 400,
    retryable: false,
    when: "A parameter has the wrong type, is outside its enum or bounds, is unknown to the operation, or is repeated. `param` names it."
  },
  missing_parameter: { status: 400, retryable: false, when: "A required parameter is absent. `param` names it." },
  conflicting_parameters: {
    status: 400,
    retryable: false,
    when: "Two parameters that exclude each other were both given (`id` and `ids`; `coverage` with `id` and a filter)."
  },
  parameter_requires: {
    status: 400,
    retryable: false,
    when: "A parameter was given without the value it depends on (`limit`/`cursor` need `view=bars`; `form` needs `types` to include `filings`)."
  },
  invalid_idempotency_key: {
    status: 400,
    retryable: false,
    when: `The \`Idempotency-Key\` was sent twice, or is not ${IDEMPOTENCY_KEY_RULE}.`
  },
  invalid_cursor: {
    status: 400,
    retryable: false,
    when: "The cursor is not one this service issued for this operation with these other parameters."
  },
  invalid_header: {
    status: 400,
    retryable: false,
    when: "A request header is malformed or repeated where only one is allowed (two `Authorization` headers)."
  },
  unauthenticated: {
    status: 401,
    retryable: false,
    when: "No key, a malformed key, or an unknown or revoked key. The answer is identical in all four cases."
  },
  insufficient_credits: {
    status: 402,
    retryable: false,
    when: "The key's balance cannot cover the credits this request holds. Nothing was executed or charged."
  },
  unknown_operation: { status: 404, retryable: false, when: "The path names none of the 23 operations." },
  unknown_asset: { status: 404, retryable: false, when: "The canonical ID is well formed but names no asset we know." },
  method_not_allowed: {
    status: 405,
    retryable: false,
    when: "Operations answer `GET` (and `OPTIONS`; free operations also `HEAD`). A paid operation refuses `HEAD` (it would be billed for a body it never gets) with `Allow: GET`, before anything runs: no credit, no rate unit. The `Allow` header lists the methods."
  },
  idempotency_conflict: {
    status: 409,
    retryable: false,
    when: "The `Idempotency-Key` was used within 24 h for a different request."
  },
  request_in_progress: {
    status: 409,
    retryable: true,
    when: "The same request under the same `Idempotency-Key` is still running. Retry after `Retry-After` seconds."
  },
  uri_too_long: { status: 414, retryable: false, when: "The request target is longer than 8,192 bytes." },
  headers_too_large: { status: 431, retryable: false, when: "The request headers exceed 16 KiB in total." },
  plane_mismatch: {
    status: 422,
    retryable: false,
    when: "The operation does not exist for the asset's plane (for example `funding` on an equity)."
  },
  not_covered: {
    status: 422,
    retryable: false,
    when: "The asset is known, but its coverage tier does not include this operation."
  },
  rate_limited: {
    status: 429,
    retryable: true,
    when: "The key (or, without a key, the client address) spent its rate units for this window. Wait `Retry-After` seconds."
  },
  internal_error: {
    status: 500,
    retryable: true,
    when: "A fault on our side. Any credit hold is released; retrying with the same `Idempotency-Key` runs once."
  },
  not_implemented: {
    status: 501,
    retryable: false,
    when: "Temporary: the operation's data plane is still being built. Listed in the changelog; it goes away as each plane lands."
  },
  source_unavailable: {
    status: 503,
    retryable: true,
    when: "An upstream data source or the store is unavailable. Any credit hold is released; retry later."
  }
}

/** The error body every transport sends: `{"error": {...}}`. */
export const ErrorBody = Schema.Struct({
  error: Schema.Struct({
    code: Schema.Literals(ErrorCodes),
    message: Schema.String,
    param: Schema.optionalKey(Schema.String),
    retryable: Schema.Boolean
  })
})
export type ErrorBody = typeof ErrorBody.Type

/**
 * A failure answered to the client. `param` names the offending parameter or header; `retryAfterSeconds` is
 * sent as `Retry-After` where the code calls for it.
 */
export class ApiError extends Schema.TaggedError<ApiError>()("ApiError", {
  code: Schema.Literals(ErrorCodes),
  message: Schema.String,
  param: Schema.optionalKey(Schema.String),
  retryAfterSeconds: Schema.optionalKey(Schema.Number)
}) {
  /** The public body of this error. */
  toBody(): ErrorBody {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.param === undefined ? {} : { param: this.param }),
        retryable: ErrorCatalog[this.code].retryable
      }
    }
  }
}

/** Shorthand constructor. */
export const apiError = (
  code: ErrorCode,
  message: string,
  extra: { readonly param?: string; readonly retryAfterSeconds?: number } = {}
): ApiError => new ApiError({ code, message, ...extra })

/**
 * A store (database) could not be reached or failed. Adapters raise it as a defect; the pipeline answers
 * `503 source_unavailable` (transient: holds and idempotency records are released or expire with their lease).
 */
export class StoreUnavailable extends Data.TaggedError("StoreUnavailable")<{
  readonly operation: string
  readonly cause: unknown
}> {}
