/** In-memory twin of the key store: a map by hash and one by ID. */
import { type KeyRecord, KeyStore } from "@market-data/core"
import { Effect, Layer, Option } from "effect"

export const makeMemoryKeyStore = (): KeyStore["Service"] => makeMemoryKeys().service

/** The memory key store plus a synchronous revocation check, for the money store's admit and charge. */
export const makeMemoryKeys = (): {
  readonly service: KeyStore["Service"]
  /** Whether the key `id` exists and is revoked (an unknown key is not). */
  readonly revokedNow: (id: string) => boolean
} => {
  const byHash = new Map<string, KeyRecord>()
  const byId = new Map<string, KeyRecord>()
  const service: KeyStore["Service"] = {
    insert: (record) =>
      Effect.sync(() => {
        if (byHash.has(record.hash) || byId.has(record.id)) {
          throw new Error(`key ${record.id} already exists`)
        }
        byHash.set(record.hash, record)
        byId.set(record.id, record)
      }),
    insertIfAbsent: (record) =>
      Effect.sync(() => {
        const existing = byHash.get(record.hash)
        if (existing !== undefined) return existing
        if (byId.has(record.id)) throw new Error(`key ${record.id} already exists`)
        byHash.set(record.hash, record)
        byId.set(record.id, record)
        return record
      }),
    findByHash: (hash) => Effect.sync(() => Option.fromNullishOr(byHash.get(hash))),
    findById: (id) => Effect.sync(() => Option.fromNullishOr(byId.get(id))),
    list: Effect.sync(() => [...byId.values()].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())),
    revoke: (id, at) =>
      Effect.sync(() => {
        const found = byId.get(id)
        if (found === undefined || found.revokedAt !== null) return false
        const revoked = { ...found, revokedAt: at }
        byId.set(id, revoked)
        byHash.set(found.hash, revoked)
        return true
      })
  }
  return { service, revokedNow: (id) => (byId.get(id)?.revokedAt ?? null) !== null }
}

export const layerMemoryKeyStore: Layer.Layer<KeyStore> = Layer.sync(KeyStore)(makeMemoryKeyStore)
