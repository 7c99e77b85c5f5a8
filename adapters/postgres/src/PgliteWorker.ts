/**
 * The embedded database's own thread: a `node:worker_threads` Worker started by `PgliteProxy.ts` that opens the
 * PGlite instance (the data directory and `postgresql.conf` settings come as the first message) and runs the
 * statements the main thread sends, so PGlite's WebAssembly (parse, plan, execute, commit) no longer runs on the
 * event loop that serves HTTP. One message per call, with its id; the answer goes back structured-cloned (`ToMain`).
 *
 * Transactions run here as PGlite's own `transaction`: `begin` enters its callback, the statements of the
 * transaction arrive with its number, and `end` leaves the callback (commit) or throws out of it (rollback), so
 * BEGIN, COMMIT, ROLLBACK and an aborted transaction's error are PGlite's, exactly as in one thread.
 */

import { readFile } from "node:fs/promises"
import { parentPort } from "node:worker_threads"
import { PGlite, type Transaction } from "@electric-sql/pglite"
import type { PgliteWorkerData, SerializedError, ToMain, ToWorker } from "./PgliteProxy.ts"

const port = parentPort
if (port === null) throw new Error("PgliteWorker.ts runs as a worker thread (PgliteProxy.ts starts it)")

/**
 * What every open needs, started at once, before the data directory is known: PGlite's WebAssembly compiled and
 * its file-system bundle read. A worker started early (`prewarmPgliteWorker`) does this while the main thread is
 * still loading the service's modules. Should it fail, PGlite loads them itself.
 */
declare const WebAssembly: { compile: (bytes: Uint8Array) => Promise<object> }
const dist = new URL(".", import.meta.resolve("@electric-sql/pglite"))

/**
 * The first message: PGlite's compiled WebAssembly when this process already has it (a module is shared between
 * threads, not compiled again: PGlite on the main thread keeps it the same way for its next open), else nothing,
 * and the worker compiles it and sends it back for the next worker.
 */
const { wasm } = await new Promise<{ wasm: object | undefined }>((resolve) =>
  port.once("message", (m: { wasm: object | undefined }) => resolve(m))
)
let artifacts: Promise<{ pgliteWasmModule?: never; fsBundle?: Blob }> | undefined = Promise.all([
  wasm !== undefined
    ? wasm
    : readFile(new URL("pglite.wasm", dist))
        .then((b) => WebAssembly.compile(b))
        .then((compiled) => {
          port.postMessage({ id: -1, ok: compiled })
          return compiled
        }),
  readFile(new URL("pglite.data", dist)).then((b) => new Blob([b]))
]).then(
  ([pgliteWasmModule, fsBundle]) => ({ pgliteWasmModule: pgliteWasmModule as never, fsBundle }),
  () => ({})
)

/** The first message: where to open, and with which settings. */
const { dataDir, postgresqlconf, loadDataDir } = await new Promise<PgliteWorkerData>((resolve) =>
  port.once("message", (m: PgliteWorkerData) => resolve(m))
)

const send = (message: ToMain) => port.postMessage(message)

/**
 * An error as the main thread rebuilds it: its name, message and stack, and every own field that is a plain value
 * (PostgreSQL's `code`, `detail`, `severity`, `constraint`, `table`, ... and the failed statement's `query`); the
 * statement's parameters are left out (they may be large, or not cloneable).
 */
const serializeError = (e: unknown): SerializedError => {
  if (typeof e !== "object" || e === null) return { name: "Error", message: String(e), fields: {} }
  const fields: Record<string, string | number | boolean | null> = {}
  for (const [k, v] of Object.entries(e)) {
    if (k === "params" || k === "queryOptions") continue
    if (v === null || typeof v === "string" || typeof v === "number" || typeof v === "boolean") fields[k] = v
  }
  const err = e as { name?: unknown; message?: unknown; stack?: unknown }
  return {
    name: typeof err.name === "string" ? err.name : "Error",
    message: typeof err.message === "string" ? err.message : String(e),
    ...(typeof err.stack === "string" ? { stack: err.stack } : {}),
    fields
  }
}

