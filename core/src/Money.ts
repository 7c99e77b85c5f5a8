/**
 * The money rules of the paid path, as pure functions: every decision a store or the pipeline takes about a rate
 * unit, an idempotency record, a credit hold, a settlement or a metered charge is written here once. The memory
 * twin calls these functions; the PostgreSQL functions (adapters/postgres/src/sql/) take the same decisions in
 * SQL, branch for branch, and the store contract and money model suites check that both agree.
 *
 * This module imports nothing of the ports (`MoneyStore.ts` and `RateLimit.ts` import from it), so the
 * types both sides of a settlement share live here too.
 */
import { type ApiError, apiError } from "./Errors.ts"

/** How long an in-flight idempotency record holds its key without completing (a crash frees it then). */
export const IDEMPOTENCY_LEASE_MS = 60_000
/** How long a completed answer replays. */
export const REPLAY_WINDOW_MS = 24 * 60 * 60 * 1000
/** How long a credit hold lives without being settled or released. */
export const HOLD_LEASE_MS = 60_000

/** A completed answer as stored: transport-neutral status, result headers and exact body bytes. */
export interface StoredAnswer {
  readonly status: number
  /** Result headers only (lower-case names): content-type, etag, x-credits-charged, x-data-source. */
  readonly headers: { readonly [name: string]: string }
  readonly body: string
}

/** The rate-limit scope a metered step spends its unit in. */
export interface Meter {
  readonly scope: string
  readonly limit: number
}

// ---------------------------------------------------------------------------------------------------------------
// Rate unit
// ---------------------------------------------------------------------------------------------------------------

/**
 * Whether a request may spend a rate unit when `used` units of the last window are spent: one unit per request,
 * at most `limit` per window (SQL: `md_rate_consume` refuses when `used >= limit`).
 */
export const admitsUnit = (used: number, limit: number): boolean => used < limit

// ---------------------------------------------------------------------------------------------------------------
// Idempotency records
// ---------------------------------------------------------------------------------------------------------------

/** An idempotency record as every store keeps it (per API key and Idempotency-Key). */
export type IdempotencyRecord =
  | {
      readonly state: "in_flight"
      readonly fingerprint: string
      readonly token: string
      /** The end of its lease (`IDEMPOTENCY_LEASE_MS` after it began). */
      readonly expiresAtMs: number
    }
  | {
      readonly state: "stored"
      readonly fingerprint: string
      readonly answer: StoredAnswer
      /** The end of its replay window (`REPLAY_WINDOW_MS` after it completed). */
      readonly expiresAtMs: number
    }

/** Whether a record still holds its key at `nowMs`: an expired one (lease or replay window over) counts as absent. */
export const recordLive = (record: IdempotencyRecord | undefined, nowMs: number): record is IdempotencyRecord =>
  record !== undefined && record.expiresAtMs > nowMs

/** The end of the lease of a record begun at `nowMs`. */
export const leaseUntil = (nowMs: number): number => nowMs + IDEMPOTENCY_LEASE_MS
/** The end of the replay window of an answer stored at `nowMs`. */
export const replayUntil = (nowMs: number): number => nowMs + REPLAY_WINDOW_MS

/** What beginning under an Idempotency-Key finds. */
export type BeginDecision =
  /** The key is free (never used, or its record expired): take it in flight. */
  | { readonly _tag: "Start" }
  /** The same request is running under this key: `409 request_in_progress`. */
  | { readonly _tag: "InProgress" }
  /** The key is in use (running or stored) for a different request: `409 idempotency_conflict`. */
  | { readonly _tag: "Conflict" }
  /** The same request completed within 24 h: replay its answer. */
  | { readonly _tag: "Replay"; readonly answer: StoredAnswer }

/**
 * The contract's idempotency state table for a begin of `fingerprint` at `nowMs` on the key's current record.
 * A different request is a conflict whatever the record's state (so a conflict never reveals whether the other
 * request finished); the same one is in progress or replayed.
 */
export const decideBegin = (
  record: IdempotencyRecord | undefined,
  fingerprint: string,
  nowMs: number
): BeginDecision => {
  if (!recordLive(record, nowMs)) return { _tag: "Start" }
  if (record.fingerprint !== fingerprint) return { _tag: "Conflict" }
  return record.state === "in_flight" ? { _tag: "InProgress" } : { _tag: "Replay", answer: record.answer }
}

/**
 * Whether the attempt holding `token` still owns the record: only it may complete (store its answer) or abandon
 * (free the key). A retry that took an expired lease over has its own token, so a late attempt changes nothing.
 */
