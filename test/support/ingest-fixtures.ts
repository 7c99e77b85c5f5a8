/**
 * Hand-made SEC files for the `market-data ingest` suites, written into a folder laid out as a user would have
 * them: a fictional company (CIK 9990777, ticker DECI, a CIK EDGAR has not assigned) with its companyfacts, its
 * submissions feed and an older page, a Form 4 named by its accession (filing date from the older page), a 13F
 * filing in an EDGAR-style accession folder, a ticker list and a daily price CSV; plus broken files.
 *
 * The revenue of FY2024 has 25 significant digits, more than a double holds, to prove decimals travel exactly.
 */
import { createHash } from "node:crypto"
import { mkdirSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { EquityTableNames, openPglite } from "@market-data/postgres"
import { sql } from "kysely"

export const FIXTURE_CIK = "9990777"
export const FIXTURE_ID = "eq:9990777:DECI"
/** Revenue FY2024 as filed: no double holds it. */
export const LONG_DECIMAL = "1234567890123456789.123456"
export const FIXTURE_FORM4_ACCESSION = "0009990777-23-000005"
export const FIXTURE_13F_ACCESSION = "0009990999-24-000003"

const fact = (
  val: string,
  start: string | null,
  end: string,
  fy: number,
  fp: string,
  form: string,
  accn: string,
  filed: string,
  frame?: string
) =>
  `{${start === null ? "" : `"start":"${start}",`}"end":"${end}","val":${val},"accn":"${accn}","fy":${fy},"fp":"${fp}","form":"${form}","filed":"${filed}"${frame === undefined ? "" : `,"frame":"${frame}"`}}`

const K23 = "0009990777-24-000001"
const K22 = "0009990777-23-000001"

/** companyfacts: values written as raw JSON numbers, as the SEC serves them. */
export const companyFactsText = (
  revenue2024 = LONG_DECIMAL
) => `{"cik":9990777,"entityName":"Fixture Decimals Inc","facts":{
"dei":{"EntityCommonStockSharesOutstanding":{"label":"Shares","units":{"shares":[${fact("1000000", null, "2024-01-31", 2023, "FY", "10-K", K23, "2024-02-20")}]}}},
"us-gaap":{
"RevenueFromContractWithCustomerExcludingAssessedTax":{"label":"Revenue","units":{"USD":[
${fact("987654321.50", "2022-01-01", "2022-12-31", 2022, "FY", "10-K", K22, "2023-02-21", "CY2022")},
${fact(revenue2024, "2023-01-01", "2023-12-31", 2023, "FY", "10-K", K23, "2024-02-20", "CY2023")}]}},
"NetIncomeLoss":{"label":"Net income","units":{"USD":[
${fact("12345678.90", "2022-01-01", "2022-12-31", 2022, "FY", "10-K", K22, "2023-02-21")},
${fact("23456789.01", "2023-01-01", "2023-12-31", 2023, "FY", "10-K", K23, "2024-02-20")}]}},
"EarningsPerShareDiluted":{"label":"EPS","units":{"USD/shares":[
${fact("12.35", "2022-01-01", "2022-12-31", 2022, "FY", "10-K", K22, "2023-02-21")},
${fact("23.4568", "2023-01-01", "2023-12-31", 2023, "FY", "10-K", K23, "2024-02-20")}]}}
}}}`

const columns = (rows: ReadonlyArray<readonly [string, string, string, string, string, string]>) =>
  `"accessionNumber":${JSON.stringify(rows.map((r) => r[0]))},"filingDate":${JSON.stringify(rows.map((r) => r[1]))},"reportDate":${JSON.stringify(rows.map((r) => r[2]))},"acceptanceDateTime":${JSON.stringify(rows.map((r) => r[3]))},"form":${JSON.stringify(rows.map((r) => r[4]))},"primaryDocument":${JSON.stringify(rows.map((r) => r[5]))},"isXBRL":${JSON.stringify(rows.map((r) => (r[4] === "10-K" ? 1 : 0)))}`

export const submissionsText =
  () => `{"cik":"9990777","entityType":"operating","sic":"3571","sicDescription":"Electronic Computers","name":"Fixture Decimals Inc","tickers":["DECI"],"exchanges":["Nasdaq"],"fiscalYearEnd":"1231","formerNames":[],
"filings":{"recent":{${columns([
    [K23, "2024-02-20", "2023-12-31", "2024-02-20T16:05:00.000Z", "10-K", "deci-20231231.htm"],
    [K22, "2023-02-21", "2022-12-31", "2023-02-21T16:05:00.000Z", "10-K", "deci-20221231.htm"]
  ])}},"files":[{"name":"CIK0009990777-submissions-001.json","filingCount":1,"filingFrom":"2023-06-01","filingTo":"2023-06-01"}]}}`

export const submissionsPageText = () =>
  `{${columns([[FIXTURE_FORM4_ACCESSION, "2023-06-01", "2023-05-30", "2023-06-01T18:00:00.000Z", "4", "xslF345X05/doc4.xml"]])}}`

export const form4Text = () => `<ownershipDocument>
    <schemaVersion>X0306</schemaVersion>
    <documentType>4</documentType>
    <periodOfReport>2023-05-30</periodOfReport>
    <issuer><issuerCik>0009990777</issuerCik><issuerName>Fixture Decimals Inc</issuerName><issuerTradingSymbol>DECI</issuerTradingSymbol></issuer>
    <reportingOwner>
        <reportingOwnerId><rptOwnerCik>0009990778</rptOwnerCik><rptOwnerName>Roe Richard</rptOwnerName></reportingOwnerId>
        <reportingOwnerRelationship><isOfficer>1</isOfficer><officerTitle>CFO</officerTitle></reportingOwnerRelationship>
    </reportingOwner>
    <nonDerivativeTable>
        <nonDerivativeTransaction>
            <securityTitle><value>Common Stock</value></securityTitle>
            <transactionDate><value>2023-05-30</value></transactionDate>
            <transactionCoding><transactionFormType>4</transactionFormType><transactionCode>S</transactionCode><equitySwapInvolved>0</equitySwapInvolved></transactionCoding>
            <transactionAmounts>
                <transactionShares><value>1500</value></transactionShares>
                <transactionPricePerShare><value>101.2345</value></transactionPricePerShare>
                <transactionAcquiredDisposedCode><value>D</value></transactionAcquiredDisposedCode>
            </transactionAmounts>
            <postTransactionAmounts><sharesOwnedFollowingTransaction><value>8500</value></sharesOwnedFollowingTransaction></postTransactionAmounts>
            <ownershipNature><directOrIndirectOwnership><value>D</value></directOrIndirectOwnership></ownershipNature>
        </nonDerivativeTransaction>
    </nonDerivativeTable>
</ownershipDocument>
`

/** A 13F primary document stating `entries` rows worth `total` (as written). */
export const thirteenFPrimaryText = (
  entries: number,
  total: string,
  filer = "0009990999",
  name = "Fixture Holdings LLC",
  period = "12-31-2023"
) => `<?xml version="1.0" encoding="UTF-8"?>
<edgarSubmission xmlns="http://www.sec.gov/edgar/thirteenffiler" xmlns:com="http://www.sec.gov/edgar/common">
  <headerData>
    <submissionType>13F-HR</submissionType>
    <filerInfo><filer><credentials><cik>${filer}</cik><ccc>XXXXXXXX</ccc></credentials></filer><periodOfReport>${period}</periodOfReport></filerInfo>
  </headerData>
  <formData>
    <coverPage><reportCalendarOrQuarter>${period}</reportCalendarOrQuarter><isAmendment>false</isAmendment><filingManager><name>${name}</name></filingManager><reportType>13F HOLDINGS REPORT</reportType></coverPage>
    <summaryPage><otherIncludedManagersCount>0</otherIncludedManagersCount><tableEntryTotal>${entries}</tableEntryTotal><tableValueTotal>${total}</tableValueTotal></summaryPage>
  </formData>
</edgarSubmission>
`

const infoRow = (name: string, cusip: string, value: string, shares: string) => `  <infoTable>
    <nameOfIssuer>${name}</nameOfIssuer><titleOfClass>COM</titleOfClass><cusip>${cusip}</cusip><value>${value}</value>
    <shrsOrPrnAmt><sshPrnamt>${shares}</sshPrnamt><sshPrnamtType>SH</sshPrnamtType></shrsOrPrnAmt>
    <investmentDiscretion>SOLE</investmentDiscretion><votingAuthority><Sole>${shares}</Sole><Shared>0</Shared><None>0</None></votingAuthority>
  </infoTable>
`

export const thirteenFTableText = () => `
<?xml version="1.0" encoding="UTF-8"?>
<informationTable xmlns="http://www.sec.gov/edgar/document/thirteenf/informationtable">
${infoRow("FIXTURE DECIMALS INC", "99977A101", "1012345", "10000")}${infoRow("OTHER FIXTURE CORP", "99977B202", "500000", "2500")}</informationTable>
`

export const tickersText = () =>
  `{"0":{"cik_str":9990777,"ticker":"DECI","title":"Fixture Decimals Inc"},"1":{"cik_str":9990779,"ticker":"OTHR","title":"Other Fixture Corp"}}`

/** Daily bars: 2024-01-02.. (trading days), header first, columns in a different order than the spec lists. */
export const pricesCsv = (badRows = true) =>
  [
    "Date,Close,Open,High,Low,Volume,Adj Close",
    "2024-01-02,101.5,100,102,99.5,120000,101.5",
    "2024-01-03,102.25,101.5,103,101,98000,102.25",
    ...(badRows ? ["2024-01-06,103,102,104,101,1000,103", "2024-01-04,abc,102,104,101,1000,103"] : []),
    "2024-01-05,103.75,102.25,104,102,110000,103.75"
  ].join("\n")

/** The files of the fixture company, in a user's layout; returns their paths by role. */
export const writeFixtures = (root: string) => {
  const files = {
    companyFacts: join(root, "companyfacts", "CIK0009990777.json"),
    submissions: join(root, "submissions", "CIK0009990777.json"),
    submissionsPage: join(root, "submissions", "CIK0009990777-submissions-001.json"),
    form4: join(root, "form4", `${FIXTURE_FORM4_ACCESSION}.xml`),
    thirteenFPrimary: join(root, "13f", `${FIXTURE_13F_ACCESSION.replaceAll("-", "")}_2024-02-14`, "primary_doc.xml"),
    thirteenFTable: join(root, "13f", `${FIXTURE_13F_ACCESSION.replaceAll("-", "")}_2024-02-14`, "infotable.xml"),
    tickers: join(root, "tickers", "company_tickers.json"),
    readme: join(root, "README.txt")
  }
  const write = (path: string, text: string) => {
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, text)
  }
  write(files.companyFacts, companyFactsText())
  write(files.submissions, submissionsText())
  write(files.submissionsPage, submissionsPageText())
  write(files.form4, form4Text())
  write(files.thirteenFPrimary, thirteenFPrimaryText(2, "1512345"))
  write(files.thirteenFTable, thirteenFTableText())
  write(files.tickers, tickersText())
  write(files.readme, "not an SEC file: ignored in a directory walk\n")
  return files
}

