/**
 * Live EDGAR for every company: the daily form index parser (on the recorded `form.20200318.idx` and on hand-made
 * rows), and the daily-index follower against a local replay EDGAR (www.sec.gov and data.sec.gov on one
 * 127.0.0.1 server) serving hand-made daily indexes in EDGAR's fixed-width format, the recorded Snowflake Form 4,
 * the recorded 403 `AccessDenied` page, and hand-made submissions: a new filing in the feed shows in `events`,
 * a 503 mid-run fails the run and the retry completes it, the watermark (`filings_indexed_through`) never passes
 * a day with a failed fetch, and the SEC's servers never count more than 10 requests in a second.
 */
import { assert, describe, it } from "@effect/vitest"
import {
  dailyIndexThrough,
  decodeParams,
  Equity,
  type HandlerInput,
  isApiError,
  operation,
  planeHandlers
} from "@market-data/core"
import { ConfigProvider, Effect, Fiber, Result } from "effect"
import { TestClock } from "effect/testing"
import { makeMemoryEquityStore } from "../../../memory/src/MemoryEquityStore.ts"
import { makeMemoryMarketStore } from "../../../memory/src/MemoryMarketStore.ts"
import { recordSuccess } from "../../src/live/Health.ts"
import { loadLiveConfig, validateSecUserAgent } from "../../src/live/LiveConfig.ts"
import {
  dailyIndexNewestMs,
  dailyIndexRun,
  latestFilingsRun,
  retriedRun,
  SEC_DAILY_INDEX
} from "../../src/live/LiveFeeds.ts"
import { isMissing, isThrottled, MISSING_STRIKES, makeDailyIndexFollower } from "../../src/live/SecDailyIndex.ts"
import { makeSecFeed, makeSecLimiter } from "../../src/live/SecFeed.ts"
import {
  dailyIndexDays,
  parseDailyFormIndex,
  parseDirectoryListing,
  parseLatestFilingsAtom
} from "../../src/sec/index.ts"
import {
  eventually,
  type FakeRequest,
  fakeServer,
  listenFake,
  notFound,
  pumpClock,
  type Reply,
  sendReply,
  sharedSecPresent,
  sharedText
} from "./FakeServer.ts"
import * as S from "./fixtures/Sec.ts"

const UA = "Market Data Tests tests@example.com"

/** A daily form index in EDGAR's layout: header lines, column header, rule, fixed-width rows. */
const formIndexText = (
  day: string,
  rows: ReadonlyArray<{
    readonly form: string
    readonly name: string
    readonly cik: string
    readonly accession: string
  }>
) =>
  [
    "Description:           Daily Index of EDGAR Dissemination Feed by Form Type",
    `Last Data Received:    ${day}`,
    "Comments:              webmaster@sec.gov",
    "Anonymous FTP:         ftp://ftp.sec.gov/edgar/",
    " ",
    " ",
    " ",
    " ",
    "Form Type   Company Name                                                  CIK         Date Filed  File Name",
    "-".repeat(137),
    ...rows.map(
      (r) =>
        `${r.form.padEnd(12)}${r.name.padEnd(62)}${r.cik.padEnd(12)}${day.replaceAll("-", "").padEnd(12)}${`edgar/data/${r.cik}/${r.accession}.txt`.padEnd(52)}`
    ),
    ""
  ].join("\n")

