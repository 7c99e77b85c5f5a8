import { assert, describe, it } from "@effect/vitest"
import type { OwnershipReport } from "../../src/sec/EquityModel.ts"
import { parseOwnershipDocument, supersedeAmendments } from "../../src/sec/index.ts"
import { fixtureText, parsed, refused, sharedSecPresent, sharedSecText, sharedSuite } from "./Files.ts"

const original = parsed(
  parseOwnershipDocument(fixtureText("form4_original.xml"), {
    accession: "0009990101-24-000001",
    filedAt: "2024-03-05"
  })
)
const amendment = parsed(
  parseOwnershipDocument(fixtureText("form4_amendment.xml"), {
    accession: "0009990101-24-000002",
    filedAt: "2024-03-08"
  })
)

describe("parseOwnershipDocument on hand-made fixtures", () => {
  it("reads an original Form 4 with an XML declaration, boolean words and a footnoted price", () => {
    assert.deepStrictEqual(original, {
      form: "4",
      accession: "0009990101-24-000001",
      filedAt: "2024-03-05",
      periodOfReport: "2024-03-04",
      issuerCik: "9990001",
      issuerName: "Fixture Widgets Corp",
      issuerTicker: "FXW",
      owners: [
        {
          cik: "9990101",
          name: "Doe Jane",
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
          transactionDate: "2024-03-04",
          code: "P",
          acquiredDisposed: "A",
          shares: "1000",
          pricePerShare: "12.3456",
          sharesOwnedAfter: "5000",
          directIndirect: "D",
          exercisePrice: null,
          underlyingShares: null,
          footnotes: ["Weighted average price; trades from $12.30 to $12.40 & inclusive."]
        }
      ],
      dateOfOriginalSubmission: null
    })
  })

  it("reads a 4/A: its original's date, indirect ownership, a derivative row with no price", () => {
    assert.strictEqual(amendment.form, "4/A")
    assert.strictEqual(amendment.dateOfOriginalSubmission, "2024-03-05")
    assert.deepStrictEqual(
      amendment.transactions.map((t) => [
        t.table,
        t.code,
        t.shares,
        t.pricePerShare,
        t.sharesOwnedAfter,
        t.directIndirect
      ]),
      [
        ["non_derivative", "P", "1500", "12.3456", "5500", "I"],
        ["derivative", "A", "250.5", null, "250.5", "D"]
      ]
    )
    const derivative = amendment.transactions[1]!
    assert.deepStrictEqual(
      [derivative.exercisePrice, derivative.underlyingShares, derivative.footnotes],
      [null, "250.5", ["Each unit converts into one share."]]
    )
    assert.deepStrictEqual(amendment.transactions[0]!.footnotes, ["Held by the Doe Family Trust."])
  })
})

describe("supersedeAmendments", () => {
  const withFields = (report: OwnershipReport, fields: Partial<OwnershipReport>): OwnershipReport => ({
    ...report,
    ...fields
  })
  const otherOwner = withFields(original, {
    accession: "0009990102-24-000001",
    owners: [{ ...original.owners[0]!, cik: "9990102", name: "Roe Richard" }]
  })

  it("replaces the original filed on the 4/A's dateOfOriginalSubmission, keeping the others in input order", () => {
    assert.deepStrictEqual(
      supersedeAmendments([original, otherOwner, amendment]).map((report) => report.accession),
      ["0009990102-24-000001", "0009990101-24-000002"]
    )
  })

  it("leaves an original whose filing date the amendment does not name", () => {
    const earlier = withFields(original, { accession: "0009990101-24-000000", filedAt: "2024-03-04" })
    assert.deepStrictEqual(
      supersedeAmendments([earlier, amendment]).map((report) => report.accession),
      ["0009990101-24-000000", "0009990101-24-000002"]
    )
  })

  it("keeps only the latest of two amendments of one original", () => {
    const second = withFields(amendment, { accession: "0009990101-24-000003", filedAt: "2024-03-09" })
    assert.deepStrictEqual(
      supersedeAmendments([original, second, amendment]).map((report) => report.accession),
      ["0009990101-24-000003"]
    )
  })

  it("does not cross issuers, owners or periods", () => {
    const otherPeriod = withFields(original, { accession: "0009990101-24-000009", periodOfReport: "2024-02-01" })
    const otherIssuer = withFields(original, { accession: "0009990101-24-000010", issuerCik: "9990002" })
    assert.deepStrictEqual(
      supersedeAmendments([otherPeriod, otherIssuer, otherOwner, amendment]).map((report) => report.accession),
      ["0009990101-24-000009", "0009990101-24-000010", "0009990102-24-000001", "0009990101-24-000002"]
    )
  })

  it("keeps a 4/A whose original is not among the reports", () => {
    assert.deepStrictEqual(supersedeAmendments([amendment]), [amendment])
  })
})

