/**
 * 10,000 fuzzed requests over HTTP and 10,000 over MCP against a real `market-data serve` process on
 * PostgreSQL with the simulated planes (every operation implemented): random operations and tool names,
 * parameters and arguments of every kind, methods, headers (keys, idempotency keys, conditional requests,
 * protocol versions), malformed JSON-RPC (bad JSON, batches, missing fields, wrong types, notifications).
 * Asserted: zero 5xx (no injected outage here) and no JSON-RPC internal error; every HTTP error body and
 * every MCP tool error valid against the error schema the service publishes in its OpenAPI document; every
 * JSON-RPC answer a valid JSON-RPC 2.0 response; and afterwards the ledger invariant, with the credits
 * charged per key exactly those the served answers reported.
 */
import { Operations } from "@market-data/core"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MCP_HEADERS } from "../support/mcp.ts"
import { NASTY_VALUES } from "../support/nasty-values.ts"
import { SERVE_ENTRY, type ServerProcess, startServerProcess, stopServerProcess } from "../support/server-process.ts"
import { waitUntilWarm } from "./calls.ts"
import { type FaultDatabase, faultDatabaseUnavailable, newKey, openFaultDatabase } from "./database.ts"
import { type ErrorValidators, loadErrorValidators } from "./error-schema.ts"
import { checkLedgerInvariant } from "./ledger-invariant.ts"

const unavailable = faultDatabaseUnavailable()
const CASES = 10_000
const WORKERS = 8

// --- generators -------------------------------------------------------------------------------------------

const NASTY = NASTY_VALUES
const opNames = Operations.map((o) => o.name)
const paramNames = [...new Set(Operations.flatMap((o) => o.params.map((p) => p.name)))]
const enumValues = [
  ...new Set(
    Operations.flatMap((o) =>
      o.params.flatMap((p) => (p.type.kind === "enum" || p.type.kind === "enumList" ? p.type.values : []))
    )
  )
]
const text = fc.string({ unit: "binary", maxLength: 40 })
const encoded = text.map((s) => {
  try {
    return encodeURIComponent(s)
  } catch {
    return "%ED%A0%80"
  }
})
const word = fc.oneof(fc.constantFrom(...NASTY), ...(enumValues.length > 0 ? [fc.constantFrom(...enumValues)] : []))
const queryValue = fc.oneof(
  word.map((w) => (/^%|^\+$/.test(w) ? w : encodeURIComponent(w))),
  encoded,
  fc.integer({ min: -10, max: 10_000 }).map(String)
)
const queryName = fc.oneof(fc.constantFrom(...paramNames), fc.constantFrom(...paramNames), encoded)
const VALID_IDS = ["crypto:bitcoin", "crypto:ethereum", "eq:9990001:ALDR", "crypto:solana,crypto:bitcoin"]
const noise = fc
  .array(
    fc.oneof(
      fc.tuple(queryName, queryValue).map(([n, v]) => `${n}=${v}`),
      fc.tuple(queryName, queryValue).map(([n, v]) => `${n}=${v}`),
      fc.constantFrom("", "=", "&", "id", "id=", "a=b=c")
    ),
    { maxLength: 6 }
  )
  .map((a) => a.join("&"))
// A third of the queries start with a well-formed asset, so many requests get past decoding to the planes
// (and to billing): random noise alone rarely does.
const query = fc.oneof(
  noise,
  noise,
  fc
    .tuple(fc.constantFrom(...VALID_IDS), fc.constantFrom("id", "ids"), fc.oneof(fc.constant(""), noise))
    .map(([id, name, rest]) => `${name}=${encodeURIComponent(id)}${rest === "" ? "" : `&${rest}`}`)
)
const idemKey = fc.oneof(
  fc.constant(undefined),
  fc.constant(undefined),
  fc.stringMatching(/^[A-Za-z0-9-]{1,24}$/),
  // Invalid ones a client can send (fetch refuses control characters): too long, empty.
  fc.constantFrom("x".repeat(129), "", "fuzz-shared")
)

