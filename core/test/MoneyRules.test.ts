/**
 * The money rules (core/src/Money.ts) one by one: the decisions the memory twin calls and the SQL functions
 * mirror. The store contracts (core/test/contracts/StoreContracts.ts) and the money model check the stores
 * against the same behaviour end to end.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  admitsUnit,
  beginRefusal,
  chargeWithin,
  comparesBeforeHold,
  decideAdmit,
  decideBegin,
  decideFinish,
  decideMetered,
  decideSettle,
  HOLD_LEASE_MS,
  holdCovered,
  IDEMPOTENCY_LEASE_MS,
  type IdempotencyRecord,
  isTransientStatus,
  leaseUntil,
  ownsRecord,
  REPLAY_WINDOW_MS,
  recordLive,
  replayUntil,
  type StoredAnswer
} from "../src/Money.ts"

const T0 = 1_800_000_000_000
const answer: StoredAnswer = { status: 200, headers: { "x-credits-charged": "1" }, body: '{"ok":true}' }
const inFlight = (token = "t1", fingerprint = "price?id=a"): IdempotencyRecord => ({
  state: "in_flight",
  fingerprint,
  token,
  expiresAtMs: leaseUntil(T0)
})
const stored = (fingerprint = "price?id=a"): IdempotencyRecord => ({
  state: "stored",
  fingerprint,
  answer,
  expiresAtMs: replayUntil(T0)
})

describe("rate unit", () => {
  it("admits while fewer than the limit are spent, never at or over it", () => {
    expect(admitsUnit(0, 1)).toBe(true)
    expect(admitsUnit(59, 60)).toBe(true)
    expect(admitsUnit(60, 60)).toBe(false)
    // A limit lowered under what was spent refuses too.
    expect(admitsUnit(61, 60)).toBe(false)
    expect(admitsUnit(0, 0)).toBe(false)
  })
})

describe("idempotency begin (the contract's state table)", () => {
  it("a free key starts; an expired record counts as free", () => {
    expect(decideBegin(undefined, "price?id=a", T0)).toEqual({ _tag: "Start" })
    expect(decideBegin(inFlight(), "price?id=a", T0 + IDEMPOTENCY_LEASE_MS)).toEqual({ _tag: "Start" })
    expect(decideBegin(stored(), "price?id=b", T0 + REPLAY_WINDOW_MS)).toEqual({ _tag: "Start" })
  })

  it("the same request is in progress while in flight, replayed once stored, up to the last millisecond", () => {
    expect(decideBegin(inFlight(), "price?id=a", T0 + IDEMPOTENCY_LEASE_MS - 1)).toEqual({ _tag: "InProgress" })
    expect(decideBegin(stored(), "price?id=a", T0 + REPLAY_WINDOW_MS - 1)).toEqual({ _tag: "Replay", answer })
  })

  it("a different request is a conflict whether the record is in flight or stored", () => {
    expect(decideBegin(inFlight(), "price?id=b", T0)).toEqual({ _tag: "Conflict" })
    expect(decideBegin(stored(), "price?id=b", T0)).toEqual({ _tag: "Conflict" })
  })

  it("refusals: in progress is 409 request_in_progress with Retry-After, conflict 409 idempotency_conflict", () => {
    const inProgress = beginRefusal({ _tag: "InProgress" })
    expect(inProgress?.code).toBe("request_in_progress")
    expect(inProgress?.retryAfterSeconds).toBe(1)
    expect(beginRefusal({ _tag: "Conflict" })?.code).toBe("idempotency_conflict")
    expect(beginRefusal({ _tag: "Start" })).toBeUndefined()
    expect(beginRefusal({ _tag: "Replay" })).toBeUndefined()
  })

  it("only the token in flight owns a record; a stored one is owned by nobody", () => {
    expect(ownsRecord(inFlight("t1"), "t1")).toBe(true)
    expect(ownsRecord(inFlight("t2"), "t1")).toBe(false)
    expect(ownsRecord(stored(), "t1")).toBe(false)
    expect(ownsRecord(undefined, "t1")).toBe(false)
  })

  it("a record is live strictly before its end", () => {
    expect(recordLive(inFlight(), T0 + IDEMPOTENCY_LEASE_MS - 1)).toBe(true)
    expect(recordLive(inFlight(), T0 + IDEMPOTENCY_LEASE_MS)).toBe(false)
    expect(recordLive(undefined, T0)).toBe(false)
  })

  it("every begin on a live record of another fingerprint conflicts, of the same one never starts", () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.string(),
        fc.string(),
        fc.integer({ min: 0, max: IDEMPOTENCY_LEASE_MS - 1 }),
        (isStored, a, b, dt) => {
          const record = isStored ? stored(a) : inFlight("t", a)
          const d = decideBegin(record, b, T0 + dt)
          if (a !== b) expect(d._tag).toBe("Conflict")
          else expect(d._tag).toBe(isStored ? "Replay" : "InProgress")
        }
      )
    )
  })
})

describe("transient outcomes", () => {
  it("408, 425, 429 and 5xx release; everything else is stored", () => {
    for (const s of [408, 425, 429, 500, 503, 599]) expect(isTransientStatus(s)).toBe(true)
    for (const s of [200, 304, 400, 401, 402, 404, 409, 422]) expect(isTransientStatus(s)).toBe(false)
  })
})

describe("credits", () => {
  it("a hold is taken only when the available balance covers it", () => {
    expect(holdCovered(5, 5)).toBe(true)
    expect(holdCovered(4, 5)).toBe(false)
    expect(holdCovered(0, 0)).toBe(true)
  })

  it("the charge is what was delivered, within 0 and what was held", () => {
    expect(chargeWithin(3, 5)).toBe(3)
    expect(chargeWithin(7, 5)).toBe(5)
    expect(chargeWithin(-1, 5)).toBe(0)
  })

  it("settle: once; an expired hold charges only what the balance covers; a lost receipt charges nothing", () => {
    const base = { resolved: false, live: true, charge: 3, available: 0, receipt: "none" as const }
    expect(decideSettle(base)).toBe("Settle")
    expect(decideSettle({ ...base, resolved: true })).toBe("AlreadyResolved")
    expect(decideSettle({ ...base, live: false })).toBe("Expired")
    expect(decideSettle({ ...base, live: false, available: 3 })).toBe("Settle")
    // Charging nothing needs no balance, even on an expired hold.
    expect(decideSettle({ ...base, live: false, charge: 0 })).toBe("Settle")
    expect(decideSettle({ ...base, receipt: "owned" })).toBe("Settle")
    expect(decideSettle({ ...base, receipt: "lost" })).toBe("Superseded")
    // The order of md_finish: resolved, then expired, then the receipt.
    expect(decideSettle({ ...base, resolved: true, receipt: "lost" })).toBe("AlreadyResolved")
    expect(decideSettle({ ...base, live: false, receipt: "lost" })).toBe("Expired")
  })

  it("metered: the rate unit first, then the key's revocation, then the balance must cover the hold amount", () => {
    const base = { unitAdmitted: true, revoked: false, available: 3, required: 3 }
    expect(decideMetered({ ...base, unitAdmitted: false, available: 100, required: 1 })).toBe("RateLimited")
    expect(decideMetered({ ...base, unitAdmitted: false, revoked: true })).toBe("RateLimited")
    expect(decideMetered({ ...base, revoked: true })).toBe("KeyRevoked")
    expect(decideMetered({ ...base, available: 2 })).toBe("Insufficient")
    expect(decideMetered(base)).toBe("Charge")
  })

  it("admit: rate unit, revoked, Idempotency-Key, hold, in that order; a replay or refusal holds nothing", () => {
    const base = { unitAdmitted: true, revoked: false, begin: undefined, available: 5, hold: 5 }
    const replay = { _tag: "Replay" as const, answer: { status: 200, headers: {}, body: "{}" } }
    expect(decideAdmit(base)).toEqual({ _tag: "Admit" })
    expect(decideAdmit({ ...base, available: 4 })).toEqual({ _tag: "Insufficient" })
    expect(decideAdmit({ ...base, available: 0, hold: 0 })).toEqual({ _tag: "Admit" })
    expect(decideAdmit({ ...base, begin: { _tag: "Start" } })).toEqual({ _tag: "Admit" })
    // A replay, a conflict and a request in progress answer whatever the balance.
    expect(decideAdmit({ ...base, available: 0, begin: replay })).toEqual(replay)
    expect(decideAdmit({ ...base, available: 0, begin: { _tag: "Conflict" } })).toEqual({ _tag: "Conflict" })
    expect(decideAdmit({ ...base, available: 0, begin: { _tag: "InProgress" } })).toEqual({ _tag: "InProgress" })
    // A revoked key is refused before its Idempotency-Key is looked at; a spent window before anything.
    expect(decideAdmit({ ...base, revoked: true, begin: replay })).toEqual({ _tag: "KeyRevoked" })
    expect(decideAdmit({ ...base, unitAdmitted: false, revoked: true })).toEqual({ _tag: "RateLimited" })
  })

  it("finish: Keep and Release always release; a settlement with a hold is decideSettle; without one the balance must cover what is required", () => {
    const base = {
      end: "Settle" as const,
      hold: "live" as const,
      charge: 3,
      required: 5,
      available: 0,
      receipt: "none" as const
    }
    expect(decideFinish(base)).toBe("Settle")
    expect(decideFinish({ ...base, end: "Keep", hold: "resolved" })).toBe("Keep")
    expect(decideFinish({ ...base, end: "Release", receipt: "lost" })).toBe("Release")
    expect(decideFinish({ ...base, hold: "resolved" })).toBe("AlreadyResolved")
    expect(decideFinish({ ...base, hold: "expired" })).toBe("Expired")
    expect(decideFinish({ ...base, hold: "expired", available: 3 })).toBe("Settle")
    expect(decideFinish({ ...base, receipt: "lost" })).toBe("Superseded")
    // No hold (compared first): the owner first, then the whole required amount, not only the charge.
    expect(decideFinish({ ...base, hold: "none", available: 4 })).toBe("Insufficient")
    expect(decideFinish({ ...base, hold: "none", available: 5 })).toBe("Settle")
    expect(decideFinish({ ...base, hold: "none", available: 0, receipt: "lost" })).toBe("Superseded")
    expect(decideFinish({ ...base, hold: "none", available: 5, receipt: "owned" })).toBe("Settle")
  })

  it("leases: a hold and an in-flight record live 60 s, a stored answer 24 h", () => {
    expect(HOLD_LEASE_MS).toBe(60_000)
    expect(leaseUntil(T0)).toBe(T0 + 60_000)
    expect(replayUntil(T0)).toBe(T0 + 24 * 60 * 60 * 1000)
  })
})

describe("conditional requests", () => {
  it("compare before any hold only for a conditional operation asked with If-None-Match", () => {
    expect(comparesBeforeHold(true, '"abc"')).toBe(true)
    expect(comparesBeforeHold(true, undefined)).toBe(false)
    expect(comparesBeforeHold(false, '"abc"')).toBe(false)
  })
})
