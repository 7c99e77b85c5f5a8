/**
 * The store ports on PostgreSQL (server or PGlite). Concurrency is the database's work: unique constraints,
 * row locks inside the `md_*` functions and single-statement conditional upserts; no process-local locks,
 * so several server instances on one database stay exact.
 */
import { randomUUID } from "node:crypto"
import {
  type BeginResult,
  BUCKET_MS,
  bucketOf,
  cachedKeyStore,
  HOLD_LEASE_MS,
  type Hold,
  IDEMPOTENCY_LEASE_MS,
  IdempotencyStore,
  type KeyRecord,
  KeyStore,
  Ledger,
  type LedgerHint,
  type MeteredBeginResult,
  type MeteredChargeResult,
  RateLimiter,
  REPLAY_WINDOW_MS,
  type StoredAnswer,
  type StorePorts,
  WINDOW_MS
} from "@market-data/core"
import { Effect, Layer, Option } from "effect"
import { sql } from "kysely"
import type { ApiKeysTable, Database } from "./Database.ts"
import { num } from "./Database.ts"
import { query } from "./Errors.ts"
import type { BatchCall } from "./GroupCommit.ts"

/**
 * Runs one per-request store call: through the database's group commit when it has one (`call`, its answer
 * turned into the row the lone statement would have given by `fromBatch`), else as its own statement (`direct`).
 * Failures are the same either way (`query`: deadlocks retried, the rest `StoreUnavailable`).
 */
const perRequest = <A>(
  database: Database,
  what: string,
  call: () => BatchCall,
  fromBatch: (value: unknown) => A,
  direct: () => Promise<A>
): Effect.Effect<A> => {
  const group = database.groupCommit
  return group === undefined ? query(what, direct) : query(what, () => group.call(call()).then(fromBatch))
}

/** A table function's row as `md_batch` answers it (`to_jsonb` of the row, or null). */
const batchRow = <R>(value: unknown): R | undefined => (value === null ? undefined : (value as R))

const keyFromRow = (r: ApiKeysTable): KeyRecord => ({
  id: r.id,
  hash: r.hash,
  prefix: r.prefix,
  label: r.label,
  createdAt: new Date(num(r.created_at_ms)),
  revokedAt: r.revoked_at_ms === null ? null : new Date(num(r.revoked_at_ms)),
  rateLimitPerMinute: r.rate_limit_per_minute
})

