import { assert, describe, it } from "@effect/vitest"
import type { Fact } from "../../src/sec/EquityModel.ts"
import { parseCompanyFacts } from "../../src/sec/index.ts"
import { fixtureText, parsed, refused, sharedSecPresent, sharedSecText, sharedSuite } from "./Files.ts"

const find = (facts: ReadonlyArray<Fact>, where: Partial<Fact>): ReadonlyArray<Fact> =>
  facts.filter((fact) => Object.entries(where).every(([key, value]) => fact[key as keyof Fact] === value))

describe("parseCompanyFacts on hand-made fixtures", () => {
  const company = parsed(parseCompanyFacts(fixtureText("companyfacts_small.json.raw")))

  it("keeps every fact of every taxonomy and unit", () => {
    assert.strictEqual(company.cik, "9990001")
    assert.strictEqual(company.entityName, "Fixture Widgets Corp")
    assert.deepStrictEqual(
      company.facts.map((fact) => `${fact.taxonomy}:${fact.concept}:${fact.unit}`),
      [
        "dei:EntityCommonStockSharesOutstanding:shares",
        "us-gaap:Revenues:USD",
        "us-gaap:Revenues:USD",
        "us-gaap:EarningsPerShareDiluted:USD/shares",
        "us-gaap:EarningsPerShareDiluted:USD/shares",
        "ifrs-full:Revenue:EUR"
      ]
    )
  })

  it("keeps values exactly as written, where a float round trip would change them", () => {
    // JSON.parse would give 1.2345678901234568e+29, 1000000000.1, 0.30000000000000004 (kept: it is the text) and 9007199254740992.
    assert.deepStrictEqual(
      company.facts.map((fact) => fact.value),
      ["123456789012345678901234567890", "1000000000.10", "250000000", "0.30000000000000004", "-15", "9007199254740993"]
    )
  })

  it("reads periods, fiscal labels, accession, filing date and frame, null where absent", () => {
    assert.deepStrictEqual(company.facts[1], {
      taxonomy: "us-gaap",
      concept: "Revenues",
      unit: "USD",
      value: "1000000000.10",
      start: "2023-01-01",
      end: "2023-12-31",
      fy: 2023,
      fp: "FY",
      form: "10-K",
      accession: "0009990001-24-000001",
      filed: "2024-02-01",
      frame: "CY2023"
    })
    const instant = company.facts[0]!
    assert.strictEqual(instant.start, null)
    assert.strictEqual(instant.frame, "CY2024Q1I")
    const noLabels = company.facts[4]!
    assert.strictEqual(noLabels.fy, null)
    assert.strictEqual(noLabels.fp, null)
    assert.strictEqual(noLabels.frame, null)
  })
})

describe("parseCompanyFacts refuses malformed documents with a typed error", () => {
  const cases: ReadonlyArray<readonly [string, string, string]> = [
    ["not JSON", '{"cik": 1,', "not valid JSON"],
    ["an array at the top", "[]", "$: expected an object"],
    ["no facts", '{"cik":1,"entityName":"X"}', "$.facts: missing"],
    [
      "a value that is a string of letters",
      '{"cik":1,"entityName":"X","facts":{"us-gaap":{"Revenues":{"units":{"USD":[{"end":"2023-12-31","val":"ten","accn":"a","form":"10-K","filed":"2024-01-01"}]}}}}}',
      "$.facts.us-gaap.Revenues.units.USD[0].val: expected a decimal number"
    ],
    [
      "a malformed date",
      '{"cik":1,"entityName":"X","facts":{"us-gaap":{"Revenues":{"units":{"USD":[{"end":"31/12/2023","val":1,"accn":"a","form":"10-K","filed":"2024-01-01"}]}}}}}',
      "$.facts.us-gaap.Revenues.units.USD[0].end: expected a YYYY-MM-DD date"
    ],
    ["an empty text", "", "not valid JSON"]
  ]
  for (const [name, text, message] of cases) {
    it(`refuses ${name}`, () => {
      const error = refused(parseCompanyFacts(text))
      assert.strictEqual(error._tag, "SecFormatError")
      assert.strictEqual(error.format, "companyfacts")
      assert.include(error.message, message)
    })
  }
})

