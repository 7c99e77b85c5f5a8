import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import {
  parseCompanyFacts,
  parseCompanyTickers,
  parseCompanyTickersExchange,
  parseOwnershipDocument,
  parseSubmissions,
  parseSubmissionsPage,
  parseThirteenFInformationTable,
  parseThirteenFPrimaryDocument
} from "../../src/sec/index.ts"
import { fixtureText } from "./Files.ts"

/** Every parser with a fixture it accepts. */
const parsers: ReadonlyArray<
  readonly [
    string,
    string,
    (text: string) => Result.Result<unknown, { readonly _tag: string; readonly message: string }>
  ]
> = [
  ["companyfacts", "companyfacts_small.json.raw", parseCompanyFacts],
  ["submissions", "submissions_small.json.raw", parseSubmissions],
  ["submissions page", "submissions_page_small.json.raw", (text) => parseSubmissionsPage(text, "9990001")],
  ["company_tickers", "tickers_small.json.raw", parseCompanyTickers],
  ["company_tickers_exchange", "tickers_exchange_small.json.raw", parseCompanyTickersExchange],
  [
    "form 4",
    "form4_amendment.xml",
    (text) => parseOwnershipDocument(text, { accession: "0009990101-24-000002", filedAt: "2024-03-08" })
  ],
  ["13F table", "thirteenf_infotable_2022.xml", (text) => parseThirteenFInformationTable(text, "2022-11-14")],
  ["13F primary document", "thirteenf_primary_2022.xml", parseThirteenFPrimaryDocument]
]

/** A deterministic sequence of damaged copies: truncations, deleted spans and replaced characters. */
const damaged = (text: string): ReadonlyArray<string> => {
  const copies: Array<string> = []
  const replacements = ["", "<", ">", '"', "{", "}", "[", "]", ",", ":", "x", "0", "-", "&", "/", "\u0000"]
  for (let i = 0; i < 400; i++) {
    const at = (i * 7919) % text.length
    const width = 1 + ((i * 31) % 12)
    copies.push(text.slice(0, at))
    copies.push(text.slice(0, at) + text.slice(at + width))
    copies.push(text.slice(0, at) + replacements[i % replacements.length]! + text.slice(at + 1))
  }
  return copies
}

describe("every SEC parser answers damaged input with a result naming the problem, never an exception", () => {
  for (const [name, fixture, parse] of parsers) {
    it(`${name}: 1,200 damaged copies each give a success or a SecFormatError`, () => {
      assert.isTrue(Result.isSuccess(parse(fixtureText(fixture))))
      let refusedCount = 0
      for (const copy of damaged(fixtureText(fixture))) {
        const result = parse(copy)
        assert.isTrue(Result.isResult(result))
        if (Result.isFailure(result)) {
          refusedCount++
          assert.strictEqual(result.failure._tag, "SecFormatError")
          // A parser bug (a TypeError inside a reader) would surface as this catch-all message.
          assert.notInclude(result.failure.message, "unexpected failure", copy.slice(0, 80))
        }
      }
      assert.isAbove(refusedCount, 100)
    })
  }
})
