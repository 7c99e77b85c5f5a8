/**
 * The MCP transport: a stateless Streamable HTTP server in JSON response mode at `POST /api/mcp`.
 *
 * This module checks the HTTP framing (Origin, method, Accept, Content-Type, MCP-Protocol-Version, body size),
 * reads JSON-RPC (single messages, and batches under 2025-03-26) and hands each message to `Methods`. Every `tools/call` (and every
 * `resources/read`) is an `ApiRequest` run through the core pipeline exactly as an HTTP request is; the
 * `Answer` is re-wrapped as a tool result. No business logic lives here.
 *
 * Written directly rather than on the SDK's server: the SDK disagrees with the contract on versions, batches,
 * unknown tools, cursors, `jsonrpc`-less messages and Origin (see STACK.md), and the surface is small.
 */
import {
  type Admitted,
  type Answer,
  type ApiError,
  admitKeyless,
  apiError,
  creditsChargedOf,
  ErrorCatalog,
  KEYLESS_MCP_CONCURRENCY,
  MCP_MAX_BATCH_ANSWER_BYTES,
  MCP_OUTPUT_SCHEMAS_PARAMETER,
  type PipelineServices,
  RateLimiter,
  type RateWindow,
  secondsUntilReset,
  type WireRequest,
  type WireResponse
} from "@market-data/core"
import { Effect, Semaphore } from "effect"
import { assetIdOf } from "./AssetResources.ts"
import {
  classify,
  failure,
  type Message,
  type RequestId,
  RpcCode,
  type RpcResponse,
  serialize,
  success
} from "./JsonRpc.ts"
import { listen } from "./Listen.ts"
import { type CallContext, type Dispatched, dispatch, SERVER_IDENTITY } from "./Methods.ts"
import { type Era, eraOf, MODERN_PROTOCOL_VERSION, modernResult, unsupportedVersion, validateModern } from "./Modern.ts"
import { originAllowed } from "./Origins.ts"
import { errorResult } from "./ToolResult.ts"
import { CATALOG_VERSION_HEADER, catalogVersion, mirroredParams } from "./Tools.ts"

/** Where the MCP endpoint is mounted. */
export const MCP_PATH = "/api/mcp"

/** What a request without `MCP-Protocol-Version` speaks (the transport spec's backwards-compatible default). */
const ASSUMED_PROTOCOL_VERSION = "2025-03-26"
/** The only version with JSON-RPC batches. */
const BATCH_PROTOCOL_VERSION = "2025-03-26"

/** Largest POST body read; larger is 413. MCP messages here are small: a tool call is a few hundred bytes. */
export const MAX_MCP_BODY_BYTES = 256 * 1024
/** Most messages in one batch (2025-03-26 only); more is -32600. */
export const MAX_BATCH_MESSAGES = 32
/**
 * Largest answer of a JSON-RPC batch, in bytes: the members whose answers do not fit are answered with a small
 * -32000 error and not run (the first answer is always delivered, and so is a tool call that already charged
 * credits).
 */
export const MAX_BATCH_ANSWER_BYTES = MCP_MAX_BATCH_ANSWER_BYTES

/** What the HTTP request log line records about an MCP exchange. */
export interface McpExchange {
  /** The answer as plain data, written by the HTTP transport that mounts this endpoint. */
  readonly response: WireResponse
  /** `mcp <method>` (with the tool name for `tools/call`), or `mcp batch` . */
  readonly op: string
  /** Credits charged by the `tools/call`s of this POST, when any ran. */
  readonly credits: number | undefined
  readonly keyId: string | undefined
}

// ---------------------------------------------------------------------------------------------------------------
// HTTP framing
// ---------------------------------------------------------------------------------------------------------------

const EXPOSED = ["RateLimit", "RateLimit-Policy", "Retry-After", "X-Catalog-Version"].join(", ")

const ALLOWED_REQUEST_HEADERS = [
  "Authorization",
  "Content-Type",
  "Accept",
  "Idempotency-Key",
  "MCP-Protocol-Version",
  "Mcp-Method",
  "Mcp-Name",
  "Mcp-Session-Id",
  "Last-Event-ID"
].join(", ")

