/** `holders`: the institutional holders of a company from the 13F reports on file, with their share of the float. */
import { Effect } from "effect"
import { encodeCursor } from "../../Cursor.ts"
import { apiError } from "../../Errors.ts"
import type { Handler } from "../../Pipeline.ts"
import { holdersOf } from "../Holders.ts"
import { sharesOutstanding } from "../Valuation.ts"
import { filingsFreshness } from "./Freshness.ts"
import { answer, type CallTarget, call, cursorPosition } from "./Operation.ts"
import { type EquityState, type Unavailable, withUnavailable } from "./State.ts"

const holdersBody = Effect.fnUntraced(function* (st: EquityState, t: CallTarget) {
  const { input, nowMs } = t
  const limit = typeof input.params.limit === "number" ? input.params.limit : 25
  const after = yield* cursorPosition(input)
  const offset = after === undefined ? 0 : Number(after)
  if (!Number.isSafeInteger(offset) || offset < 0) {
    return yield* Effect.fail(
      apiError("invalid_cursor", "`cursor` is not a cursor this service issued", { param: "cursor" })
    )
  }
  const held = yield* st.store.holdings(t.cik)
  const shares = sharesOutstanding(
    yield* st.store.facts(t.cik, [
      "EntityCommonStockSharesOutstanding",
      "WeightedAverageNumberOfDilutedSharesOutstanding"
    ])
  )
  const out = holdersOf(held.reports, held.holdings, shares?.shares ?? null)
  const page = out.rows.slice(offset, offset + limit)
  const unavailable: Unavailable = {}
  if (out.rows.length === 0)
    unavailable.holders = { reason: "no_data", detail: "no 13F report on file lists this company" }
  if (shares === null && out.rows.length > 0) {
    unavailable.pct_of_shares_outstanding = { reason: "no_data", detail: "no shares outstanding on file" }
  }
  const latest = yield* st.latestFilings(t.cik, t.coverage)
  const lastReportMs = out.rows.reduce((m, r) => Math.max(m, Date.parse(`${r.filedAt}T00:00:00Z`)), 0)
  const freshness = filingsFreshness(
    {
      acceptedMs: lastReportMs > 0 ? lastReportMs : latest.acceptedMs,
      lastPeriodicFiled: latest.lastPeriodicFiled
    },
    nowMs,
    "stream"
  )
  return answer(
    input,
    withUnavailable(
      {
        asset_id: t.assetId,
        ...freshness,
        report_period: out.reportPeriod,
        holders: page.map((h) => ({
          filer_cik: h.filerCik,
          name: h.name,
          shares: h.shares,
          value_usd: h.valueUsd,
          pct_of_shares_outstanding: h.pctOfSharesOutstanding,
          change_shares: h.changeShares,
          filed_at: h.filedAt,
          report_period: h.reportPeriod,
          form: h.form,
          accession: h.accession
        })),
        ...(shares === null ? {} : { shares_outstanding: shares.shares, shares_outstanding_as_of: shares.asOf }),
        next_cursor:
          offset + limit < out.rows.length ? encodeCursor(input.op.name, input.params, String(offset + limit)) : null
      },
      unavailable
    )
  )
})

export const makeHolders = (st: EquityState): Handler => call(st, holdersBody)
