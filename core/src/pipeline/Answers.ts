/**
 * The steps every path shares to say how a request ended: a failure outcome, the refusals the pipeline words
 * itself (rate limited, insufficient credits, not implemented), the status and charge of an outcome, and the
 * stored form of an answer an idempotent replay sends.
 */
import { Effect } from "effect"
import { type ApiError, apiError, ErrorCatalog, StoreUnavailable } from "../Errors.ts"
import type { StoredAnswer } from "../Money.ts"
import { type RateWindow, secondsUntilReset } from "../RateLimit.ts"
import type { OperationSpec } from "../Registry.ts"
import type { Answer, Outcome } from "./Types.ts"

export type FailureOutcome = Extract<Outcome, { readonly _tag: "Failure" }>

/** A failure outcome charging nothing. */
export const fail = (error: ApiError): FailureOutcome => ({ _tag: "Failure", error, creditsCharged: 0 })

export const internalError = () => apiError("internal_error", "internal error; nothing was charged, retry later")

/**
 * The answer to a defect: a store that could not be reached is `503 source_unavailable`, retryable (logged as a
 * warning); anything else `500 internal_error` (logged as an error, with `what` failed).
 */
export const defectError = (defect: unknown, what: string, message: string): Effect.Effect<ApiError> => {
  if (defect instanceof StoreUnavailable) {
    return Effect.as(
      Effect.logWarning("store unavailable", defect.operation, String(defect.cause)),
      apiError("source_unavailable", message, { retryAfterSeconds: 1 })
    )
  }
  return Effect.as(Effect.logError(what, defect), internalError())
}

/** HTTP-style status of an outcome (the contract's statuses; used for storing and transience). */
export const statusOf = (o: Outcome): number => {
  switch (o._tag) {
    case "Failure":
      return ErrorCatalog[o.error.code].status
    case "NotModified":
      return 304
    case "Replay":
      return o.answer.status
    default:
      return 200
  }
}

/** The header naming a paid answer's charge (HTTP's `X-Credits-Charged`), lower-case as stored with an answer. */
export const CREDITS_CHARGED_HEADER = "x-credits-charged"

/**
 * The credits an outcome charged, as every transport reports them (HTTP `X-Credits-Charged`, MCP
 * `_meta.credits_charged`, the in-process result): a replay reports its original charge from the stored answer;
 * `304` and markdown charge nothing.
 */
export const creditsChargedOf = (o: Outcome): number => {
  switch (o._tag) {
    case "Json":
    case "Failure":
      return o.creditsCharged
    case "Replay":
      return Number(o.answer.headers[CREDITS_CHARGED_HEADER] ?? 0)
    default:
      return 0
  }
}

/**
 * The `X-Credits-Charged` value a transport adds to an answer: every answer of a paid operation carries it,
 * except a replay, whose stored headers already carry the original charge. Undefined otherwise.
 */
export const creditsHeaderOf = (answer: Answer): string | undefined =>
  answer.op?.auth === "paid" && answer.outcome._tag !== "Replay" ? String(creditsChargedOf(answer.outcome)) : undefined

/** The transport-neutral stored form of a JSON or failure outcome. */
export const storedAnswerOf = (o: Outcome & { readonly _tag: "Json" | "Failure" }): StoredAnswer => {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    [CREDITS_CHARGED_HEADER]: String(o.creditsCharged)
  }
  if (o._tag === "Json") {
    if (o.etag !== undefined) headers.etag = o.etag
    if (o.dataSource !== undefined) headers["x-data-source"] = o.dataSource
    return { status: 200, headers, body: o.body }
  }
  return { status: ErrorCatalog[o.error.code].status, headers, body: JSON.stringify(o.error.toBody()) }
}

/** The `X-Data-Source` part of an outcome, when the handler named its source. */
export const sourceOf = (out: { readonly dataSource?: string }) =>
  out.dataSource === undefined ? {} : { dataSource: out.dataSource }

export const insufficient = (amount: number, available: number): ApiError =>
  apiError(
    "insufficient_credits",
    `this request holds ${amount} credit${amount === 1 ? "" : "s"}; the key has ${available} available. To top up, ask the service's operator: they add credits with \`market-data credits grant <key-id> <n>\` (your key ID is in \`usage\`); see docs section access`
  )

export const rateLimited = (rate: RateWindow, nowMs: number): ApiError => {
  const wait = secondsUntilReset(rate, nowMs)
  return apiError("rate_limited", `rate limit of ${rate.limit} units per minute reached; retry in ${wait} s`, {
    retryAfterSeconds: wait
  })
}

export const notImplemented = (op: OperationSpec): ApiError =>
  apiError(
    "not_implemented",
    `\`${op.name}\` is defined but its data plane has not landed yet; see docs section changelog`
  )

export const missingKeyMessage = (op: OperationSpec): string =>
  `\`${op.name}\` needs an API key: send \`Authorization: Bearer <API_KEY>\` (see docs section access)`
