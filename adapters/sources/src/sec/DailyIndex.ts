/**
 * EDGAR's daily indexes and folder listings.
 *
 * - The daily **form** index (`Archives/edgar/daily-index/<year>/QTR<q>/form.<YYYYMMDD>.idx`): a few header
 *   lines, a column header `Form Type   Company Name   CIK   Date Filed  File Name`, a `-----` rule, then one
 *   fixed-width row per filing and filer (a Form 4 is listed under its issuer and under each reporting owner, with
 *   the same file name). A day's index also lists filings disseminated that day with an earlier `Date Filed`
 *   (the recorded 2020-03-18 index has 144 of 4,084 rows from earlier dates): the date is read per row. Form types and company names contain spaces, so the form is read by the header's column
 *   and the CIK, date and file name from the end of the row. The accession is the file name's stem.
 * - A folder listing (`.../index.json`, for a filing's folder or a daily-index quarter):
 *   `{"directory": {"item": [{"name", ...}]}}`; only the names are read.
 */
import { Result } from "effect"
import { SecFormatError } from "./SecFormatError.ts"

export interface DailyIndexEntry {
  readonly form: string
  readonly companyName: string
  /** Without leading zeros. */
  readonly cik: string
  /** `YYYY-MM-DD`. */
  readonly dateFiled: string
  /** `edgar/data/<cik>/<accession>.txt`. */
  readonly fileName: string
  readonly accession: string
}

const ROW_TAIL = /\s(\d{1,10})\s+(\d{8})\s+(edgar\/data\/\d+\/(\d{10}-\d{2}-\d{6})\.txt)\s*$/

/** Parses a daily form index (`form.YYYYMMDD.idx`); a row that is not a filing row fails the whole file. */
export const parseDailyFormIndex = (text: string): Result.Result<ReadonlyArray<DailyIndexEntry>, SecFormatError> => {
  const fail = (message: string) => Result.fail(new SecFormatError({ format: "daily_form_index", message }))
  const lines = text.split(/\r?\n/)
  const headerAt = lines.findIndex((l) => l.startsWith("Form Type") && l.includes("Company Name"))
  if (headerAt < 0) return fail("no `Form Type  Company Name ...` column header")
  const header = lines[headerAt] as string
  const nameCol = header.indexOf("Company Name")
  if (!/^-{10,}\s*$/.test(lines[headerAt + 1] ?? ""))
    return fail(`line ${headerAt + 2}: no \`-----\` rule under the header`)
  const out: Array<DailyIndexEntry> = []
  for (let i = headerAt + 2; i < lines.length; i++) {
    const line = lines[i] as string
    if (line.trim() === "") continue
    const m = ROW_TAIL.exec(line)
    const form = line.slice(0, nameCol).trim()
    if (m === null || form === "" || m.index < nameCol)
      return fail(`line ${i + 1}: not a filing row: ${JSON.stringify(line.slice(0, 120))}`)
    const [, cik, ymd, fileName, accession] = m as unknown as [string, string, string, string, string]
    out.push({
      form,
      companyName: line.slice(nameCol, m.index).trim(),
      cik: String(Number(cik)),
      dateFiled: `${ymd.slice(0, 4)}-${ymd.slice(4, 6)}-${ymd.slice(6, 8)}`,
      fileName,
      accession
    })
  }
  return Result.succeed(out)
}

/** The names in a folder listing (`index.json`). */
export const parseDirectoryListing = (text: string): Result.Result<ReadonlyArray<string>, SecFormatError> => {
  try {
    const items = (JSON.parse(text) as { directory?: { item?: unknown } }).directory?.item
    if (!Array.isArray(items)) throw new Error("no directory.item array")
    return Result.succeed(
      items.map((i) => {
        const name = (i as { name?: unknown } | null)?.name
        if (typeof name !== "string") throw new Error("an item without a name")
        return name
      })
    )
  } catch (e) {
    return Result.fail(
      new SecFormatError({ format: "directory_listing", message: e instanceof Error ? e.message : String(e) })
    )
  }
}

/** The days (`YYYY-MM-DD`, ascending) whose form index a daily-index quarter listing names. */
export const dailyIndexDays = (names: ReadonlyArray<string>): ReadonlyArray<string> =>
  [
    ...new Set(
      names.flatMap((n) => {
        const m = /^form\.(\d{4})(\d{2})(\d{2})\.idx$/.exec(n)
        return m === null ? [] : [`${m[1]}-${m[2]}-${m[3]}`]
      })
    )
  ].sort()

const ENTRY = /<entry>([\s\S]*?)<\/entry>/g

/**
 * The latest-filings Atom feed (`cgi-bin/browse-edgar?action=getcurrent&output=atom`, served as ISO-8859-1): one
 * `<entry>` per filing and role (`<title>4 - Name (0001234567) (Issuer)</title>`; a Form 4 comes once as its
 * issuer's and once per reporting owner), the form in `<category term>`, the accession in `<id>`
 * (`...accession-number=0001234567-25-000004`) and the filing date in the summary (`Filed: YYYY-MM-DD`). Read as
 * the daily index's rows (`fileName` empty): form, CIK, date and accession are ASCII; names outside ASCII may be
 * garbled by the ISO-8859-1 encoding and are informative only. An entry missing any of them fails the feed.
 */
export const parseLatestFilingsAtom = (text: string): Result.Result<ReadonlyArray<DailyIndexEntry>, SecFormatError> => {
  const fail = (message: string) => Result.fail(new SecFormatError({ format: "latest_filings_feed", message }))
  if (!/<feed[\s>]/.test(text)) return fail("not an Atom feed (no <feed>)")
  const out: Array<DailyIndexEntry> = []
  let n = 0
  for (const m of text.matchAll(ENTRY)) {
    n++
    const body = m[1] as string
    const title = /<title>([\s\S]*?)<\/title>/.exec(body)?.[1]?.trim() ?? ""
    const who = /^(.*?) - (.*) \((\d{1,10})\) \(([^)]*)\)$/.exec(title)
    const form = /<category[^>]*\bterm="([^"]+)"/.exec(body)?.[1]
    const accession = /accession-number=(\d{10}-\d{2}-\d{6})/.exec(body)?.[1]
    const filed = /Filed:(?:&lt;\/b&gt;|<\/b>)?\s*(\d{4}-\d{2}-\d{2})/.exec(body)?.[1]
    if (who === null || form === undefined || accession === undefined || filed === undefined)
      return fail(`entry ${n}: no form, CIK, accession or filing date in ${JSON.stringify(title.slice(0, 120))}`)
    out.push({
      form,
      companyName: who[2] as string,
      cik: String(Number(who[3])),
      dateFiled: filed,
      fileName: "",
      accession
    })
  }
  return Result.succeed(out)
}