const corsHeaders = (origin: string | undefined): Record<string, string> =>
  origin === undefined
    ? {}
    : { "access-control-allow-origin": origin, "access-control-expose-headers": EXPOSED, vary: "Origin" }

const jsonResponse = (status: number, body: unknown, headers: Record<string, string>): WireResponse =>
  jsonText(status, JSON.stringify(body), headers)

/** A refusal of the HTTP request itself: the status, and a JSON-RPC error without an id as the body. */
const refuse = (status: number, message: string, headers: Record<string, string> = {}) =>
  jsonResponse(status, failure(null, RpcCode.ServerError, message), headers)

/** Whether an `Accept` value names both `application/json` and `text/event-stream` (with q > 0). */
export const acceptsMcp = (accept: string | undefined): boolean => {
  if (accept === undefined) return false
  const types = new Set<string>()
  for (const range of accept.split(",")) {
    const [type = "", ...params] = range.split(";").map((s) => s.trim().toLowerCase())
    const q = params.find((p) => p.startsWith("q="))
    if (q !== undefined && !(Number(q.slice(2)) > 0)) continue
    types.add(type)
  }
  return types.has("application/json") && types.has("text/event-stream")
}

/** Whether a `Content-Type` is JSON (optionally `charset=utf-8`). */
export const isJsonContentType = (contentType: string | undefined): boolean => {
  if (contentType === undefined) return false
  const [type = "", ...params] = contentType.split(";").map((s) => s.trim().toLowerCase())
  if (type !== "application/json") return false
  return params.every((p) => !p.startsWith("charset=") || p === "charset=utf-8" || p === 'charset="utf-8"')
}

const rateLimitHeaders = (rate: RateWindow | undefined, nowMs: number): Record<string, string> =>
  rate === undefined
    ? {}
    : {
        "ratelimit-policy": `"default";q=${rate.limit};w=60`,
        ratelimit: `"default";r=${rate.remaining};t=${secondsUntilReset(rate, nowMs)}`
      }

const admittedRateHeaders = (admitted: Admitted): Record<string, string> =>
  rateLimitHeaders(admitted.rate, admitted.nowMs)

/**
 * A POST refused on arrival (its caller out of units, or the store unavailable): the refusal's status and one
 * JSON-RPC error without an id, whatever the body holds (it is not read: the connection is closed after).
 */
const refusedPost = (error: ApiError, admitted: Admitted, cors: Record<string, string>) =>
  jsonResponse(ErrorCatalog[error.code].status, refusal(null, error), {
    ...cors,
    ...admittedRateHeaders(admitted),
    ...(error.retryAfterSeconds === undefined ? {} : { "retry-after": String(error.retryAfterSeconds) }),
    ...(error.code === "unauthenticated" ? { "www-authenticate": 'Bearer realm="market-data"' } : {}),
    connection: "close"
  })

// ---------------------------------------------------------------------------------------------------------------
// The endpoint
// ---------------------------------------------------------------------------------------------------------------

/**
 * The MCP endpoint of one server: answers one HTTP request to `/api/mcp`, never fails. What it keeps across
 * requests (the turns of keyless POSTs) is its own, so two servers in one process share nothing.
 */
export const makeMcpEndpoint = (): ((request: WireRequest) => Effect.Effect<McpExchange, never, PipelineServices>) => {
  // Keyless POSTs take turns (at most KEYLESS_CONCURRENCY at once): see `answer`.
  const keylessTurns = Semaphore.makeUnsafe(KEYLESS_CONCURRENCY)
  return (request) => answer(request, keylessTurns)
}

