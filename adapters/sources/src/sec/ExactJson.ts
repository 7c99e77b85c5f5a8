/**
 * JSON with exact numbers. `JSON.parse` turns `1070633000000` or `0.1` into binary floats; a filed figure must
 * stay the decimal the filer wrote. The reviver of `JSON.parse` receives, for every primitive, the source text it
 * was parsed from (`context.source`, TC39 "JSON.parse source text access", shipped in V8 and so in Node >= 21), and
 * this module keeps that text for every number instead of the float. Field readers with JSON paths in their
 * messages turn the parsed tree into typed records.
 */
import { Decimal } from "decimal.js"
import * as Result from "effect/Result"
import { type SecFormat, SecFormatError } from "./SecFormatError.ts"

/** A JSON number as it was written in the source. */
export class JsonNumber {
  readonly source: string
  constructor(source: string) {
    this.source = source
  }
}

/** What went wrong at a place in a document; turned into a `SecFormatError` at the parser's boundary. */
export class FormatProblem extends Error {}

/** Fails the current parse with a message naming the place. */
export const problem = (path: string, message: string): never => {
  throw new FormatProblem(`${path}: ${message}`)
}

/**
 * Runs a parser body and turns every failure into a typed `SecFormatError`, so no parser ever throws. Anything
 * else thrown (a bug in a parser) is reported the same way, with its message, rather than escaping untyped.
 */
export const runParser = <A>(format: SecFormat, body: () => A): Result.Result<A, SecFormatError> => {
  try {
    return Result.succeed(body())
  } catch (error) {
    const message =
      error instanceof FormatProblem
        ? error.message
        : `unexpected failure while reading the document: ${error instanceof Error ? error.message : String(error)}`
    return Result.fail(new SecFormatError({ format, message }))
  }
}

type SourceReviver = (this: unknown, key: string, value: unknown, context?: { readonly source?: string }) => unknown

const keepNumberSource: SourceReviver = (_key, value, context) => {
  if (typeof value !== "number") return value
  if (context?.source === undefined) {
    // A runtime without source text access would silently hand us floats: refuse instead.
    throw new FormatProblem("$: this runtime does not expose JSON number source text (Node >= 21 required)")
  }
  return new JsonNumber(context.source)
}

/**
 * A number written as an object member's value (`:` before it, `,` `}` or `]` after it), where every number of
 * the SEC's JSON documents stands.
 */
const MEMBER_NUMBER = /:(\s*)(-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)(?=\s*[,}\]])/g

class NotMarked {}

/** The parsed tree with every marked string (`\u0001` + a number's source text) back as its `JsonNumber`. */
const unmark = (value: unknown): unknown => {
  if (typeof value === "string") return value.charCodeAt(0) === 1 ? new JsonNumber(value.slice(1)) : value
  if (typeof value === "number") throw new NotMarked()
  if (typeof value !== "object" || value === null) return value
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v = unmark(value[i])
      if (v !== value[i]) value[i] = v
    }
    return value
  }
  const object = value as Record<string, unknown>
  for (const key of Object.keys(object)) {
    const v = unmark(object[key])
    if (v !== object[key]) object[key] = v
  }
  return value
}

/**
 * The fast way to the same tree as the reviver's: each member number is rewritten as a marked string
 * (`"\u0001<source>"`, a plain text replacement) and `JSON.parse` runs without a reviver, several times faster on
 * a 10 MB companyfacts document. Undefined whenever it cannot be sure of giving the same tree, and the reviver
 * decides: a number elsewhere (in an array, at the top) is left a float, so it is refused; a rewrite inside a
 * string puts a backslash right after the string's new end, which no JSON admits, so the parse fails; and a
 * document that writes `\u0001` itself is never rewritten.
 */
