/**
 * The leader lock on server PostgreSQL: a session advisory lock (`pg_try_advisory_lock(hashtext(name))`) held
 * on a dedicated connection, outside the pool, for as long as this instance leads. The server releases it the
 * moment that connection ends, so when the leader's process or connection dies another instance's next
 * `acquire` takes over; the lease is not needed for that and is ignored. `renew` proves the connection still
 * holds the lock (a round trip on it); a broken connection means the lock is lost.
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

/**
 * A leader lock on the PostgreSQL at `url`. `close` ends every connection it opened (releasing the locks);
 * `layerPgLeaderLock` calls it when its scope closes.
 */
export const makePgLeaderLock = (url: string): LeaderLock["Service"] & { readonly close: Effect.Effect<void> } => {
  const held = new Map<string, Held>()

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
      const client = new pg.Client({ connectionString: url })
      const entry: Held = { holder, client, alive: true }
      // A dropped connection must not crash the process: it only means the lock is gone.
      client.on("error", () => {
        entry.alive = false
      })
      client.on("end", () => {
        entry.alive = false
      })
      const got = yield* Effect.promise(() =>
        client
          .connect()
          .then(() => client.query<{ ok: boolean }>("select pg_try_advisory_lock(hashtext($1)) as ok", [name]))
          .then(
            (r) => r.rows[0]?.ok === true,
            () => false
          )
      )
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
        yield* Effect.promise(() =>
          h.client.query("select pg_advisory_unlock(hashtext($1))", [name]).catch(() => undefined)
        )
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