const answer = (
  request: WireRequest,
  keylessTurns: Semaphore.Semaphore
): Effect.Effect<McpExchange, never, PipelineServices> =>
  Effect.gen(function* () {
    const plain = (response: WireResponse, op = "mcp"): McpExchange => ({
      response,
      op,
      credits: undefined,
      keyId: undefined
    })
    const origins = request.headerValues("origin")
    const origin = origins[0]
    if (origins.length > 1 || (origin !== undefined && !(yield* originAllowed(origin)))) {
      return plain(refuse(403, `Forbidden: Origin ${JSON.stringify(origins.join(", ").slice(0, 200))} is not allowed`))
    }
    const cors = corsHeaders(origin)
    const method = request.method.toUpperCase()
    if (method === "OPTIONS") {
      return plain({
        status: 204,
        headers: {
          ...cors,
          "access-control-allow-methods": "POST, OPTIONS",
          "access-control-allow-headers": ALLOWED_REQUEST_HEADERS,
          "access-control-max-age": "86400",
          [CATALOG_VERSION_HEADER]: catalogVersion
        }
      })
    }
    if (method !== "POST") {
      return plain(
        refuse(
          405,
          `Method not allowed: ${method}; this stateless server answers POST only (no SSE stream, no sessions)`,
          {
            ...cors,
            allow: "POST, OPTIONS"
          }
        )
      )
    }
    // A keyless POST spends its caller's unit before anything else is done with it (Accept, Content-Type,
    // version, body): whatever becomes of it (a body that is not JSON, a batch its version has not), it costs a
    // unit, and once the address has none left it is refused here with one error, its body unread. That unit
    // stands for its first message's (`runMessages`). A POST with a key spends one of the key's units when it is
    // refused before any message runs (its messages spend their own otherwise).
    const authorization = request.headerValues("authorization")
    const admission = {
      authorization,
      client: request.remoteAddress ?? "unknown",
      forwardedFor: request.headerValues("x-forwarded-for")
    }
    const prepaid = authorization.length === 0 ? yield* admitKeyless(admission) : undefined
    if (prepaid?.refusal !== undefined) return plain(refusedPost(prepaid.refusal, prepaid, cors))
    const arrival: ArrivalUnit = { unspent: prepaid }
    const early = (response: (rate: Record<string, string>) => WireResponse) =>
      prepaid !== undefined
        ? Effect.succeed(plain(response(admittedRateHeaders(prepaid))))
        : Effect.map(admitKeyless(admission), (spent) => plain(response(admittedRateHeaders(spent))))
    if (!acceptsMcp(request.header("accept"))) {
      return yield* early((rate) =>
        refuse(406, "Not Acceptable: Accept must include both application/json and text/event-stream", {
          ...cors,
          ...rate
        })
      )
    }
    if (!isJsonContentType(request.header("content-type"))) {
      return yield* early((rate) =>
        refuse(415, "Unsupported Media Type: Content-Type must be application/json", { ...cors, ...rate })
      )
    }
    const versionHeader = request.header("mcp-protocol-version")
    const outputSchemas = outputSchemasOf(request.url)
    if (outputSchemas === undefined) {
      return yield* early((rate) =>
        refuse(400, `Bad Request: \`${MCP_OUTPUT_SCHEMAS_PARAMETER}\` must be true or false, given at most once`, {
          ...cors,
          ...rate
        })
      )
    }
    const body = yield* request.readBody(MAX_MCP_BODY_BYTES)
    if (body._tag === "TooLarge") {
      return yield* early((rate) =>
        refuse(413, `Content Too Large: the body exceeds ${MAX_MCP_BODY_BYTES} bytes`, { ...cors, ...rate })
      )
    }
    if (body._tag !== "Body") {
      return yield* early((rate) => refuse(400, "Bad Request: the body could not be read", { ...cors, ...rate }))
    }

    // The era this POST speaks (`Modern.ts`): 2026-07-28 is validated as that revision prescribes and served
    // statelessly; the initialize-based revisions exactly as before.
    let parsed: unknown
    let parsedOk = true
    try {
      parsed = JSON.parse(body.text)
    } catch {
      parsedOk = false
    }
    const era: Era = parsedOk
      ? eraOf(versionHeader, parsed)
      : versionHeader === undefined || eraOf(versionHeader, undefined) === "legacy"
        ? "legacy"
        : "modern"
    let messages: ReadonlyArray<Message>
    let batch = false
    if (era === "modern") {
      if (!parsedOk) {
        if (versionHeader !== undefined && versionHeader !== MODERN_PROTOCOL_VERSION) {
          const refused = unsupportedVersion(null, versionHeader)
          return yield* early((rate) => jsonResponse(refused.status, refused.response, { ...cors, ...rate }))
        }
        return yield* early((rate) =>
          jsonResponse(400, failure(null, RpcCode.ParseError, "Parse error: the body is not JSON"), {
            ...cors,
            ...rate
          })
        )
      }
      const validated = validateModern(parsed, (name) => request.headerValues(name)[0], mirroredParams)
      if (validated._tag === "Refused") {
        return yield* early((rate) => jsonResponse(validated.status, validated.response, { ...cors, ...rate }))
      }
      if (validated._tag === "Request" && validated.message.method === "subscriptions/listen") {
        const m = validated.message
        const answered = yield* withArrivalUnit(
          arrival,
          listen(m.id, m.params, {
            authorization: request.headerValues("authorization"),
            client: request.remoteAddress ?? "unknown",
            forwardedFor: request.headerValues("x-forwarded-for"),
            headers: cors
          })
        )
        if (answered._tag === "Stream") return plain(answered.response, "mcp subscriptions/listen")
        const extra = answered.retryAfter === undefined ? {} : { "retry-after": String(answered.retryAfter) }
        return plain(
          jsonResponse(answered.status, answered.response, { ...cors, ...extra }),
          "mcp subscriptions/listen"
        )
      }
      messages = [classify(parsed)]
    } else {
      const read = readMessages(body.text, versionHeader ?? ASSUMED_PROTOCOL_VERSION)
      if (read._tag === "Refused") return yield* early((rate) => jsonResponse(400, read.error, { ...cors, ...rate }))
      messages = read.messages
      batch = read.batch
    }

    // The messages an Idempotency-Key can apply to: tool calls and asset reads (paid, the `read` operation).
    const calls = messages.filter(
      (m) =>
        m._tag === "Request" &&
        (m.method === "tools/call" ||
          (m.method === "resources/read" && typeof m.params.uri === "string" && assetIdOf(m.params.uri) !== undefined))
    ).length
    const idempotencyKey = request.headerValues("idempotency-key")
    const context: CallContext = {
      authorization,
      idempotencyKey: idempotencyKey.length > 0 && calls > 1 ? "ambiguous" : idempotencyKey,
      client: admission.client,
      forwardedFor: admission.forwardedFor,
      batch,
      outputSchemas,
      modern: era === "modern"
    }

    // Keyless POSTs take turns (at most KEYLESS_CONCURRENCY at once, each after the I/O of its turn), so a flood of
    // them cannot crowd out keyed requests; a keyed POST goes straight through.
    const run = runMessages(messages, context, batch, arrival)
    const { responses, answers, lastRate, keyId, refusedWith, retryAfter, firstErrorCode } =
      context.authorization.length === 0
        ? yield* keylessTurns.withPermits(1)(Effect.andThen(Effect.yieldNow, run))
        : yield* run
    const rateHeaders = lastRate === undefined ? {} : rateLimitHeaders(lastRate.rate, lastRate.nowMs)
    const headers: Record<string, string> = {
      ...cors,
      ...rateHeaders,
      ...(retryAfter === undefined ? {} : { "retry-after": String(retryAfter) })
    }
    const credits = answers.length === 0 ? undefined : answers.reduce((n, a) => n + creditsChargedOf(a.outcome), 0)
    const exchange = (response: WireResponse): McpExchange => ({
      response,
      op: logName(messages, batch),
      credits,
      keyId: answers.findLast((a) => a.keyId !== undefined)?.keyId ?? keyId
    })
    if (responses.length === 0) {
      // Only notifications and responses. Refused (a bad key, the rate limit): the refusal's status, with a
      // JSON-RPC error without an id. Otherwise accepted, nothing to answer.
      if (refusedWith !== undefined) {
        const status = ErrorCatalog[refusedWith.code].status
        const extra = refusedWith.code === "unauthenticated" ? { "www-authenticate": 'Bearer realm="market-data"' } : {}
        return exchange(jsonResponse(status, refusal(null, refusedWith), { ...headers, ...extra }))
      }
      return exchange({ status: 202, headers: { ...headers, [CATALOG_VERSION_HEADER]: catalogVersion } })
    }
    if (!batch) {
      const only = messages[0] as Message
      // 2026-07-28 answers a method it does not implement with 404 (the JSON-RPC error tells it from a legacy
      // server's 404).
      const status =
        only._tag === "Invalid" ? 400 : era === "modern" && firstErrorCode === RpcCode.MethodNotFound ? 404 : 200
      return exchange(jsonText(status, responses[0] as string, headers))
    }
    return exchange(jsonText(200, `[${responses.join(",")}]`, headers))
  })

