/**
 * Where a fault scenario keeps its accounts: a fresh schema (migrated) on a private PostgreSQL cluster when
 * one can be made here, else on TEST_DATABASE_URL; undefined (with the reason) when neither is available.
 */
import { createKey } from "@market-data/core"
import { type Database, layerPgStores } from "@market-data/postgres"
import { Effect, Layer } from "effect"
import * as Digest from "effect/crypto/Digest"
import * as SecureRandom from "effect/crypto/SecureRandom"
import { postgresTestDatabase, TEST_DATABASE_URL, type TestDatabase } from "../../adapters/postgres/test/support.ts"
import { type PrivatePostgres, privatePostgresUnavailable, startPrivatePostgres } from "../support/private-postgres.ts"

export interface FaultDatabase {
  readonly t: TestDatabase
  /** The private cluster, when the schema lives on one. */
  readonly cluster: PrivatePostgres | undefined
  readonly close: () => Promise<void>
}

/** Why no database is available, or undefined. */
export const faultDatabaseUnavailable = (): string | undefined =>
  privatePostgresUnavailable() === undefined || TEST_DATABASE_URL !== undefined
    ? undefined
    : `${privatePostgresUnavailable()}, and TEST_DATABASE_URL is not set`

export const openFaultDatabase = async (): Promise<FaultDatabase> => {
  const cluster = privatePostgresUnavailable() === undefined ? await startPrivatePostgres() : undefined
  const url = cluster?.url ?? (TEST_DATABASE_URL as string)
  const t = await postgresTestDatabase(url, 4)
  return {
    t,
    cluster,
    close: async () => {
      await t.drop().catch(() => undefined)
      await cluster?.destroy()
    }
  }
}

/** Mints a key with `credits` straight in the database (as `market-data keys create` does). */
export const newKey = (
  database: Database,
  credits: number,
  rateLimitPerMinute: number | null = 1_000_000
): Promise<{ key: string; id: string }> =>
  Effect.runPromise(
    createKey({ credits, rateLimitPerMinute }).pipe(
      Effect.provide(Layer.mergeAll(layerPgStores(database), Digest.layerWebCrypto, SecureRandom.layerWebCrypto))
    )
  ).then((k) => ({ key: k.key, id: k.record.id }))
