/**
 * Validators the fault suite checks every error against: the error body as the service publishes it (taken
 * from its own OpenAPI document, so a drift between what it says and what it sends fails), and the JSON-RPC
 * 2.0 response shape of the MCP endpoint. Both compiled with ajv (JSON Schema 2020-12, strict).
 */
import { ErrorCatalog, type ErrorCode } from "@market-data/core"
import type { ValidateFunction } from "ajv"
import { makeAjv } from "../support/mcp.ts"

export interface ErrorValidators {
  /** The published error body schema. */
  readonly errorBody: ValidateFunction
  /** A JSON-RPC 2.0 response (result or error). */
  readonly rpcResponse: ValidateFunction
  /** Why a value fails `validate`, in a line. */
  readonly why: (validate: ValidateFunction) => string
}

const rpcError = {
  type: "object",
  required: ["code", "message"],
  properties: { code: { type: "integer" }, message: { type: "string" } }
}
/** Exactly `jsonrpc`, `id` and one of `result` or `error`. */
const rpcResponseSchema = {
  type: "object",
  required: ["jsonrpc", "id"],
  properties: {
    jsonrpc: { const: "2.0" },
    // JSON-RPC: a string, a number (fractions are discouraged, not forbidden: MCP echoes what it got) or null.
    id: { anyOf: [{ type: "string" }, { type: "number" }, { type: "null" }] },
    result: { type: "object" },
    error: rpcError
  },
  additionalProperties: false,
  minProperties: 3,
  maxProperties: 3
}

/** Fetches `/api/v1/openapi.json` from a running server and compiles its error schema. */
export const loadErrorValidators = async (base: string): Promise<ErrorValidators> => {
  const doc = (await (await fetch(`${base}/api/v1/openapi.json`)).json()) as {
    paths: Record<string, { get?: { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> } }>
  }
  const responses = doc.paths["/api/v1/price"]?.get?.responses ?? {}
  const schema = responses["400"]?.content?.["application/json"]?.schema
  if (schema === undefined) throw new Error("the OpenAPI document publishes no error schema for price 400")
  const ajv = makeAjv()
  return {
    errorBody: ajv.compile(schema as object),
    rpcResponse: ajv.compile(rpcResponseSchema),
    why: (validate) => ajv.errorsText(validate.errors)
  }
}

/** The published HTTP status of an error code (undefined for a code the catalog does not know). */
export const statusOfCode = (code: unknown): number | undefined =>
  typeof code === "string" && code in ErrorCatalog ? ErrorCatalog[code as ErrorCode].status : undefined