/**
 * The endpoint's one query parameter: `output_schemas=true` makes `tools/list` include every tool's
 * `outputSchema` (for a client that validates `structuredContent`); absent or `false`, they are left out.
 * Undefined when it is given another value or more than once. Other query parameters are ignored.
 */
export const outputSchemasOf = (url: string): boolean | undefined => {
  const query = url.indexOf("?")
  if (query < 0) return false
  const values = new URLSearchParams(url.slice(query + 1)).getAll(MCP_OUTPUT_SCHEMAS_PARAMETER)
  if (values.length === 0) return false
  if (values.length > 1) return undefined
  return values[0] === "true" ? true : values[0] === "false" ? false : undefined
}

/** At most this many keyless MCP POSTs run their messages at once (see `makeMcpEndpoint`). */
export const KEYLESS_CONCURRENCY = KEYLESS_MCP_CONCURRENCY

interface Ran {
  readonly responses: ReadonlyArray<string>
  readonly answers: ReadonlyArray<Answer>
  readonly lastRate: { readonly rate: RateWindow; readonly nowMs: number } | undefined
  readonly keyId: string | undefined
  readonly refusedWith: ApiError | undefined
  readonly retryAfter: number | undefined
  /** The JSON-RPC error code of the first response, when it is an error. */
  readonly firstErrorCode: number | undefined
}

