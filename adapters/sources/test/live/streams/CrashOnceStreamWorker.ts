/**
 * A stream worker that fails once (WorkerStreams.test.ts): the real worker (`StreamWorker.ts`), which throws an
 * uncaught error `CRASH_AFTER_MS` after it starts if the file `CRASH_MARKER` (environment) does not exist yet,
 * creating it first, so the worker that replaces it runs on.
 */
import { existsSync, writeFileSync } from "node:fs"
import "../../../src/live/stream/StreamWorker.ts"

const marker = process.env.CRASH_MARKER
if (marker !== undefined && !existsSync(marker)) {
  writeFileSync(marker, "crashed once")
  setTimeout(
    () => {
      throw new Error("the stream worker failed (test)")
    },
    Number(process.env.CRASH_AFTER_MS ?? 1_500)
  )
}
