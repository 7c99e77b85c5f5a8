import { assert, describe, it } from "@effect/vitest"
import { Decimal } from "decimal.js"
import {
  checkThirteenFTotals,
  parseThirteenF,
  parseThirteenFInformationTable,
  parseThirteenFPrimaryDocument,
  thirteenFImpliedValueUnit,
  thirteenFValueMultiplier
} from "../../src/sec/index.ts"
import { fixtureText, parsed, refused, sharedSecPresent, sharedSecText, sharedSuite } from "./Files.ts"

describe("the 13F value unit follows the filing date", () => {
  it("is thousands of dollars before 2023-01-03 and dollars from that day on", () => {
    assert.strictEqual(thirteenFValueMultiplier("2022-11-14"), 1000)
    assert.strictEqual(thirteenFValueMultiplier("2023-01-02"), 1000)
    assert.strictEqual(thirteenFValueMultiplier("2023-01-03"), 1)
    assert.strictEqual(thirteenFValueMultiplier("2024-05-15"), 1)
  })
})

describe("13F on hand-made fixtures", () => {
  const infoTable = fixtureText("thirteenf_infotable_2022.xml")
  const primary = fixtureText("thirteenf_primary_2022.xml")

  it("reads a prefixed, whitespace-led information table filed in 2022, scaling thousands to dollars", () => {
    const holdings = parsed(parseThirteenFInformationTable(infoTable, "2022-11-14"))
    assert.deepStrictEqual(holdings, [
      {
        nameOfIssuer: "FIXTURE WIDGETS CORP",
        titleOfClass: "COM",
        cusip: "99999A101",
        valueUsd: "1234000",
        shares: "56789",
        sharesType: "SH",
        putCall: null,
        investmentDiscretion: "SOLE",
        votingSole: "56789",
        votingShared: "0",
        votingNone: "0"
      },
      {
        nameOfIssuer: "FIXTURE GEARS INC",
        titleOfClass: "COM",
        cusip: "99999B202",
        valueUsd: "66000",
        shares: "1000",
        sharesType: "SH",
        putCall: "Put",
        investmentDiscretion: "DFND",
        votingSole: "0",
        votingShared: "1000",
        votingNone: "0"
      }
    ])
  })

  it("keeps values as dollars when the same table is filed from 2023-01-03", () => {
    const holdings = parsed(parseThirteenFInformationTable(infoTable, "2023-01-03"))
    assert.deepStrictEqual(
      holdings.map((holding) => holding.valueUsd),
      ["1234", "66"]
    )
  })

  it("reads an amended primary document and checks its totals against the table", () => {
    const cover = parsed(parseThirteenFPrimaryDocument(primary))
    assert.deepStrictEqual(cover, {
      form: "13F-HR/A",
      filerCik: "9990900",
      filerName: "Fixture Capital Management LLC",
      reportPeriod: "2022-09-30",
      isAmendment: true,
      amendmentType: "RESTATEMENT",
      reportType: "13F HOLDINGS REPORT",
      tableEntryTotal: 2,
      tableValueTotal: "1300"
    })
    const holdings = parsed(parseThirteenFInformationTable(infoTable, "2022-11-14"))
    assert.deepStrictEqual(checkThirteenFTotals(cover, holdings, "2022-11-14"), {
      rows: 2,
      tableEntryTotal: 2,
      holdingsValueUsd: "1300000",
      tableValueTotalUsd: "1300000",
      entriesMatch: true,
      valueMatches: true
    })
    assert.isFalse(checkThirteenFTotals(cover, holdings.slice(1), "2022-11-14").entriesMatch)
  })

  it("assembles a holdings report from both documents", () => {
    const report = parsed(
      parseThirteenF({
        primaryDocument: primary,
        informationTable: infoTable,
        accession: "0009990900-22-000007",
        filedAt: "2022-11-14"
      })
    )
    assert.deepStrictEqual(
      [
        report.filerCik,
        report.filerName,
        report.form,
        report.reportPeriod,
        report.accession,
        report.filedAt,
        report.holdings.length
      ],
      ["9990900", "Fixture Capital Management LLC", "13F-HR/A", "2022-09-30", "0009990900-22-000007", "2022-11-14", 2]
    )
  })
})

