/**
 * Strict query-string parsing. Keeps every pair in order (so a repeated parameter is visible to the
 * decoder), decodes `+` as a space and percent escapes as UTF-8, and refuses malformed escapes instead of
 * guessing.
 */
import { type ApiError, apiError } from "@market-data/core"

export type QueryPairs = ReadonlyArray<readonly [string, string]>

const decode = (text: string): string | undefined => {
  // Only `+` and percent escapes decode to something else.
  if (text.indexOf("%") < 0 && text.indexOf("+") < 0) return text
  try {
    return decodeURIComponent(text.replace(/\+/g, " "))
  } catch {
    return undefined
  }
}

/** Parses the text after `?` (without it). */
export const parseQuery = (query: string): QueryPairs | ApiError => {
  const pairs: Array<readonly [string, string]> = []
  if (query.length === 0) return pairs
  for (const part of query.split("&")) {
    if (part.length === 0) continue
    const eq = part.indexOf("=")
    const rawName = eq < 0 ? part : part.slice(0, eq)
    const rawValue = eq < 0 ? "" : part.slice(eq + 1)
    const name = decode(rawName)
    if (name === undefined) {
      return apiError(
        "invalid_parameter",
        `malformed percent-encoding in parameter name ${JSON.stringify(rawName.slice(0, 64))}`,
        {
          param: rawName.slice(0, 64)
        }
      )
    }
    const value = decode(rawValue)
    if (value === undefined) {
      return apiError("invalid_parameter", `malformed percent-encoding in the value of \`${name.slice(0, 64)}\``, {
        param: name.slice(0, 64)
      })
    }
    pairs.push([name, value])
  }
  return pairs
}
