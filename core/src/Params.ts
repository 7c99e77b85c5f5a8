/**
 * Parameters as data. Each operation's parameters are declared once as `ParamSpec`s; from that one declaration
 * come the Effect Schema that validates a value, the JSON Schema served by `schema`, OpenAPI and MCP, the
 * tables in `docs`, and the decoder shared by every transport (query strings, MCP arguments, the library).
 */
import { Exit, Schema } from "effect"
import { assetIdMaxLength, assetIdPattern, isCanonicalAssetId, type Plane, planeOf } from "./AssetId.ts"
import type { BoundedCache } from "./BoundedCache.ts"
import { type ApiError, apiError } from "./Errors.ts"

export type ParamType =
  | { readonly kind: "enum"; readonly values: ReadonlyArray<string> }
  | { readonly kind: "int"; readonly min: number; readonly max: number }
  | { readonly kind: "boolean" }
  | { readonly kind: "string"; readonly minLength: number; readonly maxLength: number }
  | { readonly kind: "date" }
  | { readonly kind: "assetId" }
  | { readonly kind: "assetIdList"; readonly min: number; readonly max: number }
  | {
      readonly kind: "enumList"
      readonly values: ReadonlyArray<string>
      readonly min: number
      readonly max: number
    }
  | { readonly kind: "cursor" }

/** A default value, or one that depends on the plane of the requested asset(s). */
export type ParamDefault =
  | { readonly value: string | number | boolean | ReadonlyArray<string> }
  | { readonly byPlane: { readonly [P in Plane]: string } }

export interface ParamSpec {
  readonly name: string
  readonly type: ParamType
  /** The Effect Schema of its decoded value (`schemaOf(type)`), built once with the spec. */
  readonly schema: Schema.Top
  readonly required: boolean
  readonly default?: ParamDefault
  /** One or two sentences for agents: what it selects, with units. */
  readonly description: string
}

/** Rules that involve more than one parameter. */
export type CrossRule =
  /** Exactly one of the two: both is `conflicting_parameters`, neither is `missing_parameter`. */
  | { readonly rule: "exactlyOne"; readonly params: readonly [string, string] }
  /** When `param` is given explicitly, `on` (given or defaulted) must equal `equals`. */
  | { readonly rule: "requiresValue"; readonly param: string; readonly on: string; readonly equals: string }
  /** When `param` is given explicitly, the list `on` (given or defaulted) must include `includes`. */
  | { readonly rule: "requiresIncludes"; readonly param: string; readonly on: string; readonly includes: string }
  /** When `param` is given, none of `others` may be. */
  | { readonly rule: "excludes"; readonly param: string; readonly others: ReadonlyArray<string> }

/** A decoded parameter value. */
export type ParamValue = string | number | boolean | ReadonlyArray<string>

/** Decoded parameters with defaults applied, in declaration order. */
export type CanonicalParams = { readonly [name: string]: ParamValue }

/** Builders for the registry. */
export const Param = {
  enum: (
    name: string,
    values: ReadonlyArray<string>,
    o: { description: string; default?: string; required?: boolean }
  ): ParamSpec => spec(name, { kind: "enum", values }, o),
  int: (
    name: string,
    min: number,
    max: number,
    o: { description: string; default?: number; required?: boolean }
  ): ParamSpec => spec(name, { kind: "int", min, max }, o),
  boolean: (name: string, o: { description: string; default?: boolean }): ParamSpec =>
    spec(name, { kind: "boolean" }, o),
  string: (
    name: string,
    minLength: number,
    maxLength: number,
    o: { description: string; required?: boolean }
  ): ParamSpec => spec(name, { kind: "string", minLength, maxLength }, o),
  date: (name: string, o: { description: string }): ParamSpec => spec(name, { kind: "date" }, o),
  assetId: (name: string, o: { description: string; required?: boolean }): ParamSpec =>
    spec(name, { kind: "assetId" }, o),
  assetIdList: (name: string, min: number, max: number, o: { description: string }): ParamSpec =>
    spec(name, { kind: "assetIdList", min, max }, o),
  enumList: (
    name: string,
    values: ReadonlyArray<string>,
    min: number,
    max: number,
    o: { description: string; default?: ReadonlyArray<string> }
  ): ParamSpec => spec(name, { kind: "enumList", values, min, max }, o),
  cursor: (o: { description: string }): ParamSpec => spec("cursor", { kind: "cursor" }, o),
  /** An enum whose default depends on the plane of the requested asset. */
  enumByPlane: (
    name: string,
    values: ReadonlyArray<string>,
    byPlane: { readonly [P in Plane]: string },
    o: { description: string }
  ): ParamSpec => {
    const type: ParamType = { kind: "enum", values }
    return { name, type, schema: schemaOf(type), required: false, default: { byPlane }, ...o }
  }
}

