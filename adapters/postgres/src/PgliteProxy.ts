/**
 * The embedded database on its own thread: `openPgliteWorker` starts `PgliteWorker.ts` in a `node:worker_threads`
 * Worker, which opens PGlite there, and answers with a proxy implementing what this code uses of a PGlite
 * instance (`PgliteHandle`): kysely's `PGliteDialect` (`query`, `transaction` with interactive statements,
 * `close`, `closed`, `ready`, `waitReady`), `exec`, and the `COPY ... FROM '/dev/blob'` of `Copy.ts` (the `blob`
 * option: a `Blob` is structured-cloned to the worker). Every call is a message with an id; its answer comes
 * back structured-cloned, so rows keep their JavaScript types (strings for numeric, numbers, bigint, `Date`,
 * `Uint8Array`, parsed json, arrays, null). A failure comes back as a `PgliteError` with the original's name,
 * message and plain fields (`code`, `detail`, ...), so what classifies PostgreSQL's errors (`Errors.ts`, kysely's
 * aborted-transaction check, group commit) sees what it saw in one thread.
 *
 * A worker that dies (an uncaught error, an abort, `exit`) fails every call under way and every later one with
 * `PgliteWorkerStopped`, which the stores answer as `StoreUnavailable` (503) instead of waiting forever.
 */
import { Worker } from "node:worker_threads"

/** The rows of one statement, as PGlite answers them. */
export interface PgliteResults<T = Record<string, unknown>> {
  readonly rows: Array<T>
  readonly fields: ReadonlyArray<{ readonly name: string; readonly dataTypeID: number }>
  readonly affectedRows?: number
  readonly blob?: Blob
}

export interface PgliteQueryOptions {
  readonly rowMode?: "array" | "object"
  readonly blob?: Blob | File
  readonly paramTypes?: Array<number>
}

/** What the code uses of a PGlite transaction. */
export interface PgliteTx {
  readonly query: <T = Record<string, unknown>>(
    sql: string,
    params?: Array<unknown>,
    options?: PgliteQueryOptions
  ) => Promise<PgliteResults<T>>
  readonly exec: (sql: string, options?: PgliteQueryOptions) => Promise<Array<PgliteResults>>
  readonly rollback: () => Promise<void>
  readonly closed: boolean
}

/** What the code uses of a PGlite instance: PGlite itself in this thread, or the worker's proxy. */
export interface PgliteHandle {
  query: <T = Record<string, unknown>>(
    sql: string,
    params?: Array<unknown>,
    options?: PgliteQueryOptions
  ) => Promise<PgliteResults<T>>
  exec: (sql: string, options?: PgliteQueryOptions) => Promise<Array<PgliteResults>>
  transaction: <T>(callback: (tx: PgliteTx) => Promise<T>) => Promise<T>
  readonly close: () => Promise<void>
  readonly closed: boolean
  readonly ready: boolean
  readonly waitReady: Promise<void>
}

/** The first message to `PgliteWorker.ts`: where and how to open PGlite. */
export interface PgliteWorkerData {
  readonly dataDir: string | undefined
  readonly postgresqlconf: ReadonlyArray<string>
  /** An in-memory database's starting contents (`PgliteOptions.loadDataDir`; a `Blob` is structured-cloned). */
  readonly loadDataDir?: Blob
}

/** Messages to the worker. `tx`: the statement belongs to that open transaction. */
export type ToWorker =
  | {
      readonly k: "query"
      readonly id: number
      readonly sql: string
      readonly params: ReadonlyArray<unknown> | undefined
      readonly options: PgliteQueryOptions | undefined
      readonly tx: number | undefined
    }
  | {
      readonly k: "exec"
      readonly id: number
      readonly sql: string
      readonly options: PgliteQueryOptions | undefined
      readonly tx: number | undefined
    }
  | { readonly k: "begin"; readonly id: number; readonly tx: number }
  | { readonly k: "end"; readonly id: number; readonly tx: number; readonly commit: boolean }
  | { readonly k: "rollback"; readonly id: number; readonly tx: number }
  | { readonly k: "close"; readonly id: number }
  | { readonly k: "crash"; readonly id: number; readonly message: string }

