/**
 * Every company of the ticker list is an equity asset (DECISIONS, "Whole-market start-up": a ticker is an asset
 * as soon as the ticker list is read), on the in-memory store, PGlite and server PostgreSQL (TEST_DATABASE_URL):
 * `resolve`, `coverage` (browse and by ID), `profile`, `read`; `events` and `holders` from whatever documents are
 * in; `financials` answers with a typed `unavailable` until the company's facts are in. An issuer only a Form 4
 * names is reachable by its ID as soon as that document is in.
 *
 * On a hand-made ticker list (always run) and, when `../shared/data/sec` is there, on the SEC's real
 * `company_tickers_exchange.json` (9,441 rows) with Snowflake's real Form 4 and the recorded 13F information
 * table: at least 9,000 assets listed and resolvable, and the time to list them is printed.
 */
import { existsSync, readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { Effect, Layer, Result } from "effect"
import { TestClock } from "effect/testing"
import { sql } from "kysely"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { coverageHandler } from "../../../core/src/Coverage.ts"
import { makeEquityPlane } from "../../../core/src/equity/EquityPlane.ts"
import { EquityStore } from "../../../core/src/equity/EquityStore.ts"
import type { HoldingsReport, OwnershipReport } from "../../../core/src/equity/Model.ts"
import { decodeParams, isApiError } from "../../../core/src/Params.ts"
import type { Handler, HandlerOutput } from "../../../core/src/Pipeline.ts"
import { type PlaneOperations, planeHandlers } from "../../../core/src/Planes.ts"
import { operation } from "../../../core/src/Registry.ts"
import { resolveHandler } from "../../../core/src/Resolve.ts"
import { memoryEquityStore } from "../../memory/src/MemoryEquityStore.ts"
import {
  parseCompanyTickersExchange,
  parseOwnershipDocument,
  parseThirteenFInformationTable
} from "../../sources/src/index.ts"
import { EquityTableNames, layerPgEquityStore } from "../src/PgEquityStore.ts"
import { pgliteEquityDatabase, postgresEquityDatabase } from "./EquitySupport.ts"
import { TEST_DATABASE_URL, type TestDatabase } from "./support.ts"

const NOW = Date.UTC(2026, 10, 23, 15)

const SEC = resolve(import.meta.dirname, "..", "..", "..", "..", "shared", "data", "sec")
const REAL_TICKERS = join(SEC, "tickers", "company_tickers_exchange.json")
const realPresent = existsSync(REAL_TICKERS)
if (!realPresent) console.warn(`SKIPPED: the real ticker-list cases need ${REAL_TICKERS}, which is absent`)

/** A hand-made `company_tickers_exchange.json`: three companies, one with two share classes. */
const TICKERS_TEXT = JSON.stringify({
  fields: ["cik", "name", "ticker", "exchange"],
  data: [
    [2002, "Ticker Only Inc.", "TKO", "NYSE"],
    [3003, "Held Only Corp", "HOC", "Nasdaq"],
    [5005, "Two Class Holdings", "TWC-B", "NYSE"],
    [5005, "Two Class Holdings", "TWC-A", "NYSE"]
  ]
})

const form4 = (accession: string, issuerCik: string, issuerName: string, issuerTicker: string): OwnershipReport => ({
  form: "4",
  accession,
  filedAt: "2026-11-02",
  periodOfReport: "2026-10-30",
  issuerCik,
  issuerName,
  issuerTicker,
  owners: [
    {
      cik: "9001",
      name: "Roe Richard",
      isDirector: true,
      isOfficer: false,
      officerTitle: null,
      isTenPercentOwner: false,
      isOther: false
    }
  ],
  transactions: [
    {
      table: "non_derivative",
      securityTitle: "Common Stock",
      transactionDate: "2026-10-30",
      code: "P",
      acquiredDisposed: "A",
      shares: "2500",
      pricePerShare: "12.3456",
      sharesOwnedAfter: "10000",
      directIndirect: "D",
      exercisePrice: null,
      underlyingShares: null,
      footnotes: []
    }
  ],
  dateOfOriginalSubmission: null
})

const thirteenF: HoldingsReport = {
  filerCik: "7007",
  filerName: "Fixture Capital LLC",
  accession: "0000007007-26-000001",
  form: "13F-HR",
  filedAt: "2026-11-10",
  reportPeriod: "2026-09-30",
  holdings: [
    {
      nameOfIssuer: "HELD ONLY CORP",
      titleOfClass: "COM",
      cusip: "40400A101",
      valueUsd: "123456.78",
      shares: "9876",
      sharesType: "SH",
      putCall: null,
      investmentDiscretion: "SOLE",
      votingSole: "9876",
      votingShared: "0",
      votingNone: "0"
    }
  ]
}

const tickerEntries = (text: string) => {
  const parsed = parseCompanyTickersExchange(text)
  if (Result.isFailure(parsed)) throw new Error(parsed.failure.message)
  return parsed.success
}

type Body = { readonly data: any }

/** The equity plane over one store, with `resolve` and `coverage` over its directory. */
const service = Effect.gen(function* () {
  const plane: PlaneOperations = yield* makeEquityPlane({ source: "sec" })
  const handlers = new Map<string, Handler>([
    ...planeHandlers([plane]),
    ["resolve", resolveHandler([plane])],
    ["coverage", coverageHandler([plane])]
  ])
  const call = (name: string, params: ReadonlyArray<readonly [string, unknown]>) =>
    Effect.gen(function* () {
      const op = operation(name)
      const handler = handlers.get(name)
      if (op === undefined || handler === undefined) throw new Error(name)
      const decoded = decodeParams(op, params)
      if (isApiError(decoded)) throw new Error(decoded.message)
      const out: HandlerOutput = yield* handler({
        op,
        params: decoded,
        principal: { _tag: "Anonymous", client: "test", rateLimitPerMinute: 60 },
        rate: { limit: 60, remaining: 59, resetAtMs: NOW, allowed: true },
        nowMs: NOW
      })
      if (out._tag !== "Json") throw new Error("not json")
      return out.body as Body
    })
  /** Every equity row of the `coverage` browse, page by page. */
  const browse = Effect.gen(function* () {
    const rows: Array<any> = []
    let cursor: string | null = null
    do {
      const page: Body = yield* call("coverage", [
        ["plane", "equity"],
        ["limit", "500"],
        ...(cursor === null ? [] : [["cursor", cursor] as const])
      ])
      rows.push(...page.data.rows)
      cursor = page.data.next_cursor
    } while (cursor !== null)
    return rows
  })
  return { plane, call, browse }
})

const runOn = <A, E>(layer: Layer.Layer<EquityStore>, effect: Effect.Effect<A, E, EquityStore>) =>
  Effect.runPromise(
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      return yield* effect
    }).pipe(Effect.provide(Layer.merge(layer, TestClock.layer())))
  )

