/**
 * Round trips of the idempotent path on PGlite and server PostgreSQL, through the real pipeline and the real
 * stores: a replay is one statement (`md_admit`), as is a 429 and an in-progress or conflicting duplicate;
 * an admitted request adds only its finish (`md_finish`): two statements for a paid request. Statements are counted with a kysely plugin on the
 * stores' connection.
 */
import { createKey, handle, MoneyStore, statusOf } from "@market-data/core"
import { Context, Effect } from "effect"
import type { RootOperationNode } from "kysely"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { countingStores, sqlOf } from "./CountingStores.ts"
import { pgliteTestDatabase, postgresTestDatabase, TEST_DATABASE_URL, type TestDatabase } from "./support.ts"

/** The statement a node stands for: the SQL text of a raw query, else its kind. */
const statementOf = (node: RootOperationNode): string =>
  node.kind === "RawNode" ? sqlOf(node).replace(/\s+/g, " ").trim() : node.kind

const suite = (name: string, open: () => Promise<TestDatabase>) =>
  describe(`${name}: idempotent requests`, () => {
    let t: TestDatabase
    beforeAll(async () => {
      t = await open()
    }, 120_000)
    afterAll(() => t?.drop())

    it("a replay, a 429, an in-progress and a conflicting duplicate are one statement each", async () => {
      await t.truncate()
      const { statements, built, plane } = await countingStores(t, 7, statementOf)
      const key = await Effect.runPromise(createKey({ credits: 100 }).pipe(Effect.provide(built)))
      const call = (query: string, idem: string) =>
        Effect.runPromise(
          handle({
            operation: "price",
            params: [["id", query]],
            authorization: [`Bearer ${key.key}`],
            idempotencyKey: [idem],
            client: "test"
          }).pipe(Effect.provide(built))
        )
      const measure = async (query: string, idem: string) => {
        statements.length = 0
        const answer = await call(query, idem)
        return {
          answer,
          statements: statements.map((s) => s.slice(0, s.includes("(") ? s.indexOf("(") : undefined).trim())
        }
      }

      // The key's first lookup reads the store; later requests use the key cache.
      await call("crypto:bitcoin", "warm")
      const started = await measure("crypto:bitcoin", "a")
      expect(started.answer.outcome._tag).toBe("Json")
      expect(started.statements).toEqual(["select * from md_admit", "select * from md_finish"])
      const replay = await measure("crypto:bitcoin", "a")
      expect(replay.answer.outcome._tag).toBe("Replay")
      expect(replay.answer.outcome._tag === "Replay" && replay.answer.outcome.answer.body).toBe(
        started.answer.outcome._tag === "Json" ? started.answer.outcome.body : "?"
      )
      expect(replay.answer.rate?.remaining).toBe(4)
      expect(replay.statements).toEqual(["select * from md_admit"])
      const conflict = await measure("crypto:ethereum", "a")
      expect(conflict.answer.outcome._tag === "Failure" && conflict.answer.outcome.error.code).toBe(
        "idempotency_conflict"
      )
      expect(conflict.statements).toEqual(["select * from md_admit"])
      // A duplicate of a request still running.
      const slow = call("crypto:slow", "s")
      while ((await Effect.runPromise(plane.executions)) < 3) await new Promise((r) => setTimeout(r, 5))
      const inProgress = await measure("crypto:slow", "s")
      expect(inProgress.answer.outcome._tag === "Failure" && inProgress.answer.outcome.error.code).toBe(
        "request_in_progress"
      )
      expect(inProgress.statements).toEqual(["select * from md_admit"])
      await Effect.runPromise(plane.release)
      expect((await slow).outcome._tag).toBe("Json")
      // The seventh unit is the last one in the window; the eighth request is 429, still one statement.
      const seventh = await measure("crypto:bitcoin", "a")
      expect(seventh.answer.outcome._tag).toBe("Replay")
      expect(seventh.answer.rate?.remaining).toBe(0)
      const over = await measure("crypto:bitcoin", "a")
      expect(statusOf(over.answer.outcome)).toBe(429)
      expect(over.statements).toEqual(["select * from md_admit"])
      // One charge per executed request (the warm-up, "a" and "s"), none for the rest.
      const ledger = Context.get(built, MoneyStore)
      const charges = (await Effect.runPromise(ledger.entries(key.record.id))).filter((e) => e.kind === "charge")
      expect(charges.map((e) => e.amount)).toEqual([1, 1, 1])
    }, 60_000)
  })

suite("pglite", () => pgliteTestDatabase())

if (TEST_DATABASE_URL === undefined) {
  describe.skip("postgresql (skipped: TEST_DATABASE_URL is not set)", () => {})
} else {
  suite("postgresql", () => postgresTestDatabase(TEST_DATABASE_URL as string))
}
