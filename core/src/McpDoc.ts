/**
 * The `mcp` documentation section: how an MCP client connects to `POST /api/mcp`, what the tools and resources
 * are, and every error it can meet. Pure text plus the transport facts it states; the MCP adapter
 * (`@market-data/mcp`) implements exactly these facts and its tests check them against this module.
 */

/** Where the MCP endpoint is mounted. */
export const MCP_ENDPOINT_PATH = "/api/mcp"

/** MCP protocol versions served, newest first: 2026-07-28 (stateless, per-request `_meta`) and the initialize-based ones. */
export const McpProtocolVersions = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"] as const

/** Largest MCP POST body, in bytes (larger is 413). */
export const MCP_MAX_BODY_BYTES = 256 * 1024

/** Most messages in one JSON-RPC batch (batches exist in protocol version 2025-03-26 only). */
export const MCP_MAX_BATCH_MESSAGES = 32

/** The endpoint's query parameter that adds every tool's `outputSchema` to `tools/list`. */
export const MCP_OUTPUT_SCHEMAS_PARAMETER = "output_schemas"

/** The ceiling of the default `tools/list` answer, in bytes (test/mcp-tool-schemas.test.ts holds it). */
export const MCP_TOOLS_LIST_MAX_BYTES = 40 * 1024

/** Where the stdio bridge lives in the repository. */
export const MCP_STDIO_BRIDGE_PATH = "adapters/mcp/bin/stdio-bridge.mjs"

/**
 * Largest total answer of one JSON-RPC batch, in bytes: the members whose answers would not fit are not run
 * (the first answer is always delivered, and so is a tool call that already charged credits).
 */
export const MCP_MAX_BATCH_ANSWER_BYTES = 128 * 1024

/** At most this many keyless MCP POSTs run their messages at once (a POST with a key never waits for them). */
export const KEYLESS_MCP_CONCURRENCY = 2

/**
 * The limits of push at 2026-07-28 (`subscriptions/listen`), as the `mcp` and `access` sections state them and the
 * MCP adapter enforces them.
 */
export const MCP_LISTEN_LIMITS = {
  resourcesPerStream: 100,
  streamsPerKey: 10,
  keylessStreamsPerAddress: 2,
  keepAliveMs: 15_000,
  keyRecheckMs: 10_000,
  /**
   * The longest a subscribed asset goes without a look by the watcher, whatever its `next_update_at` says: it is
   * read then if the store's revision for it moved (or its plane keeps none).
   */
  watchMaxIntervalMs: 15_000,
  /** How often the universe's size is looked at for the streams that asked for `resourcesListChanged`. */
  universeCheckMs: 10_000
} as const

/** The URI prefix of the asset resources (`service://read/{asset_id}`: the `read` result of one asset). */
export const MCP_ASSET_URI_PREFIX = "service://read/"

/** The environment variable listing extra allowed browser origins. */
export const MCP_ALLOWED_ORIGINS_VARIABLE = "MARKET_DATA_ALLOWED_ORIGINS"

const code = (s: string): string => `\`${s}\``

