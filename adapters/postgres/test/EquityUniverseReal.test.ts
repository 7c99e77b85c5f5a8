/**
 * Every company of the SEC's real `company_tickers_exchange.json` (9,441 rows, read in place from
 * `../shared/data/sec`; skipped with a message when absent) is an equity asset on the in-memory store, PGlite and
 * server PostgreSQL: at least 9,000 assets listed by `coverage` and resolvable, Snowflake's real Form 4 in its
 * `events`, its `financials` a typed `unavailable`, Amazon's rows of the recorded 13F information table in its
 * `holders`; the time to list and resolve them is printed.
 */
import { existsSync, readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { Effect, type Layer, Result } from "effect"
import { expect, it } from "vitest"
import { EquityStore } from "../../../core/src/equity/EquityStore.ts"
import { parseOwnershipDocument, parseThirteenFInformationTable } from "../../sources/src/index.ts"
import { onEveryStore, runOn, service, thirteenF, tickerEntries } from "./EquityUniverseSupport.ts"

const SEC = resolve(import.meta.dirname, "..", "..", "..", "..", "shared", "data", "sec")
const REAL_TICKERS = join(SEC, "tickers", "company_tickers_exchange.json")
const realPresent = existsSync(REAL_TICKERS)
if (!realPresent) console.warn(`SKIPPED: the real ticker-list cases need ${REAL_TICKERS}, which is absent`)

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

onEveryStore("every company of the SEC's ticker list is an equity asset", (layer, name) => realData(layer, name))
