/** The examples run against a live server, so they cannot rot. */
import { execFile } from "node:child_process"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startServer, type TestServer } from "./support/server.ts"

let server: TestServer
beforeAll(async () => {
  server = await startServer({ rateLimitPerMinute: 10_000 })
})
afterAll(() => server.close())

describe("examples", () => {
  it("curl-walkthrough.sh runs to the end against a server", async () => {
    const { key } = await server.newKey(10)
    const script = join(import.meta.dirname, "..", "examples", "curl-walkthrough.sh")
    const { stdout } = await promisify(execFile)("bash", [script], {
      env: { ...process.env, BASE: server.base, KEY: key }
    })
    expect(stdout).toContain("service-market-data")
    expect(stdout).toContain("credits_remaining")
    expect(stdout).toContain("HTTP 400")
    expect(stdout).toContain("parameter_requires")
  })
})
