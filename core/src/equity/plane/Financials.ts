/**
 * `financials`: the income, balance and cash-flow statements by period, as filed (or as known on a day with
 * `as_known_on`), cached per company and parameters while no new fact is filed.
 */
import { Effect } from "effect"
import type { Handler } from "../../Pipeline.ts"
import { FactBook, financialsTable, type PeriodKind, type Statement } from "../Statements.ts"
import { filingsFreshness } from "./Freshness.ts"
import { answer, type CallTarget, call } from "./Operation.ts"
import { type EquityState, FACT_CONCEPTS, type Unavailable, withUnavailable } from "./State.ts"

/** The version stamp of a statement table: the facts' count and newest filing date. */
const factsVersion = (facts: ReadonlyArray<{ readonly filed: string }>): string => {
  let newest = ""
  for (const f of facts) if (f.filed > newest) newest = f.filed
  return `${facts.length}:${newest}`
}

const financialsBody = Effect.fnUntraced(function* (st: EquityState, t: CallTarget) {
  const { input, nowMs } = t
  // `as_known_on` (beyond the contract, once the registry declares it): the statements as known that day,
  // before later restatements.
  const asKnownOn = typeof input.params.as_known_on === "string" ? input.params.as_known_on : undefined
  const facts = yield* st.store.facts(t.cik, FACT_CONCEPTS)
  const statements = (input.params.statements ?? ["income", "balance", "cash_flow"]) as ReadonlyArray<Statement>
  const kind = (input.params.period_kind ?? "annual") as PeriodKind
  const count = typeof input.params.periods === "number" ? input.params.periods : 4
  const withBasis = input.params.basis_concepts === true
  const key = `${t.cik}|${asKnownOn ?? ""}|${statements.join(",")}|${kind}|${count}`
  const version = factsVersion(facts)
  let cached = st.tables.get(key)
  if (cached?.version !== version) {
    const book = new FactBook(facts, asKnownOn === undefined ? {} : { asKnownOn })
    cached = { version, table: financialsTable(book, { statements, kind, count }) }
    if (st.tables.size >= 2_000) st.tables.clear()
    st.tables.set(key, cached)
  }
  const table = cached.table
  const values: Record<string, object> = {}
  for (const line of table.lines) {
    values[line.key] = {
      unit: line.unit,
      by_period: line.cells.map((c) => c?.value ?? null),
      ...(withBasis ? { basis_concepts: line.basisConcepts } : {})
    }
  }
  const freshness = filingsFreshness(yield* st.latestFilings(t.cik, t.coverage), nowMs, "periodic")
  const unavailable: Unavailable =
    table.periods.length === 0
      ? {
          financials: {
            reason: "no_data",
            detail:
              t.coverage.facts === 0
                ? "no XBRL facts of this company are on file (its companyfacts is not ingested yet)"
                : `no ${kind} periods filed for ${statements.join(", ")}`
          }
        }
      : {}
  return answer(
    input,
    withUnavailable(
      {
        asset_id: t.assetId,
        ...freshness,
        ...(asKnownOn === undefined ? {} : { as_known_on: asKnownOn }),
        periods: table.periods.map((p) => ({
          id: p.id,
          form: p.form,
          accession: p.accession,
          filed_at: p.filedAt,
          restated: p.restated,
          start: p.start,
          end: p.end,
          derived: p.derived
        })),
        values
      },
      unavailable
    )
  )
})

export const makeFinancials = (st: EquityState): Handler => call(st, financialsBody)
