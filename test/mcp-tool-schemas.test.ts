/**
 * What MCP hosts get from `tools/list`, checked against the rules of the model providers they hand the tools to.
 *
 * The rules, as this project applies them (the `mcp` docs section states the same list):
 *
 * Size: the default `tools/list` answer is under 40 KB, with every tool's name, title, description,
 * inputSchema and annotations; output schemas come only with `?output_schemas=true` (and from `schema`).
 *
 * OpenAI function calling with `strict: true` (the Structured Outputs subset of JSON Schema):
 * - O1 the root is `type: "object"` (never `anyOf` at the root) with `properties`;
 * - O2 every object says `additionalProperties: false`;
 * - O3 no `$ref`/`$defs`/`definitions`, `allOf`, `oneOf`, `not`, `if`/`then`/`else`, `dependentRequired`,
 *   `dependentSchemas`, `patternProperties`, `propertyNames`, `unevaluatedProperties`, `contains`,
 *   `prefixItems`, `uniqueItems`, `minLength`, `maxLength`, `default`, `$schema`: only `type`, `description`,
 *   `enum`, `properties`, `required`, `additionalProperties`, `items`, `pattern`, `minimum`, `maximum`,
 *   `minItems`, `maxItems`;
 * - O4 at most 5000 properties, nesting depth 10, 1000 enum values in all;
 * - O5 strict mode wants every property in `required`, optional ones nullable. We publish optional parameters
 *   as optional (hosts without strict mode, and every other provider, read that best) and accept `null` for
 *   any of them as "omitted": so the mechanical strict variant (all required, optional ones `type: [t, "null"]`)
 *   passes O1 to O4 and the service answers it exactly as it answers the call without them.
 *
 * Gemini function declarations (the OpenAPI 3.0 subset of its `Schema`):
 * - G1 each node has one `type` (no type arrays), one of string, number, integer, boolean, array, object;
 * - G2 keywords only from: type, description, enum (strings only), properties, required, items, minItems,
 *   maxItems, minimum, maximum, pattern; plus `additionalProperties: false` at the root, which OpenAI's O2
 *   needs and Gemini's `parametersJsonSchema` accepts (a host filling the OpenAPI-style `parameters` field
 *   drops it);
 * - G3 no `$ref`, no `anyOf` at the root (none anywhere here), no `format` (Gemini knows only `enum` and
 *   `date-time` for strings);
 * - G4 function names match ^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$ and parameter names ^[A-Za-z_][A-Za-z0-9_]{0,63}$;
 * - G5 Gemini wants a non-empty `properties` on an object: the one tool without parameters (`usage`) has
 *   `properties: {}`, as MCP and OpenAI's strict mode expect, and a Gemini host declares it without `parameters`.
 *
 * Patterns (both): R1 they compile as ECMA-262 regexes with the `u` flag (JSON Schema's dialect); R2 no
 * lookaround (`(?=`, `(?!`, `(?<=`, `(?<!`) and no backreferences, which RE2-based validators refuse; R3 no
 * repeat bound above 1000 (RE2's limit).
 *
 * And what the schemas no longer state, the service still refuses: the decoder admits exactly the canonical
 * IDs the old lookahead pattern admitted.
 */
import { isCanonicalAssetId, MCP_TOOLS_LIST_MAX_BYTES, Operations, paramsJsonSchema } from "@market-data/core"
import { Tools, ToolsWithOutputSchemas } from "@market-data/mcp"
import { Effect } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeTestPlane } from "../core/test/support/TestPlane.ts"
import { callTool, listToolsWithOutputSchemas, makeAjv, mcpPost, rpc } from "./support/mcp.ts"
import { startServer, type TestServer } from "./support/server.ts"

type Node = { readonly [k: string]: unknown }

const MAX_TOOLS_LIST_BYTES = 40 * 1024
it("holds the ceiling the mcp docs section states", () => expect(MCP_TOOLS_LIST_MAX_BYTES).toBe(MAX_TOOLS_LIST_BYTES))

const OPENAI_KEYWORDS = new Set([
  "type",
  "description",
  "enum",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "pattern",
  "minimum",
  "maximum",
  "minItems",
  "maxItems"
])
const GEMINI_KEYWORDS = new Set([
  "type",
  "description",
  "enum",
  "properties",
  "required",
  "items",
  "minItems",
  "maxItems",
  "minimum",
  "maximum",
  "pattern"
])
const GEMINI_TYPES = new Set(["string", "number", "integer", "boolean", "array", "object"])

