/**
 * Decimal strings survive HTTP and MCP encoding unchanged: a filed figure with more digits than a double holds
 * (revenue "1234567890123456789.123456"), one with a trailing zero ("987654321.50") and a four-place EPS, ingested
 * into an embedded store with `market-data ingest sec`, come back from `serve` (a child process on that data dir)
 * as the identical strings over `/api/v1/financials` and over MCP `tools/call financials`. The raw bodies are
 * checked, not only their parse: a float anywhere on the way would print 1234567890123456800.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { type Io, runCli } from "@market-data/infra"
import { ConfigProvider, Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { FIXTURE_ID, LONG_DECIMAL, writeFixtures } from "./support/ingest-fixtures.ts"
import { callTool } from "./support/mcp.ts"

const BIN = resolve(import.meta.dirname, "..", "infra", "src", "bin.ts")
const SEC = resolve(import.meta.dirname, "..", "..", "shared", "data", "sec")
const APPLE = existsSync(join(SEC, "companyfacts", "CIK0000320193.json"))
const KEY = "mdk_DecimalTransport0123456789abcdef"
const auth = { authorization: `Bearer ${KEY}` }

/** The filed strings, newest period first (FY2023, FY2022 of the fixture company). */
const FILED = {
  revenue: [LONG_DECIMAL, "987654321.50"],
  net_income: ["23456789.01", "12345678.90"],
  eps_diluted: ["23.4568", "12.35"]
} as const

describe("decimal strings over HTTP and MCP", () => {
  const work = mkdtempSync(join(tmpdir(), "md-decimals-"))
  const data = join(work, "data")
  let child: ChildProcess | undefined
  let base = ""

  beforeAll(async () => {
    const files = writeFixtures(join(work, "files"))
    const io: Io = { out: () => {}, err: () => {} }
    const env = ConfigProvider.layer(
      ConfigProvider.fromEnvRecord({ MARKET_DATA_SIM_UNIVERSE: "registry", MARKET_DATA_DIR: data })
    )
    const inputs = [
      files.companyFacts,
      files.submissions,
      ...(APPLE ? [join(SEC, "companyfacts"), join(SEC, "submissions")] : [])
    ]
    const code = await Effect.runPromise(runCli(["ingest", "sec", ...inputs], io).pipe(Effect.provide(env)))
    expect(code).toBe(0)

    const { DATABASE_URL: _ignored, ...inherited } = process.env
    child = spawn(process.execPath, [BIN, "serve"], {
      env: {
        ...inherited,
        PORT: "0",
        MARKET_DATA_DIR: data,
        MARKET_DATA_BOOTSTRAP_KEY: KEY,
        MARKET_DATA_BOOTSTRAP_CREDITS: "100",
        LOG_LEVEL: "warn"
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    const started = child
    base = await new Promise<string>((ok, fail) => {
      let out = ""
      let err = ""
      const timer = setTimeout(() => fail(new Error(`serve did not start: ${err}`)), 60_000)
      started.stderr?.on("data", (d) => (err += d))
      started.stdout?.on("data", (d) => {
        out += d
        const m = /listening on (http:\/\/[^/\s]+)/.exec(out)
        if (m !== null) {
          clearTimeout(timer)
          ok(m[1] as string)
        }
      })
      started.on("exit", (code) => fail(new Error(`serve exited ${code}: ${err}`)))
    })
  }, 120_000)

  afterAll(async () => {
    const running = child
    if (running !== undefined && running.exitCode === null) {
      await new Promise<void>((done) => {
        running.on("exit", () => done())
        running.kill("SIGTERM")
      })
    }
    rmSync(work, { recursive: true, force: true })
  })

  const query = { id: FIXTURE_ID, period_kind: "annual", periods: 2 }

  it("over HTTP: the body carries the filed strings, quoted, digit for digit", async () => {
    const res = await fetch(`${base}/api/v1/financials?id=${FIXTURE_ID}&period_kind=annual&periods=2`, {
      headers: auth
    })
    const text = await res.text()
    expect(res.status, text).toBe(200)
    expect(text).toContain(`"by_period":["${LONG_DECIMAL}","987654321.50"]`)
    expect(text).not.toContain("1234567890123456800")
    const body = JSON.parse(text)
    for (const [line, filed] of Object.entries(FILED)) expect(body.data.values[line].by_period, line).toEqual(filed)
  })

  it("over MCP: the tool result's text and structuredContent carry the identical strings, equal to HTTP's", async () => {
    const { reply, result } = await callTool(base, "financials", query, auth)
    expect(reply.status).toBe(200)
    expect(result.isError).not.toBe(true)
    const content = result.content[0].text as string
    expect(content).toContain(`"by_period":["${LONG_DECIMAL}","987654321.50"]`)
    // The JSON-RPC reply embeds the tool's text as a JSON string, so the quotes are escaped there.
    expect(reply.text).toContain(`\\"by_period\\":[\\"${LONG_DECIMAL}\\",\\"987654321.50\\"]`)
    for (const [line, filed] of Object.entries(FILED)) {
      expect(result.structuredContent.data.values[line].by_period, line).toEqual(filed)
    }
    const http = (await (
      await fetch(`${base}/api/v1/financials?id=${FIXTURE_ID}&period_kind=annual&periods=2`, { headers: auth })
    ).json()) as any
    expect(result.structuredContent.data.values).toEqual(http.data.values)
  })

  it.skipIf(!APPLE)(
    `Apple's filed figures come back as filed over both transports${APPLE ? "" : " (SKIPPED: ../shared/data/sec is absent)"}`,
    async () => {
      const http = (await (
        await fetch(`${base}/api/v1/financials?id=eq:320193:AAPL&period_kind=annual&periods=2`, { headers: auth })
      ).json()) as any
      const { result } = await callTool(
        base,
        "financials",
        { id: "eq:320193:AAPL", period_kind: "annual", periods: 2 },
        auth
      )
      for (const values of [http.data.values, result.structuredContent.data.values]) {
        expect(values.revenue.by_period).toEqual(["416161000000", "391035000000"])
        expect(values.eps_diluted.by_period).toEqual(["7.46", "6.08"])
      }
    }
  )
})
