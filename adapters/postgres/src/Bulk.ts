/**
 * Conventions for the planes' market-data tables (months of 15-minute bars, funding, open interest,
 * filings facts), so every plane stores volume the same way:
 * - one row per (asset, venue, time) with times as epoch-millisecond `bigint`, primary key
 *   `(asset_id, venue, t_ms)` (or the plane's natural key ending in `t_ms`), which doubles as the index
 *   that every "latest N for an asset" and "range for an asset" query walks backwards;
 * - exact decimals from filings as `numeric` (they come back as strings), market measurements as
 *   `double precision`;
 * - writes in batches through `insertInChunks`, idempotent on the natural key (re-ingesting a window is
 *   safe), never row by row;
 * - retention by a `delete ... where t_ms < cutoff` per table in the sweeper, with the cutoff documented
 *   next to the table's migration.
 */
import type { Insertable, Kysely } from "kysely"
import { query } from "./Errors.ts"

/** PostgreSQL's limit is 65,535 bind parameters per statement; stay well below it. */
const MAX_PARAMETERS = 30_000

/**
 * Inserts `rows` into `table` in chunks that respect the bind-parameter limit, ignoring rows whose natural
 * key already exists (or updating `update` columns when given). Returns the number of rows written.
 */
export const insertInChunks = <DB, T extends keyof DB & string>(
  db: Kysely<DB>,
  table: T,
  rows: ReadonlyArray<Insertable<DB[T]>>,
  options: { readonly key: ReadonlyArray<string>; readonly update?: ReadonlyArray<string> }
) =>
  query(`bulk.${table}`, async () => {
    if (rows.length === 0) return 0
    const columns = Object.keys(rows[0] as object).length
    const size = Math.max(1, Math.floor(MAX_PARAMETERS / Math.max(1, columns)))
    let written = 0
    for (let i = 0; i < rows.length; i += size) {
      const chunk = rows.slice(i, i + size)
      const result = await (db as Kysely<any>)
        .insertInto(table)
        .values(chunk as Array<any>)
        .onConflict((oc) => {
          const target = oc.columns(options.key as Array<string>)
          const update = options.update
          if (update === undefined || update.length === 0) return target.doNothing()
          return target.doUpdateSet(
            Object.fromEntries(update.map((c) => [c, (eb: any) => eb.ref(`excluded.${c}`)])) as any
          )
        })
        .executeTakeFirst()
      written += Number(result.numInsertedOrUpdatedRows ?? 0)
    }
    return written
  })
