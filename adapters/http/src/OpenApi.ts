/**
 * The OpenAPI 3.1 document of the HTTP API and the root discovery document, both generated from the core
 * registry so that a parameter added there shows up here.
 */
import {
  BASE_PATH,
  creditsOf,
  ErrorCatalog,
  errorJsonSchema,
  errorSet,
  IDEMPOTENCY_KEY_PATTERN,
  IDEMPOTENCY_KEY_RULE,
  McpProtocolVersions,
  type OperationSpec,
  Operations,
  paramJsonSchema,
  resultJsonSchema
} from "@market-data/core"

export const SERVICE_NAME = "service-market-data"
export const SERVICE_VERSION = "1.0.0"
/** The MCP protocol versions `/api/mcp` serves (the `mcp` docs section's list). */
export const MCP_PROTOCOL_VERSIONS = McpProtocolVersions

const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: errorJsonSchema } }
})

const operationObject = (op: OperationSpec, implemented: ReadonlySet<string>) => {
  const statuses = new Map<number, Array<string>>()
  const codes = [
    ...errorSet(op),
    "method_not_allowed" as const,
    ...(implemented.has(op.name) ? [] : ["not_implemented" as const])
  ]
  for (const code of codes) {
    const status = ErrorCatalog[code].status
    statuses.set(status, [...(statuses.get(status) ?? []), code])
  }
  const responses: Record<string, unknown> = {
    "200": {
      description: op.summary,
      headers: op.auth === "paid" ? { "X-Credits-Charged": { schema: { type: "integer", minimum: 0 } } } : {},
      content: op.markdown
        ? { "text/markdown; charset=utf-8": { schema: { type: "string" } } }
        : { "application/json": { schema: resultJsonSchema(op) } }
    }
  }
  if (op.conditional) responses["304"] = { description: "Not modified (If-None-Match matched); zero credits." }
  for (const [status, list] of [...statuses].sort((a, b) => a[0] - b[0])) {
    responses[String(status)] = errorResponse(list.join(", "))
  }
  return {
    operationId: op.name,
    summary: op.summary,
    description: `${op.description}\n\nCredits: ${String(creditsOf(op).text)}.`,
    tags: [op.group],
    ...(op.auth === "keyless" ? { security: [] } : { security: [{ bearerAuth: [] }] }),
    parameters: [
      ...op.params.map((p) => ({
        name: p.name,
        in: "query",
        required: p.required,
        description: p.description,
        schema: paramJsonSchema(p, "query")
      })),
      ...(op.auth === "paid"
        ? [
            {
              name: "Idempotency-Key",
              in: "header",
              required: false,
              description: `Replays the stored answer for 24 h instead of running (and billing) again. A key is ${IDEMPOTENCY_KEY_RULE}.`,
              schema: { type: "string", minLength: 1, maxLength: 128, pattern: IDEMPOTENCY_KEY_PATTERN }
            }
          ]
        : []),
      ...(op.conditional ? [{ name: "If-None-Match", in: "header", required: false, schema: { type: "string" } }] : [])
    ],
    responses
  }
}

/** The OpenAPI 3.1 document. */
export const openApiDocument = (implemented: ReadonlySet<string>): Record<string, unknown> => ({
  openapi: "3.1.0",
  jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
  info: {
    title: SERVICE_NAME,
    version: SERVICE_VERSION,
    description:
      "Crypto derivatives data and SEC-filed company facts for software agents (the X-Data-Source header names the source: simulated, live or sec). The same 23 operations are MCP tools at /api/mcp."
  },
  servers: [{ url: "/" }],
  components: {
    securitySchemes: { bearerAuth: { type: "http", scheme: "bearer", description: "mdk_ + 32 base62 characters" } }
  },
  paths: {
    [BASE_PATH]: {
      get: {
        operationId: "root",
        summary: "The service's root document: operations, auth classes, credits, links.",
        security: [],
        responses: {
          "200": { description: "Root document", content: { "application/json": { schema: { type: "object" } } } }
        }
      }
    },
    [`${BASE_PATH}/openapi.json`]: {
      get: {
        operationId: "openapi",
        summary: "This document.",
        security: [],
        responses: {
          "200": { description: "OpenAPI 3.1", content: { "application/json": { schema: { type: "object" } } } }
        }
      }
    },
    ...Object.fromEntries(
      Operations.map((op) => [`${BASE_PATH}/${op.name}`, { get: operationObject(op, implemented) }])
    )
  }
})

/** `GET /api/v1`: the root document (DECISIONS: Envelope and shapes). */
export const rootDocument = (implemented: ReadonlySet<string>): Record<string, unknown> => ({
  name: SERVICE_NAME,
  version: SERVICE_VERSION,
  api: "v1",
  operations: Operations.map((op) => ({
    name: op.name,
    group: op.group,
    auth: op.auth,
    credits: creditsOf(op),
    status: implemented.has(op.name) ? "available" : "not_implemented"
  })),
  docs: `${BASE_PATH}/docs`,
  schema: `${BASE_PATH}/schema`,
  openapi: `${BASE_PATH}/openapi.json`,
  mcp: "/api/mcp",
  mcp_protocol_versions: [...MCP_PROTOCOL_VERSIONS]
})