const httpRequest = fc.record({
  op: fc.oneof(fc.constantFrom(...opNames), fc.constantFrom(...opNames), fc.constantFrom(...opNames), encoded),
  query,
  method: fc.constantFrom("GET", "GET", "GET", "GET", "GET", "HEAD", "POST", "DELETE", "OPTIONS"),
  auth: fc.constantFrom("key", "key", "key", "none", "bad", "malformed", "two"),
  idem: idemKey,
  ifNoneMatch: fc.oneof(fc.constant(undefined), fc.constant(undefined), fc.constantFrom("*", '"abc"', 'W/"x", "y"'))
})

const jsonValue: fc.Arbitrary<unknown> = fc.oneof(
  { depthSize: "small" },
  word,
  text,
  fc.integer({ min: -5, max: 1_000 }),
  fc.double({ noNaN: false }),
  fc.boolean(),
  fc.constant(null),
  fc.array(word, { maxLength: 12 }),
  fc.array(fc.oneof(fc.integer(), fc.constant(null), fc.boolean()), { maxLength: 3 }),
  fc.dictionary(fc.constantFrom(...paramNames, "x"), word, { maxKeys: 2 })
)
const toolArgs = fc.dictionary(
  fc.oneof(fc.constantFrom(...paramNames), fc.constantFrom(...paramNames), text),
  jsonValue,
  {
    maxKeys: 5
  }
)
const rpcId = fc.oneof(
  fc.integer({ min: 0, max: 1_000_000 }),
  fc.string({ maxLength: 8 }),
  fc.constant(null),
  fc.constant(1.5),
  fc.constant([1])
)
const toolName = fc.oneof(fc.constantFrom(...opNames), fc.constantFrom(...opNames), fc.constantFrom(...opNames), text)
const callMessage = fc.record({
  jsonrpc: fc.constant("2.0"),
  id: fc.integer({ min: 1, max: 1_000_000 }),
  method: fc.constant("tools/call"),
  params: fc.oneof(
    fc.record({ name: toolName, arguments: toolArgs }),
    fc.record({ name: toolName, arguments: toolArgs }),
    fc.record({ name: toolName, arguments: toolArgs }),
    fc.record({ name: toolName }),
    fc.record({ name: jsonValue, arguments: jsonValue })
  )
})
// Well-formed calls on a known asset (with at most one random extra argument), so that many reach the planes.
const wellFormedCall = fc
  .record({
    id: fc.integer({ min: 1, max: 1_000_000 }),
    name: fc.constantFrom(...opNames),
    asset: fc.constantFrom("crypto:bitcoin", "crypto:ethereum", "eq:9990001:ALDR"),
    extra: fc.option(fc.tuple(fc.constantFrom(...paramNames), jsonValue), { nil: undefined })
  })
  .map(({ id, name, asset, extra }) => ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name, arguments: { id: asset, ...(extra === undefined ? {} : { [extra[0]]: extra[1] }) } }
  }))
