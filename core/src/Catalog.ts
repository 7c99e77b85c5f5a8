/**
 * Machine-readable descriptions of the operations, derived from the registry: what `schema` answers and
 * what the root document, OpenAPI and MCP tool listings are built from.
 */
import { Schema } from "effect"
import { ErrorBody, ErrorCatalog } from "./Errors.ts"
import {
  type CrossRule,
  describeDefault,
  describeType,
  type JsonSchema,
  type ParamSpec,
  paramsJsonSchema
} from "./Params.ts"
import { describePrice, errorSet, type OperationSpec, Operations } from "./Registry.ts"
import * as R from "./Results.ts"

/** Whether an operation answers today or is waiting for its plane. */
export type Availability = "available" | "not_implemented"

const availability = (op: OperationSpec, implemented: ReadonlySet<string>): Availability =>
  implemented.has(op.name) ? "available" : "not_implemented"

/** Credits in structured form. */
export const creditsOf = (op: OperationSpec): Record<string, unknown> => {
  const p = op.price
  switch (p.per) {
    case "asset":
      return { per: "asset", crypto: p.credits.crypto, equity: p.credits.equity, text: describePrice(op) }
    case "call":
    case "row":
      return { per: p.per, amount: p.credits, text: describePrice(op) }
    case "free":
      return { per: "free", amount: 0, text: "0" }
  }
}

const paramEntry = (p: ParamSpec): Record<string, unknown> => {
  const t = p.type
  const out: Record<string, unknown> = {
    name: p.name,
    type: t.kind,
    required: p.required,
    accepts: describeType(t),
    description: p.description
  }
  const d = p.default
  if (d !== undefined) out.default = "value" in d ? d.value : { by_plane: d.byPlane }
  if (t.kind === "enum" || t.kind === "enumList") out.enum = [...t.values]
  if (t.kind === "int") {
    out.minimum = t.min
    out.maximum = t.max
  }
  if (t.kind === "assetIdList" || t.kind === "enumList") {
    out.min_items = t.min
    out.max_items = t.max
    out.distinct = true
  }
  if (t.kind === "string") {
    out.min_length = t.minLength
    out.max_length = t.maxLength
  }
  if (d !== undefined) out.default_text = describeDefault(p)
  return out
}

/** A cross-parameter rule in words, with the error code it produces. */
export const describeRule = (
  r: CrossRule
): { readonly rule: string; readonly text: string; readonly error: string } => {
  switch (r.rule) {
    case "exactlyOne":
      return {
        rule: r.rule,
        text: `pass exactly one of \`${r.params[0]}\` or \`${r.params[1]}\``,
        error: "conflicting_parameters (both) / missing_parameter (neither)"
      }
    case "requiresValue":
      return { rule: r.rule, text: `\`${r.param}\` requires \`${r.on}=${r.equals}\``, error: "parameter_requires" }
    case "requiresIncludes":
      return {
        rule: r.rule,
        text: `\`${r.param}\` requires \`${r.on}\` to include \`${r.includes}\``,
        error: "parameter_requires"
      }
    case "excludes":
      return {
        rule: r.rule,
        text: `\`${r.param}\` cannot be combined with ${r.others.map((o) => `\`${o}\``).join(", ")}`,
        error: "conflicting_parameters"
      }
  }
}

/** JSON Schema (2020-12) of an operation's success body as sent over HTTP. */
export const resultJsonSchema = (op: OperationSpec): JsonSchema => {
  if (op.markdown) return { type: "string", contentMediaType: "text/markdown" }
  const single = R.single(op.result)
  const schema = op.batch ? Schema.Union([single, R.batch(op.result)]) : single
  return Schema.toJsonSchemaDocument(schema).schema as JsonSchema
}

/** JSON Schema of the error body. */
export const errorJsonSchema: JsonSchema = Schema.toJsonSchemaDocument(ErrorBody).schema as JsonSchema

/** The index entry of one operation. */
export const summarize = (op: OperationSpec, implemented: ReadonlySet<string>): Record<string, unknown> => ({
  name: op.name,
  group: op.group,
  planes: [...op.planes],
  auth: op.auth,
  credits: creditsOf(op),
  summary: op.summary,
  status: availability(op, implemented)
})

/** The full description of one operation, as `schema?resource=<op>` answers it. */
export const describeOperation = (op: OperationSpec, implemented: ReadonlySet<string>): Record<string, unknown> => ({
  ...summarize(op, implemented),
  description: op.description,
  http: { method: "GET", path: `/api/v1/${op.name}` },
  parameters: op.params.map(paramEntry),
  rules: op.rules.map(describeRule),
  errors: [...errorSet(op), ...(implemented.has(op.name) ? [] : ["not_implemented" as const])].map((code) => ({
    code,
    status: ErrorCatalog[code].status,
    retryable: ErrorCatalog[code].retryable
  })),
  batch: op.batch,
  conditional: op.conditional,
  content_type: op.markdown ? "text/markdown; charset=utf-8" : "application/json",
  input_schema: paramsJsonSchema(op.params, "typed"),
  result_schema: resultJsonSchema(op)
})

/** The index of all operations, as `schema` without `resource` answers it. */
export const operationIndex = (implemented: ReadonlySet<string>): Record<string, unknown> => ({
  count: Operations.length,
  operations: Operations.map((op) => summarize(op, implemented))
})