/** Every schema node below (and including) `node`, with its depth. */
const nodes = (node: Node, depth = 1): Array<{ node: Node; depth: number }> => {
  const out = [{ node, depth }]
  const props = node.properties as { [k: string]: Node } | undefined
  for (const child of Object.values(props ?? {})) out.push(...nodes(child, depth + 1))
  if (typeof node.items === "object" && node.items !== null) out.push(...nodes(node.items as Node, depth + 1))
  return out
}

/** The rule violations of one input schema under OpenAI's strict rules O1 to O4 (O5 is checked separately). */
const openAiViolations = (schema: Node): Array<string> => {
  const v: Array<string> = []
  if (schema.type !== "object" || typeof schema.properties !== "object") v.push("O1 root is not an object")
  let properties = 0
  let enums = 0
  for (const { node, depth } of nodes(schema)) {
    if (depth > 10) v.push("O4 deeper than 10")
    for (const k of Object.keys(node)) if (!OPENAI_KEYWORDS.has(k)) v.push(`O3 keyword ${k}`)
    const types = Array.isArray(node.type) ? node.type : [node.type]
    if (types.includes("object") && node.additionalProperties !== false) v.push("O2 open object")
    properties += Object.keys((node.properties as object | undefined) ?? {}).length
    enums += Array.isArray(node.enum) ? node.enum.length : 0
  }
  if (properties > 5000) v.push("O4 more than 5000 properties")
  if (enums > 1000) v.push("O4 more than 1000 enum values")
  return v
}

/** OpenAI strict mode's extra rule O5 on top of O1 to O4. */
const strictViolations = (schema: Node): Array<string> => {
  const v = openAiViolations(schema)
  for (const { node } of nodes(schema)) {
    if (node.properties === undefined) continue
    const required = new Set(node.required as ReadonlyArray<string>)
    for (const name of Object.keys(node.properties as object)) if (!required.has(name)) v.push(`O5 ${name} optional`)
  }
  return v
}

/** The mechanical strict variant of a tool schema: every property required, the optional ones nullable. */
const strictVariant = (schema: Node): Node => {
  const required = new Set(schema.required as ReadonlyArray<string>)
  const properties = Object.fromEntries(
    Object.entries(schema.properties as { [k: string]: Node }).map(([name, p]) => [
      name,
      required.has(name) ? p : { ...p, type: [p.type, "null"] }
    ])
  )
  return { ...schema, properties, required: Object.keys(properties) }
}

const geminiViolations = (schema: Node): Array<string> => {
  const v: Array<string> = []
  for (const { node, depth } of nodes(schema)) {
    for (const k of Object.keys(node)) {
      if (k === "additionalProperties" && depth === 1 && node[k] === false) continue
      if (!GEMINI_KEYWORDS.has(k)) v.push(`G2/G3 keyword ${k}`)
    }
    if (typeof node.type !== "string" || !GEMINI_TYPES.has(node.type)) v.push(`G1 type ${JSON.stringify(node.type)}`)
    if (node.enum !== undefined && node.type !== "string") v.push("G2 enum on a non-string")
  }
  for (const name of Object.keys(schema.properties as object)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(name)) v.push(`G4 parameter name ${name}`)
  }
  for (const { node, depth } of nodes(schema)) {
    if (
      depth > 1 &&
      node.type === "object" &&
      Object.keys((node.properties as object | undefined) ?? {}).length === 0
    ) {
      v.push("G5 empty nested object")
    }
  }
  return v
}

