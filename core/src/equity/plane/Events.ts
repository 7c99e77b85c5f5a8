/**
 * `events`: a company's filings, insider transactions (Form 4), dividends and splits, newest first, paged by a
 * cursor on the sort key; with insiders, the 90-day insider summary.
 */
import { Effect } from "effect"
import { encodeCursor } from "../../Cursor.ts"
import type { Handler } from "../../Pipeline.ts"
import { insiderSummary, insiderTrades } from "../Insider.ts"
import { newYorkDate } from "../MarketHours.ts"
import type { Fact, Filing } from "../Model.ts"
import { citedOf, FactBook, lineItem } from "../Statements.ts"
import { filingsFreshness } from "./Freshness.ts"
import { answer, type CallTarget, call, cursorPosition } from "./Operation.ts"
import { DIVIDEND_CONCEPTS, type EquityState, SPLIT_CONCEPTS } from "./State.ts"

interface EventRow {
  /** Sort key, newest first: acceptance time for filings, the event date (00:00 UTC) for the others. */
  readonly key: string
  /** Tie-breaker, unique within a company's events. */
  readonly uid: string
  readonly event: { readonly type: string; readonly date: string } & Record<string, unknown>
}

const compareDesc = (a: EventRow, b: EventRow): number =>
  a.key !== b.key ? (a.key < b.key ? 1 : -1) : a.uid === b.uid ? 0 : a.uid < b.uid ? 1 : -1

const splitPosition = (p: string): readonly [string, string] => {
  const i = p.indexOf("|")
  return i < 0 ? [p, ""] : [p.slice(0, i), p.slice(i + 1)]
}

const filingEvent = (f: Filing): EventRow => ({
  key: f.acceptedAt,
  uid: `filings:${f.accession}`,
  event: {
    type: "filings",
    date: f.filedAt,
    form: f.form,
    accession: f.accession,
    filed_at: f.filedAt,
    accepted_at: f.acceptedAt,
    url: f.url,
    report_date: f.reportDate,
    description: f.primaryDocDescription,
    items: f.items
  }
})

const insiderEvents = (reports: Parameters<typeof insiderTrades>[0]): Array<EventRow> =>
  insiderTrades(reports).map(({ report, transaction: t }, i) => {
    const owner = report.owners[0]
    const roles = report.owners.flatMap((o) => [
      ...(o.isDirector ? ["director"] : []),
      ...(o.isOfficer ? [o.officerTitle ?? "officer"] : []),
      ...(o.isTenPercentOwner ? ["10% owner"] : []),
      ...(o.isOther ? ["other"] : [])
    ])
    return {
      key: `${t.transactionDate}T00:00:00.000Z`,
      uid: `insider:${report.accession}:${String(report.transactions.indexOf(t)).padStart(4, "0")}:${i}`,
      event: {
        type: "insider",
        date: t.transactionDate,
        accession: report.accession,
        form: report.form,
        filed_at: report.filedAt,
        insider_cik: owner?.cik ?? null,
        insider_name: owner?.name ?? null,
        insider_roles: [...new Set(roles)],
        code: t.code,
        open_market: t.table === "non_derivative" && (t.code === "P" || t.code === "S"),
        acquired_disposed: t.acquiredDisposed,
        shares: t.shares,
        price_usd: t.pricePerShare,
        shares_owned_after: t.sharesOwnedAfter,
        direct_indirect: t.directIndirect,
        security_title: t.securityTitle,
        table: t.table
      }
    }
  })

/** The cited fact per period of the given facts (`citedOf`: the latest periodic report's, else the latest). */
const latestPerPeriod = (facts: ReadonlyArray<Fact>): Array<Fact> => {
  const by = new Map<string, Array<Fact>>()
  for (const f of facts) {
    const k = `${f.start ?? ""}|${f.end}`
    by.set(k, [...(by.get(k) ?? []), f])
  }
  return [...by.values()].map((xs) => citedOf(xs))
}

/**
 * Dividends declared per share by fiscal quarter (filed, or a fourth quarter derived as FY - nine months and
 * flagged), dated at the quarter's end.
 */
