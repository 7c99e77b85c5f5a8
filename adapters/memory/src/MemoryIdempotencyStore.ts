/** In-memory twin of the idempotency store. */
import {
  type BeginResult,
  IDEMPOTENCY_LEASE_MS,
  IdempotencyStore,
  REPLAY_WINDOW_MS,
  type StoredAnswer
} from "@market-data/core"
import { Effect, Layer } from "effect"

type Entry =
  | { readonly state: "in_flight"; readonly fingerprint: string; readonly token: string; readonly leaseUntilMs: number }
  | {
      readonly state: "stored"
      readonly fingerprint: string
      readonly answer: StoredAnswer
      readonly expiresAtMs: number
    }

const SWEEP_EVERY = 10_000

/** The memory idempotency store, plus a synchronous `complete` for the memory ledger's atomic settlement. */
export interface MemoryIdempotencyStore {
  readonly service: IdempotencyStore["Service"]
  /** Completes the record if `token` still owns it in flight; says whether it did. */
  readonly completeNow: (keyId: string, key: string, token: string, answer: StoredAnswer, nowMs: number) => boolean
}

export const makeMemoryIdempotencyStore = (): IdempotencyStore["Service"] => makeMemoryIdempotency().service

export const makeMemoryIdempotency = (): MemoryIdempotencyStore => {
  const records = new Map<string, Entry>()
  let tokens = 0
  let sinceSweep = 0
  const id = (keyId: string, key: string) => `${keyId}\u0000${key}`
  const expired = (e: Entry, nowMs: number) =>
    e.state === "in_flight" ? e.leaseUntilMs <= nowMs : e.expiresAtMs <= nowMs
  const sweep = (nowMs: number) => {
    if (++sinceSweep < SWEEP_EVERY) return
    sinceSweep = 0
    for (const [k, e] of records) if (expired(e, nowMs)) records.delete(k)
  }
  const completeNow = (keyId: string, key: string, token: string, answer: StoredAnswer, nowMs: number) => {
    const k = id(keyId, key)
    const found = records.get(k)
    if (found?.state !== "in_flight" || found.token !== token) return false
    records.set(k, { state: "stored", fingerprint: found.fingerprint, answer, expiresAtMs: nowMs + REPLAY_WINDOW_MS })
    return true
  }
  const service: IdempotencyStore["Service"] = {
    begin: (keyId, key, fingerprint, nowMs) =>
      Effect.sync((): BeginResult => {
        sweep(nowMs)
        const k = id(keyId, key)
        const found = records.get(k)
        if (found !== undefined && !expired(found, nowMs)) {
          if (found.fingerprint !== fingerprint) return { _tag: "Conflict" }
          return found.state === "in_flight" ? { _tag: "InProgress" } : { _tag: "Replay", answer: found.answer }
        }
        const token = `t${++tokens}`
        records.set(k, { state: "in_flight", fingerprint, token, leaseUntilMs: nowMs + IDEMPOTENCY_LEASE_MS })
        return { _tag: "Started", token }
      }),
    complete: (keyId, key, token, answer, nowMs) =>
      Effect.sync(() => {
        const k = id(keyId, key)
        const found = records.get(k)
        if (found?.state !== "in_flight" || found.token !== token) return
        records.set(k, {
          state: "stored",
          fingerprint: found.fingerprint,
          answer,
          expiresAtMs: nowMs + REPLAY_WINDOW_MS
        })
      }),
    abandon: (keyId, key, token) =>
      Effect.sync(() => {
        const k = id(keyId, key)
        const found = records.get(k)
        if (found?.state === "in_flight" && found.token === token) records.delete(k)
      })
  }
  return { service, completeNow }
}

export const layerMemoryIdempotencyStore: Layer.Layer<IdempotencyStore> =
  Layer.sync(IdempotencyStore)(makeMemoryIdempotencyStore)