/** The rate unit a keyless POST spent on arrival (`mcpEndpoint`), until a message of it takes it as its own. */
interface ArrivalUnit {
  unspent: Admitted | undefined
}

/**
 * Runs `effect` (a message that spends its unit itself: a pipeline call, `subscriptions/listen`) with the POST's
 * arrival unit standing for the first unit it spends of the caller's address, instead of spending another.
 */
const withArrivalUnit = <A, E, R>(arrival: ArrivalUnit, effect: Effect.Effect<A, E, R>) =>
  arrival.unspent === undefined
    ? effect
    : Effect.flatMap(Effect.service(RateLimiter), (limiter) =>
        Effect.provideService(effect, RateLimiter, {
          ...limiter,
          consume: (scope, limit, nowMs) => {
            const unit = arrival.unspent
            if (unit?.rate === undefined || !scope.startsWith("ip:")) return limiter.consume(scope, limit, nowMs)
            arrival.unspent = undefined
            return Effect.succeed(unit.rate)
          }
        })
      )

/**
 * Runs the messages of one POST in order: every message spends a rate unit of its caller (through the pipeline
 * for `tools/call` and `resources/read`, through `admitKeyless` for the rest); a refusal that holds for the rest
 * of the POST (a bad key, the rate limit) answers the later messages without asking the stores again; a batch
 * stops running members once its answers reach MAX_BATCH_ANSWER_BYTES.
 */
