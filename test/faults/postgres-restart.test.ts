/**
 * PostgreSQL stopped (`pg_ctl stop -m immediate`, a crash) for a few seconds while three server processes
 * are under paid load (two on the deterministic test plane, whose slow asset keeps requests in flight, and
 * one real `market-data serve` with the simulated planes, its equity plane reading PostgreSQL), over HTTP and
 * MCP, with and without Idempotency-Key, then started again. The service is not restarted. Asserted:
 *
 * - during the outage every answer is `503 source_unavailable`, retryable, schema-valid, charging nothing;
 *   never another 5xx, never a dropped connection;
 * - after the restart the same processes serve again by themselves (every answer 200 within a few seconds);
 * - every idempotency key whose request the outage cut (sent before the database went down, answered 503),
 *   retried as soon as the database is back on the other instance of the test plane, answers normally within
 *   `RETRY_TARGET_MS`: the instance that admitted it releases its hold and record once the store is back
 *   (`ReleaseAfterOutage`), instead of leaving them to the 60 s lease; also for a key whose requests only one
 *   instance ever saw (nothing of that key reaches it afterwards to trigger the release), with no live hold left;
 * - afterwards the ledger invariant holds: the credits charged per key are exactly those the served answers
 *   reported; the only holds left are of requests the outage cut, and their lease frees them; every
 *   idempotency key whose request failed during the outage, retried, runs (at once, or after the lease when
 *   the outage cut its attempt after it began: until then `409 request_in_progress`) once, is charged once,
 *   and replays byte for byte.
 *
 * Runs on a private PostgreSQL cluster (the machine's shared server is never restarted); says so when it
 * cannot make one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { postgresTestDatabase, type TestDatabase } from "../../adapters/postgres/test/support.ts"
import { type PrivatePostgres, privatePostgresUnavailable, startPrivatePostgres } from "../support/private-postgres.ts"
import { SERVE_ENTRY, type ServerProcess, startServerProcess, stopServerProcess } from "../support/server-process.ts"
import { again, type Call, httpCall, mcpCall, sleep, tally, waitUntilWarm } from "./calls.ts"
import { newKey } from "./database.ts"
import { type ErrorValidators, loadErrorValidators } from "./error-schema.ts"
import { checkLedgerInvariant } from "./ledger-invariant.ts"

const unavailable = privatePostgresUnavailable()

/** How long the test plane's `crypto:slow` takes: requests are in flight when the database goes away. */
const SLOW_MS = 300
const LANES = 15
const BEFORE_MS = 3_000
const OUTAGE_MS = 4_000
const AFTER_MS = 8_000
/** How soon after the database is back every answer must be a success again. */
const RECOVERY_MS = 4_000
const LEASE_WAIT_MS = 61_000
/** How soon after the database is back a retry of a request the outage cut must answer normally. */
const RETRY_TARGET_MS = 5_000

