/**
 * A pipeline `Answer` as an MCP tool result: the HTTP body (the envelope, or the error object) in
 * `structuredContent`, its compact text in `content`, the charge in `_meta.credits_charged` and, for data
 * answers, the source that fed them in `_meta.data_source` (HTTP's `X-Data-Source`).
 */
import { type Answer, type ApiError, apiError, creditsChargedOf } from "@market-data/core"

/** A tool result: the envelope in `structuredContent`, its compact text in `content`, the charge in `_meta`. */
export interface ToolResult {
  readonly content: ReadonlyArray<{ readonly type: "text"; readonly text: string }>
  readonly structuredContent: unknown
  readonly isError: boolean
  readonly _meta: { readonly credits_charged: number; readonly [k: string]: unknown }
}

export const errorResult = (error: ApiError, credits: number): ToolResult => {
  const body = error.toBody()
  return {
    content: [{ type: "text", text: JSON.stringify(body) }],
    structuredContent: body,
    isError: true,
    _meta: {
      credits_charged: credits,
      ...(error.retryAfterSeconds === undefined ? {} : { retry_after_seconds: error.retryAfterSeconds })
    }
  }
}

/** Re-wraps a pipeline answer as a tool result. */
export const toolResult = (answer: Answer): ToolResult => {
  const o = answer.outcome
  switch (o._tag) {
    case "Json":
      return {
        content: [{ type: "text", text: o.body }],
        structuredContent: JSON.parse(o.body),
        isError: false,
        _meta: {
          credits_charged: o.creditsCharged,
          ...(o.dataSource === undefined ? {} : { data_source: o.dataSource })
        }
      }
    case "Markdown":
      return {
        content: [{ type: "text", text: o.markdown }],
        structuredContent: { data: { section: o.section, markdown: o.markdown } },
        isError: false,
        _meta: { credits_charged: 0 }
      }
    case "Failure":
      return errorResult(o.error, o.creditsCharged)
    case "Replay": {
      // The stored answer of the first request (over HTTP or MCP), byte for byte, with its original charge.
      const dataSource = o.answer.headers["x-data-source"]
      return {
        content: [{ type: "text", text: o.answer.body }],
        structuredContent: JSON.parse(o.answer.body),
        isError: o.answer.status >= 400,
        _meta: {
          credits_charged: creditsChargedOf(o),
          ...(dataSource === undefined ? {} : { data_source: dataSource }),
          idempotent_replayed: true
        }
      }
    }
    case "NotModified":
      // MCP sends no If-None-Match, so the pipeline cannot answer 304 here.
      return errorResult(apiError("internal_error", "unexpected 304 over MCP"), 0)
  }
}
