/**
 * `coverage` over planes that have only a directory: the one-asset form, the browse form's filters,
 * pagination (every row exactly once, across pages) and cursor misuse, through the pipeline.
 */
import { assert, describe, it } from "@effect/vitest"
import { memoryStores } from "@market-data/memory"
import { Effect, Layer, Schema } from "effect"
import * as Digest from "effect/crypto/Digest"
import * as SecureRandom from "effect/crypto/SecureRandom"
import fc from "fast-check"
import { createKey } from "../src/Admin.ts"
import { operationsFor } from "../src/Coverage.ts"
import { decodeCursor, encodeCursor } from "../src/Cursor.ts"
import { layerHandlers } from "../src/Discovery.ts"
import { decodeParams, isApiError } from "../src/Params.ts"
import { type Answer, handle, Settings } from "../src/Pipeline.ts"
import { type DirectoryEntry, type PlaneOperations, type Tier, TierPlane, Tiers, tierServes } from "../src/Planes.ts"
import { Operations, operation } from "../src/Registry.ts"
import * as R from "../src/Results.ts"

const entry = (asset_id: string, symbol: string, name: string, tier: Tier, alive = true): DirectoryEntry => ({
  asset_id,
  plane: asset_id.startsWith("eq:") ? "equity" : "crypto",
  symbol,
  name,
  tier,
  networks: [],
  aliases: [],
  alive
})

/** One plane per plane present in `entries`, with a directory and lookups and no data operations. */
const directoryPlanes = (entries: ReadonlyArray<DirectoryEntry>): ReadonlyArray<PlaneOperations> =>
  (["crypto", "equity"] as const)
    .filter((plane) => entries.some((e) => e.plane === plane))
    .map((plane) => {
      const mine = entries.filter((e) => e.plane === plane)
      return {
        plane,
        perAsset: new Map(),
        calls: new Map(),
        directory: Effect.sync(() => mine),
        lookup: (id: string) => Effect.sync(() => mine.find((e) => e.asset_id === id))
      }
    })

/** A universe of `n` assets spread over every tier, some dead, in a shuffled order. */
const universe = (n: number): ReadonlyArray<DirectoryEntry> => {
  const out: Array<DirectoryEntry> = []
  for (let i = 0; i < n; i++) {
    const tier = Tiers[i % Tiers.length] as Tier
    const alive = i % 3 !== 0
    out.push(
      TierPlane[tier] === "crypto"
        ? entry(`crypto:asset-${(i * 7919) % 1000}-${i}`, `A${i}`, `Asset ${i}`, tier, alive)
        : entry(`eq:${1000 + i}:T${i}`, `T${i}`, `Company ${i}`, tier, alive)
    )
  }
  return out
}

const service = (entries: ReadonlyArray<DirectoryEntry>) =>
  Effect.gen(function* () {
    const base = Layer.mergeAll(
      memoryStores(),
      Layer.succeed(Settings)({ rateLimitPerMinute: 100_000 }),
      Digest.layerWebCrypto,
      SecureRandom.layerWebCrypto
    )
    const ctx = yield* Layer.build(layerHandlers([], directoryPlanes(entries)).pipe(Layer.provideMerge(base)))
    const key = yield* createKey({ credits: 0 }).pipe(Effect.provide(ctx))
    const call = (params: ReadonlyArray<readonly [string, string]>) =>
      handle({ operation: "coverage", params, authorization: [`Bearer ${key.key}`], client: "test" }).pipe(
        Effect.provide(ctx)
      )
    return { call }
  })

const code = (a: Answer) => (a.outcome._tag === "Failure" ? a.outcome.error.code : undefined)
const param = (a: Answer) => (a.outcome._tag === "Failure" ? a.outcome.error.param : undefined)
const json = (a: Answer): any => {
  if (a.outcome._tag !== "Json") throw new Error(`not JSON: ${a.outcome._tag} ${code(a)}`)
  assert.strictEqual(a.outcome.creditsCharged, 0)
  return JSON.parse(a.outcome.body)
}
const isCoverageBody = Schema.is(R.single(R.CoverageResult))

/** Pages through a browse with `params`; returns every row in order and the number of pages. */
const browseAll = (
  call: (params: ReadonlyArray<readonly [string, string]>) => Effect.Effect<Answer>,
  params: ReadonlyArray<readonly [string, string]>
) =>
  Effect.gen(function* () {
    const rows: Array<{ asset_id: string; tier: string; alive: boolean; plane: string }> = []
    let cursor: string | null = null
    let pages = 0
    do {
      const body = json(yield* call(cursor === null ? params : [...params, ["cursor", cursor]]))
      assert.isTrue(isCoverageBody(body))
      rows.push(...body.data.rows)
      cursor = body.data.next_cursor
      pages++
      if (pages > 1000) throw new Error("pagination does not end")
    } while (cursor !== null)
    return { rows, pages }
  })