/** Broken files, each with the words its reason must contain. */
export const writeBrokenFiles = (root: string) => {
  const broken = [
    {
      path: join(root, "broken", "truncated-companyfacts.json"),
      text: companyFactsText().slice(0, 300),
      reason: "truncated or malformed"
    },
    {
      path: join(root, "broken", "CIK0009990778.json"),
      text: companyFactsText('"12x4"'),
      reason: "not a valid companyfacts document"
    },
    { path: join(root, "broken", "empty.json"), text: "", reason: "empty" },
    { path: join(root, "broken", "form4-without-accession.xml"), text: form4Text(), reason: "accession number" },
    {
      path: join(root, "broken", "lonely-13f", "infotable.xml"),
      text: thirteenFTableText(),
      reason: "one primary document and one information table"
    }
  ]
  for (const b of broken) {
    mkdirSync(dirname(b.path), { recursive: true })
    writeFileSync(b.path, b.text)
  }
  return broken
}

/**
 * Row counts and a SHA-256 over every row of the equity tables of the embedded store in `dir` (each row as JSON,
 * rows sorted): two stores with the same digest hold the same rows. Opens the database without its lock file, so
 * call it only while no other process has it open.
 */
export const equityDigest = async (
  dir: string
): Promise<{ readonly counts: Record<string, number>; readonly digest: string }> => {
  const database = await openPglite(dir)
  try {
    const counts: Record<string, number> = {}
    const hash = createHash("sha256")
    for (const table of [...EquityTableNames].sort()) {
      const rows = await sql<{
        j: string
      }>`select row_to_json(t)::text as j from ${sql.table(table)} t order by 1`.execute(database.db)
      counts[table] = rows.rows.length
      hash.update(`${table}\n`)
      for (const r of rows.rows) hash.update(`${r.j}\n`)
    }
    return { counts, digest: hash.digest("hex") }
  } finally {
    await database.close()
  }
}
