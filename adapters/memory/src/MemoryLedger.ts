/**
 * In-memory twin of the ledger. Single-threaded JavaScript makes each method atomic; the PostgreSQL adapter
 * gets the same guarantees from row locks and single-statement updates. Every decision (hold covered, settle,
 * metered charge) is the core's money rule (`holdCovered`, `decideSettle`, `decideMetered`), the one the SQL
 * functions mirror.
 */
import {
  decideMetered,
  decideSettle,
  HOLD_LEASE_MS,
  type Hold,
  holdCovered,
  Ledger,
  type LedgerEntry,
  type LedgerHint,
  type SettleReceipt
} from "@market-data/core"
import { Effect, Layer } from "effect"
import { type MemoryRateCounter, makeMemoryRateCounter } from "./MemoryRateLimiter.ts"

/** A key's ledger entries, one column per field. */
interface Columns {
  readonly kinds: Array<LedgerEntry["kind"]>
  readonly amounts: Array<number>
  readonly reasons: Array<string>
  readonly atMs: Array<number>
}

/** Resolved holds are remembered this long past their expiry, so a late second resolution is recognised. */
const REMEMBER_RESOLVED_MS = 24 * 60 * 60 * 1000

/** The idempotency records a settlement with a receipt completes, synchronously (see `MemoryIdempotencyStore`). */
export interface ReceiptRecords {
  /** Whether the receipt's token still owns its in-flight record. */
  readonly owns: (receipt: SettleReceipt) => boolean
  /** Stores the receipt's answer in its record (called only when `owns` said so, in the same step). */
  readonly complete: (receipt: SettleReceipt, nowMs: number) => void
}

/**
 * `receipts`, given, lets a settlement with a receipt complete its idempotency record (or, superseded, charge
 * nothing) in the same synchronous step (atomic in a single JavaScript thread). `rate` is the rate counter a
 * metered charge spends its unit in (the one the rate limiter uses, in `memoryStores()`).
 */
