/**
 * In-memory twin of the money store: one state object (entries, holds, idempotency records; the rate buckets in
 * the counter it shares with the rate limiter). Single-threaded JavaScript makes each call atomic; the
 * PostgreSQL adapter gets the same guarantees from one SQL function per call. Every decision is the core's money
 * rule (`decideAdmit`, `decideFinish`, `decideMetered`), the one those SQL functions mirror.
 */
import {
  type AdmitResult,
  type ChargeResult,
  decideAdmit,
  decideBegin,
  decideFinish,
  decideMetered,
  type FinishResult,
  HOLD_LEASE_MS,
  type IdempotencyRecord,
  type LedgerEntry,
  leaseUntil,
  type MoneyHint,
  MoneyStore,
  ownsRecord,
  recordLive,
  replayUntil,
  type StoredAnswer,
  type Ticket
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

/** An unresolved hold. */
interface Hold {
  readonly keyId: string
  readonly amount: number
  readonly expiresAtMs: number
}

/** Resolved holds are remembered this long past their expiry, so a late second resolution is recognised. */
const REMEMBER_RESOLVED_MS = 24 * 60 * 60 * 1000
/** Idempotency records are swept of expired ones every this many admissions. */
const SWEEP_EVERY = 10_000

const whole = (amount: number, what: string) => {
  if (!Number.isSafeInteger(amount) || amount < 0) {
    throw new RangeError(`${what} must be a whole number >= 0, got ${amount}`)
  }
}

/**
 * The memory money store. `rate` is the rate counter its units are spent in (the one the rate limiter uses, in
 * `memoryStores()`); `revoked` says whether a key is revoked (the memory key store's, in `memoryStores()`).
 */
export const makeMemoryMoneyStore = (
  rate: MemoryRateCounter = makeMemoryRateCounter(),
  revoked: (keyId: string) => boolean = () => false
): MoneyStore["Service"] => {
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
  /** Idempotency records by key ID and Idempotency-Key. */
  const records = new Map<string, IdempotencyRecord>()
  let nextHold = 0
  let tokens = 0
  let sinceSweep = 0
  /** Per key: the end of the last rate refusal met. */
  const blockedUntil = new Map<string, number>()
  /** The latest time any call was made with, for `hint` (which has no clock of its own). */
  let lastNowMs = 0

  const recordId = (keyId: string, key: string) => `${keyId}\u0000${key}`
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
  /** Resolves the ticket's hold (settled or released); a no-op without one or when already resolved. */
  const resolve = (ticket: Ticket) => {
    if (ticket.holdId === undefined || resolved.has(ticket.holdId)) return
    live.get(ticket.keyId)?.delete(ticket.holdId)
    resolved.set(ticket.holdId, ticket.holdExpiresAtMs + REMEMBER_RESOLVED_MS)
  }
  const prune = (keyId: string, nowMs: number) => {
    const mine = live.get(keyId)
    // Expired holds stop counting; they are not "resolved", so a late finish is judged as expired.
    if (mine !== undefined) for (const [id, h] of mine) if (h.expiresAtMs <= nowMs) mine.delete(id)
    if (resolved.size > 100_000) for (const [id, until] of resolved) if (until <= nowMs) resolved.delete(id)
  }
  const sweep = (nowMs: number) => {
    if (++sinceSweep < SWEEP_EVERY) return
    sinceSweep = 0
    for (const [k, r] of records) if (!recordLive(r, nowMs)) records.delete(k)
  }
  const holdStateOf = (ticket: Ticket, nowMs: number): "none" | "live" | "expired" | "resolved" => {
    if (ticket.holdId === undefined) return "none"
    if (resolved.has(ticket.holdId)) return "resolved"
    const hold = live.get(ticket.keyId)?.get(ticket.holdId)
    return hold !== undefined && hold.expiresAtMs > nowMs ? "live" : "expired"
  }

  return {
    admit: ({ keyId, nowMs, meter, hold, idempotency }) =>
      Effect.sync((): AdmitResult => {
        whole(hold, "hold")
        lastNowMs = Math.max(lastNowMs, nowMs)
        const window = rate.consumeNow(meter.scope, meter.limit, nowMs)
        if (window.allowed) {
          prune(keyId, nowMs)
          sweep(nowMs)
        }
        const k = idempotency === undefined ? undefined : recordId(keyId, idempotency.key)
        const decision = decideAdmit({
          unitAdmitted: window.allowed,
          revoked: window.allowed && revoked(keyId),
          begin: k === undefined ? undefined : decideBegin(records.get(k), idempotency?.fingerprint ?? "", nowMs),
          available: window.allowed ? available(keyId, nowMs) : 0,
          hold
        })
        if (decision._tag === "RateLimited") {
          blockedUntil.set(keyId, window.resetAtMs)
          return { _tag: "RateLimited", rate: window }
        }
        blockedUntil.delete(keyId)
        switch (decision._tag) {
          case "KeyRevoked":
          case "InProgress":
          case "Conflict":
            return { _tag: decision._tag, rate: window }
          case "Replay":
            return { _tag: "Replay", rate: window, answer: decision.answer }
          case "Insufficient":
            return { _tag: "Insufficient", rate: window, available: available(keyId, nowMs) }
          case "Admit": {
            let token: string | undefined
            if (k !== undefined && idempotency !== undefined) {
              token = `t${++tokens}`
              records.set(k, {
                state: "in_flight",
                fingerprint: idempotency.fingerprint,
                token,
                expiresAtMs: leaseUntil(nowMs)
              })
            }
            const expiresAtMs = hold > 0 ? nowMs + HOLD_LEASE_MS : nowMs
            let holdId: string | undefined
            if (hold > 0) {
              holdId = `hold_${++nextHold}`
              const mine = live.get(keyId) ?? new Map<string, Hold>()
              mine.set(holdId, { keyId, amount: hold, expiresAtMs })
              live.set(keyId, mine)
            }
            const ticket: Ticket = {
              keyId,
              holdId,
              held: hold > 0 ? hold : 0,
              holdExpiresAtMs: expiresAtMs,
              idempotency:
                idempotency === undefined || token === undefined ? undefined : { key: idempotency.key, token }
            }
            return { _tag: "Admitted", rate: window, ticket }
          }
        }
      }),
    finish: (ticket, end, nowMs) =>
      Effect.sync((): FinishResult => {
        const charge = end._tag === "Settle" ? end.charge : 0
        const required = end._tag === "Settle" ? end.required : 0
        whole(charge, "charge")
        whole(required, "required")
        if (charge > required) throw new RangeError(`charge ${charge} exceeds the required ${required}`)
        if (ticket.holdId !== undefined && charge > ticket.held) {
          throw new RangeError(`charge ${charge} exceeds the hold of ${ticket.held}`)
        }
        lastNowMs = Math.max(lastNowMs, nowMs)
        const hold = holdStateOf(ticket, nowMs)
        const k = ticket.idempotency === undefined ? undefined : recordId(ticket.keyId, ticket.idempotency.key)
        const owned = k !== undefined && ownsRecord(records.get(k), ticket.idempotency?.token ?? "")
        const without = available(ticket.keyId, nowMs) + (hold === "live" ? ticket.held : 0)
        const decision = decideFinish({
          end: end._tag,
          hold,
          charge,
          required,
          available: without,
          receipt: k === undefined ? "none" : owned ? "owned" : "lost"
        })
        const free = () => {
          if (owned && k !== undefined) records.delete(k)
        }
        /** Completes the owned record with `answer`: it replays for 24 h. */
        const store = (answer: StoredAnswer) => {
          const found = records.get(k ?? "")
          if (!owned || k === undefined || found === undefined) return
          records.set(k, { state: "stored", fingerprint: found.fingerprint, answer, expiresAtMs: replayUntil(nowMs) })
        }
        switch (decision) {
          case "Settle": {
            resolve(ticket)
            if (end._tag === "Settle") {
              store(end.answer)
              if (charge > 0) append(ticket.keyId, "charge", charge, end.reason, nowMs)
            }
            return { _tag: "Settled", charged: charge }
          }
          case "Keep": {
            resolve(ticket)
            if (end._tag === "Keep") store(end.answer)
            return { _tag: "Released" }
          }
          case "Release":
            resolve(ticket)
            free()
            return { _tag: "Released" }
          case "Expired":
            resolve(ticket)
            free()
            return { _tag: "Expired" }
          case "Superseded":
            resolve(ticket)
            return { _tag: "Superseded" }
          case "Insufficient":
            free()
            return { _tag: "Insufficient", available: without }
          case "AlreadyResolved":
            free()
            return { _tag: "AlreadyResolved" }
        }
      }),
    charge: ({ keyId, required, charge, reason, nowMs, meter }) =>
      Effect.sync((): ChargeResult => {
        whole(required, "required")
        whole(charge, "charge")
        if (charge > required) throw new RangeError(`charge ${charge} exceeds the required ${required}`)
        lastNowMs = Math.max(lastNowMs, nowMs)
        const window = rate.consumeNow(meter.scope, meter.limit, nowMs)
        if (window.allowed) prune(keyId, nowMs)
        const before = window.allowed ? available(keyId, nowMs) : 0
        const decision = decideMetered({
          unitAdmitted: window.allowed,
          revoked: window.allowed && revoked(keyId),
          available: before,
          required
        })
        if (decision === "RateLimited") {
          blockedUntil.set(keyId, window.resetAtMs)
          return { _tag: "RateLimited", rate: window }
        }
        blockedUntil.delete(keyId)
        switch (decision) {
          case "KeyRevoked":
            return { _tag: "KeyRevoked", rate: window }
          case "Insufficient":
            return { _tag: "Insufficient", rate: window, available: before }
          case "Charge":
            if (charge > 0) append(keyId, "charge", charge, reason, nowMs)
            return { _tag: "Charged", rate: window, available: before - charge }
        }
      }),
    balance: (keyId, nowMs) => Effect.sync(() => available(keyId, nowMs)),
    grant: (keyId, amount, reason, nowMs) =>
      Effect.sync(() => {
        if (!Number.isSafeInteger(amount) || amount <= 0) {
          throw new RangeError(`grant must be a positive whole number, got ${amount}`)
        }
        lastNowMs = Math.max(lastNowMs, nowMs)
        append(keyId, "grant", amount, reason, nowMs)
        return available(keyId, nowMs)
      }),
    topUp: (keyId, target, reason, nowMs) =>
      Effect.sync(() => {
        whole(target, "top-up target")
        lastNowMs = Math.max(lastNowMs, nowMs)
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
    hint: (keyId): MoneyHint => ({
      // In memory the store is the truth, so the hint is exact.
      available: available(keyId, lastNowMs),
      rateBlockedUntilMs: blockedUntil.get(keyId) ?? 0
    })
  }
}

/** A money store alone (its own rate counter, no key revocations: use `memoryStores()` for the wired set). */
export const layerMemoryMoneyStore: Layer.Layer<MoneyStore> = Layer.sync(MoneyStore)(() => makeMemoryMoneyStore())
