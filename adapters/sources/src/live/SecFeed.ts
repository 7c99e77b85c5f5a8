/**
 * The SEC EDGAR fetcher: for every covered company (`MARKET_DATA_SEC_CIKS`) its submissions feed, its XBRL
 * companyfacts and the Form 4 / 4/A documents filed about it; for every followed institutional manager
 * (`MARKET_DATA_SEC_13F_FILERS`) its 13F-HR reports. Everything goes through the SEC parsers in `../sec/` into
 * the `EquityStore`, whose writes are idempotent.
 *
 * Incremental: a poll reads each submissions feed (one request) and fetches only what is new against the store:
 * filings whose accession is not stored; companyfacts only at first or when a new XBRL filing appeared; Form 4
 * documents whose accession has no ownership report yet; 13F reports whose accession is not among the stored
 * holdings reports. The older submissions pages (`filings.files`) are followed until the store holds filings
 * older than the recent list (so once, unless a page could not be read). Documents older than `documentLookbackDays` are not fetched at the first start (the insider
 * summary looks back 90 days, holders need the last two quarters).
 *
 * Addresses: `https://data.sec.gov/submissions/CIK##########.json` (and its older pages by name),
 * `https://data.sec.gov/api/xbrl/companyfacts/CIK##########.json`, a Form 4's XML at
 * `https://www.sec.gov/Archives/edgar/data/<cik>/<accession without dashes>/<primaryDocument without the xsl
 * folder>`, a 13F filing's folder listing at `.../<accession without dashes>/index.json` (naming its primary
 * document and information table).
 *
 * Every request carries the `User-Agent` from `MARKET_DATA_SEC_USER_AGENT` and passes one limiter shared by every
 * SEC job (`makeSecLimiter`): never more than 10 per second as the SEC counts them (its fair-access limit).
 * `pollCompany(cik, now, { documents: false })` refreshes submissions and facts only (the daily-index follower,
 * `SecDailyIndex.ts`, fetches the documents itself).
 */
import type { EquityStore, Filing } from "@market-data/core"
import { Effect, Result } from "effect"
import {
  parseCompanyFacts,
  parseOwnershipDocument,
  parseSubmissions,
  parseSubmissionsPage,
  parseThirteenF,
  type SecFormatError
} from "../sec/index.ts"
import { fetchText, SourceError } from "./Http.ts"
import { makeLimiter, type RequestLimiter } from "./Limiter.ts"

export interface SecFeedOptions {
  readonly dataBaseUrl: string
  readonly archivesBaseUrl: string
  readonly userAgent: string
  readonly ciks: ReadonlyArray<string>
  readonly thirteenFFilers: ReadonlyArray<string>
  readonly timeoutMs: number
  /** Form 4 and 13F documents filed more than this many days ago are not fetched. */
  readonly documentLookbackDays: number
}

/** The SEC's fair-access limit: at most 10 requests per second. */
export const SEC_MAX_REQUESTS_PER_SECOND = 10

/**
 * One limiter for every SEC request of the process, at most `perSecond` (2 to 10; the SEC's limit is 10, an
 * operator may go lower with `MARKET_DATA_SEC_MAX_RPS`) in any second **as the SEC's servers count them**: one
 * request per `1000 / (perSecond - 1)` ms (112 ms at 10). Spacing of `1000 / perSecond` would keep every second
 * at `perSecond` only at the sender: a request delayed on the way and the ten after it on time arrive as eleven
 * within a second. With the wider spacing, requests sent one after another (each after the previous answer,
 * as every SEC job does) can never arrive more than `perSecond` to a second, whatever the delays.
 */
export const makeSecLimiter = (perSecond: number = SEC_MAX_REQUESTS_PER_SECOND): RequestLimiter =>
  makeLimiter({
    capacity: 1,
    windowMs: Math.ceil(1000 / (Math.min(SEC_MAX_REQUESTS_PER_SECOND, Math.max(2, Math.floor(perSecond))) - 1))
  })

/** What one poll of one company or filer did. */
export interface SecPollReport {
  readonly cik: string
  readonly newFilings: number
  readonly facts: number
  readonly ownershipReports: number
  readonly holdingsReports: number
  /** Documents that could not be fetched or read this time (retried next poll unless unreadable). */
  readonly problems: ReadonlyArray<string>
}

const paddedCik = (cik: string): string => cik.padStart(10, "0")
const OWNERSHIP_FORMS = new Set(["4", "4/A"])
const THIRTEEN_F_FORMS = new Set(["13F-HR", "13F-HR/A"])
const DAY_MS = 86_400_000

const formatError = (what: string, e: SecFormatError) =>
  new SourceError({ source: "sec", kind: "format", what, message: `${e.format}: ${e.message}` })