describe("coverage: one asset", () => {
  it.effect("answers the asset's row, with the operations its plane and tier serve", () =>
    Effect.gen(function* () {
      const s = yield* service([
        entry("crypto:bitcoin", "BTC", "Bitcoin", "core"),
        entry("crypto:shadow", "SHD", "Shadow", "discovery_only", false),
        entry("eq:320193:AAPL", "AAPL", "Apple Inc.", "full"),
        entry("eq:1:FILE", "FILE", "Files Only", "equity")
      ])
      const btc = json(yield* s.call([["id", "crypto:bitcoin"]]))
      assert.isTrue(isCoverageBody(btc))
      assert.deepStrictEqual(btc.data, {
        asset_id: "crypto:bitcoin",
        plane: "crypto",
        symbol: "BTC",
        name: "Bitcoin",
        tier: "core",
        alive: true,
        operations: [
          "read",
          "price",
          "funding",
          "open_interest",
          "orderflow",
          "liquidations",
          "liquidity",
          "technicals",
          "structure",
          "series",
          "rank",
          "resolve",
          "coverage"
        ]
      })
      const shadow = json(yield* s.call([["id", "crypto:shadow"]]))
      assert.deepStrictEqual(shadow.data.operations, ["resolve", "coverage"])
      assert.strictEqual(shadow.data.alive, false)
      const files = json(yield* s.call([["id", "eq:1:FILE"]]))
      assert.notInclude(files.data.operations, "price")
      assert.include(files.data.operations, "financials")
      const aapl = json(yield* s.call([["id", "eq:320193:AAPL"]]))
      assert.include(aapl.data.operations, "holders")
      assert.notInclude(aapl.data.operations, "funding")
    }).pipe(Effect.scoped)
  )

  it("lists, for every tier, exactly the operations of its plane that tierServes admits", () => {
    for (const tier of Tiers) {
      const plane = TierPlane[tier]
      const expected = Operations.filter((op) => op.planes.includes(plane) && tierServes(tier, op.name)).map(
        (op) => op.name
      )
      assert.deepStrictEqual(operationsFor({ plane, tier }), expected, tier)
      for (const name of operationsFor({ plane, tier })) assert.include(operation(name)?.planes ?? [], plane)
    }
  })

  it.effect("an unknown ID is 404 unknown_asset naming id, also on a plane that is not wired", () =>
    Effect.gen(function* () {
      const s = yield* service([entry("crypto:bitcoin", "BTC", "Bitcoin", "core")])
      for (const id of ["crypto:nope", "eq:320193:AAPL"]) {
        const a = yield* s.call([["id", id]])
        assert.strictEqual(code(a), "unknown_asset", id)
        assert.strictEqual(param(a), "id")
      }
      // id with a filter is the decoder's conflicting_parameters.
      const both = yield* s.call([
        ["id", "crypto:bitcoin"],
        ["alive", "true"]
      ])
      assert.strictEqual(code(both), "conflicting_parameters")
    }).pipe(Effect.scoped)
  )
})

describe("coverage: browse", () => {
  const all = universe(230)
  const sorted = (xs: ReadonlyArray<DirectoryEntry>) => [...xs].map((e) => e.asset_id).sort()

  it.effect("filters by plane, tier and alive, in asset-ID order, with the default limit of 100", () =>
    Effect.gen(function* () {
      const s = yield* service(all)
      const first = json(yield* s.call([]))
      assert.strictEqual(first.data.rows.length, 100)
      assert.isString(first.data.next_cursor)
      assert.deepStrictEqual(
        first.data.rows.map((r: { asset_id: string }) => r.asset_id),
        sorted(all).slice(0, 100)
      )
      const cases: ReadonlyArray<[ReadonlyArray<readonly [string, string]>, (e: DirectoryEntry) => boolean]> = [
        [[["plane", "crypto"]], (e) => e.plane === "crypto"],
        [[["plane", "equity"]], (e) => e.plane === "equity"],
        [[["alive", "true"]], (e) => e.alive],
        [[["alive", "false"]], (e) => !e.alive],
        ...Tiers.map((t): [ReadonlyArray<readonly [string, string]>, (e: DirectoryEntry) => boolean] => [
          [["tier", t]],
          (e) => e.tier === t
        ]),
        [
          [
            ["plane", "crypto"],
            ["tier", "core"],
            ["alive", "false"]
          ],
          (e) => e.tier === "core" && !e.alive
        ],
        // A tier of the other plane: nothing.
        [
          [
            ["plane", "equity"],
            ["tier", "core"]
          ],
          () => false
        ]
      ]
      for (const [params, keep] of cases) {
        const { rows } = yield* browseAll(s.call, [...params, ["limit", "500"]])
        assert.deepStrictEqual(
          rows.map((r) => r.asset_id),
          sorted(all.filter(keep)),
          JSON.stringify(params)
        )
      }
    }).pipe(Effect.scoped)
  )

  it.effect("pages cover every row exactly once, for any filter and page size (property)", () =>
    Effect.gen(function* () {
      const s = yield* service(all)
      const filters = fc.record(
        {
          plane: fc.constantFrom("crypto", "equity"),
          tier: fc.constantFrom(...Tiers),
          alive: fc.constantFrom("true", "false")
        },
        { requiredKeys: [] }
      )
      const samples = fc.sample(fc.tuple(filters, fc.integer({ min: 1, max: 60 })), { numRuns: 40, seed: 7 })
      for (const [f, limit] of samples) {
        const params = [...Object.entries(f), ["limit", String(limit)]] as ReadonlyArray<readonly [string, string]>
        const { rows, pages } = yield* browseAll(s.call, params)
        const expected = sorted(
          all.filter(
            (e) =>
              (f.plane === undefined || e.plane === f.plane) &&
              (f.tier === undefined || e.tier === f.tier) &&
              (f.alive === undefined || String(e.alive) === f.alive)
          )
        )
        assert.deepStrictEqual(
          rows.map((r) => r.asset_id),
          expected,
          JSON.stringify(params)
        )
        assert.strictEqual(pages, Math.max(1, Math.ceil(expected.length / limit)), JSON.stringify(params))
      }
    }).pipe(Effect.scoped)
  )

  it.effect("an exact multiple of the page size ends with next_cursor null, not an empty page", () =>
    Effect.gen(function* () {
      const s = yield* service(universe(20))
      const page = json(yield* s.call([["limit", "20"]]))
      assert.strictEqual(page.data.rows.length, 20)
      assert.isNull(page.data.next_cursor)
      const empty = json(
        yield* s.call([
          ["tier", "core"],
          ["alive", "false"],
          ["plane", "equity"]
        ])
      )
      assert.deepStrictEqual(empty.data, { rows: [], next_cursor: null })
    }).pipe(Effect.scoped)
  )
})

