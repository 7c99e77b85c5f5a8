/**
 * The equity directory (`resolve`, `coverage`) and `lookup`: every ticker of every issuer the store knows is an
 * asset `eq:<cik>:<ticker>` (tier `full` when that ticker has daily prices, `equity` filings only), the company's
 * other tickers, former names and CIK among its aliases.
 */
import { Clock, Effect, Ref } from "effect"
import type { DirectoryEntry } from "../../Planes.ts"
import type { CompanyCoverage } from "../EquityStore.ts"
import type { Company } from "../Model.ts"
import { DAY_MS, priceFreshness } from "./Freshness.ts"
import { type EquityState, parseEquityId } from "./State.ts"

/** The newest bar of one ticker (each ticker is its own series), or undefined when it has none. */
const lastBarOf = (c: CompanyCoverage, ticker: string): number | undefined =>
  c.tickerBars.find((t) => t.ticker === ticker)?.lastBarMs
const tierOf = (c: CompanyCoverage, ticker: string) =>
  lastBarOf(c, ticker) !== undefined ? ("full" as const) : ("equity" as const)
const aliveOf = (c: CompanyCoverage, ticker: string, nowMs: number): boolean => {
  const lastBarMs = lastBarOf(c, ticker)
  return lastBarMs !== undefined
    ? priceFreshness(lastBarMs, nowMs).status !== "stale"
    : c.lastFiledAt !== null && nowMs - Date.parse(`${c.lastFiledAt}T00:00:00Z`) <= 400 * DAY_MS
}

const entryOf = (company: Company, coverage: CompanyCoverage, ticker: string, nowMs: number): DirectoryEntry => ({
  asset_id: `eq:${company.cik}:${ticker}`,
  plane: "equity",
  symbol: ticker,
  name: company.name,
  tier: tierOf(coverage, ticker),
  networks: [],
  aliases: [
    ...company.tickers.filter((t) => t !== ticker),
    ...company.formerNames,
    company.cik,
    company.cik.padStart(10, "0")
  ],
  alive: aliveOf(coverage, ticker, nowMs)
})

/** One asset of the plane, or undefined when the store does not know its company or ticker. */
const lookupBody = Effect.fnUntraced(function* (st: EquityState, assetId: string) {
  const id = parseEquityId(assetId)
  if (id === undefined) return undefined
  const loaded = yield* st.load(id.cik)
  if (loaded === undefined || !loaded.company.tickers.includes(id.ticker)) return undefined
  const nowMs = yield* Clock.currentTimeMillis
  return entryOf(loaded.company, loaded.coverage, id.ticker, nowMs)
})

/** The directory and `lookup` over a plane's state; the directory keeps its snapshot for `directoryCacheMs`. */
export const makeDirectory = (st: EquityState) =>
  Effect.gen(function* () {
    const { store, options } = st
    // The directory's snapshot of the issuers and what is held for them, reused for `directoryCacheMs`: every
    // company of the ticker list is an asset (about 10,000), and `resolve` and `coverage` read the directory on
    // every call. The store lists them from counts per table, never from a company's rows. `alive` is
    // recomputed from the snapshot on each read.
    const cacheMs = options.directoryCacheMs ?? 60_000
    // The entries are kept with the snapshot and an entry object is replaced only when its `alive` changes:
    // `resolve` keeps its normalized text per entry object, so about 10,000 fresh objects per call would have it
    // normalize every name and alias again on every query.
    const snapshot = yield* Ref.make<
      | {
          readonly atMs: number
          readonly entries: ReadonlyArray<DirectoryEntry>
          /** Each entry's company coverage, aligned with `entries`. */
          readonly coverages: ReadonlyArray<CompanyCoverage>
        }
      | undefined
    >(undefined)

    const directory = Effect.gen(function* () {
      const nowMs = yield* Clock.currentTimeMillis
      const snap = yield* Ref.get(snapshot)
      if (snap === undefined || nowMs - snap.atMs >= cacheMs || nowMs < snap.atMs) {
        const entries: Array<DirectoryEntry> = []
        const coverages: Array<CompanyCoverage> = []
        // Every ticker is an asset (`eq:<cik>:<ticker>`), the company's other tickers among its aliases.
        for (const { company, coverage } of yield* store.issuers) {
          for (const ticker of new Set(company.tickers)) {
            if (parseEquityId(`eq:${company.cik}:${ticker}`) === undefined) continue
            entries.push(entryOf(company, coverage, ticker, nowMs))
            coverages.push(coverage)
          }
        }
        yield* Ref.set(snapshot, { atMs: nowMs, entries, coverages })
        return entries
      }
      let changed = false
      const entries = snap.entries.map((e, i) => {
        const alive = aliveOf(snap.coverages[i] as CompanyCoverage, e.symbol, nowMs)
        if (alive === e.alive) return e
        changed = true
        return { ...e, alive }
      })
      if (changed) yield* Ref.set(snapshot, { ...snap, entries })
      return entries
    })

    const lookup = (assetId: string) => lookupBody(st, assetId)

    return { directory, lookup }
  })