describe("13F parsers refuse malformed documents with a typed error", () => {
  const infoTable = fixtureText("thirteenf_infotable_2022.xml")
  const primary = fixtureText("thirteenf_primary_2022.xml")
  it("refuses a truncated information table", () => {
    const error = refused(parseThirteenFInformationTable(infoTable.slice(0, 400), "2022-11-14"))
    assert.strictEqual(error.format, "13f_information_table")
    assert.include(error.message, "not well-formed XML")
  })
  it("refuses a value that is not a number", () => {
    const error = refused(
      parseThirteenFInformationTable(infoTable.replace("<ns1:value>1234<", "<ns1:value>12x4<"), "2022-11-14")
    )
    assert.include(error.message, "informationTable/infoTable[1]/value: expected a decimal number")
  })
  it("refuses an unknown shares type and a missing CUSIP", () => {
    assert.include(
      refused(parseThirteenFInformationTable(infoTable.replace(">SH<", ">XX<"), "2022-11-14")).message,
      "expected SH or PRN"
    )
    assert.include(
      refused(parseThirteenFInformationTable(infoTable.replace("<ns1:cusip>99999A101</ns1:cusip>", ""), "2022-11-14"))
        .message,
      "informationTable/infoTable[1]/cusip: missing"
    )
  })
  it("refuses a filing date that is not a date", () => {
    assert.include(refused(parseThirteenFInformationTable(infoTable, "14.11.2022")).message, "filedAt")
  })
  it("refuses a primary document without a filer, or with a malformed period", () => {
    const noFiler = primary.replace(/<filer>[\s\S]*<\/filer>/, "")
    const error = refused(parseThirteenFPrimaryDocument(noFiler))
    assert.strictEqual(error.format, "13f_primary_document")
    assert.include(error.message, "edgarSubmission/headerData/filerInfo/filer: missing")
    assert.include(
      refused(parseThirteenFPrimaryDocument(primary.replace("<periodOfReport>09-30-2022", "<periodOfReport>Q3 2022")))
        .message,
      "expected a date"
    )
  })
  it("refuses an information table passed as the primary document", () => {
    assert.include(refused(parseThirteenFPrimaryDocument(infoTable)).message, "found <informationTable>")
  })
})

describe.skipIf(!sharedSecPresent)(sharedSuite("13F on the real recorded documents"), () => {
  const infoTable = sharedSecPresent ? sharedSecText("13f/13F-HR_infotable.xml") : ""
  const primary = sharedSecPresent ? sharedSecText("13f/metlife_13F-HR_primary_doc.xml") : ""

  it("reads all 255 holdings of the information table, blank line before <?xml included", () => {
    assert.strictEqual(infoTable.charAt(0), "\n")
    const holdings = parsed(parseThirteenFInformationTable(infoTable, "2023-02-14"))
    assert.strictEqual(holdings.length, 255)
    assert.deepStrictEqual(holdings[0], {
      nameOfIssuer: "3M CO",
      titleOfClass: "COM",
      cusip: "88579Y101",
      valueUsd: "409469",
      shares: "2334",
      sharesType: "SH",
      putCall: null,
      investmentDiscretion: "SOLE",
      votingSole: "0",
      votingShared: "0",
      votingNone: "2334"
    })
    const last = holdings[254]!
    assert.deepStrictEqual(
      [last.nameOfIssuer, last.cusip, last.valueUsd, last.shares],
      ["ZOOM VIDEO COMMUNICATIONS IN", "98980L101", "215476", "824"]
    )
    assert.deepStrictEqual(
      holdings.filter((holding) => holding.sharesType === "PRN").map((holding) => holding.titleOfClass),
      ["IBONDS 27 ETF", "IBONDS DEC2026", "IBONDS DEC23 ETF"]
    )
  })

  it("sums the table's values exactly, and scales them by the filing date", () => {
    const sum = (filedAt: string) =>
      parsed(parseThirteenFInformationTable(infoTable, filedAt))
        .reduce((total, holding) => total.plus(holding.valueUsd), new Decimal(0))
        .toFixed()
    assert.strictEqual(sum("2023-02-14"), "350153407")
    assert.strictEqual(sum("2021-11-12"), "350153407000")
  })

  it("tells from the implied prices that this table is written in dollars, whatever its filing date", () => {
    const asWritten = parsed(parseThirteenFInformationTable(infoTable, "2021-11-12", { valueUnit: "dollars" }))
    assert.strictEqual(thirteenFImpliedValueUnit(asWritten), "dollars")
    assert.strictEqual(asWritten[0]!.valueUsd, "409469")
    assert.strictEqual(thirteenFImpliedValueUnit(asWritten.slice(0, 4)), "unknown")
  })

  it("reads MetLife's primary document: filer, period, form and the totals it states", () => {
    const cover = parsed(parseThirteenFPrimaryDocument(primary))
    assert.deepStrictEqual(cover, {
      form: "13F-HR",
      filerCik: "1099219",
      filerName: "METLIFE INC",
      reportPeriod: "2021-12-31",
      isAmendment: false,
      amendmentType: null,
      reportType: "13F COMBINATION REPORT",
      tableEntryTotal: 6,
      tableValueTotal: "11019796"
    })
    // The two recorded documents come from different filings: MetLife's summary promises 6 rows, the table has 255.
    const check = checkThirteenFTotals(
      cover,
      parsed(parseThirteenFInformationTable(infoTable, "2023-03-22")),
      "2023-03-22"
    )
    assert.deepStrictEqual(
      [check.entriesMatch, check.valueMatches, check.tableValueTotalUsd],
      [false, false, "11019796"]
    )
  })
})
