/**
 * Money and idempotency across processes on server PostgreSQL: two server processes share one database and
 * are hit concurrently. Runs when TEST_DATABASE_URL is set (CI sets it); says so when skipped.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"
import { createKey } from "@market-data/core"
import { layerPgStores, makePgMoneyStore } from "@market-data/postgres"
import { Effect, Layer } from "effect"
import * as Digest from "effect/crypto/Digest"
import * as SecureRandom from "effect/crypto/SecureRandom"
import { sql } from "kysely"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { postgresTestDatabase, TEST_DATABASE_URL, type TestDatabase } from "../adapters/postgres/test/support.ts"

const ENTRY = join(import.meta.dirname, "support", "serve-test-plane.ts")

interface Server {
  readonly base: string
  readonly child: ChildProcess
}

export const startServerProcess = (env: Record<string, string>): Promise<Server> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [ENTRY], {
      env: { ...process.env, PORT: "0", LOG_LEVEL: "warn", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    let err = ""
    const timer = setTimeout(() => reject(new Error(`server did not start: ${err}`)), 60_000)
    child.stderr?.on("data", (d) => (err += d))
    child.stdout?.on("data", (d) => {
      out += d
      const m = /listening on (http:\/\/[^/\s]+)/.exec(out)
      if (m) {
        clearTimeout(timer)
        resolve({ base: m[1] as string, child })
      }
    })
    child.on("exit", (code) => reject(new Error(`server exited ${code}: ${err}`)))
  })

const stop = (s: Server) =>
  new Promise<void>((resolve) => {
    if (s.child.exitCode !== null) return resolve()
    s.child.on("exit", () => resolve())
    s.child.kill("SIGTERM")
  })

if (TEST_DATABASE_URL === undefined) {
  console.warn("PostgreSQL cross-process proofs SKIPPED: set TEST_DATABASE_URL=postgres://... to run them")
  describe.skip("cross-process proofs (skipped: TEST_DATABASE_URL is not set)", () => {})
} else {
  describe("two server processes on one PostgreSQL", () => {
    let t: TestDatabase
    let a: Server
    let b: Server
    const newKey = (credits: number, rateLimitPerMinute: number | null) =>
      Effect.runPromise(
        createKey({ credits, rateLimitPerMinute }).pipe(
          Effect.provide(Layer.mergeAll(layerPgStores(t.database), Digest.layerWebCrypto, SecureRandom.layerWebCrypto))
        )
      ).then((k) => ({ key: k.key, id: k.record.id }))
    const entries = (id: string) => Effect.runPromise(makePgMoneyStore(t.database).entries(id))
    const balance = (id: string) => Effect.runPromise(makePgMoneyStore(t.database).balance(id, Date.now()))

    beforeAll(async () => {
      t = await postgresTestDatabase(TEST_DATABASE_URL as string)
      const env = { DATABASE_URL: t.url as string, DATABASE_POOL_SIZE: "10", TEST_SLOW_MS: "700" }
      ;[a, b] = await Promise.all([startServerProcess(env), startServerProcess(env)])
    }, 60_000)
    afterAll(async () => {
      await Promise.all([a && stop(a), b && stop(b)])
      await t?.drop()
    })

    const call = (server: Server, path: string, key: string, headers: Record<string, string> = {}) =>
      fetch(`${server.base}${path}`, { headers: { Authorization: `Bearer ${key}`, ...headers } }).then(async (r) => ({
        status: r.status,
        body: await r.text(),
        charged: r.headers.get("x-credits-charged")
      }))

    it("200 concurrent paid requests over both processes with 100 credits: exactly 100 served, 100 refused, balance 0", async () => {
      const k = await newKey(100, 100_000)
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) => call(i % 2 === 0 ? a : b, "/api/v1/price?id=crypto:bitcoin", k.key))
      )
      expect(results.filter((r) => r.status === 200).length).toBe(100)
      expect(results.filter((r) => r.status === 402).length).toBe(100)
      expect(await balance(k.id)).toBe(0)
      const list = await entries(k.id)
      expect(list.filter((e) => e.kind === "charge").length).toBe(100)
      // Never negative at any point: every prefix of the ledger keeps grants >= charges.
      let running = 0
      for (const e of list) {
        running += e.kind === "grant" ? e.amount : -e.amount
        expect(running).toBeGreaterThanOrEqual(0)
      }
    }, 60_000)

    it("20 concurrent identical requests with one Idempotency-Key across both processes: one execution, one charge", async () => {
      const k = await newKey(50, 100_000)
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          call(i % 2 === 0 ? a : b, "/api/v1/price?id=crypto:slow", k.key, { "Idempotency-Key": "cross-process" })
        )
      )
      expect(results.filter((r) => r.status === 200).length).toBe(1)
      expect(results.filter((r) => r.status === 409).length).toBe(19)
      expect((await entries(k.id)).filter((e) => e.kind === "charge").map((e) => e.amount)).toEqual([1])
      const replay = await call(b, "/api/v1/price?id=crypto:slow", k.key, { "Idempotency-Key": "cross-process" })
      expect(replay.body).toBe(results.find((r) => r.status === 200)?.body)
      expect(await balance(k.id)).toBe(49)
    }, 60_000)

    it("SIGKILL mid-request 20 times: after the lease every retry settles once; no credit lost, none charged twice", async () => {
      const k = await newKey(100, 100_000)
      const env = { DATABASE_URL: t.url as string, DATABASE_POOL_SIZE: "4", TEST_SLOW_MS: "600" }
      const keys: Array<string> = []
      const killedAt: Array<number> = []
      // Four lanes of five kills each, at random points of a request that takes about 600 ms.
      await Promise.all(
        Array.from({ length: 4 }, async (_, lane) => {
          for (let j = 0; j < 5; j++) {
            const server = await startServerProcess(env)
            const idem = `kill-${lane}-${j}`
            keys.push(idem)
            const pending = call(server, "/api/v1/price?id=crypto:slow", k.key, { "Idempotency-Key": idem }).catch(
              () => undefined
            )
            const at = 20 + Math.floor(Math.random() * 700)
            killedAt.push(at)
            await new Promise((r) => setTimeout(r, at))
            const exited = new Promise((r) => server.child.on("exit", r))
            server.child.kill("SIGKILL")
            await exited
            await pending
          }
        })
      )
      expect(keys.length).toBe(20)
      // Past the 60 s lease, records left in flight count as released and holds as expired. The lease is real
      // time in the killed processes: wait until the store holds no live in-flight record or hold of the key.
      const deadline = Date.now() + 75_000
      for (;;) {
        const now = Date.now()
        const live = await sql<{ n: number }>`select
            (select count(*)::int from idempotency_records
              where key_id = ${k.id} and state = 'in_flight' and expires_at_ms > ${now})
          + (select count(*)::int from ledger_holds
              where key_id = ${k.id} and state = 'active' and expires_at_ms > ${now}) as n`.execute(t.database.db)
        if ((live.rows[0]?.n ?? 0) === 0) break
        if (now > deadline) throw new Error("the killed requests' leases did not end within 75 s")
        await new Promise((r) => setTimeout(r, 250))
      }
      const server = await startServerProcess(env)
      try {
        for (const idem of keys) {
          const retry = await call(server, "/api/v1/price?id=crypto:slow", k.key, { "Idempotency-Key": idem })
          expect(retry.status, `${idem} killed after ${killedAt[keys.indexOf(idem)]} ms`).toBe(200)
          const replay = await call(server, "/api/v1/price?id=crypto:slow", k.key, { "Idempotency-Key": idem })
          expect(replay.body).toBe(retry.body)
        }
      } finally {
        await stop(server)
      }
      const charges = (await entries(k.id)).filter((e) => e.kind === "charge")
      expect(charges.length).toBe(20)
      expect(await balance(k.id)).toBe(80)
    }, 180_000)

    it("the rate limit holds across both processes: at most 60 admitted in the window", async () => {
      const k = await newKey(1_000, 60)
      const results = await Promise.all(
        Array.from({ length: 150 }, (_, i) => call(i % 2 === 0 ? a : b, "/api/v1/price?id=crypto:ethereum", k.key))
      )
      expect(results.filter((r) => r.status !== 429).length).toBe(60)
      expect(results.filter((r) => r.status === 200).length).toBe(60)
      expect(await balance(k.id)).toBe(940)
    }, 60_000)
  })
}
