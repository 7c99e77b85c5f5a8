/**
 * Canonical asset IDs: permanent strings of two shapes.
 * - crypto `crypto:<slug>`: slug of lower-case letters and digits joined by single hyphens, 1 to 64 characters.
 * - equity `eq:<company_number>:<ticker>`: the SEC CIK without leading zeros, then the upper-case ticker
 *   (letters and digits, optionally one `.` or `-` class suffix such as `BRK.B`).
 */

export type Plane = "crypto" | "equity"

export const Planes: ReadonlyArray<Plane> = ["crypto", "equity"]

const CRYPTO = /^crypto:(?=.{1,64}$)[a-z0-9]+(?:-[a-z0-9]+)*$/
const EQUITY = /^eq:[1-9][0-9]{0,9}:[A-Z0-9]{1,10}(?:[.-][A-Z0-9]{1,5})?$/

/**
 * JSON Schema pattern of one canonical ID (both shapes), without lookaround so that every regex dialect of
 * tool-schema validators (RE2, ECMA-262, PCRE) reads it. It leaves the crypto slug's length open: together with
 * `assetIdMaxLength` it admits exactly the canonical IDs (the slug's 64 characters plus `crypto:` are 71; an
 * equity ID is at most 30). The decoder checks with `planeOf`, which admits exactly the same set.
 */
export const assetIdPattern =
  "^(?:crypto:[a-z0-9]+(?:-[a-z0-9]+)*|eq:[1-9][0-9]{0,9}:[A-Z0-9]{1,10}(?:[.-][A-Z0-9]{1,5})?)$"

/** Longest canonical ID: `crypto:` and a 64-character slug. */
export const assetIdMaxLength = 71

/** The plane of a well-formed canonical ID, or undefined when the string is not one. */
export const planeOf = (id: string): Plane | undefined =>
  CRYPTO.test(id) ? "crypto" : EQUITY.test(id) ? "equity" : undefined

export const isCanonicalAssetId = (id: string): boolean => planeOf(id) !== undefined