export interface SerializedError {
  readonly name: string
  readonly message: string
  readonly stack?: string
  readonly fields: Record<string, string | number | boolean | null>
}

/**
 * Answers from the worker; id 0 is the open (`ok` once PGlite is open, `error` if it could not be), id -1 the
 * compiled WebAssembly module (kept for the next worker).
 */
export type ToMain =
  | { readonly id: number; readonly ok: unknown }
  | { readonly id: number; readonly error: SerializedError }

/** An error of the database, rebuilt from the worker's: its name, message, and fields (`code`, `detail`, ...). */
export class PgliteError extends Error {
  readonly code?: string
  readonly [field: string]: unknown
  constructor(e: SerializedError) {
    super(e.message)
    Object.assign(this, e.fields)
    this.name = e.name
    if (e.stack !== undefined) this.stack = `${e.stack}\n    at (the embedded database's worker thread)`
  }
}

/** The embedded database's worker stopped: every call fails with this until the store is reopened. */
export class PgliteWorkerStopped extends Error {
  constructor(reason: string) {
    super(`the embedded database's worker thread stopped (${reason}); the store is unavailable until it is reopened`)
    this.name = "PgliteWorkerStopped"
  }
}

const WORKER_URL = new URL(import.meta.url.endsWith(".ts") ? "./PgliteWorker.ts" : "./PgliteWorker.js", import.meta.url)

/** PGlite's WebAssembly as the first worker compiled it, given to the next (which then skips the compile). */
let compiledWasm: object | undefined

/** `ToWorker` without its id (given when sent). */
type Call = ToWorker extends infer M ? (M extends { id: number } ? Omit<M, "id"> : never) : never

class PgliteWorkerProxy implements PgliteHandle {
  closed = false
  ready = false
  readonly waitReady: Promise<void>
  private readonly worker: Worker
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>()
  private nextId = 1
  private nextTx = 1
  private stopped: PgliteWorkerStopped | undefined
  private closing: Promise<void> | undefined
  private refs = 0

  constructor() {
    // The worker inherits this process's V8 flags (`--liftoff-only`, the young generation's cap of `npm start`).
    // It compiles PGlite's WebAssembly at once, and opens the database when `open` says where.
    this.worker = new Worker(WORKER_URL)
    this.worker.unref()
    this.worker.postMessage({ wasm: compiledWasm })
    this.waitReady = new Promise<void>((resolve, reject) => {
      this.pending.set(0, {
        resolve: () => {
          this.ready = true
          resolve()
        },
        reject
      })
    })
    // Not a rejection nobody handles, if the worker dies before it is opened.
    this.waitReady.catch(() => {})
    this.worker.on("message", (m: ToMain) => {
      if (m.id === -1 && "ok" in m) {
        compiledWasm ??= m.ok as object
        return
      }
      const p = this.pending.get(m.id)
      if (p === undefined) return
      this.pending.delete(m.id)
      this.release()
      if ("error" in m) p.reject(new PgliteError(m.error))
      else p.resolve(m.ok)
    })
    this.worker.on("error", (e) => this.stop(`uncaught ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`))
    this.worker.on("messageerror", (e) => this.stop(`an answer could not be read: ${String(e)}`))
    this.worker.on("exit", (code) => this.stop(`exited with code ${code}`))
  }

  /** Opens the database in the worker; `waitReady` settles when it is open (or could not be). */
  open(data: PgliteWorkerData) {
    if (this.stopped !== undefined) return
    this.hold()
    this.worker.postMessage(data)
  }

  /** Whether the worker died (before it was opened, for a prewarmed one). */
  get dead(): boolean {
    return this.stopped !== undefined
  }

  /**
   * The worker keeps the process alive only while a call is under way: like PGlite in this thread, an open but
   * idle database does not hold the event loop (a command that forgot nothing still exits).
   */
  private hold() {
    if (this.refs++ === 0) this.worker.ref()
  }

