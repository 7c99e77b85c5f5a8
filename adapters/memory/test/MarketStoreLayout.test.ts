/**
 * The memory market store's column layout: a value column is float32 only while every value written to it is
 * exactly a float32, so nothing is ever rounded; a backfill-sized first write leaves no headroom.
 */
import { BAR_MS } from "@market-data/core"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { makeMemoryMarketStore } from "../src/index.ts"

const bars = (from: number, n: number, price: (i: number) => number) => ({
  kind: "bars" as const,
  assetId: "crypto:bitcoin",
  venue: "binance",
  t: Array.from({ length: n }, (_, i) => (from + i) * BAR_MS),
  open: Array.from({ length: n }, (_, i) => price(from + i)),
  high: Array.from({ length: n }, (_, i) => price(from + i) + 1),
  low: Array.from({ length: n }, (_, i) => price(from + i) - 1),
  close: Array.from({ length: n }, (_, i) => price(from + i)),
  volume: Array.from({ length: n }, (_, i) => (from + i) % 7)
})

const readAll = (store: ReturnType<typeof makeMemoryMarketStore>) =>
  Effect.runSync(store.read("bars", { assetId: "crypto:bitcoin", fromMs: 0, toMs: 1e15 }))[0]

/** Float32-exact prices (a multiple of 1/64 below 2^17). */
const exact = (i: number) => 60_000 + (i % 1000) / 64
/** Prices as a venue prints them: 95123.45 is no float32. */
const decimal = (i: number) => 95_000 + (i % 1000) * 0.01 + 0.45

describe("memory market store layout", () => {
  it("keeps float32-exact columns in 4 bytes a value and the first write without headroom", () => {
    const store = makeMemoryMarketStore()
    Effect.runSync(store.write([bars(0, 10_000, exact)]))
    // Times in 8 bytes, five value columns in 4, exactly 10,000 rows.
    expect(store.bytes()).toBe(10_000 * (8 + 5 * 4))
    const s = readAll(store)
    expect(s?.close).toBeInstanceOf(Float64Array)
    expect(s?.close[123]).toBe(exact(123))
    expect(s?.high[9_999]).toBe(exact(9_999) + 1)
  })

  it("never rounds: values float32 cannot hold keep float64, and a column widens when one arrives", () => {
    const store = makeMemoryMarketStore()
    Effect.runSync(store.write([bars(0, 1_000, decimal)]))
    expect(store.bytes()).toBe(1_000 * (8 + 5 * 8) - 1_000 * 4)
    // volume (i % 7) is float32-exact, the prices are not.
    expect(readAll(store)?.close[17]).toBe(decimal(17))

    const widened = makeMemoryMarketStore()
    Effect.runSync(widened.write([bars(0, 1_000, exact)]))
    // An append, then an overlapping write (a merge), both with decimal prices.
    Effect.runSync(widened.write([bars(1_000, 10, decimal)]))
    Effect.runSync(widened.write([bars(500, 3, decimal)]))
    const s = readAll(widened)
    expect(s?.t.length).toBe(1_010)
    expect(s?.close[0]).toBe(exact(0))
    expect(s?.close[499]).toBe(exact(499))
    expect(s?.close[500]).toBe(decimal(500))
    expect(s?.close[502]).toBe(decimal(502))
    expect(s?.close[503]).toBe(exact(503))
    expect(s?.close[1_009]).toBe(decimal(1_009))
    expect(s?.volume[1_009]).toBe(1_009 % 7)
  })

  it("grows appends by about a day of rows, not by a sixteenth of the series", () => {
    const store = makeMemoryMarketStore()
    Effect.runSync(store.write([bars(0, 35_000, exact)]))
    Effect.runSync(store.write([bars(35_000, 1, exact)]))
    const rowBytes = 8 + 5 * 4
    expect(store.bytes()).toBe((35_001 + Math.max(96, 35_001 >>> 8)) * rowBytes)
    // A day of ticks fits the headroom without another copy.
    for (let i = 1; i < 96; i++) Effect.runSync(store.write([bars(35_000 + i, 1, exact)]))
    expect(store.bytes()).toBe((35_001 + Math.max(96, 35_001 >>> 8)) * rowBytes)
    expect(readAll(store)?.t.length).toBe(35_096)
  })
})
