/**
 * A decorator of the money port (`MoneyStore`) for stores that can be lost (PostgreSQL, PGlite): what a paid
 * request could not tell the store during an outage, it tells the store once the store is back.
 *
 * A request under an Idempotency-Key holds credits and an in-flight record from its admission. When the store
 * fails under it (a handler's read, its `finish`, or the answer to its `admit` lost after the admission
 * committed), its release cannot reach the store either. Left alone, the hold and the record would wait for
 * their lease (60 s): every retry of the same key would meet `409 request_in_progress` until then. Instead the
 * ticket is kept here, by API key, and released
 * - in the background, every `RELEASE_RETRY_MS` until the store takes it, so a retry on any instance finds its
 *   record free within about that long of the store coming back;
 * - and before the key's next paid request on this instance (`admit`, `charge`), so a retry here never meets its
 *   own record still in flight. One request of the key makes them; the others arriving meanwhile wait for it.
 *
 * A release is guarded (`finish` with `Release` leaves a settled or released hold alone and frees the record only
 * while it is in flight under the ticket's token), so making one late never frees what was meanwhile resolved: a
 * settlement that committed before the failure stored its answer, which then replays; a retry that took over
 * after the lease has its own token; an admission that never committed leaves nothing to free. What this
 * instance keeps is bounded (`RELEASES_PER_KEY` per key) and dropped once the leases it would free have ended
 * (`usefulUntil`). What an instance that crashes during the outage leaves behind still waits for its lease.
 */
import { Clock, Deferred, Effect, Exit, type Scope } from "effect"
import { StoreUnavailable } from "./Errors.ts"
import { IDEMPOTENCY_LEASE_MS } from "./Money.ts"
import { AdmissionUnconfirmed, type FinishEnd, type MoneyStore, type Ticket } from "./MoneyStore.ts"

/** How often releases kept during an outage are tried again while any is waiting. */
export const RELEASE_RETRY_MS = 250
/** At most this many releases kept per API key (the oldest go first; their leases still free them). */
export const RELEASES_PER_KEY = 256
/** How often the releases kept are swept of those whose leases have ended. */
const SWEEP_MS = 10_000

const RELEASE: FinishEnd = { _tag: "Release" }

/** A money store that keeps the releases an outage kept from the store, and what it keeps (diagnostics, tests). */
export type ReleasingMoneyStore = MoneyStore["Service"] & {
  /** How many releases are kept for `keyId`. */
  readonly pendingReleases: (keyId: string) => number
}

/** How many releases `store` keeps for `keyId` (0 for a store without the decorator). */
export const pendingReleaseCount = (store: MoneyStore["Service"], keyId: string): number =>
  "pendingReleases" in store ? (store as ReleasingMoneyStore).pendingReleases(keyId) : 0

/**
 * Until when a release can free something its leases do not: the hold counts as released once its lease ends,
 * and the idempotency record, begun at admission (at or before `holdExpiresAtMs`), is free for a takeover once
 * its lease ends.
 */
const usefulUntil = (ticket: Ticket): number => ticket.holdExpiresAtMs + IDEMPOTENCY_LEASE_MS

/** Whether releasing `ticket` frees anything at all (a hold or an idempotency record). */
const holdsSomething = (ticket: Ticket): boolean => ticket.holdId !== undefined || ticket.idempotency !== undefined

interface KeyReleases {
  /** The releases waiting, oldest first. */
  tickets: Array<Ticket>
  /** Completed when the request making this key's releases is done (failed with the store's failure). */
  retrying: Deferred.Deferred<void> | undefined
}

/**
 * Wraps `store`; the background retry runs in the scope of the layer that builds it, and only while a release is
 * waiting.
 */