/** The latest-filings Atom feed in EDGAR's shape: one entry per filing and role. */
const atomText = (
  entries: ReadonlyArray<{
    readonly form: string
    readonly name: string
    readonly cik: string
    readonly role: string
    readonly accession: string
    readonly filed: string
  }>
) =>
  [
    '<?xml version="1.0" encoding="ISO-8859-1" ?>',
    '<feed xmlns="http://www.w3.org/2005/Atom">',
    "<title>Latest Filings</title>",
    ...entries.map((e) =>
      [
        "<entry>",
        `<title>${e.form} - ${e.name} (${e.cik.padStart(10, "0")}) (${e.role})</title>`,
        `<link rel="alternate" type="text/html" href="https://www.sec.gov/Archives/edgar/data/${e.cik}/${e.accession.replaceAll("-", "")}/${e.accession}-index.htm"/>`,
        `<summary type="html">\n &lt;b&gt;Filed:&lt;/b&gt; ${e.filed} &lt;b&gt;AccNo:&lt;/b&gt; ${e.accession} &lt;b&gt;Size:&lt;/b&gt; 10 KB\n</summary>`,
        `<updated>${e.filed}T16:02:43-05:00</updated>`,
        `<category scheme="https://www.sec.gov/" label="form type" term="${e.form}"/>`,
        `<id>urn:tag:sec.gov,2008:accession-number=${e.accession}</id>`,
        "</entry>"
      ].join("\n")
    ),
    "</feed>"
  ].join("\n")

