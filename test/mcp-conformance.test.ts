/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`) against the running server: the
 * server scenarios that apply to any server. The suite needs Node >= 22; it runs on the Node this test runs
 * on, which `npm test`/`npx vitest` take from the pinned `node` devDependency.
 */
import { execFile } from "node:child_process"
import { mkdtemp, rm } from "node:fs/promises"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startServer, type TestServer } from "./support/server.ts"

/** The scenarios that apply to any server (the others expect the suite's own test tools and prompts). */
const SCENARIOS = ["server-initialize", "ping", "tools-list", "resources-list", "dns-rebinding-protection"] as const

const require = createRequire(import.meta.url)
const cli = join(require.resolve("@modelcontextprotocol/conformance/package.json"), "..", "dist", "index.js")

let server: TestServer
let workDir: string

beforeAll(async () => {
  server = await startServer({ rateLimitPerMinute: 100_000 })
  // The suite writes its results under ./results; keep them out of the repository.
  workDir = await mkdtemp(join(tmpdir(), "mcp-conformance-"))
})
afterAll(async () => {
  await server.close()
  await rm(workDir, { recursive: true, force: true })
})

/** Runs the suite asynchronously: the server under test lives in this process's event loop. */
const runScenario = (scenario: string) =>
  new Promise<{ code: number; output: string }>((resolve) => {
    execFile(
      process.execPath,
      [cli, "server", "--url", `http://localhost:${server.port}/api/mcp`, "--scenario", scenario],
      { cwd: workDir, timeout: 60_000, encoding: "utf8" },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
        resolve({ code, output: `${stdout}\n${stderr}` })
      }
    )
  })

describe("MCP conformance (server scenarios)", () => {
  it("runs on Node >= 22", () => {
    expect(Number(process.versions.node.split(".")[0])).toBeGreaterThanOrEqual(22)
  })

  for (const scenario of SCENARIOS) {
    it(`passes ${scenario}`, async () => {
      const { code, output } = await runScenario(scenario)
      expect(output, output).toMatch(/Passed: (\d+)\/\1, 0 failed/)
      expect(output).not.toContain("FAILURE")
      expect(code, output).toBe(0)
    })
  }
})
