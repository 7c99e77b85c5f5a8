/**
 * The 23 MCP tools, generated from the registry: one per operation, named as the operation, with the
 * parameters' JSON Schema as `inputSchema` (in the portable `tool` form: see `SchemaForm` in the core) and, on
 * request, the result and error bodies' JSON Schema (from the same Effect Schemas that `schema` and OpenAPI
 * serve) as `outputSchema`. Nothing here is written per tool.
 *
 * `tools/list` leaves `outputSchema` out by default: the 23 output schemas are about 75 KB that a model reads
 * on every turn and no host needs to call a tool. `schema?resource=<op>` serves each as `result_schema`, and a
 * client that wants them in `tools/list` (to validate `structuredContent`) connects to `/api/mcp?output_schemas=true`.
 */
import { createHash } from "node:crypto"
import {
  creditsOf,
  describePrice,
  ErrorBody,
  ErrorCodes,
  type JsonSchema,
  type OperationSpec,
  Operations,
  paramsJsonSchema,
  Results
} from "@market-data/core"
import { Schema } from "effect"

/** The JSON Schema dialect of every tool schema (MCP 2025-11-25 defaults to it; output schemas also say so). */
export const JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

export interface ToolDefinition {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly inputSchema: JsonSchema
  /** Only in the full listing (`?output_schemas=true`). */
  readonly outputSchema?: JsonSchema
  readonly annotations: {
    readonly title: string
    readonly readOnlyHint: true
    readonly idempotentHint: true
  }
}

const NON_FINITE = JSON.stringify({ type: "string", enum: ["Infinity", "-Infinity", "NaN"] })

/**
 * Effect describes `Schema.Number` by its encoded form, which admits the strings "Infinity", "-Infinity" and
 * "NaN". On our wire a measurement is always a JSON number (JSON has no non-finite numbers), so those
 * alternatives are dropped to make the schema say what a client really receives.
 */
const finiteNumbers = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(finiteNumbers)
  if (typeof node !== "object" || node === null) return node
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(node)) out[k] = finiteNumbers(v)
  const anyOf = out.anyOf
  if (Array.isArray(anyOf)) {
    const kept = anyOf.filter((m) => JSON.stringify(m) !== NON_FINITE)
    if (kept.length === 1) {
      const { anyOf: _, ...rest } = out
      return { ...rest, ...(kept[0] as object) }
    }
    out.anyOf = kept
  }
  return out
}

/** JSON Schema 2020-12 of an Effect Schema, with its definitions as `$defs`. */
const jsonSchemaOf = (schema: Schema.Top): Record<string, unknown> => {
  const doc = Schema.toJsonSchemaDocument(schema)
  const root = finiteNumbers(doc.schema) as Record<string, unknown>
  const defs = doc.definitions as Record<string, unknown>
  return Object.keys(defs).length === 0 ? root : { ...root, $defs: finiteNumbers(defs) }
}

/**
 * What `structuredContent` can be: the success envelope (`{data}`; a batch's `{data: [...], refused}`; for
 * `docs`, `{data: {section, markdown}}`) or the error object `{error: {code, message, param?, retryable}}`.
 * Clients validate `structuredContent` even on `isError` results, so both are admitted.
 */
export const outputSchemaOf = (op: OperationSpec): JsonSchema => {
  const single = Results.single(op.result)
  const success = op.batch ? [single, Results.batch(op.result)] : [single]
  const union = jsonSchemaOf(Schema.Union([...success, ErrorBody]))
  return { $schema: JSON_SCHEMA_DIALECT, type: "object", ...union }
}

/**
 * `inputSchema`: typed arguments in the portable `tool` form (lists as arrays; no `$schema`: MCP 2025-11-25
 * reads a schema without one as JSON Schema 2020-12, and some providers refuse the keyword).
 */
export const inputSchemaOf = (op: OperationSpec): JsonSchema => paramsJsonSchema(op.params, "tool")

const titleOf = (op: OperationSpec): string => {
  const words = op.name.replace(/_/g, " ")
  return words.charAt(0).toUpperCase() + words.slice(1)
}

const accessLine = (op: OperationSpec): string => {
  switch (op.auth) {
    case "keyless":
      return "Keyless and free."
    case "key":
      return "Needs the API key (Bearer header of the connection); 0 credits."
    case "paid":
      return `Needs the API key (Bearer header of the connection). Credits (1 = 1 US cent): ${describePrice(op)}; charged in \`_meta.credits_charged\`.`
  }
}

/**
 * The description an agent reads to decide whether and how to call the tool: what it answers, its access and
 * price, its plane and the batch form. The conventions every tool shares (error results, data source) are said
 * once, in the server's `instructions` and the `mcp` docs section.
 */
