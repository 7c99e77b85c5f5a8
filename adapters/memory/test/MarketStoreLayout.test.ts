/**
 * The memory market store's column layout: a value column is float32 only while every value written to it is
 * exactly a float32, so nothing is ever rounded; a series on the 15-minute grid keeps no time column until a
 * write leaves the grid; a backfill-sized first write leaves no headroom; bars whose opens are the previous
 * closes keep no open column while they chain.
 */
import { BAR_MS } from "@market-data/core"
import { Effect } from "effect"
import fc from "fast-check"
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
    // On the 15-minute grid: no time column; five value columns in 4 bytes, exactly 10,000 rows.
    expect(store.bytes()).toBe(10_000 * 5 * 4)
    const s = readAll(store)
    expect(s?.close).toBeInstanceOf(Float64Array)
    expect(s?.close[123]).toBe(exact(123))
    expect(s?.high[9_999]).toBe(exact(9_999) + 1)
  })

  it("never rounds: values float32 cannot hold keep float64, and a column widens when one arrives", () => {
    const store = makeMemoryMarketStore()
    Effect.runSync(store.write([bars(0, 1_000, decimal)]))
    expect(store.bytes()).toBe(1_000 * (4 * 8 + 4))
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
    const rowBytes = 5 * 4
    expect(store.bytes()).toBe((35_001 + Math.max(96, 35_001 >>> 8)) * rowBytes)
    // A day of ticks fits the headroom without another copy.
    for (let i = 1; i < 96; i++) Effect.runSync(store.write([bars(35_000 + i, 1, exact)]))
    expect(store.bytes()).toBe((35_001 + Math.max(96, 35_001 >>> 8)) * rowBytes)
    expect(readAll(store)?.t.length).toBe(35_096)
  })

  it("keeps the times implied while on the grid, and exact through appends, merges, trims and prunes off it", () => {
    const store = makeMemoryMarketStore()
    const times = () => Array.from(readAll(store)?.t ?? [])
    Effect.runSync(store.write([bars(10, 100, exact)]))
    expect(store.bytes()).toBe(100 * 5 * 4)
    // Trimmed and pruned on the grid, then continued by a tick: still no time column.
    expect(store.trim("bars", "crypto:bitcoin", 20 * BAR_MS)).toBe(10)
    expect(Effect.runSync(store.prune(30 * BAR_MS + 1))).toBe(11)
    Effect.runSync(store.write([bars(110, 1, exact)]))
    expect(times()).toEqual(Array.from({ length: 80 }, (_, i) => (31 + i) * BAR_MS))
    expect(readAll(store)?.close[0]).toBe(exact(31))
    // A read between grid points, and `latest` at a time inside a bar.
    const window = Effect.runSync(
      store.read("bars", { assetId: "crypto:bitcoin", fromMs: 40 * BAR_MS - 1, toMs: 42 * BAR_MS + 1 })
    )[0]
    expect(Array.from(window?.t ?? [])).toEqual([40, 41, 42].map((i) => i * BAR_MS))
    const last = Effect.runSync(store.latest("bars", { assetId: "crypto:bitcoin", n: 2, atMs: 50 * BAR_MS + 5 }))[0]
    expect(Array.from(last?.t ?? [])).toEqual([49, 50].map((i) => i * BAR_MS))
    // A row off the grid: the times are kept from then on, all of them exact.
    const off = { ...bars(0, 1, exact), t: [111 * BAR_MS + 7] }
    Effect.runSync(store.write([off]))
    expect(times().at(-1)).toBe(111 * BAR_MS + 7)
    expect(times().at(-2)).toBe(110 * BAR_MS)
    expect(times().length).toBe(81)
    const [extent] = Effect.runSync(store.extent("bars", "crypto:bitcoin"))
    expect(extent).toEqual({ venue: "binance", firstMs: 31 * BAR_MS, lastMs: 111 * BAR_MS + 7, count: 81 })
    // A rewrite of the newest bar (as a live venue sends while the bar is open) is written in place, and the
    // series stays on the grid: no time column, no row added, the widened price columns in 8 bytes.
    const live = makeMemoryMarketStore()
    Effect.runSync(live.write([bars(0, 10, exact)]))
    Effect.runSync(live.write([bars(9, 1, decimal)]))
    expect(live.bytes()).toBe(10 * (4 * 8 + 4))
    const rewritten = Effect.runSync(live.read("bars", { assetId: "crypto:bitcoin", fromMs: 0, toMs: 1e15 }))[0]
    expect(Array.from(rewritten?.t ?? [])).toEqual(Array.from({ length: 10 }, (_, i) => i * BAR_MS))
    expect(rewritten?.close[9]).toBe(decimal(9))
    expect(rewritten?.close[8]).toBe(exact(8))
  })

  it("implies chained opens (each the close before) and answers every open exactly as written", () => {
    const store = makeMemoryMarketStore()
    const chained = (from: number, n: number, price: (i: number) => number, firstOpen = price(from - 1)) => ({
      ...bars(from, n, price),
      open: Array.from({ length: n }, (_, i) => (i === 0 ? firstOpen : price(from + i - 1)))
    })
    // The first open is any number (here not even a float32); four columns in 4 bytes.
    Effect.runSync(store.write([chained(0, 1_000, exact, 0.1)]))
    expect(store.bytes()).toBe(1_000 * 4 * 4)
    expect(readAll(store)?.open[0]).toBe(0.1)
    expect(readAll(store)?.open[500]).toBe(exact(499))
    // Ticks that continue the chain keep it (and the day of headroom covers the four kept columns only).
    Effect.runSync(store.write([chained(1_000, 1, exact)]))
    expect(store.bytes()).toBe((1_001 + 96) * 4 * 4)
    // A trim and a prune move the first open to the close before the new first row.
    store.trim("bars", "crypto:bitcoin", 10 * BAR_MS)
    expect(readAll(store)?.open[0]).toBe(exact(9))
    Effect.runSync(store.prune(20 * BAR_MS))
    expect(readAll(store)?.open[0]).toBe(exact(19))
    const window = Effect.runSync(
      store.read("bars", { assetId: "crypto:bitcoin", fromMs: 100 * BAR_MS, toMs: 103 * BAR_MS })
    )[0]
    expect(Array.from(window?.open ?? [])).toEqual([exact(99), exact(100), exact(101)])
    // An open that is not the close before keeps the opens from then on, all of them exact.
    Effect.runSync(store.write([chained(1_001, 1, exact, 5)]))
    const s = readAll(store)
    expect(s?.open.at(-1)).toBe(5)
    expect(s?.open.at(-2)).toBe(exact(999))
    expect(s?.open[0]).toBe(exact(19))
  })

  it("answers bars as a plain log of the writes would, whatever the mix of chained, broken, merged, rewritten at the last row, trimmed and pruned", () => {
    // Prices: float32-exact, or a decimal no float32 holds, or -0 and NaN (told apart from 0 and each other).
    const value = fc.oneof(
      fc.integer({ min: 0, max: 4_000 }).map((i) => 1_000 + i / 64),
      fc.integer({ min: 0, max: 4_000 }).map((i) => 1_000 + i * 0.01 + 0.001),
      fc.constantFrom(-0, 0, Number.NaN)
    )
    const write = fc.record({
      op: fc.constant("write" as const),
      from: fc.integer({ min: 0, max: 60 }),
      closes: fc.array(value, { minLength: 1, maxLength: 12 }),
      // Whether each open is the close before it (the first: the stored close before, if any), else its own.
      chain: fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
      own: value,
      // Starting at the stored last row instead (the forming bar rewritten, perhaps with bars after it).
      atLast: fc.boolean()
    })
    const cut = fc.record({
      op: fc.constantFrom("trim" as const, "prune" as const),
      at: fc.integer({ min: 0, max: 80 })
    })
    fc.assert(
      fc.property(
        fc.array(fc.oneof({ weight: 4, arbitrary: write }, { weight: 1, arbitrary: cut }), { maxLength: 14 }),
        (ops) => {
          const store = makeMemoryMarketStore()
          /** The model: time -> [open, high, low, close, volume]. */
          const model = new Map<number, Array<number>>()
          for (const o of ops) {
            if (o.op === "write") {
              const n = o.closes.length
              const from = o.atLast && model.size > 0 ? Math.max(...model.keys()) / BAR_MS : o.from
              const before = [...model.keys()]
                .filter((t) => t < from * BAR_MS)
                .sort((a, b) => a - b)
                .at(-1)
              const open = o.closes.map((_, i) =>
                o.chain[i]
                  ? i > 0
                    ? (o.closes[i - 1] as number)
                    : before === undefined
                      ? o.own
                      : (model.get(before)?.[3] as number)
                  : o.own
              )
              const t = Array.from({ length: n }, (_, i) => (from + i) * BAR_MS)
              const row = (i: number) => [open[i] as number, 1, 2, o.closes[i] as number, i]
              Effect.runSync(
                store.write([
                  {
                    kind: "bars",
                    assetId: "crypto:bitcoin",
                    venue: "binance",
                    t,
                    open,
                    high: t.map((_, i) => row(i)[1] as number),
                    low: t.map((_, i) => row(i)[2] as number),
                    close: o.closes,
                    volume: t.map((_, i) => i)
                  }
                ])
              )
              for (const [i, ms] of t.entries()) model.set(ms, row(i))
            } else {
              if (o.op === "trim") store.trim("bars", "crypto:bitcoin", o.at * BAR_MS)
              else Effect.runSync(store.prune(o.at * BAR_MS))
              for (const ms of [...model.keys()]) if (ms < o.at * BAR_MS) model.delete(ms)
            }
            const times = [...model.keys()].sort((a, b) => a - b)
            const s = readAll(store)
            expect(Array.from(s?.t ?? [])).toEqual(times)
            const names = ["open", "high", "low", "close", "volume"] as const
            names.forEach((name, j) => {
              const got = Array.from(s?.[name] ?? [])
              for (const [i, v] of got.entries()) expect(Object.is(v, model.get(times[i] as number)?.[j])).toBe(true)
            })
            // A window starting inside the series answers the same opens.
            if (times.length > 2) {
              const w = Effect.runSync(
                store.read("bars", { assetId: "crypto:bitcoin", fromMs: times[1] as number, toMs: 1e15 })
              )[0]
              expect(Object.is(w?.open[0], model.get(times[1] as number)?.[0])).toBe(true)
            }
          }
        }
      ),
      { numRuns: 300 }
    )
  })

  it("stores a series given in several appends of one batch as one write of them joined, allocated once", () => {
    // Kept rows and new ones: chained or not, float32-exact or not, on the grid or leaving it.
    const cases: Array<[ReturnType<typeof bars>, ReturnType<typeof bars>]> = [
      [bars(0, 5_000, exact), bars(5_000, 300, exact)],
      [bars(0, 5_000, exact), bars(5_000, 300, decimal)],
      [bars(0, 5_000, decimal), bars(5_000, 300, exact)],
      [bars(0, 5_000, exact), bars(5_002, 300, exact)],
      [bars(0, 5_000, exact), { ...bars(5_000, 300, exact), open: bars(5_000, 300, (i) => exact(i) + 1).open }]
    ]
    for (const [kept, fresh] of cases) {
      const joined = makeMemoryMarketStore()
      const join = (name: "t" | "open" | "high" | "low" | "close" | "volume") => [...kept[name], ...fresh[name]]
      Effect.runSync(
        joined.write([
          {
            ...kept,
            t: join("t"),
            open: join("open"),
            high: join("high"),
            low: join("low"),
            close: join("close"),
            volume: join("volume")
          }
        ])
      )
      const split = makeMemoryMarketStore()
      Effect.runSync(split.write([kept, fresh]))
      expect(readAll(split)).toEqual(readAll(joined))
      // The same arrays: no headroom that a second append would have grown.
      expect(split.bytes()).toBe(joined.bytes())
      // And the next tick appends to both alike.
      Effect.runSync(joined.write([bars(5_400, 3, exact)]))
      Effect.runSync(split.write([bars(5_400, 3, exact)]))
      expect(readAll(split)).toEqual(readAll(joined))
      expect(split.bytes()).toBe(joined.bytes())
    }
  })
})
