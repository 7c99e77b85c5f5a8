/**
 * The leader lock on server PostgreSQL: a session advisory lock held on a dedicated connection, outside the pool,
 * for as long as this instance leads. Its key is the pair (`hashtext(name)`, `hashtext(current_schema())`):
 * advisory locks are per database, and two deployments in one database on different schemas (a `search_path` in
 * `DATABASE_URL`'s `options`) are two services, each with its own leader; they shared one lock before 2026-12-06.
 * The server releases it the moment that connection ends, so when the leader's process or connection dies
 * another instance's next `acquire` takes over; the lease is not needed for that and is ignored. `renew` proves
 * the connection still holds the lock (a round trip on it); a broken connection means the lock is lost.
 *
 * PGlite is one process by construction (a lock file guards its data folder), so there the instance is always
 * the leader: `pgliteLeaderLock`.
 */
import { LeaderLock } from "@market-data/core"
import { Effect, Layer } from "effect"
import pg from "pg"

interface Held {
  readonly holder: string
  readonly client: pg.Client
  alive: boolean
}

const closeQuietly = (client: pg.Client) => Effect.promise(() => client.end().catch(() => undefined))

/** The lock's key: the name and the schema the connection's tables are in (`''` when none is selected). */
const KEY = "hashtext($1), hashtext(coalesce(current_schema(), ''))"

/** A connection that cannot be made within this long counts as a failed attempt (the next one comes later). */
const CONNECT_TIMEOUT_MS = 10_000

/**
 * A leader lock on the PostgreSQL at `url`. `close` ends every connection it opened (releasing the locks);
 * `layerPgLeaderLock` calls it when its scope closes.
 */
export const makePgLeaderLock = (url: string): LeaderLock["Service"] & { readonly close: Effect.Effect<void> } => {
  const held = new Map<string, Held>()
  /**
   * Why the last attempt per lock name could not ask the server (connection refused, too many clients, ...), so
   * that it is logged once when it starts and once when it ends rather than at every attempt, or not at all.
   */
  const failing = new Map<string, string>()

  const drop = (name: string) =>
    Effect.suspend(() => {
      const h = held.get(name)
      if (h === undefined) return Effect.void
      held.delete(name)
      return closeQuietly(h.client)
    })

  const stillHeld = (name: string, holder: string) =>
    Effect.gen(function* () {
      const h = held.get(name)
      if (h === undefined || h.holder !== holder) return false
      const ok =
        h.alive &&
        (yield* Effect.promise(() =>
          h.client.query("select 1 as ok").then(
            () => true,
            () => false
          )
        ))
      if (!ok) yield* drop(name)
      return ok
    })

  const acquire = (name: string, holder: string) =>
    Effect.gen(function* () {
      const h = held.get(name)
      if (h !== undefined) {
        if (h.holder !== holder) return false
        if (yield* stillHeld(name, holder)) return true
      }
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS })
      const entry: Held = { holder, client, alive: true }
      // A dropped connection must not crash the process: it only means the lock is gone.
      client.on("error", () => {
        entry.alive = false
      })
      client.on("end", () => {
        entry.alive = false
      })
      const asked = yield* Effect.promise(() =>
        client
          .connect()
          .then(() => client.query<{ ok: boolean }>(`select pg_try_advisory_lock(${KEY}) as ok`, [name]))
          .then(
            (r) => ({ got: r.rows[0]?.ok === true }),
            (e: unknown) => ({ got: false, error: e instanceof Error ? e.message : String(e) })
          )
      )
      const before = failing.get(name)
      if ("error" in asked) {
        if (before !== asked.error) {
          failing.set(name, asked.error)
          yield* Effect.logWarning(
            `leader lock: could not ask PostgreSQL for ${name} (${asked.error}); this instance does not lead until it can`
          )
        }
      } else if (before !== undefined) {
        failing.delete(name)
        yield* Effect.logInfo(`leader lock: PostgreSQL answers again for ${name}`)
      }
      const got = asked.got
      if (!got) {
        yield* closeQuietly(client)
        return false
      }
      held.set(name, entry)
      return true
    })

  return {
    acquire: (name, holder, _leaseMs) => acquire(name, holder),
    renew: (name, holder, _leaseMs) => stillHeld(name, holder),
    release: (name, holder) =>
      Effect.gen(function* () {
        const h = held.get(name)
        if (h === undefined || h.holder !== holder) return
        yield* Effect.promise(() => h.client.query(`select pg_advisory_unlock(${KEY})`, [name]).catch(() => undefined))
        yield* drop(name)
      }),
    close: Effect.suspend(() => Effect.forEach([...held.keys()], drop, { discard: true }))
  }
}

/** The PostgreSQL leader lock as a layer; its connections close with the scope. */
export const layerPgLeaderLock = (url: string): Layer.Layer<LeaderLock> =>
  Layer.effect(LeaderLock)(
    Effect.acquireRelease(
      Effect.sync(() => makePgLeaderLock(url)),
      (lock) => lock.close
    )
  )

/** PGlite: one process, always the leader. */
export const pgliteLeaderLock: LeaderLock["Service"] = {
  acquire: () => Effect.succeed(true),
  renew: () => Effect.succeed(true),
  release: () => Effect.void
}
