/**
 * An MCP client for the market-data service, with the official TypeScript SDK (`@modelcontextprotocol/sdk`).
 *
 * It connects to `<BASE>/api/mcp` over Streamable HTTP with an API key, lists the tools, calls a keyless tool
 * (`schema`), a key-requiring free one (`resolve`) and a paid one (`price`), prints each structured result with
 * its `_meta.credits_charged`, retries a paid call safely under an idempotency key, and handles a tool error
 * (`isError: true`) the way an agent should.
 *
 * Run it against a server (see examples/README.md):
 *
 *   BASE=http://127.0.0.1:8080 KEY=mdk_0123456789abcdefghijklmnopqrstuv node examples/mcp-client.ts
 *
 * Exit code: 0 when every step went as described, 1 on an unexpected answer, 2 when KEY is missing.
 */
import { randomUUID } from "node:crypto"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"

const BASE = process.env.BASE ?? "http://127.0.0.1:8080"
const KEY = process.env.KEY
if (KEY === undefined || KEY === "") {
  console.error("set KEY to an API key (mdk_...); see examples/README.md")
  process.exit(2)
}

// --- Connecting -------------------------------------------------------------------------------------------
//
// The server is stateless (no session, no SSE stream), so one POST per message. The key travels as the
// `Authorization` header of every POST; `initialize` and `tools/list` would work without it, paid tools not.
//
// An `Idempotency-Key` header on the POST that carries one `tools/call` makes that call idempotent: a retry
// with the same key replays the stored answer and is not billed again. The SDK sends fixed headers only, so
// this wrapper adds the header to the next POST when `idempotencyKeyForNextCall` is set. (Calls here are
// sequential, so "the next POST" is the tools/call made right after setting it.)
let idempotencyKeyForNextCall: string | undefined
const fetchWithIdempotency: typeof fetch = (input, init) => {
  const key = idempotencyKeyForNextCall
  if (key === undefined || init?.method !== "POST") return fetch(input, init)
  idempotencyKeyForNextCall = undefined
  const headers = new Headers(init.headers)
  headers.set("Idempotency-Key", key)
  return fetch(input, { ...init, headers })
}

const transport = new StreamableHTTPClientTransport(new URL(`${BASE.replace(/\/+$/, "")}/api/mcp`), {
  requestInit: { headers: { Authorization: `Bearer ${KEY}` } },
  fetch: fetchWithIdempotency
})
const client = new Client({ name: "market-data-example", version: "1.0.0" })

// --- Calling a tool ---------------------------------------------------------------------------------------
//
// A tool result is `{content, structuredContent, isError, _meta}`. `structuredContent` is the HTTP body:
// `{data: ...}` on success, `{error: {code, message, param?, retryable}}` when `isError` is true. Operation
// errors (a bad argument, an unknown asset, no credits, the rate limit) are tool results, never thrown; the
// SDK throws only for protocol errors (an unknown tool, a broken connection).

interface ToolError {
  readonly code: string
  readonly message: string
  readonly param?: string
  readonly retryable: boolean
}

type Outcome =
  | { readonly ok: true; readonly data: any; readonly credits: number; readonly replayed: boolean }
  | { readonly ok: false; readonly error: ToolError; readonly credits: number }

/** Calls `name`; waits and retries (at most 3 times) when the rate limit says so. */
const call = async (name: string, args: Record<string, unknown>, idempotencyKey?: string): Promise<Outcome> => {
  for (let attempt = 1; ; attempt++) {
    if (idempotencyKey !== undefined) idempotencyKeyForNextCall = idempotencyKey
    const result = await client.callTool({ name, arguments: args })
    const meta = (result._meta ?? {}) as {
      credits_charged?: number
      retry_after_seconds?: number
      idempotent_replayed?: boolean
    }
    const credits = meta.credits_charged ?? 0
    const body = result.structuredContent as { data?: unknown; error?: ToolError }
    if (result.isError !== true)
      return { ok: true, data: body.data, credits, replayed: meta.idempotent_replayed === true }
    const error = body.error as ToolError
    if (error.code === "rate_limited" && attempt < 3) {
      const seconds = meta.retry_after_seconds ?? 1
      console.log(`  rate limited: waiting ${seconds} s as the server asks, then retrying`)
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
      continue
    }
    return { ok: false, error, credits }
  }
}

