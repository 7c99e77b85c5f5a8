/**
 * Renders the simulated companies' data as the SEC serves it: companyfacts JSON, the submissions feed (recent
 * filings as columnar arrays plus an older page), and the two ticker lists. Numbers are written as JSON number
 * text straight from their exact decimal strings, never through a float.
 */
import { type CompanyBooks, conceptLabel, type PlannedFiling, type RawFact } from "./Books.ts"
import type { CompanyProfile } from "./Companies.ts"

/** How many of the newest filings the feed keeps in `filings.recent`; the rest go to an older page. */
export const RecentFilingsKept = 40

const quote = (text: string): string => JSON.stringify(text)

/** A JSON object from key and already-rendered value pairs, in the given order. */
const object = (entries: ReadonlyArray<readonly [string, string]>): string =>
  `{${entries.map(([key, value]) => `${quote(key)}:${value}`).join(",")}}`

const array = (values: ReadonlyArray<string>): string => `[${values.join(",")}]`

const renderFact = (fact: RawFact): string =>
  object([
    ...(fact.start === null ? [] : [["start", quote(fact.start)] as const]),
    ["end", quote(fact.end)],
    ["val", fact.val],
    ["accn", quote(fact.accn)],
    ["fy", String(fact.fy)],
    ["fp", quote(fact.fp)],
    ["form", quote(fact.form)],
    ["filed", quote(fact.filed)],
    ...(fact.frame === undefined ? [] : [["frame", quote(fact.frame)] as const])
  ])

/** companyfacts JSON of one company: taxonomies, concepts, units, facts sorted by end, start, filing. */
export const renderCompanyFacts = (books: CompanyBooks): string => {
  const byTaxonomy = new Map<string, Map<string, Map<string, Array<RawFact>>>>()
  for (const taxonomy of ["dei", "us-gaap"]) byTaxonomy.set(taxonomy, new Map())
  for (const fact of books.facts) {
    const concepts = byTaxonomy.get(fact.taxonomy)!
    const units = concepts.get(fact.concept) ?? new Map<string, Array<RawFact>>()
    concepts.set(fact.concept, units)
    units.set(fact.unit, [...(units.get(fact.unit) ?? []), fact])
  }
  const order = (a: RawFact, b: RawFact): number =>
    a.end !== b.end
      ? a.end < b.end
        ? -1
        : 1
      : (a.start ?? "") !== (b.start ?? "")
        ? (a.start ?? "") < (b.start ?? "")
          ? -1
          : 1
        : a.filed !== b.filed
          ? a.filed < b.filed
            ? -1
            : 1
          : a.accn < b.accn
            ? -1
            : 1
  const taxonomies = [...byTaxonomy].map(([taxonomy, concepts]) => {
    const rendered = [...concepts]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([concept, units]) => {
        const [label, description] = conceptLabel(concept)
        const unitEntries = [...units].map(
          ([unit, facts]) => [unit, array([...facts].sort(order).map(renderFact))] as const
        )
        return [
          concept,
          object([
            ["label", quote(label)],
            ["description", quote(description)],
            ["units", object(unitEntries)]
          ])
        ] as const
      })
    return [taxonomy, object(rendered)] as const
  })
  return object([
    ["cik", String(Number(books.profile.cik))],
    ["entityName", quote(books.profile.name)],
    ["facts", object(taxonomies)]
  ])
}

/** Newest first: by filing date, then acceptance time, then accession. */
const feedOrder = (a: PlannedFiling, b: PlannedFiling): number =>
  a.filingDate !== b.filingDate
    ? a.filingDate < b.filingDate
      ? 1
      : -1
    : a.acceptanceDateTime !== b.acceptanceDateTime
      ? a.acceptanceDateTime < b.acceptanceDateTime
        ? 1
        : -1
      : a.accession < b.accession
        ? 1
        : -1

const columns = (filings: ReadonlyArray<PlannedFiling>, fileNumber: string): string =>
  object([
    ["accessionNumber", array(filings.map((f) => quote(f.accession)))],
    ["filingDate", array(filings.map((f) => quote(f.filingDate)))],
    ["reportDate", array(filings.map((f) => quote(f.reportDate ?? "")))],
    ["acceptanceDateTime", array(filings.map((f) => quote(f.acceptanceDateTime)))],
    ["act", array(filings.map((f) => quote(f.form === "4" || f.form === "4/A" ? "" : "34")))],
    ["form", array(filings.map((f) => quote(f.form)))],
    ["fileNumber", array(filings.map((f) => quote(f.form === "4" || f.form === "4/A" ? "" : fileNumber)))],
    [
      "filmNumber",
      array(
        filings.map((f, i) =>
          quote(f.form === "4" || f.form === "4/A" ? "" : String(26_000_000 + ((i * 104_729) % 900_000)))
        )
      )
    ],
    ["items", array(filings.map((f) => quote(f.items)))],
    ["core_type", array(filings.map((f) => quote(f.form)))],
    ["size", array(filings.map((f) => String(f.size)))],
    ["isXBRL", array(filings.map((f) => (f.isXbrl ? "1" : "0")))],
    ["isInlineXBRL", array(filings.map((f) => (f.isXbrl ? "1" : "0")))],
    ["primaryDocument", array(filings.map((f) => quote(f.primaryDocument)))],
    ["primaryDocDescription", array(filings.map((f) => quote(f.primaryDocDescription)))]
  ])

