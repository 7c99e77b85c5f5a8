/**
 * The money port: everything the paid path asks of a store, in three calls.
 *
 *   admit   a request with a hold: rate unit, key not revoked, Idempotency-Key begun, credits held
 *   finish  it: charge within the hold and store its answer, or keep a failure's answer, or release
 *   charge  a request executed first (no Idempotency-Key): rate unit and charge
 *
 * Each call is one atomic step (one SQL statement on PostgreSQL). Every decision in them is a pure function of
 * `Money.ts` (`decideAdmit`, `decideFinish`, `decideMetered` and the rules they use); the memory twin calls those
 * functions and the SQL functions `md_admit`, `md_finish` and `md_charge` mirror them branch for branch.
 *
 * Credits are whole numbers (1 credit = 1 US cent). Invariants every implementation keeps, also under
 * concurrency and across crashes:
 * - entries (grants and charges) are append-only; the available balance is grants - charges - live holds and
 *   never goes below zero;
 * - a hold resolves at most once (settled or released); a hold older than its lease (`HOLD_LEASE_MS`) counts as
 *   released, so a crashed request never keeps credits;
 * - a request under an Idempotency-Key is charged at most once per 24 h: its charge and its stored answer commit
 *   together, and only the attempt that owns the in-flight record may make them.
 *
 * `balance`, `grant`, `topUp` and `entries` serve the operator (admin, CLI, `usage`); `hint` is this process's advisory
 * memory of a key, used only to choose the metered path.
 */
import { Context, type Effect } from "effect"
import { StoreUnavailable } from "./Errors.ts"
import type { Meter, StoredAnswer } from "./Money.ts"
import type { RateWindow } from "./RateLimit.ts"

export interface LedgerEntry {
  readonly keyId: string
  readonly kind: "grant" | "charge"
  /** Positive for grants and charges alike; `kind` says which way it moved. */
  readonly amount: number
  readonly reason: string
  readonly at: Date
}

/** What `admit` is asked to do for one paid request. */
export interface AdmitRequest {
  readonly keyId: string
  readonly nowMs: number
  /** The scope and limit the request's rate unit is spent in. */
  readonly meter: Meter
  /**
   * Credits to hold (a whole number >= 0). 0 holds nothing now: a conditional request that compares its ETag
   * before holding, whose charge `finish` then makes only if the balance covers its `required` amount.
   */
  readonly hold: number
  /** The request's Idempotency-Key and its fingerprint (`canonicalRequest`), when it sent one. */
  readonly idempotency?: { readonly key: string; readonly fingerprint: string }
}

/** What an admitted request carries to `finish`: what it holds and the idempotency record it owns. */
export interface Ticket {
  readonly keyId: string
  /** The hold's ID; undefined when nothing was held (`hold: 0`). */
  readonly holdId: string | undefined
  /** Credits held (0 without a hold). */
  readonly held: number
  /** The end of the hold's lease (epoch ms); the admission time without a hold. */
  readonly holdExpiresAtMs: number
  /** The Idempotency-Key this request began under and the token proving it owns the in-flight record. */
  readonly idempotency: { readonly key: string; readonly token: string } | undefined
}

/** The outcome of `admit`. Every outcome but `RateLimited` spent the request's rate unit. */
export type AdmitResult =
  /** No unit was left in the window: nothing spent, nothing begun, nothing held. */
  | { readonly _tag: "RateLimited"; readonly rate: RateWindow }
  /** The key is revoked: nothing begun, nothing held. */
  | { readonly _tag: "KeyRevoked"; readonly rate: RateWindow }
  /** The same request is running under this Idempotency-Key (`409 request_in_progress`). */
  | { readonly _tag: "InProgress"; readonly rate: RateWindow }
  /** The Idempotency-Key is in use for a different request (`409 idempotency_conflict`). */
  | { readonly _tag: "Conflict"; readonly rate: RateWindow }
  /** The same request completed within 24 h: this is its stored answer; nothing held. */
  | { readonly _tag: "Replay"; readonly rate: RateWindow; readonly answer: StoredAnswer }
  /** The balance does not cover the hold: nothing held, and the Idempotency-Key left free for a retry. */
  | { readonly _tag: "Insufficient"; readonly rate: RateWindow; readonly available: number }
  /** Begun and held: carry the ticket to `finish`. */
  | { readonly _tag: "Admitted"; readonly rate: RateWindow; readonly ticket: Ticket }

/** How an admitted request ends. */
export type FinishEnd =
  /**
   * It delivered `answer`, charging `charge` (0 <= charge <= required; with a hold, also <= held). With a hold
   * the charge is made within it; without one (`hold: 0`) only if the available balance covers `required`. With
   * an Idempotency-Key, `answer` is stored in the same transaction, and only if the ticket still owns the record.
   */
  | {
      readonly _tag: "Settle"
      readonly charge: number
      readonly required: number
      readonly reason: string
      readonly answer: StoredAnswer
    }
  /** A failure that is not transient: release the hold, store `answer` (it replays) if the ticket owns the record. */
  | { readonly _tag: "Keep"; readonly answer: StoredAnswer }
  /** A transient outcome, a `304`, an interruption: release the hold, free the record the ticket owns. */
  | { readonly _tag: "Release" }