describe("coverage: cursors", () => {
  const all = universe(50)

  it.effect("a cursor is opaque base64url, and resumes only with the same other parameters", () =>
    Effect.gen(function* () {
      const s = yield* service(all)
      const params: ReadonlyArray<readonly [string, string]> = [
        ["plane", "crypto"],
        ["limit", "5"]
      ]
      const first = json(yield* s.call(params))
      const cursor: string = first.data.next_cursor
      assert.match(cursor, /^[A-Za-z0-9_-]+$/)
      // Same parameters in another order: fine.
      const again = json(yield* s.call([...[...params].reverse(), ["cursor", cursor]]))
      assert.strictEqual(again.data.rows.length, 5)
      assert.notStrictEqual(again.data.rows[0].asset_id, first.data.rows[0].asset_id)
      // Different other parameters: invalid_cursor naming cursor.
      const misuse: ReadonlyArray<ReadonlyArray<readonly [string, string]>> = [
        [["plane", "crypto"]],
        [
          ["plane", "equity"],
          ["limit", "5"]
        ],
        [["limit", "5"]],
        [
          ["plane", "crypto"],
          ["limit", "6"]
        ],
        [
          ["plane", "crypto"],
          ["limit", "5"],
          ["alive", "true"]
        ],
        [
          ["plane", "crypto"],
          ["limit", "5"],
          ["tier", "core"]
        ]
      ]
      for (const other of misuse) {
        const a = yield* s.call([...other, ["cursor", cursor]])
        assert.strictEqual(code(a), "invalid_cursor", JSON.stringify(other))
        assert.strictEqual(param(a), "cursor")
      }
    }).pipe(Effect.scoped)
  )

  it.effect("refuses forged, tampered and foreign cursors with invalid_cursor", () =>
    Effect.gen(function* () {
      const s = yield* service(all)
      const first = json(yield* s.call([["limit", "5"]]))
      const cursor: string = first.data.next_cursor
      const flip = (c: string, i: number) => c.slice(0, i) + (c[i] === "A" ? "B" : "A") + c.slice(i + 1)
      const params = decodeParams(operation("coverage")!, [["limit", "5"]])
      if (isApiError(params)) throw new Error(params.message)
      const forged = [
        "abc",
        "A",
        "AAAA",
        "eyJ9",
        "bnVsbA", // "null"
        flip(cursor, 3),
        flip(cursor, cursor.length - 2),
        cursor.slice(0, -1),
        `${cursor}A`,
        // A cursor of another operation with the same parameters.
        encodeCursor("series", params, "crypto:asset-1-1")
      ]
      for (const c of forged) {
        const a = yield* s.call([
          ["limit", "5"],
          ["cursor", c]
        ])
        assert.strictEqual(code(a), "invalid_cursor", c)
        assert.strictEqual(param(a), "cursor")
      }
      // Our own encoding round-trips, and the pure decoder agrees with the handler.
      assert.strictEqual(decodeCursor("coverage", params, encodeCursor("coverage", params, "crypto:é-ü")), "crypto:é-ü")
      assert.isTrue(isApiError(decodeCursor("coverage", params, encodeCursor("rank", params, "x"))))
    }).pipe(Effect.scoped)
  )

  it("encodes any position as base64url the decoder accepts back (property)", () => {
    const params = decodeParams(operation("coverage")!, [["plane", "equity"]])
    if (isApiError(params)) throw new Error(params.message)
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 80 }), (position) => {
        const c = encodeCursor("coverage", params, position)
        return /^[A-Za-z0-9_-]+$/.test(c) && decodeCursor("coverage", params, c) === position
      }),
      { numRuns: 300, seed: 11 }
    )
  })
})
