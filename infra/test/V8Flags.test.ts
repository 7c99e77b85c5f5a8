/**
 * `applyServeV8Flags` (infra/src/V8Flags.ts): after it, V8 no longer moves an allocation site's objects to the old
 * generation however long they live. Run in child processes (V8's flags are process-wide), with the young
 * generation fixed at `serve`'s largest (8 MB, where V8 takes its pretenuring decisions): one hot site whose
 * objects all survive many young collections (as requests answered during a busy start do), then whether a fresh
 * object of that site is young. Without the flags V8 pretenures the site (the check that the workload shows what
 * it must); with them it does not.
 */
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const flags = fileURLToPath(new URL("../src/V8Flags.ts", import.meta.url))

const child = (apply: boolean) => `
import { applyServeV8Flags } from ${JSON.stringify(flags)}
if (${apply}) applyServeV8Flags()
const make = (i) => [i, i + 1, { v: i }]
const kept = []
for (let round = 0; round < 200; round++) {
  for (let i = 0; i < 20_000; i++) kept.push(make(i))
  if (kept.length > 400_000) kept.length = 0
}
console.log(JSON.stringify({ kept: kept.length, young: %InYoungGeneration(make(1)) }))
`

const run = (apply: boolean): { kept: number; young: boolean } => {
  const out = execFileSync(
    process.execPath,
    [
      "--allow-natives-syntax",
      "--min-semi-space-size=8",
      "--max-semi-space-size=8",
      "--input-type=module",
      "-e",
      child(apply)
    ],
    { encoding: "utf8" }
  )
  return JSON.parse(out.trim().split("\n").at(-1) as string)
}

describe("applyServeV8Flags", () => {
  it("V8 pretenures a site whose objects survive, without the flags", () => {
    const r = run(false)
    expect(r.kept).toBeGreaterThan(0)
    expect(r.young).toBe(false)
  }, 60_000)

  it("keeps that site's new objects young with them", () => {
    const r = run(true)
    expect(r.kept).toBeGreaterThan(0)
    expect(r.young).toBe(true)
  }, 60_000)
})