  private release() {
    if (--this.refs === 0) this.worker.unref()
  }

  private stop(reason: string) {
    if (this.stopped !== undefined) return
    this.stopped = new PgliteWorkerStopped(reason)
    for (const p of this.pending.values()) p.reject(this.stopped)
    this.pending.clear()
    this.refs = 0
    this.worker.unref()
  }

  private call(message: Call): Promise<any> {
    if (this.stopped !== undefined) return Promise.reject(this.stopped)
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      this.hold()
      this.worker.postMessage({ ...message, id } as ToWorker)
    })
  }

  readonly query = <T = Record<string, unknown>>(
    sql: string,
    params?: Array<unknown>,
    options?: PgliteQueryOptions
  ): Promise<PgliteResults<T>> => this.call({ k: "query", sql, params, options, tx: undefined })

  readonly exec = (sql: string, options?: PgliteQueryOptions): Promise<Array<PgliteResults>> =>
    this.call({ k: "exec", sql, options, tx: undefined })

  readonly transaction = async <T>(callback: (tx: PgliteTx) => Promise<T>): Promise<T> => {
    const tx = this.nextTx++
    await this.call({ k: "begin", tx })
    let ended = false
    const check = () => {
      if (ended) return Promise.reject(new Error("Transaction is closed"))
      return undefined
    }
    const handle: PgliteTx = {
      query: (sql, params, options) => check() ?? this.call({ k: "query", sql, params, options, tx }),
      exec: (sql, options) => check() ?? this.call({ k: "exec", sql, options, tx }),
      rollback: async () => {
        await (check() ?? this.call({ k: "rollback", tx }))
        ended = true
      },
      get closed() {
        return ended
      }
    }
    let result: T
    try {
      result = await callback(handle)
    } catch (e) {
      ended = true
      await this.call({ k: "end", tx, commit: false }).catch(() => {})
      throw e
    }
    ended = true
    await this.call({ k: "end", tx, commit: true })
    return result
  }

  /** Waits for the calls under way, closes PGlite in the worker (its last checkpoint), and ends the worker. */
  readonly close = (): Promise<void> => {
    this.closing ??= (async () => {
      try {
        if (this.stopped === undefined) await this.call({ k: "close" })
      } finally {
        this.closed = true
        await this.worker.terminate()
      }
    })()
    return this.closing
  }

  /** Test hook: an uncaught error in the worker, as a bug or a WebAssembly abort there would raise. */
  readonly crashForTest = (message: string): void => {
    this.worker.postMessage({ k: "crash", id: 0, message } satisfies ToWorker)
  }
}

/** A worker started ahead of `openPgliteWorker` (`prewarmPgliteWorker`), taken by the next open. */
let spare: PgliteWorkerProxy | undefined

/**
 * Starts the embedded database's worker now, so that it loads PGlite and compiles its WebAssembly while this
 * thread goes on (`serve` calls it before loading the service's modules); the next `openPgliteWorker` opens the
 * database in it. It does not keep the process alive, and opens nothing until then.
 */
export const prewarmPgliteWorker = (): void => {
  spare ??= new PgliteWorkerProxy()
}

/**
 * PGlite opened in a worker thread, in `dataDir` (which must already hold a cluster, or be undefined for an
 * in-memory database), with `postgresqlconf`. Rejects with the worker's error if PGlite could not be opened.
 */
export const openPgliteWorker = async (
  dataDir: string | undefined,
  postgresqlconf: ReadonlyArray<string>,
  loadDataDir?: Blob
): Promise<PgliteHandle & { readonly crashForTest: (message: string) => void }> => {
  const proxy = spare !== undefined && !spare.dead ? spare : new PgliteWorkerProxy()
  spare = undefined
  proxy.open({ dataDir, postgresqlconf, ...(loadDataDir === undefined ? {} : { loadDataDir }) })
  try {
    await proxy.waitReady
  } catch (e) {
    await proxy.close().catch(() => {})
    throw e
  }
  return proxy
}
