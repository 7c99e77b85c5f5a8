/**
 * `releaseFreedMemory` (infra/src/Memory.ts): after it, the V8 heap grows by at most `WARM_HEAP_GROWING_PERCENT`
 * of what a full collection keeps before the next one. Run in a child process (the setting is process-wide): a
 * heap of live objects, then a churn of short-lived objects that live long enough to be promoted (as a warm
 * server's in-flight requests are under load); the largest heap seen must stay within the growth allowed plus the
 * young generation. With V8's own factor the same churn took the heap to about five times the live size
 * (measured: 78 MB live, 393 MB).
 */
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { WARM_HEAP_GROWING_PERCENT } from "../src/Memory.ts"

const memory = fileURLToPath(new URL("../src/Memory.ts", import.meta.url))

const child = `
import { Effect, References } from "effect"
import { releaseFreedMemory } from ${JSON.stringify(memory)}
const live = []
for (let i = 0; i < 400_000; i++) live.push({ a: i, b: [i, i + 1], c: "x" + i })
await Effect.runPromise(releaseFreedMemory("test").pipe(Effect.provideService(References.MinimumLogLevel, "None")))
const base = process.memoryUsage().heapUsed
const ring = new Array(100_000)
let peak = 0
for (let i = 0; i < 3_000_000; i++) {
  ring[i % ring.length] = { i, s: [i, i * 2, i * 3] }
  if (i % 20_000 === 0) peak = Math.max(peak, process.memoryUsage().heapTotal)
}
console.log(JSON.stringify({ live: live.length, base, peak }))
`

describe("releaseFreedMemory", () => {
  it("bounds the heap's growth between full collections from then on", () => {
    const out = execFileSync(process.execPath, ["--max-semi-space-size=8", "--input-type=module", "-e", child], {
      cwd: fileURLToPath(new URL("..", import.meta.url)),
      encoding: "utf8"
    })
    const { live, base, peak } = JSON.parse(out.trim().split("\n").at(-1) as string)
    expect(live).toBe(400_000)
    // The live heap grown by the percent, plus the ring and the young generation (about one more `base`): measured
    // 1.9 to 2.1 times `base` at 25 %, 2.9 to 3.0 times at 100 %, against 4.3 to 4.8 times with V8's own factor.
    expect(peak).toBeLessThan((1 + WARM_HEAP_GROWING_PERCENT / 100 + 1.5) * base)
  }, 120_000)
})
