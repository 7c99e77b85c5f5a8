/**
 * The money port on PostgreSQL (server or PGlite): one SQL statement per call, each a database function
 * (`md_admit`, `md_finish`, `md_charge`; their modules in `src/sql/`: `admit_and_hold.ts`, `charge_from_hold.ts`,
 * `charge_without_hold.ts`) that mirrors the core's money rule branch
 * for branch. Concurrency is the database's work (row locks inside the functions, single-statement conditional
 * upserts); no process-local locks, so several server instances on one database stay exact.
 */
import { randomUUID } from "node:crypto"
import {
  AdmissionUnconfirmed,
  type AdmitResult,
  BUCKET_MS,
  bucketOf,
  type ChargeResult,
  type FinishResult,
  HOLD_LEASE_MS,
  IDEMPOTENCY_LEASE_MS,
  type MoneyHint,
  type MoneyStore,
  type RateWindow,
  REPLAY_WINDOW_MS,
  type StoredAnswer,
  StoreUnavailable,
  type Ticket,
  WINDOW_MS
} from "@market-data/core"
import { Effect } from "effect"
import { sql } from "kysely"
import type { Database } from "./Database.ts"
import { num } from "./Database.ts"
import { neverSent, query } from "./Errors.ts"
import { batchRow, callByName, perRequest } from "./PerRequest.ts"

/** Start of the oldest bucket still counting at `nowMs` is after this (the window plus one bucket). */
export const windowSince = (nowMs: number): number => nowMs - WINDOW_MS - BUCKET_MS

/** The rate window from what `md_rate_consume` (or a function calling it) returns. */
export const rateWindow = (
  limit: number,
  nowMs: number,
  used: number,
  oldest: number | null,
  allowed: boolean
): RateWindow => ({
  limit,
  remaining: Math.max(0, limit - used),
  resetAtMs: oldest === null || used === 0 ? nowMs : oldest + WINDOW_MS + BUCKET_MS,
  allowed
})

/** The rate window from a money function's row (`used`, `oldest`; none: nothing counted). */
const rowWindow = (
  row: { readonly used?: string | number | null; readonly oldest?: string | number | null } | undefined,
  limit: number,
  nowMs: number,
  allowed: boolean
): RateWindow => rateWindow(limit, nowMs, num(row?.used ?? 0), row?.oldest == null ? null : num(row.oldest), allowed)

const storedAnswer = (status: number | null, headers: unknown, body: string | null): StoredAnswer => ({
  status: status ?? 200,
  headers: (typeof headers === "string" ? JSON.parse(headers) : headers) as Record<string, string>,
  body: body ?? ""
})

const wholeOrDie = (amount: number, what: string) =>
  Number.isSafeInteger(amount) && amount >= 0
    ? undefined
    : Effect.die(new RangeError(`${what} must be a whole number >= 0, got ${amount}`))

/**
 * `md_admit`'s arguments by name (its parameters without `p_`): the group commit's batch member and the lone
 * call's named notation are built from this one record (`sql/admit_and_hold.ts`).
 */
export type AdmitArgs = {
  readonly key: string
  readonly now: number
  readonly scope: string
  readonly limit: number
  readonly bucket: number
  readonly since: number
  readonly hold: number
  readonly hold_id: string | null
  readonly hold_until: number
  readonly idem_key: string | null
  readonly fingerprint: string | null
  readonly token: string | null
  readonly lease_until: number
}

/** `md_finish`'s arguments by name (`sql/charge_from_hold.ts`); `headers` goes as `jsonb`. */
export type FinishArgs = {
  readonly key: string
  readonly hold_id: string | null
  readonly end: string
  readonly charge: number
  readonly required: number
  readonly reason: string
  readonly now: number
  readonly idem_key: string | null
  readonly token: string | null
  readonly status: number | null
  readonly headers: Readonly<Record<string, string>> | null
  readonly body: string | null
  readonly replay_until: number
}

/** `md_charge`'s arguments by name (`sql/charge_without_hold.ts`). */
export type ChargeArgs = {
  readonly key: string
  readonly required: number
  readonly charge: number
  readonly reason: string
  readonly now: number
  readonly scope: string
  readonly limit: number
  readonly bucket: number
  readonly since: number
}