export const ownsRecord = (record: IdempotencyRecord | undefined, token: string): boolean =>
  record?.state === "in_flight" && record.token === token

/** The refusal a begin that did not start answers with, or undefined for `Start` and `Replay`. */
export const beginRefusal = (decision: { readonly _tag: string }): ApiError | undefined => {
  switch (decision._tag) {
    case "InProgress":
      return apiError("request_in_progress", "the same request is still running under this Idempotency-Key", {
        retryAfterSeconds: 1
      })
    case "Conflict":
      return apiError(
        "idempotency_conflict",
        "this Idempotency-Key was used within 24 h for a different request; use a new key"
      )
    default:
      return undefined
  }
}

/**
 * Whether an answer's status is transient (408, 425, 429, 5xx): its hold is released and its idempotency record
 * freed, so the retry executes; any other answer is stored and replays.
 */
export const isTransientStatus = (status: number): boolean =>
  status === 408 || status === 425 || status === 429 || status >= 500

// ---------------------------------------------------------------------------------------------------------------
// Credits: hold, settle, metered charge
// ---------------------------------------------------------------------------------------------------------------

/** Whether a hold of `amount` may be taken on `available` credits: the balance never goes below zero. */
export const holdCovered = (available: number, amount: number): boolean => available >= amount

/**
 * What a request is charged: what its handler reports delivered, never below 0 and never above what it held (or,
 * metered, the amount it had to be able to pay).
 */
export const chargeWithin = (reported: number, held: number): number => Math.min(Math.max(0, reported), held)

/** What a settlement does. */
export type SettleDecision =
  /** Charge the amount (possibly 0), resolve the hold, complete the receipt's record. */
  | "Settle"
  /** The hold had expired and the balance no longer covers the charge: release it, charge nothing. */
  | "Expired"
  /** The hold was already settled or released: nothing (a hold resolves once). */
  | "AlreadyResolved"
  /** The receipt's record belongs to another attempt (or is gone): release the hold, charge and store nothing. */
  | "Superseded"

/**
 * The settlement rule (SQL: `md_finish`, in the same order). A hold resolves once. A hold that outlived its lease
 * no longer reserves anything, so a positive charge is made only if the balance (without that hold) covers it
 * now. Then, with a receipt, the charge is made only by the attempt that still owns the idempotency record, so a
 * slow attempt finishing after its retry never charges the same request twice.
 */
export const decideSettle = (s: {
  /** The hold was settled or released already. */
  readonly resolved: boolean
  /** The hold is unresolved and its lease not over at the settlement time. */
  readonly live: boolean
  readonly charge: number
  /** Credits available at the settlement time, the hold itself not counted. */
  readonly available: number
  /** Without a receipt: "none"; with one: whether its token still owns the in-flight record. */
  readonly receipt: "none" | "owned" | "lost"
}): SettleDecision => {
  if (s.resolved) return "AlreadyResolved"
  if (!s.live && s.charge > 0 && s.available < s.charge) return "Expired"
  if (s.receipt === "lost") return "Superseded"
  return "Settle"
}

/** What a metered charge (rate unit and charge in one step, for a request already executed) does. */
export type MeteredDecision =
  /** No unit left in the window: nothing spent, nothing charged. */
  | "RateLimited"
  /** The unit is spent; the key is revoked: nothing charged. */
  | "KeyRevoked"
  /** The unit is spent; the balance does not cover the request's hold amount: nothing charged. */
  | "Insufficient"
  /** The unit is spent and the charge is made. */
  | "Charge"

/**
 * The metered rule (SQL: `md_charge`): the rate unit first, then the key's revocation; then the balance must cover what the request
 * would have held (`required`), not only what it is charged, exactly as the hold/settle path would have refused.
 */
export const decideMetered = (m: {
  /** Whether the rate unit was admitted (`admitsUnit` on the scope's window). */
  readonly unitAdmitted: boolean
  /** Whether the key is revoked. */
  readonly revoked: boolean
  /** Credits available after the unit (live holds counted). */
  readonly available: number
  readonly required: number
}): MeteredDecision =>
  !m.unitAdmitted
    ? "RateLimited"
    : m.revoked
      ? "KeyRevoked"
      : holdCovered(m.available, m.required)
        ? "Charge"
        : "Insufficient"

// ---------------------------------------------------------------------------------------------------------------
// Conditional requests
// ---------------------------------------------------------------------------------------------------------------

/**
 * Whether a paid request executes and compares its ETag before it holds or charges anything: a conditional
 * operation asked with `If-None-Match`. Its `304` costs nothing, so the balance must not stand in its way.
 */
