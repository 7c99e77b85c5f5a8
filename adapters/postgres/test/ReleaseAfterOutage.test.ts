/**
 * On server PostgreSQL, a real outage: the stores' connections go through a TCP proxy that the test cuts (every
 * connection destroyed, new ones refused) while a paid request with an Idempotency-Key runs, and restores. The
 * request's own releases (its credit hold, its idempotency record) cannot reach the database and answer
 * `503 source_unavailable`; the retry of the same key, once the database is reachable again, runs at once
 * (not `409 request_in_progress` for the 60 s lease) and is charged once. When the settlement committed and
 * only its answer was lost, the late releases free nothing (the SQL guards: hold `active`, record `in_flight`
 * under the attempt's token) and the retry replays: the ledger holds exactly one charge either way.
 */
import * as net from "node:net"
import {
  apiError,
  createKey,
  type Handler,
  Handlers,
  handle,
  MoneyStore,
  Settings,
  StoreUnavailable,
  statusOf
} from "@market-data/core"
import { Context, Effect, Layer } from "effect"
import * as Digest from "effect/crypto/Digest"
import * as SecureRandom from "effect/crypto/SecureRandom"
import { sql } from "kysely"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { openPostgres } from "../src/Database.ts"
import { makePgMoneyStore } from "../src/PgMoneyStore.ts"
import { layerPgStores } from "../src/PgStores.ts"
import { postgresTestDatabase, TEST_DATABASE_URL, type TestDatabase } from "./support.ts"

/** A TCP proxy to the database that can be cut (an outage) and restored. */
const startProxy = async (target: { host: string; port: number }) => {
  const sockets = new Set<net.Socket>()
  let down = false
  const server = net.createServer((client) => {
    if (down) {
      client.destroy()
      return
    }
    const upstream = net.connect(target.port, target.host)
    for (const s of [client, upstream]) {
      sockets.add(s)
      s.on("error", () => {})
      s.on("close", () => {
        sockets.delete(s)
        client.destroy()
        upstream.destroy()
      })
    }
    client.pipe(upstream)
    upstream.pipe(client)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    port: (server.address() as net.AddressInfo).port,
    cut: () => {
      down = true
      for (const s of sockets) s.destroy()
    },
    restore: () => {
      down = false
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      })
  }
}

