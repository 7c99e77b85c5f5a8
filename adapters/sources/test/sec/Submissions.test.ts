import { assert, describe, it } from "@effect/vitest"
import { acceptanceToUtc, filingDocumentUrl, parseSubmissions, parseSubmissionsPage } from "../../src/sec/index.ts"
import { fixtureText, parsed, refused, sharedSecPresent, sharedSecText, sharedSuite } from "./Files.ts"

describe("filing addresses and acceptance times", () => {
  it("builds the EDGAR document address from CIK, accession without dashes and primary document", () => {
    assert.strictEqual(
      filingDocumentUrl("0000320193", "0000320193-25-000079", "aapl-20250927.htm"),
      "https://www.sec.gov/Archives/edgar/data/320193/000032019325000079/aapl-20250927.htm"
    )
    assert.strictEqual(
      filingDocumentUrl("9990001", "0009990001-01-000001", ""),
      "https://www.sec.gov/Archives/edgar/data/9990001/000999000101000001/0009990001-01-000001-index.htm"
    )
  })

  it("reads the feed's acceptance clock as New York time, daylight saving included", () => {
    assert.strictEqual(parsed(acceptanceToUtc("2025-10-30T16:30:35.000Z")), "2025-10-30T20:30:35.000Z")
    assert.strictEqual(parsed(acceptanceToUtc("2026-01-29T16:30:33.000Z")), "2026-01-29T21:30:33.000Z")
    // The hour after the spring-forward change and the repeated hour of the fall-back change.
    assert.strictEqual(parsed(acceptanceToUtc("2025-03-09T03:30:00.000Z")), "2025-03-09T07:30:00.000Z")
    assert.strictEqual(parsed(acceptanceToUtc("2025-11-02T00:30:00.000Z")), "2025-11-02T04:30:00.000Z")
    assert.include(refused(acceptanceToUtc("26/02/2026 18:34")).message, "expected an acceptance date-time")
  })
})

describe("parseSubmissions on hand-made fixtures", () => {
  const submissions = parsed(parseSubmissions(fixtureText("submissions_small.json.raw")))

  it("reads the company header", () => {
    assert.deepStrictEqual(submissions.company, {
      cik: "9990001",
      name: "Fixture Widgets Corp",
      tickers: ["FXW", "FXWP"],
      exchanges: ["Nasdaq", ""],
      sic: "3571",
      sicDescription: "Electronic Computers",
      fiscalYearEnd: "1231",
      formerNames: ["FIXTURE WIDGETS INC", "FIXTURE GADGETS INC"]
    })
  })

  it("reads the columnar recent filings in feed order with their addresses", () => {
    assert.deepStrictEqual(submissions.filings[0], {
      accession: "0009990001-24-000003",
      form: "8-K",
      filedAt: "2024-03-01",
      acceptedAt: "2024-03-01T21:30:21.000Z",
      reportDate: "2024-02-29",
      primaryDocument: "fxw-8k.htm",
      primaryDocDescription: "8-K",
      items: "2.02,9.01",
      isXbrl: true,
      url: "https://www.sec.gov/Archives/edgar/data/9990001/000999000124000003/fxw-8k.htm"
    })
    const form4 = submissions.filings[2]!
    assert.deepStrictEqual(
      [form4.form, form4.reportDate, form4.items, form4.isXbrl, form4.primaryDocDescription],
      ["4", null, null, false, null]
    )
    assert.deepStrictEqual(submissions.olderFiles, [
      { name: "CIK0009990001-submissions-001.json", filingFrom: "2001-01-01", filingTo: "2023-06-30" }
    ])
  })

  it("reads an older page, whose columns sit at the top level", () => {
    const filings = parsed(parseSubmissionsPage(fixtureText("submissions_page_small.json.raw"), "0009990001"))
    assert.deepStrictEqual(
      filings.map((filing) => [filing.accession, filing.form, filing.filedAt, filing.acceptedAt, filing.url]),
      [
        [
          "0009990001-23-000002",
          "10-Q",
          "2023-05-01",
          "2023-05-01T10:00:00.000Z",
          "https://www.sec.gov/Archives/edgar/data/9990001/000999000123000002/fxw-20230331.htm"
        ],
        [
          "0009990001-01-000001",
          "S-1",
          "2001-01-02",
          "2001-01-02T17:00:00.000Z",
          "https://www.sec.gov/Archives/edgar/data/9990001/000999000101000001/0009990001-01-000001-index.htm"
        ]
      ]
    )
  })
})

