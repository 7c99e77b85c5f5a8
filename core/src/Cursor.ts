/**
 * Pagination cursors, shared by every paginated operation (`coverage`, `rank`, crypto and equity `series`, the
 * equity lists): an opaque base64url token holding the position to resume after, bound to the operation and
 * its other decoded parameters, so a cursor reused with other parameters or by another operation is
 * `400 invalid_cursor`. Only the canonical encoding of a position is accepted.
 *
 * A cursor is not signed: it is a position anyone may write (docs section access, "Cursors"). Answers do not
 * depend on the key that asks, so a hand-made position reaches nothing paging from the start would not.
 */
import { Exit, Schema } from "effect"
import { type ApiError, apiError } from "./Errors.ts"
import { type CanonicalParams, canonicalRequest } from "./Params.ts"

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

const base64UrlEncode = (text: string): string => {
  const bytes = new TextEncoder().encode(text)
  let out = ""
  for (let i = 0; i < bytes.length; i += 3) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0)
    const chars = i + 1 >= bytes.length ? 2 : i + 2 >= bytes.length ? 3 : 4
    for (let c = 0; c < chars; c++) out += B64[(n >> (18 - 6 * c)) & 63]
  }
  return out
}

const base64UrlDecode = (text: string): string | undefined => {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return undefined
  const bytes: Array<number> = []
  for (let i = 0; i < text.length; i += 4) {
    const chunk = text.slice(i, i + 4)
    let n = 0
    for (let c = 0; c < 4; c++) n = (n << 6) | (c < chunk.length ? B64.indexOf(chunk[c] as string) : 0)
    bytes.push((n >> 16) & 255)
    if (chunk.length > 2) bytes.push((n >> 8) & 255)
    if (chunk.length > 3) bytes.push(n & 255)
  }
  const decoded = new TextDecoder("utf-8", { fatal: false }).decode(new Uint8Array(bytes))
  // Only the canonical encoding of a text is a cursor (no alternative spellings of one position).
  return base64UrlEncode(decoded) === text ? decoded : undefined
}

/** FNV-1a (32 bit) twice with different offsets: a short fingerprint, not a secret. */
const fingerprint = (text: string): string => {
  const fnv = (seed: number) => {
    let h = seed >>> 0
    for (let i = 0; i < text.length; i++) {
      h ^= text.charCodeAt(i)
      h = Math.imul(h, 0x01000193) >>> 0
    }
    return h.toString(16).padStart(8, "0")
  }
  return fnv(0x811c9dc5) + fnv(0x050c5d1f)
}

/** What a cursor is bound to: the operation and every decoded parameter except the cursor itself. */
const bindingOf = (operation: string, params: CanonicalParams): string => {
  const { cursor: _cursor, ...others } = params
  return fingerprint(canonicalRequest(operation, others))
}

const CursorText = Schema.fromJsonString(Schema.Struct({ o: Schema.String, b: Schema.String, p: Schema.String }))
const decodeCursorText = Schema.decodeUnknownExit(CursorText)

/** A cursor that resumes `operation` after `position`, valid only with the same other parameters. */
export const encodeCursor = (operation: string, params: CanonicalParams, position: string): string =>
  base64UrlEncode(JSON.stringify({ o: operation, b: bindingOf(operation, params), p: position }))

/**
 * The position a cursor resumes after, or `invalid_cursor` when it is not one this operation issued with
 * these other parameters.
 */
export const decodeCursor = (operation: string, params: CanonicalParams, cursor: string): string | ApiError => {
  const invalid = (why: string) => apiError("invalid_cursor", `\`cursor\` ${why}`, { param: "cursor" })
  const text = base64UrlDecode(cursor)
  const parsed = text === undefined ? undefined : decodeCursorText(text)
  if (parsed === undefined || Exit.isFailure(parsed)) return invalid("is not a cursor this service issued")
  const { o, b, p } = parsed.value
  if (o !== operation) return invalid(`was issued by \`${o.slice(0, 40)}\`, not \`${operation}\``)
  if (b !== bindingOf(operation, params)) {
    return invalid("was issued for other parameters; repeat the first request's parameters with it, or start over")
  }
  return p
}
