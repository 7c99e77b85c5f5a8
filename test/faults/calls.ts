/**
 * Requests as the fault scenarios send them, each recorded with when it was sent and answered, its status,
 * error code and charge, over HTTP (`/api/v1/<op>`) and MCP (`tools/call` at `/api/mcp`).
 */
import { MCP_HEADERS } from "../support/mcp.ts"

export interface Call {
  /** The server it was sent to. */
  readonly base: string
  readonly transport: "http" | "mcp"
  readonly op: string
  /** HTTP: the query string; MCP: the arguments. */
  readonly request: string | Record<string, unknown>
  readonly keyId: string | undefined
  readonly idem: string | undefined
  readonly sentAt: number
  readonly doneAt: number
  /** HTTP status; 0 when the connection failed. */
  readonly status: number
  /** The error code of an error answer (HTTP body or MCP tool result), else undefined. */
  readonly code: string | undefined
  /** Whether the error says it is retryable. */
  readonly retryable: boolean | undefined
  /** Credits charged (X-Credits-Charged, `_meta.credits_charged`), 0 when absent. */
  readonly charged: number
  /** An idempotent replay (`Idempotent-Replayed: true`). */
  readonly replayed: boolean
  /** Whether the answer served data (HTTP 200 or a successful tool result). */
  readonly served: boolean
  readonly body: string
  /** What an idempotent replay must repeat byte for byte: the HTTP body, or the tool result's content text. */
  readonly payload: string
  /** The parsed error object (`{error: ...}`) when there is one. */
  readonly errorBody: unknown
  readonly failure?: string
}

export interface Caller {
  readonly key?: { readonly key: string; readonly id: string }
  readonly idem?: string
}

const parse = (text: string): any => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** One HTTP GET of `/api/v1/<op>?<query>`. */
export const httpCall = async (base: string, op: string, query: string, caller: Caller = {}): Promise<Call> => {
  const headers: Record<string, string> = {}
  if (caller.key !== undefined) headers.authorization = `Bearer ${caller.key.key}`
  if (caller.idem !== undefined) headers["idempotency-key"] = caller.idem
  const sentAt = Date.now()
  const common = {
    base,
    transport: "http" as const,
    op,
    request: query,
    keyId: caller.key?.id,
    idem: caller.idem,
    sentAt
  }
  try {
    const res = await fetch(`${base}/api/v1/${op}?${query}`, { headers, signal: AbortSignal.timeout(30_000) })
    const body = await res.text()
    const json = res.status >= 400 ? parse(body) : undefined
    return {
      ...common,
      doneAt: Date.now(),
      status: res.status,
      code: json?.error?.code,
      retryable: json?.error?.retryable,
      charged: Number(res.headers.get("x-credits-charged") ?? 0),
      replayed: res.headers.get("idempotent-replayed") === "true",
      served: res.status === 200,
      body,
      payload: body,
      errorBody: json
    }
  } catch (e) {
    return failed(common, e)
  }
}

let rpcId = 1

/** One `tools/call` over MCP. The HTTP status is the POST's; the error code is the tool result's. */
export const mcpCall = async (
  base: string,
  tool: string,
  args: Record<string, unknown>,
  caller: Caller = {}
): Promise<Call> => {
  const headers: Record<string, string> = { ...MCP_HEADERS }
  if (caller.key !== undefined) headers.authorization = `Bearer ${caller.key.key}`
  if (caller.idem !== undefined) headers["idempotency-key"] = caller.idem
  const sentAt = Date.now()
  const common = {
    base,
    transport: "mcp" as const,
    op: tool,
    request: args,
    keyId: caller.key?.id,
    idem: caller.idem,
    sentAt
  }
  try {
    const res = await fetch(`${base}/api/mcp`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: rpcId++,
        method: "tools/call",
        params: { name: tool, arguments: args }
      }),
      signal: AbortSignal.timeout(30_000)
    })
    const body = await res.text()
    const json = parse(body)
    const result = json?.result
    const errorBody = result?.isError === true ? result.structuredContent : json?.error === undefined ? undefined : json
    return {
      ...common,
      doneAt: Date.now(),
      status: res.status,
      code:
        result?.isError === true
          ? result.structuredContent?.error?.code
          : json?.error === undefined
            ? undefined
            : `rpc:${json.error.code}`,
      retryable: result?.isError === true ? result.structuredContent?.error?.retryable : undefined,
      charged: Number(result?._meta?.credits_charged ?? 0),
      replayed: result?._meta?.idempotent_replayed === true,
      served: res.status === 200 && result !== undefined && result.isError !== true,
      body,
      payload: String(result?.content?.[0]?.text ?? body),
      errorBody
    }
  } catch (e) {
    return failed(common, e)
  }
}

const failed = (
  common: Pick<Call, "base" | "transport" | "op" | "request" | "keyId" | "idem" | "sentAt">,
  e: unknown
): Call => ({
  ...common,
  doneAt: Date.now(),
  status: 0,
  code: undefined,
  retryable: undefined,
  charged: 0,
  replayed: false,
  served: false,
  body: "",
  payload: "",
  errorBody: undefined,
  failure: String(e)
})

/** Statuses and codes of a list of calls, for failure messages: `{"200": 10, "503 source_unavailable": 4}`. */
export const tally = (calls: ReadonlyArray<Call>): Record<string, number> => {
  const out: Record<string, number> = {}
  for (const c of calls) {
    const k = c.code === undefined ? String(c.status) : `${c.status} ${c.code}`
    out[k] = (out[k] ?? 0) + 1
  }
  return out
}

/** Sends the same request again (same transport, operation, parameters), as `caller`. */
export const again = (base: string, c: Call, caller: Caller): Promise<Call> =>
  c.transport === "http"
    ? httpCall(base, c.op, c.request as string, caller)
    : mcpCall(base, c.op, c.request as Record<string, unknown>, caller)

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * Waits until a server with the simulated planes is warm: the server listens while the simulated market's
 * history is generated, and until then answers the crypto operations `503 source_unavailable` ("the service
 * is starting"); `rank` answers once every asset is ready. `probe` is a key spent on it (one credit a poll).
 */
export const waitUntilWarm = async (
  base: string,
  probe: { readonly key: string; readonly id: string },
  timeoutMs = 90_000
): Promise<void> => {
  const until = Date.now() + timeoutMs
  for (;;) {
    const c = await httpCall(base, "rank", "limit=1", { key: probe })
    if (c.status === 200) return
    if (c.code !== "source_unavailable" || Date.now() > until) {
      throw new Error(`the service did not warm up: ${c.status} ${c.body.slice(0, 300)}`)
    }
    await sleep(250)
  }
}