export const makePgKeyStore = (database: Database): KeyStore["Service"] => {
  const { db } = database
  return {
    insert: (k) =>
      query("keys.insert", () =>
        db
          .insertInto("api_keys")
          .values({
            id: k.id,
            hash: k.hash,
            prefix: k.prefix,
            label: k.label,
            created_at_ms: k.createdAt.getTime(),
            revoked_at_ms: k.revokedAt === null ? null : k.revokedAt.getTime(),
            rate_limit_per_minute: k.rateLimitPerMinute
          })
          .execute()
      ).pipe(Effect.asVoid),
    insertIfAbsent: (k) =>
      query("keys.insertIfAbsent", async () => {
        // The conflicting insert waits for a racing one to commit; the select after it then sees that key.
        await db
          .insertInto("api_keys")
          .values({
            id: k.id,
            hash: k.hash,
            prefix: k.prefix,
            label: k.label,
            created_at_ms: k.createdAt.getTime(),
            revoked_at_ms: k.revokedAt === null ? null : k.revokedAt.getTime(),
            rate_limit_per_minute: k.rateLimitPerMinute
          })
          .onConflict((oc) => oc.column("hash").doNothing())
          .execute()
        return db.selectFrom("api_keys").selectAll().where("hash", "=", k.hash).executeTakeFirstOrThrow()
      }).pipe(Effect.map(keyFromRow)),
    findByHash: (hash) =>
      perRequest(
        database,
        "keys.findByHash",
        () => ({ f: "key_by_hash", k: hash, a: [hash] }),
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

const holdId = (): string => `hold_${randomUUID()}`

export const makePgLedger = (database: Database): Ledger["Service"] => {
  const { db } = database
  /** What this process last saw per key (`Ledger.hint`); bounded, advisory only. */
  const hints = new Map<string, LedgerHint>()
  const see = (keyId: string, hint: Partial<LedgerHint>) => {
    if (hints.size >= 10_000 && !hints.has(keyId)) hints.clear()
    const before = hints.get(keyId) ?? { available: undefined, rateBlockedUntilMs: 0 }
    hints.set(keyId, { ...before, ...hint })
  }
  return {
    balance: (keyId, nowMs) =>
      perRequest(
        database,
        "ledger.balance",
        () => ({ f: "available", k: keyId, a: [keyId, nowMs] }),
        (v) => v as string | number | null,
        async () => (await sql<{ v: string }>`select md_available(${keyId}, ${nowMs}) as v`.execute(db)).rows[0]?.v ?? 0
      ).pipe(
        Effect.map((v) => num(v ?? 0)),
        Effect.tap((available) => Effect.sync(() => see(keyId, { available })))
      ),
    hold: (keyId, amount, nowMs) =>
      Effect.suspend(() => {
        if (!Number.isSafeInteger(amount) || amount < 0)
          return Effect.die(new RangeError(`hold must be a whole number >= 0, got ${amount}`))
        const hold: Hold = { id: holdId(), keyId, amount, expiresAtMs: nowMs + HOLD_LEASE_MS }
        return perRequest(
          database,
          "ledger.hold",
          () => ({ f: "hold", k: keyId, a: [hold.id, keyId, amount, nowMs, hold.expiresAtMs] }),
          (v) => v === true,
          async () =>
            (
              await sql<{
                ok: boolean
              }>`select md_hold(${hold.id}, ${keyId}, ${amount}, ${nowMs}, ${hold.expiresAtMs}) as ok`.execute(db)
            ).rows[0]?.ok === true
        ).pipe(
          Effect.map((ok) => (ok ? hold : undefined)),
          // A refused hold says the balance is short; a granted one says nothing exact: forget what was known.
          Effect.tap((h) => Effect.sync(() => see(keyId, { available: h === undefined ? 0 : undefined })))
        )
      }),
    settle: (hold, charge, reason, nowMs, receipt) =>
      Effect.suspend(() => {
        if (!Number.isSafeInteger(charge) || charge < 0 || charge > hold.amount) {
          return Effect.die(
            new RangeError(`charge ${charge} must be a whole number from 0 to the hold of ${hold.amount}`)
          )
        }
        return perRequest(
          database,
          "ledger.settle",
          () => ({
            f: "settle",
            k: hold.keyId,
            a: [
              hold.id,
              charge,
              reason,
              nowMs,
              receipt?.keyId ?? null,
              receipt?.idempotencyKey ?? null,
              receipt?.token ?? null,
              receipt?.answer.status ?? null,
              receipt?.answer.headers ?? null,
              receipt?.answer.body ?? null,
              nowMs + REPLAY_WINDOW_MS
            ]
          }),
          (v) => v as string | undefined,
          async () =>
            (
              await sql<{ r: string }>`select md_settle(
          ${hold.id}, ${charge}, ${reason}, ${nowMs},
          ${receipt?.keyId ?? null}, ${receipt?.idempotencyKey ?? null}, ${receipt?.token ?? null},
          ${receipt?.answer.status ?? null},
          ${receipt === undefined ? null : JSON.stringify(receipt.answer.headers)}::jsonb,
          ${receipt?.answer.body ?? null}, ${nowMs + REPLAY_WINDOW_MS}) as r`.execute(db)
            ).rows[0]?.r
        ).pipe(
          Effect.map((result) => {
            if (result === "settled") return { _tag: "Settled" as const, charged: charge }
            if (result === "expired") return { _tag: "Expired" as const }
            if (result === "superseded") return { _tag: "Superseded" as const }
            return { _tag: "AlreadyResolved" as const }
          })
        )
      }),
    release: (hold) =>
      perRequest(
        database,
        "ledger.release",
        () => ({ f: "release", k: hold.keyId, a: [hold.id] }),
        () => undefined,
        async () => {
          await sql`update ledger_holds set state = 'released' where id = ${hold.id} and state = 'active'`.execute(db)
        }
      ),
    grant: (keyId, amount, reason, nowMs) =>
      Effect.suspend(() => {
        if (!Number.isSafeInteger(amount) || amount <= 0)
          return Effect.die(new RangeError(`grant must be a positive whole number, got ${amount}`))
        return query("ledger.grant", () =>
          sql<{ v: string }>`select md_grant(${keyId}, ${amount}, ${reason}, ${nowMs}) as v`.execute(db)
        ).pipe(Effect.map((r) => num(r.rows[0]?.v ?? 0)))
      }),
    topUp: (keyId, target, reason, nowMs) =>
      Effect.suspend(() => {
        if (!Number.isSafeInteger(target) || target < 0)
          return Effect.die(new RangeError(`top-up target must be a whole number >= 0, got ${target}`))
        return query("ledger.topUp", () =>
          sql<{ v: string }>`select md_top_up(${keyId}, ${target}, ${reason}, ${nowMs}) as v`.execute(db)
        ).pipe(
          Effect.map((r) => num(r.rows[0]?.v ?? 0)),
          Effect.tap(() => Effect.sync(() => see(keyId, { available: undefined })))
        )
      }),
    entries: (keyId) =>
      query("ledger.entries", () =>
        db.selectFrom("ledger_entries").selectAll().where("key_id", "=", keyId).orderBy("id").execute()
      ).pipe(
        Effect.map((rows) =>
          rows.map((r) => ({
            keyId: r.key_id,
            kind: r.kind,
            amount: num(r.amount),
            reason: r.reason,
            at: new Date(num(r.at_ms))
          }))
        )
      ),
    meteredCharge: (keyId, required, charge, reason, nowMs, meter) =>
      Effect.suspend(() => {
        if (!Number.isSafeInteger(charge) || charge < 0 || !Number.isSafeInteger(required) || charge > required) {
          return Effect.die(
            new RangeError(`charge ${charge} must be a whole number from 0 to the required ${required}`)
          )
        }
        const since = nowMs - WINDOW_MS - BUCKET_MS
        type Row = { outcome: string; used: string; oldest: string | null; available: string | null }
        const bucket = bucketOf(nowMs)
        return perRequest(
          database,
          "ledger.meteredCharge",
          () => ({
            f: "meter_charge",
            k: meter.scope,
            a: [keyId, required, charge, reason, nowMs, meter.scope, meter.limit, bucket, since]
          }),
          batchRow<Row>,
          async () =>
            (
              await sql<Row>`
          select * from md_meter_charge(${keyId}, ${required}, ${charge}, ${reason}, ${nowMs},
            ${meter.scope}, ${meter.limit}, ${bucket}, ${since})`.execute(db)
            ).rows[0]
        ).pipe(
          Effect.map((row): MeteredChargeResult => {
            const used = num(row?.used ?? 0)
            const oldest = row?.oldest == null ? null : num(row.oldest)
            const allowed = row?.outcome !== "rate_limited"
            const rate = {
              limit: meter.limit,
              remaining: Math.max(0, meter.limit - used),
              resetAtMs: oldest === null || used === 0 ? nowMs : oldest + WINDOW_MS + BUCKET_MS,
              allowed
            }
            if (!allowed) {
              see(keyId, { rateBlockedUntilMs: rate.resetAtMs })
              return { _tag: "RateLimited", rate }
            }
            const available = num(row?.available ?? 0)
            see(keyId, { available, rateBlockedUntilMs: 0 })
            return row?.outcome === "charged"
              ? { _tag: "Charged", rate, available }
              : { _tag: "Insufficient", rate, available }
          })
        )
      }),
    hint: (keyId) => hints.get(keyId) ?? { available: undefined, rateBlockedUntilMs: 0 }
  }
}

const newToken = (): string => randomUUID()

/** Start of the oldest bucket still counting at `nowMs` is after this (the window plus one bucket). */
const windowSince = (nowMs: number) => nowMs - WINDOW_MS - BUCKET_MS

/** The rate window from what `md_rate_consume` (or a function calling it) returns. */
const rateWindow = (limit: number, nowMs: number, used: number, oldest: number | null, allowed: boolean) => ({
  limit,
  remaining: Math.max(0, limit - used),
  resetAtMs: oldest === null || used === 0 ? nowMs : oldest + WINDOW_MS + BUCKET_MS,
  allowed
})

const storedAnswer = (status: number | null, headers: unknown, body: string | null): StoredAnswer => ({
  status: status ?? 200,
  headers: (typeof headers === "string" ? JSON.parse(headers) : headers) as Record<string, string>,
  body: body ?? ""
})

export const makePgIdempotencyStore = (database: Database): IdempotencyStore["Service"] => {
  const { db } = database
  const begin = (
    keyId: string,
    key: string,
    fingerprint: string,
    nowMs: number,
    attempt: number
  ): Effect.Effect<BeginResult> =>
    Effect.gen(function* () {
      const token = newToken()
      // One statement: take the key if it is free, or if its record has expired (lease or replay window).
      const taken = yield* query("idempotency.begin", () =>
        sql<{ token: string }>`
          insert into idempotency_records (key_id, idem_key, fingerprint, state, token, expires_at_ms)
          values (${keyId}, ${key}, ${fingerprint}, 'in_flight', ${token}, ${nowMs + IDEMPOTENCY_LEASE_MS})
          on conflict (key_id, idem_key) do update
            set fingerprint = excluded.fingerprint, state = 'in_flight', token = excluded.token,
                expires_at_ms = excluded.expires_at_ms, status = null, headers = null, body = null
            where idempotency_records.expires_at_ms <= ${nowMs}
          returning token`.execute(db)
      )
      if (taken.rows[0]?.token === token) return { _tag: "Started", token } as const
      const found = yield* query("idempotency.read", () =>
        db
          .selectFrom("idempotency_records")
          .selectAll()
          .where("key_id", "=", keyId)
          .where("idem_key", "=", key)
          .executeTakeFirst()
      )
      if (found === undefined || num(found.expires_at_ms) <= nowMs) {
        // Freed or expired between the two statements: try again (bounded).
        if (attempt >= 3) return { _tag: "InProgress" } as const
        return yield* begin(keyId, key, fingerprint, nowMs, attempt + 1)
      }
      if (found.fingerprint !== fingerprint) return { _tag: "Conflict" } as const
      if (found.state === "in_flight") return { _tag: "InProgress" } as const
      return { _tag: "Replay", answer: storedAnswer(found.status, found.headers, found.body) } as const
    })
  return {
    begin: (keyId, key, fingerprint, nowMs) => begin(keyId, key, fingerprint, nowMs, 0),
    // One statement: md_rate_begin spends the unit through md_rate_consume, then begins as `begin` does.
    beginMetered: (keyId, key, fingerprint, nowMs, meter) =>
      Effect.suspend(() => {
        const token = newToken()
        type Row = {
          allowed: boolean
          used: string
          oldest: string | null
          outcome: string
          answer_status: number | null
          answer_headers: unknown
          answer_body: string | null
        }
        const args = [
          meter.scope,
          meter.limit,
          nowMs,
          bucketOf(nowMs),
          windowSince(nowMs),
          keyId,
          key,
          fingerprint,
          token,
          nowMs + IDEMPOTENCY_LEASE_MS
        ] as const
        return perRequest(
          database,
          "idempotency.beginMetered",
          () => ({ f: "rate_begin", k: meter.scope, a: args }),
          batchRow<Row>,
          async () =>
            (
              await sql<Row>`
          select * from md_rate_begin(${args[0]}, ${args[1]}, ${args[2]}, ${args[3]}, ${args[4]}, ${args[5]},
            ${args[6]}, ${args[7]}, ${args[8]}, ${args[9]})`.execute(db)
            ).rows[0]
        ).pipe(
          Effect.map((row): MeteredBeginResult => {
            const allowed = row?.allowed === true
            const rate = rateWindow(
              meter.limit,
              nowMs,
              num(row?.used ?? 0),
              row?.oldest == null ? null : num(row.oldest),
              allowed
            )
            if (row === undefined || !allowed) return { _tag: "RateLimited", rate }
            const begun: BeginResult =
              row.outcome === "started"
                ? { _tag: "Started", token }
                : row.outcome === "conflict"
                  ? { _tag: "Conflict" }
                  : row.outcome === "replay"
                    ? { _tag: "Replay", answer: storedAnswer(row.answer_status, row.answer_headers, row.answer_body) }
                    : { _tag: "InProgress" }
            return { _tag: "Begun", rate, begun }
          })
        )
      }),
    complete: (keyId, key, token, answer, nowMs) =>
      perRequest(
        database,
        "idempotency.complete",
        () => ({
          f: "complete",
          k: keyId,
          a: [keyId, key, token, answer.status, answer.headers, answer.body, nowMs + REPLAY_WINDOW_MS]
        }),
        () => undefined,
        async () => {
          await sql`update idempotency_records
              set state = 'stored', status = ${answer.status}, headers = ${JSON.stringify(answer.headers)}::jsonb,
                  body = ${answer.body}, expires_at_ms = ${nowMs + REPLAY_WINDOW_MS}
            where key_id = ${keyId} and idem_key = ${key} and token = ${token} and state = 'in_flight'`.execute(db)
        }
      ),
    abandon: (keyId, key, token) =>
      perRequest(
        database,
        "idempotency.abandon",
        () => ({ f: "abandon", k: keyId, a: [keyId, key, token] }),
        () => undefined,
        async () => {
          await sql`delete from idempotency_records
            where key_id = ${keyId} and idem_key = ${key} and token = ${token} and state = 'in_flight'`.execute(db)
        }
      )
  }
}

export const makePgRateLimiter = (database: Database): RateLimiter["Service"] => {
  const { db } = database
  const since = windowSince
  const window = rateWindow
  type Row = { allowed: boolean; used: string; oldest: string | null }
  return {
    consume: (scope, limit, nowMs) =>
      perRequest(
        database,
        "rate.consume",
        () => ({ f: "rate_consume", k: scope, a: [scope, limit, nowMs, bucketOf(nowMs), since(nowMs)] }),
        batchRow<Row>,
        async () =>
          (
            await sql<Row>`
          select * from md_rate_consume(${scope}, ${limit}, ${nowMs}, ${bucketOf(nowMs)}, ${since(nowMs)})`.execute(db)
          ).rows[0]
      ).pipe(
        Effect.map((row) => {
          return window(
            limit,
            nowMs,
            num(row?.used ?? 0),
            row?.oldest == null ? null : num(row.oldest),
            row?.allowed === true
          )
        })
      ),
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
    Layer.succeed(Ledger)(makePgLedger(database)),
    Layer.succeed(IdempotencyStore)(makePgIdempotencyStore(database)),
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
