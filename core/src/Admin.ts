/**
 * Operator actions on keys and credits, shared by the CLI, the start-up bootstrap and the embedded library.
 */
import { Clock, Effect } from "effect"
import type * as Digest from "effect/crypto/Digest"
import type * as SecureRandom from "effect/crypto/SecureRandom"
import { hashKey, KEY_FORMAT, type KeyRecord, KeyStore, mintKey } from "./Keys.ts"
import { MoneyStore } from "./MoneyStore.ts"

/** A problem with an operator's request; the message says what to change. */
export class AdminError {
  readonly _tag = "AdminError"
  readonly message: string
  constructor(message: string) {
    this.message = message
  }
}

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

const checkCredits = (credits: number): Effect.Effect<void, AdminError> =>
  Number.isSafeInteger(credits) && credits >= 0
    ? Effect.void
    : Effect.fail(new AdminError(`credits must be a whole number 0 or more, got ${credits}`))

/** Creates a key with an opening balance. The secret is returned once and never stored. */
export const createKey = (options: {
  readonly credits: number
  readonly label?: string | null
  readonly rateLimitPerMinute?: number | null
}): Effect.Effect<
  { readonly key: string; readonly record: KeyRecord; readonly balance: number },
  AdminError,
  KeyStore | MoneyStore | Digest.Digest | SecureRandom.SecureRandom
> =>
  Effect.gen(function* () {
    yield* checkCredits(options.credits)
    const rl = options.rateLimitPerMinute
    if (rl !== undefined && rl !== null && (!Number.isSafeInteger(rl) || rl < 1)) {
      return yield* Effect.fail(new AdminError(`rate limit must be a whole number 1 or more, got ${rl}`))
    }
    const at = yield* now
    const minted = yield* mintKey({ label: options.label ?? null, rateLimitPerMinute: rl ?? null, now: at })
    yield* (yield* KeyStore).insert(minted.record)
    const ledger = yield* MoneyStore
    const balance =
      options.credits > 0 ? yield* ledger.grant(minted.record.id, options.credits, "opening balance", at.getTime()) : 0
    return { key: minted.key, record: minted.record, balance }
  })

/**
 * Makes sure the given key exists with at least `credits` available (idempotent: run at every start). A
 * revoked bootstrap key stays revoked.
 */
export const ensureBootstrapKey = (
  secret: string,
  credits: number
): Effect.Effect<
  { readonly record: KeyRecord; readonly created: boolean; readonly granted: number },
  AdminError,
  KeyStore | MoneyStore | Digest.Digest | SecureRandom.SecureRandom
> =>
  Effect.gen(function* () {
    if (!KEY_FORMAT.test(secret)) {
      return yield* Effect.fail(
        new AdminError("MARKET_DATA_BOOTSTRAP_KEY must be `mdk_` followed by 32 letters or digits (base62)")
      )
    }
    yield* checkCredits(credits)
    const store = yield* KeyStore
    const ledger = yield* MoneyStore
    const at = yield* now
    const existing = yield* store.findByHash(yield* hashKey(secret))
    let record: KeyRecord
    let created = false
    if (existing._tag === "Some") {
      record = existing.value
    } else {
      // Instances starting together may both get here: the store keeps one key per hash and returns it.
      const minted = (yield* mintKey({ secret, label: "bootstrap", now: at })).record
      record = yield* store.insertIfAbsent(minted)
      created = record.id === minted.id
    }
    // One locked decision in the store: read-then-grant here would let two starting instances both grant.
    const granted = yield* ledger.topUp(record.id, credits, "bootstrap top-up", at.getTime())
    return { record, created, granted }
  })

/** Every key with its balance, oldest first. */
export const listKeys = Effect.gen(function* () {
  const store = yield* KeyStore
  const ledger = yield* MoneyStore
  const keys = yield* store.list
  const nowMs = yield* Clock.currentTimeMillis
  return yield* Effect.forEach(keys, (record) =>
    Effect.map(ledger.balance(record.id, nowMs), (balance) => ({ record, balance }))
  )
})

/** Revokes a key by its public ID. */
export const revokeKey = (id: string): Effect.Effect<KeyRecord, AdminError, KeyStore> =>
  Effect.gen(function* () {
    const store = yield* KeyStore
    const found = yield* store.findById(id)
    if (found._tag === "None") return yield* Effect.fail(new AdminError(`no key with ID ${JSON.stringify(id)}`))
    if (found.value.revokedAt !== null) {
      return yield* Effect.fail(
        new AdminError(`key ${id} was already revoked at ${found.value.revokedAt.toISOString()}`)
      )
    }
    const at = yield* now
    yield* store.revoke(id, at)
    return { ...found.value, revokedAt: at }
  })

/** Grants credits to a key by its public ID; returns the new balance. */
export const grantCredits = (
  id: string,
  credits: number,
  reason: string
): Effect.Effect<number, AdminError, KeyStore | MoneyStore> =>
  Effect.gen(function* () {
    if (!Number.isSafeInteger(credits) || credits <= 0) {
      return yield* Effect.fail(new AdminError(`credits must be a whole number 1 or more, got ${credits}`))
    }
    const found = yield* (yield* KeyStore).findById(id)
    if (found._tag === "None") return yield* Effect.fail(new AdminError(`no key with ID ${JSON.stringify(id)}`))
    return yield* (yield* MoneyStore).grant(id, credits, reason, yield* Clock.currentTimeMillis)
  })