const dividendEvents = (book: FactBook): Array<EventRow> => {
  const line = lineItem("dividends_declared_per_share")
  const out: Array<EventRow> = []
  for (const q of book.periods("quarter")) {
    const cell = book.cell(line, q)
    if (cell === null) continue
    out.push({
      key: `${q.end}T00:00:00.000Z`,
      uid: `dividends:${q.end}`,
      event: {
        type: "dividends",
        date: q.end,
        period_start: q.start,
        period_end: q.end,
        per_share_usd: cell.value,
        concept: cell.concepts[0] ?? null,
        derived: cell.derived,
        form: cell.form,
        accession: cell.accession,
        filed_at: cell.filed
      }
    })
  }
  return out
}

/** Stock splits from the split-ratio facts, one per date. */
const splitEvents = (facts: ReadonlyArray<Fact>): Array<EventRow> => {
  const splits = facts.filter((f) => SPLIT_CONCEPTS.includes(f.concept))
  const byDate = new Map<string, Fact>()
  for (const f of latestPerPeriod(splits)) {
    const cur = byDate.get(f.end)
    if (cur === undefined || f.filed > cur.filed) byDate.set(f.end, f)
  }
  return [...byDate.values()].map((f) => ({
    key: `${f.end}T00:00:00.000Z`,
    uid: `splits:${f.end}`,
    event: {
      type: "splits",
      date: f.end,
      ratio: f.value,
      concept: f.concept,
      form: f.form,
      accession: f.accession,
      filed_at: f.filed
    }
  }))
}

const eventsBody = Effect.fnUntraced(function* (st: EquityState, t: CallTarget) {
  const { input, nowMs } = t
  const types = (input.params.types ?? ["filings", "insider", "dividends", "splits"]) as ReadonlyArray<string>
  const since = typeof input.params.since === "string" ? input.params.since : undefined
  const form = typeof input.params.form === "string" ? input.params.form.toUpperCase() : undefined
  const limit = typeof input.params.limit === "number" ? input.params.limit : 50
  const after = yield* cursorPosition(input)
  const latest = yield* st.latestFilings(t.cik, t.coverage)
  const all: Array<EventRow> = []
  if (types.includes("filings")) {
    for (const f of latest.filings) {
      if (form !== undefined && f.form.toUpperCase() !== form) continue
      all.push(filingEvent(f))
    }
  }
  const reports = types.includes("insider") ? yield* st.store.ownershipReports(t.cik) : []
  if (types.includes("insider")) all.push(...insiderEvents(reports))
  if (types.includes("dividends") || types.includes("splits")) {
    const facts = yield* st.store.facts(t.cik, [...DIVIDEND_CONCEPTS, ...SPLIT_CONCEPTS])
    if (types.includes("dividends")) all.push(...dividendEvents(new FactBook(facts)))
    if (types.includes("splits")) all.push(...splitEvents(facts))
  }
  const selected = all.filter((e) => since === undefined || e.event.date >= since).sort((a, b) => compareDesc(a, b))
  let start = 0
  if (after !== undefined) {
    const [key, uid] = splitPosition(after)
    start = selected.findIndex((e) => e.key < key || (e.key === key && e.uid < uid))
    if (start < 0) start = selected.length
  }
  const page = selected.slice(start, start + limit)
  const lastRow = page[page.length - 1]
  const more = start + limit < selected.length && lastRow !== undefined
  const summary = types.includes("insider") ? insiderSummary(reports, newYorkDate(nowMs)) : undefined
  return answer(input, {
    asset_id: t.assetId,
    ...filingsFreshness(latest, nowMs, "stream"),
    events: page.map((e) => e.event),
    ...(summary === undefined
      ? {}
      : {
          insider_summary_90d: {
            open_market_buys: summary.openMarketBuys,
            open_market_sales: summary.openMarketSales,
            net_shares: summary.netShares,
            unique_insiders: summary.uniqueInsiders,
            from: summary.from,
            through: summary.through
          }
        }),
    next_cursor: more ? encodeCursor(input.op.name, input.params, `${lastRow.key}|${lastRow.uid}`) : null
  })
})

export const makeEvents = (st: EquityState): Handler => call(st, eventsBody)