export const makeMemoryLedger = (
  receipts?: ReceiptRecords,
  rate: MemoryRateCounter = makeMemoryRateCounter()
): Ledger["Service"] => {
  /**
   * Per key, the append-only entries in columns (a busy key books tens of thousands of charges a minute: an
   * object and a Date each would be ~150 bytes of old-generation heap per request); `entries` builds the
   * objects when asked.
   */
  const entries = new Map<string, Columns>()
  /** grants - charges per key. */
  const booked = new Map<string, number>()
  /** Unresolved holds per key, by ID. */
  const live = new Map<string, Map<string, Hold>>()
  /** Resolved hold IDs with the time after which they may be forgotten. */
  const resolved = new Map<string, number>()
  let nextHold = 0
  /** Per key: the end of the last rate refusal a metered charge met. */
  const blockedUntil = new Map<string, number>()
  /** The latest time any method was called with, for `hint` (which has no clock of its own). */
  let lastNowMs = 0

  const heldNow = (keyId: string, nowMs: number): number => {
    const mine = live.get(keyId)
    if (mine === undefined) return 0
    let sum = 0
    for (const h of mine.values()) if (h.expiresAtMs > nowMs) sum += h.amount
    return sum
  }
  const available = (keyId: string, nowMs: number) => (booked.get(keyId) ?? 0) - heldNow(keyId, nowMs)
  const append = (keyId: string, kind: LedgerEntry["kind"], amount: number, reason: string, atMs: number) => {
    let columns = entries.get(keyId)
    if (columns === undefined) {
      columns = { kinds: [], amounts: [], reasons: [], atMs: [] }
      entries.set(keyId, columns)
    }
    columns.kinds.push(kind)
    columns.amounts.push(amount)
    columns.reasons.push(reason)
    columns.atMs.push(atMs)
    booked.set(keyId, (booked.get(keyId) ?? 0) + (kind === "grant" ? amount : -amount))
  }
  const resolve = (hold: Hold) => {
    live.get(hold.keyId)?.delete(hold.id)
    resolved.set(hold.id, hold.expiresAtMs + REMEMBER_RESOLVED_MS)
  }
  const prune = (keyId: string, nowMs: number) => {
    const mine = live.get(keyId)
    // Expired holds stop counting; they are not "resolved", so a late settle is judged as expired.
    if (mine !== undefined) for (const h of mine.values()) if (h.expiresAtMs <= nowMs) mine.delete(h.id)
    if (resolved.size > 100_000) for (const [id, until] of resolved) if (until <= nowMs) resolved.delete(id)
  }
  const whole = (amount: number, what: string) => {
    if (!Number.isSafeInteger(amount) || amount < 0) {
      throw new RangeError(`${what} must be a whole number >= 0, got ${amount}`)
    }
  }

  return {
    balance: (keyId, nowMs) => Effect.sync(() => available(keyId, nowMs)),
    hold: (keyId, amount, nowMs) =>
      Effect.sync(() => {
        whole(amount, "hold")
        prune(keyId, nowMs)
        if (!holdCovered(available(keyId, nowMs), amount)) return undefined
        const hold: Hold = { id: `hold_${++nextHold}`, keyId, amount, expiresAtMs: nowMs + HOLD_LEASE_MS }
        const mine = live.get(keyId) ?? new Map<string, Hold>()
        mine.set(hold.id, hold)
        live.set(keyId, mine)
        return hold
      }),
    settle: (hold, charge, reason, nowMs, receipt) =>
      Effect.sync(() => {
        whole(charge, "charge")
        if (receipt !== undefined && receipts === undefined) {
          throw new Error("this ledger has no idempotency store to complete receipts in")
        }
        if (charge > hold.amount) throw new RangeError(`charge ${charge} exceeds the hold of ${hold.amount}`)
        const already = resolved.has(hold.id)
        const wasLive = !already && live.get(hold.keyId)?.has(hold.id) === true && hold.expiresAtMs > nowMs
        const decision = decideSettle({
          resolved: already,
          live: wasLive,
          charge,
          // The balance without this hold (a live one counts in `available`, an expired one does not).
          available: available(hold.keyId, nowMs) + (wasLive ? hold.amount : 0),
          receipt: receipt === undefined ? "none" : receipts?.owns(receipt) === true ? "owned" : "lost"
        })
        if (decision === "AlreadyResolved") return { _tag: "AlreadyResolved" as const }
        resolve(hold)
        if (decision !== "Settle") return { _tag: decision }
        if (receipt !== undefined) receipts?.complete(receipt, nowMs)
        if (charge > 0) append(hold.keyId, "charge", charge, reason, nowMs)
        return { _tag: "Settled" as const, charged: charge }
      }),
    release: (hold) =>
      Effect.sync(() => {
        if (!resolved.has(hold.id)) resolve(hold)
      }),
    grant: (keyId, amount, reason, nowMs) =>
      Effect.sync(() => {
        if (!Number.isSafeInteger(amount) || amount <= 0) {
          throw new RangeError(`grant must be a positive whole number, got ${amount}`)
        }
        append(keyId, "grant", amount, reason, nowMs)
        return available(keyId, nowMs)
      }),
    topUp: (keyId, target, reason, nowMs) =>
      Effect.sync(() => {
        whole(target, "top-up target")
        // One synchronous step: nothing else runs between the read and the grant (md_top_up locks the account).
        const short = target - available(keyId, nowMs)
        if (short <= 0) return 0
        append(keyId, "grant", short, reason, nowMs)
        return short
      }),
    entries: (keyId) =>
      Effect.sync(() => {
        const columns = entries.get(keyId)
        if (columns === undefined) return []
        return columns.kinds.map(
          (kind, i): LedgerEntry => ({
            keyId,
            kind,
            amount: columns.amounts[i] as number,
            reason: columns.reasons[i] as string,
            at: new Date(columns.atMs[i] as number)
          })
        )
      }),
    meteredCharge: (keyId, required, charge, reason, nowMs, meter) =>
      Effect.sync(() => {
        whole(required, "required")
        whole(charge, "charge")
        if (charge > required) throw new RangeError(`charge ${charge} exceeds the required ${required}`)
        lastNowMs = Math.max(lastNowMs, nowMs)
        const window = rate.consumeNow(meter.scope, meter.limit, nowMs)
        if (window.allowed) prune(keyId, nowMs)
        const before = window.allowed ? available(keyId, nowMs) : 0
        switch (decideMetered({ unitAdmitted: window.allowed, available: before, required })) {
          case "RateLimited":
            blockedUntil.set(keyId, window.resetAtMs)
            return { _tag: "RateLimited" as const, rate: window }
          case "Insufficient":
            blockedUntil.delete(keyId)
            return { _tag: "Insufficient" as const, rate: window, available: before }
          case "Charge":
            blockedUntil.delete(keyId)
            if (charge > 0) append(keyId, "charge", charge, reason, nowMs)
            return { _tag: "Charged" as const, rate: window, available: before - charge }
        }
      }),
    hint: (keyId): LedgerHint => ({
      // In memory the ledger is the truth, so the hint is exact.
      available: available(keyId, lastNowMs),
      rateBlockedUntilMs: blockedUntil.get(keyId) ?? 0
    })
  }
}

/** A ledger alone (settlements with receipts are refused: use `memoryStores()` for the full set). */
export const layerMemoryLedger: Layer.Layer<Ledger> = Layer.sync(Ledger)(() => makeMemoryLedger())