export const parseMarked = (body: string): { readonly tree: unknown } | undefined => {
  if (body.includes("\\u0001") || body.includes("\u0001")) return undefined
  let tree: unknown
  try {
    tree = JSON.parse(body.replace(MEMBER_NUMBER, ':$1"\\u0001$2"'))
  } catch {
    return undefined
  }
  try {
    return { tree: unmark(tree) }
  } catch (error) {
    if (error instanceof NotMarked) return undefined
    throw error
  }
}

/** Parses JSON text keeping every number as its source text (`JsonNumber`). Throws `FormatProblem`. */
export const parseExactJson = (text: string): unknown => {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  const fast = parseMarked(body)
  if (fast !== undefined) return fast.tree
  try {
    return JSON.parse(body, keepNumberSource as (this: unknown, key: string, value: unknown) => unknown)
  } catch (error) {
    if (error instanceof FormatProblem) throw error
    return problem("$", `not valid JSON (${error instanceof Error ? error.message : String(error)})`)
  }
}

const plainDecimal = /^-?(0|[1-9]\d*)(\.\d+)?$/
const anyDecimal = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/

/**
 * A decimal string from a number's source text. Plain decimals are kept character for character (`1.10` stays
 * `1.10`); the rare exponent form (`1.5E+3`) is expanded exactly to its plain decimal (`1500`).
 */
export const decimalText = (source: string, path: string): string => {
  if (plainDecimal.test(source)) return source
  if (anyDecimal.test(source)) return new Decimal(source).toFixed()
  return problem(path, `expected a decimal number, got ${JSON.stringify(source)}`)
}

export type JsonObject = { readonly [key: string]: unknown }

const describe = (value: unknown): string =>
  value === null
    ? "null"
    : value instanceof JsonNumber
      ? `the number ${value.source}`
      : Array.isArray(value)
        ? "an array"
        : typeof value === "string"
          ? `the string ${JSON.stringify(value.length > 40 ? value.slice(0, 40) + "..." : value)}`
          : typeof value

export const asObject = (value: unknown, path: string): JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof JsonNumber)
    ? (value as JsonObject)
    : problem(path, `expected an object, got ${describe(value)}`)

export const asArray = (value: unknown, path: string): ReadonlyArray<unknown> =>
  Array.isArray(value) ? value : problem(path, `expected an array, got ${describe(value)}`)

export const asString = (value: unknown, path: string): string =>
  typeof value === "string" ? value : problem(path, `expected a string, got ${describe(value)}`)

/** A string, or null for JSON null or a missing key. */
export const asOptionalString = (value: unknown, path: string): string | null =>
  value === undefined || value === null ? null : asString(value, path)

/** A number kept exact, as a decimal string. Numeric strings (`"320193"`) are accepted too. */
export const asDecimal = (value: unknown, path: string): string =>
  value instanceof JsonNumber
    ? decimalText(value.source, path)
    : typeof value === "string"
      ? decimalText(value, path)
      : problem(path, `expected a number, got ${describe(value)}`)

/** A safe integer (years, counts, flags). */
export const asInteger = (value: unknown, path: string): number => {
  const text = asDecimal(value, path)
  const n = Number(text)
  return Number.isSafeInteger(n) && /^-?\d+$/.test(text) ? n : problem(path, `expected an integer, got ${text}`)
}

/** A CIK (number or zero-padded string) without leading zeros. */
export const asCik = (value: unknown, path: string): string => {
  const text = asDecimal(value, path)
  return /^\d+$/.test(text) ? String(BigInt(text)) : problem(path, `expected a CIK, got ${text}`)
}

const isoDate = /^\d{4}-\d{2}-\d{2}$/

/** A `YYYY-MM-DD` date. */
export const asDate = (value: unknown, path: string): string => {
  const text = asString(value, path)
  return isoDate.test(text) ? text : problem(path, `expected a YYYY-MM-DD date, got ${JSON.stringify(text)}`)
}

export const isDate = (text: string): boolean => isoDate.test(text)

/** Reads `key` of an object that must be present. */
export const field = (object: JsonObject, key: string, path: string): unknown => {
  const value = object[key]
  return value === undefined ? problem(`${path}.${key}`, "missing") : value
}
