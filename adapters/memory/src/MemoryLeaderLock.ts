/**
 * In-memory twin of the leader lock: one map of lock name to holder and lease end, on the `Clock`. Within one
 * process it arbitrates between several contenders exactly as the PostgreSQL lock does between processes, except
 * that a vanished holder is noticed only when its lease runs out.
 */
import { LeaderLock } from "@market-data/core"
import { Clock, Effect, Layer } from "effect"

export const makeMemoryLeaderLock = (): LeaderLock["Service"] => {
  const leases = new Map<string, { holder: string; untilMs: number }>()
  return {
    acquire: (name, holder, leaseMs) =>
      Effect.map(Clock.currentTimeMillis, (nowMs) => {
        const lease = leases.get(name)
        if (lease !== undefined && lease.holder !== holder && lease.untilMs > nowMs) return false
        leases.set(name, { holder, untilMs: nowMs + leaseMs })
        return true
      }),
    renew: (name, holder, leaseMs) =>
      Effect.map(Clock.currentTimeMillis, (nowMs) => {
        const lease = leases.get(name)
        if (lease === undefined || lease.holder !== holder || lease.untilMs <= nowMs) return false
        leases.set(name, { holder, untilMs: nowMs + leaseMs })
        return true
      }),
    release: (name, holder) =>
      Effect.sync(() => {
        if (leases.get(name)?.holder === holder) leases.delete(name)
      })
  }
}

/** A fresh in-memory leader lock per build. */
export const layerMemoryLeaderLock: Layer.Layer<LeaderLock> = Layer.sync(LeaderLock)(makeMemoryLeaderLock)
