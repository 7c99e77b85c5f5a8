/**
 * JSON-RPC 2.0 framing as MCP uses it: classifying an incoming message and building responses. Pure.
 */

/** Error codes: JSON-RPC's own and MCP's "resource not found". */
export const RpcCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** Implementation-defined server error (JSON-RPC reserves -32000 to -32099); transport refusals use it. */
  ServerError: -32000,
  ResourceNotFound: -32002
} as const

export type RequestId = string | number

export type Params = { readonly [k: string]: unknown }

/** One incoming JSON-RPC message, classified. */
export type Message =
  | { readonly _tag: "Request"; readonly id: RequestId; readonly method: string; readonly params: Params }
  | { readonly _tag: "Notification"; readonly method: string }
  | { readonly _tag: "Response" }
  | { readonly _tag: "Invalid"; readonly id: RequestId | null; readonly code: number; readonly message: string }

export interface RpcError {
  readonly code: number
  readonly message: string
  readonly data?: unknown
}

export type RpcResponse =
  | { readonly jsonrpc: "2.0"; readonly id: RequestId; readonly result: unknown }
  | { readonly jsonrpc: "2.0"; readonly id: RequestId | null; readonly error: RpcError }

export const isPlainObject = (u: unknown): u is { readonly [k: string]: unknown } =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** MCP request IDs are strings or numbers, never null. */
const isId = (u: unknown): u is RequestId => typeof u === "string" || (typeof u === "number" && Number.isFinite(u))

/** Classifies one element of a POST body (the body itself, or one element of a batch). */
export const classify = (u: unknown): Message => {
  if (!isPlainObject(u)) {
    return { _tag: "Invalid", id: null, code: RpcCode.InvalidRequest, message: "a JSON-RPC message is an object" }
  }
  const id = isId(u.id) ? u.id : null
  const invalid = (message: string, code: number = RpcCode.InvalidRequest): Message => ({
    _tag: "Invalid",
    id,
    code,
    message
  })
  if (u.jsonrpc !== "2.0") return invalid('`jsonrpc` must be "2.0"')
  if ("method" in u) {
    if (typeof u.method !== "string" || u.method.length === 0) return invalid("`method` must be a non-empty string")
    if ("params" in u && !isPlainObject(u.params)) {
      return Array.isArray(u.params)
        ? invalid("`params` must be an object (MCP uses named parameters)", RpcCode.InvalidParams)
        : invalid("`params` must be an object")
    }
    const params = (u.params ?? {}) as Params
    if (!("id" in u)) return { _tag: "Notification", method: u.method }
    if (!isId(u.id)) return invalid("`id` must be a string or a number (MCP forbids null)")
    return { _tag: "Request", id: u.id, method: u.method, params }
  }
  if ("id" in u && ("result" in u || "error" in u)) return { _tag: "Response" }
  return invalid("a JSON-RPC message has a `method` (request, notification) or a `result`/`error` (response)")
}

export const success = (id: RequestId, result: unknown): RpcResponse => ({ jsonrpc: "2.0", id, result })

export const failure = (id: RequestId | null, code: number, message: string, data?: unknown): RpcResponse => ({
  jsonrpc: "2.0",
  id,
  error: data === undefined ? { code, message } : { code, message, data }
})

/** The JSON text of results that never change (the tool and resource lists), serialized once, with its size. */
const constantResults = new WeakMap<object, { readonly text: string; readonly bytes: number }>()

/** Marks a result that never changes: its JSON text is computed once and reused by `serialize`. */
export const constantResult = <A extends object>(result: A): A => {
  const text = JSON.stringify(result)
  constantResults.set(result, { text, bytes: Buffer.byteLength(text) })
  return result
}

/**
 * The JSON text of a response (exactly `JSON.stringify(response)`) and its size in UTF-8 bytes; a constant
 * result is neither serialized nor measured again.
 */
export const serialize = (response: RpcResponse): { readonly text: string; readonly bytes: number } => {
  if ("result" in response && typeof response.result === "object" && response.result !== null) {
    const known = constantResults.get(response.result)
    if (known !== undefined) {
      const head = `{"jsonrpc":"2.0","id":${JSON.stringify(response.id)},"result":`
      return { text: `${head}${known.text}}`, bytes: Buffer.byteLength(head) + known.bytes + 1 }
    }
  }
  const text = JSON.stringify(response)
  return { text, bytes: Buffer.byteLength(text) }
}