export const comparesBeforeHold = (conditional: boolean, ifNoneMatch: string | undefined): boolean =>
  conditional && ifNoneMatch !== undefined

// ---------------------------------------------------------------------------------------------------------------
// The money port's three steps: admit, finish, charge (`MoneyStore.ts`)
// ---------------------------------------------------------------------------------------------------------------

/** What an admission does (SQL: `md_admit`, in the same order). */
export type AdmitDecision =
  /** No unit left: nothing spent. */
  | { readonly _tag: "RateLimited" }
  /** The unit is spent; the key is revoked: nothing begun, nothing held. */
  | { readonly _tag: "KeyRevoked" }
  /** The unit is spent; the Idempotency-Key refuses (`beginRefusal`) or replays: nothing held. */
  | { readonly _tag: "InProgress" }
  | { readonly _tag: "Conflict" }
  | { readonly _tag: "Replay"; readonly answer: StoredAnswer }
  /** The unit is spent; the balance does not cover the hold: nothing held, the Idempotency-Key left free. */
  | { readonly _tag: "Insufficient" }
  /** The unit is spent, the Idempotency-Key (if any) taken in flight, the hold taken. */
  | { readonly _tag: "Admit" }

/**
 * The admission rule: the rate unit first (a refused request spends nothing), then the key's revocation, then
 * the Idempotency-Key (`decideBegin`: a replay or a refusal holds nothing), then the hold (`holdCovered`), which
 * when refused leaves the key free so that a retry after a top-up executes.
 */
export const decideAdmit = (a: {
  /** Whether the rate unit was admitted (`admitsUnit` on the scope's window). */
  readonly unitAdmitted: boolean
  readonly revoked: boolean
  /** `decideBegin` on the key's record, or undefined without an Idempotency-Key. */
  readonly begin: BeginDecision | undefined
  /** Credits available (live holds counted). */
  readonly available: number
  readonly hold: number
}): AdmitDecision => {
  if (!a.unitAdmitted) return { _tag: "RateLimited" }
  if (a.revoked) return { _tag: "KeyRevoked" }
  if (a.begin !== undefined && a.begin._tag !== "Start") return a.begin
  return holdCovered(a.available, a.hold) ? { _tag: "Admit" } : { _tag: "Insufficient" }
}

/** How the pipeline ends an admitted request (`MoneyStore.finish`'s `end`). */
export type FinishKind = "Settle" | "Keep" | "Release"

/** What finishing does. */
export type FinishDecision =
  /** Charge (possibly 0), resolve the hold, store the answer in the owned record. */
  | "Settle"
  /** The hold outlived its lease and the balance no longer covers the charge: release, free the record. */
  | "Expired"
  /** The record belongs to another attempt: release the hold, charge and store nothing. */
  | "Superseded"
  /** Nothing was held and the balance does not cover `required`: charge nothing, free the record. */
  | "Insufficient"
  /** The hold was resolved already: charge nothing, free the record. */
  | "AlreadyResolved"
  /** Release the hold and store the failure's answer in the owned record. */
  | "Keep"
  /** Release the hold and free the owned record. */
  | "Release"

/**
 * The finishing rule (SQL: `md_finish`, in the same order). `Keep` and `Release` always release. A settlement
 * with a hold is `decideSettle`; without one (a conditional request compared first), the owner check comes first,
 * then the balance must cover `required` (`holdCovered`), exactly as the hold it did not take would have.
 */
export const decideFinish = (f: {
  readonly end: FinishKind
  /** The ticket's hold: none taken, unresolved and within its lease, unresolved past it, or resolved. */
  readonly hold: "none" | "live" | "expired" | "resolved"
  readonly charge: number
  readonly required: number
  /** Credits available at the finishing time, the ticket's own hold not counted. */
  readonly available: number
  /** Without an Idempotency-Key: "none"; with one: whether the ticket's token still owns the in-flight record. */
  readonly receipt: "none" | "owned" | "lost"
}): FinishDecision => {
  if (f.end !== "Settle") return f.end
  if (f.hold === "none") {
    if (f.receipt === "lost") return "Superseded"
    return holdCovered(f.available, f.required) ? "Settle" : "Insufficient"
  }
  const settle = decideSettle({
    resolved: f.hold === "resolved",
    live: f.hold === "live",
    charge: f.charge,
    available: f.available,
    receipt: f.receipt
  })
  return settle === "AlreadyResolved" ? "AlreadyResolved" : settle
}
