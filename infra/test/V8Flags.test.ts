/**
 * `applyServeV8Flags` (infra/src/V8Flags.ts): after it, V8 no longer moves an allocation site's objects to the old
 * generation however long they live. Run in child processes (V8's flags are process-wide), with the young
 * generation fixed at `serve`'s largest (8 MB, where V8 takes its pretenuring decisions): one hot site whose
 * objects all survive many young collections (as requests answered during a busy start do). V8's own trace of its
 * pretenuring decisions (`--trace-pretenuring-statistics`) tells what it decided. Without the flags it decides to
 * tenure the site (the check that the workload shows what it must); with them it takes no decision at all, and a
 * fresh object of that site is young.
 *
 * The decision is read from the trace, not from where one object lands: which code tier allocates the last object
 * (interpreter, or optimized code compiled concurrently before or after the decision) depends on the machine's load,
 * and under load an object of a site V8 had decided to tenure was once found young (a CI run on a busy machine).
 */
import { spawnSync } from "node:child_process"
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

interface Run {
  readonly kept: number
  readonly young: boolean
  /** V8's pretenuring decisions from its trace: lines such as `AllocationSite(0x…): (…) undecided => tenure`. */
  readonly decisions: ReadonlyArray<string>
}

const run = (apply: boolean): Run => {
  const r = spawnSync(
    process.execPath,
    [
      "--allow-natives-syntax",
      "--trace-pretenuring-statistics",
      "--min-semi-space-size=8",
      "--max-semi-space-size=8",
      "--input-type=module",
      "-e",
      child(apply)
    ],
    { encoding: "utf8" }
  )
  expect(r.status, r.stderr).toBe(0)
  const lines = `${r.stdout}\n${r.stderr}`.split("\n")
  const result = lines.filter((l) => l.startsWith("{")).at(-1)
  expect(result, r.stdout).toBeDefined()
  return {
    ...(JSON.parse(result as string) as { kept: number; young: boolean }),
    decisions: lines.filter((l) => /AllocationSite\(.*=>/.test(l))
  }
}

describe("applyServeV8Flags", () => {
  it("V8 decides to pretenure a site whose objects survive, without the flags", () => {
    const r = run(false)
    expect(r.kept).toBeGreaterThan(0)
    expect(r.decisions.some((d) => d.endsWith("=> tenure"))).toBe(true)
  }, 60_000)

  it("takes no pretenuring decision with them, and keeps that site's new objects young", () => {
    const r = run(true)
    expect(r.kept).toBeGreaterThan(0)
    expect(r.decisions).toEqual([])
    expect(r.young).toBe(true)
  }, 60_000)
})
