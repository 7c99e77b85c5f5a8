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

/** JSON Schema pattern accepted for one canonical ID (both shapes). */
export const assetIdPattern =
  "^(?:crypto:(?=.{1,64}$)[a-z0-9]+(?:-[a-z0-9]+)*|eq:[1-9][0-9]{0,9}:[A-Z0-9]{1,10}(?:[.-][A-Z0-9]{1,5})?)$"

/** The plane of a well-formed canonical ID, or undefined when the string is not one. */
export const planeOf = (id: string): Plane | undefined =>
  CRYPTO.test(id) ? "crypto" : EQUITY.test(id) ? "equity" : undefined

export const isCanonicalAssetId = (id: string): boolean => planeOf(id) !== undefined
