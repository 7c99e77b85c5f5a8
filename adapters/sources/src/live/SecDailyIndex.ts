/**
 * Live EDGAR for every company: the daily-index follower (and, between indexes, the latest-filings feed: `latest`). EDGAR publishes, for each business day, a form index of
 * every filing accepted that day (`Archives/edgar/daily-index/<year>/QTR<q>/form.<YYYYMMDD>.idx`, listed in the
 * quarter folder's `index.json`). The follower reads each day after its watermark, in order, and for the followed
 * forms (`FOLLOWED_FORMS`: Form 4, 13F-HR, 10-K, 10-Q, 8-K and their amendments), deduplicated by accession:
 * - Form 4 / 4/A: the filing folder's `index.json`, then its XML document, parsed and stored; the issuer it names
 *   is a company that filed;
 * - 13F-HR / 13F-HR/A: the folder listing, the primary document and the information table (the holders);
 * - 10-K, 10-Q, 8-K (and /A): the filer is a company that filed.
 * Then every company that filed has its submissions (every form, so `events` lists the new filing) and, when a
 * new XBRL filing appeared or none are stored, its companyfacts refreshed.
 *
 * Honesty of the watermark (`filings_indexed_through`): a day counts as processed only when every followed
 * filing in it was stored (or is unreadable: a document that is not what its format promises, or that answered
 * "missing" on three runs; those are named in the source status) and every company that filed was refreshed.
 * The watermark only moves to such a day; a day with a failed fetch stops the run there and leaves it where it
 * was. A throttling answer (HTTP 429, 503, or 403 "Request Rate Threshold Exceeded"; a 403 S3 `AccessDenied` is
 * EDGAR's "no such file") fails the run at once, so the job backs off (honouring `Retry-After`) and shows it in
 * `sources`; the retry skips what this process already stored for that day.
 *
 * The first run, with no watermark, starts at the newest published day (the history before it comes from the
 * bulk archives, `market-data ingest sec`, and the companies followed by CIK). Every request goes through the SEC
 * feed's shared limiter with its User-Agent.
 */
import type { EquityStore } from "@market-data/core"
import { Effect, Result } from "effect"
import {
  type DailyIndexEntry,
  dailyIndexDays,
  parseDailyFormIndex,
  parseDirectoryListing,
  parseLatestFilingsAtom,
  parseOwnershipDocument
} from "../sec/index.ts"
import { SourceError } from "./Http.ts"
import type { SecFeed } from "./SecFeed.ts"

export const FOLLOWED_FORMS: ReadonlySet<string> = new Set([
  "4",
  "4/A",
  "13F-HR",
  "13F-HR/A",
  "10-K",
  "10-K/A",
  "10-Q",
  "10-Q/A",
  "8-K",
  "8-K/A"
])
const OWNERSHIP = new Set(["4", "4/A"])
const THIRTEEN_F = new Set(["13F-HR", "13F-HR/A"])

/** How many handled accessions each follower remembers. */
const STORED_MEMORY = 20_000

/** Runs on which a document answered "missing" before the follower gives it up as unreadable. */
export const MISSING_STRIKES = 3

/** A throttling answer: HTTP 429, 503, or a 403 that is not S3's `AccessDenied` (EDGAR's "no such file"). */
export const isThrottled = (e: SourceError): boolean =>
  e.kind === "status" &&
  (e.status === 429 || e.status === 503 || (e.status === 403 && !e.message.includes("AccessDenied")))

/** EDGAR's answer for a path that does not exist: 404, or 403 with S3's `AccessDenied` body. */
export const isMissing = (e: SourceError): boolean =>
  e.kind === "status" && (e.status === 404 || (e.status === 403 && e.message.includes("AccessDenied")))

/** What one run did. */
export interface DailyIndexRun {
  /** The last day fully processed (the new watermark), or the one given when no day completed. */
  readonly through: string | undefined
  readonly days: ReadonlyArray<string>
  readonly filings: number
  readonly companies: number
  /** Fetches that stopped a day (it is retried next run). */
  readonly blocking: ReadonlyArray<string>
  /**
   * Why the run stopped before the newest published day: a throttling answer (with its `Retry-After`), the day's
   * index unreadable, or the first failed fetch of a day left incomplete.
   */
  readonly failure: SourceError | undefined
  /** Documents given up as unreadable (the day still counts as processed). */
  readonly unreadable: ReadonlyArray<string>
}

const quarterOf = (day: string): { readonly year: number; readonly q: number } => ({
  year: Number(day.slice(0, 4)),
  q: Math.floor((Number(day.slice(5, 7)) - 1) / 3) + 1
})