const patternViolations = (schema: Node): Array<string> => {
  const v: Array<string> = []
  for (const { node } of nodes(schema)) {
    if (typeof node.pattern !== "string") continue
    const p = node.pattern
    try {
      new RegExp(p, "u")
    } catch {
      v.push(`R1 ${p}`)
    }
    if (/\(\?<?[=!]/.test(p) || /\\[1-9]|\\k</.test(p)) v.push(`R2 ${p}`)
    for (const m of p.matchAll(/\{(\d+)(?:,(\d*))?\}/g)) {
      if (Number(m[1]) > 1000 || Number(m[2] ?? 0) > 1000) v.push(`R3 ${p}`)
    }
  }
  return v
}

let server: TestServer
beforeAll(async () => {
  const plane = await Effect.runPromise(makeTestPlane())
  server = await startServer({ rateLimitPerMinute: 100_000 }, [plane.handlers])
})
afterAll(() => server?.close())

describe("tools/list for MCP hosts", () => {
  it("answers under 40 KB by default, every tool with name, title, description, inputSchema and annotations", async () => {
    const res = await rpc(server.base, "tools/list", {})
    expect(res.status).toBe(200)
    expect(Buffer.byteLength(res.text)).toBeLessThan(MAX_TOOLS_LIST_BYTES)
    const tools = res.body.result.tools as ReadonlyArray<Node>
    expect(tools.map((t) => t.name)).toEqual(Operations.map((o) => o.name))
    for (const t of tools) {
      expect(Object.keys(t).sort(), String(t.name)).toEqual(
        ["annotations", "description", "inputSchema", "name", "title"].sort()
      )
      expect(String(t.description).length, String(t.name)).toBeGreaterThan(80)
    }
    expect(tools).toEqual(JSON.parse(JSON.stringify(Tools)))
  })

  it("has one tool without parameters (G5): usage", () => {
    const empty = Tools.filter((t) => Object.keys(t.inputSchema.properties as object).length === 0)
    expect(empty.map((t) => t.name)).toEqual(["usage"])
  })

  it("adds every outputSchema with ?output_schemas=true, and refuses another value", async () => {
    const plain = await mcpPost(
      server.base,
      { jsonrpc: "2.0", id: 1, method: "tools/list" },
      {},
      "POST",
      "?output_schemas=false"
    )
    expect(plain.body.result.tools).toEqual(JSON.parse(JSON.stringify(Tools)))
    const full = await listToolsWithOutputSchemas(server.base)
    expect(full.body.result.tools).toEqual(JSON.parse(JSON.stringify(ToolsWithOutputSchemas)))
    for (const t of full.body.result.tools) expect(t.outputSchema.type, t.name).toBe("object")
    for (const query of ["?output_schemas=yes", "?output_schemas=true&output_schemas=true"]) {
      const url = `${server.base}/api/mcp${query}`
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
      })
      expect(res.status, query).toBe(400)
      expect(((await res.json()) as { error: { message: string } }).error.message).toContain("output_schemas")
    }
  })
})

describe("input schemas under the providers' rules (see the file header)", () => {
  for (const t of Tools) {
    it(`${t.name}: OpenAI O1-O4, Gemini G1-G4, patterns R1-R3`, () => {
      const schema = t.inputSchema as Node
      expect(openAiViolations(schema)).toEqual([])
      expect(geminiViolations(schema)).toEqual([])
      expect(patternViolations(schema)).toEqual([])
      expect(t.name).toMatch(/^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$/) // G4
      expect(t.name).toMatch(/^[A-Za-z0-9_-]{1,64}$/) // OpenAI function names
      // O5: the strict variant passes every rule and still compiles.
      const strict = strictVariant(schema)
      expect(strictViolations(strict)).toEqual([])
      makeAjv().compile(strict)
    })
  }

  it("the rules are not vacuous: the previous schema form breaks them", () => {
    // The `typed` form (what `schema` serves as `input_schema`) is what tools/list used to carry.
    const price = paramsJsonSchema(Operations.find((o) => o.name === "price")!.params, "typed") as Node
    expect(openAiViolations(price)).toContain("O3 keyword anyOf")
    expect(geminiViolations(price)).toContain("G1 type undefined")
    expect(
      patternViolations({
        type: "object",
        properties: { id: { type: "string", pattern: "^crypto:(?=.{1,64}$)[a-z]+$" } }
      })
    ).toHaveLength(1)
    expect(
      patternViolations({ type: "object", properties: { c: { type: "string", pattern: "^a{1,1024}$" } } })
    ).toEqual(["R3 ^a{1,1024}$"])
    expect(strictViolations(Tools.find((t) => t.name === "series")!.inputSchema as Node)).toContain("O5 view optional")
  })

  it("serves the strict variant's nulls as omitted parameters, on every tool", async () => {
    const { key } = await server.newKey(100_000, 100_000)
    const parameterErrors = new Set(["invalid_parameter", "missing_parameter", "conflicting_parameters"])
    for (const op of Operations) {
      const args: Record<string, unknown> = {}
      for (const p of op.params) {
        if (p.required) args[p.name] = p.type.kind === "assetId" ? "crypto:bitcoin" : p.name === "q" ? "btc" : "x"
        else args[p.name] = null
      }
      if (op.rules.some((r) => r.rule === "exactlyOne")) args.id = "crypto:bitcoin"
      const { result } = await callTool(server.base, op.name, args, { Authorization: `Bearer ${key}` })
      const code = result.isError ? result.structuredContent.error.code : undefined
      expect(parameterErrors.has(code), `${op.name}: ${JSON.stringify(result.structuredContent)}`).toBe(false)
      // Anything else (a result, or `not_implemented` on the operations the test plane lacks) comes after decoding.
    }
  })
})

