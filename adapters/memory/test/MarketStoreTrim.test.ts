import { BAR_MS } from "@market-data/core"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { makeMemoryMarketStore } from "../src/index.ts"

const flow = (venue: string, from: number, n: number) => ({
  kind: "takerFlow" as const,
  assetId: "crypto:bitcoin",
  venue,
  t: Array.from({ length: n }, (_, i) => (from + i) * BAR_MS),
  buyUsd: Array.from({ length: n }, (_, i) => from + i + 0.25),
  sellUsd: Array.from({ length: n }, (_, i) => -(from + i))
})

const read = (store: ReturnType<typeof makeMemoryMarketStore>, venue?: string) =>
  Effect.runSync(
    store.read("takerFlow", {
      assetId: "crypto:bitcoin",
      fromMs: 0,
      toMs: 1e15,
      ...(venue === undefined ? {} : { venue })
    })
  )

describe("MemoryMarketStore.trim", () => {
  it("drops the rows before the cutoff on the named venues only, keeping the rest exact and appendable", () => {
    const store = makeMemoryMarketStore()
    Effect.runSync(store.write([flow("binance", 0, 5000), flow("okx", 0, 5000)]))
    expect(store.trim("takerFlow", "crypto:bitcoin", 4000 * BAR_MS, ["binance"])).toBe(4000)
    const [binance] = read(store, "binance")
    expect(binance?.t.length).toBe(1000)
    expect(binance?.t[0]).toBe(4000 * BAR_MS)
    expect(binance?.buyUsd[999]).toBe(4999.25)
    expect(binance?.sellUsd[0]).toBe(-4000)
    expect(read(store, "okx")[0]?.t.length).toBe(5000)
    // Appends and merges still work on the shrunk columns.
    Effect.runSync(store.write([flow("binance", 4500, 2000)]))
    const [after] = read(store, "binance")
    expect(after?.t.length).toBe(2500)
    expect(after?.buyUsd[2499]).toBe(6499.25)
    expect(Effect.runSync(store.extent("takerFlow", "crypto:bitcoin"))).toEqual([
      { venue: "binance", firstMs: 4000 * BAR_MS, lastMs: 6499 * BAR_MS, count: 2500 },
      { venue: "okx", firstMs: 0, lastMs: 4999 * BAR_MS, count: 5000 }
    ])
  })

  it("trims every venue without a list, drops nothing before the first row, and can empty a series", () => {
    const store = makeMemoryMarketStore()
    Effect.runSync(store.write([flow("binance", 100, 10), flow("okx", 100, 10)]))
    expect(store.trim("takerFlow", "crypto:bitcoin", 50 * BAR_MS)).toBe(0)
    expect(store.trim("takerFlow", "crypto:ethereum", 1e15)).toBe(0)
    expect(store.trim("bars", "crypto:bitcoin", 1e15)).toBe(0)
    expect(store.trim("takerFlow", "crypto:bitcoin", 1e15)).toBe(20)
    expect(read(store)).toEqual([])
    Effect.runSync(store.write([flow("okx", 7, 3)]))
    expect(read(store, "okx")[0]?.t.length).toBe(3)
  })
})
