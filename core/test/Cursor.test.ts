/**
 * Cursors are positions anyone may write (docs section access, "Cursors"): checked for their form, their
 * operation and their other parameters, not signed. A hand-written cursor for a valid position resumes there;
 * one reused with other parameters or by another operation, or not in the canonical encoding, is refused.
 */
import { describe, expect, it } from "vitest"
import { decodeCursor, encodeCursor } from "../src/Cursor.ts"
import type { ApiError } from "../src/Errors.ts"

const base64url = (text: string) => Buffer.from(text, "utf8").toString("base64url")
const codeOf = (r: string | ApiError) => (typeof r === "string" ? r : r.code)

describe("cursors", () => {
  const params = { id: "crypto:bitcoin", interval: "4h", limit: 100 }

  it("resume where the service said", () => {
    expect(decodeCursor("series", params, encodeCursor("series", params, "1700000000000"))).toBe("1700000000000")
  })

  it("are positions a caller may write by hand: the same binding with another position resumes there", () => {
    const issued = JSON.parse(Buffer.from(encodeCursor("series", params, "1700000000000"), "base64url").toString())
    const handMade = base64url(JSON.stringify({ o: "series", b: issued.b, p: "1600000000000" }))
    expect(decodeCursor("series", params, handMade)).toBe("1600000000000")
  })

  it("are refused with other parameters, by another operation, or in another encoding of the same position", () => {
    const cursor = encodeCursor("series", params, "1700000000000")
    expect(codeOf(decodeCursor("series", { ...params, interval: "1d" }, cursor))).toBe("invalid_cursor")
    expect(codeOf(decodeCursor("rank", params, cursor))).toBe("invalid_cursor")
    expect(codeOf(decodeCursor("series", params, `${cursor}=`))).toBe("invalid_cursor")
    expect(codeOf(decodeCursor("series", params, "not a cursor"))).toBe("invalid_cursor")
  })
})
