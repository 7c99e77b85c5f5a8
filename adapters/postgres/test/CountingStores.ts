/**
 * The real pipeline's services on a test database's PostgreSQL stores, with every statement the stores send
 * recorded (through a kysely plugin) under the name `statementOf` gives it: for the tests that count round trips.
 */
import { Handlers, Settings } from "@market-data/core"
import { Effect, Layer } from "effect"
import * as Digest from "effect/crypto/Digest"
import * as SecureRandom from "effect/crypto/SecureRandom"
import { createQueryId, type KyselyPlugin, PostgresQueryCompiler, type RootOperationNode } from "kysely"
import { makeTestPlane } from "../../../core/test/support/TestPlane.ts"
import { layerPgStores } from "../src/PgStores.ts"
import type { TestDatabase } from "./support.ts"

/** The SQL text a statement's node compiles to, parameters as `$1`, `$2`, ... */
export const sqlOf = (node: RootOperationNode): string =>
  new PostgresQueryCompiler().compileQuery(node, createQueryId()).sql

export const countingStores = async (
  t: TestDatabase,
  rateLimitPerMinute: number,
  statementOf: (node: RootOperationNode) => string
) => {
  const statements: Array<string> = []
  const counting: KyselyPlugin = {
    transformQuery: ({ node }) => {
      statements.push(statementOf(node))
      return node
    },
    transformResult: async ({ result }) => result
  }
  const database = { ...t.database, db: t.database.db.withPlugin(counting) }
  const plane = await Effect.runPromise(makeTestPlane())
  const built = await Effect.runPromise(
    Layer.build(
      Layer.mergeAll(
        layerPgStores(database),
        Layer.succeed(Settings)({ rateLimitPerMinute }),
        Digest.layerWebCrypto,
        SecureRandom.layerWebCrypto,
        Layer.succeed(Handlers)(plane.handlers)
      )
    ).pipe(Effect.scoped)
  )
  return { statements, built, plane }
}