/** The markdown of the `mcp` docs section. */
export const mcpDocMarkdown: string = [
  "# MCP",
  "",
  `The same 23 operations as the HTTP API, as tools of a stateless Streamable HTTP MCP server at ${code(`POST ${MCP_ENDPOINT_PATH}`)} (JSON response mode, no sessions; the one SSE stream is the answer to a 2026-07-28 ${code("subscriptions/listen")}). Same parameters, same prices, same idempotency, same rate limit: a tool call runs through the very pipeline an HTTP request does. It speaks the current revision, ${code("2026-07-28")}, and the initialize-based ${code("2025-11-25")}, ${code("2025-06-18")} and ${code("2025-03-26")} on the same endpoint, chosen per request.`,
  "",
  "## Connect",
  "",
  "Hosts that can send a header (Streamable HTTP with custom headers): point them at the endpoint and give them your key as `Authorization: Bearer <API_KEY>`. In the `mcpServers` shape of host configs such as Claude Code's `.mcp.json` (the hosts themselves are not run by the tests; the SDK client sending this header is):",
  "",
  "```json",
  "{",
  '  "mcpServers": {',
  '    "market-data": {',
  '      "type": "http",',
  `      "url": "https://<host>${MCP_ENDPOINT_PATH}",`,
  '      "headers": { "Authorization": "Bearer <API_KEY>" }',
  "    }",
  "  }",
  "}",
  "```",
  "",
  "With the official TypeScript SDK: `new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: 'Bearer <API_KEY>' } } })`. The v2 client (`@modelcontextprotocol/client`) speaks 2026-07-28 when asked: `new Client(info, { versionNegotiation: { mode: 'auto' } })` (it probes with `server/discover`), then `client.listen({ resourceSubscriptions: [...] })` for push.",
  "",
  `Hosts that only launch local servers over stdio (or cannot set a header): run the stdio bridge shipped in the repository, ${code(MCP_STDIO_BRIDGE_PATH)}. It is plain JavaScript without dependencies (any Node 18 or later), forwards each message the host writes to the endpoint with your key as the header, and writes the answers back; it is tested with the official SDK's stdio client. Configure it as a local server:`,
  "",
  "```json",
  "{",
  '  "mcpServers": {',
  '    "market-data": {',
  '      "command": "node",',
  `      "args": ["/path/to/market-data/${MCP_STDIO_BRIDGE_PATH}", "https://<host>${MCP_ENDPOINT_PATH}"],`,
  '      "env": { "MARKET_DATA_API_KEY": "<API_KEY>" }',
  "    }",
  "  }",
  "}",
  "```",
  "",
  `The URL may instead come from ${code("MARKET_DATA_MCP_URL")} (default ${code(`http://127.0.0.1:8080${MCP_ENDPOINT_PATH}`)}). Without a key the keyless tools work. A refusal of the HTTP request reaches the host as a JSON-RPC error with its request's id. The bridge sends no ${code("Idempotency-Key")}: over it, a retried paid call is a new call.`,
  "",
  `- Protocol versions: ${McpProtocolVersions.map(code).join(", ")}. ${code("initialize")} echoes an initialize-based version and answers ${code(McpProtocolVersions[1])} to any other; ${code("2026-07-28")} has no handshake (see Revision 2026-07-28 below). Server info: ${code("service-market-data")} ${code("1.0.0")}; capabilities: tools and resources.`,
  `- Every request is a ${code("POST")} with ${code("Content-Type: application/json")} and ${code("Accept: application/json, text/event-stream")}. After ${code("initialize")}, send ${code("MCP-Protocol-Version")}; without it a request is taken as ${code("2025-03-26")}.`,
  `- ${code("initialize")}, ${code("ping")}, ${code("tools/list")} and the resources methods need no key. Paid tools authenticate inside ${code("tools/call")}, from the ${code("Authorization")} header of the POST that carries it. A key sent with any message is checked: a malformed, unknown or revoked one is refused on every method (see Errors below), as on every HTTP route.`,
  `- Every message spends one rate unit of its caller (the key's, or without a key the client address's): ${code("initialize")}, ${code("ping")}, ${code("tools/list")} and notifications as much as ${code("tools/call")}. Keyless POSTs run at most ${KEYLESS_MCP_CONCURRENCY} at once.`,
  `- JSON-RPC batches are accepted only under protocol version ${code("2025-03-26")} (at most ${MCP_MAX_BATCH_MESSAGES} messages); each member is rate limited on its own (one unit each) and each call billed on its own. A batch's answers stop at ${MCP_MAX_BATCH_ANSWER_BYTES / 1024} KiB: the first answer is always delivered, and once the next one would pass the limit, that member and every later one are not run and answer ${code("-32000")} ${code("batch_answer_limit")} (each still spends its unit; a tool call that already charged credits is delivered all the same).`,
  `- Browsers: requests with an ${code("Origin")} header are accepted only from loopback origins (${code("localhost")}, ${code("127.0.0.1")}, ${code("[::1]")}, any port) and from the origins the operator lists in ${code(MCP_ALLOWED_ORIGINS_VARIABLE)}; others get ${code("403")}. Requests without ${code("Origin")} (servers, CLIs, agents) are accepted.`,
  "",
  "## Tools",
  "",
  `Exactly 23 tools, one per operation and named like it (${code("read")}, ${code("funding")}, ${code("series")}, ${code("docs")}, ...). Each has a name, a title, a description (what it answers, its access and price, its plane, the batch form), an ${code("inputSchema")} and the annotations ${code("readOnlyHint: true")}, ${code("idempotentHint: true")}. The default ${code("tools/list")} answer stays under ${MCP_TOOLS_LIST_MAX_BYTES / 1024} KB (about 30 KB): what every tool shares (error results, sources, charges) is said once in the ${code("initialize")} instructions and here.`,
  "",
  `- ${code("outputSchema")} (JSON Schema 2020-12 of the success envelope and of the error object, from the same schemas as ${code("schema")} and OpenAPI) is left out by default: the 23 of them are about 75 KB a model would read on every turn, and a host needs none to call a tool. A client that validates ${code("structuredContent")} connects to ${code(`${MCP_ENDPOINT_PATH}?${MCP_OUTPUT_SCHEMAS_PARAMETER}=true`)} and gets them in ${code("tools/list")} (every result conforms, error results included); ${code(`${MCP_OUTPUT_SCHEMAS_PARAMETER}=false`)} is the default, any other value is ${code("400")}. The ${code("schema")} tool serves each as ${code("result_schema")}, with the full parameter schema as ${code("input_schema")}.`,
  `- ${code("inputSchema")} is written in the subset of JSON Schema that model providers' tool validators accept, so a host can hand the tools to any model unchanged. The rules (checked by a test on every tool): the root is ${code('{"type": "object", "properties", "required", "additionalProperties": false}')}; every node has one ${code("type")} (string, integer, boolean, array); the only keywords are ${["type", "description", "enum", "properties", "required", "additionalProperties", "items", "pattern", "minimum", "maximum", "minItems", "maxItems"].map(code).join(", ")}: no ${code("$ref")}, no ${code("anyOf")}/${code("oneOf")}/${code("allOf")}, no type arrays, no ${code("format")}, ${code("default")}, ${code("uniqueItems")}, ${code("minLength")}/${code("maxLength")} or ${code("$schema")} (MCP reads a schema without it as 2020-12); patterns use no lookaround or backreferences and no repeat bound above 1000 (RE2). That is OpenAI's strict function-schema subset and Gemini's OpenAPI 3.0 subset at once (${code("additionalProperties")}, which OpenAI requires, is the one keyword a host filling Gemini's OpenAPI-style ${code("parameters")} drops; its ${code("parametersJsonSchema")} takes it). The one tool without parameters, ${code("usage")}, has ${code('"properties": {}')}; Gemini wants no ${code("parameters")} at all for such a function.`,
  `- Strict mode: optional parameters are published as optional, not in ${code("required")}, because that is what hosts without strict mode read best. OpenAI's strict mode wants every property required and the optional ones nullable; that variant is mechanical (add each optional parameter to ${code("required")} with ${code('type: [<type>, "null"]')}) and the service takes it: a ${code("null")} argument counts as omitted.`,
  `- What those keywords cannot say is in each parameter's description (lengths, distinct list items, calendar dates, a crypto slug's 64 characters, defaults), and the service checks all of it exactly as before: the same bad value answers the same ${code("invalid_parameter")} naming the ${code("param")}.`,
  `- Arguments are typed: integers as numbers, booleans as booleans; a string such as ${code('"5"')} or ${code('"true"')} is refused ${code("invalid_parameter")} naming the ${code("param")}, as HTTP refuses ${code("limit=x")}. Lists (${code("ids")}, ${code("statements")}, ${code("types")}) are arrays of strings; one comma-joined string is accepted too. A ${code("null")} argument counts as omitted.`,
  `- A result is ${code('{"content": [{"type": "text", "text": ...}], "structuredContent": ..., "isError": false, "_meta": {"credits_charged": n}}')}. ${code("structuredContent")} is the HTTP body (${code('{"data": ...}')}; a batch ${code('{"data": [...], "refused": [...]}')}) and ${code("content")} its compact JSON text. ${code("docs")} answers ${code('{"data": {"section", "markdown"}}')} with the markdown as the text.`,
  `- ${code("_meta.credits_charged")} is the MCP counterpart of ${code("X-Credits-Charged")}, and on data answers ${code("_meta.data_source")} (${code("simulated")}, ${code("sec")} or ${code("live")}; see ${code("X-Data-Source")} in the ${code("domains")} section) that of ${code("X-Data-Source")}. MCP has no conditional requests: repeating a call spends credits again (use an idempotency key to make a retry free).`,
  `- Idempotency: an ${code("Idempotency-Key")} header on a POST that carries one ${code("tools/call")} makes that call idempotent exactly as on HTTP. The same call over HTTP and over MCP is the same request, so a key used on one replays on the other; a replay has ${code("_meta.idempotent_replayed: true")} and the original charge. A POST carrying several ${code("tools/call")}s with an ${code("Idempotency-Key")} answers each with ${code("invalid_idempotency_key")}.`,
  `- The ${code("tools/list")} result carries ${code("_meta.catalog_version")}, a hash of the operation catalog (tools, schemas, descriptions, prices, error codes); every HTTP and MCP answer repeats it as ${code("X-Catalog-Version")}. When it differs from the value you cached, list the tools again.`,
  "",
  "## Resources",
  "",
  `Every docs section is a free markdown resource at ${code("service://docs/<section>")} (${code("resources/list")}, ${code("resources/read")}, template ${code("service://docs/{section}")} in ${code("resources/templates/list")}). Reading one spends a rate unit of its caller, like ${code("GET /api/v1/docs")}.`,
  "",
  `Every asset is a paid JSON resource at ${code(`${MCP_ASSET_URI_PREFIX}<asset_id>`)} (template ${code(`${MCP_ASSET_URI_PREFIX}{asset_id}`)} in ${code("resources/templates/list")}; the assets are not enumerated in ${code("resources/list")}: find them with ${code("resolve")} or ${code("rank")}): its text is the body of the ${code("read")} operation for that one asset. Reading one is billed exactly as the ${code("read")} tool: it needs the key (keyless: refused ${code("unauthenticated")}, nothing served), costs 1 credit (${code("_meta.credits_charged")}), spends one rate unit, meets the same refusals (${code("insufficient_credits")}, ${code("rate_limited")}, ...) and honours the POST's ${code("Idempotency-Key")} (a replay has ${code("_meta.idempotent_replayed: true")}). An unknown asset is a resource not found.`,
  "",
  "## Revision 2026-07-28",
  "",
  `A POST speaks ${code("2026-07-28")} when its ${code("MCP-Protocol-Version")} header says so (or names a version this server does not speak) or its body carries ${code('_meta["io.modelcontextprotocol/protocolVersion"]')}; otherwise the initialize-based revisions are served exactly as above. At ${code("2026-07-28")}:`,
  "",
  `- No handshake and no sessions: every request carries ${code('_meta["io.modelcontextprotocol/protocolVersion"]')} and ${code('_meta["io.modelcontextprotocol/clientCapabilities"]')} (${code("clientInfo")} is optional); without them: ${code("-32602")}, HTTP 400. The header must equal the body's version (else ${code("-32020")} HeaderMismatch, HTTP 400); a version not served is ${code("-32022")} UnsupportedProtocolVersion (HTTP 400, ${code('data: {"supported": [...], "requested"}')}). ${code("initialize")}, ${code("ping")}, ${code("logging/setLevel")}, ${code("resources/subscribe")} and every unknown method: ${code("-32601")}, HTTP 404. Batches are refused (${code("-32600")}). Errors carry the request's id.`,
  `- Headers: ${code("Mcp-Method")} (every request) and ${code("Mcp-Name")} (${code("tools/call")}: the tool; ${code("resources/read")}: the URI) must mirror the body, and a tool call's ${code("id")} argument, which ${code("tools/list")} marks ${code('"x-mcp-header": "Asset-Id"')}, must be mirrored as ${code("Mcp-Param-Asset-Id")} (values outside plain ASCII as ${code("=?base64?...?=")}); missing or different: ${code("-32020")}, HTTP 400, nothing run or charged.`,
  `- ${code("server/discover")} answers the supported versions, the capabilities (${code("tools")}, ${code('resources: {"subscribe": true, "listChanged": true}')}), the instructions and the server's identity. Every result has ${code('"resultType": "complete"')} and ${code('_meta["io.modelcontextprotocol/serverInfo"]')} (${code("service-market-data")} ${code("1.0.0")}).`,
  `- Caching hints: ${code("server/discover")}, ${code("tools/list")}, ${code("resources/list")}, ${code("resources/templates/list")} and a docs ${code("resources/read")} carry ${code('"cacheScope": "public"')} and ${code('"ttlMs": 3600000')} (they change only with the service; ${code("_meta.catalog_version")} says when). An asset read carries ${code('"cacheScope": "private"')} (a key paid for it) and ${code("ttlMs")} = the time to the data's ${code("next_update_at")}. ${code("tools/list")} lists the tools in the registry's fixed order; input schemas are JSON Schema 2020-12.`,
  `- An unknown resource is ${code("-32602")} with ${code("data.uri")} (the older revisions keep ${code("-32002")}).`,
  "",
  "## Push: subscriptions/listen (2026-07-28)",
  "",
  `Instead of polling, send ${code("subscriptions/listen")} with ${code("params.notifications.resourceSubscriptions")}: a list of asset resource URIs, and/or ${code('"resourcesListChanged": true')}. The answer is an SSE stream (${code("Content-Type: text/event-stream")}) that stays open: first ${code("notifications/subscriptions/acknowledged")} with the subset honoured (${code("toolsListChanged")} and ${code("promptsListChanged")} are not offered: the tools and prompts change only with the service), then a ${code("notifications/resources/updated")} with ${code("params.uri")} each time a subscribed asset's data changes, and, when asked for, a ${code("notifications/resources/list_changed")} when the asset universe changes size (a new listing: one more asset resource to read; looked at every ${MCP_LISTEN_LIMITS.universeCheckMs / 1000} s; keyless streams may ask for it). Every message carries the subscription id (the listen request's id) in ${code('_meta["io.modelcontextprotocol/subscriptionId"]')}. A notification is free and says only which URI changed; reading it is the paid read. During quiet periods a keep-alive comment (${code(": keep-alive")}) comes every ${MCP_LISTEN_LIMITS.keepAliveMs / 1000} s. Close the stream to unsubscribe. A server that stops ends each stream with the listen request's result (${code('{"resultType": "complete"}')} with the subscription id): a stream that ends without it was cut, so listen again.`,
  "",
  `- A change is a new ${code("read")} result for the asset (a different content): the instance the stream is connected to reads each subscribed asset for itself (no charge to anyone) when its ${code("next_update_at")} comes, and again shortly after while the new data has not landed, so a notification follows the data being served by well under a second. It also looks at each one every ${MCP_LISTEN_LIMITS.watchMaxIntervalMs / 1000} s whatever its ${code("next_update_at")} says, and reads it then if the store's revision for that asset moved since its last read (a store write, streamed state or a source status that the asset's answers read): a ${code("read")} whose ${code("next_update_at")} is its next bar close can move before it (the forming bar), and an instance that does not lead ingestion serves the leader's new data when it re-reads the store (every minute), not on the data's schedule; such a change is announced within ${MCP_LISTEN_LIMITS.watchMaxIntervalMs / 1000} s of the instance serving it.`,
  `- With several instances on one PostgreSQL, a listener on any instance is notified of the changes the leader ingested, once that instance serves them: what the instance streams itself at once, what it re-reads from the store (every minute) within ${MCP_LISTEN_LIMITS.watchMaxIntervalMs / 1000} s after.`,
  `- Limits: a key is required to subscribe to an asset resource (keyless: ${code("unauthenticated")}, HTTP 401); at most ${MCP_LISTEN_LIMITS.resourcesPerStream} resources per stream (more: ${code("-32602")}); at most ${MCP_LISTEN_LIMITS.streamsPerKey} open streams per key, ${MCP_LISTEN_LIMITS.keylessStreamsPerAddress} keyless ones per client address (more: HTTP 429, ${code("-32000")} with ${code('data.reason: "listen_stream_limit"')}). The listen request spends one rate unit. A slow reader gets its notifications coalesced per URI: the stream holds at most one pending notification per subscribed URI, never an unbounded buffer. A revoked key's streams end within ${MCP_LISTEN_LIMITS.keyRecheckMs / 1000} s with a JSON-RPC error answering the listen request (${code("unauthenticated")}).`,
  `- On HTTP nothing changes: ${code("next_update_at")} and conditional requests stay the way to schedule.`,
  "",
  "## Errors",
  "",
  `Operation errors are tool results, never protocol errors: ${code("isError: true")} with the HTTP error object ${code('{"error": {"code", "message", "param"?, "retryable"}}')} as ${code("structuredContent")} (see the ${code("errors")} section for every code). Invalid or out-of-range arguments answer ${code("invalid_parameter")}, ${code("missing_parameter")} and so on, naming the ${code("param")}. A paid or key-requiring tool without a valid key answers ${code("unauthenticated")} as a tool result (HTTP 200, no ${code("WWW-Authenticate")}). A ${code("rate_limited")} result carries ${code("_meta.retry_after_seconds")}. Any other message refused before it runs (a bad key: ${code("unauthenticated")}; the rate limit: ${code("rate_limited")}) answers JSON-RPC ${code("-32000")} with the same error object as ${code("data")} (plus ${code("retry_after_seconds")}; HTTP 200 with ${code("Retry-After")}); a POST of notifications only, refused, answers the error's HTTP status (401 with ${code("WWW-Authenticate")}, 429 with ${code("Retry-After")}) and the error without an id.`,
  "",
  "Protocol errors (JSON-RPC):",
  "",
  "| code | when |",
  "|---|---|",
  "| -32700 | the body is not JSON (HTTP 400) |",
  "| -32600 | not a JSON-RPC 2.0 message (e.g. no `jsonrpc`), a batch outside 2025-03-26, an empty or oversized batch, `initialize` inside a batch (HTTP 400 for a single message) |",
  "| -32601 | unknown method |",
  "| -32602 | invalid params: unknown tool, `arguments` not an object, any `cursor` on a list method (everything is listed in one page) |",
  "| -32002 | unknown resource URI (2026-07-28: -32602) |",
  "| -32020 | 2026-07-28: a mirrored header (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-Asset-Id`) missing or not matching the body (HTTP 400) |",
  "| -32022 | an `MCP-Protocol-Version` this server does not speak: `data.supported`, `data.requested` (HTTP 400) |",
  "| -32000 | refused before it ran: `data` is the error object (`unauthenticated`, `rate_limited`) |",
  `| -32000 | a batch member past the ${MCP_MAX_BATCH_ANSWER_BYTES / 1024} KiB answer limit, not run: \`data\` is \`{"reason": "batch_answer_limit", "limit_bytes": ${MCP_MAX_BATCH_ANSWER_BYTES}, "retryable": true}\` |`,
  "",
  "HTTP refusals (the body is a JSON-RPC error without an id):",
  "",
  "| status | when |",
  "|---|---|",
  `| 400 | ${code("MCP-Protocol-Version")} names an unsupported version (answered ${code("-32022")} with the request's id when the body can be read) |`,
  `| 403 | ${code("Origin")} is neither loopback nor allowed |`,
  `| 405 | ${code("GET")}, ${code("DELETE")} or any method but ${code("POST")} (and the CORS ${code("OPTIONS")} preflight); at 2026-07-28 push is ${code("subscriptions/listen")}, not a GET stream |`,
  `| 406 | ${code("Accept")} lacks ${code("application/json")} or ${code("text/event-stream")} |`,
  `| 413 | the body exceeds ${MCP_MAX_BODY_BYTES / 1024} KiB |`,
  `| 415 | ${code("Content-Type")} is not ${code("application/json")} |`,
  `| 429 | a POST without a key whose address has no rate unit left: refused on arrival, before its body is read, with ${code("Retry-After")} (${code("data")} is the ${code("rate_limited")} error object; every keyless POST spends its unit on arrival, see ${code("access")}) |`,
  "",
  `Notifications and responses sent by the client are answered ${code("202")} with no body.`
].join("\n")