const runMessages = (
  messages: ReadonlyArray<Message>,
  context: CallContext,
  batch: boolean,
  arrival: ArrivalUnit = { unspent: undefined }
): Effect.Effect<Ran, never, PipelineServices> =>
  Effect.gen(function* () {
    const responses: Array<string> = []
    const answers: Array<Answer> = []
    // The caller's rate window after the last unit this POST spent, and the key that spent it.
    let lastRate: { readonly rate: RateWindow; readonly nowMs: number } | undefined
    let keyId: string | undefined
    // A refusal that holds for the rest of the POST (a bad key, the rate limit reached): later messages get it
    // without asking the stores again.
    let refusedWith: ApiError | undefined
    let retryAfter: number | undefined
    let answerBytes = 0
    let capped = false
    let firstErrorCode: number | undefined
    // Spends one unit for a message that does not run through the pipeline; the refusal, if any.
    const spend = Effect.map(
      Effect.suspend(() => {
        const unit = arrival.unspent
        if (unit === undefined)
          return admitKeyless({
            authorization: context.authorization,
            client: context.client,
            forwardedFor: context.forwardedFor
          })
        arrival.unspent = undefined
        return Effect.succeed(unit)
      }),
      (admitted) => {
        if (admitted.rate !== undefined) lastRate = { rate: admitted.rate, nowMs: admitted.nowMs }
        keyId = admitted.keyId ?? keyId
        if (admitted.refusal !== undefined) refusedWith = stickyRefusal(admitted.refusal)
        return admitted.refusal
      }
    )
    for (const message of messages) {
      let out: Dispatched & { readonly refusal?: ApiError }
      const viaPipeline = message._tag === "Request" && PIPELINE_METHODS.has(message.method)
      if (refusedWith !== undefined) {
        // Every later member is refused for the same reason: a short error each, so a refused batch's answer is
        // not many copies of a long one (the first refusal above carries the whole message).
        out = refusedMessage(message, repeatedRefusal(refusedWith), context.modern)
      } else if (capped) {
        // Not run, but a member of the batch all the same: it spends its unit.
        const refused = yield* spend
        if (refused !== undefined) out = refusedMessage(message, refused, context.modern)
        else {
          if (message._tag === "Request" || message._tag === "Invalid") responses.push(capErrorText(message.id))
          continue
        }
      } else if (viaPipeline) {
        out = yield* withArrivalUnit(arrival, dispatch(message, context))
        if (out.answer === undefined) {
          // A call refused before it reached the pipeline (unknown tool, bad arguments) keeps its answer, as an
          // unknown operation does over HTTP whatever the key, but still spends its unit: the rate limit refuses.
          const refused = yield* spend
          if (refused?.code === "rate_limited") out = refusedMessage(message, refused, context.modern)
        } else {
          const o = out.answer.outcome
          if (o._tag === "Failure" && o.error.code === "rate_limited") refusedWith = o.error
        }
      } else {
        // Every other message (initialize, ping, tools/list, the resources lists, notifications, responses,
        // invalid messages) is a keyless request: its key is checked and it spends a rate unit.
        const refused = yield* spend
        out =
          refused === undefined ? yield* dispatch(message, context) : refusedMessage(message, refused, context.modern)
      }
      if (out.refusal?.retryAfterSeconds !== undefined) retryAfter = out.refusal.retryAfterSeconds
      if (out.answer !== undefined) {
        answers.push(out.answer)
        if (out.answer.rate !== undefined) lastRate = { rate: out.answer.rate, nowMs: out.answer.nowMs }
        const o = out.answer.outcome
        if (o._tag === "Failure" && o.error.retryAfterSeconds !== undefined) retryAfter = o.error.retryAfterSeconds
      }
      if (out.response === undefined) continue
      if (responses.length === 0 && "error" in out.response) firstErrorCode = out.response.error.code
      const { text, bytes } = serialize(out.response)
      if (batch && answerBytes > 0 && answerBytes + bytes > MAX_BATCH_ANSWER_BYTES) {
        // The batch's answer is full: this message and every later one are answered with the cap error and
        // not run. The first answer is always delivered, and so is a tool call that already charged credits
        // (never charged unseen).
        capped = true
        if (out.answer === undefined || creditsChargedOf(out.answer.outcome) === 0) {
          responses.push(capErrorText((message as { readonly id: RequestId | null }).id))
          continue
        }
      }
      answerBytes += bytes
      responses.push(text)
    }
    return { responses, answers, lastRate, keyId, refusedWith, retryAfter, firstErrorCode }
  })

/** The methods that run through the core pipeline (which authenticates and spends their unit itself). */
const PIPELINE_METHODS: ReadonlySet<string> = new Set(["tools/call", "resources/read"])

const jsonText = (status: number, text: string, headers: Record<string, string>): WireResponse => ({
  status,
  headers: {
    "content-type": "application/json",
    "cache-control": "no-store",
    [CATALOG_VERSION_HEADER]: catalogVersion,
    ...headers
  },
  body: text
})