export const makePgMoneyStore = (database: Database): MoneyStore["Service"] => {
  const { db } = database
  /** What this process last saw per key (`MoneyStore.hint`); bounded, advisory only. */
  const hints = new Map<string, MoneyHint>()
  const see = (keyId: string, hint: Partial<MoneyHint>) => {
    if (hints.size >= 10_000 && !hints.has(keyId)) hints.clear()
    const before = hints.get(keyId) ?? { available: undefined, rateBlockedUntilMs: 0 }
    hints.set(keyId, { ...before, ...hint })
  }
  return {
    admit: ({ keyId, nowMs, meter, hold, idempotency }) =>
      Effect.suspend(() => {
        const bad = wholeOrDie(hold, "hold")
        if (bad !== undefined) return bad
        const holdId = hold > 0 ? `hold_${randomUUID()}` : null
        const holdUntil = hold > 0 ? nowMs + HOLD_LEASE_MS : nowMs
        const token = idempotency === undefined ? null : randomUUID()
        const ticket: Ticket = {
          keyId,
          holdId: holdId ?? undefined,
          held: hold,
          holdExpiresAtMs: holdUntil,
          idempotency: idempotency === undefined || token === null ? undefined : { key: idempotency.key, token }
        }
        type Row = {
          outcome: string
          used: string
          oldest: string | null
          available: string | null
          answer_status: number | null
          answer_headers: unknown
          answer_body: string | null
        }
        const args: AdmitArgs = {
          key: keyId,
          now: nowMs,
          scope: meter.scope,
          limit: meter.limit,
          bucket: bucketOf(nowMs),
          since: windowSince(nowMs),
          hold,
          hold_id: holdId,
          hold_until: holdUntil,
          idem_key: idempotency?.key ?? null,
          fingerprint: idempotency?.fingerprint ?? null,
          token,
          lease_until: nowMs + IDEMPOTENCY_LEASE_MS
        }
        return perRequest(
          database,
          "money.admit",
          () => ({ f: "admit", k: meter.scope, a: args }),
          batchRow<Row>,
          callByName<Row>(database, "md_admit", args)
        ).pipe(
          Effect.map((row): AdmitResult => {
            const outcome = row?.outcome ?? "rate_limited"
            const rate = rowWindow(row, meter.limit, nowMs, outcome !== "rate_limited")
            switch (outcome) {
              case "rate_limited":
                see(keyId, { rateBlockedUntilMs: rate.resetAtMs })
                return { _tag: "RateLimited", rate }
              case "key_revoked":
                return { _tag: "KeyRevoked", rate }
              case "conflict":
                return { _tag: "Conflict", rate }
              case "in_progress":
                return { _tag: "InProgress", rate }
              case "replay":
                return {
                  _tag: "Replay",
                  rate,
                  answer: storedAnswer(row?.answer_status ?? null, row?.answer_headers, row?.answer_body ?? null)
                }
              case "insufficient": {
                const available = num(row?.available ?? 0)
                see(keyId, { available, rateBlockedUntilMs: 0 })
                return { _tag: "Insufficient", rate, available }
              }
              default:
                see(keyId, { available: num(row?.available ?? 0), rateBlockedUntilMs: 0 })
                return { _tag: "Admitted", rate, ticket }
            }
          }),
          // The connection lost after the statement was sent: the admission may have committed. The ticket it
          // would have made goes with the failure, so that its release can be made once the store is back.
          Effect.catchDefect((defect) =>
            Effect.die(
              defect instanceof StoreUnavailable && (holdId !== null || token !== null) && !neverSent(defect.cause)
                ? new AdmissionUnconfirmed({ operation: defect.operation, cause: defect.cause, admitted: ticket })
                : defect
            )
          )
        )
      }),
    finish: (ticket, end, nowMs) =>
      Effect.suspend(() => {
        const charge = end._tag === "Settle" ? end.charge : 0
        const required = end._tag === "Settle" ? end.required : 0
        const bad = wholeOrDie(charge, "charge") ?? wholeOrDie(required, "required")
        if (bad !== undefined) return bad
        if (charge > required || (ticket.holdId !== undefined && charge > ticket.held)) {
          return Effect.die(
            new RangeError(`charge ${charge} must be within the required ${required} and the hold of ${ticket.held}`)
          )
        }
        const answer = end._tag === "Release" ? undefined : end.answer
        type Row = { outcome: string; available: string | null }
        const args: FinishArgs = {
          key: ticket.keyId,
          hold_id: ticket.holdId ?? null,
          end: end._tag.toLowerCase(),
          charge,
          required,
          reason: end._tag === "Settle" ? end.reason : "",
          now: nowMs,
          idem_key: ticket.idempotency?.key ?? null,
          token: ticket.idempotency?.token ?? null,
          status: answer?.status ?? null,
          headers: answer?.headers ?? null,
          body: answer?.body ?? null,
          replay_until: nowMs + REPLAY_WINDOW_MS
        }
        return perRequest(
          database,
          "money.finish",
          () => ({ f: "finish", k: ticket.keyId, a: args }),
          batchRow<Row>,
          callByName<Row>(database, "md_finish", args, ["headers"])
        ).pipe(
          Effect.map((row): FinishResult => {
            switch (row?.outcome) {
              case "settle":
                // A charge says nothing exact about the balance now: forget what was known.
                see(ticket.keyId, { available: undefined })
                return { _tag: "Settled", charged: charge }
              case "expired":
                return { _tag: "Expired" }
              case "superseded":
                return { _tag: "Superseded" }
              case "insufficient": {
                const available = num(row.available ?? 0)
                see(ticket.keyId, { available })
                return { _tag: "Insufficient", available }
              }
              case "already":
                return { _tag: "AlreadyResolved" }
              default:
                return { _tag: "Released" }
            }
          })
        )
      }),
    charge: ({ keyId, required, charge, reason, nowMs, meter }) =>
      Effect.suspend(() => {
        const bad = wholeOrDie(charge, "charge") ?? wholeOrDie(required, "required")
        if (bad !== undefined) return bad
        if (charge > required) {
          return Effect.die(new RangeError(`charge ${charge} exceeds the required ${required}`))
        }
        type Row = { outcome: string; used: string; oldest: string | null; available: string | null }
        const args: ChargeArgs = {
          key: keyId,
          required,
          charge,
          reason,
          now: nowMs,
          scope: meter.scope,
          limit: meter.limit,
          bucket: bucketOf(nowMs),
          since: windowSince(nowMs)
        }
        return perRequest(
          database,
          "money.charge",
          () => ({ f: "charge", k: meter.scope, a: args }),
          batchRow<Row>,
          callByName<Row>(database, "md_charge", args)
        ).pipe(
          Effect.map((row): ChargeResult => {
            const outcome = row?.outcome ?? "rate_limited"
            const rate = rowWindow(row, meter.limit, nowMs, outcome !== "rate_limited")
            if (outcome === "rate_limited") {
              see(keyId, { rateBlockedUntilMs: rate.resetAtMs })
              return { _tag: "RateLimited", rate }
            }
            if (outcome === "key_revoked") return { _tag: "KeyRevoked", rate }
            const available = num(row?.available ?? 0)
            see(keyId, { available, rateBlockedUntilMs: 0 })
            return outcome === "charged"
              ? { _tag: "Charged", rate, available }
              : { _tag: "Insufficient", rate, available }
          })
        )
      }),
    balance: (keyId, nowMs) =>
      query("money.balance", () => sql<{ v: string }>`select md_available(${keyId}, ${nowMs}) as v`.execute(db)).pipe(
        Effect.map((r) => num(r.rows[0]?.v ?? 0)),
        Effect.tap((available) => Effect.sync(() => see(keyId, { available })))
      ),
    grant: (keyId, amount, reason, nowMs) =>
      Effect.suspend(() => {
        if (!Number.isSafeInteger(amount) || amount <= 0)
          return Effect.die(new RangeError(`grant must be a positive whole number, got ${amount}`))
        return query("money.grant", () =>
          sql<{ v: string }>`select md_grant(${keyId}, ${amount}, ${reason}, ${nowMs}) as v`.execute(db)
        ).pipe(Effect.map((r) => num(r.rows[0]?.v ?? 0)))
      }),
    topUp: (keyId, target, reason, nowMs) =>
      Effect.suspend(() => {
        if (!Number.isSafeInteger(target) || target < 0)
          return Effect.die(new RangeError(`top-up target must be a whole number >= 0, got ${target}`))
        return query("money.topUp", () =>
          sql<{ v: string }>`select md_top_up(${keyId}, ${target}, ${reason}, ${nowMs}) as v`.execute(db)
        ).pipe(
          Effect.map((r) => num(r.rows[0]?.v ?? 0)),
          Effect.tap(() => Effect.sync(() => see(keyId, { available: undefined })))
        )
      }),
    entries: (keyId) =>
      query("money.entries", () =>
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
    hint: (keyId) => hints.get(keyId) ?? { available: undefined, rateBlockedUntilMs: 0 }
  }
}
