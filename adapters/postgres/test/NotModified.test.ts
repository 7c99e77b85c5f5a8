/**
 * A conditional `read` on unchanged data is `304` at zero credits whatever the key's balance, on PGlite and
 * server PostgreSQL, through the real pipeline and the real stores, with and without an Idempotency-Key: the
 * ETag is compared before any credit is held (a 304 spends its rate unit charging nothing, or is admitted holding nothing
 * and released under an Idempotency-Key; no charge, no hold row), and a changed
 * `read` by a key that cannot pay is `402`, never served. Statements are counted with a kysely plugin.
 */
import { createKey, handle, MoneyStore } from "@market-data/core"
import { Context, Effect } from "effect"
import { type RootOperationNode, sql } from "kysely"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { countingStores, sqlOf } from "./CountingStores.ts"
import { pgliteTestDatabase, postgresTestDatabase, TEST_DATABASE_URL, type TestDatabase } from "./support.ts"

/** The function a raw statement calls (`md_admit`, ...), else the statement's kind. */
const statementOf = (node: RootOperationNode): string => {
  if (node.kind !== "RawNode") return node.kind
  const text = sqlOf(node)
  return /\bmd_[a-z_]+/.exec(text)?.[0] ?? text.replace(/\s+/g, " ").trim().slice(0, 40)
}

const suite = (name: string, open: () => Promise<TestDatabase>) =>
  describe(`${name}: conditional reads`, () => {
    let t: TestDatabase
    beforeAll(async () => {
      t = await open()
    }, 120_000)
    afterAll(() => t?.drop())

    it("an unchanged read is 304 at zero credits with no hold for a key without credits; a changed one is 402", async () => {
      await t.truncate()
      const { statements, built } = await countingStores(t, 1000, statementOf)
      // One credit: the first read spends it.
      const key = await Effect.runPromise(createKey({ credits: 1 }).pipe(Effect.provide(built)))
      const ledger = Context.get(built, MoneyStore)
      const call = (extra: { ifNoneMatch?: string; idempotencyKey?: Array<string> }) =>
        Effect.runPromise(
          handle({
            operation: "read",
            params: [["id", "crypto:bitcoin"]],
            authorization: [`Bearer ${key.key}`],
            client: "test",
            ...extra
          }).pipe(Effect.provide(built))
        )
      const first = await call({})
      expect(first.outcome._tag).toBe("Json")
      const etag = first.outcome._tag === "Json" ? (first.outcome.etag as string) : ""
      expect(etag).toMatch(/^"[0-9a-f]{40}"$/)
      expect(await Effect.runPromise(ledger.balance(key.record.id, Date.now()))).toBe(0)

      const holdRows = async () =>
        Number(
          (
            await sql<{ n: string }>`select count(*) as n from ledger_holds where key_id = ${key.record.id}`.execute(
              t.database.db
            )
          ).rows[0]?.n
        )
      const before = await holdRows()
      const cases: ReadonlyArray<readonly [{ idempotencyKey?: Array<string> }, ReadonlyArray<string>]> = [
        [{}, ["md_charge"]],
        [{ idempotencyKey: ["current"] }, ["md_admit", "md_finish"]]
      ]
      for (const [extra, expected] of cases) {
        statements.length = 0
        const same = await call({ ifNoneMatch: etag, ...extra })
        expect(same.outcome._tag, JSON.stringify(extra)).toBe("NotModified")
        expect(
          statements.filter((s) => s.startsWith("md_")),
          JSON.stringify(extra)
        ).toEqual(expected)
      }
      expect(await holdRows()).toBe(before)
      for (const extra of [{}, { idempotencyKey: ["stale"] }]) {
        const changed = await call({ ifNoneMatch: '"old"', ...extra })
        expect(changed.outcome._tag === "Failure" && changed.outcome.error.code, JSON.stringify(extra)).toBe(
          "insufficient_credits"
        )
        expect(changed.outcome._tag === "Failure" && changed.outcome.creditsCharged).toBe(0)
      }
      // Money stays exact: one grant, one charge, balance 0, no live hold.
      expect(await Effect.runPromise(ledger.balance(key.record.id, Date.now()))).toBe(0)
      const entries = await Effect.runPromise(ledger.entries(key.record.id))
      expect(entries.map((e) => [e.kind, e.amount])).toEqual([
        ["grant", 1],
        ["charge", 1]
      ])
    }, 60_000)
  })

suite("PGlite", () => pgliteTestDatabase())

if (TEST_DATABASE_URL === undefined) {
  console.warn("PostgreSQL conditional-read tests SKIPPED: set TEST_DATABASE_URL=postgres://... to run them")
  describe.skip("PostgreSQL: conditional reads (skipped: TEST_DATABASE_URL is not set)", () => {})
} else {
  suite("PostgreSQL", () => postgresTestDatabase(TEST_DATABASE_URL as string))
}
