/**
 * Reading venue JSON: small checked accessors that name the place of a problem. A venue answer is read whole
 * before anything is stored, so a malformed field rejects the answer (a `format` SourceError) and no partial rows
 * reach the store.
 */
import { Effect } from "effect"
import { SourceError } from "./Http.ts"

/** A field that is not what the venue documents; caught by `decode` and turned into a `format` SourceError. */
export class Malformed extends Error {}

export type Json = { readonly [key: string]: unknown }

export const obj = (value: unknown, path: string): Json => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Malformed(`${path}: not an object`)
  return value as Json
}

export const arr = (value: unknown, path: string): ReadonlyArray<unknown> => {
  if (!Array.isArray(value)) throw new Malformed(`${path}: not an array`)
  return value
}

export const str = (value: unknown, path: string): string => {
  if (typeof value !== "string") throw new Malformed(`${path}: not a string`)
  return value
}

/** A finite number from a JSON number or a decimal string (venues send most numbers as strings). */
export const num = (value: unknown, path: string): number => {
  const n =
    typeof value === "number" ? value : typeof value === "string" && value.trim() !== "" ? Number(value) : Number.NaN
  if (!Number.isFinite(n)) throw new Malformed(`${path}: not a number (${JSON.stringify(value)?.slice(0, 40)})`)
  return n
}

/** `num`, or undefined for an empty string / absent value (OKX sends "" for "not available"). */
export const optNum = (value: unknown, path: string): number | undefined =>
  value === undefined || value === null || value === "" ? undefined : num(value, path)

/** Runs a pure reader over a parsed body; a `Malformed` becomes a `format` SourceError. */
export const decode = <A>(source: string, what: string, body: unknown, read: (body: unknown) => A) =>
  Effect.try({
    try: () => read(body),
    catch: (e) =>
      new SourceError({
        source,
        kind: "format",
        what,
        message: e instanceof Malformed ? e.message : `unreadable answer: ${String(e)}`
      })
  })
