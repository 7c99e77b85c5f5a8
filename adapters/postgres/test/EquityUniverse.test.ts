/**
 * Every company of the ticker list is an equity asset (DECISIONS, "Whole-market start-up": a ticker is an asset
 * as soon as the ticker list is read), on the in-memory store, PGlite and server PostgreSQL (TEST_DATABASE_URL),
 * on a hand-made ticker list: `resolve`, `coverage` (browse and by ID), `profile`, `read`; `events` and `holders`
 * from whatever documents are in; `financials` answers with a typed `unavailable` until the company's facts are
 * in. An issuer only a Form 4 names is reachable by its ID as soon as that document is in. The same on the SEC's
 * real ticker list: EquityUniverseReal.test.ts.
 */
import { Effect, type Layer } from "effect"
import { expect, it } from "vitest"
import { EquityStore } from "../../../core/src/equity/EquityStore.ts"
import { form4, onEveryStore, runOn, service, TICKERS_TEXT, thirteenF, tickerEntries } from "./EquityUniverseSupport.ts"

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

onEveryStore("every listed company is an equity asset", (layer) => handMade(layer))