export const describeTool = (op: OperationSpec): string => {
  const lines = [`${op.summary} ${op.description}`, accessLine(op)]
  const [only] = op.planes
  if (op.planes.length === 1 && only !== undefined && op.group !== "discovery") {
    lines.push(`${only.charAt(0).toUpperCase()}${only.slice(1)} assets only (else \`plane_mismatch\`).`)
  }
  if (op.batch) {
    lines.push(
      "Give `id`, or `ids` (2 to 10) for a batch `{data: [...], refused: [{id, reason}]}`; refused assets cost nothing."
    )
  }
  if (op.markdown) lines.push("Answers `{data: {section, markdown}}`; the markdown is also the text content.")
  return lines.join("\n")
}

const toolOf = (op: OperationSpec, withOutputSchema: boolean): ToolDefinition => {
  const title = titleOf(op)
  return {
    name: op.name,
    title,
    description: describeTool(op),
    inputSchema: inputSchemaOf(op),
    ...(withOutputSchema ? { outputSchema: outputSchemaOf(op) } : {}),
    annotations: { title, readOnlyHint: true, idempotentHint: true }
  }
}

/** The 23 tools as `tools/list` lists them by default (no `outputSchema`), in the registry's order. */
export const Tools: ReadonlyArray<ToolDefinition> = Operations.map((op) => toolOf(op, false))

/** The 23 tools with their `outputSchema`s (`/api/mcp?output_schemas=true`). */
export const ToolsWithOutputSchemas: ReadonlyArray<ToolDefinition> = Operations.map((op) => toolOf(op, true))

/**
 * The asset a call is about, mirrored into a header at 2026-07-28 (`x-mcp-header`): a client sends the `id`
 * argument also as `Mcp-Param-Asset-Id`, so a gateway can route or meter by asset without reading the body; the
 * server refuses a call whose header and `id` differ (`Modern.ts`).
 */
export const ASSET_ID_HEADER = "Asset-Id"

const withMirroredAssetId = (t: ToolDefinition): ToolDefinition => {
  const properties = (t.inputSchema as { readonly properties?: Record<string, Record<string, unknown>> }).properties
  const id = properties?.id
  if (id === undefined || id.type !== "string") return t
  return {
    ...t,
    inputSchema: { ...t.inputSchema, properties: { ...properties, id: { ...id, "x-mcp-header": ASSET_ID_HEADER } } }
  }
}

/** The tools as 2026-07-28 lists them: in the registry's order (deterministic), `id` mirrored into a header. */
export const ModernTools: ReadonlyArray<ToolDefinition> = Tools.map(withMirroredAssetId)
export const ModernToolsWithOutputSchemas: ReadonlyArray<ToolDefinition> =
  ToolsWithOutputSchemas.map(withMirroredAssetId)

const mirroredByName = new Map(
  ModernTools.map((t) => [
    t.name,
    Object.entries(
      (t.inputSchema as { readonly properties?: Record<string, Record<string, unknown>> }).properties ?? {}
    )
      .filter(([, p]) => typeof p["x-mcp-header"] === "string")
      .map(([property, p]) => ({ property, header: p["x-mcp-header"] as string }))
  ])
)

/** The `x-mcp-header` properties of a tool at 2026-07-28 (none for an unknown tool). */
export const mirroredParams = (name: string): ReadonlyArray<{ readonly property: string; readonly header: string }> =>
  mirroredByName.get(name) ?? []

const toolsByName = new Map(Tools.map((t) => [t.name, t]))

/** The tool named `name`, or undefined. */
export const tool = (name: string): ToolDefinition | undefined => toolsByName.get(name)

/**
 * The catalog-version beacon of a set of operations: a hash of everything a client may have cached about them
 * (tools with their schemas and descriptions, prices, error codes).
 */
export const catalogVersionOf = (ops: ReadonlyArray<OperationSpec>): string =>
  createHash("sha256")
    .update(
      JSON.stringify({ tools: ops.map((op) => toolOf(op, true)), prices: ops.map(creditsOf), errors: ErrorCodes })
    )
    .digest("hex")
    .slice(0, 16)

/**
 * The catalog version of this service. It changes exactly when the registry does, and is sent in
 * `_meta.catalog_version` of `tools/list` and as the `X-Catalog-Version` header of every HTTP and MCP answer, so
 * an agent can tell that its cached catalog is stale.
 */
export const catalogVersion: string = catalogVersionOf(Operations)

/** The response header that carries `catalogVersion`. */
export const CATALOG_VERSION_HEADER = "x-catalog-version"
