/**
 * `readHeaders` reads the headers the API routes use in one pass over Node's raw list; it must give exactly what
 * a lookup per header gives (every value of a name, any case, in order) and the byte count the request limits
 * use, whatever the list.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { readHeaders } from "../src/HttpApp.ts"

/** The reference: one pass per name, comparing lower-cased names. */
const valuesOf = (raw: ReadonlyArray<string>, name: string): Array<string> => {
  const out: Array<string> = []
  for (let i = 0; i + 1 < raw.length; i += 2)
    if ((raw[i] as string).toLowerCase() === name) out.push(raw[i + 1] as string)
  return out
}

const NAMES = [
  "Authorization",
  "authorization",
  "AUTHORIZATION",
  "Idempotency-Key",
  "idempotency-key",
  "If-None-Match",
  "if-none-match",
  "X-Forwarded-For",
  "x-forwarded-for",
  "X-Request-Id",
  "x-request-id",
  // Same lengths, other names: must not be taken for the ones above.
  "x-request-ix",
  "authorisation",
  "content-length",
  "if-modified-since",
  "host",
  "x-forwarded-fox"
]

const rawList = fc
  .array(fc.tuple(fc.constantFrom(...NAMES), fc.string({ maxLength: 20 })), { maxLength: 12 })
  .map((pairs) => pairs.flat())

describe("readHeaders", () => {
  it("gives every value of each header the routes read, in order, and the header bytes", () => {
    fc.assert(
      fc.property(rawList, (raw) => {
        const read = readHeaders(raw)
        expect(read.authorization).toEqual(valuesOf(raw, "authorization"))
        expect(read.idempotencyKey).toEqual(valuesOf(raw, "idempotency-key"))
        expect(read.ifNoneMatch).toEqual(valuesOf(raw, "if-none-match"))
        expect(read.forwardedFor).toEqual(valuesOf(raw, "x-forwarded-for"))
        expect(read.requestId).toEqual(valuesOf(raw, "x-request-id"))
        expect(read.bytes).toBe(raw.reduce((n, part) => n + part.length + 2, 0))
      }),
      { numRuns: 500 }
    )
  })

  it("keeps repeats apart", () => {
    const read = readHeaders(["Authorization", "Bearer a", "host", "h", "authorization", "Bearer b"])
    expect(read.authorization).toEqual(["Bearer a", "Bearer b"])
    expect(read.idempotencyKey).toEqual([])
  })
})
