/**
 * What the equity-universe suites share: a hand-made ticker list, Form 4 and 13F report, the equity plane with
 * `resolve` and `coverage` over one store, and the stores the suites run on (memory, PGlite, and server PostgreSQL
 * when TEST_DATABASE_URL is set).
 */
import { Effect, Layer, Result } from "effect"
import { TestClock } from "effect/testing"
import { sql } from "kysely"
import { afterAll, beforeAll, describe } from "vitest"
import { coverageHandler } from "../../../core/src/Coverage.ts"
import { makeEquityPlane } from "../../../core/src/equity/EquityPlane.ts"
import type { EquityStore } from "../../../core/src/equity/EquityStore.ts"
import type { HoldingsReport, OwnershipReport } from "../../../core/src/equity/Model.ts"
import { decodeParams, isApiError } from "../../../core/src/Params.ts"
import type { Handler, HandlerOutput } from "../../../core/src/Pipeline.ts"
import { type PlaneOperations, planeHandlers } from "../../../core/src/Planes.ts"
import { operation } from "../../../core/src/Registry.ts"
import { resolveHandler } from "../../../core/src/Resolve.ts"
import { memoryEquityStore } from "../../memory/src/MemoryEquityStore.ts"
import { parseCompanyTickersExchange } from "../../sources/src/index.ts"
import { EquityTableNames, layerPgEquityStore } from "../src/PgEquityStore.ts"
import { pgliteEquityDatabase, postgresEquityDatabase } from "./EquitySupport.ts"
import { TEST_DATABASE_URL, type TestDatabase } from "./support.ts"

export const NOW = Date.UTC(2026, 10, 23, 15)

/** A hand-made `company_tickers_exchange.json`: three companies, one with two share classes. */
export const TICKERS_TEXT = JSON.stringify({
  fields: ["cik", "name", "ticker", "exchange"],
  data: [
    [2002, "Ticker Only Inc.", "TKO", "NYSE"],
    [3003, "Held Only Corp", "HOC", "Nasdaq"],
    [5005, "Two Class Holdings", "TWC-B", "NYSE"],
    [5005, "Two Class Holdings", "TWC-A", "NYSE"]
  ]
})

export const form4 = (
  accession: string,
  issuerCik: string,
  issuerName: string,
  issuerTicker: string
): OwnershipReport => ({
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

export const thirteenF: HoldingsReport = {
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

export const tickerEntries = (text: string) => {
  const parsed = parseCompanyTickersExchange(text)
  if (Result.isFailure(parsed)) throw new Error(parsed.failure.message)
  return parsed.success
}

type Body = { readonly data: any }

/** The equity plane over one store, with `resolve` and `coverage` over its directory. */
export const service = Effect.gen(function* () {
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

export const runOn = <A, E>(layer: Layer.Layer<EquityStore>, effect: Effect.Effect<A, E, EquityStore>) =>
  Effect.runPromise(
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      return yield* effect
    }).pipe(Effect.provide(Layer.merge(layer, TestClock.layer())))
  )

/** Runs `cases` on a fresh store of each kind: memory, PGlite, and server PostgreSQL when TEST_DATABASE_URL is set. */
export const onEveryStore = (title: string, cases: (layer: () => Layer.Layer<EquityStore>, name: string) => void) => {
  describe(`${title}: memory`, () => cases(() => memoryEquityStore(), "memory"))
  const onDatabase = (name: string, open: () => Promise<TestDatabase>) =>
    describe(`${title}: ${name}`, () => {
      let t: TestDatabase
      beforeAll(async () => {
        t = await open()
      }, 120_000)
      afterAll(() => t?.drop())
      cases(
        () =>
          Layer.effectDiscard(
            Effect.promise(async () => {
              for (const table of EquityTableNames) await sql.raw(`delete from ${table}`).execute(t.database.db)
            })
          ).pipe(Layer.provideMerge(layerPgEquityStore(t.database))),
        name
      )
    })
  onDatabase("PGlite", pgliteEquityDatabase)
  if (TEST_DATABASE_URL === undefined) {
    describe.skip(`${title}: PostgreSQL (skipped: TEST_DATABASE_URL is not set)`, () => {})
  } else {
    onDatabase("PostgreSQL", () => postgresEquityDatabase(TEST_DATABASE_URL as string))
  }
}