describe.skipIf(!sharedSecPresent)(sharedSuite("parseCompanyFacts on Apple's real companyfacts"), () => {
  const text = sharedSecPresent ? sharedSecText("companyfacts/CIK0000320193.json") : "{}"
  const company = sharedSecPresent ? parsed(parseCompanyFacts(text)) : { cik: "", entityName: "", facts: [] }

  it("reads the entity and all 24,579 facts of dei and us-gaap", () => {
    assert.strictEqual(company.cik, "320193")
    assert.strictEqual(company.entityName, "Apple Inc.")
    assert.strictEqual(company.facts.length, 24579)
    assert.deepStrictEqual([...new Set(company.facts.map((fact) => fact.taxonomy))], ["dei", "us-gaap"])
    assert.deepStrictEqual([...new Set(company.facts.map((fact) => fact.unit))].sort(), [
      "Store",
      "USD",
      "USD/shares",
      "Year",
      "pure",
      "shares"
    ])
  })

  it("keeps every value character for character as the file writes it", () => {
    // The oracle: the raw `"val":` tokens of the file, in order, compared with the parsed values in order.
    const raw = [...text.matchAll(/"val":(-?[0-9.eE+-]+)/g)].map((match) => match[1])
    assert.strictEqual(raw.length, company.facts.length)
    assert.deepStrictEqual(
      company.facts.map((fact) => fact.value),
      raw
    )
  })

  it("reads Apple's fiscal 2024 revenue as filed in its 2024 10-K", () => {
    const [fact] = find(company.facts, {
      concept: "RevenueFromContractWithCustomerExcludingAssessedTax",
      accession: "0000320193-24-000123",
      start: "2023-10-01",
      end: "2024-09-28"
    })
    assert.deepStrictEqual(fact, {
      taxonomy: "us-gaap",
      concept: "RevenueFromContractWithCustomerExcludingAssessedTax",
      unit: "USD",
      value: "391035000000",
      start: "2023-10-01",
      end: "2024-09-28",
      fy: 2024,
      fp: "FY",
      form: "10-K",
      accession: "0000320193-24-000123",
      filed: "2024-11-01",
      frame: null
    })
    const [fiscal2022] = find(company.facts, {
      concept: "RevenueFromContractWithCustomerExcludingAssessedTax",
      accession: "0000320193-24-000123",
      end: "2022-09-24"
    })
    assert.strictEqual(fiscal2022?.value, "394328000000")
    assert.strictEqual(fiscal2022?.frame, "CY2022")
  })

  it("reads per-share, net income, tiny decimals and the dei cover facts exactly", () => {
    assert.deepStrictEqual(
      find(company.facts, { concept: "EarningsPerShareDiluted", accession: "0000320193-24-000123" }).map(
        (fact) => `${fact.end}=${fact.value} ${fact.unit}`
      ),
      ["2022-09-24=6.11 USD/shares", "2023-09-30=6.13 USD/shares", "2024-09-28=6.08 USD/shares"]
    )
    assert.deepStrictEqual(
      find(company.facts, { concept: "NetIncomeLoss", end: "2024-09-28" }).map((fact) => [
        fact.value,
        fact.accession,
        fact.frame
      ]),
      [
        ["93736000000", "0000320193-24-000123", null],
        ["93736000000", "0000320193-25-000079", "CY2024"]
      ]
    )
    const [par] = find(company.facts, {
      concept: "CommonStockParOrStatedValuePerShare",
      accession: "0000320193-25-000079",
      end: "2025-09-27"
    })
    assert.strictEqual(par?.value, "0.00001")
    const [rate] = find(company.facts, {
      concept: "ShareBasedCompensationArrangementByShareBasedPaymentAwardFairValueAssumptionsRiskFreeInterestRate",
      accession: "0001193125-11-010144"
    })
    assert.deepStrictEqual([rate?.value, rate?.unit, rate?.frame], ["0.0035", "pure", "CY2009Q4"])
    const [firstCover] = find(company.facts, { taxonomy: "dei", concept: "EntityCommonStockSharesOutstanding" })
    assert.deepStrictEqual(firstCover, {
      taxonomy: "dei",
      concept: "EntityCommonStockSharesOutstanding",
      unit: "shares",
      value: "895816758",
      start: null,
      end: "2009-06-27",
      fy: 2009,
      fp: "Q3",
      form: "10-Q",
      accession: "0001193125-09-153165",
      filed: "2009-07-22",
      frame: "CY2009Q2I"
    })
  })
})