describe("daily form index", () => {
  it("hand-made rows: forms and names with spaces, the accession from the file name", () => {
    const text = formIndexText("2026-11-20", [
      { form: "1-A POS", name: "Belpointe REIT, Inc.", cik: "1749817", accession: "0001010549-26-000033" },
      { form: "4", name: "Snowflake Inc.", cik: "1640147", accession: "0001640147-26-000301" }
    ])
    const r = parseDailyFormIndex(text)
    assert.isTrue(Result.isSuccess(r))
    if (!Result.isSuccess(r)) return
    assert.deepStrictEqual(r.success[0], {
      form: "1-A POS",
      companyName: "Belpointe REIT, Inc.",
      cik: "1749817",
      dateFiled: "2026-11-20",
      fileName: "edgar/data/1749817/0001010549-26-000033.txt",
      accession: "0001010549-26-000033"
    })
    assert.strictEqual(r.success[1]?.form, "4")
  })

  it("a row that is not a filing row fails the whole file, naming the line", () => {
    const text = `${formIndexText("2026-11-20", [])}4           Snowflake Inc.   no cik here\n`
    const r = parseDailyFormIndex(text)
    assert.isTrue(Result.isFailure(r))
    if (Result.isFailure(r)) assert.include(r.failure.message, "line 11")
    assert.isTrue(Result.isFailure(parseDailyFormIndex("<html>File Unavailable</html>")))
  })

  it("quarter listing: the days with a form index, in order", () => {
    const names = [
      "form.20261123.idx",
      "master.20261123.idx",
      "form.20261120.idx",
      "company.20261120.idx",
      "index.json"
    ]
    assert.deepStrictEqual(dailyIndexDays(names), ["2026-11-20", "2026-11-23"])
  })

  it("EDGAR's throttling answers against its 'no such file'", () => {
    const status = (status: number, message: string) =>
      ({ kind: "status", status, message, source: "sec", what: "x" }) as never
    assert.isTrue(isThrottled(status(429, "HTTP 429")))
    assert.isTrue(isThrottled(status(503, "HTTP 503: File Unavailable")))
    assert.isTrue(isThrottled(status(403, "HTTP 403: <html>Request Rate Threshold Exceeded")))
    assert.isFalse(isThrottled(status(403, "HTTP 403: <Error><Code>AccessDenied</Code>")))
    assert.isTrue(isMissing(status(403, "HTTP 403: <Error><Code>AccessDenied</Code>")))
    assert.isTrue(isMissing(status(404, "HTTP 404")))
  })

  it('User-Agent: "Name email" is required (an address alone is refused)', () => {
    assert.include(validateSecUserAgent("ops@example.com")?.message ?? "", "Name email")
    assert.isUndefined(validateSecUserAgent("Example Corp ops@example.com"))
  })

  it.effect("MARKET_DATA_SEC_MAX_RPS (2 to 10) and MARKET_DATA_SEC_DAILY_INDEX (on/off) are read and checked", () =>
    Effect.gen(function* () {
      const load = (env: Record<string, string>) =>
        loadLiveConfig.pipe(
          Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord({ MARKET_DATA_SEC_USER_AGENT: UA, ...env })))
        )
      const defaults = yield* load({})
      assert.deepStrictEqual([defaults.secMaxRequestsPerSecond, defaults.secFollowDailyIndex], [10, true])
      const lower = yield* load({ MARKET_DATA_SEC_MAX_RPS: "4", MARKET_DATA_SEC_DAILY_INDEX: "off" })
      assert.deepStrictEqual([lower.secMaxRequestsPerSecond, lower.secFollowDailyIndex], [4, false])
      for (const bad of ["11", "1", "0"])
        assert.strictEqual(
          (yield* Effect.flip(load({ MARKET_DATA_SEC_MAX_RPS: bad }))).variable,
          "MARKET_DATA_SEC_MAX_RPS"
        )
      assert.strictEqual(
        (yield* Effect.flip(load({ MARKET_DATA_SEC_DAILY_INDEX: "maybe" }))).variable,
        "MARKET_DATA_SEC_DAILY_INDEX"
      )
      const noName = yield* Effect.flip(
        loadLiveConfig.pipe(
          Effect.provide(
            ConfigProvider.layer(ConfigProvider.fromEnvRecord({ MARKET_DATA_SEC_USER_AGENT: "ops@example.com" }))
          )
        )
      )
      assert.strictEqual(noName.variable, "MARKET_DATA_SEC_USER_AGENT")
    })
  )

  const recorded = sharedSecPresent ? it : it.skip
  recorded(
    `recorded form.20200318.idx: every row read${sharedSecPresent ? "" : " (SKIPPED: ../shared/data/sec is absent)"}`,
    () => {
      const r = parseDailyFormIndex(sharedText("sec/index/form.20200318.idx"))
      assert.isTrue(Result.isSuccess(r))
      if (!Result.isSuccess(r)) return
      assert.lengthOf(r.success, 4084)
      // A day's index also carries late disseminations with their own, earlier filing dates.
      assert.strictEqual(r.success.filter((e) => e.dateFiled === "2020-03-18").length, 3940)
      assert.strictEqual(r.success.filter((e) => e.dateFiled === "2019-07-18").length, 1)
      const pos = r.success.find((e) => e.accession === "0001010549-20-000033")
      assert.deepStrictEqual([pos?.form, pos?.companyName, pos?.cik], ["1-A POS", "Belpointe REIT, Inc.", "1749817"])
      // A Form 4 is listed under its issuer and its reporting owners: fewer accessions than rows.
      const form4 = r.success.filter((e) => e.form === "4")
      assert.isBelow(new Set(form4.map((e) => e.accession)).size, form4.length)
      const atom = parseLatestFilingsAtom(sharedText("sec/index/getcurrent_atom_all_count100_2025-12-12.xml"))
      assert.isTrue(Result.isSuccess(atom))
      if (Result.isSuccess(atom)) {
        assert.lengthOf(atom.success, 100)
        assert.strictEqual(new Set(atom.success.map((e) => e.accession)).size, 50, "one entry per role")
        assert.deepStrictEqual(
          atom.success.filter((e) => e.accession === "0002063236-25-000004").map((e) => [e.form, e.cik, e.dateFiled]),
          [
            ["4", "2063236", "2025-12-12"],
            ["4", "1673743", "2025-12-12"]
          ]
        )
      }
      const type4 = parseLatestFilingsAtom(sharedText("sec/index/getcurrent_atom_type4_count100_2025-12-12.xml"))
      assert.isTrue(Result.isSuccess(type4) && type4.success.every((e) => e.form === "4" || e.form === "4/A"))
      const unavailable = parseLatestFilingsAtom(
        sharedText("sec/index/getcurrent_type4_start5100_503_file_unavailable_2025-12-12.html")
      )
      assert.isTrue(Result.isFailure(unavailable), "the 503 page is not a feed")
      const listing = parseDirectoryListing(sharedText("sec/index/filing_index_0001213900-24-004875.json"))
      assert.isTrue(Result.isSuccess(listing) && listing.success.includes("0001213900-24-004875.txt"))
    }
  )
})

