/**
 * The bulk ingest's parsing worker (`node:worker_threads`): receives the inflated bytes of archive entries from
 * the main thread and sends back each entry's head, its rows (`COPY` text, transferred) and its end; see
 * `EntryParse.ts` for the parsing and `Bulk.ts` for the main thread's side. Entries arrive one after another;
 * every `data` message is acknowledged once read, which is the main thread's backpressure.
 */
import { parentPort } from "node:worker_threads"
import { EntryParser, type ToMain, type ToWorker } from "./EntryParse.ts"

const port = parentPort
if (port === null) throw new Error("ParseWorker.ts runs as a worker thread of the bulk ingest")

const send = (message: ToMain, transfer?: ReadonlyArray<ArrayBuffer>) =>
  port.postMessage(message, transfer === undefined ? undefined : [...transfer])

const entries = new Map<number, EntryParser>()

/** Runs one step of an entry; anything it throws (a bug, not a bad document) fails that entry, named. */
const step = (id: number, body: (parser: EntryParser) => void) => {
  const parser = entries.get(id)
  if (parser === undefined) return
  try {
    body(parser)
  } catch (e) {
    entries.delete(id)
    send({
      t: "failed",
      id,
      reason: `unexpected failure while reading the document: ${e instanceof Error ? e.message : String(e)}`
    })
  }
}

port.on("message", (message: ToWorker) => {
  switch (message.t) {
    case "begin":
      entries.set(message.id, new EntryParser(message.id, message.name, message.encoding, send))
      break
    case "data":
      step(message.id, (p) => p.data(message.bytes))
      send({ t: "ack", id: message.id })
      break
    case "end":
      step(message.id, (p) => p.end())
      entries.delete(message.id)
      break
    case "drop":
      entries.delete(message.id)
      break
  }
})
