/**
 * The store ports on PostgreSQL (server or PGlite). Concurrency is the database's work: unique constraints,
 * row locks inside the `md_*` functions and single-statement conditional upserts; no process-local locks,
 * so several server instances on one database stay exact.
 */
import {
  BUCKET_MS,
  bucketOf,
  cachedKeyStore,
  type KeyRecord,
  KeyStore,
  MoneyStore,
  RateLimiter,
  releaseAfterOutage,
  type StorePorts,
  WINDOW_MS
} from "@market-data/core"
import { Effect, Layer, Option } from "effect"
import { sql } from "kysely"
import type { ApiKeysTable, Database } from "./Database.ts"
import { num } from "./Database.ts"
import { query } from "./Errors.ts"
import { batchRow, callByName, perRequest } from "./PerRequest.ts"
import { makePgMoneyStore, rateWindow, windowSince } from "./PgMoneyStore.ts"

const keyFromRow = (r: ApiKeysTable): KeyRecord => ({
  id: r.id,
  hash: r.hash,
  prefix: r.prefix,
  label: r.label,
  createdAt: new Date(num(r.created_at_ms)),
  revokedAt: r.revoked_at_ms === null ? null : new Date(num(r.revoked_at_ms)),
  rateLimitPerMinute: r.rate_limit_per_minute
})

/** A key as its `api_keys` row. */
const keyRow = (k: KeyRecord): ApiKeysTable => ({
  id: k.id,
  hash: k.hash,
  prefix: k.prefix,
  label: k.label,
  created_at_ms: k.createdAt.getTime(),
  revoked_at_ms: k.revokedAt === null ? null : k.revokedAt.getTime(),
  rate_limit_per_minute: k.rateLimitPerMinute
})

export const makePgKeyStore = (database: Database): KeyStore["Service"] => {
  const { db } = database
  return {
    insert: (k) =>
      query("keys.insert", () => db.insertInto("api_keys").values(keyRow(k)).execute()).pipe(Effect.asVoid),
    insertIfAbsent: (k) =>
      query("keys.insertIfAbsent", async () => {
        // The conflicting insert waits for a racing one to commit; the select after it then sees that key.
        await db
          .insertInto("api_keys")
          .values(keyRow(k))
          .onConflict((oc) => oc.column("hash").doNothing())
          .execute()
        return db.selectFrom("api_keys").selectAll().where("hash", "=", k.hash).executeTakeFirstOrThrow()
      }).pipe(Effect.map(keyFromRow)),
    findByHash: (hash) =>
      perRequest(
        database,
        "keys.findByHash",
        () => ({ f: "key_by_hash", k: hash, a: { hash } }),
        batchRow<ApiKeysTable>,
        () => db.selectFrom("api_keys").selectAll().where("hash", "=", hash).executeTakeFirst()
      ).pipe(Effect.map((r) => Option.map(Option.fromNullishOr(r), keyFromRow))),
    findById: (id) =>
      query("keys.findById", () => db.selectFrom("api_keys").selectAll().where("id", "=", id).executeTakeFirst()).pipe(
        Effect.map((r) => Option.map(Option.fromNullishOr(r), keyFromRow))
      ),
    list: query("keys.list", () =>
      db.selectFrom("api_keys").selectAll().orderBy("created_at_ms").orderBy("id").execute()
    ).pipe(Effect.map((rows) => rows.map(keyFromRow))),
    revoke: (id, at) =>
      query("keys.revoke", () =>
        db
          .updateTable("api_keys")
          .set({ revoked_at_ms: at.getTime() })
          .where("id", "=", id)
          .where("revoked_at_ms", "is", null)
          .executeTakeFirst()
      ).pipe(Effect.map((r) => Number(r.numUpdatedRows) === 1))
  }
}

export const makePgRateLimiter = (database: Database): RateLimiter["Service"] => {
  const { db } = database
  const since = windowSince
  const window = rateWindow
  type Row = { allowed: boolean; used: string; oldest: string | null }
  return {
    consume: (scope, limit, nowMs) => {
      const args = { scope, limit, now: nowMs, bucket: bucketOf(nowMs), since: since(nowMs) }
      return perRequest(
        database,
        "rate.consume",
        () => ({ f: "rate_consume", k: scope, a: args }),
        batchRow<Row>,
        callByName<Row>(database, "md_rate_consume", args)
      ).pipe(
        Effect.map((row) =>
          window(limit, nowMs, num(row?.used ?? 0), row?.oldest == null ? null : num(row.oldest), row?.allowed === true)
        )
      )
    },
    peek: (scope, limit, nowMs) =>
      query("rate.peek", () =>
        sql<{ used: string; oldest: string | null }>`
          select coalesce(sum(count), 0) as used, min(start_ms) as oldest from rate_limit_buckets
          where scope = ${scope} and start_ms > ${since(nowMs)} and count > 0`.execute(db)
      ).pipe(
        Effect.map((r) => {
          const row = r.rows[0]
          return window(limit, nowMs, num(row?.used ?? 0), row?.oldest == null ? null : num(row.oldest), true)
        })
      )
  }
}

/** How long a successful key lookup is reused; a revocation elsewhere is seen within this time. */
export const KEY_CACHE_MS = 5_000

/** Every store port on one database. */
export const layerPgStores = (
  database: Database,
  options: { readonly keyCacheMs?: number } = {}
): Layer.Layer<StorePorts> =>
  Layer.mergeAll(
    Layer.succeed(KeyStore)(cachedKeyStore(makePgKeyStore(database), options.keyCacheMs ?? KEY_CACHE_MS)),
    // What an outage keeps from the store is released once it is back (`ReleaseAfterOutage`).
    Layer.effect(MoneyStore)(releaseAfterOutage(makePgMoneyStore(database))),
    Layer.succeed(RateLimiter)(makePgRateLimiter(database))
  )

/**
 * Deletes what no longer matters: expired idempotency records, resolved or expired holds, and rate-limit
 * buckets outside the window. Ledger entries are kept. Returns the number of rows removed.
 */
export const sweep = ({ db }: Database, nowMs: number): Effect.Effect<number> =>
  Effect.gen(function* () {
    const a = yield* query("sweep.idempotency", () =>
      db.deleteFrom("idempotency_records").where("expires_at_ms", "<=", nowMs).executeTakeFirst()
    )
    const b = yield* query("sweep.holds", () =>
      sql`delete from ledger_holds where state <> 'active' or expires_at_ms <= ${nowMs - 24 * 60 * 60 * 1000}`.execute(
        db
      )
    )
    const c = yield* query("sweep.buckets", () =>
      sql`delete from rate_limit_buckets where start_ms <= ${nowMs - WINDOW_MS - BUCKET_MS}`.execute(db)
    )
    return Number(a.numDeletedRows) + Number(b.numAffectedRows ?? 0) + Number(c.numAffectedRows ?? 0)
  })