/** The outcome of `finish`. */
export type FinishResult =
  /** Charged `charged` (possibly 0) and, with an Idempotency-Key, stored the answer. */
  | { readonly _tag: "Settled"; readonly charged: number }
  /** The hold had outlived its lease and the balance no longer covers the charge: nothing charged, record freed. */
  | { readonly _tag: "Expired" }
  /**
   * The ticket no longer owns its idempotency record (its lease ran out and a retry took it over): nothing
   * charged, nothing stored, the hold released. A slow attempt never charges the same request twice.
   */
  | { readonly _tag: "Superseded" }
  /** Nothing was held and the balance does not cover `required`: nothing charged, record freed. */
  | { readonly _tag: "Insufficient"; readonly available: number }
  /** The hold was already settled or released (a hold resolves once): nothing charged, nothing stored. */
  | { readonly _tag: "AlreadyResolved" }
  /** `Keep` or `Release` done: nothing charged. */
  | { readonly _tag: "Released" }

/** What `charge` is asked to do: the metered step of a request whose result is already in hand. */
export interface ChargeRequest {
  readonly keyId: string
  /** What the request would have held: the balance must cover it, as a hold would have required. */
  readonly required: number
  /** What it is charged (0 <= charge <= required). */
  readonly charge: number
  readonly reason: string
  readonly nowMs: number
  readonly meter: Meter
}

/** The outcome of `charge`. */
export type ChargeResult =
  /** No unit was left in the window: nothing spent, nothing charged. */
  | { readonly _tag: "RateLimited"; readonly rate: RateWindow }
  /** The unit was spent; the key is revoked: nothing charged. */
  | { readonly _tag: "KeyRevoked"; readonly rate: RateWindow }
  /** The unit was spent; the available balance did not cover `required`: nothing charged. */
  | { readonly _tag: "Insufficient"; readonly rate: RateWindow; readonly available: number }
  /** The unit was spent and `charge` credits were charged; `available` after it. */
  | { readonly _tag: "Charged"; readonly rate: RateWindow; readonly available: number }

/**
 * What this process last saw of a key: its available balance and the end of a rate-limit refusal. Possibly
 * stale (other processes spend too); used only to choose the metered path, never to decide a charge.
 */
export interface MoneyHint {
  readonly available: number | undefined
  /** The scope had no unit left until this time (epoch ms); 0 when not known to be exhausted. */
  readonly rateBlockedUntilMs: number
}

export class MoneyStore extends Context.Service<
  MoneyStore,
  {
    /**
     * One atomic step: spends the rate unit in `meter`'s scope, checks the key is not revoked, begins under the
     * Idempotency-Key (`decideBegin`) and takes the hold (`holdCovered`), in that order (`decideAdmit`).
     */
    readonly admit: (a: AdmitRequest) => Effect.Effect<AdmitResult>
    /** Ends an admitted request, in one atomic step (`decideFinish`). Finishing a ticket twice charges once. */
    readonly finish: (ticket: Ticket, end: FinishEnd, nowMs: number) => Effect.Effect<FinishResult>
    /**
     * One atomic step for a request without an Idempotency-Key whose result is already in hand: spends the rate
     * unit, checks the key is not revoked, then charges if the available balance covers `required`
     * (`decideMetered`). Equivalent to admit(hold: required) + finish(Settle), in one round trip.
     */
    readonly charge: (c: ChargeRequest) => Effect.Effect<ChargeResult>
    /** Credits available now: grants - charges - live holds. */
    readonly balance: (keyId: string, nowMs: number) => Effect.Effect<number>
    /** Adds credits; returns the new available balance. `amount` must be a positive whole number. */
    readonly grant: (keyId: string, amount: number, reason: string, nowMs: number) => Effect.Effect<number>
    /**
     * Grants what is missing for the available balance to reach `target` (a whole number >= 0) and returns the
     * amount granted (0 when the balance already reaches it). Read and grant are one atomic decision per key:
     * callers topping up the same key at once grant the shortfall once between them, never once each.
     */
    readonly topUp: (keyId: string, target: number, reason: string, nowMs: number) => Effect.Effect<number>
    /** The key's entries, oldest first. */
    readonly entries: (keyId: string) => Effect.Effect<ReadonlyArray<LedgerEntry>>
    /** What this process last saw of the key (see `MoneyHint`); synchronous, no I/O. */
    readonly hint: (keyId: string) => MoneyHint
  }
>()("market-data/core/MoneyStore") {}

/**
 * The store was lost after an admission was sent (`admit` died): the admission may have committed. `admitted` is
 * the ticket it would have made (its hold, its in-flight idempotency record), so that `ReleaseAfterOutage` can
 * release it once the store is back. Answered like any `StoreUnavailable` (503, retryable).
 */
export class AdmissionUnconfirmed extends StoreUnavailable {
  readonly admitted: Ticket
  constructor(args: { readonly operation: string; readonly cause: unknown; readonly admitted: Ticket }) {
    super({ operation: args.operation, cause: args.cause })
    this.admitted = args.admitted
  }
}
