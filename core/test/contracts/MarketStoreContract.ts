/**
 * Contract suite of the market store port. Every implementation (memory, PGlite, PostgreSQL) runs it:
 * `marketStoreContract("memory", () => layerMemoryMarketStore)`. Each test gets a fresh layer from `make`.
 */
import { Effect, type Layer } from "effect"
import { describe, expect, it } from "vitest"
import {
  type AnySeriesInput,
  BAR_MS,
  type BookSnapshot,
  type FundingState,
  MarketStore,
  type Series,
  SeriesColumns,
  type SeriesKind,
  SeriesKinds,
  type SourceStatus
} from "../../src/crypto/Market.ts"

const T0 = Date.UTC(2026, 0, 1)
const BTC = "crypto:bitcoin"
const ETH = "crypto:ethereum"

const at = (i: number) => T0 + i * BAR_MS

/** Bars on `venue` at bar indexes `idx`, values derived from the index and `salt`. */
const bars = (venue: string, idx: ReadonlyArray<number>, salt = 0, assetId = BTC): AnySeriesInput => ({
  kind: "bars",
  assetId,
  venue,
  t: idx.map(at),
  open: idx.map((i) => 100 + i + salt),
  high: idx.map((i) => 101.25 + i + salt),
  low: idx.map((i) => 99.5 + i + salt),
  close: idx.map((i) => 100.1 + i + salt),
  volume: idx.map((i) => 0.1 * (i + 1) + salt)
})

const rows = <K extends SeriesKind>(s: Series<K>) =>
  Array.from(s.t, (t, i) => [
    t,
    ...(SeriesColumns[s.kind] as ReadonlyArray<string>).map(
      (c) => ((s as unknown as Record<string, Float64Array>)[c] as Float64Array)[i]
    )
  ])

const book = (venue: string, t: number, bid: number): BookSnapshot => ({
  assetId: BTC,
  venue,
  t,
  bids: [
    [bid, 1.5],
    [bid - 1, 3]
  ],
  asks: [
    [bid + 0.5, 2],
    [bid + 2, 0.25]
  ]
})

const fundingState = (venue: string, t: number, rate: number): FundingState => ({
  assetId: BTC,
  venue,
  t,
  intervalMs: 8 * 3_600_000,
  nextFundingMs: t + 3_600_000,
  currentRate: rate,
  predictedRate: rate * 1.5
})

const status = (
  venue: string,
  component: SourceStatus["component"],
  newestMs: number,
  failing = false
): SourceStatus => ({
  source: "simulated",
  venue,
  component,
  newestMs,
  cadenceMs: 60_000,
  checkedMs: newestMs + 5,
  failing,
  ...(failing ? { detail: "HTTP 503" } : {})
})