if (TEST_DATABASE_URL === undefined) {
  describe.skip("postgresql outage (skipped: TEST_DATABASE_URL is not set)", () => {})
} else {
  describe("postgresql: a retried idempotent request after an outage", () => {
    let t: TestDatabase
    let proxy: Awaited<ReturnType<typeof startProxy>>
    let proxied: ReturnType<typeof openPostgres>
    beforeAll(async () => {
      t = await postgresTestDatabase(TEST_DATABASE_URL as string, 2)
      const direct = new URL(t.url as string)
      proxy = await startProxy({ host: direct.hostname, port: Number(direct.port || 5432) })
      const via = new URL(t.url as string)
      via.hostname = "127.0.0.1"
      via.port = String(proxy.port)
      proxied = openPostgres(via.toString(), { poolSize: 4 })
    }, 60_000)
    afterAll(async () => {
      await proxied?.close()
      await proxy?.close()
      await t?.drop()
    })

    /**
     * Restores the proxy and waits (bounded) until the stores' own pool answers again: connections the cut left
     * in the pool fail their next query, as after any real outage, and are replaced.
     */
    const backUp = async () => {
      proxy.restore()
      const deadline = Date.now() + 10_000
      for (;;) {
        try {
          await sql`select 1`.execute(proxied.db)
          return
        } catch (e) {
          if (Date.now() > deadline) throw e
          await new Promise((r) => setTimeout(r, 20))
        }
      }
    }

    /** The pipeline on the proxied stores; `price` cuts the database while it runs when told to. */
    const service = async () => {
      const state = { mode: "serve" as "serve" | "fail", loseSettleAck: false, runs: 0 }
      const price: Handler = () =>
        Effect.suspend(() => {
          state.runs++
          if (state.mode === "fail") {
            proxy.cut()
            return Effect.fail(apiError("source_unavailable", "upstream down", { retryAfterSeconds: 1 }))
          }
          return Effect.succeed({ _tag: "Json" as const, body: { data: { usd: 1 } }, creditsCharged: 1 })
        })
      const built = await Effect.runPromise(
        Layer.build(
          Layer.mergeAll(
            layerPgStores(proxied),
            Layer.succeed(Settings)({ rateLimitPerMinute: 1_000 }),
            Digest.layerWebCrypto,
            SecureRandom.layerWebCrypto,
            Layer.succeed(Handlers)(new Map([["price", price]]))
          )
        ).pipe(Effect.scoped)
      )
      const money = Context.get(built, MoneyStore)
      // The settlement commits on the database, then the connection drops before its answer arrives.
      const losing: MoneyStore["Service"] = {
        ...money,
        finish: (ticket, end, nowMs) =>
          Effect.flatMap(money.finish(ticket, end, nowMs), (r) => {
            if (!state.loseSettleAck || end._tag !== "Settle") return Effect.succeed(r)
            state.loseSettleAck = false
            proxy.cut()
            return Effect.die(new StoreUnavailable({ operation: "money.finish", cause: new Error("reset") }))
          })
      }
      const ctx = Context.add(built, MoneyStore, losing)
      const key = await Effect.runPromise(createKey({ credits: 10 }).pipe(Effect.provide(ctx)))
      const call = (idem: string) =>
        Effect.runPromise(
          handle({
            operation: "price",
            params: [["id", "crypto:bitcoin"]],
            authorization: [`Bearer ${key.key}`],
            idempotencyKey: [idem],
            client: "test"
          }).pipe(Effect.provide(ctx))
        )
      const code = (a: Awaited<ReturnType<typeof call>>) =>
        a.outcome._tag === "Failure" ? a.outcome.error.code : a.outcome._tag
      // The books read directly, not through the proxy (they are read while it is cut too).
      const db = t.database.db
      const direct = makePgMoneyStore(t.database)
      const books = async () => ({
        balance: await Effect.runPromise(direct.balance(key.record.id, Date.now())),
        charges: (await Effect.runPromise(direct.entries(key.record.id)))
          .filter((e) => e.kind === "charge")
          .map((e) => e.amount),
        activeHolds: Number(
          (
            await sql<{ n: string }>`select count(*) as n from ledger_holds
              where key_id = ${key.record.id} and state = 'active'`.execute(db)
          ).rows[0]?.n
        ),
        records: (
          await sql<{ state: string }>`select state from idempotency_records where key_id = ${key.record.id}`.execute(
            db
          )
        ).rows.map((r) => r.state)
      })
      return { state, call, code, books }
    }

    it("the releases the outage cut are made before the retry: it runs at once and is charged once", async () => {
      const s = await service()
      await s.call("warm")
      s.state.mode = "fail"
      const cut = await s.call("outage-1")
      expect(s.code(cut)).toBe("source_unavailable")
      expect(statusOf(cut.outcome)).toBe(503)
      // While the database is unreachable the hold and the in-flight record are still there.
      const during = await s.books()
      expect(during.activeHolds).toBe(1)
      expect(during.records.sort()).toEqual(["in_flight", "stored"])
      await backUp()
      s.state.mode = "serve"
      const retry = await s.call("outage-1")
      expect(s.code(retry)).toBe("Json")
      expect(s.code(await s.call("outage-1"))).toBe("Replay")
      const after = await s.books()
      expect(after).toEqual({ balance: 8, charges: [1, 1], activeHolds: 0, records: ["stored", "stored"] })
    }, 30_000)

    it("a settlement that committed before the connection dropped replays on the retry: one charge", async () => {
      const s = await service()
      await s.call("warm")
      s.state.loseSettleAck = true
      const lost = await s.call("outage-2")
      expect(s.code(lost)).toBe("source_unavailable")
      await backUp()
      const retry = await s.call("outage-2")
      expect(s.code(retry)).toBe("Replay")
      expect(s.state.runs).toBe(2)
      const after = await s.books()
      expect(after).toEqual({ balance: 8, charges: [1, 1], activeHolds: 0, records: ["stored", "stored"] })
    }, 30_000)
  })
}
