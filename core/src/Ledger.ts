/**
 * The credit ledger port. Credits are whole numbers (1 credit = 1 US cent).
 *
 * Invariants every implementation keeps, also under concurrency:
 * - entries (grants and charges) are append-only; the balance is grants - charges - live holds;
 * - the available balance never goes below zero: a hold that cannot be covered is refused;
 * - every hold resolves at most once (settled or released); a hold older than its lease counts as released
 *   (a crashed request never keeps credits), and balance reads ignore expired holds without waiting for a
 *   sweeper.
 */
import { Context, type Effect } from "effect"
import type { Meter, StoredAnswer } from "./Money.ts"
import type { RateWindow } from "./RateLimit.ts"

// The hold lease and the metered step's scope are the money rules' (Money.ts, which also decides settlements and
// metered charges); re-exported here for the port's users.
export { HOLD_LEASE_MS, type Meter } from "./Money.ts"

import type { LedgerEntry } from "./MoneyStore.ts"

/** A reservation of credits for one request. */
export interface Hold {
  readonly id: string
  readonly keyId: string
  readonly amount: number
  readonly expiresAtMs: number
}

/** The outcome of settling a hold. */
export type SettleResult =
  /** Charged `amount` (possibly 0, which charges nothing). */
  | { readonly _tag: "Settled"; readonly charged: number }
  /** The hold had expired and the balance no longer covers the charge: nothing charged. */
  | { readonly _tag: "Expired" }
  /** The hold was already settled or released: nothing charged (a hold resolves once). */
  | { readonly _tag: "AlreadyResolved" }
  /**
   * The receipt's idempotency record no longer belongs to this attempt (its lease ran out and a retry took
   * it over, or that retry already completed): nothing charged, the hold released, nothing stored. Without
   * this, a slow attempt finishing after its retry would charge the same request twice.
   */
  | { readonly _tag: "Superseded" }

/**
 * The idempotency record to complete in the same transaction as a settlement, so that a crash can never
 * leave a charge without its stored answer (the retry would then run and charge again).
 */
export interface SettleReceipt {
  readonly keyId: string
  readonly idempotencyKey: string
  readonly token: string
  readonly answer: StoredAnswer
}

/** The outcome of a metered charge: the rate window after it, and whether the credits were charged. */
export type MeteredChargeResult =
  /** No unit was left in the window: nothing spent, nothing charged. */
  | { readonly _tag: "RateLimited"; readonly rate: RateWindow }
  /** The unit was spent; the available balance did not cover `required`: nothing charged. */
  | { readonly _tag: "Insufficient"; readonly rate: RateWindow; readonly available: number }
  /** The unit was spent and `charge` credits were charged. */
  | { readonly _tag: "Charged"; readonly rate: RateWindow; readonly available: number }

/**
 * What this process last saw of a key: its available balance and the end of a rate-limit refusal. Possibly
 * stale (other processes spend too); used only to choose the metered path, never to decide a charge.
 */
export interface LedgerHint {
  readonly available: number | undefined
  /** The scope had no unit left until this time (epoch ms); 0 when not known to be exhausted. */
  readonly rateBlockedUntilMs: number
}

export class Ledger extends Context.Service<
  Ledger,
  {
    /** Credits available now: grants - charges - live holds. */
    readonly balance: (keyId: string, nowMs: number) => Effect.Effect<number>
    /** Reserves `amount` if the available balance covers it; `undefined` when it does not. */
    readonly hold: (keyId: string, amount: number, nowMs: number) => Effect.Effect<Hold | undefined>
    /**
     * Charges `charge` (0 <= charge <= held) and resolves the hold. A hold that expired meanwhile is charged
     * only if the balance still covers it, atomically; otherwise `Expired` and nothing is charged. With a
     * receipt, the idempotency record is completed in the same transaction when the charge is made, and
     * nothing is charged (`Superseded`) unless the receipt's token still owns the in-flight record.
     */
    readonly settle: (
      hold: Hold,
      charge: number,
      reason: string,
      nowMs: number,
      receipt?: SettleReceipt
    ) => Effect.Effect<SettleResult>
    /** Resolves the hold without charging. Releasing an already resolved or expired hold does nothing. */
    readonly release: (hold: Hold) => Effect.Effect<void>
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
    /**
     * One atomic step for a request whose result is already in hand: spends one rate unit in `meter`'s scope
     * (refused when none is left, charging nothing), then, if the available balance covers `required`,
     * charges `charge` (0 <= charge <= required). Equivalent to rate limit + hold(required) + settle(charge),
     * in one round trip. The balance never goes below zero, also under concurrency.
     */
    readonly meteredCharge: (
      keyId: string,
      required: number,
      charge: number,
      reason: string,
      nowMs: number,
      meter: Meter
    ) => Effect.Effect<MeteredChargeResult>
    /** What this process last saw of the key (see `LedgerHint`); synchronous, no I/O. */
    readonly hint: (keyId: string) => LedgerHint
  }
>()("market-data/core/Ledger") {}