export const marketStoreContract = (name: string, make: () => Layer.Layer<MarketStore>) => {
  const run = <A, E>(effect: Effect.Effect<A, E, MarketStore>) => Effect.runPromise(Effect.provide(effect, make()))

  describe(`${name}: MarketStore series`, () => {
    it("reads [from, to) per venue, sorted by venue, omitting venues with no rows in range", () =>
      run(
        Effect.gen(function* () {
          const store = yield* MarketStore
          yield* store.write([bars("okx", [0, 1, 2, 3]), bars("binance", [2, 3, 4, 5], 0.5), bars("bybit", [8, 9])])
          yield* store.write([bars("binance", [0], 0, ETH)])
          const got = yield* store.read("bars", { assetId: BTC, fromMs: at(1), toMs: at(4) })
          expect(got.map((s) => s.venue)).toEqual(["binance", "okx"])
          expect(got.every((s) => s.kind === "bars" && s.assetId === BTC)).toBe(true)
          expect(rows(got[0] as Series<"bars">)).toEqual([
            [at(2), 102.5, 103.75, 102, 102.6, 0.3 + 0.5],
            [at(3), 103.5, 104.75, 103, 103.6, 0.4 + 0.5]
          ])
          expect([...(got[1] as Series<"bars">).t]).toEqual([at(1), at(2), at(3)])
          const one = yield* store.read("bars", { assetId: BTC, venue: "okx", fromMs: at(0), toMs: at(100) })
          expect(one.map((s) => s.t.length)).toEqual([4])
          expect(yield* store.read("bars", { assetId: BTC, venue: "kraken", fromMs: 0, toMs: at(100) })).toEqual([])
          expect(yield* store.read("bars", { assetId: "crypto:none", fromMs: 0, toMs: at(100) })).toEqual([])
          expect(yield* store.read("funding", { assetId: BTC, fromMs: 0, toMs: at(100) })).toEqual([])
        })
      ))

    it("is idempotent on (asset, venue, t): rewriting replaces, overlapping and unordered batches merge", () =>
      run(
        Effect.gen(function* () {
          const store = yield* MarketStore
          yield* store.write([bars("binance", [0, 1, 2, 3, 4])])
          yield* store.write([bars("binance", [0, 1, 2, 3, 4])])
          yield* store.write([bars("binance", [7, 3, 5], 10)])
          // Within one batch the last row of a time wins.
          yield* store.write([bars("binance", [6, 6], 0), { ...bars("binance", [6], 20) }])
          const [s] = yield* store.read("bars", { assetId: BTC, venue: "binance", fromMs: 0, toMs: at(100) })
          expect([...(s as Series<"bars">).t]).toEqual([0, 1, 2, 3, 4, 5, 6, 7].map(at))
          expect([...(s as Series<"bars">).open]).toEqual([100, 101, 102, 113, 104, 115, 126, 117])
        })
      ))

    it("keeps the last row of duplicate times inside one write", () =>
      run(
        Effect.gen(function* () {
          const store = yield* MarketStore
          yield* store.write([
            { kind: "openInterest", assetId: BTC, venue: "okx", t: [at(2), at(1), at(2)], oiUsd: [1, 2, 3] }
          ])
          const [s] = yield* store.read("openInterest", { assetId: BTC, fromMs: 0, toMs: at(10) })
          expect(rows(s as Series<"openInterest">)).toEqual([
            [at(1), 2],
            [at(2), 3]
          ])
        })
      ))

    it("round-trips every series kind with exact doubles (tiny, negative, large values)", () =>
      run(
        Effect.gen(function* () {
          const store = yield* MarketStore
          const values = [0.1, -0.000_012_5, 1e-12, 98_765.432_1, 3.3e15]
          const batch = SeriesKinds.map((kind) => {
            const input: Record<string, unknown> = { kind, assetId: ETH, venue: "hyperliquid", t: [at(0), at(1)] }
            SeriesColumns[kind].forEach((c, j) => {
              input[c] = [values[j % values.length], values[(j + 2) % values.length]]
            })
            return input as AnySeriesInput
          })
          yield* store.write(batch)
          for (const kind of SeriesKinds) {
            const [s] = yield* store.read(kind, { assetId: ETH, fromMs: at(0), toMs: at(2) })
            const expected = [
              [at(0), ...SeriesColumns[kind].map((_, j) => values[j % values.length])],
              [at(1), ...SeriesColumns[kind].map((_, j) => values[(j + 2) % values.length])]
            ]
            expect(rows(s as Series<SeriesKind>), kind).toEqual(expected)
          }
        })
      ))

    it("answers the newest n rows per venue, optionally as of a time", () =>
      run(
        Effect.gen(function* () {
          const store = yield* MarketStore
          yield* store.write([bars("binance", [0, 1, 2, 3, 4, 5]), bars("okx", [4, 5, 6])])
          const newest = yield* store.latest("bars", { assetId: BTC, n: 2 })
          expect(newest.map((s) => [s.venue, [...s.t]])).toEqual([
            ["binance", [at(4), at(5)]],
            ["okx", [at(5), at(6)]]
          ])
          const asOf = yield* store.latest("bars", { assetId: BTC, n: 3, atMs: at(4) })
          expect(asOf.map((s) => [s.venue, [...s.t]])).toEqual([
            ["binance", [at(2), at(3), at(4)]],
            ["okx", [at(4)]]
          ])
          const one = yield* store.latest("bars", { assetId: BTC, venue: "okx", n: 10, atMs: at(3) })
          expect(one).toEqual([])
        })
      ))

    it("reports the extent of each venue's series", () =>
      run(
        Effect.gen(function* () {
          const store = yield* MarketStore
          yield* store.write([bars("okx", [3, 4, 9]), bars("binance", [1])])
          expect(yield* store.extent("bars", BTC)).toEqual([
            { venue: "binance", firstMs: at(1), lastMs: at(1), count: 1 },
            { venue: "okx", firstMs: at(3), lastMs: at(9), count: 3 }
          ])
          expect(yield* store.extent("takerFlow", BTC)).toEqual([])
        })
      ))

    it("prunes rows older than a cutoff across kinds", () =>
      run(
        Effect.gen(function* () {
          const store = yield* MarketStore
          yield* store.write([
            bars("okx", [0, 1, 2, 3]),
            { kind: "liquidations", assetId: BTC, venue: "okx", t: [at(0), at(3)], longUsd: [5, 0], shortUsd: [0, 7] }
          ])
          expect(yield* store.prune(at(2))).toBe(3)
          const [b] = yield* store.read("bars", { assetId: BTC, fromMs: 0, toMs: at(10) })
          expect([...(b as Series<"bars">).t]).toEqual([at(2), at(3)])
          const [l] = yield* store.read("liquidations", { assetId: BTC, fromMs: 0, toMs: at(10) })
          expect(rows(l as Series<"liquidations">)).toEqual([[at(3), 0, 7]])
          yield* store.write([bars("okx", [4])])
          expect((yield* store.extent("bars", BTC))[0]?.count).toBe(3)
        })
      ))
  })

  describe(`${name}: MarketStore latest state`, () => {
    it("keeps the newest book per venue, ignoring older snapshots", () =>
      run(
        Effect.gen(function* () {
          const store = yield* MarketStore
          yield* store.putBooks([book("okx", 2_000, 100), book("binance", 1_000, 99)])
          yield* store.putBooks([book("okx", 1_500, 50), book("binance", 3_000, 101)])
          const all = yield* store.books(BTC)
          expect(all).toEqual([book("binance", 3_000, 101), book("okx", 2_000, 100)])
          expect(yield* store.books(BTC, "okx")).toEqual([book("okx", 2_000, 100)])
          expect(yield* store.books(ETH)).toEqual([])
        })
      ))

    it("keeps the newest funding state per venue", () =>
      run(
        Effect.gen(function* () {
          const store = yield* MarketStore
          yield* store.putFundingStates([fundingState("bybit", 10, 0.0001), fundingState("hyperliquid", 10, -0.00002)])
          yield* store.putFundingStates([fundingState("bybit", 20, 0.0003), fundingState("hyperliquid", 5, 0.9)])
          expect(yield* store.fundingStates(BTC)).toEqual([
            fundingState("bybit", 20, 0.0003),
            fundingState("hyperliquid", 10, -0.00002)
          ])
          expect(yield* store.fundingStates(BTC, "bybit")).toEqual([fundingState("bybit", 20, 0.0003)])
        })
      ))

    it("replaces source status per (venue, component), sorted by venue then component", () =>
      run(
        Effect.gen(function* () {
          const store = yield* MarketStore
          expect(yield* store.status).toEqual([])
          yield* store.putStatus([
            status("okx", "funding", 10),
            status("binance", "bars", 10),
            status("okx", "bars", 10)
          ])
          yield* store.putStatus([status("okx", "funding", 20, true)])
          expect(yield* store.status).toEqual([
            status("binance", "bars", 10),
            status("okx", "bars", 10),
            status("okx", "funding", 20, true)
          ])
        })
      ))

    it("seriesRevision (where offered) moves with the asset's own series only", () =>
      run(
        Effect.gen(function* () {
          const store = yield* MarketStore
          const of = store.seriesRevision
          if (of === undefined) return
          const seen = new Set<number>()
          /** Asserts whether BTC's series revision moved since the last look. */
          const moved = (expected: boolean) => {
            const r = of(BTC)
            expect(seen.has(r)).toBe(!expected)
            seen.add(r)
          }
          moved(true)
          yield* store.write([bars("binance", [0, 1, 2])])
          moved(true)
          // Another asset's rows, books, funding states and statuses leave it.
          const eth = of(ETH)
          yield* store.write([bars("binance", [0, 1], 0, ETH)])
          expect(of(ETH)).not.toBe(eth)
          yield* store.putBooks([book("binance", 10, 100)])
          yield* store.putFundingStates([fundingState("bybit", 10, 0.0001)])
          yield* store.putStatus([status("binance", "books", 10)])
          moved(false)
          // Any kind of its own series moves it, and so does a pruning (whatever it deleted).
          yield* store.write([bars("okx", [3])])
          moved(true)
          yield* store.prune(at(1))
          moved(true)
        })
      ))
  })
}
