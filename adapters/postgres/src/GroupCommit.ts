/**
 * Group commit on server PostgreSQL and on the embedded PGlite store: store calls of concurrent requests that
 * arrive together are sent as ONE statement, `select md_batch($1::jsonb)` (`sql/group_commit_batch.ts`): one round trip, one
 * transaction, one commit (one WAL flush) for all of them, instead of one each. (On PGlite, which has no round
 * trip, it saves each call a statement's fixed cost on the server's own thread; `openPglite` in `Database.ts`.)
 *
 * When a batch goes out: as soon as `maxBatch` calls wait, or `windowMs` after the first call of a batch arrived,
 * and in any case only while fewer than `maxInFlight` batches are on their way; calls that arrive while every
 * batch slot is busy wait for the next slot to free and go out together then (so under load batches grow by
 * themselves, and a lone call at rest waits at most `windowMs`).
 *
 * What a caller is told, and when: every call's answer is released only after the statement came back, that is
 * after its transaction committed. A member whose SQL failed is rejected alone with PostgreSQL's error (its
 * `code`, the SQLSTATE, is kept, so `query` retries a deadlock or serialization failure as it retries a lone
 * statement); the others are answered. When the statement itself fails (connection lost, backend terminated,
 * server restarting) every member is rejected with that error, the transient way, as a lone statement would be.
 */

/**
 * One store call in a batch: the `md_batch` call name, the lock key it orders by, and its arguments by name (the
 * called function's parameter names without `p_`, as `md_batch_call` reads them).
 */
export interface BatchCall {
  readonly f: string
  readonly k: string
  readonly a: Readonly<Record<string, unknown>>
}

export interface GroupCommitOptions {
  /** How long the first call of a batch waits for company, in milliseconds (0: the next turn of the event loop). */
  readonly windowMs: number
  /** Most calls in one statement. */
  readonly maxBatch: number
  /** Most batches on their way at once (each holds one pooled connection while it runs). */
  readonly maxInFlight: number
}

/** The defaults: a 1 ms window, 64 calls, 4 batches at once. */
export const GROUP_COMMIT_DEFAULTS: GroupCommitOptions = { windowMs: 1, maxBatch: 64, maxInFlight: 4 }

/** A member of a batch whose own SQL failed: PostgreSQL's message and SQLSTATE, nothing else of the batch. */
export class BatchMemberError extends Error {
  readonly code: string
  constructor(call: string, message: string, code: string) {
    super(`${call}: ${message}`)
    this.name = "BatchMemberError"
    this.code = code
  }
}

/** How many statements and calls went out (for the bench and the metrics). */
export interface GroupCommitStats {
  readonly batches: number
  readonly calls: number
  /** Batches whose statement failed as a whole. */
  readonly failedBatches: number
  /** The largest batch sent. */
  readonly largest: number
}

export interface GroupCommit {
  /** Runs one call in the next batch; resolves with its result after the batch committed. */
  readonly call: (call: BatchCall) => Promise<unknown>
  readonly stats: () => GroupCommitStats
}

interface Pending {
  readonly call: BatchCall
  /** The call's JSON text, made when it was queued (a call that cannot be serialized fails alone, at once). */
  readonly text: string
  readonly resolve: (value: unknown) => void
  readonly reject: (error: unknown) => void
}

/** One member's answer as `md_batch` returns it. */
type MemberAnswer = { readonly ok: unknown } | { readonly error: string; readonly code: string } | null

/**
 * A group committer over `send`, which runs `select md_batch($1::jsonb)` with the JSON text of the calls and
 * returns the array it answered (one entry per call, in order).
 */
export const makeGroupCommit = (
  send: (calls: string) => Promise<ReadonlyArray<MemberAnswer>>,
  options: GroupCommitOptions = GROUP_COMMIT_DEFAULTS
): GroupCommit => {
  const maxBatch = Math.max(1, options.maxBatch)
  const maxInFlight = Math.max(1, options.maxInFlight)
  let queue: Array<Pending> = []
  let inFlight = 0
  let timer: ReturnType<typeof setTimeout> | ReturnType<typeof setImmediate> | undefined
  let batches = 0
  let calls = 0
  let failedBatches = 0
  let largest = 0

  const clearTimer = () => {
    if (timer === undefined) return
    if (options.windowMs > 0) clearTimeout(timer as ReturnType<typeof setTimeout>)
    else clearImmediate(timer as ReturnType<typeof setImmediate>)
    timer = undefined
  }

  const settle = (batch: ReadonlyArray<Pending>, answers: ReadonlyArray<MemberAnswer>) => {
    for (let i = 0; i < batch.length; i++) {
      const p = batch[i] as Pending
      const a = answers[i]
      if (a === undefined || a === null) {
        p.reject(new BatchMemberError(p.call.f, "md_batch gave no answer for this call", "XX000"))
      } else if ("ok" in a) {
        p.resolve(a.ok)
      } else {
        p.reject(new BatchMemberError(p.call.f, a.error, a.code))
      }
    }
  }

  const dispatch = () => {
    while (queue.length > 0 && inFlight < maxInFlight) {
      const batch = queue.length <= maxBatch ? queue : queue.slice(0, maxBatch)
      queue = queue.length <= maxBatch ? [] : queue.slice(maxBatch)
      inFlight++
      batches++
      calls += batch.length
      if (batch.length > largest) largest = batch.length
      let text = "["
      for (let i = 0; i < batch.length; i++)
        text += i === 0 ? (batch[i] as Pending).text : `,${(batch[i] as Pending).text}`
      text += "]"
      send(text).then(
        (answers) => {
          inFlight--
          if (!Array.isArray(answers) || answers.length !== batch.length) {
            const e = new Error(
              `md_batch answered ${Array.isArray(answers) ? answers.length : "no"} results for ${batch.length} calls`
            )
            for (const p of batch) p.reject(e)
          } else settle(batch, answers)
          afterBatch()
        },
        (error: unknown) => {
          inFlight--
          failedBatches++
          for (const p of batch) p.reject(error)
          afterBatch()
        }
      )
    }
  }

  // A freed slot sends what waited meanwhile at once: those calls have already waited at least a round trip.
  const afterBatch = () => {
    if (queue.length === 0) return
    clearTimer()
    dispatch()
    if (queue.length > 0) arm()
  }

  const arm = () => {
    if (timer !== undefined) return
    const fire = () => {
      timer = undefined
      dispatch()
    }
    timer = options.windowMs > 0 ? setTimeout(fire, options.windowMs) : setImmediate(fire)
  }

  return {
    call: (call) =>
      new Promise<unknown>((resolve, reject) => {
        let text: string
        try {
          text = JSON.stringify(call)
        } catch (e) {
          reject(e)
          return
        }
        queue.push({ call, text, resolve, reject })
        if (queue.length >= maxBatch && inFlight < maxInFlight) {
          clearTimer()
          dispatch()
          if (queue.length > 0) arm()
        } else arm()
      }),
    stats: () => ({ batches, calls, failedBatches, largest })
  }
}