const handMade = (layer: () => Layer.Layer<EquityStore>) =>
  it("lists and serves every company of a hand-made ticker list, a Form 4 of a listed issuer, a Form 4-only issuer", () =>
    runOn(
      layer(),
      Effect.gen(function* () {
        const store = yield* EquityStore
        yield* store.putTickers(tickerEntries(TICKERS_TEXT))
        yield* store.putOwnershipReports([
          form4("0000009001-26-000001", "2002", "TICKER ONLY INC", "TKO"),
          form4("0000009001-26-000002", "4004", "Form Four Only Co", "ffo")
        ])
        yield* store.putHoldingsReports([thirteenF])
        const { call, browse } = yield* service

        const rows = yield* browse
        expect(rows.map((r) => [r.asset_id, r.name, r.tier])).toEqual([
          ["eq:2002:TKO", "Ticker Only Inc.", "equity"],
          ["eq:3003:HOC", "Held Only Corp", "equity"],
          ["eq:4004:FFO", "Form Four Only Co", "equity"],
          ["eq:5005:TWC-A", "Two Class Holdings", "equity"],
          ["eq:5005:TWC-B", "Two Class Holdings", "equity"]
        ])
        expect((yield* call("resolve", [["q", "TKO"]])).data.best).toMatchObject({ asset_id: "eq:2002:TKO" })
        // Each share class is an asset of its own, the other among its aliases.
        expect((yield* call("resolve", [["q", "TWC-B"]])).data.best).toMatchObject({ asset_id: "eq:5005:TWC-B" })
        expect((yield* call("coverage", [["id", "eq:5005:TWC-B"]])).data).toMatchObject({ asset_id: "eq:5005:TWC-B" })
        expect((yield* call("resolve", [["q", "form four only"]])).data.best).toMatchObject({
          asset_id: "eq:4004:FFO"
        })
        expect((yield* call("coverage", [["id", "eq:2002:TKO"]])).data).toMatchObject({
          asset_id: "eq:2002:TKO",
          tier: "equity",
          alive: false
        })

        // The Form 4 of a company known only from the ticker list shows in its events.
        const events = (yield* call("events", [
          ["id", "eq:2002:TKO"],
          ["types", "insider"]
        ])).data
        expect(events.events.map((e: any) => [e.type, e.accession, e.code, e.shares, e.price_usd])).toEqual([
          ["insider", "0000009001-26-000001", "P", "2500", "12.3456"]
        ])
        const unlisted = (yield* call("events", [["id", "eq:4004:FFO"]])).data
        expect(unlisted.events.map((e: any) => e.accession)).toEqual(["0000009001-26-000002"])

        // No facts: financials answer, with a typed reason, not a 404.
        const financials = (yield* call("financials", [["id", "eq:2002:TKO"]])).data
        expect(financials).toMatchObject({ asset_id: "eq:2002:TKO", periods: [] })
        expect(financials.unavailable.financials).toEqual({
          reason: "no_data",
          detail: "no XBRL facts of this company are on file (its companyfacts is not ingested yet)"
        })
        const profile = (yield* call("profile", [["id", "eq:2002:TKO"]])).data
        expect(profile).toMatchObject({
          asset_id: "eq:2002:TKO",
          name: "Ticker Only Inc.",
          tickers: ["TKO"],
          exchanges: ["NYSE"],
          sector: null,
          sic: null
        })
        expect(profile.unavailable.sector.reason).toBe("no_data")
        const read = (yield* call("read", [["id", "eq:2002:TKO"]])).data
        expect(read.headline.price_usd).toBeNull()
        expect(read.unavailable.price_usd.reason).toBe("not_covered")

        // A company only a 13F row names (no CUSIP on file): its holders by the listed name.
        const holders = (yield* call("holders", [["id", "eq:3003:HOC"]])).data
        expect(holders.holders.map((h: any) => [h.name, h.shares, h.value_usd])).toEqual([
          ["Fixture Capital LLC", "9876", "123456.78"]
        ])
        expect((yield* call("holders", [["id", "eq:2002:TKO"]])).data.unavailable.holders.reason).toBe("no_data")

        // An ID the ticker list does not give stays unknown.
        const unknown = yield* Effect.flip(call("events", [["id", "eq:2002:NOPE"]]))
        expect(unknown.code).toBe("unknown_asset")
      })
    ))

