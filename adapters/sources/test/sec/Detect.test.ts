import { assert, describe, it } from "@effect/vitest"
import { detectSecFormat } from "../../src/sec/index.ts"
import { fixtureText, sharedSecPresent, sharedSecText, sharedSuite } from "./Files.ts"

describe("detectSecFormat", () => {
  it("tells each fixture's format from its content", () => {
    const expected: ReadonlyArray<readonly [string, string]> = [
      ["companyfacts_small.json.raw", "companyfacts"],
      ["submissions_small.json.raw", "submissions"],
      ["submissions_page_small.json.raw", "submissions_page"],
      ["tickers_small.json.raw", "company_tickers"],
      ["tickers_exchange_small.json.raw", "company_tickers_exchange"],
      ["form4_original.xml", "form4"],
      ["form4_amendment.xml", "form4"],
      ["thirteenf_infotable_2022.xml", "13f_information_table"],
      ["thirteenf_primary_2022.xml", "13f_primary_document"]
    ]
    for (const [name, format] of expected) assert.strictEqual(detectSecFormat(fixtureText(name)), format, name)
  })

  it("answers null for anything else", () => {
    for (const text of ["", "hello", "[1,2]", "{}", '{"a":1}', "<html><body/></html>", "<unclosed>", '{"facts":']) {
      assert.isNull(detectSecFormat(text), text)
    }
  })
})

describe.skipIf(!sharedSecPresent)(sharedSuite("detectSecFormat on the real recorded files"), () => {
  it("tells every recorded SEC file's format", () => {
    const expected: ReadonlyArray<readonly [string, string]> = [
      ["companyfacts/CIK0000320193.json", "companyfacts"],
      ["submissions/CIK0000320193.json", "submissions"],
      ["tickers/company_tickers.json", "company_tickers"],
      ["tickers/company_tickers_exchange.json", "company_tickers_exchange"],
      ["form4/form4_snow_0001640147_2022-12-13.xml", "form4"],
      ["13f/13F-HR_infotable.xml", "13f_information_table"],
      ["13f/metlife_13F-HR_primary_doc.xml", "13f_primary_document"]
    ]
    for (const [name, format] of expected) assert.strictEqual(detectSecFormat(sharedSecText(name)), format, name)
  })
})