/** Stops the example when a step that should succeed did not. */
const expectOk = (step: string, outcome: Outcome): Extract<Outcome, { ok: true }> => {
  if (outcome.ok) return outcome
  const { code, message } = outcome.error
  // `insufficient_credits` (out of credits) and `unauthenticated` (bad key) need a human, not a retry.
  const hint =
    code === "insufficient_credits"
      ? " (top the key up: `market-data credits grant <key-id> <n>`)"
      : code === "unauthenticated"
        ? " (check KEY)"
        : ""
  throw new Error(`${step}: ${code}: ${message}${hint}`)
}

const main = async () => {
  await client.connect(transport)
  const server = client.getServerVersion()
  console.log(`== connected to ${server?.name} ${server?.version} at ${BASE}/api/mcp`)

  // 1. The tools: one per operation, each with its input schema (output schemas: connect to ?output_schemas=true).
  const { tools } = await client.listTools()
  console.log(`\n== ${tools.length} tools`)
  console.log(tools.map((t) => t.name).join(", "))

  // 2. A keyless tool: what `price` takes and costs (schema is free and needs no key).
  const schema = expectOk("schema", await call("schema", { resource: "price" }))
  console.log(`\n== schema price (credits charged: ${schema.credits})`)
  console.log(JSON.stringify(schema.data).slice(0, 400))

  // 3. A key-requiring free tool: turn a human name into the canonical asset ID every other tool takes.
  const resolved = expectOk("resolve", await call("resolve", { q: "bitcoin" }))
  const assetId: string = resolved.data.best?.asset_id ?? "crypto:bitcoin"
  console.log(`\n== resolve "bitcoin" (credits charged: ${resolved.credits})`)
  console.log(`best match: ${assetId}`)

  // 4. A paid tool: the price of that asset. `_meta.credits_charged` is what it cost (1 credit = 1 US cent).
  const price = expectOk("price", await call("price", { id: assetId }))
  console.log(`\n== price ${assetId} (credits charged: ${price.credits})`)
  console.log(JSON.stringify(price.data, null, 2))

  // 5. A paid call made safe to retry: the same Idempotency-Key twice runs and bills once; the second answer
  //    is the stored one (`_meta.idempotent_replayed: true`, same charge reported, nothing new spent).
  const idempotencyKey = `example-${randomUUID()}`
  const before = expectOk("usage", await call("usage", {})).data.credits_remaining as number
  const first = expectOk("price (idempotent)", await call("price", { id: assetId }, idempotencyKey))
  const retry = expectOk("price (retry)", await call("price", { id: assetId }, idempotencyKey))
  const after = expectOk("usage", await call("usage", {})).data.credits_remaining as number
  console.log(`\n== price with Idempotency-Key ${idempotencyKey}, sent twice`)
  console.log(`first: charged ${first.credits}, replayed ${first.replayed}`)
  console.log(`retry: charged ${retry.credits}, replayed ${retry.replayed}`)
  console.log(`credits before ${before}, after ${after}: spent ${before - after}`)
  if (!retry.replayed || JSON.stringify(first.data) !== JSON.stringify(retry.data)) {
    throw new Error("the retry under the same idempotency key was not a replay of the first answer")
  }

  // 6. A tool error: an asset the service does not know. Not thrown: `isError: true` with a typed error.
  const missing = await call("price", { id: "crypto:no-such-coin" })
  console.log("\n== price crypto:no-such-coin")
  if (missing.ok) throw new Error("expected an error for an unknown asset")
  const { code, message, param, retryable } = missing.error
  console.log(`tool error: ${code} (param ${param ?? "-"}, retryable ${retryable}): ${message}`)
  console.log(`credits charged: ${missing.credits}`)
  // What an agent does with it: a retryable error (source_unavailable, request_in_progress) is worth another
  // try later; a non-retryable one (unknown_asset, invalid_parameter, plane_mismatch) means change the call,
  // e.g. resolve the name again, or check `schema` for the parameter named in `param`.
  console.log(retryable ? "-> retry later" : "-> do not retry as is: fix the call (here: resolve the asset again)")
}

try {
  await main()
} catch (e) {
  console.error(`mcp-client: ${e instanceof Error ? e.message : String(e)}`)
  process.exitCode = 1
} finally {
  await client.close()
}
