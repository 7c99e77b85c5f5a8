/**
 * `settleNodeHttpShapes` keeps Node's HTTP request and response objects out of V8's dictionary mode, whatever the
 * collector does between a starting service's first requests. The control shows why it exists: on this Node,
 * twelve requests one at a time with a full collection after each (a service answering health checks while it
 * generates its history) leave every request from the seventh on made as a hash table. If a later Node makes the
 * control pass with fast objects, the settling is no longer needed (see `NodeShapes.ts`).
 */
import { spawnSync } from "node:child_process"
import { resolve } from "node:path"
import { describe, expect, it } from "vitest"

const CHILD = resolve(import.meta.dirname, "support", "node-shapes-child.ts")

const run = (settle: boolean): Array<{ readonly request: boolean; readonly response: boolean }> => {
  const child = spawnSync(
    process.execPath,
    ["--allow-natives-syntax", "--expose-gc", CHILD, ...(settle ? ["settle"] : [])],
    { encoding: "utf8", timeout: 60_000 }
  )
  expect(child.stderr).toBe("")
  expect(child.status).toBe(0)
  return JSON.parse(child.stdout)
}

describe("settleNodeHttpShapes", () => {
  it("without it, a collection between each of the first requests leaves Node's HTTP objects as hash tables", () => {
    const seen = run(false)
    expect(seen).toHaveLength(12)
    expect(seen.slice(0, 6).every((s) => s.request && s.response)).toBe(true)
    expect(seen.slice(6).every((s) => !s.request && !s.response)).toBe(true)
  })

  it("after it, every request and response has fast properties", () => {
    const seen = run(true)
    expect(seen).toHaveLength(12)
    expect(seen).toEqual(seen.map(() => ({ request: true, response: true })))
  })
})