const suite = (name: string) => (sharedSecPresent ? name : `${name} (SKIPPED: ../shared/data/sec is absent)`)

describe(suite("daily-index follower on a replay EDGAR"), () => {
  if (!sharedSecPresent) {
    it.skip("needs ../shared/data/sec", () => {})
    return
  }
  const form4Xml = sharedText("sec/form4/form4_snow_0001640147_2022-12-13.xml")
  const accessDenied = sharedText("sec/index/full-index_2099_QTR1_form.gz_403_2025-12-12.xml")

  const SNOW = "1640147"
  const OWNER = "1234567"
  const F4_DAY1 = "0001640147-26-000301"
  const Q_DAY1 = "0001640147-26-000290"
  const K_DAY2 = "0001640147-26-000310"
  const F4_DAY2 = "0001640147-26-000311"
  const row = (form: string, accession: string, cik = SNOW, name = "Snowflake Inc.") => ({ form, name, cik, accession })

  /** The replay EDGAR: a mutable set of published days, submissions rows, and per-path overrides. */
  const makeEdgar = () => {
    const days = new Map<string, string>()
    const filingRows: Array<S.Row> = []
    const overrides = new Map<string, () => Reply>()
    const latestFeed = { text: atomText([]) }
    const route = (r: FakeRequest): Reply => {
      const override = overrides.get(r.path)
      if (override !== undefined) return override()
      if (r.path === "/Archives/edgar/daily-index/2026/QTR4/index.json")
        return {
          json: S.folderIndex(
            "/Archives/edgar/daily-index/2026/QTR4",
            [...days.keys()].flatMap((d) => [
              `form.${d.replaceAll("-", "")}.idx`,
              `master.${d.replaceAll("-", "")}.idx`
            ])
          )
        }
      const idx = /^\/Archives\/edgar\/daily-index\/2026\/QTR4\/form\.(\d{8})\.idx$/.exec(r.path)
      if (idx !== null) {
        const ymd = idx[1] as string
        const text = days.get(`${ymd.slice(0, 4)}-${ymd.slice(4, 6)}-${ymd.slice(6)}`)
        return text === undefined
          ? { status: 403, text: accessDenied }
          : { text, headers: { "Content-Type": "text/plain" } }
      }
      const folder = /^\/Archives\/edgar\/data\/\d+\/(\d{18})\/(.+)$/.exec(r.path)
      if (folder !== null) {
        if (folder[2] === "index.json")
          return { json: S.folderIndex(r.path, [`${folder[1]}-index.html`, "wf-form4_167114.xml"]) }
        if (folder[2] === "wf-form4_167114.xml")
          return { text: form4Xml, headers: { "Content-Type": "application/xml" } }
        return { status: 403, text: accessDenied }
      }
      if (r.path === "/cgi-bin/browse-edgar" && r.query.get("action") === "getcurrent")
        return { text: latestFeed.text, headers: { "Content-Type": "application/atom+xml; charset=ISO-8859-1" } }
      if (r.path === `/submissions/CIK000${SNOW}.json`)
        return { json: S.submissions(SNOW, "Snowflake Inc.", ["SNOW"], filingRows) }
      if (r.path === `/api/xbrl/companyfacts/CIK000${SNOW}.json`) return { json: S.snowflakeCompanyFacts }
      return notFound
    }
    return { days, filingRows, overrides, latestFeed, route }
  }

  const setUp = (url: string, perSecond?: number) => {
    const equity = makeMemoryEquityStore()
    const market = makeMemoryMarketStore()
    const feed = makeSecFeed(
      equity,
      {
        dataBaseUrl: url,
        archivesBaseUrl: url,
        userAgent: UA,
        ciks: [],
        thirteenFFilers: [],
        timeoutMs: 10_000,
        documentLookbackDays: 400
      },
      makeSecLimiter(perSecond)
    )
    const follower = makeDailyIndexFollower(feed, equity, { archivesBaseUrl: url })
    const run = dailyIndexRun({ market, follower })
    return { equity, market, follower, run, latest: latestFilingsRun({ market, follower }) }
  }

  const NOW = Date.parse("2026-11-24T15:00:00Z")

  /** Calls an equity operation through the plane seam, the plane reading the watermark like live mode's. */
  const call = (
    equity: ReturnType<typeof makeMemoryEquityStore>,
    market: ReturnType<typeof makeMemoryMarketStore>,
    name: string,
    params: ReadonlyArray<readonly [string, unknown]>
  ) =>
    Effect.gen(function* () {
      const op = operation(name)
      if (op === undefined) throw new Error(name)
      const plane = yield* Equity.makeEquityPlane({
        source: "sec",
        directoryCacheMs: 0,
        filingsIndexedThrough: Effect.map(market.status, dailyIndexThrough)
      }).pipe(Effect.provideService(Equity.EquityStore, equity))
      const handler = planeHandlers([plane]).get(name)
      const decoded = decodeParams(op, params)
      if (handler === undefined || isApiError(decoded)) throw new Error(`cannot call ${name}`)
      const input: HandlerInput = {
        op,
        params: decoded,
        principal: { _tag: "Anonymous", client: "test", rateLimitPerMinute: 60 },
        rate: { limit: 60, remaining: 59, resetAtMs: NOW, allowed: true },
        nowMs: NOW
      }
      const out = yield* handler(input)
      if (out._tag !== "Json") throw new Error("not json")
      return (out.body as { data: any }).data
    })

  it.effect("a new filing in the daily feed is picked up and shows in `events`; unfollowed forms are not fetched", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      yield* pumpClock()
      const edgar = makeEdgar()
      const server = yield* fakeServer(edgar.route)
      const { equity, market, run } = setUp(server.url)
      edgar.days.set(
        "2026-11-20",
        formIndexText("2026-11-20", [
          row("10-Q", Q_DAY1),
          row("4", F4_DAY1, OWNER, "Scarpelli Michael"),
          row("4", F4_DAY1),
          row("S-1", "0009999999-26-000001", "9999999", "Someone Else Corp")
        ])
      )
      edgar.filingRows.push(
        {
          accession: F4_DAY1,
          filed: "2026-11-20",
          accepted: "2026-11-20T21:04:00.000Z",
          form: "4",
          primaryDocument: "xslF345X05/wf-form4_167114.xml"
        },
        {
          accession: Q_DAY1,
          filed: "2026-11-20",
          accepted: "2026-11-20T21:00:00.000Z",
          form: "10-Q",
          primaryDocument: "snow-20261031.htm",
          isXbrl: 1
        }
      )

      // First start (no watermark): the newest published day.
      yield* run
      assert.strictEqual(dailyIndexThrough(yield* market.status), "2026-11-20")
      const [report] = yield* equity.ownershipReports(SNOW)
      assert.strictEqual(report?.accession, F4_DAY1)
      assert.strictEqual(report?.issuerName, "Snowflake Inc.")
      assert.isTrue((yield* equity.filings(SNOW)).some((f) => f.accession === Q_DAY1))
      assert.strictEqual((yield* equity.facts(SNOW))[0]?.value, "320331133")
      const paths = server.requests.map((q) => q.path)
      assert.strictEqual(
        paths.filter((p) => p.includes(F4_DAY1.replaceAll("-", ""))).length,
        2,
        "Form 4 fetched once (deduped by accession)"
      )
      assert.isFalse(
        paths.some((p) => p.includes("9999999")),
        "an S-1 is not followed"
      )
      assert.isTrue(server.requests.every((q) => q.headers["user-agent"] === UA))

      // The next business day is published with an 8-K: picked up, and it shows in `events`.
      edgar.days.set("2026-11-23", formIndexText("2026-11-23", [row("8-K", K_DAY2)]))
      edgar.filingRows.unshift({
        accession: K_DAY2,
        filed: "2026-11-23",
        accepted: "2026-11-23T13:30:00.000Z",
        form: "8-K",
        primaryDocument: "snow-8k.htm"
      })
      yield* run
      assert.strictEqual(dailyIndexThrough(yield* market.status), "2026-11-23")
      const events = yield* call(equity, market, "events", [["id", `eq:${SNOW}:SNOW`]])
      const filing = events.events.find((e: any) => e.accession === K_DAY2)
      assert.strictEqual(filing?.type, "filings")
      assert.strictEqual(filing?.form, "8-K")
      const read = yield* call(equity, market, "read", [["id", `eq:${SNOW}:SNOW`]])
      assert.strictEqual(read.filings_indexed_through, "2026-11-23")
    }).pipe(Effect.scoped)
  )

  it.effect(
    "a 503 mid-run fails the run (shown failing in the status); the retry completes it without refetching",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        yield* pumpClock()
        const edgar = makeEdgar()
        const server = yield* fakeServer(edgar.route)
        const { market, run } = setUp(server.url)
        yield* recordSuccess(market, SEC_DAILY_INDEX, { newestMs: dailyIndexNewestMs("2026-11-19") })
        edgar.days.set("2026-11-20", formIndexText("2026-11-20", [row("4", F4_DAY1)]))
        edgar.days.set("2026-11-23", formIndexText("2026-11-23", [row("8-K", K_DAY2)]))
        edgar.filingRows.push({
          accession: K_DAY2,
          filed: "2026-11-23",
          accepted: "2026-11-23T13:30:00.000Z",
          form: "8-K",
          primaryDocument: "snow-8k.htm"
        })
        // EDGAR is briefly unavailable for the second day's index.
        let unavailable = 1
        const day2 = "/Archives/edgar/daily-index/2026/QTR4/form.20261123.idx"
        edgar.overrides.set(day2, () =>
          unavailable-- > 0
            ? {
                status: 503,
                text: "<html><title>SEC.gov | File Unavailable</title></html>",
                headers: { "Retry-After": "30" }
              }
            : { text: edgar.days.get("2026-11-23") as string }
        )
        // The job: the run, retried with the backoff (honouring Retry-After) until it succeeds.
        const job = yield* Effect.forkChild(retriedRun(market, SEC_DAILY_INDEX, run, SEC_DAILY_INDEX.cadenceMs))
        const statusNow = Effect.map(market.status, (all) => all.find((s) => s.component === "dailyIndex"))
        // While it waits: failing in the source status with the 503, and the first day (completed before the
        // 503) already under the watermark, no further.
        assert.isTrue(yield* eventually(() => Effect.map(statusNow, (s) => s?.failing === true)))
        assert.include((yield* statusNow)?.lastError ?? "", "503")
        assert.strictEqual(dailyIndexThrough(yield* market.status), "2026-11-20")
        const afterFailure = server.requests.length
        yield* Fiber.join(job)
        assert.strictEqual(dailyIndexThrough(yield* market.status), "2026-11-23")
        assert.isFalse((yield* statusNow)?.failing ?? true)
        const retried = server.requests.slice(afterFailure).map((q) => q.path)
        assert.isFalse(
          retried.some((p) => p.includes(F4_DAY1.replaceAll("-", ""))),
          "day one is not fetched again"
        )
        assert.include(retried, day2)
      }).pipe(Effect.scoped)
  )

  it.effect("the watermark does not pass a day with a failed fetch, also when the company's filings moved on", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      yield* pumpClock()
      const edgar = makeEdgar()
      const server = yield* fakeServer(edgar.route)
      const { equity, market, run } = setUp(server.url)
      yield* recordSuccess(market, SEC_DAILY_INDEX, { newestMs: dailyIndexNewestMs("2026-11-20") })
      edgar.filingRows.push({
        accession: K_DAY2,
        filed: "2026-11-23",
        accepted: "2026-11-23T13:30:00.000Z",
        form: "8-K",
        primaryDocument: "snow-8k.htm"
      })
      edgar.days.set("2026-11-23", formIndexText("2026-11-23", [row("8-K", K_DAY2), row("4", F4_DAY2)]))
      edgar.days.set("2026-11-24", formIndexText("2026-11-24", []))
      // The day's Form 4 is not (yet) in its folder: EDGAR answers S3's 403 AccessDenied.
      const missing = `/Archives/edgar/data/${SNOW}/${F4_DAY2.replaceAll("-", "")}/index.json`
      edgar.overrides.set(missing, () => ({ status: 403, text: accessDenied }))
      const e = yield* Effect.flip(run)
      assert.strictEqual(e.status, 403)
      // The 8-K went in (the company was refreshed), but the day is not complete: the watermark stays.
      assert.isTrue((yield* equity.filings(SNOW)).some((f) => f.accession === K_DAY2))
      assert.strictEqual(dailyIndexThrough(yield* market.status), "2026-11-20")
      const read = yield* call(equity, market, "read", [["id", `eq:${SNOW}:SNOW`]])
      assert.strictEqual(read.filings_indexed_through, "2026-11-20", "not the 8-K's date")
      assert.isFalse(
        server.requests.some((q) => q.path.includes("form.20261124")),
        "no day after the failed one is read"
      )

      // A document still missing after MISSING_STRIKES runs is given up as unreadable (named in the status).
      for (let i = 1; i < MISSING_STRIKES - 1; i++) yield* Effect.flip(run)
      yield* run
      assert.strictEqual(dailyIndexThrough(yield* market.status), "2026-11-24")
      const status = (yield* market.status).find((s) => s.component === "dailyIndex")
      assert.include(status?.detail ?? "", F4_DAY2)
    }).pipe(Effect.scoped)
  )

  it.effect(
    "the latest-filings feed: a Form 4 shows in `events` minutes after acceptance; the night's index does not fetch it again",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(NOW)
        yield* pumpClock()
        const edgar = makeEdgar()
        const server = yield* fakeServer(edgar.route)
        const { equity, market, run, latest } = setUp(server.url)
        yield* recordSuccess(market, SEC_DAILY_INDEX, { newestMs: dailyIndexNewestMs("2026-11-23") })
        edgar.filingRows.push({
          accession: F4_DAY1,
          filed: "2026-11-24",
          accepted: "2026-11-24T14:04:00.000Z",
          form: "4",
          primaryDocument: "xslF345X05/wf-form4_167114.xml"
        })
        edgar.latestFeed.text = atomText([
          {
            form: "4",
            name: "Scarpelli Michael",
            cik: OWNER,
            role: "Reporting",
            accession: F4_DAY1,
            filed: "2026-11-24"
          },
          { form: "4", name: "Snowflake Inc.", cik: SNOW, role: "Issuer", accession: F4_DAY1, filed: "2026-11-24" },
          {
            form: "S-1",
            name: "Someone Else Corp",
            cik: "9999999",
            role: "Filer",
            accession: "0009999999-26-000001",
            filed: "2026-11-24"
          }
        ])
        yield* latest
        const events = yield* call(equity, market, "events", [["id", `eq:${SNOW}:SNOW`]])
        assert.isTrue(
          events.events.some((e: any) => e.type === "insider"),
          "the Form 4's transactions"
        )
        assert.isTrue(events.events.some((e: any) => e.type === "filings" && e.accession === F4_DAY1))
        const status = (yield* market.status).find((s) => s.component === "latestFilings")
        assert.deepStrictEqual([status?.failing, status?.newestMs], [false, NOW])
        // The feed does not move the watermark: only a processed day does.
        assert.strictEqual(dailyIndexThrough(yield* market.status), "2026-11-23")
        const document = (q: FakeRequest) => q.path.includes(F4_DAY1.replaceAll("-", ""))
        assert.strictEqual(server.requests.filter(document).length, 2)
        // A second poll of the same feed fetches nothing but the feed.
        const before = server.requests.length
        yield* latest
        assert.deepStrictEqual(
          server.requests.slice(before).map((q) => q.path),
          ["/cgi-bin/browse-edgar"]
        )
        // That night's index lists it: the company is refreshed, the document not fetched again.
        edgar.days.set("2026-11-24", formIndexText("2026-11-24", [row("4", F4_DAY1)]))
        yield* run
        assert.strictEqual(dailyIndexThrough(yield* market.status), "2026-11-24")
        assert.strictEqual(server.requests.filter(document).length, 2)
      }).pipe(Effect.scoped)
  )

  it.effect("an issuer that never filed XBRL (companyfacts 404) completes its day, with no facts", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      yield* pumpClock()
      const edgar = makeEdgar()
      const server = yield* fakeServer(edgar.route)
      const { equity, market, run } = setUp(server.url)
      edgar.filingRows.push({
        accession: F4_DAY1,
        filed: "2026-11-20",
        accepted: "2026-11-20T21:04:00.000Z",
        form: "4",
        primaryDocument: "xslF345X05/wf-form4_167114.xml"
      })
      edgar.overrides.set(`/api/xbrl/companyfacts/CIK000${SNOW}.json`, () => ({
        status: 404,
        text: "<Error><Code>NoSuchKey</Code></Error>"
      }))
      edgar.days.set("2026-11-20", formIndexText("2026-11-20", [row("4", F4_DAY1)]))
      yield* run
      assert.strictEqual(dailyIndexThrough(yield* market.status), "2026-11-20")
      assert.lengthOf(yield* equity.facts(SNOW), 0)
      assert.lengthOf(yield* equity.ownershipReports(SNOW), 1)
    }).pipe(Effect.scoped)
  )

  it.live("at the server, never more than 10 requests in any second, also when some are delayed on the way", () =>
    Effect.gen(function* () {
      const edgar = makeEdgar()
      const arrivals: Array<number> = []
      // The 4th and 18th requests are held 60 ms "on the network" before the server counts and answers them.
      let n = 0
      const server = yield* Effect.acquireRelease(
        Effect.promise(() =>
          listenFake((request, res) => {
            const delay = n++ === 3 || n === 18 ? 60 : 0
            setTimeout(() => {
              arrivals.push(performance.now())
              sendReply(res, edgar.route(request))
            }, delay)
          })
        ),
        (s) => Effect.promise(() => s.close())
      )
      const { equity, run } = setUp(server.url)
      const accessions = Array.from({ length: 12 }, (_, i) => `0001640147-26-0004${String(i).padStart(2, "0")}`)
      // A run on the real clock without a watermark reads the newest day of the last ten: a day two days ago.
      const day = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10)
      edgar.days.set(
        day,
        formIndexText(
          day,
          accessions.map((a) => row("4", a))
        )
      )
      yield* run
      assert.lengthOf(yield* equity.ownershipReports(SNOW), 12)
      assert.isAtLeast(arrivals.length, 28)
      let most = 0
      for (let i = 0; i < arrivals.length; i++) {
        const inWindow = arrivals.filter(
          (t) => t >= (arrivals[i] as number) && t < (arrivals[i] as number) + 1000
        ).length
        most = Math.max(most, inWindow)
      }
      assert.isAtMost(most, 10, `requests in the busiest second: ${most}`)
    }).pipe(Effect.scoped)
  )
})
