/**
 * The ledger invariant, checked after every fault scenario, read straight from the tables (not through the
 * adapters under test):
 *
 * - per key, the booked balance equals its grants minus its settled charges, and no prefix of its ledger goes
 *   below zero (credits never spent before they were granted);
 * - every charge entry made through a hold belongs to exactly one hold, and that hold is settled (no hold
 *   charged twice, no charge from a released hold);
 * - no hold is left reserving credits: an active hold still inside its lease is allowed only when the scenario
 *   says it may exist (a request cut by a crash or an outage, whose hold the lease releases), and what is
 *   available once every lease has run out equals the booked balance;
 * - the charges per key match what the scenario counted as served (exactly once per served paid answer).
 */
import { HOLD_LEASE_MS } from "@market-data/core"
import type { Database } from "@market-data/postgres"
import { sql } from "kysely"
import { expect } from "vitest"

export interface HoldRow {
  readonly id: string
  readonly keyId: string
  readonly amount: number
  /** When the hold was taken (its expiry minus the lease). */
  readonly takenAtMs: number
  readonly expiresAtMs: number
}

export interface KeyLedger {
  readonly keyId: string
  readonly booked: number
  readonly granted: number
  readonly charged: number
  readonly chargeCount: number
  /** Active holds still inside their lease when checked. */
  readonly liveHolds: ReadonlyArray<HoldRow>
  /** Active holds past their lease (count as released). */
  readonly expiredHolds: number
  /** `md_available` now, and once every lease has run out. */
  readonly availableNow: number
  readonly availableAfterLeases: number
}

export interface LedgerExpectation {
  /** Per key ID: the credits the scenario saw charged on served answers, and how many such answers. */
  readonly served?: ReadonlyMap<string, { readonly credits: number; readonly answers?: number }>
  /** Whether a live (unexpired, active) hold may exist; by default none may. */
  readonly allowLiveHold?: (hold: HoldRow) => boolean
}

const n = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v))

/** Reads every key's ledger and asserts the invariant; returns what it read, per key. */
export const checkLedgerInvariant = async (
  database: Database,
  expectation: LedgerExpectation = {}
): Promise<ReadonlyMap<string, KeyLedger>> => {
  const db = database.db
  const nowMs = Date.now()
  const accounts = await sql<{ key_id: string; booked: string }>`select key_id, booked from ledger_accounts`.execute(db)
  const entries = await sql<{
    key_id: string
    kind: "grant" | "charge"
    amount: string
    hold_id: string | null
  }>`select key_id, kind, amount, hold_id from ledger_entries order by id`.execute(db)
  const holds = await sql<{
    id: string
    key_id: string
    amount: string
    expires_at_ms: string
    state: "active" | "settled" | "released"
  }>`select id, key_id, amount, expires_at_ms, state from ledger_holds`.execute(db)
  const keys = await sql<{ id: string }>`select id from api_keys`.execute(db)

  const problems: Array<string> = []
  const holdById = new Map(holds.rows.map((h) => [h.id, h]))
  const chargedHolds = new Set<string>()
  const perKey = new Map<string, { granted: number; charged: number; chargeCount: number; running: number }>()
  for (const e of entries.rows) {
    const k = perKey.get(e.key_id) ?? { granted: 0, charged: 0, chargeCount: 0, running: 0 }
    const amount = n(e.amount)
    if (e.kind === "grant") {
      k.granted += amount
      k.running += amount
    } else {
      k.charged += amount
      k.chargeCount += 1
      k.running -= amount
      if (e.hold_id !== null) {
        if (chargedHolds.has(e.hold_id)) problems.push(`hold ${e.hold_id} charged twice`)
        chargedHolds.add(e.hold_id)
        const h = holdById.get(e.hold_id)
        // The sweeper deletes resolved holds; a hold still present must say settled.
        if (h !== undefined && h.state !== "settled") problems.push(`charge from hold ${e.hold_id} in state ${h.state}`)
      }
    }
    if (k.running < 0) problems.push(`key ${e.key_id}: ledger prefix below zero (${k.running})`)
    perKey.set(e.key_id, k)
  }

  const out = new Map<string, KeyLedger>()
  const bookedOf = new Map(accounts.rows.map((a) => [a.key_id, n(a.booked)]))
  const ids = new Set([...keys.rows.map((k) => k.id), ...bookedOf.keys(), ...perKey.keys()])
  for (const keyId of ids) {
    const k = perKey.get(keyId) ?? { granted: 0, charged: 0, chargeCount: 0, running: 0 }
    const booked = bookedOf.get(keyId) ?? 0
    if (booked !== k.granted - k.charged) {
      problems.push(`key ${keyId}: booked ${booked} != grants ${k.granted} - charges ${k.charged}`)
    }
    const mine = holds.rows.filter((h) => h.key_id === keyId && h.state === "active")
    const liveHolds = mine
      .filter((h) => n(h.expires_at_ms) > nowMs)
      .map((h) => ({
        id: h.id,
        keyId,
        amount: n(h.amount),
        takenAtMs: n(h.expires_at_ms) - HOLD_LEASE_MS,
        expiresAtMs: n(h.expires_at_ms)
      }))
    for (const h of liveHolds) {
      if (!(expectation.allowLiveHold?.(h) ?? false)) {
        problems.push(`key ${keyId}: hold ${h.id} of ${h.amount} still active, taken ${nowMs - h.takenAtMs} ms ago`)
      }
    }
    const available = await sql<{ now: string; later: string }>`
      select md_available(${keyId}, ${nowMs}) as now, md_available(${keyId}, ${nowMs + HOLD_LEASE_MS + 1}) as later`.execute(
      db
    )
    const availableNow = n(available.rows[0]?.now)
    const availableAfterLeases = n(available.rows[0]?.later)
    const held = liveHolds.reduce((s, h) => s + h.amount, 0)
    if (availableNow !== booked - held)
      problems.push(`key ${keyId}: available ${availableNow} != booked ${booked} - live holds ${held}`)
    if (availableAfterLeases !== booked) {
      problems.push(`key ${keyId}: available after every lease ${availableAfterLeases} != booked ${booked}`)
    }
    const served = expectation.served?.get(keyId)
    if (served !== undefined) {
      if (served.credits !== k.charged) {
        problems.push(
          `key ${keyId}: served answers were charged ${served.credits} credits, the ledger has ${k.charged}`
        )
      }
      if (served.answers !== undefined && served.answers !== k.chargeCount) {
        problems.push(`key ${keyId}: ${served.answers} charged answers served, ${k.chargeCount} charge entries`)
      }
    }
    out.set(keyId, {
      keyId,
      booked,
      granted: k.granted,
      charged: k.charged,
      chargeCount: k.chargeCount,
      liveHolds,
      expiredHolds: mine.length - liveHolds.length,
      availableNow,
      availableAfterLeases
    })
  }
  expect(problems.slice(0, 30), "ledger invariant").toEqual([])
  return out
}
