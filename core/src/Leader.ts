/**
 * The leader lock port: of several service instances sharing one database, exactly one ingests from the live
 * sources while all of them serve. An instance that holds the lock is the leader until it releases it, fails to
 * renew it, or dies; a lease (`leaseMs`) bounds how long a vanished holder can keep it where the implementation
 * cannot observe the holder's death directly (the in-memory twin). On PostgreSQL the lock is a session advisory
 * lock held on a dedicated connection: the server drops it the moment that connection dies, so a takeover waits
 * only for the next attempt of another contender.
 */
import { Context, type Effect } from "effect"

/** A named lock held by `holder` (an instance id) for `leaseMs` from the last acquire or renew. */
export class LeaderLock extends Context.Service<
  LeaderLock,
  {
    /** Takes the lock when it is free (or its lease has run out); true when `holder` holds it now. */
    readonly acquire: (name: string, holder: string, leaseMs: number) => Effect.Effect<boolean>
    /** Extends `holder`'s lease; false when `holder` no longer holds the lock (lost: stop acting as leader). */
    readonly renew: (name: string, holder: string, leaseMs: number) => Effect.Effect<boolean>
    /** Gives the lock up when `holder` holds it; nothing otherwise. */
    readonly release: (name: string, holder: string) => Effect.Effect<void>
  }
>()("market-data/core/LeaderLock") {}

/** The lock the live ingestion runs under. */
export const LIVE_INGEST_LOCK = "market-data/live-ingest"
