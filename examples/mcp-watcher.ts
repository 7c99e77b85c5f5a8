/**
 * A watcher over MCP revision 2026-07-28: it subscribes to three assets with `subscriptions/listen` and, each time
 * the server says one changed (`notifications/resources/updated`, free), reads it (`resources/read`, one credit)
 * and prints the new price. Instead of polling, it is told.
 *
 * Plain `fetch`, as the revision's Streamable HTTP transport page describes it, to show the wire (the official
 * client v2, `@modelcontextprotocol/client`, does the same with `versionNegotiation` and `listen()`): every POST
 * carries the protocol version in the body's `_meta` and in the `MCP-Protocol-Version` header, the method in
 * `Mcp-Method` and, for a read, the URI in `Mcp-Name`.
 *
 *   BASE=http://127.0.0.1:8080 KEY=mdk_0123456789abcdefghijklmnopqrstuv node examples/mcp-watcher.ts
 *
 * Settings: `IDS` (three canonical IDs, comma-separated; default crypto:bitcoin,crypto:ethereum,crypto:solana),
 * `READS` (stop after that many paid reads; default: run until stopped).
 * Exit code: 0 when it stopped as asked, 1 on an unexpected answer, 2 when KEY is missing or refused,
 * 3 when the key runs out of credits.
 */

const BASE = process.env.BASE ?? "http://127.0.0.1:8080"
const KEY = process.env.KEY
if (KEY === undefined || KEY === "") {
  console.error("set KEY to an API key (mdk_...); see examples/README.md")
  process.exit(2)
}
const IDS = (process.env.IDS ?? "crypto:bitcoin,crypto:ethereum,crypto:solana").split(",").map((s) => s.trim())
const READS = process.env.READS === undefined ? Number.POSITIVE_INFINITY : Number(process.env.READS)

const VERSION = "2026-07-28"
const ENDPOINT = `${BASE}/api/mcp`
const META = {
  "io.modelcontextprotocol/protocolVersion": VERSION,
  "io.modelcontextprotocol/clientInfo": { name: "mcp-watcher", version: "1.0.0" },
  "io.modelcontextprotocol/clientCapabilities": {}
}

let nextId = 1

/** The headers of a 2026-07-28 POST. `name`: the tool name or resource URI `Mcp-Name` mirrors. */
const headersFor = (method: string, name?: string): Record<string, string> => ({
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  authorization: `Bearer ${KEY}`,
  "mcp-protocol-version": VERSION,
  "mcp-method": method,
  // A value outside plain ASCII would be sent as =?base64?...?=; asset URIs are plain ASCII.
  ...(name === undefined ? {} : { "mcp-name": name })
})

interface RpcAnswer {
  readonly result?: {
    readonly contents?: ReadonlyArray<{ readonly text: string }>
    readonly _meta?: { readonly credits_charged?: number }
    readonly ttlMs?: number
  }
  readonly error?: {
    readonly code: number
    readonly message: string
    readonly data?: { readonly error?: { readonly code: string } }
  }
}

const request = async (method: string, params: Record<string, unknown>, name?: string): Promise<RpcAnswer> => {
  const res = await fetch(ENDPOINT, {
    method: "POST",
    headers: headersFor(method, name),
    body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params: { ...params, _meta: META } })
  })
  return (await res.json()) as RpcAnswer
}

/** A refusal's service error code (`unauthenticated`, `insufficient_credits`, ...), when it has one. */
const codeOf = (answer: RpcAnswer): string | undefined => answer.error?.data?.error?.code

const exitOn = (answer: RpcAnswer, what: string): never => {
  const code = codeOf(answer)
  console.error(`${what}: ${answer.error?.message ?? "no result"}`)
  process.exit(code === "unauthenticated" ? 2 : code === "insufficient_credits" ? 3 : 1)
}

// --- Reading one asset: the paid read, one credit ------------------------------------------------------------

let reads = 0
const readAsset = async (uri: string): Promise<void> => {
  const answer = await request("resources/read", { uri }, uri)
  const text = answer.result?.contents?.[0]?.text
  if (text === undefined) return exitOn(answer, `read ${uri}`)
  const data = JSON.parse(text).data as { asset_id: string; as_of: string; headline?: { price_usd?: number } }
  reads++
  console.log(
    `${data.asset_id} price ${data.headline?.price_usd ?? "n/a"} as of ${data.as_of} (credits charged: ${answer.result?._meta?.credits_charged ?? 0}, fresh for ${answer.result?.ttlMs ?? 0} ms)`
  )
}

// --- Subscribing: one long-lived POST whose answer is an SSE stream ------------------------------------------

const uris = IDS.map((id) => `service://read/${id}`)
const listenId = nextId++
const controller = new AbortController()
const res = await fetch(ENDPOINT, {
  method: "POST",
  signal: controller.signal,
  headers: headersFor("subscriptions/listen"),
  body: JSON.stringify({
    jsonrpc: "2.0",
    id: listenId,
    method: "subscriptions/listen",
    params: { notifications: { resourceSubscriptions: uris }, _meta: META }
  })
})
if (!(res.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
  exitOn((await res.json()) as RpcAnswer, "subscriptions/listen")
}

// Notifications that arrive while a read is running wait here, one entry per URI: a burst of changes to one asset
// is one read, of its newest data.
const due = new Set<string>()
let reading = false
const drain = async () => {
  if (reading) return
  reading = true
  while (due.size > 0 && reads < READS) {
    const [uri] = due
    due.delete(uri as string)
    await readAsset(uri as string)
  }
  reading = false
  if (reads >= READS) {
    console.log(`stopping after ${reads} reads`)
    controller.abort()
  }
}

const reader = (res.body as ReadableStream<Uint8Array>).getReader()
const decoder = new TextDecoder()
let buffer = ""
try {
  while (reads < READS) {
    const { value, done } = await reader.read()
    if (done) {
      console.error("the server closed the stream")
      process.exit(1)
    }
    buffer += decoder.decode(value, { stream: true })
    for (let cut = buffer.indexOf("\n\n"); cut >= 0; cut = buffer.indexOf("\n\n")) {
      const block = buffer.slice(0, cut)
      buffer = buffer.slice(cut + 2)
      if (block.startsWith(":")) continue // a keep-alive comment
      const message = JSON.parse(block.replace(/^data: /, "")) as {
        method?: string
        id?: number
        error?: { message: string }
        params?: { uri?: string; notifications?: { resourceSubscriptions?: ReadonlyArray<string> } }
      }
      if (message.method === "notifications/subscriptions/acknowledged") {
        console.log(`watching ${(message.params?.notifications?.resourceSubscriptions ?? []).join(", ")}`)
        // Start from the current data of each; from here on, read only what changed.
        for (const uri of uris) due.add(uri)
      } else if (message.method === "notifications/resources/updated" && message.params?.uri !== undefined) {
        due.add(message.params.uri)
      } else if (message.id === listenId && message.error !== undefined) {
        // The server ended the subscription (for example, the key was revoked).
        console.error(`subscription ended: ${message.error.message}`)
        process.exit(2)
      }
      void drain()
    }
  }
} catch (e) {
  if (!controller.signal.aborted) throw e
}
