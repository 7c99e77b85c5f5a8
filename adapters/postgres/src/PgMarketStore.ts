/**
 * The market store on PostgreSQL (server or PGlite), tables of `infra/migrations/2026-11-23T0100_market.ts`.
 * Series rows are keyed `(asset_id, venue, t_ms)`; writes go through `insertInChunks`, upserting on that key, so
 * re-ingesting a window is safe. Rows are mapped to the core's columnar series inside this adapter.
 *
 * This store is for feeds that arrive at real-time pace (live venues). The simulated feed backfills a year for the
 * whole universe at start, which PostgreSQL/PGlite cannot ingest within the 10 s start budget; it runs on the
 * in-memory store and regenerates its history from the seed instead (see the simulated feed).
 */
import {
  type AnySeriesInput,
  type BookLevel,
  type BookSnapshot,
  type Component,
  type FundingState,
  MarketStore,
  type RangeQuery,
  type Series,
  SeriesColumns,
  type SeriesExtent,
  type SeriesKind,
  SeriesKinds,
  type SourceStatus
} from "@market-data/core"
import { Effect, Layer } from "effect"
import { type Kysely, sql } from "kysely"
import { insertInChunks } from "./Bulk.ts"
import { type Database, num } from "./Database.ts"
import { query } from "./Errors.ts"

/** Table and column names per series kind (core column name -> SQL column). */
const Tables: { readonly [K in SeriesKind]: { readonly table: string; readonly columns: ReadonlyArray<string> } } = {
  bars: { table: "market_bars", columns: ["open", "high", "low", "close", "volume"] },
  markIndex: { table: "market_mark_index", columns: ["mark_price", "index_price"] },
  openInterest: { table: "market_open_interest", columns: ["oi_usd"] },
  takerFlow: { table: "market_taker_flow", columns: ["buy_usd", "sell_usd"] },
  bookMetrics: {
    table: "market_book_metrics",
    columns: ["mid", "spread_pct", "imbalance", "bid_depth_usd", "ask_depth_usd"]
  },
  funding: { table: "market_funding", columns: ["rate", "interval_ms"] },
  liquidations: { table: "market_liquidations", columns: ["long_usd", "short_usd"] }
}

/** Every series table, for retention and tests. */
export const MarketSeriesTables: ReadonlyArray<string> = SeriesKinds.map((k) => Tables[k].table)
/** Every table of the market store. */
export const MarketTables: ReadonlyArray<string> = [
  ...MarketSeriesTables,
  "market_books",
  "market_funding_states",
  "market_source_status"
]

type Row = Record<string, unknown>

/** Rows of a query as columnar series, one per venue (rows ordered by venue, then time). */
const toSeries = <K extends SeriesKind>(kind: K, assetId: string, rows: ReadonlyArray<Row>): Array<Series<K>> => {
  const { columns } = Tables[kind]
  const names = SeriesColumns[kind] as ReadonlyArray<string>
  const out: Array<Series<K>> = []
  let i = 0
  while (i < rows.length) {
    const venue = (rows[i] as Row).venue as string
    let j = i
    while (j < rows.length && (rows[j] as Row).venue === venue) j++
    const n = j - i
    const s: Record<string, unknown> = { kind, assetId, venue, t: new Float64Array(n) }
    const cols = names.map((name) => {
      const col = new Float64Array(n)
      s[name] = col
      return col
    })
    for (let k = 0; k < n; k++) {
      const r = rows[i + k] as Row
      ;(s.t as Float64Array)[k] = num(r.t_ms as string | number)
      columns.forEach((c, m) => {
        ;(cols[m] as Float64Array)[k] = num(r[c] as string | number)
      })
    }
    out.push(s as Series<K>)
    i = j
  }
  return out
}

/** One series input as rows, the last row of a repeated time winning (an upsert may touch a key once). */
const rowsOf = (s: AnySeriesInput): Array<Row> => {
  const { columns } = Tables[s.kind]
  const names = SeriesColumns[s.kind] as ReadonlyArray<string>
  const input = s as unknown as Record<string, ArrayLike<number>>
  const byTime = new Map<number, Row>()
  for (let i = 0; i < s.t.length; i++) {
    const t = s.t[i] as number
    const row: Row = { asset_id: s.assetId, venue: s.venue, t_ms: t }
    names.forEach((name, m) => {
      row[columns[m] as string] = (input[name] as ArrayLike<number>)[i]
    })
    byTime.set(t, row)
  }
  return [...byTime.values()]
}

const venueFilter = (venue: string | undefined) => (venue === undefined ? sql`` : sql`and venue = ${venue}`)