/** A refusal that holds for every later message of the same POST. */
const stickyRefusal = (error: ApiError): ApiError | undefined =>
  error.code === "rate_limited" || error.code === "unauthenticated" || error.code === "invalid_header"
    ? error
    : undefined

/** The JSON-RPC error of a message refused before it ran: -32000 with the HTTP error object as `data`. */
const refusal = (id: RequestId | null, error: ApiError): RpcResponse =>
  failure(id, RpcCode.ServerError, error.message, {
    ...error.toBody(),
    ...(error.retryAfterSeconds === undefined ? {} : { retry_after_seconds: error.retryAfterSeconds })
  })

/**
 * The short form of a refusal already answered in full to an earlier member of the same batch (`Retry-After` is
 * the POST's header): about 150 bytes, a small multiple of the smallest member it answers.
 */
const repeatedRefusal = (error: ApiError): ApiError => apiError(error.code, "as above")

/**
 * A message refused before it ran: a tool call as an error tool result (as the pipeline answers; at 2026-07-28
 * with `resultType` and the server's identity), others -32000.
 */
const refusedMessage = (
  message: Message,
  error: ApiError,
  modern: boolean
): Dispatched & { readonly refusal: ApiError } => {
  switch (message._tag) {
    case "Notification":
    case "Response":
      return { refusal: error }
    case "Invalid":
      return { refusal: error, response: refusal(message.id, error) }
    case "Request":
      return message.method === "tools/call"
        ? {
            refusal: error,
            response: success(
              message.id,
              modern ? modernResult(errorResult(error, 0), SERVER_IDENTITY) : errorResult(error, 0)
            )
          }
        : { refusal: error, response: refusal(message.id, error) }
  }
}

/** The answer of a batch member not run because the batch's answer reached its limit. */
const capErrorText = (id: RequestId | null): string => serialize(capError(id)).text

const capError = (id: RequestId | null): RpcResponse =>
  failure(
    id,
    RpcCode.ServerError,
    `Batch answer limit: this batch's answers reached ${MAX_BATCH_ANSWER_BYTES} bytes, so this request was not run and nothing was charged; send it again on its own or in a smaller batch`,
    { reason: "batch_answer_limit", limit_bytes: MAX_BATCH_ANSWER_BYTES, retryable: true }
  )

type ReadMessages =
  | { readonly _tag: "Refused"; readonly error: RpcResponse }
  | { readonly _tag: "Messages"; readonly messages: ReadonlyArray<Message>; readonly batch: boolean }

/** Parses a POST body into classified messages: one, or a batch where the protocol version has them. */
export const readMessages = (text: string, version: string): ReadMessages => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return { _tag: "Refused", error: failure(null, RpcCode.ParseError, "Parse error: the body is not JSON") }
  }
  if (!Array.isArray(parsed)) return { _tag: "Messages", messages: [classify(parsed)], batch: false }
  const problem =
    version !== BATCH_PROTOCOL_VERSION
      ? `JSON-RPC batches exist only in protocol version ${BATCH_PROTOCOL_VERSION}; this request speaks ${version}`
      : parsed.length === 0
        ? "an empty batch is not a request"
        : parsed.length > MAX_BATCH_MESSAGES
          ? `a batch carries at most ${MAX_BATCH_MESSAGES} messages`
          : undefined
  if (problem !== undefined) {
    return { _tag: "Refused", error: failure(null, RpcCode.InvalidRequest, `Invalid Request: ${problem}`) }
  }
  return { _tag: "Messages", messages: parsed.map(classify), batch: true }
}

const logName = (messages: ReadonlyArray<Message>, batch: boolean): string => {
  if (batch) return `mcp batch(${messages.length})`
  const m = messages[0]
  if (m === undefined || m._tag === "Invalid") return "mcp invalid"
  if (m._tag === "Response") return "mcp response"
  if (m._tag === "Notification") return `mcp ${m.method.slice(0, 64)}`
  const name = m.method === "tools/call" && typeof m.params.name === "string" ? ` ${m.params.name.slice(0, 64)}` : ""
  return `mcp ${m.method.slice(0, 64)}${name}`
}
