/**
 * The official MCP conformance suite against the running server, in two versions side by side:
 * `@modelcontextprotocol/conformance` 0.1.16 for the initialize-based revisions (the server scenarios that apply
 * to any server), and the pre-release `@modelcontextprotocol/conformance-next` (0.2.0-alpha.12) at
 * `--spec-version 2026-07-28` on the scenarios that need no reference fixtures. A 2026-07-28 check that cannot
 * pass here is listed in `EXPECTED_2026_FAILURES` with its reason (and in docs/testing.md): the test fails if it
 * starts passing, or if any other check fails. The suite needs Node >= 22; it runs on the Node this test runs on,
 * which `npm test`/`npx vitest` take from the pinned `node` devDependency.
 */
import { execFile } from "node:child_process"
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startServer, type TestServer } from "./support/server.ts"

/** The scenarios that apply to any server (the others expect the suite's own test tools and prompts). */
const SCENARIOS = ["server-initialize", "ping", "tools-list", "resources-list", "dns-rebinding-protection"] as const

/** The 2026-07-28 scenarios of the pre-release suite that need no reference fixtures. */
const SCENARIOS_2026 = [
  "server-stateless",
  "tools-list",
  "resources-list",
  "sep-2164-resource-not-found",
  "dns-rebinding-protection",
  "caching",
  "http-header-validation",
  "http-custom-header-server-validation",
  "server-sse-multiple-streams"
] as const

/**
 * The 2026-07-28 checks that fail against this server, and why. The suite reports a check it cannot exercise as a
 * failure ("Not testable"), so a server without the suite's diagnostic fixture tools fails those checks.
 */
export const EXPECTED_2026_FAILURES: { readonly [checkId: string]: string } = {
  "sep-2575-server-rejects-undeclared-capability":
    "needs the suite's fixture tool `test_missing_capability`; no tool here requires a client capability",
  "sep-2575-missing-capability-http-400": "the same fixture tool `test_missing_capability`",
  "sep-2575-http-server-no-independent-requests-on-stream":
    "needs the suite's fixture tool `test_streaming_elicitation`; no tool here streams or elicits",
  "sep-2575-server-no-log-without-loglevel": "needs the suite's fixture tool `test_logging_tool`; no tool here logs",
  "sep-2549-prompts-list-caching-hints":
    "asks `prompts/list`, and this server has no prompts (it answers -32601 and does not declare the capability)"
}

const require = createRequire(import.meta.url)
const cli = join(require.resolve("@modelcontextprotocol/conformance/package.json"), "..", "dist", "index.js")
const cliNext = join(require.resolve("@modelcontextprotocol/conformance-next/package.json"), "..", "dist", "index.js")

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

interface Check {
  readonly id: string
  readonly status: string
  readonly errorMessage?: string
}

/** Runs one 2026-07-28 scenario of the pre-release suite; its checks as the suite records them. */
const runScenario2026 = (scenario: string) =>
  new Promise<{ checks: ReadonlyArray<Check>; output: string }>((resolve, reject) => {
    const out = join(workDir, `next-${scenario}`)
    execFile(
      process.execPath,
      [
        cliNext,
        "server",
        "--url",
        `http://localhost:${server.port}/api/mcp`,
        "--scenario",
        scenario,
        "--spec-version",
        "2026-07-28",
        "-o",
        out
      ],
      { cwd: workDir, timeout: 90_000, encoding: "utf8" },
      async (_error, stdout, stderr) => {
        try {
          const [dir] = await readdir(out)
          if (dir === undefined) throw new Error(`no results for ${scenario}:\n${stdout}\n${stderr}`)
          const checks = JSON.parse(await readFile(join(out, dir, "checks.json"), "utf8")) as ReadonlyArray<Check>
          resolve({ checks, output: `${stdout}\n${stderr}` })
        } catch (e) {
          reject(e)
        }
      }
    )
  })

describe("MCP conformance 2026-07-28 (pre-release suite 0.2.0-alpha.12)", () => {
  for (const scenario of SCENARIOS_2026) {
    it(`passes ${scenario}, but for the checks named in EXPECTED_2026_FAILURES`, async () => {
      const { checks, output } = await runScenario2026(scenario)
      expect(checks.length, output).toBeGreaterThan(0)
      for (const check of checks) {
        const expected = EXPECTED_2026_FAILURES[check.id]
        if (expected === undefined) {
          expect(["SUCCESS", "SKIPPED", "INFO"], `${check.id}: ${check.errorMessage ?? ""}`).toContain(check.status)
        } else {
          expect(check.status, `${check.id} was expected to fail (${expected}); update the list`).toBe("FAILURE")
        }
      }
    })
  }
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
