import { assert, describe, it } from "@effect/vitest"
import { parseCompanyTickers, parseCompanyTickersExchange } from "../../src/sec/index.ts"
import { fixtureText, parsed, refused, sharedSecPresent, sharedSecText, sharedSuite } from "./Files.ts"

describe("ticker lists on hand-made fixtures", () => {
  it("reads company_tickers.json in key order, with no exchange", () => {
    assert.deepStrictEqual(parsed(parseCompanyTickers(fixtureText("tickers_small.json.raw"))), [
      { cik: "9990001", ticker: "FXW", name: "Fixture Widgets Corp", exchange: null },
      { cik: "9990002", ticker: "FXG", name: "Fixture Gears Inc", exchange: null },
      { cik: "9990001", ticker: "FXWP", name: "Fixture Widgets Corp", exchange: null }
    ])
  })

  it("reads company_tickers_exchange.json by column name; empty or null exchanges are null", () => {
    assert.deepStrictEqual(parsed(parseCompanyTickersExchange(fixtureText("tickers_exchange_small.json.raw"))), [
      { cik: "9990001", ticker: "FXW", name: "Fixture Widgets Corp", exchange: "Nasdaq" },
      { cik: "9990002", ticker: "FXG", name: "Fixture Gears Inc", exchange: "NYSE" },
      { cik: "9990001", ticker: "FXWP", name: "Fixture Widgets Corp", exchange: null },
      { cik: "9990003", ticker: "FXB", name: "Fixture Bits LLC", exchange: null }
    ])
    const reordered =
      '{"fields":["ticker","exchange","cik","name"],"data":[["FXW","NYSE",9990001,"Fixture Widgets Corp"]]}'
    assert.deepStrictEqual(parsed(parseCompanyTickersExchange(reordered)), [
      { cik: "9990001", ticker: "FXW", name: "Fixture Widgets Corp", exchange: "NYSE" }
    ])
  })

  it("refuses malformed lists with a typed error", () => {
    const noTitle = refused(parseCompanyTickers('{"0":{"cik_str":1,"ticker":"A"}}'))
    assert.strictEqual(noTitle.format, "company_tickers")
    assert.include(noTitle.message, "$.0.title: missing")
    assert.include(refused(parseCompanyTickers('{"x":{}}')).message, "numeric keys")
    assert.include(refused(parseCompanyTickers("[1,")).message, "not valid JSON")
    const noColumn = refused(parseCompanyTickersExchange('{"fields":["cik","name","ticker"],"data":[]}'))
    assert.strictEqual(noColumn.format, "company_tickers_exchange")
    assert.include(noColumn.message, 'has no "exchange" column')
    assert.include(
      refused(parseCompanyTickersExchange('{"fields":["cik","name","ticker","exchange"],"data":[[1,"A","B"]]}'))
        .message,
      "$.data[0]: has 3 cells, expected 4"
    )
    assert.include(
      refused(parseCompanyTickersExchange('{"fields":["cik","name","ticker","exchange"],"data":[["x","A","B",null]]}'))
        .message,
      "$.data[0][0]: expected a decimal number"
    )
  })
})

describe.skipIf(!sharedSecPresent)(sharedSuite("ticker lists as the SEC serves them"), () => {
  it("reads all 9,610 entries of company_tickers.json", () => {
    const entries = parsed(parseCompanyTickers(sharedSecText("tickers/company_tickers.json")))
    assert.strictEqual(entries.length, 9610)
    assert.deepStrictEqual(entries.slice(0, 2), [
      { cik: "789019", ticker: "MSFT", name: "MICROSOFT CORP", exchange: null },
      { cik: "320193", ticker: "AAPL", name: "Apple Inc.", exchange: null }
    ])
    assert.deepStrictEqual(entries[9609], {
      cik: "1819074",
      ticker: "PTNYD",
      name: "ParcelPal Logistics Inc.",
      exchange: null
    })
  })

  it("reads all 9,441 rows of company_tickers_exchange.json, 861 of them without an exchange", () => {
    const entries = parsed(parseCompanyTickersExchange(sharedSecText("tickers/company_tickers_exchange.json")))
    assert.strictEqual(entries.length, 9441)
    assert.deepStrictEqual(entries[0], { cik: "320193", ticker: "AAPL", name: "Apple Inc.", exchange: "Nasdaq" })
    assert.deepStrictEqual(entries[5], {
      cik: "1067983",
      ticker: "BRK-B",
      name: "BERKSHIRE HATHAWAY INC",
      exchange: "NYSE"
    })
    assert.strictEqual(entries.filter((entry) => entry.exchange === null).length, 861)
    assert.deepStrictEqual([...new Set(entries.map((entry) => entry.exchange))].sort(), [
      "Cboe US",
      "NYSE",
      "Nasdaq",
      "OTC",
      null
    ])
  })
})
