/**
 * `responseHeaderList` is the flat name/value list Node is handed for an answer: exactly the pairs, in order, of
 * the object `{ "x-request-id": id, ...headers, ...extra }` it replaced, whatever names repeat across the parts.
 * (Header names here are never array indices, which an object would order first.)
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { responseHeaderList } from "../src/NodeWire.ts"

const NAMES = ["x-request-id", "content-type", "etag", "x-catalog-version", "ratelimit", "content-length", "a"]
const headers = fc.dictionary(fc.constantFrom(...NAMES), fc.string({ maxLength: 8 }), { maxKeys: 6 })

const pairs = (list: ReadonlyArray<string | number>) =>
  Array.from({ length: list.length / 2 }, (_, i) => [list[2 * i], list[2 * i + 1]])

describe("responseHeaderList", () => {
  it("lists the spread object's entries in their order", () => {
    fc.assert(
      fc.property(headers, headers, fc.string({ maxLength: 8 }), (own, extra, id) => {
        const list = responseHeaderList(own, extra, id)
        expect(pairs(list)).toEqual(Object.entries({ "x-request-id": id, ...own, ...extra }))
      }),
      { numRuns: 500 }
    )
  })
})