const pageName = (cik: string): string => `CIK${cik.padStart(10, "0")}-submissions-001.json`

/** The submissions feed: the main document and its older page (absent when every filing is recent). */
export const renderSubmissions = (
  profile: CompanyProfile,
  filings: ReadonlyArray<PlannedFiling>
): { readonly main: string; readonly pages: ReadonlyArray<{ readonly name: string; readonly text: string }> } => {
  const ordered = [...filings].sort(feedOrder)
  const recent = ordered.slice(0, RecentFilingsKept)
  const older = ordered.slice(RecentFilingsKept)
  const fileNumber = `001-9${profile.cik.slice(-4)}`
  const address = object([
    ["street1", quote(`${Number(profile.cik.slice(-2)) * 100} Simulated Way`)],
    ["street2", "null"],
    ["city", quote("SPRINGFIELD")],
    ["stateOrCountry", quote(profile.stateOfIncorporation)],
    ["zipCode", quote("00000")],
    ["stateOrCountryDescription", quote(profile.stateOfIncorporation)]
  ])
  const files =
    older.length === 0
      ? "[]"
      : array([
          object([
            ["name", quote(pageName(profile.cik))],
            ["filingCount", String(older.length)],
            ["filingFrom", quote(older[older.length - 1]!.filingDate)],
            ["filingTo", quote(older[0]!.filingDate)]
          ])
        ])
  const main = object([
    ["cik", quote(profile.cik.padStart(10, "0"))],
    ["entityType", quote("operating")],
    ["sic", quote(profile.sic)],
    ["sicDescription", quote(profile.sicDescription)],
    ["ownerOrg", quote("")],
    ["insiderTransactionForOwnerExists", "0"],
    ["insiderTransactionForIssuerExists", "1"],
    ["name", quote(profile.name)],
    ["tickers", array(tickersOf(profile).map(quote))],
    ["exchanges", array(tickersOf(profile).map(() => quote(profile.exchange)))],
    ["ein", quote(`99${profile.cik.slice(-7)}`)],
    ["lei", "null"],
    ["description", quote("Simulated company: every figure is generated, none was filed with the SEC.")],
    ["website", quote("")],
    ["investorWebsite", quote("")],
    ["category", quote(profile.category ?? "Large accelerated filer")],
    ["fiscalYearEnd", quote(profile.fiscalYearEnd)],
    ["stateOfIncorporation", quote(profile.stateOfIncorporation)],
    ["stateOfIncorporationDescription", quote(profile.stateOfIncorporation)],
    [
      "addresses",
      object([
        ["mailing", address],
        ["business", address]
      ])
    ],
    ["phone", quote("555-0100")],
    ["flags", quote("")],
    ["formerNames", "[]"],
    [
      "filings",
      object([
        ["recent", columns(recent, fileNumber)],
        ["files", files]
      ])
    ]
  ])
  return { main, pages: older.length === 0 ? [] : [{ name: pageName(profile.cik), text: columns(older, fileNumber) }] }
}

/** A company's tickers: its common stock's, then its other share classes'. */
const tickersOf = (profile: CompanyProfile): ReadonlyArray<string> => [
  profile.ticker,
  ...(profile.otherClasses ?? []).map((c) => c.ticker)
]

/** One row per ticker, as the SEC lists a company with several share classes. */
const tickerRows = (profiles: ReadonlyArray<CompanyProfile>) =>
  profiles.flatMap((profile) => tickersOf(profile).map((ticker) => ({ profile, ticker })))

/** `company_tickers.json`. */
export const renderCompanyTickers = (profiles: ReadonlyArray<CompanyProfile>): string =>
  object(
    tickerRows(profiles).map(({ profile, ticker }, i) => [
      String(i),
      object([
        ["cik_str", String(Number(profile.cik))],
        ["ticker", quote(ticker)],
        ["title", quote(profile.name)]
      ])
    ])
  )

/** `company_tickers_exchange.json`. */
export const renderCompanyTickersExchange = (profiles: ReadonlyArray<CompanyProfile>): string =>
  object([
    ["fields", array(["cik", "name", "ticker", "exchange"].map(quote))],
    [
      "data",
      array(
        tickerRows(profiles).map(({ profile: p, ticker }) =>
          array([String(Number(p.cik)), quote(p.name), quote(ticker), quote(p.exchange)])
        )
      )
    ]
  ])