describe("parseOwnershipDocument refuses malformed documents with a typed error", () => {
  const text = fixtureText("form4_original.xml")
  const filing = { accession: "0009990101-24-000001", filedAt: "2024-03-05" }
  const cases: ReadonlyArray<readonly [string, string, string]> = [
    ["unclosed XML", text.replace("</ownershipDocument>", ""), "not well-formed XML"],
    [
      "another document",
      "<edgarSubmission><x>1</x></edgarSubmission>",
      "expected a <ownershipDocument> document, found <edgarSubmission>"
    ],
    [
      "a Form 3",
      text.replace("<documentType>4</documentType>", "<documentType>3</documentType>"),
      "expected a Form 4 or 4/A"
    ],
    [
      "shares that are not a number",
      text.replace("<value>1000</value>", "<value>one thousand</value>"),
      "transactionShares/value: expected a decimal number"
    ],
    ["an unknown acquired/disposed code", text.replace("<value>A</value>", "<value>X</value>"), "expected A or D"],
    ["an undefined footnote", text.replace('<footnoteId id="F1"/>', '<footnoteId id="F9"/>'), "refers to footnote F9"],
    ["no reporting owner", text.replace(/<reportingOwner>[\s\S]*<\/reportingOwner>/, ""), "reportingOwner: missing"],
    ["not XML at all", '{"json": true}', "not well-formed XML"]
  ]
  for (const [name, document, message] of cases) {
    it(`refuses ${name}`, () => {
      const error = refused(parseOwnershipDocument(document, filing))
      assert.strictEqual(error._tag, "SecFormatError")
      assert.strictEqual(error.format, "form4")
      assert.include(error.message, message)
    })
  }
  it("refuses a malformed accession passed by the caller", () => {
    assert.include(
      refused(parseOwnershipDocument(text, { accession: "x", filedAt: "2024-03-05" })).message,
      "accession"
    )
  })
})

describe.skipIf(!sharedSecPresent)(sharedSuite("parseOwnershipDocument on Snowflake's real Form 4"), () => {
  const text = sharedSecPresent ? sharedSecText("form4/form4_snow_0001640147_2022-12-13.xml") : ""
  // A filing's accession and date come from EDGAR's index, not from the document; the recorded file has no index,
  // so a placeholder accession and the signature date stand in.
  const report = sharedSecPresent
    ? parsed(parseOwnershipDocument(text, { accession: "0000000000-22-000001", filedAt: "2022-12-14" }))
    : undefined

  it("reads the issuer, the CFO as reporting owner and the period", () => {
    assert.deepStrictEqual(
      [report!.form, report!.periodOfReport, report!.issuerCik, report!.issuerName, report!.issuerTicker],
      ["4", "2022-12-13", "1640147", "Snowflake Inc.", "SNOW"]
    )
    assert.deepStrictEqual(report!.owners, [
      {
        cik: "1402349",
        name: "Scarpelli Michael",
        isDirector: false,
        isOfficer: true,
        officerTitle: "Chief Financial Officer",
        isTenPercentOwner: false,
        isOther: false
      }
    ])
    assert.strictEqual(report!.dateOfOriginalSubmission, null)
  })

  it("reads exactly its seven transactions: codes, shares, prices, holdings after, ownership", () => {
    assert.deepStrictEqual(
      report!.transactions.map((t) => [
        t.table,
        t.transactionDate,
        t.code,
        t.acquiredDisposed,
        t.shares,
        t.pricePerShare,
        t.sharesOwnedAfter,
        t.directIndirect
      ]),
      [
        ["non_derivative", "2022-12-13", "M", "A", "200000", "8.88", "301097", "D"],
        ["non_derivative", "2022-12-13", "S", "D", "73170", "150.841", "227927", "D"],
        ["non_derivative", "2022-12-13", "S", "D", "74907", "151.814", "153020", "D"],
        ["non_derivative", "2022-12-13", "S", "D", "41986", "152.655", "111034", "D"],
        ["non_derivative", "2022-12-13", "S", "D", "5496", "153.872", "105538", "D"],
        ["non_derivative", "2022-12-13", "S", "D", "4441", "154.76", "101097", "D"],
        ["derivative", "2022-12-13", "M", "A", "200000", "0", "2219299", "D"]
      ]
    )
    const derivative = report!.transactions[6]!
    assert.deepStrictEqual(
      [derivative.securityTitle, derivative.exercisePrice, derivative.underlyingShares],
      ["Stock Option (Right to Buy)", "8.88", "200000.0"]
    )
  })

  it("resolves each row's footnotes to their text", () => {
    assert.deepStrictEqual(report!.transactions[0]!.footnotes, [
      "Includes shares to be issued in connection with the vesting of one or more restricted stock units."
    ])
    assert.deepStrictEqual(report!.transactions[5]!.footnotes, [
      "The sales reported in this Form 4 were effected for financial and tax planning purposes.",
      "The price reported in Column 4 is a weighted-average price. The shares were sold in multiple transactions ranging from $154.510 to $154.890, inclusive."
    ])
    assert.strictEqual(report!.transactions[6]!.footnotes.length, 1)
    assert.match(
      report!.transactions[6]!.footnotes[0]!,
      /^The shares subject to the option are immediately exercisable/
    )
  })
})