const newestPerKey = <A extends { readonly assetId: string; readonly venue: string; readonly t: number }>(
  rows: ReadonlyArray<A>
): Array<A> => {
  const byKey = new Map<string, A>()
  for (const r of rows) {
    const key = `${r.assetId}\u0000${r.venue}`
    const old = byKey.get(key)
    if (old === undefined || old.t <= r.t) byKey.set(key, r)
  }
  return [...byKey.values()]
}

export const makePgMarketStore = (database: Database): MarketStore["Service"] => {
  const db = database.db as unknown as Kysely<any>

  const select = (kind: SeriesKind) => {
    const { table, columns } = Tables[kind]
    return { table: sql.table(table), cols: sql.raw(["venue", "t_ms", ...columns].join(", ")) }
  }

  return {
    read: <K extends SeriesKind>(kind: K, q: RangeQuery) => {
      const { table, cols } = select(kind)
      return query(`market.read.${kind}`, () =>
        sql<Row>`select ${cols} from ${table}
          where asset_id = ${q.assetId} ${venueFilter(q.venue)} and t_ms >= ${q.fromMs} and t_ms < ${q.toMs}
          order by venue collate "C", t_ms`.execute(db)
      ).pipe(Effect.map((r) => toSeries(kind, q.assetId, r.rows)))
    },
    latest: <K extends SeriesKind>(
      kind: K,
      q: { readonly assetId: string; readonly venue?: string; readonly n: number; readonly atMs?: number }
    ) => {
      const { table, columns } = Tables[kind]
      const cols = sql.raw(["x.t_ms", ...columns.map((c) => `x.${c}`)].join(", "))
      const n = Math.max(0, Math.floor(q.n))
      const at = q.atMs ?? Number.MAX_SAFE_INTEGER
      return query(`market.latest.${kind}`, () =>
        sql<Row>`select v.venue, ${cols}
          from (select distinct venue from ${sql.table(table)} where asset_id = ${q.assetId} ${venueFilter(q.venue)}) v
          cross join lateral (
            select * from ${sql.table(table)} y
            where y.asset_id = ${q.assetId} and y.venue = v.venue and y.t_ms <= ${at}
            order by y.t_ms desc limit ${n}
          ) x
          order by v.venue collate "C", x.t_ms`.execute(db)
      ).pipe(Effect.map((r) => toSeries(kind, q.assetId, r.rows)))
    },
    extent: (kind, assetId) =>
      query(`market.extent.${kind}`, () =>
        sql<{
          venue: string
          first_ms: string | number
          last_ms: string | number
          count: string | number
        }>`select venue, min(t_ms) as first_ms, max(t_ms) as last_ms, count(*) as count
          from ${sql.table(Tables[kind].table)} where asset_id = ${assetId}
          group by venue order by venue collate "C"`.execute(db)
      ).pipe(
        Effect.map((r) =>
          r.rows.map(
            (x): SeriesExtent => ({
              venue: x.venue,
              firstMs: num(x.first_ms),
              lastMs: num(x.last_ms),
              count: num(x.count)
            })
          )
        )
      ),
    write: (batch) =>
      Effect.forEach(
        batch,
        (s) => {
          const cols = SeriesColumns[s.kind] as ReadonlyArray<string>
          const input = s as unknown as Record<string, ArrayLike<number>>
          if (cols.some((c) => (input[c] as ArrayLike<number>).length !== s.t.length)) {
            return Effect.die(new Error(`MarketStore.write: ${s.kind} columns of unequal length`))
          }
          return insertInChunks(db, Tables[s.kind].table, rowsOf(s), {
            key: ["asset_id", "venue", "t_ms"],
            update: Tables[s.kind].columns
          })
        },
        { discard: true }
      ),
    putBooks: (books) =>
      query("market.putBooks", async () => {
        const rows = newestPerKey(books)
        if (rows.length === 0) return
        await db
          .insertInto("market_books")
          .values(
            rows.map((b) => ({
              asset_id: b.assetId,
              venue: b.venue,
              t_ms: b.t,
              bids: JSON.stringify(b.bids),
              asks: JSON.stringify(b.asks)
            }))
          )
          .onConflict((oc) =>
            oc
              .columns(["asset_id", "venue"])
              .doUpdateSet({
                t_ms: (eb: any) => eb.ref("excluded.t_ms"),
                bids: (eb: any) => eb.ref("excluded.bids"),
                asks: (eb: any) => eb.ref("excluded.asks")
              })
              .where("market_books.t_ms", "<=", (eb: any) => eb.ref("excluded.t_ms"))
          )
          .execute()
      }),
    books: (assetId, venue) =>
      query("market.books", () =>
        sql<Row>`select venue, t_ms, bids, asks from market_books
          where asset_id = ${assetId} ${venueFilter(venue)} order by venue collate "C"`.execute(db)
      ).pipe(
        Effect.map((r) =>
          r.rows.map(
            (x): BookSnapshot => ({
              assetId,
              venue: x.venue as string,
              t: num(x.t_ms as string),
              bids: levels(x.bids),
              asks: levels(x.asks)
            })
          )
        )
      ),
    putFundingStates: (states) =>
      query("market.putFundingStates", async () => {
        const rows = newestPerKey(states)
        if (rows.length === 0) return
        const cols = ["t_ms", "interval_ms", "next_funding_ms", "current_rate", "predicted_rate"]
        await db
          .insertInto("market_funding_states")
          .values(
            rows.map((s) => ({
              asset_id: s.assetId,
              venue: s.venue,
              t_ms: s.t,
              interval_ms: s.intervalMs,
              next_funding_ms: s.nextFundingMs,
              current_rate: s.currentRate,
              predicted_rate: s.predictedRate
            }))
          )
          .onConflict((oc) =>
            oc
              .columns(["asset_id", "venue"])
              .doUpdateSet(Object.fromEntries(cols.map((c) => [c, (eb: any) => eb.ref(`excluded.${c}`)])))
              .where("market_funding_states.t_ms", "<=", (eb: any) => eb.ref("excluded.t_ms"))
          )
          .execute()
      }),
    fundingStates: (assetId, venue) =>
      query("market.fundingStates", () =>
        sql<Row>`select * from market_funding_states
          where asset_id = ${assetId} ${venueFilter(venue)} order by venue collate "C"`.execute(db)
      ).pipe(
        Effect.map((r) =>
          r.rows.map(
            (x): FundingState => ({
              assetId,
              venue: x.venue as string,
              t: num(x.t_ms as string),
              intervalMs: num(x.interval_ms as string),
              nextFundingMs: num(x.next_funding_ms as string),
              currentRate: num(x.current_rate as number),
              predictedRate: num(x.predicted_rate as number)
            })
          )
        )
      ),
    putStatus: (status) =>
      query("market.putStatus", async () => {
        const byKey = new Map(status.map((s) => [`${s.venue}\u0000${s.component}`, s]))
        if (byKey.size === 0) return
        const cols = [
          "source",
          "newest_ms",
          "cadence_ms",
          "checked_ms",
          "failing",
          "detail",
          "last_success_ms",
          "last_error"
        ]
        await db
          .insertInto("market_source_status")
          .values(
            [...byKey.values()].map((s) => ({
              venue: s.venue,
              component: s.component,
              source: s.source,
              newest_ms: s.newestMs,
              cadence_ms: s.cadenceMs,
              checked_ms: s.checkedMs,
              failing: s.failing,
              detail: s.detail ?? null,
              last_success_ms: s.lastSuccessMs ?? null,
              last_error: s.lastError ?? null
            }))
          )
          .onConflict((oc) =>
            oc
              .columns(["venue", "component"])
              .doUpdateSet(Object.fromEntries(cols.map((c) => [c, (eb: any) => eb.ref(`excluded.${c}`)])))
          )
          .execute()
      }),
    status: query("market.status", () =>
      sql<Row>`select * from market_source_status order by venue collate "C", component collate "C"`.execute(db)
    ).pipe(
      Effect.map((r) =>
        r.rows.map(
          (x): SourceStatus => ({
            source: x.source as SourceStatus["source"],
            venue: x.venue as string,
            component: x.component as Component,
            newestMs: num(x.newest_ms as string),
            cadenceMs: num(x.cadence_ms as string),
            checkedMs: num(x.checked_ms as string),
            failing: x.failing as boolean,
            ...(x.detail === null || x.detail === undefined ? {} : { detail: x.detail as string }),
            ...(x.last_success_ms === null || x.last_success_ms === undefined
              ? {}
              : { lastSuccessMs: num(x.last_success_ms as string) }),
            ...(x.last_error === null || x.last_error === undefined ? {} : { lastError: x.last_error as string })
          })
        )
      )
    ),
    prune: (cutoffMs) =>
      Effect.forEach(MarketSeriesTables, (table) =>
        query(`market.prune.${table}`, () => db.deleteFrom(table).where("t_ms", "<", cutoffMs).executeTakeFirst()).pipe(
          Effect.map((r) => Number(r.numDeletedRows))
        )
      ).pipe(Effect.map((counts) => counts.reduce((a, b) => a + b, 0)))
  }
}

const levels = (v: unknown): ReadonlyArray<BookLevel> => {
  const parsed = typeof v === "string" ? JSON.parse(v) : v
  return (parsed as ReadonlyArray<[number, number]>).map(([p, s]) => [p, s] as const)
}

/** The market store on `database`. */
export const layerPgMarketStore = (database: Database): Layer.Layer<MarketStore> =>
  Layer.succeed(MarketStore)(makePgMarketStore(database))