export const makeSecFeed = (
  store: EquityStore["Service"],
  options: SecFeedOptions,
  limiter: RequestLimiter = makeSecLimiter()
) => {
  /** Accessions whose documents are unreadable: not fetched again by this process. */
  const unreadable = new Set<string>()
  /** 13F accessions ingested by this process (a report holding no covered company leaves no trace in `holdings`). */
  const ingested13F = new Set<string>()

  const get = (url: string) =>
    Effect.andThen(
      limiter.take(1),
      fetchText({
        source: "sec",
        url,
        timeoutMs: options.timeoutMs,
        headers: { "User-Agent": options.userAgent, Accept: "application/json, application/xml, text/xml, */*" }
      })
    )

  const parsed = <A>(what: string, r: Result.Result<A, SecFormatError>) =>
    Result.isSuccess(r) ? Effect.succeed(r.success) : Effect.fail(formatError(what, r.failure))

  const submissions = (cik: string) =>
    Effect.gen(function* () {
      const what = `submissions CIK${paddedCik(cik)}`
      const text = yield* get(`${options.dataBaseUrl}/submissions/CIK${paddedCik(cik)}.json`)
      return yield* parsed(what, parseSubmissions(text))
    })

  const olderPages = (cik: string, names: ReadonlyArray<string>) =>
    Effect.forEach(names, (name) =>
      Effect.flatMap(get(`${options.dataBaseUrl}/submissions/${name}`), (text) =>
        parsed(`submissions page ${name}`, parseSubmissionsPage(text, cik))
      )
    ).pipe(Effect.map((pages) => pages.flat()))

  const archiveFolder = (cik: string, accession: string) =>
    `${options.archivesBaseUrl}/Archives/edgar/data/${String(Number(cik))}/${accession.replaceAll("-", "")}`

  /** A Form 4's raw XML: the primary document without the XSL rendering folder (`xslF345X05/`). */
  const ownershipDocumentUrl = (cik: string, filing: Filing) =>
    `${archiveFolder(cik, filing.accession)}/${filing.primaryDocument.replace(/^xsl[^/]*\//, "")}`

  const recentEnough = (filing: Filing, nowMs: number) =>
    Date.parse(`${filing.filedAt}T00:00:00Z`) >= nowMs - options.documentLookbackDays * DAY_MS

  /** Runs `fetch` for one document; a failure is a problem of this poll, not of the whole company. */
  const documentStep = <A>(accession: string, fetch: Effect.Effect<A, SourceError>, problems: Array<string>) =>
    Effect.map(Effect.result(fetch), (r) => {
      if (Result.isSuccess(r)) return r.success
      if (r.failure.kind === "format") unreadable.add(accession)
      problems.push(`${accession}: ${r.failure.kind} ${r.failure.message}`.slice(0, 200))
      return undefined
    })

  const thirteenF = (filerCik: string, filing: Pick<Filing, "accession" | "filedAt">) =>
    Effect.gen(function* () {
      const folder = archiveFolder(filerCik, filing.accession)
      const listing = yield* get(`${folder}/index.json`)
      const names = yield* Effect.try({
        try: () => {
          const items = (JSON.parse(listing) as { directory?: { item?: Array<{ name?: unknown }> } }).directory?.item
          if (!Array.isArray(items)) throw new Error("no directory.item")
          return items.map((i) => String(i.name))
        },
        catch: (e) =>
          new SourceError({ source: "sec", kind: "format", what: `${filing.accession} index.json`, message: String(e) })
      })
      const xml = names.filter((n) => n.toLowerCase().endsWith(".xml"))
      const primaryName = xml.find((n) => n.toLowerCase() === "primary_doc.xml")
      const tableName = xml.find((n) => n !== primaryName)
      if (primaryName === undefined || tableName === undefined) {
        return yield* Effect.fail(
          new SourceError({
            source: "sec",
            kind: "format",
            what: `${filing.accession} index.json`,
            message: `no primary document and information table among ${xml.join(", ") || "no XML files"}`
          })
        )
      }
      const primaryDocument = yield* get(`${folder}/${primaryName}`)
      const informationTable = yield* get(`${folder}/${tableName}`)
      return yield* parsed(
        `13F ${filing.accession}`,
        parseThirteenF({ primaryDocument, informationTable, accession: filing.accession, filedAt: filing.filedAt })
      )
    })

  /** Stored 13F accessions (from every covered company's holdings) plus those this process ingested. */
  const known13F = Effect.gen(function* () {
    const known = new Set(ingested13F)
    for (const cik of options.ciks) {
      const h = yield* store.holdings(cik)
      for (const r of h.reports) known.add(r.accession)
    }
    return known
  })

  /** One poll of one covered company: submissions, new filings, facts if needed, new Form 4s, own 13Fs. */
  const pollCompany = (
    cik: string,
    nowMs: number,
    poll: {
      /** False: submissions, older pages and facts only; the caller fetches the documents (the daily index). */
      readonly documents?: boolean
    } = {}
  ): Effect.Effect<SecPollReport, SourceError> =>
    Effect.gen(function* () {
      const feed = yield* submissions(cik)
      const problems: Array<string> = []
      const stored = yield* store.filings(cik)
      const storedAccessions = new Set(stored.map((f) => f.accession))
      // The older pages are read until the store holds filings older than the recent list (once, normally);
      // a page that cannot be read now is a problem of this poll, and the recent filings are stored regardless.
      const oldestRecent = feed.filings.reduce((m, f) => (f.filedAt < m ? f.filedAt : m), "9999-12-31")
      let older: ReadonlyArray<Filing> = []
      if (feed.olderFiles.length > 0 && !stored.some((f) => f.filedAt < oldestRecent)) {
        const pages = yield* Effect.result(
          olderPages(
            cik,
            feed.olderFiles.map((f) => f.name)
          )
        )
        if (Result.isSuccess(pages)) older = pages.success
        else problems.push(`older submissions pages: ${pages.failure.kind} ${pages.failure.message}`.slice(0, 200))
      }
      const all = [...feed.filings, ...older]
      const fresh = all.filter((f) => !storedAccessions.has(f.accession))
      yield* store.putCompany(feed.company)
      if (fresh.length > 0) yield* store.putFilings(cik, fresh)

      let facts = 0
      const coverage = (yield* store.coverage(cik))[0]
      if ((coverage?.facts ?? 0) === 0 || fresh.some((f) => f.isXbrl)) {
        // A company that never filed XBRL has no companyfacts: EDGAR answers 404, which is no facts, not a failure.
        const neverXbrl = !all.some((f) => f.isXbrl)
        const text = yield* get(`${options.dataBaseUrl}/api/xbrl/companyfacts/CIK${paddedCik(cik)}.json`).pipe(
          Effect.catchIf(
            (e) => neverXbrl && e.kind === "status" && e.status === 404,
            () => Effect.succeed(undefined)
          )
        )
        if (text !== undefined) {
          const cf = yield* parsed(`companyfacts CIK${paddedCik(cik)}`, parseCompanyFacts(text))
          facts = yield* store.putFacts(cik, cf.facts)
        }
      }

      if (poll.documents === false)
        return { cik, newFilings: fresh.length, facts, ownershipReports: 0, holdingsReports: 0, problems }
      const haveOwnership = new Set((yield* store.ownershipReports(cik)).map((r) => r.accession))
      const ownershipFilings = all.filter(
        (f) =>
          OWNERSHIP_FORMS.has(f.form) &&
          !haveOwnership.has(f.accession) &&
          !unreadable.has(f.accession) &&
          recentEnough(f, nowMs)
      )
      let ownershipReports = 0
      for (const f of ownershipFilings) {
        const report = yield* documentStep(
          f.accession,
          Effect.flatMap(get(ownershipDocumentUrl(cik, f)), (text) =>
            parsed(`form4 ${f.accession}`, parseOwnershipDocument(text, { accession: f.accession, filedAt: f.filedAt }))
          ),
          problems
        )
        if (report !== undefined) ownershipReports += yield* store.putOwnershipReports([report])
      }

      // A covered company that is itself an institutional manager files 13F-HRs too.
      const holdingsReports = yield* ingest13F(cik, all, nowMs, problems)
      return { cik, newFilings: fresh.length, facts, ownershipReports, holdingsReports, problems }
    })

  const ingest13F = (filerCik: string, filings: ReadonlyArray<Filing>, nowMs: number, problems: Array<string>) =>
    Effect.gen(function* () {
      const known = yield* known13F
      let written = 0
      for (const f of filings) {
        if (!THIRTEEN_F_FORMS.has(f.form) || known.has(f.accession) || unreadable.has(f.accession)) continue
        if (!recentEnough(f, nowMs)) continue
        const report = yield* documentStep(f.accession, thirteenF(filerCik, f), problems)
        if (report !== undefined) {
          written += yield* store.putHoldingsReports([report])
          ingested13F.add(f.accession)
        }
      }
      return written
    })

  /** One poll of one followed 13F filer (not a covered company: its filings are not stored as a company's). */
  const pollFiler = (cik: string, nowMs: number): Effect.Effect<SecPollReport, SourceError> =>
    Effect.gen(function* () {
      const feed = yield* submissions(cik)
      const problems: Array<string> = []
      const holdingsReports = yield* ingest13F(cik, feed.filings, nowMs, problems)
      return { cik, newFilings: 0, facts: 0, ownershipReports: 0, holdingsReports, problems }
    })

  return { pollCompany, pollFiler, limiter, get, archiveFolder, thirteenF, parsed }
}

export type SecFeed = ReturnType<typeof makeSecFeed>
