/**
 * `decodeParams` remembers, in the memo it is given (a service instance's `RequestCaches`), the decoded parameters
 * of string pairs it has seen (HTTP requests repeat): the remembered answer must be the one a fresh decode gives,
 * immutable, and never shared between operations.
 */
import { describe, expect, it } from "vitest"
import { makeBoundedCache } from "../src/BoundedCache.ts"
import { type DecodedParams, type DecodeTarget, decodeParams as decodeWith, isApiError } from "../src/Params.ts"
import { operation } from "../src/Registry.ts"

const read = operation("read") as DecodeTarget
const memo = makeBoundedCache<string, DecodedParams>(64)
const decodeParams = (op: DecodeTarget, raw: ReadonlyArray<readonly [string, unknown]>) => decodeWith(op, raw, memo)

describe("decodeParams memo", () => {
  it("answers a repeated request with the same frozen result a fresh decode gives", () => {
    const pairs = [["ids", "crypto:bitcoin,crypto:ethereum"]] as const
    const first = decodeParams(read, pairs)
    const again = decodeParams(read, [["ids", "crypto:bitcoin,crypto:ethereum"]])
    expect(again).toBe(first)
    expect(Object.isFrozen(first)).toBe(true)
    if (isApiError(first)) throw new Error("expected a decode")
    expect(Object.isFrozen(first.ids)).toBe(true)
    // A fresh decode of the same request (a copy of the operation, and no memo) gives equal parameters.
    expect(decodeParams({ ...read }, pairs)).toEqual(first)
    expect(decodeWith(read, pairs)).toEqual(first)
    expect(decodeWith(read, pairs)).not.toBe(first)
    expect(() => (first.ids as Array<string>).push("crypto:solana")).toThrow(TypeError)
  })

  it("keeps pairs apart, even ones whose characters could spell another split, and errors stay errors", () => {
    const a = decodeParams(read, [["id", "crypto:bitcoin,crypto:ether"]])
    const b = decodeParams(read, [["ids", "crypto:bitcoin,crypto:ether"]])
    expect(isApiError(a)).toBe(true)
    expect(isApiError(b)).toBe(false)
    // Two valid pairs remembered first; one pair whose value holds the separators of a naive join must still be
    // decoded on its own (and refused), not answered with the two pairs' decode.
    const sep = (s: string) => s.replaceAll("|", "\u0001").replaceAll("~", "\u0000")
    const technicals = operation("technicals") as DecodeTarget
    expect(
      isApiError(
        decodeParams(technicals, [
          ["id", "crypto:bitcoin"],
          ["timeframe", "1h"]
        ])
      )
    ).toBe(false)
    const forged = decodeParams(technicals, [["id", sep("crypto:bitcoin|timeframe~1h")]])
    expect(isApiError(forged) && forged.param).toBe("id")
    const bad = [["id", "bitcoin"]] as const
    const e1 = decodeParams(read, bad)
    const e2 = decodeParams(read, bad)
    expect(isApiError(e1) && isApiError(e2)).toBe(true)
    expect(e2).toEqual(e1)
  })

  it("is per operation: the same pairs for another operation decode against that operation", () => {
    const withoutIds: DecodeTarget = { ...read, params: read.params.filter((p) => p.name !== "ids"), rules: [] }
    const pairs = [["ids", "crypto:bitcoin,crypto:ethereum"]] as const
    expect(isApiError(decodeParams(read, pairs))).toBe(false)
    const refused = decodeParams(withoutIds, pairs)
    expect(isApiError(refused) && refused.code).toBe("invalid_parameter")
  })

  it("is bounded: past its capacity the oldest entry goes first", () => {
    const small = makeBoundedCache<string, DecodedParams>(2)
    const at = (id: string) => decodeWith(read, [["id", id]], small)
    const a = at("crypto:bitcoin")
    at("crypto:ethereum")
    expect(at("crypto:bitcoin")).toBe(a)
    at("crypto:solana")
    expect(small.size()).toBe(2)
    expect(at("crypto:bitcoin")).not.toBe(a)
  })
})