describe("parseSubmissions refuses malformed documents with a typed error", () => {
  const good = JSON.parse(fixtureText("submissions_small.json.raw"))
  const variant = (edit: (document: any) => void): string => {
    const copy = structuredClone(good)
    edit(copy)
    return JSON.stringify(copy)
  }
  const cases: ReadonlyArray<readonly [string, string, string]> = [
    ["truncated JSON", fixtureText("submissions_small.json.raw").slice(0, 200), "not valid JSON"],
    ["no filings", variant((d) => delete d.filings), "$.filings: missing"],
    [
      "columns of different lengths",
      variant((d) => d.filings.recent.form.pop()),
      "$.filings.recent.form: has 2 entries, but accessionNumber has 3"
    ],
    [
      "a malformed accession",
      variant((d) => (d.filings.recent.accessionNumber[1] = "12-34")),
      "$.filings.recent.accessionNumber[1]"
    ],
    [
      "a malformed acceptance time",
      variant((d) => (d.filings.recent.acceptanceDateTime[0] = "yesterday")),
      "acceptanceDateTime[0]"
    ],
    [
      "a numeric form",
      variant((d) => (d.filings.recent.form[0] = 10)),
      "$.filings.recent.form[0]: expected a string, got the number 10"
    ]
  ]
  for (const [name, text, message] of cases) {
    it(`refuses ${name}`, () => {
      const error = refused(parseSubmissions(text))
      assert.strictEqual(error.format, "submissions")
      assert.include(error.message, message)
    })
  }
  it("refuses an older page that is not columnar", () => {
    const error = refused(parseSubmissionsPage('{"filings":{}}', "9990001"))
    assert.strictEqual(error.format, "submissions_page")
    assert.include(error.message, "$.accessionNumber: missing")
  })
})

describe.skipIf(!sharedSecPresent)(sharedSuite("parseSubmissions on Apple's real submissions feed"), () => {
  const text = sharedSecPresent ? sharedSecText("submissions/CIK0000320193.json") : "{}"
  const raw = sharedSecPresent ? JSON.parse(text) : { filings: { recent: {} } }
  const submissions = sharedSecPresent ? parsed(parseSubmissions(text)) : undefined

  it("reads Apple's header", () => {
    assert.deepStrictEqual(submissions!.company, {
      cik: "320193",
      name: "Apple Inc.",
      tickers: ["AAPL"],
      exchanges: ["Nasdaq"],
      sic: "3571",
      sicDescription: "Electronic Computers",
      fiscalYearEnd: "0926",
      formerNames: ["APPLE INC", "APPLE COMPUTER INC", "APPLE COMPUTER INC/ FA"]
    })
    assert.deepStrictEqual(submissions!.olderFiles, [
      { name: "CIK0000320193-submissions-001.json", filingFrom: "1994-01-26", filingTo: "2015-03-11" }
    ])
  })

  it("has every one of the 1005 recent filings, in feed order, with form, accession and filing date", () => {
    const filings = submissions!.filings
    assert.strictEqual(filings.length, 1005)
    assert.deepStrictEqual(
      filings.map((filing) => filing.accession),
      raw.filings.recent.accessionNumber
    )
    assert.deepStrictEqual(
      filings.map((filing) => filing.form),
      raw.filings.recent.form
    )
    assert.deepStrictEqual(
      filings.map((filing) => filing.filedAt),
      raw.filings.recent.filingDate
    )
    const counts = new Map<string, number>()
    for (const filing of filings) counts.set(filing.form, (counts.get(filing.form) ?? 0) + 1)
    assert.deepStrictEqual(
      [counts.get("4"), counts.get("8-K"), counts.get("10-Q"), counts.get("10-K"), counts.get("4/A")],
      [596, 106, 33, 11, 1]
    )
    // The feed runs newest first by filing date; acceptance time is not monotonic (4 places in Apple's feed, e.g. a
    // 10-Q accepted 2020-04-30 18:03 New York time, after the 17:30 cut-off, carries filing date 2020-05-01 and is
    // listed before a Form 4 accepted at 21:30 the same evening, which Section 16 forms may be until 22:00).
    for (let i = 1; i < filings.length; i++) assert.isTrue(filings[i - 1]!.filedAt >= filings[i]!.filedAt)
    const inversions = filings.filter((filing, i) => i > 0 && filings[i - 1]!.acceptedAt < filing.acceptedAt)
    assert.strictEqual(inversions.length, 4)
  })

  it("reads Apple's fiscal 2025 10-K and its earnings 8-K", () => {
    const tenK = submissions!.filings.find((filing) => filing.accession === "0000320193-25-000079")
    assert.deepStrictEqual(tenK, {
      accession: "0000320193-25-000079",
      form: "10-K",
      filedAt: "2025-10-31",
      acceptedAt: "2025-10-31T10:01:26.000Z",
      reportDate: "2025-09-27",
      primaryDocument: "aapl-20250927.htm",
      primaryDocDescription: "10-K",
      items: null,
      isXbrl: true,
      url: "https://www.sec.gov/Archives/edgar/data/320193/000032019325000079/aapl-20250927.htm"
    })
    const earnings = submissions!.filings.find((filing) => filing.accession === "0000320193-26-000005")
    assert.deepStrictEqual(
      [earnings?.form, earnings?.items, earnings?.acceptedAt],
      ["8-K", "2.02,9.01", "2026-01-29T21:30:33.000Z"]
    )
    const last = submissions!.filings[1004]!
    assert.deepStrictEqual(
      [last.accession, last.form, last.filedAt, last.primaryDocDescription],
      ["0001181431-15-004545", "4", "2015-03-12", "2015.03.10 WAGNER FORM 4 - RSU GRANT"]
    )
  })
})
