/**
 * The money model (core/test/contracts/MoneyModel.ts) on the in-memory twin; adapters/postgres/test/MoneyModel.test.ts
 * runs the same programs on PGlite and server PostgreSQL, so the stores agree with the model and with each other.
 */
import { describe, expect, it } from "@effect/vitest"
import { memoryStores } from "@market-data/memory"
import { Effect } from "effect"
import fc from "fast-check"
import { IDEMPOTENCY_LEASE_MS } from "../src/Money.ts"
import { type Action, actionArb, DAY, runProgram, SECOND } from "./contracts/MoneyModel.ts"

const runMemory = (
  credits: number,
  actions: ReadonlyArray<Action>,
  fault?: "double_charge" | "early_expiry" | "sticky_transient"
) => Effect.runPromise(runProgram(memoryStores(), credits, actions, fault))

describe("money model: ledger + idempotency against a reference model", () => {
  it("agrees with the model on random programs of requests, keys, crashes, top-ups and clock jumps", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 25 }),
        fc.array(actionArb, { minLength: 1, maxLength: 40 }),
        (credits, actions) => runMemory(credits, actions)
      ),
      { numRuns: 1500 }
    )
  })

  // The property is able to fail: each broken store is caught on random programs.
  for (const fault of ["double_charge", "early_expiry", "sticky_transient"] as const) {
    it(`catches a broken store: ${fault}`, async () => {
      const result = await fc.check(
        fc.asyncProperty(
          fc.integer({ min: 0, max: 25 }),
          fc.array(actionArb, { minLength: 1, maxLength: 40 }),
          (credits, actions) => runMemory(credits, actions, fault)
        ),
        { numRuns: 3000, endOnFailure: true, seed: 20261123 }
      )
      expect(result.failed).toBe(true)
    })
  }

  it("agrees with the model on hand-picked edges: 24 h -1 s/+-0, the lease -1 s/+-0, a crash then a retry", async () => {
    const k = "k1"
    const programs: ReadonlyArray<readonly [number, ReadonlyArray<Action>]> = [
      [
        10,
        [
          { _tag: "Call", request: 0, key: k },
          { _tag: "Jump", ms: DAY - SECOND },
          { _tag: "Call", request: 0, key: k },
          { _tag: "Call", request: 1, key: k },
          { _tag: "Jump", ms: SECOND },
          { _tag: "Call", request: 1, key: k },
          { _tag: "Call", request: 1, key: k }
        ]
      ],
      [
        1,
        [
          { _tag: "Crash", key: k },
          { _tag: "Call", request: 0, key: undefined },
          { _tag: "Call", request: 0, key: k },
          { _tag: "Jump", ms: IDEMPOTENCY_LEASE_MS - SECOND },
          { _tag: "Crash", key: k },
          { _tag: "Jump", ms: SECOND },
          { _tag: "Call", request: 0, key: k },
          { _tag: "Call", request: 0, key: k },
          { _tag: "Interrupt" }
        ]
      ],
      [
        6,
        [
          { _tag: "Call", request: 6, key: k },
          { _tag: "Call", request: 6, key: k },
          { _tag: "Call", request: 5, key: k },
          { _tag: "Call", request: 5, key: k },
          { _tag: "Call", request: 4, key: "k2" },
          { _tag: "Call", request: 4, key: "k2" },
          { _tag: "Call", request: 2, key: "k3" },
          { _tag: "Grant", credits: 3 },
          { _tag: "Call", request: 2, key: "k3" },
          { _tag: "Crash", key: "k3" },
          { _tag: "Interrupt" }
        ]
      ]
    ]
    for (const [credits, actions] of programs) await runMemory(credits, actions)
  })
})
