/**
 * One HTTP exchange as plain data, whatever server carries it: what a transport reads of a request
 * (`WireRequest`) and what it answers (`WireResponse`). The HTTP adapter builds the request from Node's and writes
 * every response in one place; the transports it mounts (the MCP endpoint) read and answer through these records
 * only, so they need no HTTP library and no server of their own.
 */
import type { Effect } from "effect"

/** A request body read whole, or why it was not. */
export type BodyRead =
  | { readonly _tag: "Body"; readonly text: string }
  /** Longer than the reader's limit (declared or counted while reading). */
  | { readonly _tag: "TooLarge" }
  /** The client went away or the stream failed before its end. */
  | { readonly _tag: "Unreadable" }

export interface WireRequest {
  /** Upper-case (`GET`, `POST`, ...). */
  readonly method: string
  /** The request target: path and query. */
  readonly url: string
  /**
   * A header by lower-case name as Node folds repeats (most joined with ", ", a single-valued one's first kept);
   * undefined when absent.
   */
  readonly header: (name: string) => string | undefined
  /** Every value of a header by lower-case name, in arrival order, repeats kept. */
  readonly headerValues: (name: string) => ReadonlyArray<string>
  /** The peer's address (the proxy's, behind one). */
  readonly remoteAddress: string | undefined
  /** Reads the body as UTF-8 text, at most `maxBytes` of it; once per request. */
  readonly readBody: (maxBytes: number) => Effect.Effect<BodyRead>
}

/**
 * A streamed body (server-sent events): chunks pulled one at a time as the connection drains, so nothing is
 * produced ahead of a slow reader.
 */
export interface WireStream {
  readonly _tag: "Stream"
  /** Called once, when the answer's head has been written. */
  readonly open: () => void
  /** The next chunk, when there is one; undefined ends the body. */
  readonly next: () => Promise<Uint8Array | undefined>
  /** Called once however the answer ends (its end, the client gone, the server stopping). */
  readonly close: () => void
}

export interface WireResponse {
  readonly status: number
  /** By lower-case name. */
  readonly headers: Readonly<Record<string, string>>
  /** Absent for an answer without a body (204, 304, a HEAD's); a length is set for text and bytes. */
  readonly body?: string | Uint8Array | WireStream
}