describe("validation stays as strict as the old lookahead pattern", () => {
  const OLD =
    /^(?:crypto:(?=.{1,64}$)[a-z0-9]+(?:-[a-z0-9]+)*|eq:[1-9][0-9]{0,9}:[A-Z0-9]{1,10}(?:[.-][A-Z0-9]{1,5})?)$/
  const samples = [
    "crypto:bitcoin",
    `crypto:${"a".repeat(64)}`,
    `crypto:${"a".repeat(65)}`,
    `crypto:${"a-".repeat(32)}b`,
    "crypto:a--b",
    "crypto:-a",
    "crypto:a-",
    "crypto:",
    "crypto:BTC",
    "eq:320193:AAPL",
    "eq:0320193:AAPL",
    "eq:1:BRK.B",
    "eq:1:BRK.",
    "eq:12345678901:A"
  ]

  it("admits exactly the same IDs (fixed samples and generated strings), in the decoder and in `schema`'s form", () => {
    const ajv = makeAjv()
    const typed = paramsJsonSchema(Operations.find((o) => o.name === "price")!.params, "typed") as Node
    const rich = ajv.compile((typed.properties as { [k: string]: Node }).id as Node)
    const check = (s: string) => {
      expect(isCanonicalAssetId(s), s).toBe(OLD.test(s))
      expect(rich(s), s).toBe(OLD.test(s))
    }
    for (const s of samples) check(s)
    const slug = fc.string({ unit: fc.constantFrom("a", "z", "0", "-", "A"), minLength: 0, maxLength: 70 })
    fc.assert(
      fc.property(slug, (s) => check(`crypto:${s}`)),
      { numRuns: 2000 }
    )
    const eq = fc.string({ unit: fc.constantFrom("0", "1", "9", "A", "Z", ".", "-", ":"), maxLength: 30 })
    fc.assert(
      fc.property(eq, (s) => check(`eq:${s}`)),
      { numRuns: 2000 }
    )
  })

  it("refuses through the tool what the schema leaves to the description, with the same typed error", async () => {
    const cases: ReadonlyArray<readonly [string, Record<string, unknown>, string, string]> = [
      ["price", { id: `crypto:${"a".repeat(65)}` }, "invalid_parameter", "id"],
      ["price", { ids: ["crypto:bitcoin", "crypto:bitcoin"] }, "invalid_parameter", "ids"],
      ["events", { id: "eq:320193:AAPL", since: "2025-02-30" }, "invalid_parameter", "since"],
      ["series", { id: "crypto:bitcoin", cursor: "a".repeat(1025) }, "invalid_cursor", "cursor"],
      ["resolve", { q: "x".repeat(81) }, "invalid_parameter", "q"],
      ["financials", { id: "eq:320193:AAPL", statements: ["income", "income"] }, "invalid_parameter", "statements"]
    ]
    const { key } = await server.newKey(10)
    for (const [name, args, code, param] of cases) {
      const { result } = await callTool(server.base, name, args, { Authorization: `Bearer ${key}` })
      expect(result.isError, `${name} ${JSON.stringify(args)}`).toBe(true)
      expect(result.structuredContent.error).toMatchObject({ code, param })
      expect(result._meta.credits_charged).toBe(0)
    }
  })
})