export const releaseAfterOutage = (
  store: MoneyStore["Service"]
): Effect.Effect<ReleasingMoneyStore, never, Scope.Scope> =>
  Effect.map(Effect.scope, (scope) => {
    const byKey = new Map<string, KeyReleases>()
    /** Tickets waiting, so that a second release of the same ticket is not tried while the first waits. */
    const waiting = new WeakSet<Ticket>()
    let sweepAtMs = 0
    let draining = false

    const keep = (entry: KeyReleases, tickets: Array<Ticket>): void => {
      entry.tickets = tickets.length > RELEASES_PER_KEY ? tickets.slice(-RELEASES_PER_KEY) : tickets
    }

    /** Drops kept releases whose leases have ended, at most every `SWEEP_MS`. */
    const sweep = (nowMs: number): void => {
      if (nowMs < sweepAtMs) return
      sweepAtMs = nowMs + SWEEP_MS
      for (const [keyId, entry] of byKey) {
        if (entry.retrying !== undefined) continue
        entry.tickets = entry.tickets.filter((ticket) => usefulUntil(ticket) > nowMs)
        if (entry.tickets.length === 0) byKey.delete(keyId)
      }
    }

    /** Makes the releases kept for `keyId`, oldest first; fails with the store's failure when it is still down. */
    const releasesOf = (keyId: string): Effect.Effect<void> =>
      Effect.uninterruptibleMask((restore) =>
        Effect.suspend(() => {
          const entry = byKey.get(keyId)
          if (entry === undefined) return Effect.void
          if (entry.retrying !== undefined) {
            return Effect.andThen(restore(Deferred.await(entry.retrying)), releasesOf(keyId))
          }
          const list = entry.tickets
          const retrying = Deferred.makeUnsafe<void>()
          entry.tickets = []
          entry.retrying = retrying
          let made = 0
          const work = Effect.flatMap(Clock.currentTimeMillis, (nowMs) =>
            Effect.forEach(
              list,
              (ticket) =>
                Effect.map(store.finish(ticket, RELEASE, nowMs), () => {
                  waiting.delete(ticket)
                  made++
                }),
              { discard: true }
            )
          )
          return restore(work).pipe(
            Effect.onExit((exit) =>
              Effect.sync(() => {
                // What was not made goes back ahead of what was kept meanwhile.
                if (made < list.length) keep(entry, list.slice(made).concat(entry.tickets))
                entry.retrying = undefined
                if (entry.tickets.length === 0 && byKey.get(keyId) === entry) byKey.delete(keyId)
                // The store's failure reaches the requests waiting; an interruption of this one does not (they
                // look again, and one of them makes what is left).
                Deferred.doneUnsafe(retrying, exit._tag === "Failure" && !Exit.hasInterrupts(exit) ? exit : Effect.void)
              })
            )
          )
        })
      )

    /** Tries every key's releases every `RELEASE_RETRY_MS` until none is left; a round stops at the first failure. */
    const drain: Effect.Effect<void> = Effect.gen(function* () {
      while (true) {
        yield* Effect.sleep(RELEASE_RETRY_MS)
        sweep(yield* Clock.currentTimeMillis)
        if (byKey.size === 0) {
          draining = false
          return
        }
        for (const keyId of [...byKey.keys()]) {
          const exit = yield* Effect.exit(releasesOf(keyId))
          if (exit._tag === "Failure") break
        }
      }
    }).pipe(
      Effect.onExit(() =>
        Effect.sync(() => {
          draining = false
        })
      )
    )

    /** Keeps the release of `ticket` for later, and starts the background retry when it is not running. */
    const remember = (ticket: Ticket): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (!holdsSomething(ticket) || waiting.has(ticket)) return Effect.void
        waiting.add(ticket)
        let entry = byKey.get(ticket.keyId)
        if (entry === undefined) {
          entry = { tickets: [], retrying: undefined }
          byKey.set(ticket.keyId, entry)
        }
        entry.tickets.push(ticket)
        keep(entry, entry.tickets)
        if (draining) return Effect.void
        draining = true
        return Effect.asVoid(Effect.forkIn(drain, scope))
      })

    /** Before a key's paid request: its kept releases, made first (nothing kept anywhere: nothing done). */
    const before = <A>(keyId: string, nowMs: number, next: Effect.Effect<A>): Effect.Effect<A> => {
      if (byKey.size === 0) return next
      sweep(nowMs)
      return byKey.has(keyId) ? Effect.andThen(releasesOf(keyId), next) : next
    }

    /** A store failure under `effect` keeps the release of `ticket` (when known) before it propagates. */
    const keepOnOutage = <A>(effect: Effect.Effect<A>, ticketOf: (defect: StoreUnavailable) => Ticket | undefined) =>
      Effect.catchDefect(effect, (defect) => {
        const ticket = defect instanceof StoreUnavailable ? ticketOf(defect) : undefined
        return ticket === undefined ? Effect.die(defect) : Effect.andThen(remember(ticket), Effect.die(defect))
      })

    return {
      ...store,
      admit: (a) =>
        before(
          a.keyId,
          a.nowMs,
          keepOnOutage(store.admit(a), (defect) =>
            defect instanceof AdmissionUnconfirmed ? defect.admitted : undefined
          )
        ),
      finish: (ticket, end, nowMs) =>
        // A release already kept is made by the retry, not tried again while the store is still failing.
        end._tag === "Release" && waiting.has(ticket)
          ? Effect.die(new StoreUnavailable({ operation: "money.finish", cause: new Error("release kept for retry") }))
          : keepOnOutage(store.finish(ticket, end, nowMs), () => ticket),
      charge: (c) => before(c.keyId, c.nowMs, store.charge(c)),
      pendingReleases: (keyId) => byKey.get(keyId)?.tickets.length ?? 0
    }
  })