const realData = (layer: () => Layer.Layer<EquityStore>, name: string) =>
  it.skipIf(!realPresent)(
    `lists and resolves every company of the SEC's real ticker list, serves Snowflake's Form 4 and Amazon's 13F rows${realPresent ? "" : " (SKIPPED: ../shared/data/sec is absent)"}`,
    () =>
      runOn(
        layer(),
        Effect.gen(function* () {
          const store = yield* EquityStore
          const entries = tickerEntries(readFileSync(REAL_TICKERS, "utf8"))
          expect(entries.length).toBe(9441)
          yield* store.putTickers(entries)
          const snow = parseOwnershipDocument(
            readFileSync(join(SEC, "form4", "form4_snow_0001640147_2022-12-13.xml"), "utf8"),
            { accession: "0001640147-22-000301", filedAt: "2022-12-15" }
          )
          if (Result.isFailure(snow)) throw new Error(snow.failure.message)
          yield* store.putOwnershipReports([snow.success])
          const table = parseThirteenFInformationTable(
            readFileSync(join(SEC, "13f", "13F-HR_infotable.xml"), "utf8"),
            "2023-02-14"
          )
          if (Result.isFailure(table)) throw new Error(table.failure.message)
          yield* store.putHoldingsReports([{ ...thirteenF, holdings: table.success }])
          const { call, browse, plane } = yield* service

          const t0 = performance.now()
          const listed = yield* plane.directory
          const t1 = performance.now()
          const rows = yield* browse
          const t2 = performance.now()
          // Every row of the list is an asset: eq:<cik>:<ticker>.
          expect(rows.length).toBeGreaterThanOrEqual(9000)
          expect(rows.length).toBe(listed.length)
          expect(rows.map((r) => r.asset_id).sort()).toEqual(entries.map((e) => `eq:${e.cik}:${e.ticker}`).sort())
          // Resolvable: every hundredth row by its ticker, to its ID.
          const t3 = performance.now()
          let resolved = 0
          for (let i = 0; i < entries.length; i += 100) {
            const e = entries[i] as (typeof entries)[number]
            const answer = (yield* call("resolve", [["q", e.ticker]])).data
            expect(
              answer.matches.map((m: any) => m.asset_id),
              e.ticker
            ).toContain(`eq:${e.cik}:${e.ticker}`)
            resolved++
          }
          const t4 = performance.now()
          console.info(
            `${name}: ${rows.length} equity assets from ${entries.length} ticker rows; directory from the store ${(t1 - t0).toFixed(0)} ms, coverage browse of every page (cached) ${(t2 - t1).toFixed(0)} ms, ${resolved} resolves ${(((t4 - t3) / resolved) as number).toFixed(1)} ms each`
          )

          const events = (yield* call("events", [
            ["id", "eq:1640147:SNOW"],
            ["types", "insider"]
          ])).data
          expect(events.events.length).toBe(snow.success.transactions.length)
          expect(events.events.every((e: any) => e.accession === "0001640147-22-000301")).toBe(true)
          const financials = (yield* call("financials", [["id", "eq:1640147:SNOW"]])).data
          expect(financials.unavailable.financials.reason).toBe("no_data")
          expect((yield* call("profile", [["id", "eq:1640147:SNOW"]])).data).toMatchObject({
            name: "Snowflake Inc.",
            exchanges: ["NYSE"]
          })
          // Amazon: only the recorded 13F table names it (as AMAZON COM INC, the list's name).
          const holders = (yield* call("holders", [["id", "eq:1018724:AMZN"]])).data
          expect(holders.holders.map((h: any) => h.name)).toEqual(["Fixture Capital LLC"])
        })
      ),
    120_000
  )

describe("every listed company is an equity asset: memory", () => {
  handMade(() => memoryEquityStore())
  realData(() => memoryEquityStore(), "memory")
})

const onDatabase = (name: string, open: () => Promise<TestDatabase>) =>
  describe(`every listed company is an equity asset: ${name}`, () => {
    let t: TestDatabase
    beforeAll(async () => {
      t = await open()
    }, 120_000)
    afterAll(() => t?.drop())
    const fresh = () =>
      Layer.effectDiscard(
        Effect.promise(async () => {
          for (const table of EquityTableNames) await sql.raw(`delete from ${table}`).execute(t.database.db)
        })
      ).pipe(Layer.provideMerge(layerPgEquityStore(t.database)))
    handMade(fresh)
    realData(fresh, name)
  })

onDatabase("PGlite", pgliteEquityDatabase)

if (TEST_DATABASE_URL === undefined) {
  describe.skip("every listed company is an equity asset: PostgreSQL (skipped: TEST_DATABASE_URL is not set)", () => {})
} else {
  onDatabase("PostgreSQL", () => postgresEquityDatabase(TEST_DATABASE_URL as string))
}
