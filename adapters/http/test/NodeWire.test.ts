/**
 * `writeAnswer`, the one place answers reach Node's response: the head and length of text, byte and empty
 * bodies, and a streamed body pulled only as the socket drains and closed once however the answer ends.
 */
import { EventEmitter } from "node:events"
import type { ServerResponse } from "node:http"
import type { WireStream } from "@market-data/core"
import { describe, expect, it } from "vitest"
import { writeAnswer } from "../src/NodeWire.ts"

/** What `writeAnswer` uses of a Node response; `accepting`: what `write` answers (false: the buffer is full). */
class StandInResponse extends EventEmitter {
  status = 0
  head: Record<string, string | number> = {}
  readonly chunks: Array<string> = []
  accepting = true
  writableEnded = false
  destroyed = false
  writeHead(status: number, list: Array<string | number>) {
    this.status = status
    for (let i = 0; i < list.length; i += 2) this.head[String(list[i])] = list[i + 1] as string | number
    return this
  }
  write(chunk: Uint8Array) {
    this.chunks.push(new TextDecoder().decode(chunk))
    return this.accepting
  }
  end(body?: string | Uint8Array) {
    if (body !== undefined) this.chunks.push(typeof body === "string" ? body : new TextDecoder().decode(body))
    this.writableEnded = true
    this.emit("close")
    return this
  }
  /** The client goes away. */
  hangUp() {
    this.destroyed = true
    this.emit("close")
  }
}

/** A stream whose chunks are handed out as the test releases them; it counts the pulls and the closes. */
const controlledStream = () => {
  const waiting: Array<(chunk: Uint8Array | undefined) => void> = []
  const counts = { opened: 0, pulls: 0, closed: 0 }
  const stream: WireStream = {
    _tag: "Stream",
    open: () => {
      counts.opened++
    },
    next: () => {
      counts.pulls++
      return new Promise((resolve) => waiting.push(resolve))
    },
    close: () => {
      counts.closed++
    }
  }
  /** Answers the pending pull (a chunk, or the end), then lets the pump run its continuation. */
  const release = async (text: string | undefined) => {
    const resolve = waiting.shift()
    if (resolve === undefined) throw new Error("no pull is waiting")
    resolve(text === undefined ? undefined : new TextEncoder().encode(text))
    await new Promise((r) => setImmediate(r))
  }
  return { stream, counts, release, pending: () => waiting.length }
}

const answer = (res: StandInResponse, body: Parameters<typeof writeAnswer>[1]) =>
  writeAnswer(res as unknown as ServerResponse, body, { "x-house": "one" }, "req-1")

describe("writeAnswer", () => {
  it("writes a text body with its byte length, the request ID first and the composition's headers last", () => {
    const res = new StandInResponse()
    answer(res, { status: 200, headers: { "content-type": "application/json" }, body: '{"a":"é"}' })
    expect(res.status).toBe(200)
    expect(Object.keys(res.head)).toEqual(["x-request-id", "content-type", "x-house", "content-length"])
    expect(res.head["content-length"]).toBe(10)
    expect(res.chunks).toEqual(['{"a":"é"}'])
  })

  it("says an empty body's length, except where the status has none", () => {
    const accepted = new StandInResponse()
    answer(accepted, { status: 202, headers: {} })
    expect(accepted.head["content-length"]).toBe(0)
    for (const status of [204, 304]) {
      const res = new StandInResponse()
      answer(res, { status, headers: {} })
      expect(res.head["content-length"]).toBeUndefined()
    }
  })

  it("pulls a stream's next chunk only once the last one is in a buffer with room, and ends with it", async () => {
    const res = new StandInResponse()
    const s = controlledStream()
    answer(res, { status: 200, headers: { "content-type": "text/event-stream" }, body: s.stream })
    expect(res.head["content-length"]).toBeUndefined()
    expect(s.counts).toEqual({ opened: 1, pulls: 1, closed: 0 })
    await s.release("a")
    expect(s.counts.pulls).toBe(2)
    res.accepting = false
    await s.release("b")
    // The buffer is full: nothing more is asked for until it drains.
    expect(s.counts.pulls).toBe(2)
    expect(s.pending()).toBe(0)
    res.accepting = true
    res.emit("drain")
    expect(s.counts.pulls).toBe(3)
    await s.release(undefined)
    expect(res.chunks).toEqual(["a", "b"])
    expect(res.writableEnded).toBe(true)
    expect(s.counts).toEqual({ opened: 1, pulls: 3, closed: 1 })
  })

  it("closes a stream once when its client goes away, and writes nothing after", async () => {
    const res = new StandInResponse()
    const s = controlledStream()
    answer(res, { status: 200, headers: {}, body: s.stream })
    await s.release("a")
    res.hangUp()
    expect(s.counts.closed).toBe(1)
    await s.release("late")
    expect(res.chunks).toEqual(["a"])
    expect(s.counts).toEqual({ opened: 1, pulls: 2, closed: 1 })
  })
})
