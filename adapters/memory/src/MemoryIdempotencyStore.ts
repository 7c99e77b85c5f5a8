/**
 * In-memory twin of the idempotency store: a map of records, every decision taken by the core's money rules
 * (`decideBegin`, `ownsRecord`, `recordLive`; the SQL of `md_rate_begin` and `md_settle` takes the same ones).
 */
import {
  type BeginResult,
  decideBegin,
  type IdempotencyRecord,
  IdempotencyStore,
  leaseUntil,
  ownsRecord,
  recordLive,
  replayUntil,
  type StoredAnswer
} from "@market-data/core"
import { Effect, Layer } from "effect"

const SWEEP_EVERY = 10_000

/**
 * The memory idempotency store, plus synchronous steps for the memory ledger's atomic settlement: whether a token
 * still owns its record, and completing it.
 */
export interface MemoryIdempotencyStore {
  readonly service: IdempotencyStore["Service"]
  /** Whether `token` still owns the record in flight (`ownsRecord`). */
  readonly ownsNow: (keyId: string, key: string, token: string) => boolean
  /** Completes the record if `token` still owns it in flight; says whether it did. */
  readonly completeNow: (keyId: string, key: string, token: string, answer: StoredAnswer, nowMs: number) => boolean
}

export const makeMemoryIdempotencyStore = (): IdempotencyStore["Service"] => makeMemoryIdempotency().service

export const makeMemoryIdempotency = (): MemoryIdempotencyStore => {
  const records = new Map<string, IdempotencyRecord>()
  let tokens = 0
  let sinceSweep = 0
  const id = (keyId: string, key: string) => `${keyId}\u0000${key}`
  const sweep = (nowMs: number) => {
    if (++sinceSweep < SWEEP_EVERY) return
    sinceSweep = 0
    for (const [k, e] of records) if (!recordLive(e, nowMs)) records.delete(k)
  }
  const ownsNow = (keyId: string, key: string, token: string) => ownsRecord(records.get(id(keyId, key)), token)
  const completeNow = (keyId: string, key: string, token: string, answer: StoredAnswer, nowMs: number) => {
    const k = id(keyId, key)
    const found = records.get(k)
    if (found === undefined || !ownsRecord(found, token)) return false
    records.set(k, { state: "stored", fingerprint: found.fingerprint, answer, expiresAtMs: replayUntil(nowMs) })
    return true
  }
  const service: IdempotencyStore["Service"] = {
    begin: (keyId, key, fingerprint, nowMs) =>
      Effect.sync((): BeginResult => {
        sweep(nowMs)
        const k = id(keyId, key)
        const decision = decideBegin(records.get(k), fingerprint, nowMs)
        if (decision._tag !== "Start") return decision
        const token = `t${++tokens}`
        records.set(k, { state: "in_flight", fingerprint, token, expiresAtMs: leaseUntil(nowMs) })
        return { _tag: "Started", token }
      }),
    complete: (keyId, key, token, answer, nowMs) =>
      Effect.sync(() => {
        completeNow(keyId, key, token, answer, nowMs)
      }),
    abandon: (keyId, key, token) =>
      Effect.sync(() => {
        const k = id(keyId, key)
        if (ownsRecord(records.get(k), token)) records.delete(k)
      })
  }
  return { service, ownsNow, completeNow }
}

export const layerMemoryIdempotencyStore: Layer.Layer<IdempotencyStore> =
  Layer.sync(IdempotencyStore)(makeMemoryIdempotencyStore)