/** Thrown out of a transaction's callback when the main thread asks for a rollback. */
const ROLLBACK = Symbol("rollback")

interface OpenTransaction {
  readonly tx: Transaction
  /** Leaves the callback: `true` commits, `false` rolls back; `id` is the `end` message, answered when done. */
  readonly end: (commit: boolean, id: number) => void
}

const transactions = new Map<number, OpenTransaction>()
/** Calls under way (not counting open transactions waiting for their `end`), for `close` to drain. */
const running = new Set<Promise<unknown>>()

// A function, so that the preloaded bundle (6 MB) is not held by this module for the worker's life.
const openDatabase = async (): Promise<PGlite | undefined> => {
  const preloaded = (await artifacts) ?? {}
  artifacts = undefined
  return PGlite.create({
    ...preloaded,
    ...(dataDir === undefined ? {} : { dataDir }),
    ...(loadDataDir === undefined ? {} : { loadDataDir }),
    postgresqlconf: [...postgresqlconf]
  }).catch((e: unknown) => {
    send({ id: 0, error: serializeError(e) })
    return undefined
  })
}
const pglite = await openDatabase()

const answer = (id: number, work: () => Promise<unknown>) => {
  const p = work().then(
    (ok) => send({ id, ok }),
    (e: unknown) => send({ id, error: serializeError(e) })
  )
  running.add(p)
  void p.finally(() => running.delete(p))
}

const target = (db: PGlite, tx: number | undefined): PGlite | Transaction => {
  if (tx === undefined) return db
  const open = transactions.get(tx)
  if (open === undefined) throw new Error(`transaction ${tx} is not open`)
  return open.tx
}

const begin = (db: PGlite, id: number, tx: number) => {
  let begun = false
  let endId = 0
  const done = db.transaction(async (t) => {
    const commit = await new Promise<boolean>((resolve) => {
      transactions.set(tx, {
        tx: t,
        end: (c, i) => {
          endId = i
          resolve(c)
        }
      })
      begun = true
      send({ id, ok: null })
    })
    if (!commit) throw ROLLBACK
  })
  done.then(
    () => send({ id: endId, ok: null }),
    (e: unknown) => {
      if (!begun) send({ id, error: serializeError(e) })
      else send(e === ROLLBACK ? { id: endId, ok: null } : { id: endId, error: serializeError(e) })
    }
  )
  void done.catch(() => {}).finally(() => transactions.delete(tx))
}

const close = async (db: PGlite, id: number) => {
  await Promise.allSettled([...running])
  // A transaction still open when its database closes is rolled back (its `end` never came).
  for (const open of transactions.values()) open.end(false, 0)
  if (!db.closed) await db.close()
  send({ id, ok: null })
  port.close()
}

if (pglite !== undefined) {
  port.on("message", (m: ToWorker) => {
    switch (m.k) {
      case "query":
        return answer(m.id, async () => {
          const r = await target(pglite, m.tx).query(m.sql, m.params as Array<unknown>, m.options)
          return { rows: r.rows, fields: r.fields, affectedRows: r.affectedRows, ...(r.blob ? { blob: r.blob } : {}) }
        })
      case "exec":
        return answer(m.id, () => target(pglite, m.tx).exec(m.sql, m.options))
      case "begin":
        return begin(pglite, m.id, m.tx)
      case "end": {
        const open = transactions.get(m.tx)
        if (open === undefined) send({ id: m.id, error: serializeError(new Error(`transaction ${m.tx} is not open`)) })
        else open.end(m.commit, m.id)
        return
      }
      case "rollback":
        return answer(m.id, () => (target(pglite, m.tx) as Transaction).rollback())
      case "close":
        return void close(pglite, m.id)
      case "crash":
        // The fault a test injects: an uncaught error, as a bug or a WebAssembly abort here would be (thrown
        // before any later message is read, so the calls sent after it are under way when the worker dies).
        throw new Error(m.message)
    }
  })
  send({ id: 0, ok: null })
}
