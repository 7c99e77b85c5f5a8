/**
 * `series`: daily bars (or weekly, monthly aggregates) of a company over a range, paged backwards by a cursor,
 * or their summary (return, range, drawdown, realized volatility).
 */
import { Effect } from "effect"
import { encodeCursor } from "../../Cursor.ts"
import { apiError } from "../../Errors.ts"
import type { Handler } from "../../Pipeline.ts"
import type { DailyBar } from "../EquityStore.ts"
import { newYorkDate } from "../MarketHours.ts"
import { dayOf } from "../Statements.ts"
import { closedBarsThroughMs, DAY_MS, filingsFreshness, iso, priceFreshness } from "./Freshness.ts"
import { round } from "./Measures.ts"
import { answer, type CallTarget, call, cursorPosition } from "./Operation.ts"
import { type EquityState, withUnavailable } from "./State.ts"

/** Bars aggregated to weeks (Monday start, New York dates) or calendar months. */
export const aggregateDaily = (bars: ReadonlyArray<DailyBar>, interval: "1d" | "1w" | "1mo"): Array<DailyBar> => {
  if (interval === "1d") return [...bars]
  const out: Array<DailyBar> = []
  let key = ""
  for (const b of bars) {
    const date = newYorkDate(b.tMs)
    const day = dayOf(date)
    const k = interval === "1mo" ? date.slice(0, 7) : String(day - ((day + 3) % 7))
    const cur = out[out.length - 1]
    if (k !== key || cur === undefined) {
      out.push({ ...b })
      key = k
      continue
    }
    out[out.length - 1] = {
      tMs: cur.tMs,
      o: cur.o,
      h: Math.max(cur.h, b.h),
      l: Math.min(cur.l, b.l),
      c: b.c,
      v: cur.v + b.v
    }
  }
  return out
}

/** Start of a `series` range (undefined for `max`). */
export const rangeStartMs = (range: string, nowMs: number): number | undefined => {
  const days: Record<string, number> = { "1w": 7, "1mo": 31, "3mo": 92, "6mo": 183, "1y": 365, "5y": 1826 }
  if (range === "max") return undefined
  if (range === "ytd") return Date.parse(`${newYorkDate(nowMs).slice(0, 4)}-01-01T00:00:00Z`)
  return nowMs - (days[range] ?? 365) * DAY_MS
}

/** Periods per year of an interval, for annualizing volatility. */
const PER_YEAR: Readonly<Record<string, number>> = { "1d": 252, "1w": 52, "1mo": 12 }

/**
 * The summary view: first and last close, return, high, low, maximum drawdown (peak close to later trough
 * close), realized volatility (sample standard deviation of log returns between bars, annualized) and count.
 */
export const summarize = (bars: ReadonlyArray<DailyBar>, interval: string) => {
  const first = bars[0]
  const last = bars[bars.length - 1]
  if (first === undefined || last === undefined) return undefined
  let peak = first.c
  let drawdown = 0
  for (const b of bars) {
    peak = Math.max(peak, b.c)
    drawdown = Math.max(drawdown, (peak - b.c) / peak)
  }
  const logs = bars.slice(1).map((b, i) => Math.log(b.c / (bars[i] as DailyBar).c))
  const mean = logs.reduce((s, x) => s + x, 0) / Math.max(1, logs.length)
  const variance = logs.length < 2 ? Number.NaN : logs.reduce((s, x) => s + (x - mean) ** 2, 0) / (logs.length - 1)
  const vol = Math.sqrt(variance) * Math.sqrt(PER_YEAR[interval] ?? 252) * 100
  return {
    from: iso(first.tMs),
    to: iso(last.tMs),
    first_close: first.c,
    last_close: last.c,
    return_pct: round((last.c / first.c - 1) * 100, 6),
    high: Math.max(...bars.map((b) => b.h)),
    low: Math.min(...bars.map((b) => b.l)),
    max_drawdown_pct: round(drawdown * 100, 6),
    realized_volatility_pct: Number.isFinite(vol) ? round(vol, 6) : null,
    bar_count: bars.length
  }
}

const seriesBody = Effect.fnUntraced(function* (st: EquityState, t: CallTarget) {
  const { input, nowMs } = t
  const view = input.params.view === "summary" ? "summary" : "bars"
  const range = typeof input.params.range === "string" ? input.params.range : "1y"
  const interval = typeof input.params.interval === "string" ? input.params.interval : "1d"
  const limit = typeof input.params.limit === "number" ? input.params.limit : 120
  const after = yield* cursorPosition(input)
  const fromMs = rangeStartMs(range, nowMs)
  const toMs = closedBarsThroughMs(nowMs)
  const all = yield* st.store.bars(t.cik, t.ticker, fromMs === undefined ? { toMs } : { fromMs, toMs })
  const last = all[all.length - 1]
  const freshness =
    last === undefined
      ? filingsFreshness(yield* st.latestFilings(t.cik, t.coverage), nowMs, "periodic")
      : priceFreshness(last.tMs, nowMs, st.options.dailyCloseDelayed === true)
  const base = { asset_id: t.assetId, ...freshness, interval, range }
  if (interval !== "1d" && interval !== "1w" && interval !== "1mo") {
    // An empty answer would serve nothing: refused \`not_covered\`, uncharged, like a not-covered \`id\`.
    return yield* Effect.fail(
      apiError("not_covered", `${t.assetId}: equity prices are daily bars; series serves interval 1d, 1w or 1mo`, {
        param: "interval"
      })
    )
  }
  const bars = aggregateDaily(all, interval)
  if (view === "summary") {
    const summary = summarize(bars, interval)
    return answer(
      input,
      summary === undefined
        ? {
            ...base,
            summary: {},
            unavailable: { summary: { reason: "no_data" as const, detail: "no bars in range" } }
          }
        : { ...base, summary }
    )
  }
  let end = bars.length
  if (after !== undefined) {
    const before = Number(after)
    if (!Number.isSafeInteger(before)) {
      return yield* Effect.fail(
        apiError("invalid_cursor", "`cursor` is not a cursor this service issued", { param: "cursor" })
      )
    }
    end = bars.findIndex((b) => b.tMs >= before)
    if (end < 0) end = bars.length
  }
  const page = bars.slice(Math.max(0, end - limit), end)
  const first = page[0]
  const more = first !== undefined && end - limit > 0
  return answer(
    input,
    withUnavailable(
      {
        ...base,
        bars: page.map((b) => ({ t: iso(b.tMs), o: b.o, h: b.h, l: b.l, c: b.c, v: b.v })),
        next_cursor: more ? encodeCursor(input.op.name, input.params, String(first.tMs)) : null
      },
      bars.length === 0 ? { bars: { reason: "no_data", detail: "no daily bars in range" } } : {}
    )
  )
})

export const makeSeries = (st: EquityState): Handler => call(st, seriesBody)