/** Quarters from `from`'s to `to`'s, inclusive. */
const quartersBetween = (from: string, to: string): ReadonlyArray<{ readonly year: number; readonly q: number }> => {
  const out: Array<{ year: number; q: number }> = []
  let { year, q } = quarterOf(from)
  const end = quarterOf(to)
  while (year < end.year || (year === end.year && q <= end.q)) {
    out.push({ year, q })
    q++
    if (q === 5) {
      q = 1
      year++
    }
  }
  return out
}

const addDays = (day: string, n: number): string =>
  new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10)

const text = (e: SourceError) =>
  `${e.kind} ${e.status ?? ""} ${e.what}: ${e.message}`.replace(/\s+/g, " ").slice(0, 160)

export const makeDailyIndexFollower = (
  feed: SecFeed,
  store: EquityStore["Service"],
  options: { readonly archivesBaseUrl: string }
) => {
  /**
   * Per day, kept until the day completes (so a retry resumes): accessions stored or given up and companies
   * refreshed (`done`), and the companies that filed (found so far).
   */
  const dayState = new Map<string, { readonly done: Set<string>; readonly companies: Set<string> }>()
  const strikes = new Map<string, number>()
  const dailyRoot = `${options.archivesBaseUrl}/Archives/edgar/daily-index`

  const quarterDays = (year: number, q: number) =>
    feed.get(`${dailyRoot}/${year}/QTR${q}/index.json`).pipe(
      Effect.flatMap((t) => feed.parsed(`daily-index ${year} QTR${q}`, parseDirectoryListing(t))),
      Effect.map(dailyIndexDays),
      // A quarter with no folder yet (its first day not published): no days.
      Effect.catchIf(isMissing, () => Effect.succeed([] as ReadonlyArray<string>))
    )

  const formIndex = (day: string) => {
    const { year, q } = quarterOf(day)
    const ymd = day.replaceAll("-", "")
    return feed
      .get(`${dailyRoot}/${year}/QTR${q}/form.${ymd}.idx`)
      .pipe(Effect.flatMap((t) => feed.parsed(`form.${ymd}.idx`, parseDailyFormIndex(t))))
  }

  /** A Form 4's XML: the folder listing names it (the one XML document of the filing). */
  const ownership = (cik: string, accession: string, filedAt: string) =>
    Effect.gen(function* () {
      const folder = feed.archiveFolder(cik, accession)
      const names = yield* feed
        .get(`${folder}/index.json`)
        .pipe(Effect.flatMap((t) => feed.parsed(`${accession} index.json`, parseDirectoryListing(t))))
      const xml = names.find((n) => n.toLowerCase().endsWith(".xml"))
      if (xml === undefined)
        return yield* Effect.fail(
          new SourceError({
            source: "sec",
            kind: "format",
            what: `${accession} index.json`,
            message: "no XML document"
          })
        )
      const doc = yield* feed.get(`${folder}/${xml}`)
      return yield* feed.parsed(`form4 ${accession}`, parseOwnershipDocument(doc, { accession, filedAt }))
    })

  /**
   * Accessions whose documents this process stored (by either follower), with the companies they make refresh: the
   * daily index does not fetch again what the latest-filings feed already stored (bounded: the oldest are dropped).
   */
  const stored = new Map<string, ReadonlyArray<string>>()
  const remember = (accession: string, companies: ReadonlyArray<string>) => {
    stored.set(accession, companies)
    if (stored.size > STORED_MEMORY) stored.delete(stored.keys().next().value as string)
  }

  /**
   * Processes followed filings (`entries`, any number of rows per accession): documents first, then the
   * companies that filed. `done` holds accessions and companies already handled (kept by the caller across
   * retries); fails only on a throttling answer.
   */
  const processEntries = (
    entries: ReadonlyArray<DailyIndexEntry>,
    state: { readonly done: Set<string>; readonly companies: Set<string> },
    nowMs: number
  ) =>
    Effect.gen(function* () {
      const { done, companies } = state
      const byAccession = new Map<string, Array<DailyIndexEntry>>()
      for (const e of entries) {
        if (!FOLLOWED_FORMS.has(e.form)) continue
        const list = byAccession.get(e.accession) ?? []
        list.push(e)
        byAccession.set(e.accession, list)
      }
      const blocking: Array<string> = []
      const unreadable: Array<string> = []
      let firstError: SourceError | undefined
      let filings = 0

      /** Runs one fetch: throttling fails the run; `missing` strikes and other failures block the day. */
      const step = <A>(key: string, run: Effect.Effect<A, SourceError>) =>
        Effect.gen(function* () {
          const r = yield* Effect.result(run)
          if (Result.isSuccess(r)) return r.success
          const e = r.failure
          if (isThrottled(e)) return yield* Effect.fail(e)
          const n = isMissing(e) ? (strikes.get(key) ?? 0) + 1 : 0
          if (n > 0) strikes.set(key, n)
          if (e.kind === "format" || n >= MISSING_STRIKES) {
            done.add(key)
            strikes.delete(key)
            unreadable.push(`${key}: ${text(e)}`)
          } else {
            firstError ??= e
            blocking.push(`${key}: ${text(e)}`)
          }
          return undefined
        })

      for (const [accession, rows] of byAccession) {
        const first = rows[0] as DailyIndexEntry
        if (done.has(accession)) continue
        const known = stored.get(accession)
        if (known !== undefined) {
          for (const cik of known) companies.add(cik)
        } else if (OWNERSHIP.has(first.form)) {
          const report = yield* step(accession, ownership(first.cik, accession, first.dateFiled))
          if (report === undefined) continue
          yield* store.putOwnershipReports([report])
          companies.add(report.issuerCik)
          remember(accession, [report.issuerCik])
        } else if (THIRTEEN_F.has(first.form)) {
          const report = yield* step(accession, feed.thirteenF(first.cik, { accession, filedAt: first.dateFiled }))
          if (report === undefined) continue
          yield* store.putHoldingsReports([report])
          remember(accession, [])
        } else {
          for (const r of rows) companies.add(r.cik)
        }
        done.add(accession)
        filings++
      }

      for (const cik of companies) {
        const key = `CIK ${cik}`
        if (done.has(key)) continue
        const polled = yield* step(key, feed.pollCompany(cik, nowMs, { documents: false }))
        if (polled !== undefined) done.add(key)
      }
      return { filings, blocking, unreadable, firstError }
    })

  /**
   * Processes one day; fails only on a throttling answer (or an unreadable form index). `complete` is false when a
   * fetch failed otherwise (the day is retried next run).
   */
  const processDay = (day: string, nowMs: number) =>
    Effect.gen(function* () {
      const entries = yield* formIndex(day)
      const state = dayState.get(day) ?? { done: new Set<string>(), companies: new Set<string>() }
      dayState.set(day, state)
      const r = yield* processEntries(entries, state, nowMs)
      const complete = r.blocking.length === 0
      if (complete) dayState.delete(day)
      return { ...r, complete, companies: state.companies.size }
    })

  /**
   * One poll of the latest-filings feed (`cgi-bin/browse-edgar?action=getcurrent&output=atom&count=100`, every
   * form, newest first): its followed filings not yet handled are processed as a day's are, so a filing reaches
   * `events` minutes after EDGAR accepts it. It never moves the watermark (only the daily index does), and a
   * filing missed here (more than 100 entries between polls, a failed fetch) is taken by that day's index.
   */
  const latestDone = new Set<string>()
  const latest = (nowMs: number) =>
    Effect.gen(function* () {
      const body = yield* feed.get(
        `${options.archivesBaseUrl}/cgi-bin/browse-edgar?action=getcurrent&output=atom&count=100`
      )
      const entries = yield* feed.parsed("latest filings feed", parseLatestFilingsAtom(body))
      // Accessions are handled once; companies are refreshed on every poll that names a new filing of theirs.
      const r = yield* processEntries(entries, { done: latestDone, companies: new Set<string>() }, nowMs)
      for (const key of [...latestDone].filter((k) => k.startsWith("CIK "))) latestDone.delete(key)
      while (latestDone.size > STORED_MEMORY) latestDone.delete(latestDone.values().next().value as string)
      return r
    })

  /**
   * Processes every published day after `watermark` (or, without one, the newest published day) in order, up to
   * the first day that cannot be completed; `today` (`YYYY-MM-DD`) bounds the quarters listed.
   */
  const run = (
    watermark: string | undefined,
    today: string,
    nowMs: number
  ): Effect.Effect<DailyIndexRun, SourceError> =>
    Effect.gen(function* () {
      const from = watermark === undefined ? addDays(today, -10) : addDays(watermark, 1)
      const listed: Array<string> = []
      for (const { year, q } of quartersBetween(from, today)) listed.push(...(yield* quarterDays(year, q)))
      const pending = listed.filter((d) => d >= from && d <= today)
      const days = watermark === undefined ? pending.slice(-1) : pending
      let through = watermark
      const processed: Array<string> = []
      const blocking: Array<string> = []
      const unreadable: Array<string> = []
      let filings = 0
      let companies = 0
      let failure: SourceError | undefined
      for (const day of days) {
        const attempt = yield* Effect.result(processDay(day, nowMs))
        if (Result.isFailure(attempt)) {
          failure = attempt.failure
          break
        }
        const r = attempt.success
        filings += r.filings
        companies += r.companies
        unreadable.push(...r.unreadable)
        if (!r.complete) {
          blocking.push(...r.blocking)
          failure = r.firstError
          break
        }
        through = day
        processed.push(day)
      }
      return { through, days: processed, filings, companies, blocking, unreadable, failure }
    })

  return { run, latest }
}

export type DailyIndexFollower = ReturnType<typeof makeDailyIndexFollower>