const otherMessage = fc.oneof(
  fc.record({
    jsonrpc: fc.constant("2.0"),
    id: rpcId,
    method: fc.constantFrom(
      "initialize",
      "ping",
      "tools/list",
      "resources/list",
      "resources/templates/list",
      "resources/read",
      "prompts/list",
      "completion/complete",
      "nope"
    ),
    params: fc.oneof(
      fc.constant(undefined),
      fc.record({
        protocolVersion: fc.constantFrom("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "x"),
        capabilities: fc.constant({}),
        clientInfo: fc.constant({ name: "fuzz", version: "1" })
      }),
      fc.record({ cursor: fc.oneof(text, fc.integer()) }),
      fc.record({ uri: fc.oneof(fc.constantFrom("service://docs/index", "service://docs/nope", "http://x"), text) }),
      jsonValue
    )
  }),
  fc.record({ jsonrpc: fc.constant("2.0"), method: fc.constantFrom("notifications/initialized", "notifications/x") }),
  fc.record({ jsonrpc: fc.constantFrom("1.0", "2.0", undefined), id: rpcId, method: jsonValue, params: jsonValue }),
  fc.record({ jsonrpc: fc.constant("2.0"), id: rpcId, result: jsonValue }),
  jsonValue
)
const mcpBody = fc.oneof(
  wellFormedCall.map((m) => JSON.stringify(m)),
  wellFormedCall.map((m) => JSON.stringify(m)),
  callMessage.map((m) => JSON.stringify(m)),
  callMessage.map((m) => JSON.stringify(m)),
  callMessage.map((m) => JSON.stringify(m)),
  otherMessage.map((m) => JSON.stringify(m) ?? "null"),
  fc.array(fc.oneof(callMessage, otherMessage), { maxLength: 4 }).map((a) => JSON.stringify(a)),
  fc.constantFrom(
    "",
    "{",
    "[",
    "[]",
    "{}",
    "null",
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{',
    "\u0000"
  ),
  text
)
// The transport's headers are right three times in four; otherwise one of them is wrong (so most requests reach
// the JSON-RPC layer, and every refusal of the HTTP request itself is exercised too).
const transport = fc.oneof(
  { weight: 3, arbitrary: fc.constant({}) },
  {
    weight: 1,
    arbitrary: fc.oneof(
      fc.record({ version: fc.constantFrom("2025-11-25", "2025-06-18", "2025-03-26", "1999-01-01", "") }),
      fc.record({ accept: fc.constantFrom("application/json", "text/event-stream", "*/*", "") }),
      fc.record({ contentType: fc.constantFrom("text/plain", "application/json; charset=latin1", "") }),
      fc.record({ method: fc.constantFrom("GET", "DELETE", "PUT", "OPTIONS") }),
      fc.record({ origin: fc.constantFrom("http://localhost:3000", "https://evil.example", "null") })
    )
  }
)
const mcpRequest = fc
  .record({
    body: mcpBody,
    auth: fc.constantFrom("key", "key", "key", "none", "bad"),
    idem: idemKey,
    transport
  })
  .map(({ transport: t, ...rest }) => {
    const h = t as Partial<Record<"version" | "accept" | "contentType" | "method" | "origin", string>>
    return {
      ...rest,
      version: h.version,
      accept: h.accept ?? MCP_HEADERS.accept,
      contentType: h.contentType ?? "application/json",
      method: h.method ?? "POST",
      origin: h.origin
    }
  })

// --- the run ------------------------------------------------------------------------------------------------

const BAD_KEY = `mdk_${"0".repeat(32)}`

const pool = async <T>(items: ReadonlyArray<T>, work: (item: T) => Promise<void>) => {
  let next = 0
  await Promise.all(
    Array.from({ length: WORKERS }, async () => {
      while (next < items.length) await work(items[next++] as T)
    })
  )
}

if (unavailable !== undefined) {
  console.warn(`fuzz over a server process SKIPPED: ${unavailable}`)
  describe.skip(`fuzzed requests over HTTP and MCP (skipped: ${unavailable})`, () => {})
} else {
  describe("fuzzed requests against a server process on PostgreSQL", () => {
    let db: FaultDatabase
    let server: ServerProcess
    let validators: ErrorValidators
    let httpKey: { key: string; id: string }
    let mcpKey: { key: string; id: string }

    beforeAll(async () => {
      db = await openFaultDatabase()
      httpKey = await newKey(db.t.database, 1_000_000, null)
      mcpKey = await newKey(db.t.database, 1_000_000, null)
      server = await startServerProcess(
        {
          DATABASE_URL: db.t.url as string,
          DATABASE_POOL_SIZE: "8",
          MARKET_DATA_FEED: "simulated",
          MARKET_DATA_RATE_LIMIT_PER_MINUTE: "100000000"
        },
        { entry: SERVE_ENTRY, args: ["serve"], startTimeoutMs: 90_000 }
      )
      await waitUntilWarm(server.base, await newKey(db.t.database, 10_000))
      validators = await loadErrorValidators(server.base)
    }, 150_000)

    afterAll(async () => {
      if (server !== undefined) await stopServerProcess(server)
      await db?.close()
    })

    /** Whether the server is still up, and the end of what it logged. */
    const serverState = () =>
      `server ${server.child.exitCode === null && server.child.signalCode === null ? "running" : `exited ${server.child.exitCode ?? server.child.signalCode}`}; stderr: ${server.stderr().slice(-3000)}`

    const servedCredits = new Map<string, number>()
    const addCredits = (keyId: string, n: number) => servedCredits.set(keyId, (servedCredits.get(keyId) ?? 0) + n)

    const authHeaders = (auth: string, key: string): Array<[string, string]> => {
      switch (auth) {
        case "key":
          return [["authorization", `Bearer ${key}`]]
        case "bad":
          return [["authorization", `Bearer ${BAD_KEY}`]]
        case "malformed":
          return [["authorization", "Basic Zm9vOmJhcg=="]]
        case "two":
          return [
            ["authorization", `Bearer ${key}`],
            ["authorization", `Bearer ${key}`]
          ]
        default:
          return []
      }
    }

    it(`answers ${CASES} fuzzed HTTP requests without a 5xx, every error body as published`, async () => {
      const samples = fc.sample(httpRequest, { numRuns: CASES, seed: 20261123 })
      const failures: Array<string> = []
      const statuses = new Map<number, number>()
      await pool(samples, async (s) => {
        const headers = new Headers()
        for (const [k, v] of authHeaders(s.auth, httpKey.key)) headers.append(k, v)
        if (s.idem !== undefined) {
          try {
            headers.set("idempotency-key", s.idem)
          } catch {
            // fetch refuses some bytes in header values: send the request without it
          }
        }
        if (s.ifNoneMatch !== undefined) headers.set("if-none-match", s.ifNoneMatch)
        const url = `${server.base}/api/v1/${s.op}?${s.query}`
        const where = `${s.method} ${url.slice(0, 200)}`
        let res: Response
        let body: string
        try {
          res = await fetch(url, { method: s.method, headers, signal: AbortSignal.timeout(30_000) })
          body = await res.text()
        } catch (e) {
          failures.push(`no answer: ${where}: ${String(e)} ${String((e as { cause?: unknown }).cause)}`)
          return
        }
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
        if (res.status >= 500) failures.push(`5xx: ${res.status} ${where} ${body.slice(0, 200)}`)
        if (res.status >= 400 && s.method !== "HEAD") {
          let json: unknown
          try {
            json = JSON.parse(body)
          } catch {
            failures.push(`non-JSON error: ${res.status} ${where} ${body.slice(0, 100)}`)
            return
          }
          if (!validators.errorBody(json)) {
            failures.push(`error off schema (${validators.why(validators.errorBody)}): ${where} ${body.slice(0, 200)}`)
          }
        }
        if (res.status === 200 && s.auth === "key" && res.headers.get("idempotent-replayed") !== "true") {
          addCredits(httpKey.id, Number(res.headers.get("x-credits-charged") ?? 0))
        }
      })
      expect(failures.slice(0, 20), `${failures.length} failures; ${serverState()}`).toEqual([])
      // The mix reached every stage: successes, parameter errors, authentication, unknown operations.
      for (const status of [200, 400, 401, 404])
        expect(statuses.get(status) ?? 0, `status ${status}`).toBeGreaterThan(30)
      console.info(`fuzz http: ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`)
    }, 300_000)

    it(`answers ${CASES} fuzzed MCP requests without a 5xx or an internal error, every error as published`, async () => {
      const samples = fc.sample(mcpRequest, { numRuns: CASES, seed: 20261124 })
      const failures: Array<string> = []
      const statuses = new Map<string, number>()
      const count = (k: string) => statuses.set(k, (statuses.get(k) ?? 0) + 1)
      const isRpcResponse = (v: unknown): boolean => validators.rpcResponse(v)
      const checkResponse = (r: any, where: string, charged: boolean) => {
        if (!isRpcResponse(r)) {
          failures.push(
            `not JSON-RPC (${validators.why(validators.rpcResponse)}): ${where} ${JSON.stringify(r).slice(0, 200)}`
          )
          return
        }
        if (r.error !== undefined) {
          count(`rpc ${r.error.code}`)
          if (r.error.code === -32603) failures.push(`internal error: ${where} ${JSON.stringify(r).slice(0, 200)}`)
          return
        }
        const result = r.result
        if (result?.isError === true) {
          const code = result.structuredContent?.error?.code
          count(`tool ${code}`)
          if (!validators.errorBody(result.structuredContent)) {
            failures.push(`tool error off schema: ${where} ${JSON.stringify(result).slice(0, 200)}`)
          } else if (["internal_error", "not_implemented", "source_unavailable"].includes(code)) {
            failures.push(`5xx tool error: ${where} ${JSON.stringify(result).slice(0, 200)}`)
          }
        } else if (result?._meta?.credits_charged !== undefined) {
          count("tool ok")
          if (charged && result._meta.idempotent_replayed !== true) addCredits(mcpKey.id, result._meta.credits_charged)
        } else count("ok")
      }
      await pool(samples, async (s) => {
        const headers = new Headers()
        for (const [k, v] of authHeaders(s.auth, mcpKey.key)) headers.append(k, v)
        if (s.accept !== undefined) headers.set("accept", s.accept)
        if (s.contentType !== undefined) headers.set("content-type", s.contentType)
        if (s.version !== undefined) headers.set("mcp-protocol-version", s.version)
        if (s.origin !== undefined) headers.set("origin", s.origin)
        if (s.idem !== undefined) {
          try {
            headers.set("idempotency-key", s.idem)
          } catch {
            // as over HTTP
          }
        }
        const where = `${s.method} ${s.body.slice(0, 160)}`
        let res: Response
        let text: string
        try {
          res = await fetch(`${server.base}/api/mcp`, {
            method: s.method,
            headers,
            ...(s.method === "GET" || s.method === "HEAD" ? {} : { body: s.body }),
            signal: AbortSignal.timeout(30_000)
          })
          text = await res.text()
        } catch (e) {
          failures.push(`no answer: ${where}: ${String(e)} ${String((e as { cause?: unknown }).cause)}`)
          return
        }
        count(`http ${res.status}`)
        if (res.status >= 500) failures.push(`5xx: ${res.status} ${where} ${text.slice(0, 200)}`)
        if (text === "") return
        let json: any
        try {
          json = JSON.parse(text)
        } catch {
          failures.push(`non-JSON answer: ${res.status} ${where} ${text.slice(0, 100)}`)
          return
        }
        const charged = s.auth === "key"
        if (Array.isArray(json)) for (const r of json as Array<unknown>) checkResponse(r, where, charged)
        else checkResponse(json, where, charged)
      })
      expect(failures.slice(0, 20), `${failures.length} failures; ${serverState()}`).toEqual([])
      for (const k of ["tool ok", "http 200", "rpc -32602"]) expect(statuses.get(k) ?? 0, k).toBeGreaterThan(30)
      expect([...statuses.keys()].filter((k) => k.startsWith("tool ") && k !== "tool ok").length).toBeGreaterThan(3)
      console.info(`fuzz mcp: ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`)
    }, 300_000)

    it("keeps the ledger exact: each key charged exactly what its served answers reported", async () => {
      const ledger = await checkLedgerInvariant(db.t.database, {
        served: new Map([
          [httpKey.id, { credits: servedCredits.get(httpKey.id) ?? 0 }],
          [mcpKey.id, { credits: servedCredits.get(mcpKey.id) ?? 0 }]
        ])
      })
      expect(ledger.get(httpKey.id)?.charged ?? 0).toBeGreaterThan(0)
      expect(ledger.get(mcpKey.id)?.charged ?? 0).toBeGreaterThan(0)
    })
  })
}