function spec(
  name: string,
  type: ParamType,
  o: {
    description: string
    default?: string | number | boolean | ReadonlyArray<string>
    required?: boolean
  }
): ParamSpec {
  return {
    name,
    type,
    schema: schemaOf(type),
    required: o.required ?? false,
    description: o.description,
    ...(o.default === undefined ? {} : { default: { value: o.default } })
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Effect Schemas: the validating authority for each parameter's decoded value
// ---------------------------------------------------------------------------------------------------------------

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/
const noControl = Schema.makeFilter<string>((s) => !CONTROL.test(s) || "must not contain control characters")
/**
 * Text must be well-formed Unicode: a lone surrogate (possible in JSON arguments, never in a decoded query
 * string) is no character, and would make the canonical request (percent-encoded) impossible to form.
 */
const wellFormed = Schema.makeFilter<string>((s) => s.isWellFormed() || "must be well-formed Unicode")
/**
 * Lengths count characters (code points), as JSON Schema's `minLength`/`maxLength` do, so what the published
 * schema admits the decoder admits (80 emoji are 80 characters, not 160 UTF-16 units).
 */
const charactersBetween = (min: number, max: number) =>
  Schema.makeFilter<string>((s) => {
    let n = 0
    for (const _ of s) n++
    return (n >= min && n <= max) || `must be ${min} to ${max} characters`
  })
const CURSOR = /^[A-Za-z0-9_-]{1,1024}$/
const DATE = /^\d{4}-\d{2}-\d{2}$/
const isCalendarDate = Schema.makeFilter<string>((s) => {
  if (!DATE.test(s)) return "must be YYYY-MM-DD"
  const d = new globalThis.Date(`${s}T00:00:00Z`)
  return (!Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s) || "must be a real calendar date"
})

/** Exactly the canonical IDs (`planeOf`): the published pattern and `maxLength` together admit the same set. */
const AssetIdSchema = Schema.String.check(
  Schema.makeFilter<string>((s) => isCanonicalAssetId(s) || "must be a canonical asset ID")
)

/** The Effect Schema of a parameter's decoded value. */
export const schemaOf = (type: ParamType): Schema.Top => {
  switch (type.kind) {
    case "enum":
      return Schema.Literals(type.values)
    case "int":
      return Schema.Int.check(Schema.isBetween({ minimum: type.min, maximum: type.max }))
    case "boolean":
      return Schema.Boolean
    case "string":
      return Schema.String.check(wellFormed, charactersBetween(type.minLength, type.maxLength), noControl)
    case "date":
      return Schema.String.check(isCalendarDate)
    case "assetId":
      return AssetIdSchema
    case "assetIdList":
      return Schema.Array(AssetIdSchema).check(
        Schema.isMinLength(type.min),
        Schema.isMaxLength(type.max),
        Schema.isUnique()
      )
    case "enumList":
      return Schema.Array(Schema.Literals(type.values)).check(
        Schema.isMinLength(type.min),
        Schema.isMaxLength(type.max),
        Schema.isUnique()
      )
    case "cursor":
      return Schema.String.check(Schema.isPattern(CURSOR))
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Human descriptions of the accepted values (docs tables and error messages)
// ---------------------------------------------------------------------------------------------------------------

/** What a parameter accepts, in words. */
export const describeType = (type: ParamType): string => {
  switch (type.kind) {
    case "enum":
      return `one of ${type.values.join(", ")}`
    case "int":
      return `integer ${type.min} to ${type.max}`
    case "boolean":
      return "true or false"
    case "string":
      return `text, ${type.minLength} to ${type.maxLength} characters`
    case "date":
      return "date YYYY-MM-DD"
    case "assetId":
      return "one canonical asset ID"
    case "assetIdList":
      return `${type.min} to ${type.max} distinct canonical asset IDs, comma-separated`
    case "enumList":
      return `${type.min} to ${type.max} distinct of ${type.values.join(", ")}, comma-separated`
    case "cursor":
      return "opaque cursor from `next_cursor`"
  }
}

/** The default of a parameter, in words (empty when it has none). */
export const describeDefault = (p: ParamSpec): string => {
  const d = p.default
  if (d === undefined) return ""
  if ("byPlane" in d) return `crypto ${d.byPlane.crypto}, equity ${d.byPlane.equity}`
  return Array.isArray(d.value) ? d.value.join(",") : String(d.value)
}

const mustBe = (p: ParamSpec): string => {
  switch (p.type.kind) {
    case "assetId":
      return `\`${p.name}\` must be one canonical asset ID (crypto:<slug> or eq:<cik>:<ticker>); use resolve to turn a symbol or name into one`
    case "assetIdList":
      return `\`${p.name}\` must be ${p.type.min} to ${p.type.max} distinct canonical asset IDs (crypto:<slug> or eq:<cik>:<ticker>), comma-separated`
    case "string":
      return `\`${p.name}\` must be ${p.type.minLength} to ${p.type.maxLength} characters of well-formed text without control characters`
    default:
      return `\`${p.name}\` must be ${describeType(p.type)}`
  }
}

/** The raw value as text for a message. Never throws: in-process callers can pass anything. */
const textOf = (raw: unknown): string => {
  switch (typeof raw) {
    case "string":
      return raw
    case "object":
      if (raw === null) return "null"
      try {
        return JSON.stringify(raw)
      } catch {
        // Circular, or holding a BigInt.
        return Array.isArray(raw) ? "an array" : "an object"
      }
    default:
      return String(raw)
  }
}

const shown = (raw: unknown): string => {
  const s = textOf(raw)
  return JSON.stringify(s.length > 64 ? `${s.slice(0, 64)}...` : s)
}

// ---------------------------------------------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------------------------------------------

/** Turns a raw value (query string text, or a typed MCP/library argument) into the candidate for validation. */
const candidate = (type: ParamType, raw: unknown): unknown => {
  switch (type.kind) {
    case "int":
      if (typeof raw === "number") return raw
      if (typeof raw === "string" && /^[+-]?\d{1,16}$/.test(raw)) return Number(raw)
      return raw
    case "boolean":
      if (typeof raw === "boolean") return raw
      if (raw === "true") return true
      if (raw === "false") return false
      return raw
    case "assetIdList":
    case "enumList":
      if (typeof raw === "string") return raw.split(",")
      return raw
    default:
      return raw
  }
}

/**
 * Decodes one parameter. Returns the decoded value or the typed error naming it. A cursor that is not even
 * shaped like one of ours is `invalid_cursor`; everything else that does not fit is `invalid_parameter`.
 */
export const decodeParam = (p: ParamSpec, raw: unknown): ParamValue | ApiError => {
  if (typeof raw === "string" && raw.length === 0) return emptyValue(p)
  const exit = Schema.decodeUnknownExit(p.schema as Schema.Codec<unknown, unknown>)(candidate(p.type, raw))
  if (Exit.isSuccess(exit)) return exit.value as ParamValue
  if (p.type.kind === "cursor") {
    return apiError("invalid_cursor", "`cursor` is not a cursor this operation issued", { param: p.name })
  }
  return apiError("invalid_parameter", `${mustBe(p)}; got ${shown(raw)}`, { param: p.name })
}

/**
 * An empty value: a required parameter says it is required (there is nothing to fall back to), an optional one
 * with a default says to omit it, any other says what it must be.
 */
const emptyValue = (p: ParamSpec): ApiError => {
  const what = mustBe(p).replace(/^`[^`]*` must be /, "")
  const message = p.required
    ? `\`${p.name}\` is required and was given empty: ${what}`
    : p.default !== undefined
      ? `\`${p.name}\` must not be empty; omit it to use the default (${describeDefault(p)})`
      : `\`${p.name}\` must not be empty: omit it, or pass ${what}`
  return apiError("invalid_parameter", message, { param: p.name })
}

/**
 * Typed transports (MCP, whose `inputSchema` declares `integer` and `boolean` parameters as JSON types): the
 * first argument whose JSON type is not its parameter's, as the `invalid_parameter` the text decoder gives a
 * value outside the type (a string "5" for an integer is refused as HTTP refuses `x`); undefined when every
 * argument has its type. Names the operation does not take are left to `decodeParams`; `null` (omitted) is
 * fine.
 */
export const typedArgumentError = (
  op: { readonly params: ReadonlyArray<ParamSpec> },
  args: ReadonlyArray<readonly [string, unknown]>
): ApiError | undefined => {
  for (const [name, raw] of args) {
    const p = op.params.find((q) => q.name === name)
    if (p === undefined || raw === null) continue
    const want = p.type.kind === "int" ? "number" : p.type.kind === "boolean" ? "boolean" : undefined
    if (want === undefined || typeof raw === want) continue
    const json = p.type.kind === "int" ? "an integer" : "true or false"
    return apiError(
      "invalid_parameter",
      `${mustBe(p)}; got ${shown(raw)} (a JSON ${Array.isArray(raw) ? "array" : typeof raw}: pass ${json} as a JSON ${want})`,
      { param: p.name }
    )
  }
  return undefined
}

/** The part of an operation the decoder needs. */
export interface DecodeTarget {
  readonly name: string
  readonly params: ReadonlyArray<ParamSpec>
  readonly rules: ReadonlyArray<CrossRule>
}

/**
 * Decodes raw parameters for an operation: unknown and repeated names, presence conflicts, each value,
 * required parameters, then the rules between values; then fills defaults (plane defaults from the ID shape).
 * `raw` is a list of name/value pairs so that repetition is visible; MCP arguments and library calls pass
 * their object entries.
 */
export const decodeParams = (
  op: DecodeTarget,
  raw: ReadonlyArray<readonly [string, unknown]>,
  memo?: BoundedCache<string, DecodedParams>
): CanonicalParams | ApiError => {
  if (memo === undefined) return decodeParamsOnce(op, raw)
  // Decoding is a pure function of the operation and the pairs: a request seen before (all values strings, as
  // HTTP sends them) gets the same frozen result again from `memo` instead of running every schema.
  let key: string | undefined = `${op.name.length}:${op.name}`
  for (const [name, value] of raw) {
    if (typeof value !== "string") {
      key = undefined
      break
    }
    // Length-prefixed, so no name or value (percent-decoding lets them hold any character) can pass for another split.
    key += `${name.length}:${name}${value.length}:${value}`
  }
  if (key === undefined || key.length > DECODED_KEY_MAX) return decodeParamsOnce(op, raw)
  const known = memo.get(key)
  // The same name is the same operation in the registry; a target built apart (a test's) never shares an entry.
  if (known !== undefined && known.op === op) return known.params
  const decoded = decodeParamsOnce(op, raw)
  if (isApiError(decoded)) return decoded
  for (const v of Object.values(decoded)) if (Array.isArray(v)) Object.freeze(v)
  const frozen = Object.freeze(decoded)
  memo.set(key, { op, params: frozen })
  return frozen
}

/** A remembered decode: the operation it was decoded for, and the frozen parameters. */
export interface DecodedParams {
  readonly op: DecodeTarget
  readonly params: CanonicalParams
}

/** The longest pairs (as a memo key) whose decoding is remembered. */
const DECODED_KEY_MAX = 512

const decodeParamsOnce = (
  op: DecodeTarget,
  raw: ReadonlyArray<readonly [string, unknown]>
): CanonicalParams | ApiError => {
  const byName = new Map<string, ParamSpec>()
  for (const p of op.params) byName.set(p.name, p)
  const given = new Map<string, unknown>()
  for (const [name, value] of raw) {
    const p = byName.get(name)
    if (p === undefined) {
      const known = op.params.map((q) => q.name)
      return apiError(
        "invalid_parameter",
        known.length === 0
          ? `\`${op.name}\` takes no parameters; got ${shown(name)}`
          : `unknown parameter ${shown(name)} for \`${op.name}\`; it takes: ${known.join(", ")}`,
        { param: name }
      )
    }
    if (given.has(name)) {
      return apiError("invalid_parameter", `\`${name}\` was given more than once; pass it once`, { param: name })
    }
    given.set(name, value)
  }
  for (const r of op.rules) {
    if (r.rule === "exactlyOne" && given.has(r.params[0]) && given.has(r.params[1])) {
      return apiError("conflicting_parameters", `pass either \`${r.params[0]}\` or \`${r.params[1]}\`, not both`, {
        param: r.params[1]
      })
    }
    if (r.rule === "excludes" && given.has(r.param)) {
      const other = r.others.find((o) => given.has(o))
      if (other !== undefined) {
        return apiError(
          "conflicting_parameters",
          `\`${r.param}\` inspects one asset and cannot be combined with \`${other}\``,
          { param: other }
        )
      }
    }
  }
  const out: Record<string, ParamValue> = {}
  for (const p of op.params) {
    if (!given.has(p.name)) continue
    const v = decodeParam(p, given.get(p.name))
    if (typeof v === "object" && v !== null && "_tag" in v) return v
    out[p.name] = v
  }
  for (const p of op.params) {
    if (p.required && !given.has(p.name)) {
      return apiError("missing_parameter", `\`${p.name}\` is required: ${mustBe(p).replace(/^`[^`]*` must be /, "")}`, {
        param: p.name
      })
    }
  }
  for (const r of op.rules) {
    if (r.rule === "exactlyOne" && !given.has(r.params[0]) && !given.has(r.params[1])) {
      return apiError("missing_parameter", `pass \`${r.params[0]}\` (one asset) or \`${r.params[1]}\` (a batch)`, {
        param: r.params[0]
      })
    }
  }
  // Defaults, in declaration order.
  const planes = planesOf(out)
  for (const p of op.params) {
    if (p.name in out || p.default === undefined) continue
    if ("value" in p.default) out[p.name] = p.default.value
    else if (planes.size === 1) out[p.name] = p.default.byPlane[[...planes][0] as Plane]
  }
  for (const r of op.rules) {
    if (r.rule === "requiresValue" && given.has(r.param) && out[r.on] !== r.equals) {
      return apiError(
        "parameter_requires",
        `\`${r.param}\` requires \`${r.on}=${r.equals}\`; \`${r.on}\` is ${shown(out[r.on])}`,
        { param: r.param }
      )
    }
    if (r.rule === "requiresIncludes" && given.has(r.param)) {
      const list = out[r.on]
      if (!Array.isArray(list) || !list.includes(r.includes)) {
        return apiError("parameter_requires", `\`${r.param}\` requires \`${r.on}\` to include \`${r.includes}\``, {
          param: r.param
        })
      }
    }
  }
  // Declaration order for a stable canonical form.
  const ordered: Record<string, ParamValue> = {}
  for (const p of op.params) {
    const v = out[p.name]
    if (v !== undefined) ordered[p.name] = v
  }
  return ordered
}

/** The planes named by `id`/`ids` in decoded parameters. */
export const planesOf = (params: CanonicalParams): Set<Plane> => {
  const planes = new Set<Plane>()
  const ids = [params.id, ...(Array.isArray(params.ids) ? params.ids : [])]
  for (const id of ids) {
    if (typeof id !== "string") continue
    const plane = planeOf(id)
    if (plane !== undefined) planes.add(plane)
  }
  return planes
}

/** Whether a decode result is an error. */
export const isApiError = (u: unknown): u is ApiError =>
  typeof u === "object" && u !== null && "_tag" in u && (u as { _tag: unknown })._tag === "ApiError"

/**
 * The canonical text of a decoded request: operation and parameters sorted by name, lists comma-joined in the
 * order given. Equal for the same call over any transport and any query-string order.
 */
export const canonicalRequest = (operation: string, params: CanonicalParams): string => {
  const names = Object.keys(params).sort()
  const parts = names.map((n) => {
    const v = params[n] as ParamValue
    const text = Array.isArray(v) ? v.join(",") : String(v)
    return `${encodeURIComponent(n)}=${encodeURIComponent(text)}`
  })
  return parts.length === 0 ? operation : `${operation}?${parts.join("&")}`
}

// ---------------------------------------------------------------------------------------------------------------
// JSON Schema (2020-12) of parameters, for `schema`, OpenAPI and MCP tools
// ---------------------------------------------------------------------------------------------------------------

export type JsonSchema = { readonly [k: string]: unknown }

/**
 * The forms a parameter schema is published in:
 * - `query`: the query-string text (`schema`'s OpenAPI parameters); lists are one comma-joined string.
 * - `typed`: typed arguments, every rule the keywords of JSON Schema 2020-12 can state (`schema`'s
 *   `input_schema`); lists are an array or a comma-joined string (`anyOf`).
 * - `tool`: the MCP tools' `inputSchema`, in the subset of JSON Schema that model providers' tool-schema
 *   validators accept (OpenAI's strict function schemas, Gemini's OpenAPI 3.0 subset; the rules are in the
 *   `mcp` docs section and checked by test/mcp-tool-schemas.test.ts): one `type` per node, no `anyOf`/`$ref`/
 *   `format`/`default`/`uniqueItems`/`minLength`/`maxLength`, patterns without lookaround. Lists are arrays.
 *   What those keywords said moves into the description; the decoder still checks all of it.
 */
export type SchemaForm = "query" | "typed" | "tool"

/**
 * The cursor's `tool` pattern: `{1,1024}` exceeds the largest repeat count RE2 (which some providers compile
 * patterns with) takes, 1000, so the length moves to the description.
 */
const TOOL_CURSOR_PATTERN = "^[A-Za-z0-9_-]+$"

/** Sentences a `tool` description adds for the rules its schema cannot state. */
const toolNotes = (p: ParamSpec): ReadonlyArray<string> => {
  const t = p.type
  const notes: Array<string> = []
  switch (t.kind) {
    case "string":
      notes.push(`${t.minLength} to ${t.maxLength} characters.`)
      break
    case "date":
      notes.push("A calendar date, YYYY-MM-DD.")
      break
    case "assetId":
      notes.push("A crypto slug is at most 64 characters.")
      break
    case "assetIdList":
      notes.push("An array; one comma-joined string is accepted too.")
      break
    case "enumList":
      notes.push("An array of distinct values; one comma-joined string is accepted too.")
      break
    case "cursor":
      notes.push("At most 1024 characters.")
      break
    default:
      break
  }
  const d = p.default
  // Stated once: some descriptions already name their (plane-dependent) default.
  if (d !== undefined && !/\bdefault\b/i.test(p.description)) {
    notes.push(
      "byPlane" in d
        ? `Default: ${d.byPlane.crypto} for crypto, ${d.byPlane.equity} for equity.`
        : `Default: ${Array.isArray(d.value) ? d.value.join(",") : String(d.value)}.`
    )
  }
  return notes
}

/**
 * The JSON Schema of one parameter's value, in one of the published forms (see `SchemaForm`). No form uses
 * lookaround in a pattern.
 */
export const paramJsonSchema = (p: ParamSpec, form: SchemaForm): JsonSchema => {
  const t = p.type
  if (form === "tool") {
    const description = [p.description, ...toolNotes(p)].join(" ")
    switch (t.kind) {
      case "enum":
        return { type: "string", enum: [...t.values], description }
      case "int":
        return { type: "integer", minimum: t.min, maximum: t.max, description }
      case "boolean":
        return { type: "boolean", description }
      case "string":
        return { type: "string", description }
      case "date":
        return { type: "string", pattern: DATE.source, description }
      case "assetId":
        return { type: "string", pattern: assetIdPattern, description }
      case "cursor":
        return { type: "string", pattern: TOOL_CURSOR_PATTERN, description }
      case "assetIdList":
      case "enumList": {
        const items =
          t.kind === "enumList" ? { type: "string", enum: [...t.values] } : { type: "string", pattern: assetIdPattern }
        return { type: "array", items, minItems: t.min, maxItems: t.max, description }
      }
    }
  }
  const base: Record<string, unknown> = { description: p.description }
  const d = p.default
  if (d !== undefined && "value" in d) {
    base.default = Array.isArray(d.value) && form === "query" ? d.value.join(",") : d.value
  }
  const assetId = { type: "string", pattern: assetIdPattern, maxLength: assetIdMaxLength }
  switch (t.kind) {
    case "enum":
      return { type: "string", enum: [...t.values], ...base }
    case "int":
      return { type: "integer", minimum: t.min, maximum: t.max, ...base }
    case "boolean":
      return { type: "boolean", ...base }
    case "string":
      return { type: "string", minLength: t.minLength, maxLength: t.maxLength, ...base }
    case "date":
      return { type: "string", format: "date", pattern: DATE.source, ...base }
    case "assetId":
      return { ...assetId, ...base }
    case "cursor":
      return { type: "string", pattern: CURSOR.source, ...base }
    case "assetIdList":
    case "enumList": {
      const item = t.kind === "enumList" ? { type: "string", enum: [...t.values] } : assetId
      const array = { type: "array", items: item, minItems: t.min, maxItems: t.max, uniqueItems: true }
      const joined = { type: "string", description: "comma-joined list" }
      return form === "query" ? { ...joined, ...base } : { anyOf: [array, joined], ...base }
    }
  }
}

/** The JSON Schema object of an operation's parameters. */
export const paramsJsonSchema = (params: ReadonlyArray<ParamSpec>, form: SchemaForm): JsonSchema => ({
  type: "object",
  properties: Object.fromEntries(params.map((p) => [p.name, paramJsonSchema(p, form)])),
  required: params.filter((p) => p.required).map((p) => p.name),
  additionalProperties: false
})
