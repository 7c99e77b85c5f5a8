/**
 * The ticker list makes assets, end to end (hand-made files, always run): `market-data ingest sec` reads a ticker
 * list and a Form 4 of a company the list alone names, and the library on that store then lists the company in
 * `coverage`, resolves it, shows the Form 4 in its `events` (not `unknown_asset`), and answers its `financials`
 * with a typed `unavailable`; an issuer only a Form 4 names is reachable by its ID too.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createMarketData, type Params } from "@market-data/embedded"
import { type Io, lineProgress, runCli } from "@market-data/infra"
import { ConfigProvider, Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { form4Text } from "./support/ingest-fixtures.ts"

const KEY = "mdk_IngestListed0123456789abcdefghij"

/** The fixture Form 4 with another issuer. */
const form4Of = (cik: string, name: string, ticker: string) =>
  form4Text()
    .replace("<issuerCik>0009990777</issuerCik>", `<issuerCik>${cik.padStart(10, "0")}</issuerCik>`)
    .replace("<issuerName>Fixture Decimals Inc</issuerName>", `<issuerName>${name}</issuerName>`)
    .replace("<issuerTradingSymbol>DECI</issuerTradingSymbol>", `<issuerTradingSymbol>${ticker}</issuerTradingSymbol>`)

describe("ingest sec: a company of the ticker list is an asset", () => {
  const work = mkdtempSync(join(tmpdir(), "md-ingest-listed-"))
  const data = join(work, "data")
  afterAll(() => rmSync(work, { recursive: true, force: true }))

  it("lists, resolves and serves the Form 4 of a company only the ticker list names, and a Form 4-only issuer", async () => {
    const files = join(work, "files")
    mkdirSync(join(files, "form4"), { recursive: true })
    writeFileSync(
      join(files, "company_tickers_exchange.json"),
      JSON.stringify({
        fields: ["cik", "name", "ticker", "exchange"],
        data: [
          [9990881, "Small Cap Listed Inc.", "SCLI", "Nasdaq"],
          [9990882, "Another Listed Co", "ALCO", "OTC"]
        ]
      })
    )
    writeFileSync(
      join(files, "form4", "0009990778-26-000101_2026-11-02.xml"),
      form4Of("9990881", "SMALL CAP LISTED INC", "SCLI")
    )
    writeFileSync(
      join(files, "form4", "0009990778-26-000102_2026-11-03.xml"),
      form4Of("9990883", "Unlisted Filer Corp", "UNLF")
    )
    const out: Array<string> = []
    const err: Array<string> = []
    const io: Io = { out: (l) => out.push(l), err: (l) => err.push(l), progress: lineProgress((l) => err.push(l)) }
    const env = ConfigProvider.layer(
      ConfigProvider.fromEnvRecord({ MARKET_DATA_SIM_UNIVERSE: "registry", MARKET_DATA_DIR: data })
    )
    const code = await Effect.runPromise(runCli(["ingest", "sec", files, "--json"], io).pipe(Effect.provide(env)))
    expect(code, err.join("\n")).toBe(0)
    expect(JSON.parse(out.pop() as string).written).toMatchObject({ tickers: 2, ownershipReports: 2 })

    const md = await createMarketData({ store: { pglite: data }, apiKey: KEY, ensureCredits: 100 })
    try {
      const body = async (operation: string, params: Params) => {
        const r = await md.call(operation, params)
        expect(r.status, `${operation} ${JSON.stringify(r.body)}`).toBe(200)
        return (r.body as any).data
      }
      const listed = await body("coverage", { plane: "equity", limit: 500 })
      const ids = listed.rows.map((r: any) => r.asset_id)
      expect(ids).toEqual(expect.arrayContaining(["eq:9990881:SCLI", "eq:9990882:ALCO", "eq:9990883:UNLF"]))
      expect((await body("resolve", { q: "small cap listed" })).best).toMatchObject({ asset_id: "eq:9990881:SCLI" })
      expect(await body("coverage", { id: "eq:9990882:ALCO" })).toMatchObject({ tier: "equity", alive: false })

      const events = await body("events", { id: "eq:9990881:SCLI" })
      expect(events.events.map((e: any) => [e.type, e.accession, e.code, e.shares, e.price_usd])).toEqual([
        ["insider", "0009990778-26-000101", "S", "1500", "101.2345"]
      ])
      const unlisted = await body("events", { id: "eq:9990883:UNLF" })
      expect(unlisted.events.map((e: any) => e.accession)).toEqual(["0009990778-26-000102"])

      const financials = await body("financials", { id: "eq:9990882:ALCO" })
      expect(financials.periods).toEqual([])
      expect(financials.unavailable.financials.reason).toBe("no_data")
      const profile = await body("profile", { id: "eq:9990881:SCLI" })
      expect(profile).toMatchObject({ name: "Small Cap Listed Inc.", exchanges: ["Nasdaq"], sector: null })

      // An ID the documents do not give stays unknown.
      const unknown = await md.call("events", { id: "eq:9990881:NOPE" })
      expect(unknown.status).toBe(404)
      expect((unknown.body as any).error.code).toBe("unknown_asset")
    } finally {
      await md.close()
    }
  }, 120_000)
})