if (unavailable !== undefined) {
  console.warn(`PostgreSQL restart fault SKIPPED: ${unavailable}`)
  describe.skip(`PostgreSQL restarted under load (skipped: ${unavailable})`, () => {})
} else {
  describe("PostgreSQL restarted under load", () => {
    let pg: PrivatePostgres
    let t: TestDatabase
    /** Two processes serving the deterministic test plane (a slow asset keeps requests in flight). */
    const servers: Array<ServerProcess> = []
    /** One process of the real service with the simulated planes. */
    let planes: ServerProcess
    let validators: ErrorValidators

    beforeAll(async () => {
      pg = await startPrivatePostgres()
      t = await postgresTestDatabase(pg.url, 4)
      const env = {
        DATABASE_URL: t.url as string,
        DATABASE_POOL_SIZE: "8",
        TEST_SLOW_MS: String(SLOW_MS),
        MARKET_DATA_RATE_LIMIT_PER_MINUTE: "1000000"
      }
      const started = await Promise.all([
        startServerProcess(env),
        startServerProcess(env),
        // The whole service as deployed: the simulated planes, with the equity plane reading PostgreSQL.
        startServerProcess(env, { entry: SERVE_ENTRY, args: ["serve"], startTimeoutMs: 90_000 })
      ])
      servers.push(started[0], started[1])
      planes = started[2]
      await waitUntilWarm(planes.base, await newKey(t.database, 10_000))
      validators = await loadErrorValidators((servers[0] as ServerProcess).base)
    }, 150_000)

    afterAll(async () => {
      await Promise.all([...servers, planes].filter((s) => s !== undefined).map((s) => stopServerProcess(s)))
      await t?.drop().catch(() => undefined)
      await pg?.destroy()
    })

    it("answers 503 source_unavailable during the outage, recovers by itself, and charges exactly what it served", async () => {
      const metered = await newKey(t.database, 100_000)
      const idempotent = await newKey(t.database, 100_000)
      const calls: Array<Call> = []
      let stoppedAt = Number.POSITIVE_INFINITY
      let restartingAt = Number.POSITIVE_INFINITY
      let restartedAt = Number.POSITIVE_INFINITY
      let running = true
      let seq = 0

      const send = (n: number, j: number): Promise<Call> => {
        const server = servers[(n + j) % servers.length] as ServerProcess
        const asset = j % 3 === 0 ? "crypto:slow" : "crypto:bitcoin"
        switch (n % 5) {
          case 0: // paid, metered (no Idempotency-Key)
            return httpCall(server.base, "price", `id=${asset}`, { key: metered })
          case 1: // paid, with an Idempotency-Key
            return httpCall(server.base, "price", `id=${asset}`, { key: idempotent, idem: `restart-${seq++}` })
          case 2: // paid over MCP, alternating with and without an Idempotency-Key
            return mcpCall(
              server.base,
              "read",
              { id: asset },
              j % 2 === 0 ? { key: metered } : { key: idempotent, idem: `restart-mcp-${seq++}` }
            )
          case 3: // free operations, keyed and keyless
            return j % 2 === 0
              ? httpCall(server.base, "usage", "", { key: metered })
              : httpCall(server.base, "docs", "section=errors")
          default: {
            // The real planes: equities read from PostgreSQL, crypto, discovery; paid with and without a key.
            const company = ["eq:9990001:ALDR", "eq:9990002:BWPC", "eq:9990003:CLSW"][j % 3] as string
            switch (j % 6) {
              case 0:
                return httpCall(planes.base, "financials", `id=${company}&period_kind=quarter`, { key: metered })
              case 1:
                return httpCall(planes.base, "read", `id=${company}`, { key: idempotent, idem: `restart-eq-${seq++}` })
              case 2:
                return mcpCall(planes.base, "events", { id: company }, { key: metered })
              case 3:
                return httpCall(planes.base, "price", "id=crypto:bitcoin", { key: metered })
              case 4:
                return httpCall(planes.base, "coverage", `id=${company}`, { key: metered })
              default:
                return httpCall(planes.base, "usage", "", { key: idempotent })
            }
          }
        }
      }
      const lane = async (n: number) => {
        for (let j = 0; running; j++) {
          const c = await send(n, j)
          calls.push(c)
          // A client backs off a little after a transient error (the answers say Retry-After: 1).
          if (c.code === "source_unavailable") await sleep(25)
        }
      }

      // Requests of a key of their own, sent only to the first test-plane instance, on the slow asset: some are
      // admitted and in their handler when the database goes. Nothing else of that key reaches that instance
      // afterwards, so what they hold is freed only by that instance's own release once the database is back,
      // or by the 60 s lease.
      const cutKey = await newKey(t.database, 100_000)
      const cutCalls: Array<Call> = []
      let cutting = true
      const cutLane = async () => {
        while (cutting) {
          const first = servers[0] as ServerProcess
          cutCalls.push(await httpCall(first.base, "price", "id=crypto:slow", { key: cutKey, idem: `cut-${seq++}` }))
        }
      }
      const cutLoad = Promise.all([cutLane(), cutLane(), cutLane(), cutLane()])
      const load = Promise.all(Array.from({ length: LANES }, (_, n) => lane(n)))
      await sleep(BEFORE_MS)
      await pg.stop("immediate")
      stoppedAt = Date.now()
      cutting = false
      await cutLoad
      await sleep(OUTAGE_MS)
      restartingAt = Date.now()
      await pg.start()
      restartedAt = Date.now()
      // The requests the outage cut, each retried under its Idempotency-Key as soon as the database is back: a
      // test-plane request on the other test-plane instance, a real-planes request on its one instance.
      const cut = calls.filter((c) => c.idem !== undefined && !c.served && c.sentAt < stoppedAt)
      const quick = await Promise.all(
        cut.map(async (c) => {
          const other = servers.find((s) => s.base !== c.base)
          const base = c.base === planes.base || other === undefined ? c.base : other.base
          const tries: Array<Call> = []
          for (;;) {
            const retry = await again(base, c, { key: idempotent, idem: c.idem as string })
            tries.push(retry)
            if (retry.served || Date.now() > restartedAt + RETRY_TARGET_MS + 5_000) return tries
            await sleep(100)
          }
        })
      )
      // The cut requests of the key sent to the first instance only, retried on the second one.
      const cutOnFirst = cutCalls.filter((c) => !c.served)
      const quickOnSecond = await Promise.all(
        cutOnFirst.map(async (c) => {
          const second = servers[1] as ServerProcess
          const tries: Array<Call> = []
          for (;;) {
            const retry = await again(second.base, c, { key: cutKey, idem: c.idem as string })
            tries.push(retry)
            if (retry.served || Date.now() > restartedAt + RETRY_TARGET_MS + 5_000) return tries
            await sleep(100)
          }
        })
      )
      await sleep(Math.max(0, restartedAt + AFTER_MS - Date.now()))
      running = false
      await load

      const summary = JSON.stringify(tally(calls))
      // The processes never died, and no connection was dropped.
      for (const s of [...servers, planes]) expect(s.child.exitCode, s.stderr().slice(-2000)).toBeNull()
      expect(
        calls.filter((c) => c.status === 0).map((c) => c.failure),
        summary
      ).toEqual([])

      // Every error body is the published one; the only 5xx is 503 source_unavailable, retryable, uncharged.
      const problems: Array<string> = []
      for (const c of calls) {
        if (c.errorBody !== undefined && c.code?.startsWith("rpc:") !== true && !validators.errorBody(c.errorBody)) {
          problems.push(`error body off schema (${validators.why(validators.errorBody)}): ${c.body.slice(0, 200)}`)
        }
        const isFiveXx = c.status >= 500 || c.code === "source_unavailable" || c.code === "internal_error"
        if (isFiveXx) {
          if (c.transport === "http" && c.status !== 503) problems.push(`${c.status} ${c.body.slice(0, 200)}`)
          if (c.code !== "source_unavailable" || c.retryable !== true)
            problems.push(`not a typed 503: ${c.body.slice(0, 200)}`)
          if (c.charged !== 0) problems.push(`a 503 charged ${c.charged}`)
        }
        if (c.code?.startsWith("rpc:") === true) problems.push(`JSON-RPC error over MCP: ${c.body.slice(0, 200)}`)
      }
      const defects = [...servers, planes].flatMap((s) =>
        s
          .stderr()
          .split("\n")
          .filter((l) => /defect|unhandled/.test(l))
      )
      expect(problems.slice(0, 20), `${summary}\n${defects.slice(0, 3).join("\n").slice(0, 6000)}`).toEqual([])

      // The outage was hit, and inside it nothing but 503 source_unavailable was answered (over MCP: the tool
      // result's error, in a 200 POST).
      const inside = calls.filter((c) => c.sentAt >= stoppedAt + 200 && c.doneAt <= restartingAt)
      expect(inside.length, summary).toBeGreaterThan(50)
      expect(
        inside
          .filter((c) => c.code !== "source_unavailable" || c.status !== (c.transport === "http" ? 503 : 200))
          .map((c) => `${c.status} ${c.body.slice(0, 120)}`),
        summary
      ).toEqual([])
      const servedInside = inside.filter((c) => c.served)
      expect(servedInside.length, summary).toBe(0)

      // Recovered by itself: a few seconds after the restart, every answer is a success again.
      const settled = calls.filter((c) => c.sentAt >= restartedAt + RECOVERY_MS)
      expect(settled.length, summary).toBeGreaterThan(100)
      expect(tally(settled.filter((c) => !c.served))).toEqual({})
      const firstSuccess = Math.min(...calls.filter((c) => c.served && c.sentAt >= restartedAt).map((c) => c.doneAt))
      console.info(
        `postgres restart: ${calls.length} requests ${summary}; outage ${restartingAt - stoppedAt} ms, start took ${restartedAt - restartingAt} ms, first success ${firstSuccess - restartedAt} ms after`
      )

      // Each request the outage cut, retried right after the database came back, answered normally within the
      // target, on another instance too.
      const quickCalls = quick.flat()
      const late = quick
        .map((tries, i) => ({ c: cut[i] as Call, last: tries[tries.length - 1] as Call }))
        .filter(({ last }) => !last.served || last.doneAt > restartedAt + RETRY_TARGET_MS)
        .map(({ c, last }) => `${c.idem}: ${last.status} ${last.code ?? ""} ${last.doneAt - restartedAt} ms after`)
      expect(cut.length, summary).toBeGreaterThan(0)
      expect(late, `${cut.length} cut requests retried`).toEqual([])
      console.info(
        `postgres restart: ${cut.length} requests cut by the outage, retried: every one answered within ${Math.max(...quick.map((t) => (t[t.length - 1] as Call).doneAt - restartedAt))} ms of the database coming back (${quickCalls.length - cut.length} retries met 409 or 503 first)`
      )
      calls.push(...quickCalls)
      const retriedAtOnce = new Set(quickCalls.filter((c) => c.served).map((c) => c.idem))
      // The same for the key whose requests only the first instance saw: retried on the second, each answered
      // within the target (the first instance released what they held, nobody asked it to), charged once.
      const lateOnSecond = quickOnSecond
        .map((tries, i) => ({ c: cutOnFirst[i] as Call, last: tries[tries.length - 1] as Call }))
        .filter(({ last }) => !last.served || last.doneAt > restartedAt + RETRY_TARGET_MS)
        .map(({ c, last }) => `${c.idem}: ${last.status} ${last.code ?? ""} ${last.doneAt - restartedAt} ms after`)
      expect(cutOnFirst.length, JSON.stringify(tally(cutCalls))).toBeGreaterThan(0)
      expect(lateOnSecond, `${cutOnFirst.length} requests cut on the first instance`).toEqual([])
      const metInProgress = quickOnSecond.filter((tries) => tries.some((r) => r.code === "request_in_progress"))
      console.info(
        `postgres restart: ${cutOnFirst.length} requests of a key cut on one instance, retried on the other: all answered within ${Math.max(...quickOnSecond.map((t) => (t[t.length - 1] as Call).doneAt - restartedAt))} ms of the database coming back (${metInProgress.length} met 409 request_in_progress first)`
      )
      const cutAll = [...cutCalls, ...quickOnSecond.flat()]
      const cutServed = cutAll.filter((c) => c.served && !c.replayed)
      await checkLedgerInvariant(t.database, {
        served: new Map([
          [
            cutKey.id,
            {
              credits: cutServed.reduce((n, c) => n + c.charged, 0),
              answers: cutServed.filter((c) => c.charged > 0).length
            }
          ]
        ]),
        // No hold of that key is left live: the first instance released them. Other keys are checked below.
        allowLiveHold: (h) => h.keyId !== cutKey.id
      })

      // Right away: charges are exactly what the served answers reported; the only live holds are of requests
      // the outage cut (taken before the database came back).
      const servedCredits = (keyId: string) => {
        const mine = calls.filter((c) => c.keyId === keyId && c.served && !c.replayed)
        return { credits: mine.reduce((s, c) => s + c.charged, 0), answers: mine.filter((c) => c.charged > 0).length }
      }
      const early = await checkLedgerInvariant(t.database, {
        served: new Map([
          [metered.id, servedCredits(metered.id)],
          [idempotent.id, servedCredits(idempotent.id)]
        ]),
        allowLiveHold: (h) => h.keyId === idempotent.id && h.takenAtMs <= restartingAt
      })

      // Retrying each idempotency key that did not get its answer, as a client would: right away, each either
      // runs (its attempt never started, or was released) or answers 409 request_in_progress (its attempt was
      // cut after it began, and the database could not be told: the lease frees it); after the lease, every one
      // runs. Each runs once, is charged once, and replays byte for byte.
      const unanswered = calls.filter((c) => c.idem !== undefined && !c.served && !retriedAtOnce.has(c.idem))
      expect(unanswered.length, summary).toBeGreaterThan(0)
      const retries: Array<Call> = []
      const mismatches: Array<string> = []
      const retryAll = async (list: ReadonlyArray<Call>, leased: Array<Call>) => {
        let next = 0
        const worker = async (w: number) => {
          while (next < list.length) {
            const c = list[next++] as Call
            const base = c.base === planes.base ? planes.base : (servers[w % servers.length] as ServerProcess).base
            const retry = await again(base, c, { key: idempotent, idem: c.idem as string })
            retries.push(retry)
            if (retry.code === "request_in_progress") {
              leased.push(c)
              continue
            }
            const replay = await again(base, c, { key: idempotent, idem: c.idem as string })
            if (!retry.served || retry.replayed) {
              mismatches.push(`${c.idem} retry: ${retry.status} ${retry.body.slice(0, 160)}`)
            }
            if (!replay.replayed || replay.payload !== retry.payload) {
              mismatches.push(`${c.idem} replay: ${replay.status} ${replay.body.slice(0, 160)}`)
            }
          }
        }
        await Promise.all(Array.from({ length: 8 }, (_, w) => worker(w)))
      }
      const leased: Array<Call> = []
      await retryAll(unanswered, leased)
      expect(mismatches.slice(0, 10), `${unanswered.length} retried at once`).toEqual([])
      // Holds and records the outage cut are freed by their lease: wait it out when any is left.
      const cutHolds = [...early.values()].reduce((n, k) => n + k.liveHolds.length, 0)
      // Each is the hold of an idempotent request sent before the database went down and not answered.
      expect(cutHolds).toBeLessThanOrEqual(unanswered.filter((c) => c.sentAt < stoppedAt).length)
      if (leased.length > 0 || cutHolds > 0) await sleep(Math.max(0, restartingAt + LEASE_WAIT_MS - Date.now()))
      const stillLeased: Array<Call> = []
      await retryAll(leased, stillLeased)
      expect(mismatches.slice(0, 10), `${leased.length} retried after the lease`).toEqual([])
      expect(stillLeased.map((c) => c.idem)).toEqual([])
      console.info(
        `postgres restart: ${unanswered.length} idempotency keys retried, ${unanswered.length - leased.length} ran at once, ${leased.length} after the lease; ${cutHolds} holds left by the outage`
      )
      const all = [...calls, ...retries]
      const servedAll = (keyId: string) => {
        const mine = all.filter((c) => c.keyId === keyId && c.served && !c.replayed)
        return { credits: mine.reduce((s, c) => s + c.charged, 0), answers: mine.filter((c) => c.charged > 0).length }
      }
      await checkLedgerInvariant(t.database, {
        served: new Map([
          [metered.id, servedAll(metered.id)],
          [idempotent.id, servedAll(idempotent.id)]
        ])
      })
      // One charge per idempotency key that was ever served.
      const servedKeys = new Set(all.filter((c) => c.idem !== undefined && c.served).map((c) => c.idem))
      const ledger = await checkLedgerInvariant(t.database)
      expect(ledger.get(idempotent.id)?.chargeCount).toBe(servedKeys.size)
    }, 200_000)
  })
}
