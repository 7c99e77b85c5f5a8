/**
 * What a per-asset handler derives from a result object (its envelope text, `next_update_at`, its single-`id`
 * output) is kept on the object itself (`makeDerived`: a non-enumerable symbol property), not in `WeakMap`s whose
 * entries V8 goes over in every full collection's pause. The object's JSON, keys and spreads are unchanged, each
 * holder keeps its own record, and an object that cannot take a property still gets one.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { makeDerived, perAssetHandler } from "../src/PerAsset.ts"
import type { HandlerInput } from "../src/pipeline/Types.ts"
import { Operations } from "../src/Registry.ts"

describe("makeDerived", () => {
  it("keeps one record per object, out of its JSON, keys and spreads", () => {
    const derived = makeDerived<{ n?: number }>("test", () => ({}))
    const result = { asset_id: "crypto:bitcoin", usd: 1 }
    const d = derived(result)
    d.n = 7
    expect(derived(result)).toBe(d)
    expect(derived({ ...result })).not.toBe(d)
    expect(JSON.stringify(result)).toBe('{"asset_id":"crypto:bitcoin","usd":1}')
    expect(Object.keys(result)).toEqual(["asset_id", "usd"])
    expect(Object.getOwnPropertySymbols({ ...result })).toEqual([])
    expect(result).toStrictEqual({ asset_id: "crypto:bitcoin", usd: 1 })
  })

  it("gives each holder its own record", () => {
    const a = makeDerived<{ v?: string }>("a", () => ({}))
    const b = makeDerived<{ v?: string }>("b", () => ({}))
    const result = {}
    a(result).v = "a"
    expect(b(result).v).toBeUndefined()
    expect(a(result).v).toBe("a")
  })

  it("keeps the record of a frozen object aside", () => {
    const derived = makeDerived<{ v?: string }>("frozen", () => ({}))
    const result = Object.freeze({ x: 1 })
    derived(result).v = "kept"
    expect(derived(result).v).toBe("kept")
  })
})

describe("perAssetHandler with records on the result", () => {
  const op = Operations.find((o) => o.name === "price")
  if (op === undefined) throw new Error("no price operation")
  const input = (id: string): HandlerInput => ({ op, params: { id }, nowMs: 0 }) as unknown as HandlerInput

  it("answers a result served again with the same output, its text the result's JSON", async () => {
    let result = { asset_id: "crypto:bitcoin", usd: 1, next_update_at: "2026-12-07T00:00:00.000Z" }
    const handler = perAssetHandler(() => Effect.succeed({ _tag: "Delivered", result }))
    const first = await Effect.runPromise(handler(input("crypto:bitcoin")))
    const again = await Effect.runPromise(handler(input("crypto:bitcoin")))
    expect(again).toBe(first)
    expect(first).toMatchObject({
      _tag: "Json",
      text: `{"data":${JSON.stringify(result)}}`,
      nextUpdateAtMs: Date.parse("2026-12-07T00:00:00.000Z")
    })
    result = { ...result, usd: 2 }
    const changed = await Effect.runPromise(handler(input("crypto:bitcoin")))
    expect(changed).not.toBe(first)
    expect(changed).toMatchObject({ text: `{"data":${JSON.stringify(result)}}` })
  })
})
